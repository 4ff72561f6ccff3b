"""Where a log record's message starts, and the masking of variable tokens.

A log line is a header (timestamp, host, pid, level, component) followed by a message. The
header is found from the shape of its tokens, with no per-format configuration: masked
fields (numbers, times, ids), month and day names, bracketed groups, a level keyword and the
component after it, or a `name[pid]:` component; up to two unknown words (a host, a
subsystem) may stand before a level or a component, and `word -` before the message.

Tokens are masked one by one (numbers, ids, addresses, `key=value` values become `<*>`), with
a cache: the tokens of a log repeat, so masking costs about one dictionary look-up a token.
Every pattern here runs in linear time, and tokens longer than `_MAX_MASK_CHARS` are not
matched at all (they are variables when they hold a digit).

Example:
    ```python
    from langchain_result_layer.views._log_header import mask_line, message_offset

    line = "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: check pass; user unknown"
    assert line[message_offset(line) :] == "check pass; user unknown"
    assert mask_line("uid=0 took 35ms") == "uid=<*> took <*>"
    ```
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "WILDCARD",
    "HeaderSplit",
    "TokenMasker",
    "common_header_fields",
    "header_split",
    "header_tokens",
    "is_field_token",
    "mask_line",
    "message_offset",
    "pipe_header",
]

WILDCARD = "<*>"

_MASK_PATTERNS: tuple[str, ...] = (
    # URLs and e-mail addresses.
    r"(?<![\w+.-])[a-zA-Z][\w+.-]*://\S+",
    r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b",
    # Host names that hold numbers (`host-10-2-3-4.example.net`).
    r"(?<![\w.-])(?=[\w.-]*\d)[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,}(?![\w.(-])",
    # UUIDs, IPv4 (optional port), MAC addresses.
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
    r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?![\w.])",
    r"\b(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}\b",
    # Hex ids: 0x..., or runs of hex digits that hold a digit and a letter.
    r"\b0[xX][0-9a-fA-F]+\b",
    r"(?<![0-9A-Za-z])(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{6,}(?![0-9A-Za-z])",
    # Numbers, also signed, decimal, with units or glued after letters (blk_-123, t761).
    r"(?<![0-9])[-+]?\d+(?:[.,:]\d+)*(?:[eE][-+]?\d+)?(?:[a-zA-Z%µ]{1,3}\b)?",
)
# Every pattern starts with one of `[\w.+-]`: the look-ahead skips other positions at once.
_MASK_RE = re.compile("(?=[\\w.+-])(?:" + "|".join(f"(?:{p})" for p in _MASK_PATTERNS) + ")")
_WILD_RUN_RE = re.compile(r"<\*>(?:[-:.,/_]*<\*>)*")
_CALENDAR = frozenset(
    [
        "Jan",
        "Feb",
        "Mar",
        "Apr",
        "May",
        "Jun",
        "Jul",
        "Aug",
        "Sep",
        "Oct",
        "Nov",
        "Dec",
        "Mon",
        "Tue",
        "Wed",
        "Thu",
        "Fri",
        "Sat",
        "Sun",
    ]
)
_KEY_RE = re.compile(r"[\[(\"']?[A-Za-z_][\w.-]*")
_VALUE_TAIL = ",;)]\"'"
_STRUCTURE_CHARS = frozenset("./:@\\")
_MAX_MASK_CHARS = 160
_NUMERIC_CHARS = "0123456789.,:-+/_<>"
_SPACE_RE = re.compile(r"\s")
_MAX_QUOTED_TOKENS = 6
_SIZE_UNITS = ("B", "KB", "MB", "GB", "TB", "kB", "KiB", "MiB", "GiB", "TiB")
_UNITS = frozenset((*_SIZE_UNITS, "ms", "us", "µs", "ns", "s", "sec", "secs", "min", "mins"))
_CACHE_LIMIT = 50_000
_NUMBER_OPENINGS = frozenset((WILDCARD, "(" + WILDCARD))
"""A masked number, or one that opens a parenthesis: a unit may follow it."""

_STAMPISH_RE = re.compile(
    r"""^(?:
        [\[(]*<\*>(?:[-:.,/T_]*<\*>)*[\]):,]*
      | (?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w*,?
      | [A-Za-z]{1,12}[-_]?<\*>
      | - | -- | \|
    )$""",
    re.VERBOSE,
)
_LEVEL_TOKEN_RE = re.compile(
    r"^[\[<(]?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|SEVERE|CRITICAL|FATAL|CRIT|ALERT"
    r"|EMERG|FINE|FINER|FINEST|CONFIG|Trace|Debug|Info|Notice|Warn|Warning|Error|Severe"
    r"|Critical|Fatal|[VDIWEF])[\]>)]?:?,?$"
)
_COMPONENT_RE = re.compile(r"^\(?[A-Za-z_][\w.$()/@<*>-]*(?:\[[^\]\s]*\])?\)?:$")
_DOTTED_RE = re.compile(r"^[A-Za-z_][\w$-]*(?:\.[\w$<*>-]+)+$")
_SEPARATORS = frozenset({"-", "--", ":"})
MAX_HEADER_TOKENS = 14
_MAX_HEADER_TOKEN_CHARS = 80
_MAX_PENDING = 3
_HOSTLIKE_RE = re.compile(r"^[\w.@#<*>()[\]-]{1,64}$")
_COMMON_SCAN = 10
"""Positions (from a line's start) where a log's common header fields are looked for."""
_COMMON_SHARE = 0.9
"""Share of lines whose token at a position must be a masked field for it to be header."""
_MAX_SHOUTING = 3
_SHOUTING_RE = re.compile(r"^[A-Z][A-Z0-9_]+$")
_AFTER_LEVEL = 3
_HEADER_SCAN_CHARS = 400


_FIELD = 1
_LEVEL = 2
_BRACKET = 4
_COMPONENT = 8
_DOTTED = 16
_HOST = 32
_SHOUT = 64
_LONG = 128
_SEPARATOR = 256


def _shape(token: str) -> int:
    """The header roles a masked token can play, as bit flags."""
    if len(token) > _MAX_HEADER_TOKEN_CHARS:
        return _LONG
    flags = 0
    if _STAMPISH_RE.match(token) or _ids_token(token):
        flags |= _FIELD
    if _LEVEL_TOKEN_RE.match(token):
        flags |= _LEVEL
    if token.startswith("["):
        flags |= _BRACKET
    if _COMPONENT_RE.match(token) or token == WILDCARD + ":":
        flags |= _COMPONENT
    if _DOTTED_RE.match(token):
        flags |= _DOTTED
    if _HOSTLIKE_RE.match(token):
        flags |= _HOST
    if _SHOUTING_RE.match(token):
        flags |= _SHOUT
    if token in _SEPARATORS:
        flags |= _SEPARATOR
    return flags


class TokenMasker:
    """Masks tokens with a cache (one per mining run or per log).

    Example:
        ```python
        masker = TokenMasker()
        assert masker.mask("blk_-1608999687919862906") == "blk_<*>"
        assert masker.mask("flags=0x1,") == "flags=<*>,"
        assert masker.mask("Nov") == "<*>"
        ```
    """

    __slots__ = ("_cache", "_shapes")

    def __init__(self) -> None:
        self._cache: dict[str, str] = {}
        self._shapes: dict[str, int] = {}

    def shape(self, masked: str) -> int:
        """The header roles of a masked token (cached bit flags)."""
        flags = self._shapes.get(masked)
        if flags is None:
            flags = _shape(masked)
            if len(self._shapes) < _CACHE_LIMIT:
                self._shapes[masked] = flags
        return flags

    def mask(self, token: str) -> str:
        """The token with its variable parts replaced by `<*>`.

        Args:
            token: One whitespace-free token.

        Returns:
            The masked token.
        """
        cached = self._cache.get(token)
        if cached is not None:
            return cached
        masked = _mask_token(token)
        if len(self._cache) < _CACHE_LIMIT:
            self._cache[token] = masked
        return masked

    def tokens(self, text: str, *, limit: int | None = None) -> list[str]:
        """Masked whitespace-separated tokens of a text.

        A quoted `key="value"` that holds spaces (`tag="View Lock",`) is one token, and a unit
        after a number (`5.4 KB`, `<1 sec`) is part of the number.

        Args:
            text: The text.
            limit: At most this many tokens are masked; the rest of the text becomes one
                trailing `<*>` (bounds the work on very wide lines).

        Returns:
            The masked tokens.
        """
        rest = False
        if limit is None:
            raw = text.split()
        else:
            raw = text.split(None, limit)
            if len(raw) > limit:
                raw.pop()
                rest = True
        if '="' in text:
            raw = _join_quoted(raw)
        cache = self._cache
        out: list[str] = []
        after_number = False
        for token in raw:
            masked = cache.get(token)
            if masked is None:
                masked = self.mask(token)
            if after_number and token.rstrip(_VALUE_TAIL) in _UNITS:
                after_number = False
                if out[-1] == WILDCARD:
                    continue  # `5.4 KB`: the unit is part of the number
                if token[len(token.rstrip(_VALUE_TAIL)) :].startswith(")"):
                    out.pop()  # `5 bytes (5.0 KB)`: a restated quantity, often optional
                    continue
            out.append(masked)
            after_number = masked in _NUMBER_OPENINGS
        if rest:
            out.append(WILDCARD)
        return out


def _join_quoted(raw: list[str]) -> list[str]:
    """Tokens with each `key="a b c"` value (up to `_MAX_QUOTED_TOKENS` words) joined."""
    out: list[str] = []
    i = 0
    n = len(raw)
    while i < n:
        token = raw[i]
        i += 1
        if '="' in token and token.count('"') == 1:
            end = i
            while end < n and end - i < _MAX_QUOTED_TOKENS and '"' not in raw[end]:
                end += 1
            if end < n and end - i < _MAX_QUOTED_TOKENS:
                token = " ".join(raw[i - 1 : end + 1])
                i = end + 1
        out.append(token)
    return out


def _mask_value(piece: str) -> str:
    """`key=value` with a structured value (quoted, dotted, a path, an address) masked.

    Plain word values (`user=root`, `ws=null`) are kept: they often tell templates apart.
    """
    eq = piece.find("=")
    if eq <= 0 or eq == len(piece) - 1 or piece[eq + 1] == "=":
        return piece
    key = _KEY_RE.match(piece)
    if key is None or key.end() != eq:
        return piece
    value = piece[eq + 1 :]
    core = value.rstrip(_VALUE_TAIL)
    if not core:
        return piece
    if core[0] in "\"'" or any(ch in _STRUCTURE_CHARS for ch in core):
        return piece[: eq + 1] + WILDCARD + value[len(core) :]
    return piece


def _mask_token(token: str) -> str:
    if token in _CALENDAR or (token[-1:] == "," and token[:-1] in _CALENDAR):
        return WILDCARD
    if len(token) > _MAX_MASK_CHARS and "," in token and "=" in token:
        # A long `a=1,b=2,...` list: mask its pieces (each bounded), keep its keys.
        return ",".join(_mask_token(piece[:_MAX_MASK_CHARS]) for piece in token.split(","))
    if "=" in token and len(token) <= _MAX_MASK_CHARS:
        token = ",".join(_mask_value(piece) for piece in token.split(","))
    has_digit = any(ch.isdigit() for ch in token)
    if not has_digit and "@" not in token and "://" not in token:
        return token
    if len(token) > _MAX_MASK_CHARS or (has_digit and not token.strip(_NUMERIC_CHARS)):
        return WILDCARD if has_digit else token  # long, or a number, time or date
    masked = _MASK_RE.sub(WILDCARD, token)
    if masked.count(WILDCARD) > 1:
        masked = _WILD_RUN_RE.sub(WILDCARD, masked)
    return masked


def mask_line(line: str) -> str:
    """Mask the variable parts of a line (numbers, ids, addresses, dates) with `<*>`.

    Tokens are separated by single spaces in the result.

    Args:
        line: A log line or message.

    Returns:
        The masked line.

    Example:
        ```python
        assert mask_line("uid=0 rhost=10.0.0.1 took 35ms") == "uid=<*> rhost=<*> took <*>"
        ```
    """
    return " ".join(TokenMasker().tokens(line))


def _skip_bracket(tokens: Sequence[str], i: int) -> int:
    """Index after a bracketed group starting at `i` (at most 8 tokens), else `i`."""
    if i >= len(tokens) or not tokens[i].startswith("["):
        return i
    depth = 0
    for j in range(i, min(len(tokens), i + 8)):
        depth += tokens[j].count("[") - tokens[j].count("]")
        if depth <= 0:
            return j + 1
    return i


def _ids_token(token: str) -> bool:
    """A token made of several masked parts (`R<*>-M<*>-N<*>`): a node or host id."""
    if token.count(WILDCARD) < 2:
        return False
    return ":" not in token[: token.index(WILDCARD)]


def is_field_token(token: str, *, masker: TokenMasker | None = None) -> bool:
    """A masked header field: a timestamp, number or id, a month or day name, a `-`.

    Example:
        ```python
        assert is_field_token("<*>") and is_field_token("node-<*>")
        assert not is_field_token("Component")
        ```
    """
    return bool((masker.shape(token) if masker is not None else _shape(token)) & _FIELD)


def common_header_fields(
    lines: Sequence[Sequence[str]], *, masker: TokenMasker | None = None
) -> int:
    """Leading positions that form the header of nearly every line (by shape), or -1.

    The last position, among the first `_COMMON_SCAN` of a line, that holds a masked field
    (`is_field_token`) in at least `_COMMON_SHARE` of the lines ends the log's common header:
    words between such fields (`node-<*> unix.hw state_change.unavailable <*> <*> ...`) are
    header fields too (a component, a state), not the message.

    Args:
        lines: The masked tokens of each line.
        masker: The masker whose shape cache to use (none by default).

    Returns:
        The number of leading header positions, or -1 when no position qualifies.

    Example:
        ```python
        lines = [["<*>", "node-<*>", "unix.hw", "up", "<*>", "w", str(i)] for i in range(30)]
        assert common_header_fields(lines) == 5
        ```
    """
    counts = [0] * _COMMON_SCAN
    for tokens in lines:
        for pos in range(min(_COMMON_SCAN, len(tokens) - 1)):
            if is_field_token(tokens[pos], masker=masker):
                counts[pos] += 1
    need = _COMMON_SHARE * len(lines)
    for pos in range(_COMMON_SCAN - 1, -1, -1):
        if counts[pos] and counts[pos] >= need:
            return pos + 1
    return -1


def _after_level(tokens: Sequence[str], shapes: Sequence[int], i: int, limit: int) -> int:
    """Index after what follows a level: a component, a bracketed context, separators."""
    for _ in range(_AFTER_LEVEL):
        if i >= limit:
            break
        flags = shapes[i]
        if flags & _SEPARATOR:
            i += 1
        elif flags & _BRACKET:
            j = _skip_bracket(tokens, i)
            if j == i:
                break
            i = j
        elif flags & _COMPONENT:
            i += 1
            break
        elif flags & _DOTTED:
            i += 1
        elif flags & _HOST and i + 1 < limit and tokens[i + 1] in ("-", "--"):
            i += 2  # `INFO name - message`
            break
        else:
            break
    while i < limit and shapes[i] & _SEPARATOR:
        i += 1
    return i


@dataclass(frozen=True, slots=True)
class HeaderSplit:
    """Where one line's header ends, and what ended it.

    Example:
        ```python
        split = header_split("<*> <*> combo sshd[<*>]: check pass".split())
        assert (split.tokens, split.fields, split.end) == (4, 2, "component")
        ```
    """

    tokens: int
    """Header tokens (the message starts at this token)."""
    fields: int
    """Header tokens before any unknown word (timestamps, ids, brackets only)."""
    end: str
    """What ended the header: `level`, `component`, `dash` (`program - message`) or `fields` (the
    first token that is not a field)."""


def header_split(tokens: Sequence[str], *, masker: TokenMasker | None = None) -> HeaderSplit:
    """Where a log record's header ends, judged on one line's masked tokens.

    Args:
        tokens: The masked tokens of one line.
        masker: The masker whose shape cache to use (none by default).

    Returns:
        The split (the header is never the whole line).
    """
    n = len(tokens)
    limit = min(n - 1, MAX_HEADER_TOKENS)
    shape = masker.shape if masker is not None else _shape
    shapes = [shape(t) for t in tokens[: limit + 1]]
    cut = 0
    i = 0
    pending = 0
    shouting = 0
    while i < limit:
        t = tokens[i]
        flags = shapes[i]
        if flags & _LONG:
            break
        if pending and t in ("-", "--"):
            i += 1  # `program - message`, or `time - name - LEVEL - message`
            if i < limit and shapes[i] & _LEVEL:
                return HeaderSplit(
                    min(_after_level(tokens, shapes, i + 1, limit), n - 1), cut, "dash"
                )
            return HeaderSplit(min(i, n - 1), cut, "dash")
        if flags & _FIELD:
            i += 1
            if not pending:
                cut = i
            continue
        if flags & _LEVEL and (i > 0 or n > 2):
            end = _after_level(tokens, shapes, i + 1, limit)
            return HeaderSplit(min(end, n - 1), cut, "level")
        if flags & _BRACKET:
            j = _skip_bracket(tokens, i)
            if j > i:
                i = j
                if not pending:
                    cut = i
                continue
        if flags & _COMPONENT and i > 0:
            i += 1
            while i < limit and tokens[i] in ("-", "--"):
                i += 1
            return HeaderSplit(min(i, n - 1), cut, "component")
        if pending < _MAX_PENDING and flags & _HOST:
            pending += 1
            i += 1
            continue
        if shouting < _MAX_SHOUTING and flags & _SHOUT:
            shouting += 1  # upper-case fields (`RAS KERNEL`, `UNKNOWN_LOCATION NULL`)
            i += 1
            continue
        break
    return HeaderSplit(cut, cut, "fields")


def header_tokens(tokens: Sequence[str]) -> int:
    """How many leading (masked) tokens are a log record's header.

    Args:
        tokens: The masked tokens of one line.

    Returns:
        The number of header tokens (never all of them).

    Example:
        ```python
        tokens = "<*> <*> INFO dfs.DataNode: Receiving block blk_<*>".split()
        assert header_tokens(tokens) == 4
        ```
    """
    return header_split(tokens).tokens


def pipe_header(line: str) -> int:
    """Offset after the last `|` of a `a|b|c|message` record's leading fields, else 0.

    Args:
        line: One raw log line.

    Returns:
        The offset (0 when the line's first word, within its first 120 characters, holds
        fewer than two pipes).

    Example:
        ```python
        line = "20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579"
        assert line[pipe_header(line) :] == "onStandStepChanged 3579"
        ```
    """
    head = line[:120]
    if head.count("|") < 2:
        return 0
    space = _SPACE_RE.search(head)
    if space is not None:
        head = head[: space.start()]  # the fields come first: later pipes are the message's
    if head.count("|") >= 2:
        return head.rfind("|") + 1
    return 0


def message_offset(line: str, *, masker: TokenMasker | None = None) -> int:
    """Character offset where a log record's message starts (0 when there is no header).

    Args:
        line: One raw log line.
        masker: A token masker to reuse (its cache); none by default.

    Returns:
        The offset of the message within `line`.

    Example:
        ```python
        line = "2015-07-29 17:41:44,747 - INFO  [main:Quorum@774] - Notification time out: 3200"
        assert line[message_offset(line):] == "Notification time out: 3200"
        ```
    """
    pipe = pipe_header(line)
    if pipe:
        return pipe
    head = line[:_HEADER_SCAN_CHARS]
    raw = head.split()[: MAX_HEADER_TOKENS + 2]
    if len(raw) < 2:
        return 0
    mask = masker.mask if masker is not None else _mask_token
    k = header_tokens([mask(t) for t in raw])
    if k <= 0:
        return 0
    # Offset of the k-th token: walk the raw tokens in order.
    pos = 0
    for token in raw[:k]:
        pos = head.index(token, pos) + len(token)
    if k >= len(raw):
        return len(line)
    return head.index(raw[k], pos)
