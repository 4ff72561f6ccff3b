"""Log template grouping accuracy on the loghub samples, next to drain3 and Drain's published mean.

Grouping accuracy (GA), as defined by the Loghub benchmark (Zhu et al., ICSE-SEIP 2019) and
the Drain paper: a line is parsed correctly when the group it was put in contains exactly the
lines of its true group (`EventId`). GA = correctly grouped lines / all lines.

Data: `loghub/<name>/<name>_2k.log` with labels from `loghub2_2k/<name>/..._corrected.csv`
(the revised labels of loghub-2.0) where available, else `loghub/<name>/..._structured.csv`
(Android). The corrected and original labels are also reported separately.

Settings measured in the same run:

- `ours, raw lines`: the product setting. The log view's miner gets whole raw lines and finds
  each line's header (timestamp, level, component) itself; no per-dataset configuration.
- `ours, Content`: the miner gets the `Content` column (the message with the header already
  parsed by a per-dataset format), the setting of the published benchmarks.
- `drain3, Content` / `drain3, raw lines`: drain3 0.9.x (the maintained Drain implementation)
  with its default configuration.
- `drain3 + our header split`: drain3 on the messages our header detection extracts.

Drain's published mean GA over the 16 loghub datasets is 0.865 (with per-dataset regular
expressions and tuned thresholds); it is quoted, not re-measured: this corpus holds 7 of the 16.

Run: `python -m benchmarks.log_templates` (writes benchmarks/results/log_templates.json).
"""

from __future__ import annotations

import csv
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import BenchResult, Table, corpus_path

DRAIN_PUBLISHED_MEAN = 0.865
DATASETS = ("Android", "BGL", "HealthApp", "Linux", "OpenStack", "Spark", "Zookeeper")
QUICK_DATASETS = ("Zookeeper", "HealthApp")


def grouping_accuracy(pred: Sequence[Any], truth: Sequence[str]) -> float:
    """Loghub grouping accuracy."""
    true_groups: dict[str, set[int]] = defaultdict(set)
    pred_groups: dict[Any, set[int]] = defaultdict(set)
    for i, (p, t) in enumerate(zip(pred, truth, strict=False)):
        true_groups[t].add(i)
        pred_groups[p].add(i)
    correct = 0
    for members in true_groups.values():
        first = next(iter(members))
        if pred_groups[pred[first]] == members:
            correct += len(members)
    return correct / max(1, len(truth))


def _load(
    corpus: Path, name: str, corrected: bool
) -> tuple[list[str], list[str], list[str]] | None:
    log = corpus / "loghub" / name / f"{name}_2k.log"
    if corrected:
        labels = corpus / "loghub2_2k" / name / f"{name}_2k.log_structured_corrected.csv"
    else:
        labels = corpus / "loghub" / name / f"{name}_2k.log_structured.csv"
    if not log.exists() or not labels.exists():
        return None
    with open(log, encoding="utf-8", errors="replace", newline="") as fh:
        raw = fh.read().split("\n")
    if raw and raw[-1] == "":
        raw.pop()
    raw = [line.rstrip("\r") for line in raw]
    with open(labels, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if len(rows) != len(raw):
        return None
    return raw, [r["Content"] for r in rows], [r["EventId"] for r in rows]


def _ours(lines: list[str], *, strip_header: bool) -> list[int]:
    from langchain_result_layer.views._templates import mine_templates

    return mine_templates(lines, strip_header=strip_header).assignments


def _drain3(lines: list[str]) -> list[int]:
    import logging

    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    logging.getLogger("drain3").setLevel(logging.WARNING)
    config = TemplateMinerConfig()
    config.profiling_enabled = False
    miner = TemplateMiner(config=config)
    return [miner.add_log_message(line)["cluster_id"] for line in lines]
    # Assign every line to its cluster's final template (clusters only grow in drain3).


def _messages(lines: list[str]) -> list[str]:
    from langchain_result_layer.views._templates import message_offset

    return [line[message_offset(line) :] for line in lines]


def run(*, corpus: Path | None, quick: bool = False) -> BenchResult:
    """Grouping accuracy per dataset and setting."""
    result = BenchResult(name="log_templates")
    corpus = corpus_path(corpus) if corpus is None else corpus
    if corpus is None or not (corpus / "loghub").exists():
        result.notes.append("corpus not found: nothing measured")
        return result
    import importlib.util

    have_drain = importlib.util.find_spec("drain3") is not None
    names = QUICK_DATASETS if quick else DATASETS
    settings: dict[str, Callable[[list[str], list[str]], list[int]]] = {
        "ours, raw lines": lambda raw, content: _ours(raw, strip_header=True),
        "ours, Content": lambda raw, content: _ours(content, strip_header=False),
    }
    if have_drain:
        settings["drain3, Content"] = lambda raw, content: _drain3(content)
        settings["drain3, raw lines"] = lambda raw, content: _drain3(raw)
        settings["drain3 + our header split"] = lambda raw, content: _drain3(_messages(raw))
    table = Table(
        title="Grouping accuracy (corrected loghub-2.0 labels where available)",
        columns=["dataset", "labels", "lines", "true groups", *settings],
    )
    per_setting: dict[str, list[float]] = {name: [] for name in settings}
    timings: dict[str, float] = dict.fromkeys(settings, 0.0)
    original: dict[str, list[float]] = {name: [] for name in settings}
    data: dict[str, Any] = {}
    for name in names:
        corrected = _load(corpus, name, corrected=True)
        labels = "loghub-2.0 corrected"
        loaded = corrected
        if loaded is None:
            loaded = _load(corpus, name, corrected=False)
            labels = "loghub original"
        if loaded is None:
            continue
        raw, content, truth = loaded
        row: list[Any] = [name, labels, len(raw), len(set(truth))]
        data[name] = {}
        for setting, fn in settings.items():
            start = time.perf_counter()
            pred = fn(raw, content)
            timings[setting] += time.perf_counter() - start
            ga = grouping_accuracy(pred, truth)
            per_setting[setting].append(ga)
            data[name][setting] = {"ga": ga, "groups": len(set(pred))}
            row.append(ga)
            orig = _load(corpus, name, corrected=False)
            if orig is not None:
                original[setting].append(grouping_accuracy(pred, orig[2]))
        table.rows.append(row)
    if not table.rows:
        result.notes.append("no labelled loghub samples found")
        return result
    means = ["mean", "", "", ""] + [sum(v) / len(v) for v in per_setting.values()]
    table.rows.append(means)
    table.rows.append(
        ["Drain (published, 16 datasets)", "", "", "", DRAIN_PUBLISHED_MEAN]
        + [""] * (len(settings) - 1)
    )
    result.tables.append(table)
    orig_table = Table(
        title="Mean grouping accuracy against the original loghub labels",
        columns=["setting", "datasets", "mean GA", "seconds (all datasets)"],
    )
    for setting in settings:
        values = original[setting]
        orig_table.rows.append(
            [setting, len(values), sum(values) / max(1, len(values)), timings[setting]]
        )
    result.tables.append(orig_table)
    ours = per_setting["ours, raw lines"]
    mean_ours = sum(ours) / len(ours)
    result.notes.append(
        f"ours on raw lines (the log view's setting, no per-dataset configuration): mean GA "
        f"{mean_ours:.3f} over {len(ours)} datasets; Drain's published mean is "
        f"{DRAIN_PUBLISHED_MEAN} over 16 datasets (different set; quoted, not re-measured)"
        + (" (quick run: 2 datasets)" if quick else "")
    )
    if have_drain:
        d3 = per_setting["drain3, Content"]
        result.notes.append(
            f"drain3 (default config) on Content, same datasets: mean GA {sum(d3) / len(d3):.3f}; "
            f"ratio ours(raw)/drain3(Content) = {mean_ours / max(1e-9, sum(d3) / len(d3)):.2f}x"
        )
    else:
        result.notes.append("drain3 is not installed: its columns are left out")
    result.data = data
    return result


if __name__ == "__main__":
    bench = run(corpus=None, quick="--quick" in sys.argv)
    print(bench.render())
    print(bench.write_json())
