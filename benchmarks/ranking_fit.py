"""Ranking fit: can a score learned from vocabulary-free features rank evidence better?

The line ranking (`views._salience`: `Analysis.ranked`, the lazy greedy `_greedy` over the
rule priorities) is hand-tuned. This script fits a *learned* re-ranking on the tuned
repositories of the evidence benchmark only (`benchmarks/evidence_recall.py`: the fixed split
by repository; no validation log is analysed here) and measures it by cross-validation
*within* the tuned set, by repository: each of its `TUNED_FOLDS` folds of whole repositories
is held out in turn, the weights are fitted on the other three and the held-out fold is
scored.

The model is log-linear over the rule priority: a candidate line (one with a priority) is
ranked by `priority * exp(w . x)`, `x` its features, through the same `_greedy` (so the group
and identical-line factors still apply); `w = 0` is today's ranking. Features, all
vocabulary-free (`FEATURES`): the line's role (exit, error, detail, context, tail, fill), its
own salience, relative position, distance to the end, to the next verdict and to the nearest
error, how often its shape (digits folded) occurs in this log, its length, indentation, a
blank line above, how many candidates share its group, where it stands in its run of
consecutive ranked lines (first, last, run length), and a dedent before or after it.

The measure is the ranking depth of `evidence_recall --depth`: per held-out fold, the logs
whose needles all lie in the top 20 / 30 / 40 / 60 / 120 ranked lines (a 1,000-token view shows
about 30, a 2,000-token view about 80). Three fits:

1. `listwise`: each needle line's softmax against the non-needle candidates of its log (the
   300 best by priority), the worst needle of each log by a soft minimum, logs weighted
   equally, L2 toward `w = 0`; every feature (needs numpy, which the test extra installs).
2. `single`: one feature at a time, its weight chosen on a grid by the depth counts (top 20 +
   30 + 60) of the three training folds.
3. `coordinate`: coordinate ascent of several weights together on the same depth counts.

Run: `python -m benchmarks.ranking_fit` (corpus: `$LRL_CORPUS` or `../shared/corpus`; a few
minutes; nothing written); `python -m benchmarks.ranking_fit tail_floor=6.5` fits from changed
`SalienceSettings` (here: the tail floor before this fit chose it). `--quick`: a few logs per
source (a smoke run).
"""

from __future__ import annotations

import bisect
import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import corpus_path
from benchmarks.evidence_recall import DEPTHS, Case, _build_logs, parse_settings, tuned_folds

if TYPE_CHECKING:
    from langchain_result_layer.views._salience import Analysis
    from langchain_result_layer.views._salience_settings import SalienceSettings

ROLES = ("exit", "error", "detail", "context", "tail", "fill")
FEATURES = (
    *(f"role_{r}" for r in ROLES),
    "own",
    "position",
    "to_end",
    "to_verdict",
    "to_error",
    "shape_count",
    "length",
    "indented",
    "after_blank",
    "group_count",
    "run_first",
    "run_last",
    "run_length",
    "dedent_after",
    "dedent_before",
)
"""The features of a candidate line, in the order of its vector (see the module docstring)."""

GRID = (-1.0, -0.5, -0.25, -0.1, 0.0, 0.1, 0.25, 0.5, 1.0)
"""Weights tried for one feature (a factor of `exp(weight)` per unit)."""

COORDINATE = ("role_tail", "run_length", "shape_count", "to_end", "length", "to_error")
"""The features of the coordinate-ascent fit (the ones the single fits moved)."""


@dataclass
class Item:
    """One tuned log, analysed once: its candidate lines, their features and needles."""

    fold: int
    case: Case
    analysis: Analysis
    lines: list[int]
    log_priority: list[float]
    x: list[list[float]]
    needle_lines: list[list[int]]
    """For each needle, the candidate lines (indices into `lines`) that hold it."""


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def features(analysis: Analysis, raw_lines: Sequence[str]) -> tuple[list[int], list[list[float]]]:
    """The candidate lines of an analysis (those with a priority) and their feature vectors."""
    from langchain_result_layer.views._ranking import _group_key
    from langchain_result_layer.views._salience import _fold

    total = max(1, analysis.total_lines)
    priority, roles, own = analysis.priority, analysis.roles, analysis.own
    lines = sorted(priority)
    texts = {ln: analysis.texts.get(ln) or analysis.text(ln) or "" for ln in lines}
    shapes = Counter(_fold(x) for x in raw_lines)
    groups = Counter(_group_key(texts[ln]) for ln in lines)
    verdicts, errors = analysis.verdict_lines, analysis.error_lines
    real = {ln for ln in lines if roles.get(ln) != "fill"}
    run_start: dict[int, int] = {}
    for ln in sorted(real):
        run_start[ln] = run_start.get(ln - 1, ln)
    run_length = Counter(run_start.values())

    def raw(ln: int) -> str:
        return raw_lines[ln - 1] if 1 <= ln <= len(raw_lines) else ""

    rows: list[list[float]] = []
    for ln in lines:
        text, role = texts[ln], roles.get(ln, "context")
        k = bisect.bisect_left(verdicts, ln)
        to_verdict = verdicts[k] - ln if k < len(verdicts) else total - ln
        k = bisect.bisect_left(errors, ln)
        near = [abs(errors[j] - ln) for j in (k - 1, k) if 0 <= j < len(errors)]
        line, after, before = raw(ln), raw(ln + 1), raw(ln - 1)
        rows.append(
            [
                *(1.0 if role == r else 0.0 for r in ROLES),
                own.get(ln, 0.0) / 10,
                ln / total,
                math.log1p(total - ln),
                math.log1p(to_verdict),
                math.log1p(min(near) if near else total),
                math.log(shapes.get(_fold(line), 1)),
                math.log1p(len(text)),
                1.0 if text[:1] in (" ", "\t") else 0.0,
                1.0 if not before.strip() else 0.0,
                math.log(groups[_group_key(text)]),
                1.0 if ln in real and ln - 1 not in real else 0.0,
                1.0 if ln in real and ln + 1 not in real else 0.0,
                math.log1p(run_length.get(run_start.get(ln, -1), 0)),
                1.0 if after.strip() and _indent(after) < _indent(line) else 0.0,
                1.0 if before.strip() and _indent(before) < _indent(line) else 0.0,
            ]
        )
    return lines, rows


def load(
    corpus: Path, *, limit: int | None = None, salience: SalienceSettings | None = None
) -> list[Item]:
    """Every tuned log, analysed by the view `choose_view` picks (never a validation log)."""
    from langchain_result_layer.core.tokens import TiktokenCounter
    from langchain_result_layer.views import choose_view
    from langchain_result_layer.views.command import CommandView
    from langchain_result_layer.views.logs import LogView

    counter = TiktokenCounter(encoding="o200k_base")
    items: list[Item] = []
    for fold, cases in enumerate(tuned_folds(_build_logs(corpus, counter, limit))):
        for case in cases:
            kind = choose_view(case.raw).kind
            view = LogView(salience=salience) if kind == "log" else CommandView(salience=salience)
            analysis = getattr(view.prepare(case.raw).data, "analysis", None)
            if analysis is None:
                continue
            raw_lines = case.raw.split("\n")
            lines, x = features(analysis, raw_lines)
            needle_lines = [
                [
                    i
                    for i, ln in enumerate(lines)
                    if ln <= len(raw_lines) and any(a in raw_lines[ln - 1] for a in alts)
                ]
                for alts in case.needles
            ]
            items.append(
                Item(
                    fold=fold,
                    case=case,
                    analysis=analysis,
                    lines=lines,
                    log_priority=[math.log(analysis.priority[ln]) for ln in lines],
                    x=x,
                    needle_lines=needle_lines,
                )
            )
    return items


Weights = dict[str, float]
Counts = dict[int, list[int]]
"""Depth -> logs with every needle in the top `depth`, per fold."""


def depth_of(item: Item, weights: Weights) -> int | None:
    """The top-`k` of the re-ranked lines that holds every needle (`None`: a needle unranked)."""
    from langchain_result_layer.views._ranking import _greedy

    index = [(FEATURES.index(name), w) for name, w in weights.items() if w]
    values = {
        ln: math.exp(min(700.0, lp + sum(row[j] * w for j, w in index)))
        for ln, lp, row in zip(item.lines, item.log_priority, item.x, strict=True)
    }
    position = {ln: k for k, ln in enumerate(_greedy(item.analysis, values))}
    depth = 0
    for found in item.needle_lines:
        if not found:
            return None
        depth = max(depth, min(position[item.lines[i]] for i in found) + 1)
    return depth


def counts(items: Sequence[Item], weights: Weights, folds: int) -> Counts:
    """Per depth of `DEPTHS`, per fold: the logs whose needles all rank within it."""
    out: Counts = {k: [0] * folds for k in DEPTHS}
    for item in items:
        d = depth_of(item, weights)
        for k in DEPTHS:
            if d is not None and d <= k:
                out[k][item.fold] += 1
    return out


def _objective(c: Counts, folds: Sequence[int]) -> int:
    return sum(c[k][f] for k in (20, 30, 60) for f in folds)


def _held_out(
    n_folds: int, fit: Callable[[list[int]], Weights], score: Callable[[Weights], Counts]
) -> tuple[Counts, list[Weights]]:
    """Each fold scored with the weights fitted on the others."""
    out: Counts = {k: [0] * n_folds for k in DEPTHS}
    chosen: list[Weights] = []
    for f in range(n_folds):
        weights = fit([g for g in range(n_folds) if g != f])
        chosen.append(weights)
        c = score(weights)
        for k in DEPTHS:
            out[k][f] = c[k][f]
    return out, chosen


def grid_fits(
    items: Sequence[Item], n_folds: int, names: Sequence[str] = FEATURES
) -> list[tuple[str, Counts, list[Weights]]]:
    """Each feature alone, its weight chosen on the training folds' depth counts."""
    out = []
    for name in names:
        per = {g: counts(items, {name: g}, n_folds) for g in GRID}

        def fit(train: list[int], per: dict[float, Counts] = per, name: str = name) -> Weights:
            def value(weight: float) -> tuple[int, float]:
                return _objective(per[weight], train), -abs(weight)

            return {name: max(GRID, key=value)}

        def score(w: Weights, per: dict[float, Counts] = per, name: str = name) -> Counts:
            return per[w[name]]

        held, chosen = _held_out(n_folds, fit, score)
        out.append((name, held, chosen))
    return out


def coordinate_fit(
    items: Sequence[Item], n_folds: int, names: Sequence[str] = COORDINATE, rounds: int = 2
) -> tuple[Counts, list[Weights]]:
    """Coordinate ascent of several weights on the training folds' depth counts."""
    cache: dict[tuple[float, ...], Counts] = {}

    def score(w: Weights) -> Counts:
        key = tuple(w[n] for n in names)
        if key not in cache:
            cache[key] = counts(items, w, n_folds)
        return cache[key]

    def fit(train: list[int]) -> Weights:
        w = dict.fromkeys(names, 0.0)
        for _ in range(rounds):
            for name in names:
                w[name] = max(
                    GRID, key=lambda g: (_objective(score({**w, name: g}), train), -abs(g))
                )
        return w

    return _held_out(n_folds, fit, score)


def listwise_fit(
    items: Sequence[Item], n_folds: int, *, reg: float = 1e-3, steps: int = 200, top: int = 300
) -> tuple[Counts, list[Weights]]:
    """The soft worst-needle listwise fit of every feature (module docstring, fit 1)."""
    import numpy as np

    packs = []
    for item in items:
        needles = {i for found in item.needle_lines for i in found}
        if not needles:
            continue
        order = sorted(range(len(item.lines)), key=lambda i: -item.log_priority[i])
        keep = sorted(set(order[:top]) | needles)
        x = np.array([[item.log_priority[i], *item.x[i]] for i in keep])
        y = np.array([i in needles for i in keep])
        packs.append((item.fold, x, y))
    d = len(FEATURES) + 1
    w0 = np.zeros(d)
    w0[0] = 1.0

    def fit(train: list[int]) -> Weights:
        w, m1, m2 = w0.copy(), np.zeros(d), np.zeros(d)
        chosen = [(x, y) for fold, x, y in packs if fold in train]
        for t in range(1, steps + 1):
            g = np.zeros(d)
            for x, y in chosen:
                s = x @ w
                xp, sp, xn, sn = x[y], s[y], x[~y], s[~y]
                if not sn.size:
                    continue
                a = np.exp(-(sp - sp.min()))
                share = a / a.sum()  # the soft minimum's weights over the needle lines
                soft_min = sp.min() - math.log(a.sum())
                g_min = share @ xp
                top_s = max(sn.max(), soft_min)
                en, ep = np.exp(sn - top_s), math.exp(soft_min - top_s)
                g += -g_min + (en @ xn + ep * g_min) / (en.sum() + ep)
            g = g / max(1, len(chosen)) + reg * (w - w0)
            m1 = 0.9 * m1 + 0.1 * g
            m2 = 0.999 * m2 + 0.001 * g * g
            w -= 0.05 * (m1 / (1 - 0.9**t)) / (np.sqrt(m2 / (1 - 0.999**t)) + 1e-8)
        # Scaled so that the priority keeps a factor of 1 (`_greedy`'s factors apply to it).
        return {name: float(w[j + 1] / w[0]) for j, name in enumerate(FEATURES)}

    return _held_out(n_folds, fit, lambda w: counts(items, w, n_folds))


def _line(label: str, c: Counts) -> str:
    return f"{label:34s} " + "  ".join(f"top {k}: {c[k]} = {sum(c[k])}" for k in DEPTHS)


def report(corpus: Path, overrides: dict[str, Any], *, limit: int | None = None) -> str:
    """Every fit's held-out depth counts next to today's ranking (the module docstring).

    `overrides`: `SalienceSettings` fields changed before the fit (the ranking it starts from).
    """
    from langchain_result_layer.views._salience_settings import SalienceSettings

    items = load(corpus, limit=limit, salience=SalienceSettings(**overrides))
    n_folds = max((i.fold for i in items), default=0) + 1
    out = [
        f"settings changed: {overrides or 'none'}",
        f"{len(items)} tuned logs in {n_folds} folds of whole repositories; held-out counts "
        "(each fold scored with weights fitted on the others)",
        _line("today's ranking (w = 0)", counts(items, {}, n_folds)),
    ]
    for name, held, chosen in grid_fits(items, n_folds):
        picks = [w[name] for w in chosen]
        out.append(_line(f"single {name} {picks}", held))
    held, chosen = coordinate_fit(items, n_folds)
    out.append(_line("coordinate ascent", held))
    out += [f"  fold {f + 1} weights: {w}" for f, w in enumerate(chosen)]
    try:
        held, chosen = listwise_fit(items, n_folds)
    except ImportError:
        out.append("listwise: numpy is not installed")
    else:
        out.append(_line("listwise (every feature)", held))
        out += [
            f"  fold {f + 1} weights: { {k: round(v, 2) for k, v in w.items()} }"
            for f, w in enumerate(chosen)
        ]
    return "\n".join(out)


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    pairs = [a for a in sys.argv[1:] if "=" in a and not a.startswith("--")]
    corpus = corpus_path(None) or Path("../shared/corpus")
    print(report(corpus, parse_settings(pairs), limit=3 if quick else None))
