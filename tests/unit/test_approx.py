"""The calibrated estimate: conservative per content type, tight enough, fast paths agree."""

from __future__ import annotations

import base64
import inspect
import json
import math
import random
import statistics
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core._approx import (
    FEATURE_NAMES,
    WEIGHTS,
    estimate_tokens,
    token_features,
)
from langchain_result_layer.core.tokens import ApproximateTokenCounter, load_offline_encoding

O200K = load_offline_encoding("o200k_base")
CL100K = load_offline_encoding("cl100k_base")


def exact(text: str) -> int:
    assert O200K is not None
    assert CL100K is not None
    return max(len(O200K.encode_ordinary(text)), len(CL100K.encode_ordinary(text)))


def windows(text: str, rng: random.Random, n: int, lo: int = 64, hi: int = 6_000) -> list[str]:
    out = []
    for _ in range(n):
        size = min(len(text), int(lo * (hi / lo) ** rng.random()))
        start = rng.randrange(0, len(text) - size + 1)
        out.append(text[start : start + size])
    return out


def _python_source() -> str:
    import argparse
    import collections
    import json as json_module
    import logging

    return "\n".join(inspect.getsource(m) for m in (argparse, collections, json_module, logging))


def _json_records(rng: random.Random, indent: int | None) -> str:
    records = [
        {
            "id": i,
            "name": rng.choice(["alpha", "Beta Group", "gamma-ray", "delta_force"]) + str(i),
            "amount": round(rng.uniform(0, 10_000), 2),
            "tags": rng.sample(["red", "green", "blue", "urgent", "archived"], 2),
            "ok": rng.random() < 0.5,
        }
        for i in range(3_000)
    ]
    return json.dumps(records, indent=indent)


def _random_cjk(rng: random.Random) -> str:
    return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(30_000))


def _emoji(rng: random.Random) -> str:
    return "".join(chr(rng.randint(0x1F300, 0x1F64F)) for _ in range(20_000))


GENERATED: dict[str, Callable[[random.Random], str]] = {
    "python": lambda rng: _python_source(),
    "json_compact": lambda rng: _json_records(rng, None),
    "json_indented": lambda rng: _json_records(rng, 2),
    "base64": lambda rng: base64.b64encode(rng.randbytes(60_000)).decode(),
    "hex": lambda rng: rng.randbytes(40_000).hex(),
    "uuid": lambda rng: "\n".join(str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(3_000)),
    "cjk_random": _random_cjk,
    "emoji": _emoji,
}


def _check_conservative(kind: str, texts: list[str], *, max_median_over: float) -> None:
    under = []
    ratios = []
    for text in texts:
        real = exact(text)
        est = estimate_tokens(text)
        if est < real:
            under.append(est / real)
        if real >= 100:
            ratios.append(est / real)
    # The calibration target is < 1% of windows under-counted (measured on 600 windows per
    # type by the benchmark); a small test sample may hold one or two, and only slightly.
    assert len(under) <= max(2, len(texts) // 50), f"{kind}: {len(under)}/{len(texts)} under"
    assert all(r >= 0.9 for r in under), (kind, under)
    assert statistics.median(ratios) <= max_median_over, (kind, statistics.median(ratios))


@pytest.mark.parametrize("kind", sorted(GENERATED))
def test_conservative_on_generated_content(kind: str) -> None:
    rng = random.Random(f"approx-{kind}")
    text = GENERATED[kind](rng)
    limit = {"python": 1.4, "json_compact": 1.35, "json_indented": 1.4}.get(kind, 1.3)
    _check_conservative(kind, windows(text, rng, 60), max_median_over=limit)


@pytest.mark.corpus
def test_conservative_on_real_logs(corpus: Path) -> None:
    from langchain_result_layer.core.normalize import clean_for_display

    rng = random.Random("approx-logs")
    paths = sorted(corpus.glob("logchunks/**/*.log"))[:20] + sorted(corpus.glob("loghub/*/*.log"))
    texts: list[str] = []
    for path in paths:
        raw = path.read_text(encoding="utf-8", errors="replace")
        texts += windows(clean_for_display(raw), rng, 6)
    _check_conservative("log", texts, max_median_over=1.35)


def test_far_above_langchain_where_it_under_counts() -> None:
    rng = random.Random(3)
    text = base64.b64encode(rng.randbytes(30_000)).decode()
    naive = math.ceil(len(text) / 4)
    real = exact(text)
    assert real > 2 * naive  # the 4 chars/token rule under-counts base64 badly
    assert estimate_tokens(text) >= real


def test_features_are_named_and_weights_are_known() -> None:
    assert len(token_features("abc")) == len(FEATURE_NAMES)
    assert set(WEIGHTS) <= set(FEATURE_NAMES)
    assert all(w >= 0 for w in WEIGHTS.values())


@pytest.mark.parametrize(
    ("text", "feature", "value"),
    [
        ("Hello world", "letter_runs", 2),
        ("getElementById", "humps", 3),
        ("1234567", "digit_runs", 1),
        ("1234567", "digit_triples", 2),
        ("a  b   c", "blank_runs_2", 2),
        ("x\n\n\ny\nz", "newline_runs", 2),
        ("你好的", "wide_common", 2),  # 你 and 的 are single tokens; 好 is not counted
        ("ok 😀", "lead_E", 1),
    ],
)
def test_feature_counts(text: str, feature: str, value: int) -> None:
    feats = dict(zip(FEATURE_NAMES, token_features(text), strict=True))
    if feature == "wide_common":
        # Which characters are single tokens is the tokenizer's business: recompute.
        value = sum(exact(ch) == 1 for ch in text)
    assert feats[feature] == value


def test_unit_separators_are_still_counted() -> None:
    # "\x1f" is the estimator's internal placeholder: real ones must not be miscounted.
    text = "a\x1fb\x1f" * 50
    assert estimate_tokens(text) >= exact(text)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_bounds_hold_for_any_text(text: str) -> None:
    est = estimate_tokens(text)
    if not text:
        assert est == 0
        return
    assert 1 <= est <= len(text.encode("utf-8", "surrogatepass"))
    assert est == ApproximateTokenCounter().count(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=400))
def test_random_unicode_is_rarely_under_counted(text: str) -> None:
    # Per example the estimate may be low in rare cases; by far most are not. This checks
    # the hard cap: never more than the byte length, and at least a quarter of the truth.
    est = estimate_tokens(text)
    assert est >= exact(text) / 4


def test_lone_surrogates_are_estimated() -> None:
    assert estimate_tokens("\ud800\udfff abc \udc00") >= 3
