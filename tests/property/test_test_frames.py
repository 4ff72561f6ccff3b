"""`_in_test_code` (two gated patterns) agrees with the one combined pattern it replaces."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.views._salience import _in_test_code

_COMBINED = re.compile(
    r"[/\\](?:tests?|spec|specs|__tests__)[/\\]|_(?:test|spec)\.\w{1,8}[:(]|\btest_\w{1,200}\.py"
    r"|(?<![\w$])[\w$]{0,200}(?:Test|Tests|Spec|IT)\.\w{1,200}\("
)
_HINTS = ("test", "Test", "spec", "Spec", "IT.")
_PIECES = st.sampled_from(
    [
        *("/", "\\", "_", ".", "(", ":", " ", "$", "a", "Z", "9", "py", "rb", "at "),
        *("test", "tests", "Test", "Tests", "spec", "specs", "Spec", "IT", "__tests__", "test_"),
    ]
)
_FRAMES = st.one_of(st.lists(_PIECES, max_size=14).map("".join), st.text(max_size=60))


def _combined(frame: str) -> bool:
    return any(h in frame for h in _HINTS) and _COMBINED.search(frame) is not None


@settings(max_examples=800, deadline=None)
@given(frame=_FRAMES)
def test_test_frames_are_those_of_the_combined_pattern(frame: str) -> None:
    assert _in_test_code(frame) == _combined(frame)


def test_examples() -> None:
    assert _in_test_code("    at com.acme.FooTest.run(FooTest.java:12)")
    assert _in_test_code("/home/x/tests/mocks/a.php:3")
    assert not _in_test_code("    at com.acme.Main.run(Main.java:42)")
