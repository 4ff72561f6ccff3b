"""A long text is a search output only if it keeps the shape of one through to its end.

A build log that starts with 32,000 characters of `grep -rn` output (or a listing) and then
runs the build is a log: its failure is at the end, and the search view would show hits from the
start. The search sniff reads stripes at a quarter, half, three quarters and the end of a long
text; a text whose stripes are not search-shaped is left to the other views.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks.evidence_recall import Case, is_validation
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.views import choose_view
from langchain_result_layer.views.search import SearchView

SRC = Path(__file__).resolve().parents[2] / "src" / "langchain_result_layer"


def _grep_def_lines() -> list[str]:
    """Real `grep -rn "def "` hits over the package's own source, as grep prints them."""
    hits: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if "def " in line:
                hits.append(f"{rel}:{number}:{line}")
    return hits


GREP_LINES = _grep_def_lines()


def _grep_output(chars: int) -> str:
    """At least `chars` characters of whole grep hit lines (repeating the real hits)."""
    out: list[str] = []
    size = 0
    i = 0
    while size < chars:
        line = GREP_LINES[i % len(GREP_LINES)] + "\n"
        out.append(line)
        size += len(line)
        i += 1
    return "".join(out)


BUILD_TAIL = (
    "".join(
        f"[{i:04d}] compiling unit {i} of the project with flags -O2 -Wall\n" for i in range(700)
    )
    + "make: *** [Makefile:12: all] Error 2\nThe command exited with 2.\n"
)


def test_a_long_search_output_is_still_a_search() -> None:
    text = _grep_output(120_000)
    assert len(text) > 32_000
    assert choose_view(text).kind == "search"


def test_a_long_path_listing_is_still_a_search() -> None:
    listing = "".join(f"./src/pkg_{i % 40}/module_{i:05d}.py\n" for i in range(4_000))
    assert len(listing) > 32_000
    assert choose_view(listing).kind == "search"


def test_a_log_that_starts_with_a_search_is_not_a_search() -> None:
    text = _grep_output(32_000) + BUILD_TAIL
    assert SearchView().sniff(_grep_output(32_000)) > 0
    assert SearchView().sniff(text) == 0.0
    assert choose_view(text).kind != "search"


def test_one_huge_line_at_the_end_does_not_veto() -> None:
    """A stripe with no whole line in it says nothing about the shape."""
    text = _grep_output(60_000) + "x" * 30_000 + "\n"
    assert SearchView().sniff(text) > 0


def test_a_short_text_is_read_as_before() -> None:
    head = _grep_output(20_000)
    assert SearchView().sniff(head + BUILD_TAIL[:8_000]) > 0


@settings(max_examples=40)
@given(st.integers(min_value=33_000, max_value=150_000), st.integers(0, 10_000))
def test_search_output_of_any_length_keeps_its_sniff(chars: int, start: int) -> None:
    lines = GREP_LINES[start % len(GREP_LINES) :] + GREP_LINES
    text = ""
    i = 0
    while len(text) < chars:
        text += lines[i % len(lines)] + "\n"
        i += 1
    assert SearchView().sniff(text) > 0


@settings(max_examples=40)
@given(st.integers(min_value=32_001, max_value=60_000), st.floats(0.3, 2.0))
def test_a_search_head_then_a_long_non_search_tail_is_not_a_search(
    chars: int, tail_share: float
) -> None:
    head = _grep_output(chars)
    unit = "step: building target with the configured toolchain, no problems so far\n"
    tail = unit * (int(len(head) * tail_share) // len(unit) + 1)
    assert SearchView().sniff(head + tail) == 0.0


def _tuned_train_logs(corpus: Path) -> list[str]:
    """The tuned logs of `train/` (never a validation repository's: the benchmark's split)."""
    rows = [
        json.loads(line)
        for line in (corpus / "train" / "cases.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    texts: list[str] = []
    for row in rows:
        group = str(row.get("split_group") or row["id"])
        split = Case(case_id=row["id"], source=row["source"], group=group, raw="", needles=[])
        if is_validation(split):
            continue
        path = corpus / "train" / row["path"]
        if path.is_file():
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return texts


def test_tuned_build_logs_with_a_search_before_them_are_not_searches(corpus: Path) -> None:
    if not (corpus / "train" / "cases.jsonl").is_file():
        pytest.skip("train/ not in the corpus")
    logs = [t for t in _tuned_train_logs(corpus) if len(t) > 8_000]
    assert len(logs) >= 20
    prefix = _grep_output(32_000)
    chosen = [choose_view(prefix + log).kind for log in logs]
    searches = chosen.count("search")
    # Before the stripes, every one of them was taken for a search (the head is all hits).
    assert searches <= len(logs) // 10, (searches, len(logs))
