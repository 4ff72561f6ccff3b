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

Every cache is scoped: the key of a count carries the scope of the run (tenant, user, thread),
the message's id, a hash of its content and the signature of its marker, so nothing counted for
one conversation is ever served to another. Markers are trusted only when their signature
verifies (see `_markers.py`); a forged one is ignored and the content is counted.

New large text is first given a cheap, provably conservative upper bound instead of an exact
count (`upper_bound`: a BPE token always spans at least one UTF-8 byte, so a tiktoken count
never exceeds the text's UTF-8 length, and the approximate estimate is capped at it). A guard
call whose total stays under the trigger with those bounds needs no exact count at all; near
the trigger the guard counts exactly what was only bounded, once (the exact count is cached
like any other).

Example:
    ```python
    from langchain_core.messages import HumanMessage
    from langchain_result_layer.adapters._messages import RequestCounter
    from langchain_result_layer.core.tokens import ApproximateTokenCounter

    counter = RequestCounter(ApproximateTokenCounter())
    n = counter.count([HumanMessage("hello", id="h1")], system="Be brief.")
    assert n == counter.count([HumanMessage("hello", id="h1")], system="Be brief.")  # cached
    ```
"""

from __future__ import annotations

import json
import math
import threading
import weakref
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter, indexOf, is_, itemgetter
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langchain_result_layer.adapters._markers import MarkerSigner, raw_marker
from langchain_result_layer.core.budget import DEFAULT_IMAGE_TOKENS
from langchain_result_layer.core.guard import MessageRecord, Role
from langchain_result_layer.core.jsonable import to_json_text, to_jsonable
from langchain_result_layer.core.token_bounds import (
    EstimateBound,
    PretokenBound,
    estimate_bound,
    pretoken_bound_for,
)
from langchain_result_layer.core.tokens import (
    ApproximateTokenCounter,
    TiktokenCounter,
    TokenCounter,
    load_offline_encoding,
)
from langchain_result_layer.stores.base import Principal
from langchain_result_layer.views import JsonView, TextView

__all__ = [
    "BLOCK_OVERHEAD",
    "CALL_OVERHEAD",
    "MESSAGE_OVERHEAD",
    "MessageInfo",
    "RequestCounter",
    "Survey",
    "compact_json",
    "content_key",
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
_BOUND_MIN_CHARS = 2_000
"""Texts shorter than this are counted exactly at once (cheap); longer ones get a bound first."""

Scope = tuple[str | None, str | None, str | None]
"""Who a count was made for: (tenant, user, thread)."""

_NO_SCOPE: Scope = (None, None, None)


def _bytes_bound_counts(counter: TokenCounter) -> bool:
    """Whether `counter`'s count of a text never exceeds the text's UTF-8 length.

    True of tiktoken (a BPE token spans at least one byte) and of the approximate estimate
    (it is capped at that length); checked on the `count` method itself, so a subclass that
    counts differently does not qualify.
    """
    count = getattr(type(counter), "count", None)
    return count is TiktokenCounter.count or count is ApproximateTokenCounter.count


def _text_bound_of(counter: TokenCounter) -> PretokenBound | EstimateBound | None:
    """The cheap bound of a counter's counts (`None`: the byte length, or none at all)."""
    if type(counter).count is ApproximateTokenCounter.count:
        return estimate_bound()
    if not isinstance(counter, TiktokenCounter) or type(counter).count is not TiktokenCounter.count:
        return None
    try:
        encoding = load_offline_encoding(counter.encoding_name)
    except Exception:  # no data: the byte length still bounds the count
        return None
    return pretoken_bound_for(encoding) if encoding is not None else None


def layer_marker(message: BaseMessage) -> Mapping[str, Any]:
    """The result layer's marker in `response_metadata`, as stored (unverified).

    For inspection (tests, debugging). The layer itself trusts a marker only when its signature
    verifies (`ResultLayer.marker_of`).

    Args:
        message: Any message.

    Returns:
        The marker mapping (empty when absent).

    Example:
        ```python
        layer_marker(ToolMessage("x", tool_call_id="1"))  # {}
        ```
    """
    return raw_marker(message)


def scope_of(principal: Principal | None) -> Scope:
    """The cache scope of a principal (tenant, user, thread).

    Args:
        principal: The run's principal (`None`: no scope).

    Returns:
        The scope key.

    Example:
        ```python
        assert scope_of(None) == (None, None, None)
        ```
    """
    if principal is None:
        return _NO_SCOPE
    return (principal.tenant, principal.user, principal.thread)


@dataclass(frozen=True, slots=True)
class MessageInfo:
    """What the guard knows about one message (cached with its token count).

    Example:
        ```python
        info = layer.request_counter.info(tool_message)
        assert info.record.role == "tool" and info.headline  # a raw result's first line
        ```
    """

    record: MessageRecord

    """The plain record the core guard plans with."""
    message_id: str | None
    """The message's id."""
    exact: bool = True
    """Whether `record.tokens` is the exact count (else a provable upper bound)."""
    ref: str | None = None
    """For tool results: the reference that restores the full result, if stored."""
    headline: str | None = None
    """For tool results: a one-line summary."""
    processed: bool = False
    """For tool results: whether the per-result layer processed it."""
    original_chars: int | None = None
    """For tool results: characters of the original result."""
    kind: str | None = None
    """For tool results: the view kind."""
    store_error: str | None = None
    """For tool results: why the original could not be saved, if so."""
    expires_at: float | None = None
    """For tool results: when the stored original expires (Unix time), if known."""


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


def content_key(content: Any) -> Any:
    """A cheap, collision-resistant key of message content (lengths and keyed hashes).

    Python's string hash is keyed per process (SipHash with a random seed), so no tool output
    can be crafted to collide with another; it is cached on the string, so re-keying costs
    nothing for content already seen.

    Args:
        content: Message content.

    Returns:
        A hashable key.

    Example:
        ```python
        assert content_key("a") == content_key("a")
        ```
    """
    return _content_key(content)


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
    return _value_key(dict(marker))


def _message_key(message: BaseMessage, scope: Scope) -> tuple[Any, ...]:
    return (
        scope,
        type(message).__name__,
        message.id,
        _content_key(message.content),
        message.name,
        getattr(message, "tool_call_id", None),
        getattr(message, "status", None),
        _marker_key(raw_marker(message)),
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


_HEADLINE_CHARS = 160
"""Characters of a raw result's first non-blank line kept as its placeholder headline."""


def _headline_from_text(text: str) -> str:
    # Only the first non-blank line is needed: scan for it instead of splitting the whole
    # text (a raw result can be megabytes; this runs for every new one).
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", start)
        for line in text[start : end if stop < 0 else stop].splitlines():  # \r, \u2028, ...
            stripped = line.strip()
            if stripped:
                return stripped[:_HEADLINE_CHARS]
        if stop < 0:
            break
        start = stop + 1
    return ""


class RequestCounter:
    """Counts requests as the model sees them, caching each message's count.

    Thread-safe: counts are deterministic, so concurrent callers may at worst count a new
    message twice. Keeps no per-request state: every cache entry is keyed by the scope of the
    run, the message and its content.

    Args:
        counter: The token counter (the layer's).
        image_tokens: Cost of one image or other non-text block.
        max_entries: Bound of each cache; the oldest half is dropped when it is reached.
        signer: Verifies the layer's markers (`None`: no marker is trusted; every message is
            counted from its content).

    Example:
        ```python
        rc = RequestCounter(layer.token_counter, image_tokens=layer.image_tokens)
        tokens = rc.count([tool_message], system="You are helpful.", tools=[layer.fetch_tool])
        assert tokens > rc.count([tool_message])  # the prompt and the tool schema count
        ```
    """

    def __init__(
        self,
        counter: TokenCounter,
        *,
        image_tokens: int = DEFAULT_IMAGE_TOKENS,
        max_entries: int = _MAX_ENTRIES,
        signer: MarkerSigner | None = None,
    ) -> None:
        self.counter = counter
        self.image_tokens = image_tokens
        self.max_entries = max_entries
        self.signer = signer
        self._bounded = _bytes_bound_counts(counter)
        self._text_bound: PretokenBound | EstimateBound | bool | None = False
        """The counter's cheap bound (`False`: not looked up yet; `None`: the byte length)."""
        self._by_obj: dict[int, tuple[weakref.ref[BaseMessage], Any, Any, Scope, MessageInfo]] = {}
        self._by_key: dict[tuple[Any, ...], MessageInfo] = {}
        self._text: dict[tuple[int, int], int] = {}
        self._tools: dict[int, tuple[Any, int]] = {}
        self._requests: dict[Scope, _Request] = {}
        self._lock = threading.Lock()
        self.misses = 0
        """How many messages were counted or bounded (not served from a cache)."""
        self.exact_counts = 0
        """How many message contents were counted exactly after a bound (near the trigger)."""

    # ------------------------------------------------------------------ markers

    def marker(self, message: BaseMessage) -> Mapping[str, Any]:
        """The message's marker when its signature verifies, else `{}`.

        Args:
            message: Any message.

        Returns:
            The trusted marker.
        """
        if self.signer is None:
            return {}
        return self.signer.verified(message)

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

    def upper_bound(self, text: str) -> int | None:
        """A provable upper bound of `text`'s tokens, when one is cheaper than counting.

        For tiktoken encodings every token spans at least one UTF-8 byte, so the UTF-8
        length bounds the count; for ASCII text under `o200k_base` or `cl100k_base` the
        pre-token bound (`core.token_bounds.PretokenBound`, about 0.8 of the length on logs)
        is used. The approximate counter never estimates more than the UTF-8 length either;
        for ASCII text its `EstimateBound` (about 1.5x the estimate on logs) is used. Short
        texts and other counters (a chat model's own) get `None`: count them.

        Args:
            text: The text.

        Returns:
            The bound, or `None`.
        """
        if not self._bounded or len(text) < _BOUND_MIN_CHARS:
            return None
        bound = self._text_bound
        if bound is False:
            bound = self._text_bound = _text_bound_of(self.counter)
        if isinstance(bound, (PretokenBound, EstimateBound)):
            return bound.upper(text)
        if text.isascii():
            return len(text)
        return len(text.encode("utf-8", "surrogatepass"))

    def _text_cost(self, text: str, exact: bool) -> tuple[int, bool]:
        if not exact:
            bound = self.upper_bound(text)
            if bound is not None:
                return bound, False
        return self.counter.count(text), True

    def _block_cost(self, block: Any, exact: bool) -> tuple[int, bool]:
        if isinstance(block, str):
            tokens, is_exact = self._text_cost(block, exact)
            return BLOCK_OVERHEAD + tokens, is_exact
        if isinstance(block, dict):
            kind = block.get("type")
            if kind in _TEXT_BLOCKS:
                text = block.get("text")
                body = text if isinstance(text, str) else to_json_text(text)
                tokens, is_exact = self._text_cost(body, exact)
                return BLOCK_OVERHEAD + tokens, is_exact
            if kind in _MEDIA_BLOCKS:
                return BLOCK_OVERHEAD + self.image_tokens, True
        tokens, is_exact = self._text_cost(compact_json(block), exact)
        return BLOCK_OVERHEAD + tokens, is_exact

    def _content_cost(self, content: Any, exact: bool) -> tuple[int, bool]:
        if isinstance(content, str):
            return self._text_cost(content, exact)
        if isinstance(content, list):
            total, all_exact = 0, True
            for block in content:
                tokens, is_exact = self._block_cost(block, exact)
                total += tokens
                all_exact = all_exact and is_exact
            return total, all_exact
        return self._text_cost(to_json_text(content), exact)

    def content_tokens(self, content: Any) -> int:
        """Tokens of message content (a string, a block list or any JSON-ready value).

        Never raises: odd blocks are counted as their JSON text.

        Args:
            content: The content.

        Returns:
            The count.
        """
        return self._content_cost(content, True)[0]

    # ------------------------------------------------------------------ messages

    def _measure(self, message: BaseMessage, *, exact: bool) -> MessageInfo:
        self.misses += 1
        role = _role(message)
        marker = self.marker(message)
        content_tokens: int | None = None
        content_exact = True
        if isinstance(message, ToolMessage):
            content_tokens = self._known_content_tokens(message, marker)
        if content_tokens is None:
            content_tokens, content_exact = self._content_cost(message.content, exact)
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
            return MessageInfo(record=record, message_id=message.id, exact=content_exact)
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
            return self._tool_info(message, record, marker, exact=content_exact)
        return MessageInfo(
            record=MessageRecord(role=role, tokens=tokens),
            message_id=message.id,
            exact=content_exact,
        )

    def _known_content_tokens(self, message: ToolMessage, marker: Mapping[str, Any]) -> int | None:
        """The content's token count the per-result layer recorded, when it provably applies.

        The pipeline counts every view it renders with the layer's counter; reusing that count
        makes a new result cost O(1) here. It is used only for a verified marker (the
        signature covers the content, so the count is the content's), text content, the same
        counter, and not a placeholder.
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
        if marker.get("shown_chars", len(content)) != len(content):
            return None
        return tokens

    @staticmethod
    def _tool_info(
        message: ToolMessage, record: MessageRecord, marker: Mapping[str, Any], *, exact: bool
    ) -> MessageInfo:
        ref = marker.get("ref") if isinstance(marker.get("ref"), str) else None
        headline = marker.get("headline") if isinstance(marker.get("headline"), str) else None
        original = marker.get("original_chars")
        expires = marker.get("expires_at")
        if marker.get("processed"):
            return MessageInfo(
                record=record,
                message_id=message.id,
                exact=exact,
                ref=ref,
                headline=headline,
                processed=True,
                original_chars=original if isinstance(original, int) else None,
                kind=marker.get("kind") if isinstance(marker.get("kind"), str) else None,
                store_error=marker.get("store_error")
                if isinstance(marker.get("store_error"), str)
                else None,
                expires_at=float(expires)
                if isinstance(expires, (int, float)) and not isinstance(expires, bool)
                else None,
            )
        content = message.content
        text = content if isinstance(content, str) else to_json_text(content)
        return MessageInfo(
            record=record,
            message_id=message.id,
            exact=exact,
            headline=_headline_from_text(text),
            original_chars=len(text),
            kind=TextView.kind if isinstance(content, str) else JsonView.kind,
        )

    def _remember(
        self, key: tuple[Any, ...], message: BaseMessage, scope: Scope, info: MessageInfo
    ) -> None:
        with self._lock:
            if len(self._by_key) >= self.max_entries:
                for old in list(self._by_key)[: self.max_entries // 2]:
                    del self._by_key[old]
            self._by_key[key] = info
            self._remember_obj(message, scope, info)

    def _remember_obj(self, message: BaseMessage, scope: Scope, info: MessageInfo) -> None:
        if len(self._by_obj) >= self.max_entries:
            self._by_obj.clear()
        oid = id(message)
        by_obj = self._by_obj

        def _forget(ref: weakref.ref[BaseMessage], oid: int = oid) -> None:
            entry = by_obj.get(oid)
            if entry is not None and entry[0] is ref:
                by_obj.pop(oid, None)

        calls = message.tool_calls if isinstance(message, AIMessage) else None
        by_obj[oid] = (weakref.ref(message, _forget), message.content, calls, scope, info)

    def info(
        self, message: BaseMessage, scope: Scope = _NO_SCOPE, *, exact: bool = True
    ) -> MessageInfo:
        """The cached `MessageInfo` of a message (counted on first sight).

        Args:
            message: Any LangChain message.
            scope: The run's scope (`scope_of(principal)`); caches never cross scopes.
            exact: `False` accepts a provable upper bound for large new text (`info.exact`
                says which it got).

        Returns:
            Its info.
        """
        entry = self._by_obj.get(id(message))
        if (
            entry is not None
            and entry[0]() is message
            and entry[1] is message.content
            and (entry[2] is (message.tool_calls if isinstance(message, AIMessage) else None))
            and entry[3] == scope
            and (entry[4].exact or not exact)
        ):
            return entry[4]
        key = _message_key(message, scope)
        info = self._by_key.get(key)
        if info is None or (exact and not info.exact):
            if exact and info is not None:
                self.exact_counts += 1
            info = self._measure(message, exact=exact)
            self._remember(key, message, scope, info)
        else:
            with self._lock:
                self._remember_obj(message, scope, info)
        return info

    def message_tokens(self, message: BaseMessage, scope: Scope = _NO_SCOPE) -> int:
        """Tokens one message costs in a request (exact).

        Args:
            message: The message.
            scope: The run's scope.

        Returns:
            The count.
        """
        return self.info(message, scope).record.tokens

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
                if len(self._tools) >= self.max_entries:
                    self._tools.clear()
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
        scope: Scope = _NO_SCOPE,
    ) -> int:
        """Tokens of a whole request (exact).

        Args:
            messages: The messages.
            system: A system prompt given apart from the messages.
            tools: Tool schemas sent with the request.
            scope: The run's scope.

        Returns:
            The count.

        Example:
            ```python
            from langchain_core.messages import HumanMessage

            rc = RequestCounter(counter)
            assert rc.count([HumanMessage("hi")], system="You are helpful.") > rc.count([])
            ```
        """
        total = REQUEST_OVERHEAD + self.system_tokens(system) + self.tools_tokens(tools)
        info = self.info
        for message in messages:
            total += info(message, scope).record.tokens
        return total

    def infos(
        self, messages: Sequence[BaseMessage], scope: Scope = _NO_SCOPE, *, exact: bool = True
    ) -> list[MessageInfo]:
        """The infos of several messages, in order.

        Args:
            messages: The messages.
            scope: The run's scope.
            exact: `False` accepts upper bounds for large new text.

        Returns:
            Their infos.
        """
        return self.survey(messages, scope, exact=exact).infos

    def survey(
        self, messages: Sequence[BaseMessage], scope: Scope = _NO_SCOPE, *, exact: bool = True
    ) -> Survey:
        """The infos of several messages with their totals, at O(new messages).

        The scope's previous request is remembered: the messages it shares with this one (the
        very objects, with the same content and tool calls) cost an identity check each, done
        in C, and their totals come from its running sums.

        Args:
            messages: The messages.
            scope: The run's scope.
            exact: `False` accepts upper bounds for large new text.

        Returns:
            Their infos, total tokens, exactness and earliest expiry.

        Example:
            ```python
            from langchain_core.messages import HumanMessage

            rc = RequestCounter(counter)
            survey = rc.survey([HumanMessage("hello", id="h1")])
            assert survey.tokens == survey.infos[0].record.tokens and survey.exact
            ```
        """
        memo = self._requests.get(scope)
        reused = _common_prefix(messages, memo, exact=exact) if memo is not None else 0
        info = self.info
        new = [info(m, scope, exact=exact) for m in messages[reused:]]
        request = _Request.of(messages, new, memo, reused)
        with self._lock:
            if scope not in self._requests and len(self._requests) >= _MAX_REQUESTS:
                self._requests.pop(next(iter(self._requests)), None)
            self._requests[scope] = request
        return request.survey()

    def refine(
        self, survey: Survey, messages: Sequence[BaseMessage], scope: Scope = _NO_SCOPE
    ) -> Survey:
        """The exact survey of `messages`, just surveyed as `survey` (with `exact=False`).

        Only the counts that were bounds are counted again, exactly: O(messages from the first
        bound on), no second pass over the prefix. Falls back to `survey(messages, scope)`
        when the scope has surveyed other messages since.

        Args:
            survey: The survey `survey(messages, scope, exact=False)` returned.
            messages: The same messages.
            scope: The run's scope.

        Returns:
            The exact survey.

        Example:
            ```python
            rc = RequestCounter(counter)
            bounded = rc.survey([tool_message], exact=False)
            assert rc.refine(bounded, [tool_message]).exact
            ```
        """
        memo = self._requests.get(scope)
        if memo is None or memo is not survey.request or len(messages) != len(memo.messages):
            return self.survey(messages, scope)
        start = memo.inexact
        infos = memo.infos[:start]
        infos.extend(
            info if info.exact else self.info(messages[start + k], scope)
            for k, info in enumerate(memo.infos[start:])
        )
        request = _Request.of(messages, infos[start:], memo, start)
        with self._lock:
            self._requests[scope] = request
        return request.survey()


_MAX_REQUESTS = 256
"""Scopes whose last request `RequestCounter.infos` remembers (the oldest goes first)."""

_CONTENT = attrgetter("content")
_TOOL_CALLS = attrgetter("tool_calls")


@dataclass(frozen=True, slots=True)
class Survey:
    """The infos of a request's messages and what the guard sums over them.

    Example:
        ```python
        survey = layer.request_counter.survey([tool_message])
        assert survey.tokens == sum(info.record.tokens for info in survey.infos)
        ```
    """

    infos: list[MessageInfo]
    """One per message, in order."""
    tokens: int
    """Sum of their token counts (exact, or upper bounds where `exact` is false)."""
    exact: bool
    """Whether every count is exact."""
    earliest_expiry: float
    """When the first stored copy behind a placeholder expires (Unix time; `inf`: none)."""
    request: _Request = field(repr=False, compare=False)
    """The counter's memo this survey was read from (for `RequestCounter.refine`)."""


@dataclass(frozen=True, slots=True)
class _Request:
    """The messages of a scope's last request, their infos and running sums (the memo).

    A guard call sees the previous call's messages again, plus a few new ones; comparing
    object identities (message, content, tool calls) is cheaper than a cache lookup per
    message, and running sums make the totals O(new messages) too. The strong references are
    those the counting cache holds anyway (contents).
    """

    messages: tuple[BaseMessage, ...]
    contents: tuple[Any, ...]
    ai: tuple[int, ...]
    """Indices of the AI messages."""
    ai_calls: tuple[Any, ...]
    """Their `tool_calls` lists, as they were."""
    infos: list[MessageInfo]
    totals: list[int]
    """`totals[i]`: tokens of the first `i` messages."""
    expiry: list[float]
    """`expiry[i]`: the earliest expiry of a placeholder among the first `i` messages."""
    inexact: int
    """Index of the first message whose count is only a bound (`len(messages)`: none)."""

    @classmethod
    def of(
        cls,
        messages: Sequence[BaseMessage],
        new_infos: list[MessageInfo],
        previous: _Request | None = None,
        reused: int = 0,
    ) -> _Request:
        """The memo of `messages`: the first `reused` are `previous`'s, `new_infos` the rest."""
        if previous is None or reused == 0:
            previous, reused = _EMPTY_REQUEST, 0
        new = messages[reused:]
        if not new and reused == len(previous.messages):
            return previous
        totals = previous.totals[: reused + 1]
        expiry = previous.expiry[: reused + 1]
        total, soonest = totals[-1], expiry[-1]
        inexact = previous.inexact if previous.inexact < reused else len(messages)
        ai_kept = bisect_left(previous.ai, reused)
        ai = list(previous.ai[:ai_kept])
        ai_calls = list(previous.ai_calls[:ai_kept])
        for k, (message, info) in enumerate(zip(new, new_infos, strict=True)):
            total += info.record.tokens
            totals.append(total)
            if info.record.cleared and info.expires_at is not None:
                soonest = min(soonest, info.expires_at)
            expiry.append(soonest)
            if not info.exact and inexact > reused + k:
                inexact = reused + k
            if isinstance(message, AIMessage):
                ai.append(reused + k)
                ai_calls.append(message.tool_calls)
        return cls(
            messages=previous.messages[:reused] + tuple(new),
            contents=previous.contents[:reused] + tuple(map(_CONTENT, new)),
            ai=tuple(ai),
            ai_calls=tuple(ai_calls),
            infos=previous.infos[:reused] + new_infos,
            totals=totals,
            expiry=expiry,
            inexact=inexact,
        )

    def survey(self) -> Survey:
        """The survey of these messages."""
        return Survey(
            infos=list(self.infos),
            tokens=self.totals[-1],
            exact=self.inexact >= len(self.messages),
            earliest_expiry=self.expiry[-1],
            request=self,
        )


_EMPTY_REQUEST = _Request(
    messages=(),
    contents=(),
    ai=(),
    ai_calls=(),
    infos=[],
    totals=[0],
    expiry=[math.inf],
    inexact=0,
)


def _first_false(flags: Iterable[bool], default: int) -> int:
    """Index of the first false flag (`default`, the number of flags, when none)."""
    try:
        return indexOf(flags, False)  # in C, without building a list
    except ValueError:
        return default


def _common_prefix(messages: Sequence[BaseMessage], memo: _Request, *, exact: bool) -> int:
    """How many leading messages are the very objects (and contents) of the memo's request.

    Every comparison is an identity check run in C (`map(operator.is_, ...)`): a call on a
    500-message conversation costs microseconds, not a Python loop.
    """
    limit = min(len(messages), len(memo.messages))
    if exact:
        limit = min(limit, memo.inexact)
    n = _first_false(map(is_, islice(messages, limit), memo.messages), limit)
    n = _first_false(map(is_, map(_CONTENT, islice(messages, n)), memo.contents), n)
    calls = bisect_left(memo.ai, n)
    if calls:
        ai = memo.ai[:calls]
        picked = itemgetter(*ai)(messages) if calls > 1 else (messages[ai[0]],)
        changed = _first_false(map(is_, map(_TOOL_CALLS, picked), memo.ai_calls), calls)
        if changed < calls:
            n = ai[changed]
    return n


def parallel_calls(messages: Any, tool_call_id: str | None) -> int:
    """How many tool calls the model turn that made `tool_call_id` contains (at least 1).

    Args:
        messages: The conversation (state messages).
        tool_call_id: The tool call's id.

    Returns:
        The number of parallel calls in that turn.

    Example:
        ```python
        from langchain_core.messages import AIMessage

        calls = [{"name": "search", "args": {}, "id": c} for c in ("c1", "c2")]
        assert parallel_calls([AIMessage("", tool_calls=calls)], "c1") == 2
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
