"""Mixed outputs: a build log with another command's output after (or before) it, in one result.

An agent's shell tool returns what every command of its line printed: `make; grep -rn ...`,
`pytest; ls -R`, `cat build.log; sqlite3 ...`. This benchmark asks whether the failure's
evidence survives when a build log shares its result with about 32,000 characters of another
command's real output. Every labelled build log of `benchmarks/evidence_recall.py`'s protocol
(tuned and validation repositories, the same split) is measured three ways at 1,000, 2,000 and
4,000 tokens under `o200k_base` with the chosen view (as the pipeline picks it): alone, with
the other output after it, and with it before it. The other outputs, each cut at a line end
near 32,000 characters:

- **grep hits**: `path:line:text` lines for every line holding `def ` in the standard
  library's `unittest`, `logging`, `json` and `email` packages, files in sorted order (what
  `grep -rn "def " ...` prints; the code holds error words such as `Error`, `fail`, `raise`);
- **path listing**: the corpus's four real search outputs of SWE-agent (`find` listings);
- **SQL rows**: the corpus's Chinook query outputs (`|`-separated rows under a header).

The figure per cell is the number of logs with every needle kept (of the set) and the needles
kept. Session 23 wrote one rule on tuned logs with grep output after them (a location line
under another one is a listing member, not a report's head); the validation rows of this
table are logs no rule was written on.

Run: `python -m benchmarks mixed_outputs --corpus ../shared/corpus` (`--quick`: 3 logs a source).
"""

from __future__ import annotations

import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._common import BenchResult, Table, corpus_path, load_cases, read_text
from benchmarks.evidence_recall import (
    BUDGETS,
    Case,
    _build_logs,
    _strategies,
    is_validation,
    measurable,
)

OTHER_CHARS = 32_000
"""About how much of the other command's output each result holds."""
PLACES = ("alone", "after", "before")
STDLIB_PACKAGES = ("unittest", "logging", "json", "email")


def _cut(text: str, size: int = OTHER_CHARS) -> str:
    """`text` cut at the last line end within `size` characters, ending with a newline."""
    if len(text) <= size:
        return text if text.endswith("\n") else text + "\n"
    return text[:size].rsplit("\n", 1)[0] + "\n"


def grep_hits(size: int = OTHER_CHARS) -> str:
    """`grep -rn "def "` over a few standard-library packages, made without grep.

    Example:
        ```python
        hits = grep_hits(2_000)
        assert hits.count("\\n") > 5 and ".py:" in hits.split("\\n", 1)[0]
        ```
    """
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    out: list[str] = []
    chars = 0
    for package in STDLIB_PACKAGES:
        for path in sorted((stdlib / package).rglob("*.py")):
            rel = path.relative_to(stdlib).as_posix()
            for no, line in enumerate(read_text(path).splitlines(), 1):
                if "def " in line:
                    hit = f"{rel}:{no}:{line}"
                    out.append(hit)
                    chars += len(hit) + 1
                    if chars > size:
                        return _cut("\n".join(out), size)
    return _cut("\n".join(out), size)


def _corpus_outputs(corpus: Path, source: str, kind: str | None = None) -> str:
    rows = load_cases(corpus, source=source, kind=kind)
    return "".join(_cut(read_text(corpus / row["path"])) for row in rows)


def other_outputs(corpus: Path) -> dict[str, str]:
    """The other commands' outputs, by name (module docstring)."""
    return {
        "grep hits": grep_hits(),
        "path listing": _cut(_corpus_outputs(corpus, "sweagent_observations", "search")),
        "SQL rows": _cut(_corpus_outputs(corpus, "chinook_sql")),
    }


def _mixed(raw: str, other: str, place: str) -> str:
    if place == "alone":
        return raw
    log = raw if raw.endswith("\n") else raw + "\n"
    return log + other if place == "after" else other + log


def _kept(cases: list[Case], chosen: Callable[[str], str], other: str, place: str) -> list[int]:
    """Logs with every needle kept, needles kept."""
    logs = needles = 0
    for case in cases:
        shown = chosen(_mixed(case.raw, other, place))
        found = case.found(shown)
        needles += found
        logs += found == len(case.needles)
    return [logs, needles]


def run(*, corpus: Path | None, quick: bool = False) -> BenchResult:
    """Kept logs and needles per set, other output, place and budget (module docstring)."""
    result = BenchResult(name="mixed_outputs")
    found = measurable(result, corpus)
    if found is None:
        return result
    corpus, counter = found
    logs = _build_logs(corpus, counter, 3 if quick else None)
    sets = {
        "tuned": [c for c in logs if not is_validation(c)],
        "validation": [c for c in logs if is_validation(c)],
    }
    table = Table(
        "Build logs with another command's output in the same result (chosen view; logs with "
        "every needle kept / needles kept)",
        ["set", "logs", "other output", "tokens", *PLACES],
    )
    data: dict[str, Any] = {}
    chosen = {b: _strategies(counter, budget_tokens=b)["chosen view"] for b in BUDGETS}
    alone = {
        (set_name, budget): _kept(cases, chosen[budget], "", "alone")
        for set_name, cases in sets.items()
        for budget in BUDGETS
    }
    for name, other in other_outputs(corpus).items():
        for set_name, cases in sets.items():
            for budget in BUDGETS:
                cells = {"alone": alone[(set_name, budget)]}
                cells.update((p, _kept(cases, chosen[budget], other, p)) for p in PLACES[1:])
                data[f"{set_name}/{name}/{budget}"] = cells
                table.rows.append(
                    [
                        set_name,
                        len(cases),
                        name,
                        budget,
                        *(f"{cells[p][0]} / {cells[p][1]}" for p in PLACES),
                    ]
                )
    result.tables.append(table)
    result.data = data
    result.notes.append(
        f"{len(sets['tuned'])} tuned and {len(sets['validation'])} validation build logs, "
        f"other outputs of about {OTHER_CHARS:,} characters"
    )
    return result


if __name__ == "__main__":
    import sys

    args = sys.argv[1:]
    given = args[args.index("--corpus") + 1] if "--corpus" in args else None
    bench = run(corpus=corpus_path(given), quick="--quick" in args)
    print(bench.render())
    print(bench.write_json())
