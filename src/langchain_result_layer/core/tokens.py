"""Token counting behind a small port.

Three counters implement `TokenCounter`:

- `TiktokenCounter`: exact counts with an OpenAI BPE encoding (`o200k_base` by default). The
  encoding is loaded lazily and only from local data: the `o200k_base` merge table this
  package ships (1.1 MB, in `core/_data/`), tiktoken's own cache (`TIKTOKEN_CACHE_DIR`), or the
  official files of the optional `bpe-openai` package (the `encodings` extra: `cl100k_base` and
  others). It never downloads, so it never hangs offline.
- `ApproximateTokenCounter`: a conservative, content-aware estimate for when no tokenizer data
  is available (see `langchain_result_layer.core._approx`).
- `ChatModelTokenCounter`: a chat model's own `get_num_tokens`.

`default_token_counter()` picks the exact counter when its data is present and otherwise falls
back to the approximate one with a single warning.

Example:
    ```python
    from langchain_result_layer.core.tokens import default_token_counter

    counter = default_token_counter()
    n = counter.count("hello world")
    ```
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import logging
import os
import tempfile
import threading
import types
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langchain_result_layer.core._approx import estimate_tokens

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "ADDITIVE_ENCODINGS",
    "ApproximateTokenCounter",
    "CallableTokenCounter",
    "ChatModelTokenCounter",
    "OfflineTokenizerWarning",
    "TiktokenCounter",
    "TokenCounter",
    "count_within",
    "default_token_counter",
    "is_additive",
    "load_offline_encoding",
    "resolve_token_counter",
]

logger = logging.getLogger(__name__)

DEFAULT_ENCODING = "o200k_base"


class OfflineTokenizerWarning(UserWarning):
    """Issued once when exact token counting is unavailable and an estimate is used instead.

    Example:
        ```python
        import warnings

        warnings.simplefilter("error", OfflineTokenizerWarning)
        ```
    """


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens a piece of text costs a model.

    Implementations must be thread-safe and deterministic. `exact` tells whether counts are
    the tokenizer's own (`True`) or an estimate that is meant never to under-count (`False`).

    Example:
        ```python
        class WordCounter:
            name = "words"
            exact = False

            def count(self, text: str) -> int:
                return len(text.split())
        ```
    """

    @property
    def name(self) -> str:
        """A short label, for example `"tiktoken:o200k_base"`."""
        ...

    @property
    def exact(self) -> bool:
        """Whether counts are exact for the target model."""
        ...

    def count(self, text: str) -> int:
        """Return the number of tokens `text` costs."""
        ...


# --------------------------------------------------------------------------- tiktoken, offline

_ENCODING_LOCK = threading.Lock()
_ENCODINGS: dict[str, tiktoken.Encoding | None] = {}


def _tiktoken_cache_path(url: str) -> str | None:
    """Where tiktoken would look for `url` in its cache, or `None` when caching is disabled."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache_dir:
        return None
    return os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())  # noqa: S324


# The merge tables this package ships (`core/_data/`), by encoding: tiktoken's expected SHA-256 of
# the official `.tiktoken` file they were made from, and the SHA-256 of the shipped token list.
# The list is `marshal` of the tokens in rank order (rank = index), gzip-compressed: it loads in
# about a third of the time parsing the official file takes (start-up of every process). A test
# rebuilds the official file from it and checks tiktoken's hash (tests/unit/test_tokens.py).
_BUNDLED: dict[str, tuple[str, str]] = {
    "o200k_base": (
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "815c4e3e4416d5b9f9d301ddfa151a2a741026c83732b27af78f5dc0a3f1270a",
    ),
}


def _bundled_bpe_path(name: str) -> Path | None:
    """The token list this package ships for `name` (only `o200k_base`), if present."""
    path = Path(__file__).resolve().parent / "_data" / f"{name}.tokens.marshal.gz"
    return path if name in _BUNDLED and path.is_file() else None


def _bundled_ranks(name: str, expected_hash: str | None) -> dict[bytes, int] | None:
    """The merge table this package ships for `name`, verified; `None` when absent or broken.

    Used only when tiktoken expects the very file the list was made from (`expected_hash`).
    """
    path = _bundled_bpe_path(name)
    if path is None or expected_hash != _BUNDLED[name][0]:
        return None
    import marshal  # noqa: PLC0415 - only needed when an encoding is loaded

    try:
        data = gzip.decompress(path.read_bytes())
        if hashlib.sha256(data).hexdigest() != _BUNDLED[name][1]:
            logger.warning("the shipped %s table at %s does not match its hash", name, path)
            return None
        tokens = marshal.loads(data)  # noqa: S302 - the package's own data, hash-checked above
    except (OSError, EOFError, ValueError, TypeError, gzip.BadGzipFile, zlib.error):
        logger.warning("unreadable shipped BPE data at %s", path, exc_info=True)
        return None
    return dict(zip(tokens, range(len(tokens)), strict=True))


def _packaged_bpe_path(name: str) -> Path | None:
    """Where the `bpe-openai` package keeps `name`'s merge table, found without importing it.

    Importing `bpe_openai` loads its own tokenizers (about a second); only its data is
    needed here.
    """
    try:
        spec = importlib.util.find_spec("bpe_openai")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / "data" / f"{name}.tiktoken.gz"
        if path.is_file():
            return path
    return None


def _read_local_bpe(name: str, url: str, expected_hash: str | None) -> bytes | None:
    """Return the BPE file for `name` from local sources only, verified against its hash."""
    candidates: list[bytes] = []
    cache_path = _tiktoken_cache_path(url)
    if cache_path and os.path.exists(cache_path):
        try:
            with open(cache_path, "rb") as fh:
                candidates.append(fh.read())
        except OSError:  # pragma: no cover - unreadable cache file
            pass
    packaged = _packaged_bpe_path(name)
    if packaged is not None:
        try:
            candidates.append(gzip.decompress(packaged.read_bytes()))
        except (OSError, EOFError, gzip.BadGzipFile):
            logger.warning("unreadable BPE data at %s", packaged)
    for data in candidates:
        if expected_hash is None or hashlib.sha256(data).hexdigest() == expected_hash:
            return data
    return None


def _parse_bpe(data: bytes) -> dict[bytes, int]:
    """Parse a `.tiktoken` merge table: one `<base64 token> <rank>` pair per line.

    Built with C-level `map`/`zip` over one `split()` (about 30% faster than a loop, which
    matters on start-up: this runs once per process for 200,000 lines). A line that is not
    exactly one pair raises `ValueError`, as unpacking each line would.
    """
    import binascii  # noqa: PLC0415 - only needed when an encoding is loaded

    fields = data.split()
    lines = data.split(b"\n")
    if len(fields) != 2 * (len(lines) - lines.count(b"")):
        msg = "a .tiktoken line is not one '<token> <rank>' pair"
        raise ValueError(msg)
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def load_offline_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding | None:
    """Load a tiktoken encoding from local data only; `None` when it is not available.

    The constructor parameters (split pattern, special tokens) come from tiktoken's own
    registry; only the merge table is read locally, from this package's own copy
    (`o200k_base`), from tiktoken's cache or from the `bpe-openai` package, and is checked
    against tiktoken's expected SHA-256 (the shipped copy against the hash recorded with it).

    Args:
        name: Encoding name, for example `"o200k_base"` or `"cl100k_base"`.

    Returns:
        The encoding, or `None` when no verified local copy exists.

    Example:
        ```python
        enc = load_offline_encoding("o200k_base")
        if enc is not None:
            print(len(enc.encode_ordinary("hello")))
        ```
    """
    with _ENCODING_LOCK:
        if name in _ENCODINGS:
            return _ENCODINGS[name]
        enc = _build_encoding(name)
        if enc is None and _bundled_bpe_path(name) is not None:
            # The shipped table is there: a failed read is tried once more before the
            # process settles on the estimate (twice seen on a loaded machine, not reproduced).
            logger.warning("loading the shipped %s table failed; trying once more", name)
            enc = _build_encoding(name)
        _ENCODINGS[name] = enc
        return enc


def _build_encoding(name: str) -> tiktoken.Encoding | None:
    try:
        import tiktoken  # noqa: PLC0415 - loaded lazily, on first use
        from tiktoken_ext import openai_public  # type: ignore[import-untyped]  # noqa: PLC0415
    except ImportError:  # pragma: no cover - tiktoken is a hard dependency
        return None
    constructor = openai_public.ENCODING_CONSTRUCTORS.get(name)
    if constructor is None:
        return None
    missing: list[str] = []

    def local_loader(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        shipped = _bundled_ranks(name, expected_hash)
        if shipped is not None:
            return shipped
        data = _read_local_bpe(name, url, expected_hash)
        if data is None:
            missing.append(url)
            raise LookupError(url)
        return _parse_bpe(data)

    # Re-bind the constructor to a private globals dict whose loader reads local files only,
    # so tiktoken's registry stays the single source of the split pattern and special tokens.
    fn_globals = dict(constructor.__globals__)
    fn_globals["load_tiktoken_bpe"] = local_loader
    local_constructor = types.FunctionType(
        constructor.__code__,
        fn_globals,
        constructor.__name__,
        constructor.__defaults__,
        constructor.__closure__,
    )
    try:
        params: dict[str, Any] = local_constructor()
        return tiktoken.Encoding(**params)
    except LookupError:
        logger.debug("no local BPE data for %s (looked for %s)", name, missing)
    except Exception:  # a broken local file must not break counting: fall back
        logger.warning("could not load the local BPE data for %s", name, exc_info=True)
    return None


def _encoding_name_for_model(model: str) -> str:
    try:
        import tiktoken  # noqa: PLC0415 - loaded lazily, on first use

        return str(tiktoken.encoding_name_for_model(model))
    except (KeyError, ImportError):
        return DEFAULT_ENCODING


_RECENT_MIN_CHARS = 4_096
_RECENT_MAX_CHARS = 1_000_000
_RECENT_TEXTS = 4


class TiktokenCounter:
    """Exact token counts with a tiktoken encoding loaded from local data.

    Args:
        encoding: Encoding name. Ignored when `model` is given and known to tiktoken.
        model: Model name; its encoding is looked up in tiktoken's table.

    Raises:
        LookupError: On first use, when the encoding's data is not available locally.

    Example:
        ```python
        counter = TiktokenCounter(model="gpt-4o")
        assert counter.count("") == 0
        ```
    """

    def __init__(self, *, encoding: str = DEFAULT_ENCODING, model: str | None = None) -> None:
        self._encoding_name = _encoding_name_for_model(model) if model else encoding
        self._encoding: tiktoken.Encoding | None = None
        # The counts of the last few long texts: a rendered view is counted by the view
        # that fits it, then again by the pipeline; the second count is a lookup.
        self._recent: dict[str, int] = {}

    @property
    def name(self) -> str:
        """`tiktoken:<encoding>`."""
        return f"tiktoken:{self._encoding_name}"

    @property
    def encoding_name(self) -> str:
        """The encoding's name, for example `o200k_base`."""
        return self._encoding_name

    @property
    def exact(self) -> bool:
        """Always `True`."""
        return True

    @property
    def available(self) -> bool:
        """Whether the encoding's data can be loaded without a download."""
        return load_offline_encoding(self._encoding_name) is not None

    def _enc(self) -> tiktoken.Encoding:
        enc = self._encoding
        if enc is None:
            enc = load_offline_encoding(self._encoding_name)
            if enc is None:
                msg = (
                    f"tiktoken encoding {self._encoding_name!r} is not available offline; "
                    "install `langchain-result-layer[encodings]` (bpe-openai) or set "
                    "TIKTOKEN_CACHE_DIR"
                )
                raise LookupError(msg)
            self._encoding = enc
        return enc

    def count(self, text: str) -> int:
        """Count tokens exactly; special-token text counts as ordinary text."""
        if not text:
            return 0
        long = _RECENT_MIN_CHARS <= len(text) <= _RECENT_MAX_CHARS
        if long:
            known = self._recent.get(text)
            if known is not None:
                return known
        enc = self._enc()
        try:
            tokens = len(enc.encode_ordinary(text))
        except UnicodeEncodeError:
            # Lone surrogates cannot be encoded as UTF-8; tiktoken sees them as U+FFFD.
            fixed = text.encode("utf-8", "replace").decode("utf-8")
            tokens = len(enc.encode_ordinary(fixed))
        if long:
            recent = self._recent
            if len(recent) >= _RECENT_TEXTS:
                try:  # another thread may be doing the same: any one entry may go
                    recent.pop(next(iter(recent)), None)
                except (RuntimeError, StopIteration):
                    recent.clear()
            recent[text] = tokens
        return tokens

    def count_each(self, texts: list[str]) -> list[int]:
        r"""`count` of each text, without its per-call work (for many short texts at once).

        Args:
            texts: The texts.

        Returns:
            Their exact counts, in order.

        Example:
            ```python
            counter = TiktokenCounter()
            assert counter.count_each(["a b\n", "c"]) == [counter.count("a b\n"), 1]
            ```
        """
        encode = self._enc().encode_ordinary
        try:
            return [len(encode(text)) for text in texts]
        except UnicodeEncodeError:  # as `count`: lone surrogates count as U+FFFD
            return list(map(self.count, texts))

    def __repr__(self) -> str:
        return f"TiktokenCounter(encoding={self._encoding_name!r})"


class ApproximateTokenCounter:
    """A conservative, content-aware token estimate that needs no tokenizer data.

    Calibrated on real logs, code, prose, JSON, SQL output, base64, hex, UUIDs, CJK text and
    emoji against both `o200k_base` and `cl100k_base`, so that it under-counts well under 1%
    of samples of every content type while over-counting logs, code and prose by about 15-30%
    and base64 or random CJK by about 5-10% (`benchmarks/token_calibration.py` measures it).
    Plain `len(text) / 4` under-counts JSON by ~1.3x, base64 by ~2.8x and CJK by ~3x.

    Example:
        ```python
        counter = ApproximateTokenCounter()
        assert counter.count("x" * 400) >= 100
        ```
    """

    @property
    def name(self) -> str:
        """`approximate`."""
        return "approximate"

    @property
    def exact(self) -> bool:
        """Always `False`."""
        return False

    def count(self, text: str) -> int:
        """Estimate tokens; errs on the high side."""
        return estimate_tokens(text)

    def __repr__(self) -> str:
        return "ApproximateTokenCounter()"


class _SupportsGetNumTokens(Protocol):
    def get_num_tokens(self, text: str) -> int: ...


class ChatModelTokenCounter:
    """Counts with a chat model's own `get_num_tokens`.

    Args:
        model: Any object with `get_num_tokens(text) -> int`, such as a LangChain chat model.
        exact: Whether the model's counter is exact (most provider counters are).

    Example:
        ```python
        class Words:  # any object with `get_num_tokens`: ChatOpenAI(model="gpt-4o-mini"), ...
            def get_num_tokens(self, text: str) -> int:
                return len(text.split())


        counter = ChatModelTokenCounter(Words(), exact=False)
        assert counter.count("some text") == 2 and counter.name == "model:Words"
        ```
    """

    def __init__(self, model: _SupportsGetNumTokens, *, exact: bool = True) -> None:
        self._model = model
        self._exact = exact

    @property
    def name(self) -> str:
        """`model:<class name>`."""
        return f"model:{type(self._model).__name__}"

    @property
    def exact(self) -> bool:
        """As given to the constructor."""
        return self._exact

    def count(self, text: str) -> int:
        """Delegate to the model."""
        return int(self._model.get_num_tokens(text)) if text else 0


class CallableTokenCounter:
    """Wraps a plain `str -> int` function as a `TokenCounter`.

    Args:
        fn: The counting function.
        name: A label for reports.
        exact: Whether `fn` is exact.

    Example:
        ```python
        counter = CallableTokenCounter(lambda s: len(s) // 3 + 1, name="thirds")
        ```
    """

    def __init__(
        self, fn: Callable[[str], int], *, name: str = "callable", exact: bool = False
    ) -> None:
        self._fn = fn
        self._name = name
        self._exact = exact

    @property
    def name(self) -> str:
        """As given to the constructor."""
        return self._name

    @property
    def exact(self) -> bool:
        """As given to the constructor."""
        return self._exact

    def count(self, text: str) -> int:
        """Delegate to the function."""
        return int(self._fn(text)) if text else 0


_WARNED_FALLBACK = False
_WARN_LOCK = threading.Lock()


ADDITIVE_ENCODINGS = frozenset({"o200k_base", "cl100k_base"})
"""Encodings whose counts add up over pieces that end after a newline followed by neither
whitespace nor `/` (their pre-tokenizers were checked; see `core.token_memo`)."""


def is_additive(counter: TokenCounter) -> bool:
    r"""Whether `counter`'s counts add up over pieces cut after a `\n` before a non-blank, not `/`.

    Args:
        counter: A token counter.

    Returns:
        `True` for tiktoken counters of `ADDITIVE_ENCODINGS`.

    Example:
        ```python
        assert is_additive(TiktokenCounter()) and not is_additive(ApproximateTokenCounter())
        ```
    """
    return isinstance(counter, TiktokenCounter) and counter.encoding_name in ADDITIVE_ENCODINGS


_WITHIN_CHUNK = 32_768
_WITHIN_MARGIN = 1.05


def count_within(counter: TokenCounter, text: str, limit: int) -> int | None:
    r"""The exact token count of `text` when it is at most `limit`, else `None`, cheaply.

    A text far over the limit is not tokenized whole: it is counted in chunks that end at a
    newline followed by neither a blank nor `/` (where the tokenizers the package uses start
    a new piece), and counting stops as soon as the chunks alone are over the limit. For an
    additive counter (`is_additive`) the chunks' counts add up to the text's exactly, so
    their sum is the answer: the text is tokenized once, and only as far as the limit. Any
    other counter stops once the chunks pass the limit with a margin (5%), and a text that
    may fit is counted whole, exactly.

    Args:
        counter: The token counter.
        text: The text.
        limit: The most tokens allowed.

    Returns:
        The count, or `None` when it is over `limit`.

    Example:
        ```python
        assert count_within(ApproximateTokenCounter(), "a\n" * 10, 1_000) is not None
        ```
    """
    if len(text) <= _WITHIN_CHUNK * 2:
        tokens = counter.count(text)
        return tokens if tokens <= limit else None
    exact = is_additive(counter)
    stop = limit if exact else limit * _WITHIN_MARGIN + 64
    total, pos, n = 0, 0, len(text)
    while pos < n:
        end = min(n, pos + _WITHIN_CHUNK)
        while end < n:
            nl = text.find("\n", end - 1)
            if nl < 0 or nl + 1 >= n:
                end = n
                break
            after = text[nl + 1]
            if not after.isspace() and after != "/":
                end = nl + 1
                break
            end = nl + 2
        total += counter.count(text[pos:end])
        pos = end
        if total > stop:
            return None
    if exact:
        return total  # the chunks' counts add up to the text's
    tokens = counter.count(text)  # it may fit: the exact count decides
    return tokens if tokens <= limit else None


def _warn_fallback_once(reason: str) -> None:
    global _WARNED_FALLBACK  # noqa: PLW0603 - a process-wide "warn once" flag
    with _WARN_LOCK:
        if _WARNED_FALLBACK:
            return
        _WARNED_FALLBACK = True
    warnings.warn(
        f"Exact token counting is unavailable ({reason}); using a conservative estimate "
        "(typically 5-30% above the real count, depending on the content). Install "
        "`langchain-result-layer[encodings]` (bpe-openai) or set TIKTOKEN_CACHE_DIR to a "
        "directory holding tiktoken's encoding files for exact counts.",
        OfflineTokenizerWarning,
        stacklevel=3,
    )


def default_token_counter(model: str | None = None) -> TokenCounter:
    """The best counter available offline: exact tiktoken, else the calibrated estimate.

    Args:
        model: Optional model name used to choose the tiktoken encoding.

    Returns:
        A `TiktokenCounter` when its data is available locally, otherwise an
        `ApproximateTokenCounter` (with a one-time `OfflineTokenizerWarning`).

    Example:
        ```python
        counter = default_token_counter("gpt-4o-mini")
        ```
    """
    counter = TiktokenCounter(model=model) if model else TiktokenCounter()
    if counter.available:
        return counter
    _warn_fallback_once(f"no local data for {counter.name}")
    return ApproximateTokenCounter()


def resolve_token_counter(spec: object = None, *, model_name: str | None = None) -> TokenCounter:
    """Turn a user's `token_counter=` argument into a `TokenCounter`.

    Args:
        spec: `None` or `"auto"` (best available), `"tiktoken"`, `"approximate"`, an encoding
            name such as `"cl100k_base"`, a `TokenCounter`, an object with `get_num_tokens`
            (a chat model), or a `str -> int` callable.
        model_name: Used to pick the tiktoken encoding for `None`/`"auto"`/`"tiktoken"`.

    Returns:
        A counter.

    Raises:
        TypeError: When `spec` is none of the above.

    Example:
        ```python
        counter = resolve_token_counter("approximate")
        assert counter.exact is False
        ```
    """
    if spec is None or spec == "auto":
        return default_token_counter(model_name)
    if spec == "approximate":
        return ApproximateTokenCounter()
    if spec == "tiktoken":
        exact = TiktokenCounter(model=model_name) if model_name else TiktokenCounter()
        if exact.available:
            return exact
        _warn_fallback_once(f"no local data for {exact.name}")
        return ApproximateTokenCounter()
    if isinstance(spec, str):
        enc_counter = TiktokenCounter(encoding=spec)
        if enc_counter.available:
            return enc_counter
        _warn_fallback_once(f"no local data for {enc_counter.name}")
        return ApproximateTokenCounter()
    if isinstance(spec, TokenCounter):
        return spec
    if hasattr(spec, "get_num_tokens"):
        model_counter = ChatModelTokenCounter(spec)
        try:  # probe now: a model without a tokenizer of its own fails on first use otherwise
            model_counter.count("probe")
        except Exception as exc:  # any failure means the model cannot count
            fallback = default_token_counter(model_name)
            warnings.warn(
                f"{type(spec).__name__}.get_num_tokens failed ({type(exc).__name__}: "
                f"{str(exc)[:120]}); counting with {fallback.name} instead.",
                OfflineTokenizerWarning,
                stacklevel=2,
            )
            return fallback
        return model_counter
    if callable(spec):
        return CallableTokenCounter(spec)
    msg = f"token_counter must be a TokenCounter, a chat model, a callable or a name; got {spec!r}"
    raise TypeError(msg)
