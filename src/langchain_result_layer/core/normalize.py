r"""Normalisation of text for display: what the model sees, never what the store keeps.

`clean_for_display` removes terminal noise and characters that cannot travel to a model API:

- ANSI escape sequences (colours, cursor moves, OSC titles and hyperlinks) are removed;
- carriage-return progress lines collapse to what a terminal would finally show (the text after
  the last bare `\\r` on the line; a `\\r\\n` line ending is kept as it is);
- other C0 control characters and DEL become visible control pictures (`\\x00` -> `␀`), so a
  NUL byte is seen, not sent;
- lone surrogates (broken UTF-16 from a bad decode) become U+FFFD.

Normalisation works line by line and never adds or removes a `\\n`, so line numbers are the
same in the raw result and in the view.

Example:
    ```python
    from langchain_result_layer.core.normalize import clean_for_display

    assert clean_for_display("\x1b[31mred\x1b[0m\n") == "red\n"
    assert clean_for_display("10%\r50%\r100%\n") == "100%\n"
    ```
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "clean_for_display",
    "count_lines",
    "needs_cleaning",
    "safe_cut",
]

# CSI, OSC (terminated by BEL, ST or the end of the line), DCS/SOS/PM/APC strings (terminated
# by ST or, as Buildkite's `\x1b_bk;t=<ms>\x07` timestamps are, by BEL), other two-byte
# escapes. None of them may span a newline: line numbers must survive cleaning.
# `_ESC_RE` is the 7-bit escapes with their `\x1b` factored out: the search skips to each ESC
# with a literal scan instead of testing every character against a set. A text without
# `\x9b` has no 8-bit CSI to remove, and its escapes are the same matches as `_ANSI_RE`'s.
_ESC_RE = re.compile(
    r"\x1b(?:"
    r"\[[0-?]*[ -/]*[@-~]"
    r"|\][^\x07\x1b\n]*(?:\x07|\x1b\\|(?=\n)|$)"
    r"|[PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)"
    r"|[ -/]*[0-~]"
    r")"
)
_ANSI_RE = re.compile(_ESC_RE.pattern + r"|\x9b[0-?]*[ -/]*[@-~]")  # and the 8-bit CSI
_NEEDS_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b\ud800-\udfff]")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")
_REST_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x9b\ud800-\udfff]")
"""What is left to clean once escapes are removed and redraws collapsed (controls, a stray
ESC or CSI byte, surrogates): the steps after that change nothing when it matches nothing."""

_ZWJ = "\u200d"


def needs_cleaning(text: str) -> bool:
    r"""Whether `clean_for_display` would change `text` (fast check).

    Args:
        text: Any text.

    Returns:
        `True` when the text holds escapes, bare carriage returns, controls or surrogates.

    Example:
        ```python
        assert not needs_cleaning("plain\r\n")
        ```
    """
    match = _NEEDS_RE.search(text)  # most lines hold nothing to clean: one search
    while match is not None:
        at = match.start()
        if text[at] != "\r" or not text.startswith("\r\n", at):
            return True
        match = _NEEDS_RE.search(text, at + 1)
    return False


def _control_picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    return "\u2421" if code == 0x7F else chr(0x2400 + code)


def _strip_escapes(text: str) -> str:
    """`text` without its ANSI escape sequences (`_ANSI_RE`'s matches removed)."""
    return _ANSI_RE.sub("", text) if "\x9b" in text else _ESC_RE.sub("", text)


def _last_overwrite(body: str) -> str:
    """The last non-empty part of `body` between carriage returns (`""` if none is)."""
    end = len(body)
    cr = body.rfind("\r")
    while cr >= 0 and cr + 1 == end:  # an empty part: read on from the carriage return before
        end = cr
        cr = body.rfind("\r", 0, end)
    return body[cr + 1 : end]


def _collapse_line(line: str) -> str:
    """What a terminal finally shows of one line (no newline in it)."""
    # Keep a trailing "\r" that belongs to a "\r\n" ending.
    trailing_cr = line.endswith("\r")
    body = line[:-1] if trailing_cr else line
    if "\r" in body:
        # What a terminal shows: the last non-empty overwrite (read back from the end, no
        # list of every overwrite).
        body = _last_overwrite(body)
    return body + ("\r" if trailing_cr else "")


def _collapse_bare_cr(text: str) -> str:
    """Collapse every line that holds a bare carriage return, in one linear pass.

    Only lines with a carriage return are looked at: each is found from a CR and its
    surrounding newlines, and the scan resumes after it.
    """
    pieces: list[str] = []
    done = 0
    cr = text.find("\r")
    while cr >= 0:
        start = max(done, text.rfind("\n", done, cr) + 1)
        end = text.find("\n", cr)
        end = len(text) if end < 0 else end
        pieces.append(text[done:start])
        pieces.append(_collapse_line(text[start:end]))
        done = end
        cr = text.find("\r", end)
    pieces.append(text[done:])
    return "".join(pieces)


def clean_for_display(text: str) -> str:
    r"""Return the display form of `text` (see the module docstring).

    Args:
        text: Raw text.

    Returns:
        The cleaned text, with exactly as many `\\n` as `text`.

    Example:
        ```python
        clean_for_display("a\x00b")  # 'a␀b'
        ```
    """
    if text.isprintable():  # a printable text holds none of them
        return text
    if "\n" not in text and "\x1b" in text and "\r" not in text:
        # One coloured line (most lines that need cleaning): when removing its escapes
        # leaves it printable, that is all the steps below would do.
        plain = _strip_escapes(text)
        if plain.isprintable():
            return plain
    if not needs_cleaning(text):
        return text
    if "\x1b" in text or "\x9b" in text:
        text = _strip_escapes(text)
    if "\r" in text:
        text = _collapse_bare_cr(text)
    if _REST_RE.search(text) is None:  # escapes and progress redraws only (most lines)
        return text
    text = _CONTROL_RE.sub(_control_picture, text)
    if "\x1b" in text:  # a stray ESC that did not start a known sequence
        text = text.replace("\x1b", "\u241b")
    if "\x9b" in text:
        text = text.replace("\x9b", "\ufffd")
    if _SURROGATE_RE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        text = _SURROGATE_RE.sub("\ufffd", text)
    return text


def count_lines(text: str | bytes, start: int = 0, end: int | None = None) -> int:
    r"""Count lines the way every part of the package does: split on `\\n`.

    A non-empty text without a trailing newline has one more line than it has newlines; the
    empty text has zero lines.

    Args:
        text: The text (or bytes).
        start: Start offset.
        end: End offset (exclusive); defaults to the end.

    Returns:
        Number of lines in `text[start:end]`.

    Example:
        ```python
        assert count_lines("a\nb") == 2 and count_lines("a\n") == 1 and count_lines("") == 0
        ```
    """
    stop = len(text) if end is None else end
    if stop <= start:
        return 0
    nl: str | bytes = "\n" if isinstance(text, str) else b"\n"
    n = text.count(nl, start, stop)  # type: ignore[arg-type]
    last = text[stop - 1 : stop]
    return n if last == nl else n + 1


def _is_joiner(ch: str) -> bool:
    return ch == _ZWJ or "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef"


def safe_cut(text: str, pos: int, *, backward: bool = True) -> int:
    r"""Move a cut position so it splits no CRLF, surrogate pair or combining sequence.

    Args:
        text: The text being cut.
        pos: Proposed cut (the cut falls before `text[pos]`).
        backward: Move towards the start (`True`) or the end (`False`) when adjusting.

    Returns:
        A position in `[0, len(text)]` that is a safe boundary.

    Example:
        ```python
        s = "ab\r\ncd"
        assert safe_cut(s, 3) == 2 and safe_cut(s, 3, backward=False) == 4
        ```
    """
    n = len(text)
    pos = max(0, min(pos, n))
    step = -1 if backward else 1
    # Bounded: a pathological run of combining marks is cut anyway after 64 steps.
    for _ in range(64):
        if pos <= 0 or pos >= n:
            return pos
        prev, cur = text[pos - 1], text[pos]
        unsafe = (
            (prev == "\r" and cur == "\n")
            or ("\ud800" <= prev <= "\udbff" and "\udc00" <= cur <= "\udfff")
            or unicodedata.combining(cur) != 0
            or _is_joiner(cur)
            or prev == _ZWJ
            or ("\U0001f3fb" <= cur <= "\U0001f3ff")  # skin-tone modifier
            or ("\U0001f1e6" <= prev <= "\U0001f1ff" and "\U0001f1e6" <= cur <= "\U0001f1ff")
        )
        if not unsafe:
            return pos
        pos += step
    return pos
