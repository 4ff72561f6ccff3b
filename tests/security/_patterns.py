"""Every regular expression of the package, and adversarial lines built from each one.

`package_patterns()` finds the compiled patterns two ways, so that none is missed:

- module and class attributes (walked into tuples, lists, dicts and dataclass instances),
  which covers patterns built at import time from pieces;
- every `re.compile/search/match/fullmatch/sub/subn/split/findall/finditer` call in the
  package's source whose pattern is a string literal (patterns compiled inside functions).

`adversarial_lines(pattern, size)` builds lines of `size` characters from the pattern's own
literal characters (each repeated, pairs of them alternating, all of them cycling), digit
runs, spaces, control characters, `\\r`, separators, each followed by an ending that makes
the match fail late (`\\r\\n`, `\\x01`, `x`, ...).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import langchain_result_layer

try:  # Python 3.11+
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

__all__ = ["FoundPattern", "Timing", "adversarial_lines", "package_patterns", "worst_time"]

_RE_FUNCTIONS = {
    "compile",
    "search",
    "match",
    "fullmatch",
    "sub",
    "subn",
    "split",
    "findall",
    "finditer",
}
_BASE_CHARS = "1 \t\x01\r-|=:,./_a\\\"'#*[(<{@$%+"
_ENDINGS = ("", "\r\n", "\x01", "x")
_MAX_OWN_CHARS = 64
_ANCHORED_CALLS = frozenset({"match", "fullmatch"})
_SUPERLINEAR = 8.0
_ROUNDS = 5
"""Turns of timing a slow line and its quarter (best of each kept)."""


@dataclass(frozen=True, slots=True)
class FoundPattern:
    """One compiled pattern and where it was found."""

    name: str
    """`module:ATTRIBUTE` or `module:line N` (source literal)."""
    pattern: re.Pattern[Any]
    anchored: bool = False
    """Whether the package only ever calls it with `match`/`fullmatch` (tried at 0 only)."""


def _walk(value: Any, where: str, seen: set[int], out: list[FoundPattern], depth: int) -> None:
    if depth > 4 or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, re.Pattern):
        out.append(FoundPattern(where, value))
    elif isinstance(value, (list, tuple, set, frozenset)):
        for i, item in enumerate(value):
            _walk(item, f"{where}[{i}]", seen, out, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            _walk(item, f"{where}[{key!r}]", seen, out, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _walk(getattr(value, f.name, None), f"{where}.{f.name}", seen, out, depth + 1)


def _attribute_patterns() -> list[FoundPattern]:
    out: list[FoundPattern] = []
    root = langchain_result_layer
    for info in pkgutil.walk_packages(root.__path__, root.__name__ + "."):
        module = importlib.import_module(info.name)
        seen: set[int] = set()
        for name, value in vars(module).items():
            if inspect.ismodule(value):
                continue
            where = f"{module.__name__}:{name}"
            if isinstance(value, type):
                if value.__module__ == module.__name__:
                    for attr, item in vars(value).items():
                        _walk(item, f"{where}.{attr}", seen, out, 0)
                continue
            _walk(value, where, seen, out, 0)
    return out


def _literal_flags(node: ast.expr | None) -> int:
    """Flags of a call written as `re.X | re.Y` (0 when not a plain combination)."""
    if node is None:
        return 0
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        flag = getattr(re, node.attr, 0)
        return int(flag) if isinstance(flag, int) else 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _literal_flags(node.left) | _literal_flags(node.right)
    return 0


def _source_patterns() -> list[FoundPattern]:
    out: list[FoundPattern] = []
    src = Path(langchain_result_layer.__file__).parent
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(path.relative_to(src.parent).with_suffix("").parts)
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in _RE_FUNCTIONS
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, (str, bytes))
            ):
                continue
            flags_node = next((k.value for k in node.keywords if k.arg == "flags"), None)
            if flags_node is None:
                position = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "split": 3}
                index = position.get(node.func.attr, 2 if "find" in node.func.attr else 4)
                flags_node = node.args[index] if len(node.args) > index else None
            pattern = re.compile(node.args[0].value, _literal_flags(flags_node))
            anchored = node.func.attr in _ANCHORED_CALLS
            out.append(FoundPattern(f"{module}:line {node.lineno}", pattern, anchored))
    return out


def _method_calls() -> dict[str, set[str]]:
    """For each name a method is called on (`NAME.search(...)`), the methods called."""
    calls: dict[str, set[str]] = {}
    src = Path(langchain_result_layer.__file__).parent
    for path in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(
                node.value, (ast.Name, ast.Attribute)
            ):
                owner = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
                calls.setdefault(owner, set()).add(node.attr)
    return calls


def _anchored(found: FoundPattern, calls: dict[str, set[str]]) -> FoundPattern:
    """Mark an attribute pattern whose every use in the package is `match`/`fullmatch`."""
    attribute = found.name.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
    used = calls.get(attribute, set())
    if "[" in attribute or not used or not used <= _ANCHORED_CALLS:
        return found
    return FoundPattern(found.name, found.pattern, anchored=True)


def package_patterns() -> list[FoundPattern]:
    """Every compiled pattern of the package, without duplicates (first name kept).

    Returns:
        The patterns, attribute-found ones first.
    """
    seen: set[tuple[Any, int]] = set()
    out = []
    calls = _method_calls()
    attributes = [_anchored(found, calls) for found in _attribute_patterns()]
    for found in attributes + _source_patterns():
        key = (found.pattern.pattern, found.pattern.flags)
        if key not in seen:
            seen.add(key)
            out.append(found)
    return out


def _literal_chars(pattern: re.Pattern[Any]) -> list[str]:
    """The characters a pattern names (literals, class members and range ends)."""
    chars: list[str] = []

    def add(code: int) -> None:
        if 0 <= code < 0x110000 and not 0xD800 <= code <= 0xDFFF:
            chars.append(chr(code))

    def visit(items: Any) -> None:
        for op, arg in items:
            if op in (sre_constants.LITERAL, sre_constants.NOT_LITERAL):
                add(arg)
            elif op == sre_constants.IN:
                for sub_op, sub_arg in arg:
                    if sub_op == sre_constants.LITERAL:
                        add(sub_arg)
                    elif sub_op == sre_constants.RANGE:
                        add(sub_arg[0])
                        add(sub_arg[1])
            elif op in (
                sre_constants.MAX_REPEAT,
                sre_constants.MIN_REPEAT,
                sre_constants.POSSESSIVE_REPEAT,
            ):
                visit(arg[2])
            elif op == sre_constants.SUBPATTERN:
                visit(arg[-1])
            elif op == sre_constants.BRANCH:
                for branch in arg[1]:
                    visit(branch)
            elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
                visit(arg[1])
            elif op == sre_constants.ATOMIC_GROUP:
                visit(arg)
            elif op == sre_constants.GROUPREF_EXISTS:
                visit(arg[1])
                if arg[2] is not None:
                    visit(arg[2])

    source = pattern.pattern
    text = source.decode("latin-1") if isinstance(source, bytes) else source
    visit(sre_parse.parse(text, pattern.flags & ~re.ASCII if isinstance(source, str) else 0))
    return list(dict.fromkeys(chars))


def adversarial_lines(pattern: re.Pattern[Any], size: int) -> Iterator[str]:
    """Lines of about `size` characters meant to make `pattern` backtrack.

    Args:
        pattern: The pattern.
        size: Characters per line.

    Yields:
        The lines.
    """
    own = _literal_chars(pattern)
    if len(own) > _MAX_OWN_CHARS:  # a big class: an even sample of its members
        own = own[:: len(own) // _MAX_OWN_CHARS + 1]
    chars = list(dict.fromkeys(own + list(_BASE_CHARS)))
    for char in chars:
        for ending in _ENDINGS:
            yield char * size + ending
    if own:
        cycle = "".join(own)
        yield (cycle * (size // len(cycle) + 1))[:size]
        yield (cycle * (size // len(cycle) + 1))[:size] + "\r\n"
    few = (own[:6] + [c for c in "1 -|a" if c not in own[:6]])[:8]
    for a in few:
        for b in few:
            if a != b:
                yield (a + b) * (size // 2) + "\x01"
    yield ("1" * 40 + " error ") * (size // 47)
    yield "a|b|c\n---" + " " * size + "x\n"


@dataclass(frozen=True, slots=True)
class Timing:
    """The slowest adversarial line of one pattern."""

    seconds: float
    """Best of the runs on that line (one, or `_ROUNDS` more when it was slow)."""
    growth: float
    """Time on that line over time on its first quarter (linear: about 4; quadratic: 16)."""
    line: str
    """A short description of the line."""

    def slow(self, budget_s: float) -> bool:
        """Over the budget and growing faster than linearly (8x the time for 4x the line)."""
        return self.seconds > budget_s and self.growth > _SUPERLINEAR


def worst_time(found: FoundPattern, size: int, budget_s: float) -> Timing:
    """The slowest run of a pattern over its adversarial lines.

    A run is a full scan (`finditer`, every start position), or one `match` at the start
    for a pattern the package only ever calls with `match`/`fullmatch`. Sizes grow from 16
    characters to `size`, so a pattern that blows up exponentially is caught at a few dozen
    characters instead of hanging. A line over `budget_s` is timed again in turns with its
    first quarter (`_remeasured`; best of each kept: a busy machine is not a regex): a
    pattern is slow only when its time also grows faster than its input, so load on a shared
    machine cannot fail a linear pattern. The first slow line ends the sweep of that pattern.

    Args:
        found: The pattern.
        size: The largest line.
        budget_s: The time over which a line counts as slow.

    Returns:
        The slowest line's timing.
    """
    worst = Timing(0.0, 0.0, "")
    pattern = found.pattern
    is_bytes = isinstance(pattern.pattern, bytes)
    for step in (16, 24, 32, 48, 64, 2_000, size):
        for line in adversarial_lines(pattern, step):
            seconds = _run(found, _subject(line, is_bytes))
            growth = 0.0
            if seconds > budget_s:
                seconds, growth = _remeasured(found, line, is_bytes, seconds)
            if seconds > worst.seconds:
                worst = Timing(seconds, growth, f"{len(line)} chars: {line[:12]!r}...{line[-4:]!r}")
            if worst.slow(budget_s):
                return worst
    return worst


def _remeasured(
    found: FoundPattern, line: str, is_bytes: bool, first: float
) -> tuple[float, float]:
    """Best time on a slow line and its growth over its first quarter.

    The line and its quarter are timed in turns, `_ROUNDS` times each, and the best of each
    kept: a burst of load then slows both sides of the ratio alike instead of one (a single
    loaded run of the whole line once made a linear pattern look 14x slower than its quarter).
    """
    whole = _subject(line, is_bytes)
    quarter = _subject(line[: len(line) // 4] + line[-2:], is_bytes)
    best, base = first, float("inf")
    for _ in range(_ROUNDS):
        base = min(base, _run(found, quarter))
        best = min(best, _run(found, whole))
    return best, best / max(base, 1e-6)


def _subject(line: str, is_bytes: bool) -> Any:
    return line.encode("utf-8", "surrogatepass") if is_bytes else line


def _run(found: FoundPattern, subject: Any) -> float:
    start = time.perf_counter()
    if found.anchored:
        found.pattern.match(subject)
    else:
        for _ in found.pattern.finditer(subject):
            pass
    return time.perf_counter() - start
