"""A search-shaped output keeps what breaks its structure: rare-shaped hits and non-hit lines.

A type checker prints `path:line: note: ...` hundreds of times and one `path:line: error: ...`;
a compiler listing its files prints paths and one `file(3,9): error ...` line that is not a
hit at all. Both are sniffed as searches; the one line that explains the failure is rare in
its output, and the view shows it (vocabulary-free: by the shape's rarity, not by the word).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.views import choose_view
from langchain_result_layer.views.search import SearchView, parse_hits
from tests.views.conftest import assert_fits, make_ctx

NOTES = "".join(
    f'pkg/mod_{i:03d}.py:{i % 9 + 3}: note: Revealed type is "builtins.int"\n' for i in range(600)
)
ERROR = 'pkg/mod_077.py:6: error: Incompatible return value type (got "str", expected "int")'
CHECKER = NOTES[: len(NOTES) // 3] + ERROR + "\n" + NOTES[len(NOTES) // 3 :]
PATHS = "".join(f"/build/src/mod_{i:03d}.ts\n" for i in range(400))
COMPILER_ERROR = "src/mod_123.ts(3,9): error TS2322: Type 'string' is not assignable."
LISTING = PATHS[: len(PATHS) // 2] + COMPILER_ERROR + "\n" + PATHS[len(PATHS) // 2 :]


def _shown(raw: str, tokens: int) -> str:
    view = SearchView()
    ctx = make_ctx("search", tokens=tokens)
    out = view.render(view.prepare(raw), ctx)
    assert_fits(out.content, ctx)
    assert isinstance(out.content, str)
    # Exact account: every output line is shown or inside an omitted range, never both.
    shown = {int(i["output_line"]) for i in out.view.items if "output_line" in i}
    omitted = {n for r in out.view.omitted for n in range(r.start_line, r.end_line + 1)}
    assert not shown & omitted
    assert shown | omitted == set(range(1, raw.count("\n") + 1))
    return out.content


def test_the_rare_hit_among_many_of_one_shape_is_shown() -> None:
    assert choose_view(CHECKER).kind == "search"
    for tokens in (1_000, 2_000):
        assert ERROR in _shown(CHECKER, tokens)


def test_a_line_that_is_not_a_hit_is_shown() -> None:
    assert parse_hits(LISTING).style == "paths"
    assert choose_view(LISTING).kind == "search"
    for tokens in (1_000, 2_000):
        content = _shown(LISTING, tokens)
        assert COMPILER_ERROR in content
        assert "that are not paths" in content


def test_a_search_whose_hits_all_differ_keeps_its_order() -> None:
    grep = "".join(
        f"src/m{i % 7}.py:{i}: value_{chr(97 + i % 26)}{i} = call()\n" for i in range(300)
    )
    rare = "".join(f"src/m{i % 7}.py:{i}: {'xyz' * (i % 5)}word{i} = 1\n" for i in range(300))
    for raw in (grep, rare):
        view = SearchView()
        prepared = view.prepare(raw)
        first = view.render(prepared, make_ctx("search", tokens=1_000)).view
        hits = [int(i["output_line"]) for i in first.items if i.get("type") == "hit"]
        assert hits == sorted(hits)
        assert hits[0] == 1  # the start of the output, not a promoted hit


@settings(max_examples=40, deadline=None)
@given(
    position=st.floats(min_value=0.0, max_value=1.0),
    notes=st.integers(min_value=40, max_value=400),
    tokens=st.sampled_from([800, 1_500, 3_000]),
)
def test_one_rare_hit_is_shown_wherever_it_is(position: float, notes: int, tokens: int) -> None:
    lines = NOTES.splitlines(keepends=True)[:notes]
    at = int(position * notes)
    raw = "".join(lines[:at]) + ERROR + "\n" + "".join(lines[at:])
    assert ERROR in _shown(raw, tokens)


def _failed_step_then_listing(block: int, files: int) -> tuple[str, str]:
    """A failed step's output, then a cleanup's `tar -cv` listing (directories end in `/`)."""
    trace = "".join(f"+ step {i}: prepare the build tree\n" for i in range(12))
    needle = "  pkg/R/mod918.R:3:12: unexpected '*'"
    error = ["Error in parse(outFile) :", needle, *(f"{i}: body line {i}" for i in range(block))]
    listing = ["+ tar -cvzf /tmp/cache.tgz pkg", "pkg/", "pkg/R/", "pkg/man/"]
    listing += [f"pkg/R/mod{i:04d}.R" for i in range(files)]
    tail = ["+ rm -f /tmp/cache.tgz", "cleanup done", "job finished with status 1", "+ exit 1"]
    return trace + "\n".join(error + listing + tail) + "\n", needle


def test_directories_in_a_listing_are_paths() -> None:
    raw, _ = _failed_step_then_listing(block=4, files=200)
    parsed = parse_hits(raw)
    assert parsed.style == "paths"
    lines = raw.splitlines()
    assert {lines[h.index - 1] for h in parsed.hits} >= {"pkg/", "pkg/R/", "pkg/man/"}
    assert not {lines[i - 1] for i in parsed.other} & {"pkg/", "pkg/R/", "pkg/man/"}


@settings(max_examples=30, deadline=None)
@given(
    block=st.integers(min_value=0, max_value=6),
    files=st.integers(min_value=150, max_value=1_500),
    tokens=st.sampled_from([1_000, 2_000, 4_000]),
)
def test_the_error_block_above_a_listing_is_shown(block: int, files: int, tokens: int) -> None:
    """Non-path lines beyond the first 12 are shown while they fit in a share of the budget."""
    raw, needle = _failed_step_then_listing(block, files)
    assert choose_view(raw).kind == "search"
    assert needle in _shown(raw, tokens)


def _linter(warnings: int, notes: int, at: float) -> tuple[str, str]:
    """A linter's `path:line:col: severity: message` output: no message dominates."""
    error = "bin/job_077.sh:9:4: error: Quote this expansion to keep its elements. [X1068]"
    lines = []
    for i in range(warnings + notes):
        severity = "warning" if i % (warnings + notes) < warnings else "note"
        verb = ("Prefer", "Consider", "Declare", "Use", "Remove", "Avoid")[i % 6]
        lines.append(f"bin/job_{i % 90:03d}.sh:{i % 40 + 1}:{i % 7 + 1}: {severity}: {verb} x{i}")
    lines.insert(int(at * len(lines)), error)
    return "\n".join(lines) + "\n", error


@settings(max_examples=30, deadline=None)
@given(
    warnings=st.integers(min_value=100, max_value=400),
    notes=st.integers(min_value=100, max_value=400),
    at=st.floats(min_value=0.0, max_value=1.0),
    tokens=st.sampled_from([1_000, 2_000]),
)
def test_a_rare_severity_among_few_is_shown(
    warnings: int, notes: int, at: float, tokens: int
) -> None:
    """Few first words after the location (a severity field): the rare one is shown."""
    raw, error = _linter(warnings, notes, at)
    assert choose_view(raw).kind == "search"
    assert error in _shown(raw, tokens)


def test_a_header_printed_for_every_file_does_not_crowd_out_the_hits() -> None:
    # pylint: `************* Module x` above each file's messages is the output's structure:
    # a few of them are shown, and the hits (the one error among conventions) get the room.
    blocks = []
    for f in range(90):
        blocks.append(f"************* Module acme.mod_{f:03d}")
        for k in range(12):
            code = "E1101" if (f, k) == (44, 7) else "C0116"
            blocks.append(f"acme/mod_{f:03d}.py:{k + 3}:0: {code}: message {k} (kind-{code})")
    raw = "\n".join(blocks) + "\n"
    assert choose_view(raw).kind == "search"
    content = _shown(raw, 1_000)
    assert content.count("************* Module") <= 3
    assert "E1101" in content
