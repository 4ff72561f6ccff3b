"""Log template mining: grouping repeated lines into templates with counts.

A Drain-style online miner (He et al., ICWS 2017) with three changes that matter on real logs:

1. **Masking inside tokens.** Variables are masked before grouping, also when they are glued to
   constant text: `uid=0` -> `uid=<*>`, `[19939]:` -> `[<*>]:`, `blk_-160899` -> `blk_<*>`,
   `/v2/54fadb41.../servers` -> `/v2/<*>/servers`, IPs, UUIDs, hex ids, numbers with units.
2. **Bucketing by length and the first constant token**, then the most similar cluster above
   a threshold (positions equal / positions), as in Drain; masked positions count as equal.
3. **A merge pass** at the end: clusters of the same length whose templates differ only where
   one of them already has a wildcard, or in at most one position out of many, are merged
   (Drain keeps them apart when they were created before the wildcard appeared).

`drain3` (the maintained Drain implementation) is measured next to this miner in
`benchmarks/log_templates.py`; this miner needs no configuration and no dependency.

Example:
    ```python
    from langchain_result_layer.views._templates import mine_templates

    result = mine_templates(["user 1 logged in", "user 22 logged in", "disk full"])
    assert result.assignments[0] == result.assignments[1] != result.assignments[2]
    ```
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "Template",
    "TemplateMiner",
    "TemplateResult",
    "mask_line",
    "message_offset",
    "mine_templates",
]

WILDCARD = "<*>"

_MASKS: tuple[re.Pattern[str], ...] = (
    # URLs and e-mail addresses.
    re.compile(r"[a-zA-Z][\w+.-]*://\S+"),
    re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
    # Dates and times written out (`Fri Jun 17 20:55:07 2005`, `2005-06-17T20:55:07Z`).
    re.compile(
        r"\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w*,? +)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct"
        r"|Nov|Dec)\w* +\d{1,2}(?:,? +\d{4})?(?: +\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?)?(?: +\d{4})?\b"
    ),
    re.compile(r"\b\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?\b"),
    # Host names that hold numbers (`host-10-2-3-4.example.net`).
    re.compile(
        r"(?<![\w.-])(?=[\w.-]*\d)[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,}(?![\w.(-])"
    ),
    # UUIDs, IPv4 (optional port), IPv6-ish, MAC addresses.
    re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?![\w.])"),
    re.compile(r"\b(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}\b"),
    # Hex ids: 0x..., or long runs of hex digits that hold a digit.
    re.compile(r"\b0[xX][0-9a-fA-F]+\b"),
    re.compile(
        r"(?<![0-9A-Za-z])(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{6,}(?![0-9A-Za-z])"
    ),
    # Numbers, also signed, decimal, with units or glued after letters (blk_-123, t761).
    re.compile(r"(?<![0-9])[-+]?\d+(?:[.,:]\d+)*(?:[eE][-+]?\d+)?(?:[a-zA-Z%µ]{1,3}\b)?"),
)
_MONTH_RE = re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)")
_MASK_RE = re.compile("|".join(f"(?:{p.pattern})" for p in _MASKS))
_TOKEN_RE = re.compile(r"[^\s|]+")
_WILD_RUN_RE = re.compile(r"(?:<\*>)+")
_STAMPISH_RE = re.compile(
    r"""^(?:
        [\[(]*<\*>(?:[-:.,/T_]*<\*>)*[\]):,]*
      | (?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w*,?
      | - | -- | \|
    )$""",
    re.VERBOSE,
)
_LEVEL_TOKEN_RE = re.compile(
    r"^[\[<(]?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|SEVERE|CRITICAL|FATAL|CRIT|ALERT"
    r"|EMERG|FINE|FINER|FINEST|CONFIG|[VDIWEF])[\]>)]?:?$"
)
_COMPONENT_RE = re.compile(r"^[A-Za-z_][\w.$()/@<*>-]*(?:\[[^\]\s]*\])?:$")
_DOTTED_RE = re.compile(r"^[A-Za-z_][\w$-]*(?:\.[\w$<*>-]+)+$")
_MAX_HEADER_TOKENS = 14
_MAX_HEADER_TOKEN_CHARS = 80
_SPACE_TOKEN_RE = re.compile(r"\S+")
_SHORT_TOKENS = 3


def mask_line(line: str) -> str:
    """Mask the variable parts of a line (numbers, ids, addresses, dates) with `<*>`.

    Args:
        line: A log line or message.

    Returns:
        The masked line.

    Example:
        ```python
        assert mask_line("uid=0 rhost=10.0.0.1 took 35ms") == "uid=<*> rhost=<*> took <*>"
        ```
    """
    # Only dates and addresses can be masked without a digit; they need a month, `@` or `://`.
    if (
        not any(ch.isdigit() for ch in line)
        and "@" not in line
        and "://" not in line
        and not _MONTH_RE.search(line)
    ):
        return line
    return _WILD_RUN_RE.sub(WILDCARD, _MASK_RE.sub(WILDCARD, line))


def _tokens(line: str) -> list[str]:
    return _TOKEN_RE.findall(mask_line(line))


def _ids_token(token: str) -> bool:
    """A token made of several masked parts (`R<*>-M<*>-N<*>`): a node or host id."""
    if token.count(WILDCARD) < 2:
        return False
    return ":" not in token[: token.index(WILDCARD)]


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


def _split_header(tokens: Sequence[str]) -> int:
    """How many leading tokens are a log record's header (time, host, level, component).

    Recognises timestamps and other masked fields, month and day names, a level keyword
    (then the component after it, a bracketed context and `-` separators), or a component
    such as `sshd[123]:`; up to two unknown words (host, subsystem) are allowed before a
    level or a component.
    """
    n = len(tokens)
    cut = 0
    i = 0
    pending = 0
    limit = min(n - 1, _MAX_HEADER_TOKENS)
    while i < limit:
        t = tokens[i]
        if len(t) > _MAX_HEADER_TOKEN_CHARS:
            break
        if _STAMPISH_RE.match(t) or _ids_token(t):
            i += 1
            if not pending:
                cut = i
            continue
        if _LEVEL_TOKEN_RE.match(t) and (i > 0 or n > 2):
            i += 1
            if i < limit and (_COMPONENT_RE.match(tokens[i]) or _DOTTED_RE.match(tokens[i])):
                i += 1
            i = _skip_bracket(tokens, i)
            while i < limit and tokens[i] in ("-", "--", ":"):
                i += 1
            return min(i, n - 1)
        if t.startswith("[") and i < limit:
            j = _skip_bracket(tokens, i)
            if j > i:
                i = j
                if not pending:
                    cut = i
                continue
        if _COMPONENT_RE.match(t) and i > 0:
            i += 1
            while i < limit and tokens[i] in ("-", "--"):
                i += 1
            return min(i, n - 1)
        if pending < 2:
            pending += 1
            i += 1
            continue
        break
    return cut


def _pipe_header(line: str) -> int:
    """Offset after the last `|` field separator of a `a|b|c|message` record, else 0."""
    head = line[:120]
    if head.count("|") >= 2:
        return head.rfind("|") + 1
    return 0


def message_offset(line: str) -> int:
    """Character offset where a log record's message starts (0 when there is no header).

    Args:
        line: One raw log line.

    Returns:
        The offset of the message within `line`.

    Example:
        ```python
        line = "2015-07-29 17:41:44,747 - INFO  [main:Quorum@774] - Notification time out: 3200"
        assert line[message_offset(line):] == "Notification time out: 3200"
        ```
    """
    pipe = _pipe_header(line)
    if pipe:
        return pipe
    spans = [m.span() for m in _SPACE_TOKEN_RE.finditer(line, 0, 400)][: _MAX_HEADER_TOKENS + 2]
    if len(spans) < 2:
        return 0
    masked = [mask_line(line[a:b]) for a, b in spans]
    k = _split_header(masked)
    if k <= 0:
        return 0
    return spans[k][0] if k < len(spans) else len(line)


@dataclass(slots=True)
class Template:
    """One template: its tokens, how many lines it covers and where it first appears.

    Attributes:
        template_id: Index of the template.
        tokens: Template tokens (`<*>` marks a variable).
        count: Lines that belong to it.
        first_index: 0-based index of its first line in the input.
        last_index: 0-based index of its last line.
    """

    template_id: int
    tokens: list[str]
    count: int = 0
    first_index: int = 0
    last_index: int = 0

    @property
    def text(self) -> str:
        """The template as text."""
        return " ".join(self.tokens)


@dataclass(slots=True)
class TemplateResult:
    """Templates and the template of every input line.

    Attributes:
        templates: Templates, by id.
        assignments: Template id of each input line (in input order).
    """

    templates: list[Template]
    assignments: list[int]

    def by_count(self) -> list[Template]:
        """Templates, most frequent first (first appearance breaks ties)."""
        return sorted(self.templates, key=lambda t: (-t.count, t.first_index))


@dataclass(slots=True)
class _Cluster:
    tokens: list[str]
    members: list[int] = field(default_factory=list)
    lines: list[list[str]] = field(default_factory=list)


def _similarity(template: Sequence[str], tokens: Sequence[str]) -> tuple[float, int]:
    """Share of positions where the line matches the template.

    As in drain3, a template wildcard facing a constant is not a match; a masked variable
    facing a wildcard is.
    """
    same = 0
    wild = 0
    for a, b in zip(template, tokens, strict=False):
        if a == b:
            same += 1
        elif a == WILDCARD:
            wild += 1
    return same / max(1, len(tokens)), wild


def _generalise(template: list[str], tokens: Sequence[str]) -> list[str]:
    return [a if a == b else WILDCARD for a, b in zip(template, tokens, strict=False)]


class TemplateMiner:
    """An online template miner (see the module docstring).

    Args:
        similarity: Fraction of equal positions for a line to join a cluster.
        max_clusters_per_bucket: Bound on the clusters compared per line (the oldest are
            still kept; new lines only join the most recent ones beyond the bound).
        strip_header: Leave out each line's header (timestamp, level, pid, thread: the
            leading tokens that are masked, bracketed, level names or month names) and
            group on the message only.

    Example:
        ```python
        miner = TemplateMiner()
        a = miner.add("connection from 10.0.0.1 closed")
        b = miner.add("connection from 10.0.0.2 closed")
        assert a == b
        ```
    """

    def __init__(
        self,
        *,
        similarity: float = 0.5,
        max_clusters_per_bucket: int = 400,
        strip_header: bool = False,
    ) -> None:
        self.similarity = similarity
        self.strip_header = strip_header
        self.max_clusters_per_bucket = max_clusters_per_bucket
        self._clusters: list[_Cluster] = []
        self._buckets: dict[tuple[int, str], list[int]] = {}
        self._count = 0

    def _bucket_key(self, tokens: Sequence[str]) -> tuple[int, str]:
        first = tokens[0] if tokens else ""
        if WILDCARD in first and not _WORD_CHAR_RE.search(first.replace(WILDCARD, "")):
            first = WILDCARD  # only variables and punctuation
        return len(tokens), first

    def _threshold(self, n: int) -> float:
        # Short messages differ in one word when they mean different things
        # (`action SCREEN_ON` / `action SCREEN_OFF`): they must match in full.
        return 1.0 if n <= _SHORT_TOKENS else self.similarity

    def add(self, line: str) -> int:
        """Add one line; returns its cluster id (stable; merged later by `result`).

        Args:
            line: The line.

        Returns:
            The cluster id.
        """
        index = self._count
        self._count += 1
        if self.strip_header:
            pipe = _pipe_header(line)
            if pipe:
                tokens = _tokens(line[pipe:])
            else:
                tokens = _tokens(line)
                tokens = tokens[_split_header(tokens) :]
        else:
            tokens = _tokens(line)
        key = self._bucket_key(tokens)
        bucket = self._buckets.setdefault(key, [])
        best: tuple[float, int, int] | None = None
        threshold = self._threshold(len(tokens))
        for cid in bucket[-self.max_clusters_per_bucket :]:
            cluster = self._clusters[cid]
            sim, wild = _similarity(cluster.tokens, tokens)
            if sim >= threshold - 1e-9 and (best is None or (sim, -wild) > (best[0], -best[1])):
                best = (sim, wild, cid)
        if best is None:
            cid = len(self._clusters)
            self._clusters.append(_Cluster(tokens=list(tokens), members=[index], lines=[tokens]))
            bucket.append(cid)
            return cid
        cluster = self._clusters[best[2]]
        cluster.tokens = _generalise(cluster.tokens, tokens)
        cluster.members.append(index)
        cluster.lines.append(tokens)
        return best[2]

    def _split(self) -> None:
        """Split clusters on a wildcard position that holds a few frequent words.

        Variables take many values (user names, ids); a position with two to five distinct
        words, each on at least 5% of the cluster's lines, is a constant that tells
        templates apart (`Instance spawned` / `Instance destroyed`, `GET` / `POST`).
        """
        out: list[_Cluster] = []
        for cluster in self._clusters:
            out.extend(_split_cluster(cluster))
        self._clusters = out

    def _merge(self) -> dict[int, int]:
        """Merge clusters of a bucket whose templates are compatible; returns id -> root."""
        parent = {i: i for i in range(len(self._clusters))}

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        # Candidates share a length and a first token (or have a variable first token).
        groups: dict[tuple[int, str], list[int]] = {}
        for cid, cluster in enumerate(self._clusters):
            first = cluster.tokens[0] if cluster.tokens else ""
            groups.setdefault((len(cluster.tokens), first), []).append(cid)
        wild: dict[int, list[int]] = {}
        for (length, first), ids in groups.items():
            if first == WILDCARD:
                wild.setdefault(length, []).extend(ids)
        for (length, first), ids in groups.items():
            candidates = ids if first == WILDCARD else ids + wild.get(length, [])
            if len(candidates) < 2 or len(candidates) > _MERGE_MAX_CANDIDATES:
                continue
            for i, a in enumerate(candidates):
                ta = self._clusters[a].tokens
                for b in candidates[i + 1 :]:
                    if root(a) == root(b):
                        continue
                    if _compatible(ta, self._clusters[b].tokens):
                        parent[root(b)] = root(a)
        return {cid: root(cid) for cid in parent}

    def result(self) -> TemplateResult:
        """The final templates and assignments (after the split and merge passes).

        Returns:
            The result.
        """
        self._split()
        roots = self._merge()
        order: dict[int, int] = {}
        templates: list[Template] = []
        assignments = [0] * self._count
        merged_tokens: dict[int, list[str]] = {}
        for cid, cluster in enumerate(self._clusters):
            r = roots[cid]
            if r in merged_tokens:
                merged_tokens[r] = _generalise(merged_tokens[r], cluster.tokens)
            else:
                merged_tokens[r] = list(cluster.tokens)
        for cid, cluster in enumerate(self._clusters):
            r = roots[cid]
            if r not in order:
                order[r] = len(templates)
                templates.append(Template(template_id=order[r], tokens=merged_tokens[r]))
            template = templates[order[r]]
            for index in cluster.members:
                assignments[index] = template.template_id
        for index, tid in enumerate(assignments):
            template = templates[tid]
            if template.count == 0:
                template.first_index = index
            template.count += 1
            template.last_index = index
        return TemplateResult(templates=templates, assignments=assignments)


_MERGE_MAX_CANDIDATES = 600
_SPLIT_MAX_VALUES = 5
_SPLIT_MIN_SHARE = 0.02
_WORD_CHAR_RE = re.compile(r"[A-Za-z0-9]")


def _constant_like(token: str) -> bool:
    return WILDCARD not in token and not any(ch.isdigit() for ch in token)


def _split_cluster(cluster: _Cluster) -> list[_Cluster]:
    n = len(cluster.members)
    if n < 4:
        return [cluster]
    for pos, token in enumerate(cluster.tokens):
        if token != WILDCARD:
            continue
        values: dict[str, int] = {}
        for line in cluster.lines:
            value = line[pos]
            if not _constant_like(value):
                values = {}
                break
            values[value] = values.get(value, 0) + 1
            if len(values) > _SPLIT_MAX_VALUES:
                break
        if not 2 <= len(values) <= _SPLIT_MAX_VALUES:
            continue
        if min(values.values()) < max(3, _SPLIT_MIN_SHARE * n):
            continue
        parts: dict[str, _Cluster] = {}
        for member, line in zip(cluster.members, cluster.lines, strict=False):
            part = parts.get(line[pos])
            if part is None:
                parts[line[pos]] = _Cluster(tokens=list(line), members=[member], lines=[line])
            else:
                part.tokens = _generalise(part.tokens, line)
                part.members.append(member)
                part.lines.append(line)
        result: list[_Cluster] = []
        for part in parts.values():
            result.extend(_split_cluster(part))
        return result
    return [cluster]


def _compatible(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two templates of the same length describe the same lines.

    Most positions must be equal constants; the rest a wildcard on one side, with at most one
    hard difference when at least five constant positions agree.
    """
    hard = 0
    constant = 0
    for x, y in zip(a, b, strict=False):
        if x == y:
            if x != WILDCARD:
                constant += 1
            continue
        if WILDCARD in (x, y):
            continue
        hard += 1
        if hard > 1:
            return False
    if constant * 2 < len(a):
        return False
    return hard == 0 or constant >= 5


def mine_templates(
    lines: Iterable[str], *, similarity: float = 0.5, strip_header: bool = False
) -> TemplateResult:
    """Group lines into templates.

    Args:
        lines: The lines (messages).
        similarity: Fraction of equal positions for a line to join a cluster.
        strip_header: Group on the message only (see `TemplateMiner`).

    Returns:
        Templates (with counts) and the template of every line.

    Example:
        ```python
        r = mine_templates(["a 1", "a 2", "b"])
        assert [t.count for t in r.by_count()] == [2, 1]
        ```
    """
    miner = TemplateMiner(similarity=similarity, strip_header=strip_header)
    for line in lines:
        miner.add(line)
    return miner.result()
