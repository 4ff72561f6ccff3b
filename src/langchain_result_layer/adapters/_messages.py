"""Counting a request as the model will see it, with a per-message cache.

A request is the system prompt, the messages (content, tool calls with their arguments, names,
tool-call ids) and the tool schemas. Each message costs its content under the layer's
`TokenCounter` plus a small framing overhead per message, per tool call and per content
block; tool calls cost their name, id and compact JSON arguments; tool schemas cost their
OpenAI-format JSON.

Counts are cached per message, keyed first by object identity (checked against the content
and tool-call objects, so a message mutated in place is recounted) and then by id and content
(`hash` of a `str` is cached by Python on the string itself, so re-keying a message read back
from a checkpoint costs one pass over new strings only). A guard call on a conversation it
has seen before therefore costs O(new messages).

Example:
    ```python
    from langchain_core.messages import HumanMessage
    from langchain_result_layer.adapters._messages import RequestCounter
    from langchain_result_layer.core.tokens import ApproximateTokenCounter

    counter = RequestCounter(ApproximateTokenCounter())
    n = counter.count([HumanMessage("hello", id="h1")], system="Be brief.")
    ```
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langchain_result_layer.core.guard import MessageRecord, Role
from langchain_result_layer.core.jsonable import to_json_text, to_jsonable
from langchain_result_layer.core.tokens import TokenCounter
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.pipeline import META_KEY

__all__ = [
    "BLOCK_OVERHEAD",
    "CALL_OVERHEAD",
    "MESSAGE_OVERHEAD",
    "MessageInfo",
    "RequestCounter",
    "compact_json",
    "layer_marker",
    "parallel_calls",
]

MESSAGE_OVERHEAD = 3
"""Tokens of framing per message (role and separators), as in OpenAI's chat format."""

CALL_OVERHEAD = 4
"""Tokens of framing per tool call."""

BLOCK_OVERHEAD = 4
"""Tokens of framing per content block."""

REQUEST_OVERHEAD = 3
"""Tokens that prime the model's reply, once per request."""

_TEXT_BLOCKS = frozenset({"text", "text-plain"})
_MEDIA_BLOCKS = frozenset(
    {"image", "image_url", "input_image", "file", "audio", "input_audio", "video", "document"}
)
_MAX_ENTRIES = 200_000


def layer_marker(message: BaseMessage) -> Mapping[str, Any]:
    """The result layer's marker in `response_metadata` (empty when absent).

    Args:
        message: Any message.

    Returns:
        The marker mapping.

    Example:
        ```python
        layer_marker(ToolMessage("x", tool_call_id="1"))  # {}
        ```
    """
    metadata = getattr(message, "response_metadata", None)
    if not isinstance(metadata, Mapping):
        return {}
    marker = metadata.get(META_KEY)
    return marker if isinstance(marker, Mapping) else {}


@dataclass(frozen=True, slots=True)
class MessageInfo:
    """What the guard knows about one message (cached with its token count).

    Attributes:
        record: The plain record the core guard plans with.
        message_id: The message's id.
        ref: For tool results: the reference that restores the full result, if stored.
        headline: For tool results: a one-line summary.
        processed: For tool results: whether the per-result layer processed it.
        original_chars: For tool results: characters of the original result.
        kind: For tool results: the view kind.
        store_error: For tool results: why the original could not be saved, if so.

    Example:
        ```python
        info.record.tokens  # doctest: +SKIP
        ```
    """

    record: MessageRecord
    message_id: str | None
    ref: str | None = None
    headline: str | None = None
    processed: bool = False
    original_chars: int | None = None
    kind: str | None = None
    store_error: str | None = None


def _role(message: BaseMessage) -> Role:
    if isinstance(message, AIMessage):
        return "ai"
    if isinstance(message, ToolMessage):
        return "tool"
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, HumanMessage):
        return "human"
    return "other"


def _value_key(value: Any) -> Any:
    if isinstance(value, str):
        return (len(value), hash(value))
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return hash(to_json_text(value))  # total and bounded, whatever the tool put there


def _content_key(content: Any) -> Any:
    if isinstance(content, str):
        return (len(content), hash(content))
    if isinstance(content, list):
        parts: list[Any] = []
        for block in content:
            if isinstance(block, str):
                parts.append(_value_key(block))
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append((block.get("type"), _value_key(block["text"]), len(block)))
            else:
                parts.append(_value_key(block))
        return tuple(parts)
    return _value_key(content)


def _args_key(args: Any) -> Any:
    if isinstance(args, Mapping):
        return tuple((str(k), _value_key(v)) for k, v in args.items())
    return _value_key(args)


def _calls_key(message: BaseMessage) -> Any:
    if not isinstance(message, AIMessage) or not message.tool_calls:
        return ()
    return tuple(
        (call.get("id"), call.get("name"), _args_key(call.get("args")))
        for call in message.tool_calls
    )


def _marker_key(marker: Mapping[str, Any]) -> Any:
    if not marker:
        return None
    cleared_inputs = marker.get("cleared_tool_inputs")
    return (
        bool(marker.get("processed")),
        bool(marker.get("cleared")),
        marker.get("ref"),
        tuple(cleared_inputs) if isinstance(cleared_inputs, list) else None,
    )


def _message_key(message: BaseMessage) -> tuple[Any, ...]:
    return (
        type(message).__name__,
        message.id,
        _content_key(message.content),
        message.name,
        getattr(message, "tool_call_id", None),
        getattr(message, "status", None),
        _marker_key(layer_marker(message)),
        _calls_key(message),
    )


def compact_json(value: Any) -> str:
    """Compact, deterministic JSON (tool-call arguments as providers send them).

    Args:
        value: Any value (made JSON-ready by `to_jsonable` first).

    Returns:
        The JSON text.

    Example:
        ```python
        assert compact_json({"a": 1}) == '{"a":1}'
        ```
    """
    # `to_jsonable` first: total and bounded (a value whose str raises, a cycle, an int too
    # long for str, a structure shared 2**80 times).
    return json.dumps(to_jsonable(value), ensure_ascii=False, separators=(",", ":"))


def _headline_from_text(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped[:160]
    return ""


class RequestCounter:
    """Counts requests as the model sees them, caching each message's count.

    Thread-safe: counts are deterministic, so concurrent callers may at worst count a new
    message twice.

    Args:
        counter: The token counter (the layer's).
        image_tokens: Cost of one image or other non-text block.
        max_entries: Bound of each cache; the oldest half is dropped when it is reached.

    Example:
        ```python
        rc = RequestCounter(layer.token_counter, image_tokens=layer.image_tokens)
        rc.count(state["messages"], system="You are helpful.", tools=tools)
        ```
    """

    def __init__(
        self, counter: TokenCounter, *, image_tokens: int = 1_600, max_entries: int = _MAX_ENTRIES
    ) -> None:
        self.counter = counter
        self.image_tokens = image_tokens
        self.max_entries = max_entries
        self._by_obj: dict[int, tuple[weakref.ref[BaseMessage], Any, Any, MessageInfo]] = {}
        self._by_key: dict[tuple[Any, ...], MessageInfo] = {}
        self._text: dict[tuple[int, int], int] = {}
        self._tools: dict[int, tuple[Any, int]] = {}
        self._lock = threading.Lock()
        self.misses = 0
        """How many messages were counted (not served from a cache)."""

    # ------------------------------------------------------------------ text and blocks

    def text_tokens(self, text: str) -> int:
        """Tokens of a text, cached by the text's hash.

        Args:
            text: The text.

        Returns:
            The count.
        """
        if not text:
            return 0
        key = (len(text), hash(text))
        cached = self._text.get(key)
        if cached is None:
            cached = self.counter.count(text)
            with self._lock:
                if len(self._text) >= self.max_entries:
                    self._text.clear()
                self._text[key] = cached
        return cached

    def _block_tokens(self, block: Any) -> int:
        if isinstance(block, str):
            return BLOCK_OVERHEAD + self.counter.count(block)
        if isinstance(block, dict):
            kind = block.get("type")
            if kind in _TEXT_BLOCKS:
                text = block.get("text")
                body = text if isinstance(text, str) else to_json_text(text)
                return BLOCK_OVERHEAD + self.counter.count(body)
            if kind in _MEDIA_BLOCKS:
                return BLOCK_OVERHEAD + self.image_tokens
        return BLOCK_OVERHEAD + self.counter.count(compact_json(block))

    def content_tokens(self, content: Any) -> int:
        """Tokens of message content (a string, a block list or any JSON-ready value).

        Args:
            content: The content.

        Returns:
            The count.
        """
        if isinstance(content, str):
            return self.counter.count(content)
        if isinstance(content, list):
            return sum(self._block_tokens(b) for b in content)
        return self.counter.count(to_json_text(content))

    # ------------------------------------------------------------------ messages

    def _measure(self, message: BaseMessage) -> MessageInfo:
        self.misses += 1
        role = _role(message)
        marker = layer_marker(message)
        content_tokens: int | None = None
        if isinstance(message, ToolMessage):
            content_tokens = self._known_content_tokens(message, marker)
        if content_tokens is None:
            content_tokens = self.content_tokens(message.content)
        tokens = MESSAGE_OVERHEAD + content_tokens
        if message.name:
            tokens += 1 + self.counter.count(message.name)
        if isinstance(message, AIMessage):
            call_ids: list[str] = []
            clearable: list[str] = []
            clearable_tokens = 0
            cleared_inputs = set(marker.get("cleared_tool_inputs") or ())
            for call in message.tool_calls:
                call_id = call.get("id") or ""
                args = call.get("args")
                args_tokens = self.counter.count(compact_json(args))
                tokens += CALL_OVERHEAD + self.counter.count(call.get("name") or "")
                tokens += self.counter.count(call_id) + args_tokens
                call_ids.append(call_id)
                if args and call_id and call_id not in cleared_inputs:
                    clearable.append(call_id)
                    clearable_tokens += args_tokens
            record = MessageRecord(
                role=role,
                tokens=tokens,
                call_ids=tuple(call_ids),
                clearable_call_ids=tuple(clearable),
                clearable_args_tokens=clearable_tokens,
            )
            return MessageInfo(record=record, message_id=message.id)
        if isinstance(message, ToolMessage):
            tokens += self.counter.count(message.tool_call_id or "")
            record = MessageRecord(
                role=role,
                tokens=tokens,
                tool_call_id=message.tool_call_id,
                tool_name=message.name,
                is_error=message.status == "error",
                cleared=bool(marker.get("cleared")),
            )
            return self._tool_info(message, record, marker)
        return MessageInfo(record=MessageRecord(role=role, tokens=tokens), message_id=message.id)

    def _known_content_tokens(self, message: ToolMessage, marker: Mapping[str, Any]) -> int | None:
        """The content's token count the per-result layer recorded, when it provably applies.

        The pipeline counts every view it renders with the layer's counter; reusing that count
        makes a new result cost O(1) here. It is used only for text content that is exactly
        what the pipeline produced: same length as recorded, same counter, not a placeholder.
        """
        content = message.content
        tokens = marker.get("tokens")
        if (
            not isinstance(content, str)
            or not isinstance(tokens, int)
            or isinstance(tokens, bool)
            or not marker.get("processed")
            or marker.get("cleared")
        ):
            return None
        counter_name = marker.get("counter")
        if counter_name is not None and counter_name != self.counter.name:
            return None
        if marker.get("passed_through"):
            return tokens if marker.get("original_chars") == len(content) else None
        view = ResultView.from_artifact(message.artifact)
        if (
            view is None
            or view.shown_chars != len(content)
            or view.shown_tokens != tokens
            or view.counter != self.counter.name
        ):
            return None
        return tokens

    @staticmethod
    def _tool_info(
        message: ToolMessage, record: MessageRecord, marker: Mapping[str, Any]
    ) -> MessageInfo:
        ref = marker.get("ref") if isinstance(marker.get("ref"), str) else None
        headline = marker.get("headline") if isinstance(marker.get("headline"), str) else None
        original = marker.get("original_chars")
        if marker.get("processed"):
            content = message.content
            lines = marker.get("original_lines")
            if marker.get("passed_through") and isinstance(content, str) and content.strip():
                # The whole result is shown: its first line says more than the size facts.
                headline = _headline_from_text(content)
                if isinstance(lines, int) and lines > 1:
                    headline = f"{headline[:100]} ({lines:,} lines)"
            return MessageInfo(
                record=record,
                message_id=message.id,
                ref=ref,
                headline=headline,
                processed=True,
                original_chars=original if isinstance(original, int) else None,
                kind=marker.get("kind") if isinstance(marker.get("kind"), str) else None,
                store_error=marker.get("store_error")
                if isinstance(marker.get("store_error"), str)
                else None,
            )
        content = message.content
        text = content if isinstance(content, str) else to_json_text(content)
        return MessageInfo(
            record=record,
            message_id=message.id,
            headline=_headline_from_text(text),
            original_chars=len(text),
            kind="text" if isinstance(content, str) else "json",
        )

    def _remember(self, key: tuple[Any, ...], message: BaseMessage, info: MessageInfo) -> None:
        with self._lock:
            if len(self._by_key) >= self.max_entries:
                for old in list(self._by_key)[: self.max_entries // 2]:
                    del self._by_key[old]
            self._by_key[key] = info
            self._remember_obj(message, info)

    def _remember_obj(self, message: BaseMessage, info: MessageInfo) -> None:
        if len(self._by_obj) >= self.max_entries:
            self._by_obj.clear()
        oid = id(message)
        by_obj = self._by_obj

        def _forget(ref: weakref.ref[BaseMessage], oid: int = oid) -> None:
            entry = by_obj.get(oid)
            if entry is not None and entry[0] is ref:
                by_obj.pop(oid, None)

        calls = message.tool_calls if isinstance(message, AIMessage) else None
        by_obj[oid] = (weakref.ref(message, _forget), message.content, calls, info)

    def info(self, message: BaseMessage) -> MessageInfo:
        """The cached `MessageInfo` of a message (counted on first sight).

        Args:
            message: Any LangChain message.

        Returns:
            Its info.
        """
        entry = self._by_obj.get(id(message))
        if (
            entry is not None
            and entry[0]() is message
            and entry[1] is message.content
            and (entry[2] is (message.tool_calls if isinstance(message, AIMessage) else None))
        ):
            return entry[3]
        key = _message_key(message)
        info = self._by_key.get(key)
        if info is None:
            info = self._measure(message)
            self._remember(key, message, info)
        else:
            with self._lock:
                self._remember_obj(message, info)
        return info

    def message_tokens(self, message: BaseMessage) -> int:
        """Tokens one message costs in a request.

        Args:
            message: The message.

        Returns:
            The count.
        """
        return self.info(message).record.tokens

    # ------------------------------------------------------------------ system and tools

    def system_tokens(self, system: str | BaseMessage | None) -> int:
        """Tokens of a system prompt given apart from the messages.

        Args:
            system: A string, a `SystemMessage` or `None`.

        Returns:
            The count (0 for `None`).
        """
        if system is None:
            return 0
        if isinstance(system, BaseMessage):
            return self.message_tokens(system)
        return MESSAGE_OVERHEAD + self.text_tokens(system)

    def tools_tokens(self, tools: Sequence[Any] | None) -> int:
        """Tokens of the tool schemas sent with a request (cached per tool object).

        Args:
            tools: `BaseTool`s, functions, or OpenAI/Anthropic-format dicts.

        Returns:
            The count.
        """
        if not tools:
            return 0
        total = 0
        for tool in tools:
            entry = self._tools.get(id(tool))
            if entry is not None and entry[0] is tool:
                total += entry[1]
                continue
            tokens = self._schema_tokens(tool)
            with self._lock:
                self._tools[id(tool)] = (tool, tokens)
            total += tokens
        return total

    def _schema_tokens(self, tool: Any) -> int:
        from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: PLC0415

        try:
            schema: Any = convert_to_openai_tool(tool)
        except Exception:  # an unusual tool still costs its JSON
            schema = tool if isinstance(tool, Mapping) else repr(tool)
        return CALL_OVERHEAD + self.counter.count(compact_json(schema))

    # ------------------------------------------------------------------ requests

    def count(
        self,
        messages: Sequence[BaseMessage],
        *,
        system: str | BaseMessage | None = None,
        tools: Sequence[Any] | None = None,
    ) -> int:
        """Tokens of a whole request.

        Args:
            messages: The messages.
            system: A system prompt given apart from the messages.
            tools: Tool schemas sent with the request.

        Returns:
            The count.

        Example:
            ```python
            rc.count(messages, system="You are helpful.", tools=[search])
            ```
        """
        total = REQUEST_OVERHEAD + self.system_tokens(system) + self.tools_tokens(tools)
        info = self.info
        for message in messages:
            total += info(message).record.tokens
        return total

    def infos(self, messages: Sequence[BaseMessage]) -> list[MessageInfo]:
        """The infos of several messages, in order.

        Args:
            messages: The messages.

        Returns:
            Their infos.
        """
        info = self.info
        return [info(m) for m in messages]


def parallel_calls(messages: Any, tool_call_id: str | None) -> int:
    """How many tool calls the model turn that made `tool_call_id` contains (at least 1).

    Args:
        messages: The conversation (state messages).
        tool_call_id: The tool call's id.

    Returns:
        The number of parallel calls in that turn.

    Example:
        ```python
        parallel_calls([AIMessage("", tool_calls=[...two calls...])], "c1")  # 2
        ```
    """
    if not tool_call_id or not isinstance(messages, (list, tuple)):
        return 1
    for message in reversed(messages):
        if isinstance(message, AIMessage) and any(
            call.get("id") == tool_call_id for call in message.tool_calls
        ):
            return max(1, len(message.tool_calls))
    return 1
