"""A CI system's stamp before every line: found by its shape, read past, shown as printed."""

from __future__ import annotations

from benchmarks import fresh_logs
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.views._line_prefix import line_prefix
from langchain_result_layer.views._salience import analyse
from langchain_result_layer.views.command import CommandView
from tests.property.strategies import PIECES
from tests.views.conftest import assert_fits, make_ctx

FRESH = fresh_logs.FRESH_DIR


def _gha(i: int) -> str:
    return f"2026-12-07T20:{i // 60 % 60:02}:{i % 60:02}.{i * 7919 % 10_000_000:07}Z "


def _jenkins(i: int) -> str:
    return f"[2026-12-07T20:56:{i % 60:02}.{i % 1000:03}Z] "


def _buildkite(i: int) -> str:
    return f"\x1b_bk;t={1_796_676_992_954 + i * 37}\x07"


STAMPS = {"gha": _gha, "jenkins": _jenkins, "buildkite": _buildkite}


def _prefixed(text: str, stamp: str) -> str:
    make = STAMPS[stamp]
    lines = text.split("\n")
    last = lines.pop() if not text.endswith("\n") else None
    if text.endswith("\n"):
        lines.pop()
    out = "".join(make(i) + line + "\n" for i, line in enumerate(lines))
    return out + (make(len(lines)) + last if last else "")


def test_each_layout_s_stamp_is_found_and_removed_once_per_line() -> None:
    body = "".join(f"step {i}: 12:30 done\n" for i in range(30))
    for stamp in STAMPS:
        text = _prefixed(body, stamp)
        prefix = line_prefix(text)
        assert prefix is not None, stamp
        assert prefix.sub("", text) == body, stamp


def test_no_prefix_in_plain_logs_or_in_a_mixed_minority() -> None:
    assert line_prefix("".join(f"cc -c m{i}.c\n" for i in range(50))) is None
    assert line_prefix("12:00 a\n" * 5) is None  # too few lines to say
    # Numbers that are not a time, or too few digits: not a stamp.
    assert line_prefix("".join(f"{i} 1234567890 x\n" for i in range(40))) is None
    assert line_prefix("".join(f"12:{i % 60:02} x\n" for i in range(40))) is None
    # Stamped lines that are fewer than nine in ten of the sample: no prefix.
    mixed = "".join((_gha(i) if i % 4 else "") + f"line {i}\n" for i in range(100))
    assert line_prefix(mixed) is None


def test_stamp_only_lines_and_crlf_become_empty_lines() -> None:
    text = "".join(f"{_gha(i)}x{i}\r\n" if i % 3 else _gha(i).rstrip() + "\n" for i in range(30))
    prefix = line_prefix(text)
    assert prefix is not None
    assert prefix.sub("", text).split("\n")[:3] == ["", "x1\r", "x2\r"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=40),
    st.sampled_from(sorted(STAMPS)),
)
def test_a_stamped_text_is_analysed_as_the_text_itself(pieces: list[str], stamp: str) -> None:
    body = "".join(pieces).replace("\x1b", "")  # the body's own escapes aside
    lines = body.split("\n") * 3
    body = "\n".join(f"{i} {line}" for i, line in enumerate(lines + [""] * (12 - len(lines))))
    text = _prefixed(body, stamp)
    assert line_prefix(text) is not None
    plain, stamped = analyse(body), analyse(text)
    assert stamped.priority == plain.priority
    assert stamped.roles == plain.roles
    assert stamped.error_lines == plain.error_lines
    assert stamped.verdict_lines == plain.verdict_lines
    # The lines shown are the raw ones, stamp included; their offsets are the raw text's.
    assert stamped.line_prefix is not None
    assert plain.line_prefix is None
    assert stamped.raw_chars == len(text)
    assert stamped.byte_size(text) == len(text.encode("utf-8", "surrogatepass"))
    for line_no in list(stamped.priority)[:20]:
        span = stamped.span(line_no)
        assert span is not None
        assert text[span[0] : span[1]].rstrip("\n").rstrip("\r") == stamped.raw_line(line_no)


def test_real_failures_keep_their_evidence_under_a_ci_stamp() -> None:
    """Fresh batch 1's failures, stamped as GitHub Actions and Jenkins print them, keep every
    needle the unstamped log keeps in the command view at 2,000 tokens."""
    rows = [r for r in fresh_logs.load_rows(FRESH) if r["batch"] == "1"][:8]
    assert rows
    view = CommandView()
    ctx = make_ctx("command", tokens=2_000)
    for row in rows:
        raw = fresh_logs.read_log(FRESH / row["path"])
        plain = view.render(view.prepare(raw), ctx).content
        assert isinstance(plain, str)
        kept = [n for n in row["needles"] if n in plain]
        for stamp in ("gha", "jenkins"):
            shown = view.render(view.prepare(_prefixed(raw, stamp)), ctx).content
            assert_fits(shown, ctx)
            assert isinstance(shown, str)
            assert [n for n in kept if n not in shown] == [], (row["id"], stamp)
