"""Timestamps at the start of log lines: which format, and the time range of a log.

Formats (tried near the start of a line, after an optional file or host prefix):

- ISO 8601 and its log variants: `2015-10-18 18:01:47,978`, `2017-05-16T00:00:00.008Z`,
  `2005-06-03-15.42.50.675872` (BGL);
- syslog: `Jun 14 15:16:01`, with an optional year;
- Apache/nginx: `[Sun Dec 04 04:47:44 2005]`, `[10/Oct/2000:13:55:36 -0700]`;
- Android logcat: `03-17 16:13:38.811`;
- HealthApp: `20171223-22:15:29:606`;
- Spark/Hadoop short dates: `17/06/09 20:10:40`;
- HDFS: `081109 203615`;
- epoch seconds or milliseconds: `1117838570`, `[1501234567.123]`.

The format is chosen once, on a sample of lines, so a number inside a message is not
mistaken for a time. Detection reads only line prefixes.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["TimeRange", "TimestampFormat", "detect_format", "time_range", "time_range_of_parts"]

_PREFIX = 80
_MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        start=1,
    )
}


@dataclass(frozen=True, slots=True)
class TimestampFormat:
    """One recognised timestamp format."""

    name: str
    """A short name (`iso`, `syslog`, `android`, ...)."""
    pattern: re.Pattern[str]
    """Regex matched against a line's prefix."""
    parse: Callable[[re.Match[str]], dt.datetime | None]
    """Turns a match into a `datetime` (naive), or `None` when it cannot."""


def _int(match: re.Match[str], name: str, default: int = 0) -> int:
    value = match.groupdict().get(name)
    return int(value) if value else default


def _fraction(match: re.Match[str]) -> int:
    value = match.groupdict().get("frac")
    if not value:
        return 0
    return int((value + "000000")[:6])


def _datetime(match: re.Match[str], *, year: int, month: int | None = None) -> dt.datetime | None:
    """The match's date and time (a field it lacks: day 1, midnight), or `None` when invalid."""
    try:
        return dt.datetime(
            year,
            _int(match, "mo", 1) if month is None else month,
            _int(match, "d", 1),
            _int(match, "h"),
            _int(match, "mi"),
            _int(match, "s"),
            _fraction(match),
        )
    except (ValueError, OverflowError):
        return None


def _ymd(match: re.Match[str]) -> dt.datetime | None:
    year = _int(match, "y")
    return _datetime(match, year=year + 2000 if year < 100 else year)


def _month_name(match: re.Match[str]) -> dt.datetime | None:
    month = _MONTHS.get(match.group("mon")[:3].lower())
    return None if month is None else _datetime(match, year=_int(match, "y", 1900), month=month)


def _no_year(match: re.Match[str]) -> dt.datetime | None:
    return _datetime(match, year=1900)


def _epoch(match: re.Match[str]) -> dt.datetime | None:
    value = float(match.group("epoch"))
    if value > 1e11:  # milliseconds
        value /= 1000
    if not 6e8 <= value <= 4.2e9:  # 1989 .. 2103
        return None
    return dt.datetime.fromtimestamp(value, tz=dt.timezone.utc).replace(tzinfo=None)


_T = r"(?P<h>\d\d)[:.](?P<mi>\d\d)[:.](?P<s>\d\d)(?:[.,:](?P<frac>\d{1,9}))?"
_T_LOOSE = r"(?P<h>\d{1,2}):(?P<mi>\d{1,2}):(?P<s>\d{1,2})(?:[.,:](?P<frac>\d{1,9}))?"
_FORMATS: tuple[TimestampFormat, ...] = tuple(
    TimestampFormat(name, re.compile(pattern), parse)
    for name, parse, pattern in (
        (
            "iso",
            _ymd,
            r"(?<!\d)(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)[T -]"
            + _T
            + r"(?:Z|[+-]\d\d:?\d\d)?(?!\d)",
        ),
        (
            "apache",
            _month_name,
            r"\[(?P<d>\d\d)/(?P<mon>[A-Z][a-z]{2})/(?P<y>\d{4}):" + _T + r"(?: [+-]\d{4})?\]",
        ),
        (
            "ctime",
            _month_name,
            r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<mon>[A-Z][a-z]{2}) +(?P<d>\d{1,2}) "
            + _T
            + r" (?P<y>\d{4})",
        ),
        (
            "syslog",
            _month_name,
            r"(?<![\w])(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?P<d>\d{1,2})"
            r"(?: (?P<y>\d{4}))? " + _T,
        ),
        ("healthapp", _ymd, r"(?<!\d)(?P<y>\d{4})(?P<mo>\d\d)(?P<d>\d\d)-" + _T_LOOSE),
        ("slash-date", _ymd, r"(?<![\d/])(?P<y>\d\d)/(?P<mo>\d\d)/(?P<d>\d\d) " + _T),
        ("us-date", _ymd, r"(?<![\d/])(?P<mo>\d\d)/(?P<d>\d\d)/(?P<y>\d{4})[ :]" + _T),
        ("android", _no_year, r"(?<![\d-])(?P<mo>\d\d)-(?P<d>\d\d) " + _T),
        (
            "hdfs",
            _ymd,
            r"^(?P<y>\d\d)(?P<mo>[01]\d)(?P<d>[0-3]\d) "
            r"(?P<h>[0-2]\d)(?P<mi>[0-5]\d)(?P<s>[0-5]\d)\b",
        ),
        ("time", _no_year, r"^\[?" + _T + r"\b"),
        ("epoch", _epoch, r"(?<![\d.])\[?(?P<epoch>1\d{9}(?:\d{3})?(?:\.\d+)?)\]?(?![\d.])"),
    )
)
"""The formats, tried in this order: name, parser, pattern of a line's prefix."""


def detect_format(lines: Sequence[str]) -> TimestampFormat | None:
    """The timestamp format that starts most of the sample lines (at least 60%).

    Args:
        lines: Sample lines.

    Returns:
        The format, or `None` when lines do not start with a timestamp.

    Example:
        ```python
        fmt = detect_format(["Jun 14 15:16:01 combo sshd[1]: x", "Jun 14 15:16:02 combo su: y"])
        assert fmt is not None and fmt.name == "syslog"
        ```
    """
    sample = [ln[:_PREFIX] for ln in lines if ln.strip()][:400]
    if not sample:
        return None
    best: tuple[int, TimestampFormat] | None = None
    for fmt in _FORMATS:
        hits = 0
        for line in sample:
            match = fmt.pattern.search(line)
            if match is not None and match.start() <= 48 and fmt.parse(match) is not None:
                hits += 1
        if hits >= max(1, 0.6 * len(sample)) and (best is None or hits > best[0]):
            best = (hits, fmt)
    return best[1] if best else None


@dataclass(frozen=True, slots=True)
class TimeRange:
    """The first and last timestamps of a log (in line order) and its earliest/latest.

    Example:
        ```python
        r = time_range(["2024-01-02 10:00:30 b", "2024-01-02 10:00:00 a"])
        assert r is not None and not r.in_order
        assert r.text == "2024-01-02 10:00:00 to 2024-01-02 10:00:30 (lines not in time order)"
        ```
    """

    format: str
    """Name of the timestamp format."""
    first: tuple[str, int]
    """The first timestamp as written, and its line."""
    last: tuple[str, int]
    """The last timestamp as written, and its line."""
    earliest: str
    """The earliest timestamp as written (differs from `first` when out of order)."""
    latest: str
    """The latest timestamp as written."""
    span_seconds: float | None
    """Seconds from earliest to latest, when the format carries enough to tell (else `None`)."""
    stamped_lines: int
    """Lines that start with a timestamp of this format (in the scanned part)."""
    scanned_lines: int
    """Lines scanned."""
    in_order: bool = True
    """Whether the timestamps never go back in line order (over the lines scanned)."""

    @property
    def text(self) -> str:
        """The range as the views print it: earliest to latest, never backwards.

        When the lines are not in time order it says so (the first and last lines' stamps
        are then not the range).
        """
        if self.in_order:
            return f"{self.first[0]} to {self.last[0]}"
        return f"{self.earliest} to {self.latest} (lines not in time order)"


def time_range(
    lines: Sequence[str],
    *,
    first_line: int = 1,
    fmt: TimestampFormat | None = None,
    max_scan: int = 120_000,
) -> TimeRange | None:
    """The time range of log lines.

    Args:
        lines: The lines (in order).
        first_line: Line number of `lines[0]`.
        fmt: The format (detected on the lines when not given).
        max_scan: Longer logs are scanned at their first and last 20,000 lines and an even
            sample of the rest (`scanned_lines` says how many); the first and last
            timestamps are exact, the earliest and latest are over the scanned lines.

    Returns:
        The range, or `None` when the lines carry no recognised timestamps.

    Example:
        ```python
        r = time_range(["2024-01-02 10:00:00 a", "2024-01-02 10:00:30 b"])
        assert r is not None and r.span_seconds == 30
        ```
    """
    n = len(lines)
    if n > max_scan:
        edge = 20_000
        step = max(1, (n - 2 * edge) // max(1, max_scan - 2 * edge))
        offsets: Sequence[int] = [*range(edge), *range(edge, n - edge, step), *range(n - edge, n)]
    else:
        offsets = range(n)
    return time_range_of_parts([(first_line + i, lines[i]) for i in offsets], fmt=fmt)


def time_range_of_parts(
    numbered: Sequence[tuple[int, str]], *, fmt: TimestampFormat | None = None
) -> TimeRange | None:
    """The time range of numbered lines (for example windows sampled from a huge log).

    The first and last timestamps are those of the first and last stamped lines given;
    the earliest and latest are over the lines given.

    Args:
        numbered: `(line number, line)` pairs in line order.
        fmt: The format (detected on the first and last 200 lines when not given).

    Returns:
        The range, or `None` when the lines carry no recognised timestamps.

    Example:
        ```python
        r = time_range_of_parts([(1, "2024-01-02 10:00:00 a"), (900, "2024-01-02 11:00:00 b")])
        assert r is not None and r.last == ("2024-01-02 11:00:00", 900)
        ```
    """
    if len(numbered) > 400:
        sample = [line for _, line in (*numbered[:200], *numbered[-200:])]
    else:
        sample = [line for _, line in numbered]
    fmt = fmt or detect_format(sample)
    if fmt is None:
        return None
    first: tuple[str, int] | None = None
    last: tuple[str, int] | None = None
    earliest: tuple[dt.datetime, str] | None = None
    latest: tuple[dt.datetime, str] | None = None
    stamped = 0
    in_order = True
    previous: dt.datetime | None = None
    for line_no, line in numbered:
        match = fmt.pattern.search(line, 0, _PREFIX)
        if match is None or match.start() > 48:
            continue
        when = fmt.parse(match)
        if when is None:
            continue
        stamped += 1
        if previous is not None and when < previous:
            in_order = False
        previous = when
        text = match.group(0).strip("[]")
        if first is None:
            first = (text, line_no)
        last = (text, line_no)
        if earliest is None or when < earliest[0]:
            earliest = (when, text)
        if latest is None or when > latest[0]:
            latest = (when, text)
    if first is None or last is None or earliest is None or latest is None:
        return None
    span: float | None = (latest[0] - earliest[0]).total_seconds()
    if fmt.name == "time" and span is not None and span < 0:
        span = None
    return TimeRange(
        format=fmt.name,
        first=first,
        last=last,
        earliest=earliest[1],
        latest=latest[1],
        span_seconds=span,
        stamped_lines=stamped,
        scanned_lines=len(numbered),
        in_order=in_order,
    )
