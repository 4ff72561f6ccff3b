"""Log template mining: grouping the lines of a log into templates with counts.

No per-log configuration; the signals are the shape of tokens and their frequency at a
position within a group of lines, as in IPLoM and Brain (Yu et al., 2023):

1. **Header and masking** (`_log_header`): each line's header (timestamp, host, level,
   component) is left out, and tokens that hold numbers, ids, addresses or `key=value` values
   are masked (`blk_-160899` -> `blk_<*>`, `uid=0` -> `uid=<*>`).
2. **Length**: lines are grouped by their number of tokens.
3. **Top-down split by position**: in a group, a position whose values all agree is a
   constant; a position with more than `max_constant_values` distinct values, with a value
   that holds a variable (unless every value is a distinct word, some followed by a masked
   number, `ee<*>`/`alt<*>` or `HTTPS`/`SOCKS<*>`: the words tell events apart), with three
   or more values that all also occur in other groups of the log (user names that recur
   across events, unlike the words that tell events apart), or with a value of its own on
   each of `min_identifier_lines` or more lines that agree everywhere else (link or host
   names: one event, not five) is a variable, and stays one in every sub-group; of the
   remaining positions the one with the fewest distinct values splits the group (each value
   on at least `min_value_lines` lines), and the parts are split again.
4. **Merge across lengths**: groups whose templates are equal once runs of `<*>` are
   collapsed are one template (a variable that holds spaces).

Work is linear in the number of tokens times the split depth (at most the tokens of a line,
capped at `max_tokens`); memory is linear in the tokens given. `drain3` is measured next to
this miner in `benchmarks/log_templates.py`, with leave-one-system-out tuning of the two
settings above.

Example:
    ```python
    from langchain_result_layer.views._templates import mine_templates

    result = mine_templates(["user 1 logged in", "user 22 logged in", "disk full"])
    assert result.assignments[0] == result.assignments[1] != result.assignments[2]
    ```
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from langchain_result_layer.views._log_header import (
    MAX_HEADER_TOKENS,
    WILDCARD,
    HeaderSplit,
    TokenMasker,
    common_header_fields,
    header_split,
    is_field_token,
    mask_line,
    message_offset,
    pipe_header,
)

__all__ = [
    "WILDCARD",
    "Template",
    "TemplateMiner",
    "TemplateResult",
    "TemplateSettings",
    "mask_line",
    "message_offset",
    "mine_templates",
]


@dataclass(frozen=True, slots=True)
class TemplateSettings:
    """The few numbers of the miner (chosen by leave-one-system-out on loghub samples).

    Example:
        ```python
        settings = TemplateSettings(max_constant_values=3)
        assert settings.min_value_lines == 1  # the default
        ```
    """

    max_constant_values: int = 5
    """A position with more distinct values in a group is a variable. Higher splits more
    (`bytes`/`values` apart) at the risk of splitting on a variable with few values."""

    min_value_lines: int = 1
    """Each value of a splitting position must hold this many lines of the group; lower
    separates rare one-word differences, higher keeps rare variable values in."""

    shared_values_vary: bool = True
    """A position with three or more values that all also occur in other pattern groups (user
    or host names that recur across events) is a variable: template words tell one event
    apart and stay in it. `False`: only the count of values decides."""

    min_identifier_lines: int = 4
    """A position where each line of a group of at least this many lines holds its own value,
    the lines agreeing at every other position, is a variable (`[LNKD]`...`[LNKH]`, one value
    per line: names, not the words of several events). Lower merges more one-line events
    that differ in one word (3 merged the kernel's `DMA`/`Normal`/`HighMem zone` lines,
    separate events in Linux's labels); `0` turns the rule off."""

    split_off_frequent: bool = False
    """When some values of a splitting position are rare: split off the frequent values and
    keep the rare ones together (`True`), or do not split on that position (`False`)."""

    max_tokens: int = 64
    """Tokens kept per message (more become one trailing `<*>`): bounds the work per line."""


DEFAULT_SETTINGS = TemplateSettings()
_SHARED_MIN_VALUES = 3
"""`shared_values_vary` judges positions with at least this many values: two recurring
words (`begin`/`end`, `true`/`false`) still tell events apart."""
_COMMON_HEADER_MIN_LINES = 20
"""Headers are judged over the sample from this many lines on (fewer: line by line)."""
_HEADER_END_SHARE = 0.5
"""A level, component or dash must end at least this share of the headers to count as the
log's header end; in fewer lines it is a word of their message."""
_DASHES = frozenset({"-", "--"})
"""Tokens that end a `program - message` header."""
_NO_HEADER = HeaderSplit(0, 0, "none")
_PIPE_HEADER = HeaderSplit(0, 0, "pipe")


@dataclass(slots=True)
class Template:
    """One template: its tokens, how many lines it covers and where it first appears."""

    template_id: int
    """Index of the template."""
    tokens: list[str]
    """Template tokens (`<*>` marks a variable)."""
    count: int = 0
    """Lines that belong to it."""
    first_index: int = 0
    """0-based index of its first line in the input."""
    last_index: int = 0
    """0-based index of its last line."""

    @property
    def text(self) -> str:
        """The template as text."""
        return " ".join(self.tokens)


@dataclass(slots=True)
class TemplateResult:
    """Templates and the template of every input line."""

    templates: list[Template]
    """Templates, by id."""
    assignments: list[int]
    """Template id of each input line (in input order)."""

    def by_count(self) -> list[Template]:
        """Templates, most frequent first (first appearance breaks ties)."""
        return sorted(self.templates, key=lambda t: (-t.count, t.first_index))


class TemplateMiner:
    """Collects lines, then groups them into templates (see the module docstring).

    The grouping needs every line of the sample (a position is judged over its group), so
    `add` only masks and stores; `result` does the grouping.

    Args:
        strip_header: Leave out each line's header (timestamp, level, pid, thread,
            component) and group on the message only.
        settings: The miner's numbers.

    Example:
        ```python
        miner = TemplateMiner()
        miner.add("connection from 10.0.0.1 closed")
        miner.add("connection from 10.0.0.2 closed")
        r = miner.result()
        assert r.assignments[0] == r.assignments[1]
        ```
    """

    def __init__(
        self, *, strip_header: bool = False, settings: TemplateSettings = DEFAULT_SETTINGS
    ) -> None:
        self.strip_header = strip_header
        self.settings = settings
        self._masker = TokenMasker()
        self._tokens: list[list[str]] = []
        self._splits: list[HeaderSplit] = []

    def add(self, line: str) -> int:
        """Add one line.

        Args:
            line: The line.

        Returns:
            Its 0-based index in the sample.
        """
        masker = self._masker
        split = _NO_HEADER
        limit = self.settings.max_tokens
        if self.strip_header:
            pipe = pipe_header(line)
            if pipe:
                tokens = masker.tokens(line[pipe:], limit=limit)
                split = _PIPE_HEADER
            else:
                tokens = masker.tokens(line, limit=limit + MAX_HEADER_TOKENS)
                split = header_split(tokens, masker=masker)
        else:
            tokens = masker.tokens(line, limit=limit)
        self._tokens.append(tokens)
        self._splits.append(split)
        return len(self._tokens) - 1

    def _messages(self) -> list[tuple[str, ...]]:
        """Each line's message tokens, its header judged over the whole sample.

        A header that ended at a level, a component or a `program -` in only a minority of
        the lines ended at a word of the message (`getTasks: ...`): those lines keep their
        fields-only header. When most headers end at `program -`, a fields-only header that
        holds a dash ends after it (a program name that masks to a field). In lines whose
        header ended on its fields alone, positions that hold a masked field in nearly every
        line (`common_header_fields`) are header too.
        """
        splits = self._splits
        cuts = [s.tokens for s in splits]
        if self.strip_header and len(splits) >= _COMMON_HEADER_MIN_LINES:
            ends = Counter(s.end for s in splits if s is not _PIPE_HEADER)
            judged = sum(ends.values())
            rare = {end for end, count in ends.items() if count < _HEADER_END_SHARE * judged}
            # Lines whose header ended on its fields alone (no level, component or dash that
            # most lines share): the log's common header fields may reach further.
            open_ended = [s.end == "fields" or s.end in rare for s in splits]
            cuts = [
                s.fields if s.end in rare and s.end != "fields" else c
                for s, c in zip(splits, cuts, strict=True)
            ]
            if ends["dash"] >= _HEADER_END_SHARE * judged > 0:
                # Most headers end at `program -`: a fields-only header that runs over a dash
                # (`360AP.exe` masks to a field) ends there too.
                for index, split in enumerate(splits):
                    if split.end == "fields":
                        cut = _dash_cut(self._tokens[index], cuts[index])
                        if cut != cuts[index]:
                            cuts[index] = cut
                            open_ended[index] = False  # its header ended at the dash
            fields = common_header_fields(
                [t for t, s in zip(self._tokens, splits, strict=True) if s is not _PIPE_HEADER],
                masker=self._masker,
            )
            if fields > 0:
                for index, tokens in enumerate(self._tokens):
                    if (
                        open_ended[index]
                        and cuts[index] < fields <= len(tokens) - 1
                        and is_field_token(tokens[fields - 1], masker=self._masker)
                    ):
                        cuts[index] = fields
        cap = self.settings.max_tokens
        rows: list[tuple[str, ...]] = []
        for tokens, cut in zip(self._tokens, cuts, strict=True):
            message = tokens[cut:]
            if len(message) > cap:
                message = [*message[: cap - 1], WILDCARD]
            rows.append(tuple(message))
        return rows

    def result(self) -> TemplateResult:
        """The templates and the template of every line added.

        Returns:
            The result (templates in order of first appearance).
        """
        rows = self._messages()
        by_length: dict[int, list[int]] = {}
        for index, tokens in enumerate(rows):
            by_length.setdefault(len(tokens), []).append(index)
        merged: dict[tuple[str, ...], _Group] = {}
        patterns = [
            pattern
            for members in by_length.values()
            for pattern in _pattern_groups(rows, members).values()
        ]
        shared = _shared_values(rows, patterns) if self.settings.shared_values_vary else None
        parts: list[list[int]] = []
        for pattern in patterns:
            parts.extend(_partition(rows, pattern, self.settings, shared))
        parts.sort(key=lambda p: p[0])
        for part in parts:
            tokens = _template_of(rows, part)
            key = _collapsed(tokens)
            group = merged.get(key)
            if group is None:
                merged[key] = _Group(tokens=tokens, members=part)
            else:
                group.members.extend(part)
                if len(tokens) == len(group.tokens):
                    group.tokens = _generalise(group.tokens, tokens)
        ordered = sorted(merged.values(), key=lambda g: min(g.members))
        templates: list[Template] = []
        assignments = [0] * len(rows)
        for tid, group in enumerate(ordered):
            members = sorted(group.members)
            templates.append(
                Template(
                    template_id=tid,
                    tokens=list(group.tokens),
                    count=len(members),
                    first_index=members[0],
                    last_index=members[-1],
                )
            )
            for index in members:
                assignments[index] = tid
        return TemplateResult(templates=templates, assignments=assignments)


@dataclass(slots=True)
class _Group:
    tokens: tuple[str, ...]
    members: list[int] = field(default_factory=list)


def _generalise(a: Sequence[str], b: Sequence[str]) -> tuple[str, ...]:
    return tuple(x if x == y else WILDCARD for x, y in zip(a, b, strict=True))


def _template_of(rows: Sequence[tuple[str, ...]], members: Sequence[int]) -> tuple[str, ...]:
    template = rows[members[0]]
    for index in members[1:]:
        row = rows[index]
        if row != template:
            template = _generalise(template, row)
    return template


def _collapsed(tokens: Sequence[str]) -> tuple[str, ...]:
    """The template with runs of `<*>` tokens collapsed into one (the merge key)."""
    out: list[str] = []
    for token in tokens:
        if token == WILDCARD and out and out[-1] == WILDCARD:
            continue
        out.append(token)
    return tuple(out)


def _shared_values(
    rows: Sequence[tuple[str, ...]], patterns: Sequence[Sequence[int]]
) -> frozenset[str]:
    """Tokens that occur in at least two pattern groups (entity names, not template words)."""
    seen: dict[str, int] = {}
    shared: set[str] = set()
    for gid, pattern in enumerate(patterns):
        for index in pattern:
            for value in rows[index]:
                first = seen.setdefault(value, gid)
                if first != gid:
                    shared.add(value)
    return frozenset(shared)


def _split_position(
    rows: Sequence[tuple[str, ...]],
    group: Sequence[int],
    variable: set[int],
    settings: TemplateSettings,
    shared: frozenset[str] | None = None,
) -> tuple[int, dict[str, list[int]]] | None:
    """The position that splits `group`, with its parts; marks variable positions."""
    most = settings.max_constant_values
    best: tuple[int, int, dict[str, list[int]]] | None = None
    width = len(rows[group[0]])
    for pos in range(width):
        if pos in variable:
            continue
        parts: dict[str, list[int]] = {}
        for index in group:
            value = rows[index][pos]
            part = parts.get(value)
            if part is None:
                if len(parts) == most:
                    parts = {}
                    break
                parts[value] = part = []
            part.append(index)
        if not parts:
            variable.add(pos)
            continue
        if len(parts) == 1:
            continue
        if any(WILDCARD in value for value in parts) and not _distinct_words(parts):
            variable.add(pos)  # a variable; distinct words with a number (`ee0`) still split
            continue
        if 0 < settings.min_identifier_lines <= len(parts) == len(group) and _sole_difference(
            rows, group, pos, variable
        ):
            variable.add(pos)  # the lines differ only in a value per line: an identifier
            continue
        if (
            shared is not None
            and len(parts) >= _SHARED_MIN_VALUES
            and all(value in shared for value in parts)
        ):
            variable.add(pos)  # every value recurs in other events: names, not template words
            continue
        rare = [v for v, p in parts.items() if len(p) < settings.min_value_lines]
        if rare:
            if not settings.split_off_frequent or len(rare) == len(parts):
                continue
            rest = [index for v in rare for index in parts.pop(v)]
            parts[WILDCARD] = sorted(rest)
        if best is None or len(parts) < best[0]:
            best = (len(parts), pos, parts)
    if best is None:
        return None
    return best[1], best[2]


def _sole_difference(
    rows: Sequence[tuple[str, ...]], group: Sequence[int], pos: int, variable: set[int]
) -> bool:
    """Whether the group's lines agree at every position but `pos` (and known variables)."""
    first = rows[group[0]]
    return all(
        rows[index][other] == first[other]
        for index in group
        for other in range(len(first))
        if other != pos and other not in variable
    )


_WRAPPING = "()[]{}<>,;:.'\""


def _dash_cut(tokens: Sequence[str], cut: int) -> int:
    """`cut`, or the index after the first dash inside the header `tokens[:cut]`.

    Example:
        ```python
        assert _dash_cut(["[<*>", "<*>]", "<*>", "-", "<*>", "open"], 5) == 4
        assert _dash_cut(["<*>", "<*>", "open"], 2) == 2
        ```
    """
    for index in range(1, min(cut, len(tokens) - 1)):
        if tokens[index] in _DASHES:
            return index + 1
    return cut


def _distinct_words(values: Iterable[str]) -> bool:
    """Whether every value is an ASCII word, some ending in one masked number, all words distinct.

    Such a position tells events apart by its words: network interfaces (`ee0`, `alt0`), a
    protocol or mode word next to a versioned one (`HTTPS` / `SOCKS5`). The same word with and
    without a number (`ee` / `ee<*>`), ids with separators (`rdd_<*>`) or several numbers stay
    variables. (Values are distinct, so words that all end in a masked number are distinct.)

    Example:
        ```python
        assert _distinct_words(["ee<*>", "alt<*>"]) and _distinct_words(["HTTPS", "SOCKS<*>"])
        assert not _distinct_words(["ee<*>", "<*>"])
        assert not _distinct_words(["rdd_<*>", "broadcast_<*>"])
        assert not _distinct_words(["ee", "ee<*>"]) and not _distinct_words(["HTTPS", "<*>"])
        assert not _distinct_words(["rdd_<*>", "block"])
        ```
    """
    words: set[str] = set()
    count = 0
    for value in values:
        word = value[: -len(WILDCARD)] if value.endswith(WILDCARD) else value
        if not word.isascii() or not word.isalpha():
            return False
        words.add(word)
        count += 1
    return len(words) == count


def _is_variable_token(token: str) -> bool:
    """A masked variable, alone or only wrapped in punctuation (`<*>`, `(<*>)`, `<*>,`)."""
    return WILDCARD in token and not token.replace(WILDCARD, "").strip(_WRAPPING)


def _pattern_groups(
    rows: Sequence[tuple[str, ...]], members: Sequence[int]
) -> dict[tuple[tuple[int, str], ...], list[int]]:
    """Lines of one length grouped by their longest common pattern (Brain's initial groups).

    A line's pattern is the set of its constant tokens that are equally frequent (at their
    position, over `members`), the largest such set, the most frequent on ties: the tokens
    of one template occur together, so they are equally frequent.
    """
    width = len(rows[members[0]])
    counts: list[dict[str, int]] = [{} for _ in range(width)]
    for index in members:
        for pos, value in enumerate(rows[index]):
            column = counts[pos]
            column[value] = column.get(value, 0) + 1
    variables = {value for column in counts for value in column if _is_variable_token(value)}
    groups: dict[tuple[tuple[int, str], ...], list[int]] = {}
    for index in members:
        row = rows[index]
        by_freq: dict[int, int] = {}
        freqs = [0] * width
        for pos, value in enumerate(row):
            if value in variables:
                continue
            freq = counts[pos][value]
            freqs[pos] = freq
            by_freq[freq] = by_freq.get(freq, 0) + 1
        if by_freq:
            chosen = max(by_freq.items(), key=lambda item: (item[1], -item[0]))[0]
            key = tuple((pos, row[pos]) for pos in range(width) if freqs[pos] == chosen)
        else:
            key = ()
        groups.setdefault(key, []).append(index)
    return groups


def _partition(
    rows: Sequence[tuple[str, ...]],
    members: list[int],
    settings: TemplateSettings,
    shared: frozenset[str] | None = None,
) -> list[list[int]]:
    """Split lines of one length into groups (step 3 of the module docstring)."""
    done: list[list[int]] = []
    stack: list[tuple[list[int], set[int]]] = [(members, set())]
    while stack:
        group, variable = stack.pop()
        if len(group) < 2:
            done.append(group)
            continue
        found = _split_position(rows, group, variable, settings, shared)
        if found is None:
            done.append(group)
            continue
        _, parts = found
        for part in parts.values():
            stack.append((part, set(variable)))
    return done


def mine_templates(
    lines: Iterable[str],
    *,
    strip_header: bool = False,
    settings: TemplateSettings = DEFAULT_SETTINGS,
) -> TemplateResult:
    """Group lines into templates.

    Args:
        lines: The lines.
        strip_header: Group on the message only (see `TemplateMiner`).
        settings: The miner's numbers.

    Returns:
        Templates (with counts) and the template of every line.

    Example:
        ```python
        r = mine_templates(["a 1", "a 2", "b"])
        assert [t.count for t in r.by_count()] == [2, 1]
        ```
    """
    miner = TemplateMiner(strip_header=strip_header, settings=settings)
    for line in lines:
        miner.add(line)
    return miner.result()
