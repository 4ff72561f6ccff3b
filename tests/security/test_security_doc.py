"""docs/security.md names, for every guarantee, tests that exist (issue 12 item 10).

Every row of the guarantee tables must name at least one test file; every `file::name` (and
every `::name` continuing the previous file) must be a test function of that file, so the page
cannot point at a test that was renamed or removed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "security.md"
_REF = re.compile(r"`(tests/[\w/]+\.py)?(?:::(\w+))?`")


def _guarantee_rows() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## What the layer guarantees", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("|") or set(line) <= set("|- "):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[:2] == ["Guarantee", "Test"]:
            continue
        rows.append(cells[-1])
    return rows


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def test_every_guarantee_names_a_test_that_exists() -> None:
    rows = _guarantee_rows()
    assert len(rows) >= 20, "the guarantee tables were not found"
    for cell in rows:
        refs = [m for m in _REF.finditer(cell) if m.group(1) or m.group(2)]
        assert any(m.group(1) for m in refs), f"no test file named in: {cell}"
        current: Path | None = None
        for match in refs:
            if match.group(1):
                current = ROOT / match.group(1)
                assert current.is_file(), match.group(1)
            name = match.group(2)
            if name is None:
                continue
            assert current is not None, cell
            assert name in _functions(current), f"{current.relative_to(ROOT)}::{name} not found"
