"""The package's metadata: a license `pip show` prints, and extras that install what they say.

Each extra lists distributions that the code it names imports; a distribution that nothing in
that code imports is dead weight a user downloads for nothing (as `drain3` in a `logs` extra was:
only a benchmark uses it), and a library extra that pulls a meta-package (`jupyter`) installs
dozens of packages the notebooks never load.
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]

# Where each extra's distributions must be imported, and under which import name.
USED_BY: dict[str, tuple[str, ...]] = {
    "postgres": ("tests/stores", "docs", "README.md"),
    "agents": ("src/langchain_result_layer/adapters/middleware.py",),
    "demo": ("src/langchain_result_layer/demo", "src/langchain_result_layer/cli/demo_cmd.py"),
    "notebooks": ("notebooks", "tests/notebooks"),
    "real-model": ("notebooks",),
    "encodings": ("src/langchain_result_layer/core/tokens.py",),
    "benchmarks": ("benchmarks",),
}
IMPORT_NAMES = {
    "psycopg[binary]": "psycopg",
    "langchain": "langchain",
    "matplotlib": "matplotlib",
    "rich": "rich",
    "ipykernel": "ipykernel",
    "nbclient": "nbclient",
    "nbformat": "nbformat",
    "langchain-openai": "langchain_openai",
    "drain3": "drain3",
    "bpe-openai": "bpe_openai",
}


def dist_name(requirement: str) -> str:
    return re.split(r"[<>=!~;\s]", requirement, maxsplit=1)[0]


def text_of(place: str) -> str:
    path = ROOT / place
    files = [path] if path.is_file() else sorted(path.rglob("*"))
    return "\n".join(
        f.read_text(encoding="utf-8", errors="replace")
        for f in files
        if f.is_file() and f.suffix in {".py", ".ipynb", ".md"}
    )


def test_license_file_and_metadata() -> None:
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    metadata = importlib.metadata.metadata("langchain-result-layer")
    assert metadata["License"] == "MIT"  # the field `pip show` prints as "License:"
    assert "License :: OSI Approved :: MIT License" in (metadata.get_all("Classifier") or [])


@pytest.mark.parametrize("extra", sorted(USED_BY))
def test_every_distribution_of_an_extra_is_imported_where_the_extra_says(extra: str) -> None:
    code = "\n".join(text_of(place) for place in USED_BY[extra])
    for requirement in EXTRAS[extra]:
        if requirement.startswith("langchain-result-layer["):  # another extra, checked itself
            continue
        name = IMPORT_NAMES[dist_name(requirement)]
        assert re.search(rf"(import|from) {name}\b|\+{name}:|find_spec\(\\?\"{name}\b", code), (
            extra,
            requirement,
        )


def test_no_extra_pulls_a_meta_package_or_an_unused_library() -> None:
    names = {dist_name(r) for reqs in EXTRAS.values() for r in reqs}
    assert "jupyter" not in names
    assert "nbmake" not in names
    assert "logs" not in EXTRAS
    for extra, reqs in EXTRAS.items():
        if any(dist_name(r) == "drain3" for r in reqs):
            assert extra == "benchmarks", extra
    src = text_of("src")
    assert not re.search(r"(import|from) drain3\b", src)


def test_the_test_extra_installs_every_runtime_extra_it_exercises() -> None:
    (self_ref,) = [r for r in EXTRAS["test"] if r.startswith("langchain-result-layer[")]
    included = set(self_ref.split("[", 1)[1].rstrip("]").split(","))
    assert {"postgres", "agents", "demo", "notebooks", "encodings", "benchmarks"} <= included


def test_the_base_install_counts_exactly_without_bpe_openai() -> None:
    """`bpe-openai` (75 MB) is an extra; the default encoding's data ships in the package."""
    base = [r for r in importlib.metadata.requires("langchain-result-layer") or [] if ";" not in r]
    assert not any(dist_name(r) == "bpe-openai" for r in base)
    data = ROOT / "src/langchain_result_layer/core/_data/o200k_base.tokens.marshal.gz"
    assert 1_000_000 < data.stat().st_size < 1_500_000
