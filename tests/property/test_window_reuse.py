"""`windows` reuses the windows a fit made before: the same windows as made afresh.

A fit renders several selections of one ranking (each probe a few more or fewer lines) and
cuts a line shorter when it does not fit; the windows it made for a run of lines are kept
in the `LineTexts` and reused while the run and its lines' shown forms are the same. On
any text, any sequence of selections and shortenings, each probe's windows equal those
made by a `LineTexts` that never saw the earlier probes.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.views._lines import LineLimits, LineTexts, windows
from langchain_result_layer.views._salience import Analysis
from tests.property.strategies import log_analyses

_LIMITS = LineLimits(normal=150, error=250, anchor=400, anchors=2)


@settings(max_examples=300, deadline=None)
@given(analysis=log_analyses(700), data=st.data())
def test_reused_windows_equal_windows_made_afresh(analysis: Analysis, data: st.DataObject) -> None:
    numbers = list(range(1, analysis.total_lines + 1))
    texts = LineTexts(analysis, _LIMITS, numbers[:2])
    shortened: list[int] = []
    for _ in range(data.draw(st.integers(1, 6))):
        picked = sorted(data.draw(st.sets(st.sampled_from(numbers))))
        if data.draw(st.booleans()):
            line = data.draw(st.sampled_from(numbers))
            if texts.shorten(line):
                shortened.append(line)
        fresh = LineTexts(analysis, _LIMITS, numbers[:2])
        for line in shortened:
            fresh.shorten(line)
        reused, made = windows(analysis, picked, texts), windows(analysis, picked, fresh)
        assert reused == made
        assert [w.as_item() for w in reused] == [w.as_item() for w in made]
