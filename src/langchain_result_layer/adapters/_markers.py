"""The layer's marker on messages, signed so that no tool can forge it.

The per-result layer, the budget guard and the fetch tool record what they did in
`response_metadata["result_layer"]` (processed, token count, reference, cleared, ...). A tool can
build its own `ToolMessage` (or a `Command` carrying one) with any `response_metadata`, so a
marker is trusted only when it carries a valid `sig`: an HMAC-SHA256, under the layer's secret
key, of the marker's other fields, the message's `tool_call_id` and a digest of its content. A
message whose content or marker was changed afterwards (by a tool, another middleware, a
hand-edited checkpoint) fails the check; its marker is ignored and the message is treated as a
raw result: processed, counted exactly, never trusted for a count or a reference.

The key is the layer's `marker_key`; without one, a random key made once per process, which
every layer of the process shares (so two layers in one agent trust each other's markers and
never process a result twice). Tool output cannot know it. Processes that share checkpoints
should share a key (`ResultLayer(marker_key=...)`), or markers written by one are not trusted
by another: those results are then counted exactly and, when cleared, restored from the
store's record of that very tool call (see the budget guard).

Example:
    ```python
    from langchain_core.messages import ToolMessage
    from langchain_result_layer.adapters._markers import MarkerSigner

    signer = MarkerSigner(b"k" * 32)
    msg = ToolMessage("view", tool_call_id="c1")
    msg.response_metadata["result_layer"] = signer.sign({"processed": True}, msg)
    assert signer.verified(msg)["processed"]
    msg.content = "edited"
    assert signer.verified(msg) == {}
    ```
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_result_layer.core.jsonable import to_json_text
from langchain_result_layer.pipeline import META_KEY

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = ["META_KEY", "SIG_KEY", "MarkerSigner", "content_digest", "raw_marker"]

SIG_KEY = "sig"
"""Key of the signature inside the marker."""


_PROCESS_KEY = secrets.token_bytes(32)
"""The default marker key: random, made once per process, never shown anywhere."""


def raw_marker(message: object) -> Mapping[str, Any]:
    """The marker as stored on a message, unverified (empty when absent).

    Use it only to inspect messages; decisions use `MarkerSigner.verified`.

    Args:
        message: Any message.

    Returns:
        The marker mapping.

    Example:
        ```python
        assert raw_marker(object()) == {}
        ```
    """
    metadata = getattr(message, "response_metadata", None)
    if not isinstance(metadata, Mapping):
        return {}
    marker = metadata.get(META_KEY)
    return marker if isinstance(marker, Mapping) else {}


def content_digest(content: Any) -> bytes:
    """SHA-256 of message content (text as UTF-8; blocks and objects as compact JSON).

    Args:
        content: A message's content.

    Returns:
        The 32-byte digest.

    Example:
        ```python
        assert content_digest("a") == content_digest("a")
        ```
    """
    if isinstance(content, str):
        data = content.encode("utf-8", "surrogatepass")
    else:
        try:
            text = json.dumps(
                content, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
            )
        except (TypeError, ValueError, RecursionError):
            text = to_json_text(content)
        data = b"\x00" + text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).digest()


def _canonical(marker: Mapping[str, Any]) -> bytes:
    body = {str(k): v for k, v in marker.items() if k != SIG_KEY}
    try:
        text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=repr)
    return text.encode("utf-8", "surrogatepass")


class MarkerSigner:
    """Signs and verifies the layer's markers with one secret key.

    Args:
        key: The secret (at least 16 bytes; a `str` is encoded as UTF-8). `None`: the
            process's random 32-byte key (shared by every layer of this process).

    Raises:
        ValueError: For a key shorter than 16 bytes.

    Example:
        ```python
        signer = MarkerSigner(None)
        ```
    """

    __slots__ = ("_key",)

    def __init__(self, key: bytes | str | None = None) -> None:
        raw = key.encode("utf-8") if isinstance(key, str) else key
        if raw is None:
            raw = _PROCESS_KEY
        if len(raw) < 16:
            msg = "marker_key must be at least 16 bytes (use secrets.token_hex(32))"
            raise ValueError(msg)
        self._key = raw

    def __repr__(self) -> str:
        return "MarkerSigner(<secret>)"

    def _mac(self, marker: Mapping[str, Any], message: BaseMessage | Any) -> str:
        mac = hmac.new(self._key, digestmod=hashlib.sha256)
        mac.update(_canonical(marker))
        mac.update(b"\x00")
        mac.update(str(getattr(message, "tool_call_id", None) or "").encode("utf-8", "replace"))
        mac.update(b"\x00")
        mac.update(content_digest(message.content))
        return mac.hexdigest()[:32]

    def sign(self, marker: Mapping[str, Any], message: BaseMessage) -> dict[str, Any]:
        """The marker with a signature over it and `message`'s content and tool call id.

        Sign the message exactly as it will be sent (its final content).

        Args:
            marker: The marker's fields (a `sig` in it is replaced).
            message: The message that will carry the marker.

        Returns:
            A new marker dict with `sig`.
        """
        out = {str(k): v for k, v in marker.items() if k != SIG_KEY}
        out[SIG_KEY] = self._mac(out, message)
        return out

    def verified_within(self, message: object) -> Mapping[str, Any]:
        """The marker when it signs a part of the content another middleware wrapped.

        Middleware add their own notices around a result (a reviewer's edit notice before
        it): the content is then `notice + view` or `view + notice`, and the signature still
        verifies over the view, the first or last `shown_chars` characters. Only text the
        layer made is inside its fence; the added text is the other middleware's.

        Args:
            message: Any message.

        Returns:
            The marker, or `{}` when no such part verifies.
        """
        marker = raw_marker(message)
        sig, shown = marker.get(SIG_KEY), marker.get("shown_chars")
        content = getattr(message, "content", None)
        if (
            not isinstance(sig, str)
            or not isinstance(shown, int)
            or not isinstance(content, str)
            or not hasattr(message, "model_copy")
            or not 0 < shown < len(content)
        ):
            return {}
        for part in (content[-shown:], content[:shown]):
            probe = message.model_copy(update={"content": part})
            if hmac.compare_digest(sig, self._mac(marker, probe)):
                return marker
        return {}

    def verified(self, message: object) -> Mapping[str, Any]:
        """The message's marker when its signature is valid, else `{}`.

        Args:
            message: Any message.

        Returns:
            The trusted marker, or an empty mapping (absent, forged or stale marker).
        """
        marker = raw_marker(message)
        sig = marker.get(SIG_KEY)
        if not isinstance(sig, str) or not hasattr(message, "content"):
            return {}
        if hmac.compare_digest(sig, self._mac(marker, message)):
            return marker
        return {}
