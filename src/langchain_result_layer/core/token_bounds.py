r"""Provable upper bounds of tiktoken counts, far tighter than the byte length, in C-speed steps.

The budget guard bounds a new raw result before it decides whether to count it exactly. The
byte length bounds any byte-level BPE count (every token spans at least one byte) but is about
three times the count of a log. `PretokenBound` is tighter, and just as provable, for ASCII
text under `o200k_base` and `cl100k_base`. It rests on three facts of tiktoken's encoder and
on facts of the vocabulary that are checked when the bound is built:

1. The text is first cut into pre-tokens by the encoding's pattern; no token spans two.
2. A pre-token is encoded by byte-pair merging: adjacent parts are merged while any
   adjacent pair's concatenation is in the vocabulary. So in the final tokens of a pre-token,
   no two adjacent tokens concatenate to a vocabulary entry.
3. (Checked) every string of one to three ASCII digits is one token; every pair of letters
   of a set `S` of lowercase letters (21 of 26 for `o200k_base`) is one token, and so is a
   space, or a punctuation character of a set `P`, followed by a letter of `S`; every run of
   up to `blanks` spaces is one token (79 for `o200k_base`); a space followed by an *opener*
   and a *closer* followed by a newline are one token (punctuation characters found so).

Under both patterns a run of ASCII digits is cut into pre-tokens of three digits (the last
one shorter), each one token (fact 3): `ceil(l / 3)` tokens. A maximal run of `S` letters,
with the space before it (a space followed by a non-blank always starts a pre-token) or a
`P` character before it that follows a letter, digit or newline (it then starts that
pre-token as its prefix), lies in one pre-token, except where an apostrophe's contraction
(`'s`, `'t`, ...) cuts it. Among the tokens that lie inside such a run of `m` bytes, no two
adjacent ones are single bytes (fact 2 with fact 3), so there are at most
`floor((2m + 1) / 3)` of them; a cut adds at most one. All spaces of a run of spaces but its
last lie in one pre-token, where two adjacent tokens of spaces together are longer than
`blanks` (else they would merge): a run of `k` such spaces holds at most
`1 + 2k / (blanks + 1)` tokens. A space and the opener after it start one pre-token, a closer
and the newline after it end one (the punctuation alternative takes trailing newlines), so
each such pair holds at most one token. Every other token contains a byte outside all of
these, so there are at most as many as such bytes. Summed:

    tokens <= others + floor((2 * run_bytes + runs) / 3) + floor((digits + 2 * digit_runs) / 3)
              + apostrophes + space_runs + floor(2 * inner_spaces / (blanks + 1)) + pairs

On logs that is about 0.8 of the byte length (o200k counts are about 2.2x below it, the
byte length 2.8x). Every count is a population count of a big integer made from the text's
bytes with one `bytes.translate`: no Python code runs per character. Other text (non-ASCII,
other encodings, other patterns) gets its byte length. `tests/integration/test_guard_bounds.py`
checks the bound against the exact count with hypothesis, on text built to defeat each step.

Example:
    ```python
    from langchain_result_layer.core.token_bounds import PretokenBound
    from langchain_result_layer.core.tokens import load_offline_encoding

    enc = load_offline_encoding("o200k_base")
    bound = PretokenBound.for_encoding(enc) if enc is not None else None
    if bound is not None:
        text = "2024-05-01 10:00:00 INFO worker started the build step\n" * 40
        assert len(enc.encode_ordinary(text)) <= bound.upper(text) < len(text)
    ```
"""

from __future__ import annotations

import math
import string
import threading
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "CL100K_PATTERN",
    "O200K_PATTERN",
    "EstimateBound",
    "PretokenBound",
    "estimate_bound",
    "pretoken_bound_for",
]

O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
"""The pre-tokenizer pattern of `o200k_base` (and `o200k_harmony`) the argument was made for."""

CL100K_PATTERN = "|".join(
    [
        r"""'(?i:[sdmt]|ll|ve|re)""",
        r"""[^\r\n\p{L}\p{N}]?+\p{L}++""",
        r"""\p{N}{1,3}+""",
        r""" ?[^\s\p{L}\p{N}]++[\r\n]*+""",
        r"""\s++$""",
        r"""\s*[\r\n]""",
        r"""\s+(?!\S)""",
        r"""\s""",
    ]
)
"""The pre-tokenizer pattern of `cl100k_base` the argument was made for."""

_PATTERNS = frozenset({O200K_PATTERN, CL100K_PATTERN})

# Bit flags of one byte's class (one `translate` makes a flag byte per text byte).
_RUN = 0x01  # a letter of S
_DIGIT = 0x02
_SPACE = 0x04
_PREFIX = 0x08  # a punctuation character of P
_NEWLINE = 0x10
_BEFORE_PREFIX = 0x20  # ASCII letter, digit or newline (a P character after it is a prefix)
_AFTER_SPACE = 0x40  # punctuation that, after a space, is one token with it
_BEFORE_NEWLINE = 0x80  # punctuation that, followed by a newline, is one token with it
_MAX_BLANKS = 256
"""Runs of spaces longer than this are not looked up."""
_PUNCTUATION = "".join(sorted(set(string.punctuation) - {"'"}))


class PretokenBound:
    """An upper bound of one encoding's count of ASCII text (see the module docstring).

    Build it with `PretokenBound.for_encoding`, which checks the vocabulary facts the bound
    needs (and returns `None` when they do not hold).

    Example:
        ```python
        bound = PretokenBound(letters="abc", prefixes=".")
        # Runs "abc", ".abc" (a prefix after a letter) and " abc": 11 bytes in 3 runs.
        assert bound.upper("abc.abc abc") == (2 * 11 + 3) // 3
        ```
    """

    __slots__ = ("_table", "blanks", "closers", "letters", "openers", "prefixes")

    def __init__(
        self,
        *,
        letters: str,
        prefixes: str,
        blanks: int = 1,
        openers: str = "",
        closers: str = "",
    ) -> None:
        """A bound for an encoding whose vocabulary was checked to have the needed tokens.

        Args:
            letters: The set `S`: lowercase ASCII letters every pair of which, and the space
                followed by each, is one token.
            prefixes: The set `P`: punctuation characters that, followed by any letter of
                `letters`, are one token.
            blanks: The longest run of spaces such that every shorter or equal run is one
                token (1: no such runs are used).
            openers: Punctuation characters that, after a space, are one token with it.
            closers: Punctuation characters that, followed by a newline, are one token with it.
        """
        self.letters = letters
        self.prefixes = prefixes
        self.blanks = blanks
        self.openers = openers
        self.closers = closers
        flags = bytearray(256)
        for ch in letters:
            flags[ord(ch)] |= _RUN
        for ch in string.digits:
            flags[ord(ch)] |= _DIGIT
        flags[ord(" ")] |= _SPACE
        for ch in prefixes:
            flags[ord(ch)] |= _PREFIX
        flags[ord("\n")] |= _NEWLINE
        for ch in openers:
            flags[ord(ch)] |= _AFTER_SPACE
        for ch in closers:
            flags[ord(ch)] |= _BEFORE_NEWLINE
        for ch in string.ascii_letters + string.digits + "\n":
            flags[ord(ch)] |= _BEFORE_PREFIX
        self._table = bytes(flags)

    @classmethod
    def for_encoding(cls, encoding: Any) -> PretokenBound | None:
        """The bound of a tiktoken encoding, when its pattern and vocabulary allow one.

        Args:
            encoding: A `tiktoken.Encoding`.

        Returns:
            The bound, or `None` (another pattern, or a vocabulary without the tokens).
        """
        if getattr(encoding, "_pat_str", None) not in _PATTERNS:
            return None
        single: Callable[[bytes], int] = encoding.encode_single_token

        def token(text: str) -> bool:
            try:
                single(text.encode("ascii"))
            except KeyError:
                return False
            return True

        if not all(token(f"{n}") and token(f"{n:02d}") and token(f"{n:03d}") for n in range(1000)):
            return None
        letters = _pairwise(string.ascii_lowercase, token)
        prefixes = "".join(p for p in _PUNCTUATION if all(token(p + s) for s in letters))
        blanks = 1
        while blanks < _MAX_BLANKS and token(" " * (blanks + 1)):
            blanks += 1
        openers = "".join(p for p in _PUNCTUATION if token(" " + p))
        closers = "".join(p for p in _PUNCTUATION if token(p + "\n"))
        if not letters:
            return None
        return cls(
            letters=letters, prefixes=prefixes, blanks=blanks, openers=openers, closers=closers
        )

    def upper(self, text: str) -> int:
        """An upper bound of the encoding's count of `text` (its byte length if not ASCII).

        Args:
            text: Any text.

        Returns:
            At most `len(text.encode("utf-8"))`, never below the exact count.
        """
        if not text.isascii():
            return len(text.encode("utf-8", "surrogatepass"))
        n = len(text)
        if n == 0:
            return 0
        flags = int.from_bytes(text.encode("ascii").translate(self._table), "big")
        ones = _ones(n)

        def plane(bit: int) -> int:
            return (flags >> (bit.bit_length() - 1)) & ones

        # One bit per character (big-endian: character i + 1 is the next lower byte, so
        # `<< 8` puts the next character's bit at i and `>> 8` the previous one's).
        run, digit, space = flags & ones, plane(_DIGIT), plane(_SPACE)
        next_is_run = run << 8
        prefix = plane(_PREFIX) & next_is_run & (plane(_BEFORE_PREFIX) >> 8)
        # Run letters and the space or prefix before a run: distinct characters, one count.
        run_bytes = (run | prefix | (space & next_is_run)).bit_count()
        runs = _starts(run)
        digits = digit.bit_count()
        # A space before punctuation starts its pre-token; a newline after punctuation ends
        # it (the punctuation alternative takes trailing newlines): either pair, two bytes,
        # is one token when it is in the vocabulary (else the two would merge).
        opened = space & (plane(_AFTER_SPACE) << 8)
        closed = plane(_BEFORE_NEWLINE) & ~(space >> 8) & (plane(_NEWLINE) << 8)
        bound = (
            n
            - run_bytes
            - digits
            + (2 * run_bytes + runs) // 3
            + (digits + 2 * _starts(digit)) // 3
            + text.count("'")
            - (opened | closed).bit_count()
        )
        if self.blanks > 1:
            # All spaces of a run but its last lie in one pre-token; two adjacent tokens of
            # spaces there are at least `blanks + 1` spaces long together (else they merge).
            indent = space & (space << 8)
            spaces = indent.bit_count()
            bound += _starts(indent) + (2 * spaces) // (self.blanks + 1) - spaces
        return min(bound, n)

    def __repr__(self) -> str:
        return (
            f"PretokenBound(letters={self.letters!r}, prefixes={self.prefixes!r}, "
            f"blanks={self.blanks})"
        )


def _starts(bits: int) -> int:
    """How many runs of set character bits there are.

    Each run has a start and, unless it reaches the last character, an end: the changes
    between neighbours, halved and rounded up.
    """
    return ((bits ^ (bits >> 8)).bit_count() + 1) // 2


_ONES: tuple[int, int] = (0, 0)
"""The longest `_ones` made so far: (characters, value)."""


def _ones(n: int) -> int:
    """The integer with bit 0 set in each of its `n` bytes (shifted down from a cached one)."""
    global _ONES  # noqa: PLW0603 - a cache of one immutable value, replaced whole
    length, value = _ONES
    if n > length:
        length, value = n, int.from_bytes(b"\x01" * n, "big")
        _ONES = (length, value)
    return value >> (8 * (length - n))


def _pairwise(chars: str, token: Callable[[str], bool]) -> str:
    """The largest set of `chars` found greedily whose pairs are all tokens.

    Characters in the most missing pairs go first; one whose space-prefixed form is not a
    token cannot be in the set at all.
    """
    kept = {ch for ch in chars if token(" " + ch)}
    while kept:
        missing: dict[str, int] = {}
        for a in kept:
            for b in kept:
                if not token(a + b):
                    missing[a] = missing.get(a, 0) + 1
                    missing[b] = missing.get(b, 0) + 1
        if not missing:
            break
        kept.discard(max(sorted(missing), key=missing.__getitem__))
    return "".join(sorted(kept))


_BOUNDS: dict[int, tuple[Any, PretokenBound | None]] = {}
_LOCK = threading.Lock()


def pretoken_bound_for(encoding: Any) -> PretokenBound | None:
    """The bound of an encoding, built once per encoding object.

    Args:
        encoding: A `tiktoken.Encoding`.

    Returns:
        Its `PretokenBound`, or `None` when its pattern or vocabulary allow none.

    Example:
        ```python
        from langchain_result_layer.core.tokens import load_offline_encoding

        enc = load_offline_encoding("o200k_base")
        if enc is not None:
            assert pretoken_bound_for(enc) is pretoken_bound_for(enc)  # built once
        ```
    """
    entry = _BOUNDS.get(id(encoding))
    if entry is not None and entry[0] is encoding:
        return entry[1]
    with _LOCK:
        entry = _BOUNDS.get(id(encoding))
        if entry is None or entry[0] is not encoding:
            entry = (encoding, PretokenBound.for_encoding(encoding))
            _BOUNDS[id(encoding)] = entry
    return entry[1]


# Bit flags of one byte's class for `EstimateBound` (the approximate estimate's ASCII classes).
_E_LETTER = 0x01
_E_VOWEL = 0x02
_E_UPPER = 0x04
_E_DIGIT = 0x08
_E_PUNCT = 0x10  # everything else but blanks, line breaks and "\x1f": the estimate's "."
_E_BLANK = 0x20  # space, tab
_E_NEWLINE = 0x40  # line feed, carriage return


def _estimate_table() -> bytes:
    flags = bytearray(128)
    for b in range(128):
        ch = chr(b)
        if ch.isalpha():
            flags[b] = _E_LETTER | (_E_VOWEL if ch.lower() in "aeiou" else 0)
            flags[b] |= _E_UPPER if ch.isupper() else 0
        elif ch.isdigit():
            flags[b] = _E_DIGIT
        elif ch in " \t":
            flags[b] = _E_BLANK
        elif ch in "\n\r":
            flags[b] = _E_NEWLINE
        elif ch != "\x1f":
            flags[b] = _E_PUNCT
    return bytes(flags) + bytes(128)


_ESTIMATE_TABLE = _estimate_table()

_EXACT_RUNS = ("letter_runs", "digit_runs", "newline_runs", "blank_runs_2")
"""Features the bound counts exactly (runs of a class)."""
_BY_WINDOWS = ("consonant_triples", "vowel_pairs", "punct_pairs")
"""Patterns the estimate counts without overlaps: at most their windows."""
_BY_CLASSES = ("letters_16", "capital_starts", "upper_pairs", "humps", "digit_triples")
"""Patterns bounded by how many characters of their class there are."""
_OTHERS = ("const", "blanks", "indents", "punct_runs_to_letter", "punct_runs_other")
"""The constant, blanks, indents (by line breaks) and punctuation runs (by runs)."""
_ESTIMATE_FEATURES = frozenset((*_EXACT_RUNS, *_BY_WINDOWS, *_BY_CLASSES, *_OTHERS))
"""The features of the approximate estimate that ASCII text can have, each bounded below."""


class EstimateBound:
    r"""An upper bound of the approximate estimate (`core._approx`) of ASCII text, cheaper.

    The estimate is a linear function, with non-negative weights, of counts of patterns in
    the text's character classes (letter runs, consonant triples, vowel pairs, capitals,
    digit runs, punctuation runs and pairs, blanks, line breaks), capped at the byte length.
    Each count is bounded by a plainer one that population counts give at C speed: runs of
    letters, digits, punctuation, line breaks and of two or more blanks exactly; consonant
    triples and vowel and punctuation pairs (counted without overlaps) by their windows;
    16-letter groups by the letters in runs of 16 or more over 16; a capital start or a hump
    by the capital (a capital is at most one of them). On logs the bound is about 1.3x the
    estimate, where the byte length is 2.3x. Text with non-ASCII characters or `\x1f` (the
    estimate's slow path) gets its byte length. Hypothesis checks it against
    `estimate_tokens` on text built to reach each count (`tests/integration/test_guard_bounds.py`).

    Example:
        ```python
        from langchain_result_layer.core._approx import estimate_tokens

        bound = estimate_bound()
        text = "2024-05-01 10:00:00 INFO worker started the build step\n" * 40
        assert bound is not None and estimate_tokens(text) <= bound.upper(text) < len(text)
        ```
    """

    __slots__ = ("weights",)

    def __init__(self, weights: Mapping[str, float]) -> None:
        """A bound for an estimate with these weights (features not listed weigh 0).

        Args:
            weights: Feature name -> weight, all non-negative.
        """
        self.weights = {name: float(weights.get(name, 0.0)) for name in _ESTIMATE_FEATURES}

    def upper(self, text: str) -> int:
        """An upper bound of `estimate_tokens(text)`.

        Args:
            text: Any text.

        Returns:
            At most the byte length, never below the estimate.
        """
        if not text.isascii() or "\x1f" in text:
            return len(text.encode("utf-8", "surrogatepass"))
        n = len(text)
        if n == 0:
            return 0
        flags = int.from_bytes(text.encode("ascii").translate(_ESTIMATE_TABLE), "big")
        ones = _ones(n)

        def plane(bit: int) -> int:
            return (flags >> (bit.bit_length() - 1)) & ones

        letter, digit, punct = flags & ones, plane(_E_DIGIT), plane(_E_PUNCT)
        vowel, blank, newline = plane(_E_VOWEL), plane(_E_BLANK), plane(_E_NEWLINE)
        consonant = letter & ~vowel
        capitals = plane(_E_UPPER).bit_count()
        # Letters in runs of 16 or more: windows of 16 letters (bit at a window's last
        # letter), spread back over the window's 16 letters.
        window = letter & (letter >> 8)
        for shift in (16, 32, 64):
            window &= window >> shift
        for shift in (8, 16, 32, 64):
            window |= window << shift
        long_letters = (window & letter).bit_count()
        letter_runs = _starts(letter)
        # A pattern counted without overlaps occurs at most as often as its windows (and,
        # for a pair, at most half as often as its characters).
        vowel_pairs = min((vowel & (vowel >> 8)).bit_count(), vowel.bit_count() / 2)
        punct_pairs = min((punct & (punct >> 8)).bit_count(), punct.bit_count() / 2)
        doubled = blank & (blank << 8)  # a blank followed by a blank
        triples = (consonant & (consonant >> 8) & (consonant >> 16)).bit_count()
        w = self.weights
        total = (
            w["const"]
            + w["letter_runs"] * letter_runs
            + w["letters_16"] * long_letters / 16
            + w["consonant_triples"] * triples
            + w["vowel_pairs"] * vowel_pairs
            + (max(w["capital_starts"], w["humps"]) + w["upper_pairs"] / 2) * capitals
            + w["digit_runs"] * _starts(digit)
            + w["digit_triples"] * digit.bit_count() / 3
            + w["punct_runs_other"] * _starts(punct)
            + max(0.0, w["punct_runs_to_letter"] - w["punct_runs_other"]) * letter_runs
            + w["punct_pairs"] * punct_pairs
            + w["blanks"] * blank.bit_count()
            + w["blank_runs_2"] * _starts(doubled)
            + w["indents"] * newline.bit_count()
            + w["newline_runs"] * _starts(newline)
        )
        # One token over the ceiling absorbs any rounding between the two float sums.
        return max(1, min(math.ceil(total) + 1, n))

    def __repr__(self) -> str:
        return "EstimateBound()"


_ESTIMATE_BOUND: list[EstimateBound | None] = []


def estimate_bound() -> EstimateBound | None:
    """The bound of the package's approximate estimate, when its features are all known.

    Returns:
        The bound, or `None` when the estimate has a feature (with a weight) or a negative
        weight this bound does not know how to bound.

    Example:
        ```python
        assert estimate_bound() is estimate_bound()  # built once
        ```
    """
    if not _ESTIMATE_BOUND:
        from langchain_result_layer.core import _approx  # noqa: PLC0415 - only when used

        weights = _approx.WEIGHTS
        unknown = [
            name
            for name in _approx.FEATURE_NAMES
            if name not in _ESTIMATE_FEATURES
            and name not in ("wide_common", "other_runs")
            and not name.startswith("lead_")
            and weights.get(name, 0.0) != 0.0
        ]
        usable = not unknown and all(weight >= 0 for weight in weights.values())
        _ESTIMATE_BOUND.append(EstimateBound(weights) if usable else None)
    return _ESTIMATE_BOUND[0]
