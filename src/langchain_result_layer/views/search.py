r"""The search view: how many hits, where, the top hits, and a reference to the rest.

Recognised output:

- `path:line:text` and `path:line:col:text` (grep -n, ripgrep, git grep, compilers), with
  grep's `path-line-text` context lines and `--` separators;
- ripgrep/ag heading mode: a path line, then `line:text` (`line-text` for context) lines;
- per-file match lines of agent tools (`Line 12: text` under a file header) and counts
  headers such as `Found 12 matches for "x" in /repo`;
- plain path lists (`find`, `fd`, `git ls-files`): every line is a hit on a file.

The top hits are chosen for coverage: hits are taken in the order the tool printed them, but
each further hit from the same directory counts for less, so one directory with hundreds of
matches does not hide the others. The hits shown are printed exactly as the tool printed them.

Example:
    ```python
    from langchain_result_layer.views.search import parse_hits

    hits = parse_hits("src/a.py:3:import os\nsrc/b.py:10:5:x = 1\n")
    assert [(h.path, h.line) for h in hits.hits] == [("src/a.py", 3), ("src/b.py", 10)]
    ```
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import Fence, plural
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.views import _layout
from langchain_result_layer.views._line_record import LineText, line_ends
from langchain_result_layer.views._lines import range_phrase
from langchain_result_layer.views.base import Prepared, Rendered, ResultViewBuilder, ViewContext
from langchain_result_layer.views.text import TextView

__all__ = ["SearchHits", "SearchView", "parse_hits"]

_SNIFF_CHARS = 32_000
"""Characters of the start read to decide whether a text is a search output."""
_STRIPES = (0.25, 0.5, 0.75, 1.0)
"""Where, as shares of its length, a text longer than `_SNIFF_CHARS` is read again: a search
output keeps its shape to the end, a build log that starts with a listing does not."""
_STRIPE_CHARS = 4_000
"""Characters read at each stripe (whole lines only)."""
_STRIPE_SEARCH_SHARE = 0.3
"""Share of a stripe's lines that must have a search shape (hit, context, `--`, agent line or
bare path); lower than the start's share, since hits of a real search vary in form."""
_LINE_CHARS = 300
_TOP_FILES = 15
_OTHER_LINES = 12
"""Lines that are not hits shown whatever the budget (they break the output's structure: rare
by nature)."""
_OTHER_LINES_MAX = 60
"""Most lines that are not hits shown, when they fit in `_OTHER_SHARE` of the budget."""
_OTHER_PER_SHAPE = 3
"""Most lines that are not hits shown of one shape (`_line_shape`): pylint's `*** Module x`
printed for each of 90 files is the output's structure, not 90 rare lines."""
_OTHER_SHARE = 0.35
"""Share of the token budget that lines beyond the first `_OTHER_LINES` may take: a listing
after a failed step keeps the step's error block above it, not only its last lines."""
_OTHER_CHARS = 200
"""Characters shown of such a line (its head; the rest is fetched by line range)."""
_DOMINANT_SHARE = 0.5
"""A hit shape this common makes the hits of rare shapes stand out (type checkers' notes)."""
_RARE_HITS = 8
"""Most hits of a rare shape moved to the front of the showing order."""
_SHAPE_SAMPLE = 256
"""Hits whose shapes are read first: without a dominant shape among them, none is looked for."""
_CATEGORY_WORDS = 6
"""Most distinct first words of the hits for that word to be read as a category (severity)."""
_TEXT_FALLBACK = TextView()

# A path holds a letter and does not end in a digit (so `2015-07-29 17:41:44` and
# `20171223-22:15:29` are not hits).
_PATH = r"(?=[^\s:]*[A-Za-z])(?:[A-Za-z]:)?[^\s:\x00]*[A-Za-z_\]\)]"
_HIT_RE = re.compile(rf"^(?P<path>{_PATH}):(?P<line>\d+):(?:(?P<col>\d+):)?(?P<text>.*)$")
_CONTEXT_RE = re.compile(rf"^(?P<path>{_PATH})-(?P<line>\d+)-(?P<text>.*)$")
_HEADING_HIT_RE = re.compile(r"^(?P<line>\d+)(?::(?P<col>\d+))?[:](?P<text>.*)$")
_HEADING_CTX_RE = re.compile(r"^(?P<line>\d+)-(?P<text>.*)$")
_AGENT_LINE_RE = re.compile(r"^Line (?P<line>\d+):(?P<text>.*)$")
_PATH_ONLY_RE = re.compile(
    r"^(?:\./|/|[A-Za-z]:\\|[\w.@-]+/)[^\s:]*[^\s:/]$|^[\w.-]+\.\w{1,8}$"
    r"|^(?:\./|/)?(?:[\w.@-]+/)+$"  # a directory in a listing (`tar -cv`, `ls -p`): `pkg/R/`
)
_COUNT_HEADER_RE = re.compile(
    r"^(?:Found|Showing|No) .{0,200}?\b(?:match(?:es)?|results?|files?|hits?)\b.*$", re.IGNORECASE
)
_FILE_HEADER_RE = re.compile(
    r"^\[?File:?\]?\s*(?P<path>\S.*?)(?:\s+\((?P<count>\d+) match(?:es)?\))?$"
)
_AGENT_FILE_COUNT_RE = re.compile(r"^(?P<path>\S.*?) \((?P<count>\d+) match(?:es)?\)$")


@dataclass(frozen=True, slots=True)
class Hit:
    """One search hit.

    Example:
        ```python
        Hit(index=1, path="src/a.py", line=3, text="src/a.py:3:import os")
        ```
    """

    index: int
    """1-based line of the output that holds the hit."""
    path: str
    """The file."""
    line: int | None
    """Line in the file (`None` for path-only results)."""
    text: str
    """The hit line exactly as the tool printed it."""


@dataclass(slots=True)
class SearchHits:
    r"""Hits recognised in a search output.

    Example:
        ```python
        hits = parse_hits("a.py:1:x\nb.py:2:y\n")
        assert len(hits.hits) == 2
        ```
    """

    hits: list[Hit] = field(default_factory=list)
    """Hits in output order."""
    style: str = "grep"
    """`grep`, `heading`, `agent`, or `paths`."""
    lines: int = 0
    """Lines of the output."""
    headers: list[str] = field(default_factory=list)
    """Output lines that state counts (`Found 12 matches ...`)."""
    context_lines: int = 0
    """Context lines (not hits)."""
    stated_counts: dict[str, int] = field(default_factory=dict)
    """Per-file counts the tool stated itself."""
    other: list[int] = field(default_factory=list)
    """1-based output lines that are none of the above: lines that break the output's
    structure (a tool's own error, its closing summary), shown before further hits."""


def _split(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "" and text.endswith("\n"):
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def parse_hits(text: str) -> SearchHits:
    r"""Recognise the hits in a search tool's output.

    Args:
        text: The output.

    Returns:
        The hits (possibly none) and what else was seen.

    Example:
        ```python
        assert parse_hits("./a.py\n./b/c.py\n./d.py\n").style == "paths"  # three or more
        ```
    """
    lines = _split(text)
    result = SearchHits(lines=len(lines))
    grep_like = 0
    paths_only = 0
    for ln in lines[:400]:
        if _HIT_RE.match(ln) or _CONTEXT_RE.match(ln):
            grep_like += 1
        elif _PATH_ONLY_RE.match(ln.strip()):
            paths_only += 1
    current: str | None = None
    for index, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped or stripped == "--":
            current = None if result.style == "heading" and not stripped else current
            continue
        if _COUNT_HEADER_RE.match(stripped):
            result.headers.append(stripped)
            continue
        match = _HIT_RE.match(line) if grep_like else None
        if match is not None:
            result.hits.append(Hit(index, match.group("path"), int(match.group("line")), line))
            continue
        if grep_like and _CONTEXT_RE.match(line):
            result.context_lines += 1
            continue
        agent = _AGENT_LINE_RE.match(stripped)
        if agent is not None:
            result.style = "agent"
            result.hits.append(Hit(index, current or "", int(agent.group("line")), line))
            continue
        if current is not None and result.style in ("heading", "grep"):
            heading = _HEADING_HIT_RE.match(stripped)
            if heading is not None:
                result.style = "heading"
                result.hits.append(Hit(index, current, int(heading.group("line")), line))
                continue
            if _HEADING_CTX_RE.match(stripped):
                result.context_lines += 1
                continue
        counted = _AGENT_FILE_COUNT_RE.match(stripped)
        if counted is not None:
            current = counted.group("path")
            result.stated_counts[current] = int(counted.group("count"))
            continue
        header = _FILE_HEADER_RE.match(stripped) if stripped.startswith(("[File", "File")) else None
        if header is not None:
            current = header.group("path")
            continue
        if _PATH_ONLY_RE.match(stripped):
            if paths_only >= max(3, grep_like):
                result.style = "paths"
                result.hits.append(Hit(index, stripped, None, line))
            else:
                current = stripped
            continue
        result.other.append(index)
    if result.style == "grep" and not grep_like and result.hits:
        result.style = "heading"
    return result


def _directory(path: str) -> str:
    parts = [p for p in re.split(r"[/\\]", path) if p not in ("", ".")]
    return "/".join(parts[:-1][:2]) or "."


def _shape(hit: Hit, words: int = 2) -> str:
    """What a hit says, without where: its first `words` words after the location, no digits."""
    text = hit.text
    if hit.line is not None:
        marker = f":{hit.line}"
        cut = text.find(marker)
        text = text[cut + len(marker) :] if cut >= 0 else text
    return " ".join(re.findall(r"[^\W\d_]+", text.lower())[:words])


def _dominated_shapes(hits: list[Hit]) -> list[str] | None:
    """Every hit's shape, at the first granularity where shapes are few, else `None`.

    Two words first: one shape holds `_DOMINANT_SHARE` of the hits. Then the first word
    alone: at most `_CATEGORY_WORDS` distinct first words (a severity field, as in `warning`,
    `note` and one `error`). A code search whose hits all differ has neither.
    """

    def few(shapes: list[str], words: int) -> bool:
        counts = Counter(shapes)
        ((_, top),) = counts.most_common(1)
        dominant = top >= _DOMINANT_SHARE * len(shapes)
        return dominant or (words == 1 and len(counts) <= _CATEGORY_WORDS)

    for words in (2, 1):
        # Decided on the sample first: the usual code search costs one pass of it.
        if not few([_shape(h, words) for h in hits[:_SHAPE_SAMPLE]], words):
            continue
        shapes = [_shape(h, words) for h in hits]
        if few(shapes, words):
            return shapes
    return None


def _rare_first(hits: list[Hit], order: list[int]) -> list[int]:
    """The showing order with the few hits of a rare shape first, when one shape dominates.

    Vocabulary-free: 600 `note:` lines of a type checker and one `error:` line make the
    error's shape rare; a code search whose hits all differ has no dominant shape and keeps
    its order.
    """
    if len(hits) < 2 * _RARE_HITS:
        return order
    shapes = _dominated_shapes(hits)
    if shapes is None:
        return order
    counts = Counter(shapes)
    limit = max(1, len(hits) // 100)
    rare = [i for i in order if counts[shapes[i]] <= limit][:_RARE_HITS]
    if not rare or len(rare) == len(order):
        return order
    chosen = set(rare)
    return rare + [i for i in order if i not in chosen]


def _other_order(parsed: SearchHits) -> list[int]:
    """The non-hit lines to show, best first: among the hits, then after them, then before."""
    if not parsed.hits:
        return []
    first, last = parsed.hits[0].index, parsed.hits[-1].index
    inside = [i for i in parsed.other if first < i < last]
    after = [i for i in parsed.other if i > last]
    before = [i for i in parsed.other if i < first]
    return inside + after[::-1] + before[::-1]


def _line_shape(text: str) -> str:
    """A line's first three words, lower-cased, without digits (a header printed per file)."""
    return " ".join(re.findall(r"[^\W\d_]+", text.lower())[:3])


def _other_fit(texts: list[str], ctx: ViewContext) -> int:
    """How many of the non-hit lines (best first) to offer.

    `_OTHER_LINES` always, and more while they fit in `_OTHER_SHARE` of the token budget.
    """
    room = _OTHER_SHARE * ctx.budget.tokens
    used = 0
    for n, text in enumerate(texts):
        used += ctx.counter.count(text) + 1
        if n >= _OTHER_LINES and used > room:
            return n
    return len(texts)


def _coverage_order(hits: list[Hit]) -> list[int]:
    """Hit indexes in output order with diminishing returns per directory."""
    groups: dict[str, list[int]] = {}
    for i, hit in enumerate(hits):
        groups.setdefault(_directory(hit.path), []).append(i)
    heap: list[tuple[float, int, str, int]] = []
    for key, members in groups.items():
        heap.append((0.0 + members[0] / max(1, len(hits)), members[0], key, 0))
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        _, index, key, taken = heapq.heappop(heap)
        order.append(index)
        members = groups[key]
        if taken + 1 < len(members):
            nxt = members[taken + 1]
            cost = (taken + 1) * 0.15 + nxt / max(1, len(hits))
            heapq.heappush(heap, (cost, nxt, key, taken + 1))
    return _rare_first(hits, order)


@dataclass(slots=True)
class _SearchData:
    parsed: SearchHits
    order: list[int]
    text: LineText
    """The output, measured once."""
    other: list[tuple[int, str]]
    """Non-hit lines to show (output line, text as printed), best first."""


def _head_score(lines: list[str]) -> float:
    """The search sniff's score of the start's non-blank lines (0.0: not a search)."""
    hits = sum(1 for ln in lines if _HIT_RE.match(ln) or _CONTEXT_RE.match(ln) or ln == "--")
    if hits >= 0.6 * len(lines):
        return 0.85
    agent = sum(1 for ln in lines if _AGENT_LINE_RE.match(ln.strip()))
    if agent >= 0.5 * len(lines):
        return 0.8
    paths = sum(1 for ln in lines if _PATH_ONLY_RE.match(ln.strip()))
    counted = any(_COUNT_HEADER_RE.match(ln.strip()) for ln in lines[:3])
    if paths >= 0.8 * len(lines) or (counted and paths >= 0.6 * len(lines)):
        return 0.7
    return 0.0


def _search_shaped(line: str) -> bool:
    """Whether one line has a shape of search output (vocabulary-free: shape only)."""
    stripped = line.strip()
    return bool(
        _HIT_RE.match(line)
        or _CONTEXT_RE.match(line)
        or stripped == "--"
        or _AGENT_LINE_RE.match(stripped)
        or _PATH_ONLY_RE.match(stripped)
    )


def _shaped_throughout(text: str) -> bool:
    """Whether a long text keeps the shape of search output at every stripe.

    A stripe of `_STRIPE_CHARS` ends at each share of `_STRIPES` of the text; only its whole
    lines count, and a stripe with no whole line (one huge line) does not veto.
    """
    size = len(text)
    for share in _STRIPES:
        end = int(size * share)
        start = max(0, end - _STRIPE_CHARS)
        stripe = text[start:end]
        lines = stripe.split("\n")
        if start > 0:
            lines = lines[1:]  # the first piece may be the end of a longer line
        if end < size:
            lines = lines[:-1]  # and the last the start of one
        lines = [ln for ln in lines if ln.strip()]
        if not lines:
            continue
        shaped = sum(1 for ln in lines if _search_shaped(ln))
        if shaped < _STRIPE_SEARCH_SHARE * len(lines):
            return False
    return True


class SearchView(ResultViewBuilder):
    r"""Total hits, hits per file, the top hits and a reference to the rest.

    Example:
        ```python
        from langchain_result_layer.views import choose_view

        out = "".join(f"src/m{i % 7}.py:{i}:    value = {i}\n" for i in range(3000))
        assert choose_view(out).kind == "search"
        ```
    """

    kind: ClassVar[str] = "search"
    sniff_ceiling = 0.85

    def sniff(self, payload: object) -> float:
        """Most lines of the start are hits (`path:line:`) or paths.

        A text longer than `_SNIFF_CHARS` must also keep that shape at stripes through to its
        end (`_shaped_throughout`).
        """
        if not isinstance(payload, str):
            return 0.0
        head = payload[:_SNIFF_CHARS]
        lines = [ln for ln in head.split("\n")[:300] if ln.strip()]
        if len(payload) > _SNIFF_CHARS:
            lines = lines[:-1]
        if len(lines) < 5:
            return 0.0
        score = _head_score(lines)
        if score and len(payload) > _SNIFF_CHARS and not _shaped_throughout(payload):
            return 0.0  # read only when the start says search: a log's sniff pays nothing
        return score

    def prepare(self, payload: object) -> Prepared:
        """Keep text as it is; parse the hits once."""
        prepared = _TEXT_FALLBACK.prepare(payload)
        raw = prepared.raw_text
        parsed = parse_hits(raw)
        ends = line_ends(raw)
        # The few lines shown are sliced by their ends (no second split of the whole text);
        # a shape printed again and again (a header per file) is structure, not a rare line.
        other: list[tuple[int, str]] = []
        per_shape: Counter[str] = Counter()
        for i in _other_order(parsed):
            text = raw[ends[i - 2] if i >= 2 else 0 : ends[i - 1]].rstrip("\r\n")
            shape = _line_shape(text)
            if per_shape[shape] < _OTHER_PER_SHAPE:
                per_shape[shape] += 1
                other.append((i, text))
                if len(other) == _OTHER_LINES_MAX:
                    break
        prepared.data = _SearchData(
            parsed=parsed,
            order=_coverage_order(parsed.hits),
            text=LineText.of(raw, lines=parsed.lines, ends=ends),
            other=other,
        )
        return prepared

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """Counts and files first, then as many top hits as fit."""
        raw = prepared.raw_text
        data = prepared.data
        if not isinstance(data, _SearchData) or not data.parsed.hits:
            return _TEXT_FALLBACK.render(
                prepared if isinstance(prepared.raw, str) else _TEXT_FALLBACK.prepare(raw), ctx
            )
        parsed = data.parsed
        per_file = Counter(h.path for h in parsed.hits)
        if parsed.style == "paths":
            per_file = Counter(_directory(h.path) for h in parsed.hits)
        top_files = per_file.most_common(_TOP_FILES)
        hit_texts = [_layout.clip(clean_for_display(h.text), _LINE_CHARS)[0] for h in parsed.hits]
        other_texts = [_layout.clip(clean_for_display(t), _OTHER_CHARS)[0] for _, t in data.other]
        other_texts = other_texts[: _other_fit(other_texts, ctx)]
        file_lines = [f"{n:,} {clean_for_display(p)}" for p, n in top_files]
        fence = _layout.equal_cost_fence(
            ctx.counter, hit_texts, other_texts, file_lines, parsed.headers
        )
        n_other = len(other_texts)
        n_files = len(file_lines)
        n_hits = len(parsed.hits)

        def build(level: int) -> tuple[ResultView, str]:
            others = min(level, n_other)
            files = min(level - others, n_files)
            chosen = max(0, level - others - n_files)
            view = self._view(
                ctx,
                data,
                raw,
                top_files=top_files[:files],
                n_hits=chosen,
                hit_texts=hit_texts,
                others=list(zip(data.other[:others], other_texts, strict=False)),
                n_groups=len(per_file),
            )
            return view, self._compose(view, ctx, fence).render(fence)

        return _layout.render_largest(
            build,
            ctx,
            levels=n_other + n_files + n_hits,
            facts=plural(n_hits, "hit"),
            guess=n_other + n_files + min(n_hits, 40),
        )

    def _view(
        self,
        ctx: ViewContext,
        data: _SearchData,
        raw: str,
        *,
        top_files: list[tuple[str, int]],
        n_hits: int,
        hit_texts: list[str],
        others: list[tuple[tuple[int, str], str]],
        n_groups: int,
    ) -> ResultView:
        parsed = data.parsed
        picked = sorted(data.order[:n_hits])
        items: list[dict[str, Any]] = [
            {"type": "file" if parsed.style != "paths" else "directory", "path": p, "hits": n}
            for p, n in top_files
        ]
        for i in picked:
            hit = parsed.hits[i]
            items.append(
                {
                    "type": "hit",
                    "output_line": hit.index,
                    "path": hit.path,
                    "line": hit.line,
                    "text": hit_texts[i],
                }
            )
        for (line, _), text in others:
            items.append({"type": "line", "output_line": line, "text": text})
        shown_lines = {parsed.hits[i].index for i in picked} | {ln for (ln, _), _ in others}
        group_phrase = (
            plural(n_groups, "directory", "directories")
            if parsed.style == "paths"
            else plural(n_groups, "file")
        )
        summary: dict[str, Any] = {
            "hits": len(parsed.hits),
            "style": parsed.style,
            "files": n_groups if parsed.style != "paths" else len({h.path for h in parsed.hits}),
            "directories": n_groups if parsed.style == "paths" else None,
            "output_lines": parsed.lines,
            "context_lines": parsed.context_lines,
            "stated": parsed.headers[:3],
            "hits_shown": len(picked),
            "headline": f"search: {plural(len(parsed.hits), 'hit')} in {group_phrase}",
        }
        return data.text.view(
            self.kind,
            summary=summary,
            items=items,
            total=len(parsed.hits),
            unit="hits",
            shown=len(picked),
            shown_lines=shown_lines,
            base=ctx.reference,
        )

    def _compose(self, view: ResultView, ctx: ViewContext, fence: Fence) -> _layout.Layout:
        s = view.summary
        paths = s["style"] == "paths"
        unit = "path" if paths else "hit"
        facts = f"{plural(int(s['hits']), unit)}"
        if paths:
            facts += f" in {plural(int(s['directories'] or 0), 'directory', 'directories')}"
        else:
            facts += f" in {plural(int(s['files']), 'file')}"
        facts += f"; {plural(int(s['output_lines']), 'output line')}"
        if s.get("context_lines"):
            facts += f" ({int(s['context_lines']):,} of them context)"
        files = [i for i in view.items if i.get("type") in ("file", "directory")]
        hits = [i for i in view.items if i.get("type") == "hit"]
        others = [i for i in view.items if i.get("type") == "line"]
        printed = sorted(hits + others, key=lambda i: int(i["output_line"]))
        shown = []
        what, whats = ("directory", "directories") if paths else ("file", "files")
        if files:
            shown.append(f"top {plural(len(files), what, whats)} by count")
        shown.append(f"{plural(len(hits), unit)} (spread over directories, in output order)")
        if others:
            shown.append(f"{plural(len(others), 'line')} that are not {unit}s")
        header = _layout.header_text(ctx, self.kind, facts, ", ".join(shown))
        sections: list[_layout.Section] = []
        stated = list(s.get("stated") or [])
        if files or stated:
            lines = [clean_for_display(_layout.clip(h, _LINE_CHARS)[0]) for h in stated]
            lines += [f"{int(f['hits']):,} {clean_for_display(str(f['path']))}" for f in files]
            what = "paths per directory" if paths else "hits per file"
            sections.append(_layout.Section(title=f"summary (facts): {what}", lines=lines))
        if printed:
            lines = []
            prev: int | None = None
            for hit in printed:
                line = int(hit["output_line"])
                if prev is not None and line > prev + 1:
                    lines.append(fence.marker(f"{range_phrase(prev + 1, line - 1)} omitted"))
                lines.append(str(hit["text"]))
                prev = line
            first = int(printed[0]["output_line"])
            what = f"{unit}s and other lines" if others else f"{unit}s"
            sections.append(
                _layout.Section(
                    title=f"{what} as printed (from output line {first:,})", lines=lines
                )
            )
        omitted_count = int(s["hits"]) - len(hits)
        omitted = None
        if omitted_count > 0 or view.omitted:
            gap_lines = sum(r.lines for r in view.omitted)
            omitted = f"{plural(omitted_count, unit)} ({plural(gap_lines, 'output line')})"
        refs: list[tuple[str, Reference | str]] = []
        if "next" in view.references:
            refs.append(("Read more", view.references["next"]))
        footer = _layout.footer_text(ctx, omitted=omitted, references=refs)
        return _layout.Layout(header=header, sections=sections, footer=footer)
