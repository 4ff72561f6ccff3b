"""A scripted chat model for tests, notebooks and the demo.

`ScriptedChatModel` is a `GenericFakeChatModel` whose answers come from a script: a list of
`AIMessage`s (with tool calls, parallel ones included) or strings, or a function that decides
the next message from the messages it receives (for example to fetch a reference it saw). It
records every request it receives, so tests can check exactly what the model saw, and
`bind_tools` returns the model itself (recording the tools). Its `profile` carries
`max_input_tokens` when given, so `ResultLayer(model=...)` takes the window from it.

Example:
    ```python
    from langchain_result_layer.scripted import ScriptedChatModel, ai_tool_calls, tool_call

    model = ScriptedChatModel(
        script=[
            ai_tool_calls(tool_call("search", {"query": "timeout"}, id="c1")),
            "The timeout comes from the retry loop.",
        ],
        max_input_tokens=16_000,
    )
    assert model.profile["max_input_tokens"] == 16_000
    ```
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCall
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import Field, PrivateAttr

__all__ = [
    "REFERENCE_RE",
    "ScriptStep",
    "ScriptedChatModel",
    "ai_tool_calls",
    "find_references",
    "tool_call",
]

ScriptStep = AIMessage | str | Callable[[list[BaseMessage]], "AIMessage | str | None"]
"""One scripted answer: a message, a text, or a function of the request that returns one."""

REFERENCE_RE = re.compile(
    r"ref://tool-result/[A-Za-z0-9_-]{8,64}/[a-z][a-z0-9_]{0,31}"
    r"(?:\?[^\s\"')\]]*[^\s\"')\].,;:])?"
)
"""Matches the references the result layer writes (`ref://tool-result/<id>/<kind>?...`); a
sentence's closing punctuation after a reference is not part of it."""


def tool_call(name: str, args: dict[str, Any] | None = None, *, id: str) -> ToolCall:
    """A tool call for a scripted `AIMessage`.

    Args:
        name: Tool name.
        args: Arguments.
        id: The call's id (unique within the conversation).

    Returns:
        The `ToolCall`.

    Example:
        ```python
        tool_call("run_sql", {"query": "select 1"}, id="c1")
        ```
    """
    return ToolCall(name=name, args=dict(args or {}), id=id, type="tool_call")


def ai_tool_calls(*calls: ToolCall, content: str = "") -> AIMessage:
    """An `AIMessage` making one or more (parallel) tool calls.

    Args:
        *calls: The calls.
        content: Text of the message.

    Returns:
        The message.

    Example:
        ```python
        ai_tool_calls(tool_call("a", id="c1"), tool_call("b", id="c2"))
        ```
    """
    return AIMessage(content=content, tool_calls=list(calls))


def find_references(messages: Sequence[BaseMessage]) -> list[str]:
    """Every `ref://tool-result/...` reference in the text of `messages`, in order.

    Args:
        messages: Messages (for example a request the model received).

    Returns:
        The references.

    Example:
        ```python
        from langchain_core.messages import ToolMessage

        seen = ToolMessage("[Full result: ref://tool-result/AbCdEfGhIjKl/log?page=2.]",
                           tool_call_id="c1")
        assert find_references([seen]) == ["ref://tool-result/AbCdEfGhIjKl/log?page=2"]
        ```
    """
    found: list[str] = []
    for message in messages:
        content = message.content
        texts = (
            [content]
            if isinstance(content, str)
            else [b if isinstance(b, str) else str(b.get("text", "")) for b in content]
        )
        for text in texts:
            found.extend(REFERENCE_RE.findall(text))
    return found


class ScriptedChatModel(GenericFakeChatModel):
    """A fake chat model that answers from a script and records what it was sent.

    Args:
        script: A list of steps (`AIMessage`, `str`, or a function of the request
            returning one), or one function `(messages, call_index) -> AIMessage | str | None`
            that decides every answer. `None` (or running out of steps) ends with
            `final_answer`.
        final_answer: Answer given once the script is exhausted.
        max_input_tokens: Sets `profile["max_input_tokens"]`.

    Example:
        ```python
        model = ScriptedChatModel(script=lambda msgs, i: "done" if i else "thinking")
        model.invoke("hi").content  # 'thinking'
        ```
    """

    script: Any = Field(default_factory=list)
    """Steps or a deciding function."""

    final_answer: str = "Done."
    """Answer once the script is exhausted."""

    messages: Iterator[AIMessage | str] = Field(default_factory=lambda: iter(()))
    """Unused (`GenericFakeChatModel`'s iterator); the script drives the answers."""

    requests: list[list[BaseMessage]] = Field(default_factory=list)
    """Every request received, as the list of messages the model saw."""

    bound_tools: list[Any] = Field(default_factory=list)
    """Tools passed to `bind_tools` most recently."""

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, *, max_input_tokens: int | None = None, **kwargs: Any) -> None:
        if max_input_tokens is not None:
            profile = dict(kwargs.pop("profile", None) or {})
            profile["max_input_tokens"] = max_input_tokens
            kwargs["profile"] = profile
        super().__init__(**kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    def _next(self, messages: list[BaseMessage], index: int) -> AIMessage:
        script = self.script
        step: Any
        if callable(script):
            step = script(messages, index)
        elif index < len(script):
            step = script[index]
            if callable(step) and not isinstance(step, (AIMessage, str)):
                step = step(messages)
        else:
            step = None
        if step is None:
            return AIMessage(content=self.final_answer)
        if isinstance(step, str):
            return AIMessage(content=step)
        if not isinstance(step, AIMessage):
            msg = f"script step {index} returned {type(step).__name__}, expected AIMessage or str"
            raise TypeError(msg)
        calls = [
            {**call, "id": call.get("id") or f"call_{index}_{k}"}
            for k, call in enumerate(step.tool_calls)
        ]
        return step.model_copy(update={"tool_calls": calls}, deep=True)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            index = len(self.requests)
            self.requests.append(list(messages))
        message = self._next(list(messages), index)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """Stream the scripted answer as one chunk that keeps its tool calls."""
        message = self._generate(messages, stop=stop, run_manager=None, **kwargs).generations[0]
        ai = message.message
        assert isinstance(ai, AIMessage)
        chunk = AIMessageChunk(
            content=ai.content,
            id=ai.id,
            tool_call_chunks=[
                {
                    "name": call["name"],
                    "args": json.dumps(call["args"]),
                    "id": call["id"],
                    "index": i,
                    "type": "tool_call_chunk",
                }
                for i, call in enumerate(ai.tool_calls)
            ],
            chunk_position="last",
        )
        if run_manager is not None and isinstance(ai.content, str):
            run_manager.on_llm_new_token(ai.content, chunk=ChatGenerationChunk(message=chunk))
        yield ChatGenerationChunk(message=chunk)

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tools and return the model itself.

        Args:
            tools: The tools.
            tool_choice: Ignored.
            **kwargs: Ignored.

        Returns:
            This model.
        """
        self.bound_tools = list(tools)
        return self
