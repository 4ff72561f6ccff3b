"""What the non-destructive guard decided, remembered per principal, thread and content.

In the non-destructive mode the guard never edits graph state, so the next call sees the
original results again; to send the same prefix (and keep the provider's prompt cache hitting)
it recalls the placeholders it sent before. A decision applies only to the message it was made
for: the key is the scope (tenant, user and thread of the run), the message id and a hash of the
message's content and tool call id. A conversation of another tenant or thread with the same
message ids (deterministic ids, a copied thread) and even the same sizes gets nothing from it.

Example:
    ```python
    from langchain_core.messages import ToolMessage
    from langchain_result_layer.adapters._decisions import DecisionMemory
    from langchain_result_layer.stores.base import Principal

    memory = DecisionMemory()
    original = ToolMessage("big", tool_call_id="c1", id="t1")
    placeholder = ToolMessage("[cleared]", tool_call_id="c1", id="t1")
    memory.remember(Principal(tenant="a"), [original], [placeholder])
    assert memory.recall(Principal(tenant="a"), [original]) == [placeholder]
    assert memory.recall(Principal(tenant="b"), [original]) == [original]
    ```
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from langchain_result_layer.adapters._markers import content_digest
from langchain_result_layer.stores.base import Principal

__all__ = ["DecisionMemory"]

_MAX_DECISIONS = 100_000


def _scope_key(scope: Principal) -> tuple[str | None, str | None, str | None]:
    return (scope.tenant, scope.user, scope.thread)


def _fingerprint(message: BaseMessage) -> tuple[Any, ...]:
    return (
        type(message).__name__,
        getattr(message, "tool_call_id", None),
        message.name,
        content_digest(message.content),
    )


class DecisionMemory:
    """Same-id placeholders the guard sent, keyed by scope, message id and content.

    Thread-safe; bounded (the oldest decisions are dropped past `max_entries`).

    Args:
        max_entries: Most decisions kept.

    Example:
        ```python
        memory = DecisionMemory(max_entries=10_000)
        ```
    """

    def __init__(self, *, max_entries: int = _MAX_DECISIONS) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[Any, ...], tuple[tuple[Any, ...], BaseMessage]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def recall(self, scope: Principal, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """`messages` with every remembered decision of this scope applied.

        Args:
            scope: Who is asking (tenant, user, thread).
            messages: The conversation.

        Returns:
            A new list; messages without a decision are the same objects.
        """
        out = list(messages)
        if not self._entries:
            return out
        key = _scope_key(scope)
        for i, message in enumerate(messages):
            if message.id is None:
                continue
            entry = self._entries.get((key, message.id))
            if entry is not None and entry[0] == _fingerprint(message):
                out[i] = entry[1]
        return out

    def remember(
        self,
        scope: Principal,
        originals: Sequence[BaseMessage],
        replacements: Sequence[BaseMessage],
    ) -> None:
        """Remember that each original was replaced, for this scope.

        Args:
            scope: Who made the request.
            originals: The messages as they were.
            replacements: What was sent instead, in the same order.
        """
        key = _scope_key(scope)
        with self._lock:
            for original, replacement in zip(originals, replacements, strict=True):
                if original.id is None:
                    continue
                entry_key = (key, original.id)
                self._entries[entry_key] = (_fingerprint(original), replacement)
                self._entries.move_to_end(entry_key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
