"""Execute the notebooks in `notebooks/` with nbclient, offline, and (optionally) save them.

The test suite uses `execute_notebook` (see `test_notebooks.py`); maintainers re-execute and
save every notebook with its outputs after changing a notebook or the package:

```bash
python -m tests.notebooks.execute --save            # every notebook in notebooks/
python -m tests.notebooks.execute --save notebooks/01_quickstart.ipynb
```

How a notebook is executed:

- kernel `python3` (the name every notebook carries), pinned to `ipykernel`'s own kernelspec
  for the interpreter running this code (`sys.executable`): the kernel sees the same virtual
  environment and the editable package even when a user-level `python3` kernelspec points at
  another Python. `ipykernel` comes with the `notebooks` extra (part of `test`), so
  `pip install -e ".[test]"` is all a fresh machine needs; no `ipykernel install` step;
- working directory: a fresh temporary directory (the notebooks write nothing else anywhere
  but the system temp dir);
- offline: API keys (`*_API_KEY`) are removed from the kernel's environment, so the notebooks
  take their scripted-model path, and before the first cell the kernel silently installs a
  guard that refuses socket connections to anything but localhost (PostgreSQL on 127.0.0.1
  and the kernel's own channels still work; ZeroMQ does not use Python sockets);
- any cell error fails the run (`CellExecutionError`);
- after the last cell, optional *check expressions* are evaluated silently in the kernel's
  namespace (`user_expressions`), so a test can assert on the notebook's own variables
  without adding cells to it.

Saved notebooks are normalised: no execution timing metadata, generic `python3` kernelspec,
`language_info` without the interpreter version, stable cell ids.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbformat import NotebookNode

__all__ = [
    "KERNEL_NAME",
    "NOTEBOOKS_DIR",
    "ExecutedNotebook",
    "clean_notebook",
    "execute_notebook",
    "kernel_env",
    "notebook_paths",
    "output_text",
]

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
"""Where the notebooks live."""

KERNEL_NAME = "python3"
"""The kernelspec every notebook names (generic, resolved to the running interpreter)."""

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
LANGUAGE_INFO = {
    "name": "python",
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}

OFFLINE_GUARD = """
import socket as _lrl_socket

_LRL_ALLOWED_HOSTS = {"127.0.0.1", "::1", "localhost"}


def _lrl_guard(connect):
    def guarded(self, address):
        if (
            self.family in (_lrl_socket.AF_INET, _lrl_socket.AF_INET6)
            and isinstance(address, tuple)
            and address[0] not in _LRL_ALLOWED_HOSTS
        ):
            raise OSError(f"network access is disabled while testing notebooks: {address!r}")
        return connect(self, address)

    return guarded


_lrl_socket.socket.connect = _lrl_guard(_lrl_socket.socket.connect)
_lrl_socket.socket.connect_ex = _lrl_guard(_lrl_socket.socket.connect_ex)
del _lrl_guard
"""
"""Runs silently in the kernel before the first cell when executing offline."""

_CHECK_PROBE = "__import__('sys').executable"


class _RunningInterpreterSpecs(KernelSpecManager):
    """Resolves `python3` to ipykernel's native kernelspec for `sys.executable`."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        if kernel_name == KERNEL_NAME:
            from ipykernel.kernelspec import RESOURCES, get_kernel_dict

            return KernelSpec(resource_dir=RESOURCES, **get_kernel_dict())
        return super().get_kernel_spec(kernel_name)


class _Client(NotebookClient):
    """A `NotebookClient` whose `python3` kernel always runs this interpreter."""

    def create_kernel_manager(self) -> KernelManager:
        km = super().create_kernel_manager()
        km.kernel_spec_manager = _RunningInterpreterSpecs(data_dir=km.data_dir)
        return km


@dataclass(slots=True)
class ExecutedNotebook:
    """A notebook after execution.

    Attributes:
        path: The notebook file.
        notebook: The executed notebook (outputs filled in).
        checks: Values of the check expressions (JSON-decoded).
        kernel_executable: `sys.executable` inside the kernel.
        seconds: Wall time of the execution.
    """

    path: Path
    notebook: NotebookNode
    checks: dict[str, Any] = field(default_factory=dict)
    kernel_executable: str = ""
    seconds: float = 0.0

    def text(self) -> str:
        """Every text output of every code cell, joined (stream, plain text and errors)."""
        return "\n".join(output_text(cell) for cell in self.notebook.cells)

    def image_count(self) -> int:
        """Number of PNG images in the outputs."""
        return sum(
            1
            for cell in self.notebook.cells
            for out in cell.get("outputs", [])
            if "image/png" in out.get("data", {})
        )


def notebook_paths(directory: Path = NOTEBOOKS_DIR) -> list[Path]:
    """The notebooks of `directory`, sorted (checkpoints excluded)."""
    return sorted(p for p in directory.glob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def output_text(cell: Mapping[str, Any]) -> str:
    """The text outputs of one cell (stream text, `text/plain` results, error tracebacks)."""
    parts: list[str] = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            parts.append(str(out.get("text", "")))
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            if "text/plain" in data:
                parts.append(str(data["text/plain"]))
        elif kind == "error":
            parts.append("\n".join(out.get("traceback", [])))
    return "".join(parts)


def kernel_env(*, offline: bool = True, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The kernel's environment: this process's, without API keys when `offline`."""
    env = dict(os.environ)
    if offline:
        for key in list(env):
            if key.endswith("_API_KEY"):
                del env[key]
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env.update(extra or {})
    return env


async def _silent(
    client: NotebookClient, code: str, expressions: Mapping[str, str] | None = None
) -> dict[str, Any]:
    assert client.kc is not None
    msg_id = client.kc.execute(
        code, silent=True, store_history=False, user_expressions=dict(expressions or {})
    )
    reply = await client.async_wait_for_reply(msg_id)
    if reply is None:
        msg = "the kernel did not answer a silent execution"
        raise RuntimeError(msg)
    content = reply["content"]
    if content.get("status") != "ok":
        msg = f"silent execution failed: {content.get('ename')}: {content.get('evalue')}"
        raise RuntimeError(msg)
    return dict(content.get("user_expressions") or {})


def _expression_value(name: str, result: Mapping[str, Any]) -> Any:
    if result.get("status") != "ok":
        msg = f"check {name!r} failed in the kernel: {result.get('ename')}: {result.get('evalue')}"
        raise AssertionError(msg)
    text = result.get("data", {}).get("text/plain", "")
    # The expressions are wrapped in json.dumps, so the repr is a Python string literal.
    return json.loads(ast.literal_eval(text))


async def _run(
    client: NotebookClient,
    env: dict[str, str],
    workdir: Path,
    offline: bool,
    checks: Mapping[str, str],
) -> tuple[dict[str, Any], str]:
    client.reset_execution_trackers()
    async with client.async_setup_kernel(env=env, cwd=str(workdir)):
        assert client.kc is not None
        if offline:
            await _silent(client, OFFLINE_GUARD)
        info = await client.async_wait_for_reply(client.kc.kernel_info())
        if info is not None and "language_info" in info["content"]:
            client.nb.metadata["language_info"] = info["content"]["language_info"]
        for index, cell in enumerate(client.nb.cells):
            await client.async_execute_cell(
                cell, index, execution_count=client.code_cells_executed + 1
            )
        wrapped = {name: f"__import__('json').dumps({expr})" for name, expr in checks.items()}
        wrapped["__executable__"] = _CHECK_PROBE
        results = await _silent(client, "", wrapped)
    executable = str(results.pop("__executable__", {}).get("data", {}).get("text/plain", ""))
    values = {name: _expression_value(name, results[name]) for name in checks}
    return values, executable.strip("'\"")


def execute_notebook(
    path: Path,
    *,
    workdir: Path,
    timeout: int = 180,
    offline: bool = True,
    checks: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> ExecutedNotebook:
    """Execute one notebook in `workdir` and return it with its check values.

    Args:
        path: The `.ipynb` file.
        workdir: Working directory of the kernel.
        timeout: Seconds one cell may take.
        offline: Remove API keys and refuse non-local connections in the kernel.
        checks: Name -> Python expression evaluated in the kernel after the last cell; the
            value must be JSON-serialisable.
        env: Extra environment variables for the kernel.

    Returns:
        The executed notebook.

    Raises:
        nbclient.exceptions.CellExecutionError: When a cell fails.
    """
    nb = nbformat.read(path, as_version=4)
    client = _Client(
        nb,
        timeout=timeout,
        kernel_name=KERNEL_NAME,
        resources={"metadata": {"path": str(workdir)}},
        allow_errors=False,
        record_timing=False,
    )
    start = time.perf_counter()
    values, executable = asyncio.run(
        _run(client, kernel_env(offline=offline, extra=env), workdir, offline, checks or {})
    )
    return ExecutedNotebook(
        path=path,
        notebook=nb,
        checks=values,
        kernel_executable=executable,
        seconds=time.perf_counter() - start,
    )


def clean_notebook(nb: NotebookNode) -> NotebookNode:
    """Normalise a notebook for saving: generic metadata, no timing, stable cell ids."""
    nb.metadata = NotebookNode(
        {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)}
    )
    nb.nbformat, nb.nbformat_minor = 4, 5
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:02d}"
        for key in ("execution", "ExecuteTime", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            for out in cell.get("outputs", []):
                if out.get("output_type") == "execute_result":
                    out["metadata"] = {}
    return nb


def main(argv: list[str] | None = None) -> int:
    """Command line: execute notebooks, print their timing, optionally save them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: all)")
    parser.add_argument("--save", action="store_true", help="write outputs back to the files")
    parser.add_argument("--timeout", type=int, default=180, help="seconds per cell")
    args = parser.parse_args(argv)
    paths = args.paths or notebook_paths()
    for path in paths:
        with tempfile.TemporaryDirectory(prefix="lrl-nb-") as tmp:
            done = execute_notebook(path, workdir=Path(tmp), timeout=args.timeout)
        size = len(nbformat.writes(clean_notebook(done.notebook)).encode("utf-8"))
        print(f"{path.name}: {done.seconds:.1f} s, {size / 1024:.0f} KB")
        if args.save:
            nbformat.write(clean_notebook(done.notebook), path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
