"""Line sampling and the budget fitter shared by the line-based views."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.tokens import TiktokenCounter
from langchain_result_layer.views._layout import largest_fitting
from langchain_result_layer.views._lines import (
    _SAMPLE_CHARS,
    LineLimits,
    LineTexts,
    _OrderCosts,
    _sample_ratio,
    sample_lines,
    showing_order,
    spread,
)
from langchain_result_layer.views._salience import analyse
from langchain_result_layer.views._salience_settings import SalienceSettings


def _reference_lines(text: str) -> list[str]:
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab \r", max_size=12), max_size=300),
    trailing=st.booleans(),
    max_lines=st.integers(min_value=1, max_value=120),
    windows=st.integers(min_value=1, max_value=50),
)
def test_sample_lines_numbers_every_sampled_line_exactly(
    lines: list[str], trailing: bool, max_lines: int, windows: int
) -> None:
    text = "\n".join(lines) + ("\n" if trailing and lines else "")
    expected = _reference_lines(text)
    sample = sample_lines(text, max_lines=max_lines, windows=windows)
    assert sample.total_lines == len(expected)
    numbers = [n for n, _ in sample.numbered]
    assert numbers == sorted(set(numbers))
    for number, line in sample.numbered:
        assert expected[number - 1] == line
    if sample.sampled:
        assert len(sample.numbered) <= max_lines
        assert numbers[0] == 1
        if max_lines >= 2:
            assert numbers[-1] == len(expected)
    else:
        assert len(sample.numbered) == len(expected)


def test_sample_lines_of_a_large_text_spreads_windows() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 100_001))
    sample = sample_lines(text, max_lines=1_000, windows=10)
    assert sample.sampled
    assert sample.total_lines == 100_000
    assert len(sample.numbered) == 1_000
    middle = [n for n, _ in sample.numbered if 40_000 < n < 60_000]
    assert middle  # not just the head and the tail
    assert all(f"line {n}" == t for n, t in sample.numbered)


def test_spread_keeps_both_ends() -> None:
    assert spread(list(range(10)), 20) == list(range(10))
    picked = spread(list(range(1_000)), 100, windows=5)
    assert len(picked) == 100
    assert picked[0] == 0
    assert picked[-1] == 999
    assert picked == sorted(set(picked))


class _CharCounter:
    name = "chars/3"

    def count(self, text: str) -> int:
        return len(text) // 3


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(st.sampled_from([0, 1, 3, 20, 250]), min_size=1, max_size=400),
    base=st.integers(min_value=0, max_value=300),
    tokens=st.integers(min_value=1, max_value=4_000),
    chars=st.integers(min_value=5, max_value=20_000),
    guess=st.one_of(st.none(), st.integers(min_value=-5, max_value=405)),
)
# Full at level 7 and flat after it: walked one level per probe before (15 probes for 21 levels).
@example(steps=[0] * 5 + [250, 250] + [0] * 13, base=79, tokens=193, chars=579, guess=None)
def test_largest_fitting_finds_the_exact_largest_level(
    steps: list[int], base: int, tokens: int, chars: int, guess: int | None
) -> None:
    sizes = [base]
    for step in steps:
        sizes.append(sizes[-1] + step)
    hi = len(sizes) - 1
    budget = Budget(tokens=tokens, chars=chars)
    probes: list[int] = []

    def build(level: int) -> str:
        probes.append(level)
        return "x" * sizes[level]

    got = largest_fitting(build, lo=0, hi=hi, budget=budget, counter=_CharCounter(), guess=guess)
    fitting = [k for k in range(hi + 1) if sizes[k] <= chars and sizes[k] // 3 <= tokens]
    if not fitting:
        assert got is None
    else:
        assert got is not None
        assert got[0] == max(fitting)
        assert got[1] == "x" * sizes[got[0]]
    assert len(probes) <= 2 * (hi + 1).bit_length() + 4


def test_a_long_line_keeps_its_start_and_its_end() -> None:
    from langchain_result_layer.views._lines import clip_line

    line = (
        "- The requested package acme/bridge 4.4@dev exists as acme/bridge["
        + ", ".join(f"v2.7.{i}" for i in range(400))
        + "] but these are rejected by your constraint."
    )
    shown = clip_line(line, line, 300, 10_000)
    assert len(shown.text) <= 300
    assert shown.text.startswith("- The requested package acme/bridge")
    assert shown.text.endswith("but these are rejected by your constraint.")
    assert len(shown.cuts) == 1
    (cut,) = shown.cuts
    assert shown.text[cut.at - 1] == "…"
    assert len(shown.text) - 1 + cut.chars == len(line)
    # The cut is an exact raw range of the result (the line starts at offset 10,000).
    assert line[: cut.start - 10_000] + "…" + line[cut.end - 10_000 :] == shown.text


def test_a_long_line_keeps_the_failure_inside_it() -> None:
    from langchain_result_layer.views._lines import clip_line

    line = "x" * 1_000 + " ERROR: disk full on /dev/sda1 " + "y" * 2_000
    shown = clip_line(line, line, 300, 0)
    assert "ERROR: disk full on /dev/sda1" in shown.text
    assert shown.text.startswith("x" * 100)
    assert shown.text.endswith("y" * 20)  # and the end of the line
    assert sum(c.chars for c in shown.cuts) + len(shown.text) - len(shown.cuts) == len(line)
    kept = [
        line[a:b]
        for a, b in zip(
            [0, *(c.end for c in shown.cuts)],
            [*(c.start for c in shown.cuts), len(line)],
            strict=True,
        )
    ]
    assert "…".join(kept) == shown.text


def test_a_long_line_with_escape_codes_is_cut_on_raw_offsets() -> None:
    from langchain_result_layer.core.normalize import clean_for_display
    from langchain_result_layer.views._lines import clip_line

    raw = "\x1b[31m" + "a" * 2_000 + "\x1b[0m FATAL: out of memory " + "b" * 2_000
    shown = clip_line(raw, clean_for_display(raw), 300, 500)
    assert "FATAL: out of memory" in shown.text
    assert "\x1b" not in shown.text
    for cut in shown.cuts:
        assert 500 <= cut.start < cut.end <= 500 + len(raw)


def test_clip_marks_sit_where_the_line_was_cut() -> None:
    from langchain_result_layer.core.render import Fence
    from langchain_result_layer.views._lines import Cut, ShownLine, Window, window_sections

    fence = Fence(nonce="k7q2xm9p")
    window = Window(
        role="error",
        start_line=5,
        end_line=5,
        start_char=0,
        end_char=2_000,
        lines=[ShownLine(text="head…tail", cuts=(Cut(at=5, start=100, end=1_334),))],
    )
    (section,) = window_sections([window], fence)
    assert section.lines == ["head…[k7q2xm9p: chars 100-1,334 omitted]tail"]
    item = window.as_item()
    assert item["clipped"] == {"5": 1_234}
    assert item["cuts"] == {"5": [[5, 100, 1_334]]}


def test_a_gap_of_a_few_short_lines_joins_two_shown_lines() -> None:
    """Showing two or three short lines costs about the window marker they save."""
    text = "\n".join(["first"] + [f"line {i}" for i in range(2, 41)]) + "\n"
    analysis = analyse(text)
    texts = LineTexts(analysis, LineLimits(), anchors=())
    assert showing_order(analysis, [10, 13], texts) == [10, 13, 12, 11]  # 2 lines between
    assert showing_order(analysis, [10, 14], texts) == [10, 14, 13, 12, 11]  # 3 lines
    assert showing_order(analysis, [10, 15], texts) == [10, 15]  # 4: two windows
    narrow = analyse(text, settings=SalienceSettings(gap_fill_lines=1))
    narrow_texts = LineTexts(narrow, LineLimits(), anchors=())
    assert showing_order(narrow, [10, 13], narrow_texts) == [10, 13]
    assert showing_order(narrow, [10, 12], narrow_texts) == [10, 12, 11]
    long = "\n".join(["x" * 150] * 40) + "\n"
    long_analysis = analyse(long)
    long_texts = LineTexts(long_analysis, LineLimits(), anchors=())
    assert showing_order(long_analysis, [10, 13], long_texts) == [10, 13]  # 300 chars: too long


def test_the_fit_ratio_is_read_from_a_sample_of_about_sample_chars() -> None:
    """The characters-per-token guess reads a spread sample of `_SAMPLE_CHARS`, not a few lines."""
    text = "".join(f"step {i}: compiled module_{i} in {i % 97} ms\n" for i in range(1, 6_001))
    analysis = analyse(text)
    texts = LineTexts(analysis, LineLimits(), anchors=())
    order = list(range(1, 6_001))
    costs = _OrderCosts(order, texts, room=10**9)
    costs.reach(10**9)
    counted: list[str] = []

    class Recording:
        name, exact = "recording", True

        def count(self, text: str) -> int:
            counted.append(text)
            return TiktokenCounter().count(text)

    ratio = _sample_ratio(order, texts, Recording(), costs, costs.top)
    (sample,) = counted
    assert _SAMPLE_CHARS * 0.8 <= len(sample) <= _SAMPLE_CHARS * 1.2
    assert "step 1:" in sample  # spread from the top ...
    assert "step 59" in sample  # ... to the end
    whole = "\n".join(texts.shown(ln).text for ln in order)
    assert abs(ratio - len(whole) / TiktokenCounter().count(whole)) < 0.05 * ratio


def test_a_line_just_over_its_limit_is_shown_whole() -> None:
    """A cut that would save at most a third of a line (less its marker) is not made."""
    lines = ["a" * 140, "b" * 160, "c" * 400, *(f"step {i}" for i in range(20))]
    analysis = analyse("\n".join(lines) + "\n")
    limits = LineLimits(normal=100, error=100, anchor=100, anchors=0, slack=1.5)
    texts = LineTexts(analysis, limits, anchors=())
    assert texts.shown(1).text == "a" * 140  # 1.4x: whole
    assert not texts.shown(1).cuts
    assert texts.shown(2).cuts  # 1.6x: cut, to the limit itself (not 1.5x of it)
    assert len(texts.shown(2).text) <= 100
    assert len(texts.shown(3).text) <= 100
    for line_no, raw in ((2, lines[1]), (3, lines[2])):
        shown = texts.shown(line_no)
        assert len(shown.text) - len(shown.cuts) + sum(c.chars for c in shown.cuts) == len(raw)
    # A line the fit shortens is cut to its new room (at least 120 chars), whatever the slack.
    assert texts.shorten(1)
    assert texts.shown(1).cuts
    assert len(texts.shown(1).text) <= 120
    # Without slack (the default of `LineLimits`), a line over its limit is cut.
    strict = LineTexts(analysis, LineLimits(normal=100, error=100, anchor=100), anchors=())
    assert strict.shown(1).cuts


def _fit_renders(counter: object, budget: Budget) -> tuple[list[str], str]:
    from langchain_result_layer.core.render import CANONICAL_FENCE
    from langchain_result_layer.views._lines import Window, fit_windows
    from langchain_result_layer.views.command import line_sections

    text = "".join(
        f"step {i}: compiled module_{i} in {i % 97} ms\n"
        + (f"error: test_{i} failed\n  at suite.py:{i}\n" if i % 40 == 0 else "")
        for i in range(1, 20_001)
    )
    analysis = analyse(text)
    texts = LineTexts(analysis, LineLimits(), anchors=())
    rendered: list[str] = []

    def render(shown: list[Window]) -> str:
        sections = line_sections(shown, CANONICAL_FENCE)  # as the views show them
        out = "[Tool result: a header]\n" + "".join(
            CANONICAL_FENCE.marker(s.title) + "\n" + "".join(line + "\n" for line in s.lines)
            for s in sections
        )
        rendered.append(out)
        return out

    fitted = fit_windows(
        analysis, analysis.ranked(), texts=texts, render=render, budget=budget, counter=counter
    )  # type: ignore[arg-type]
    assert fitted is not None
    return rendered, fitted[1]


def test_exact_line_costs_land_the_first_probe() -> None:
    """With the lines' exact tokens (`LineMemoCounter.count_lines`) one probe fills the view."""
    from langchain_result_layer.core.token_memo import LineMemoCounter

    counted: list[str] = []

    class Recording(LineMemoCounter):
        def count_lines(self, lines: list[str]) -> list[int] | None:
            counted.extend(lines)
            return super().count_lines(lines)

    exact = TiktokenCounter()
    for tokens in (1_000, 8_000, 38_400):
        budget = Budget(tokens=tokens, chars=10**7)
        counted.clear()
        rendered, text = _fit_renders(Recording(exact), budget)
        assert 0.98 * tokens <= exact.count(text) <= tokens
        # The lines counted are about those of the largest probe: not a margin counted in vain.
        assert sum(map(len, counted)) <= 1.1 * max(map(len, rendered)), tokens
        # The view without lines, then one probe (on a small budget up to three: the titles
        # of runs of one-line windows are estimated, and a probe may miss by a few tokens).
        assert len(rendered) <= (2 if tokens > 10_000 else 4), tokens
        # A counter that cannot count lines is fitted from a ratio, within the same bound.
        rendered, text = _fit_renders(exact, budget)
        assert exact.count(text) <= tokens
