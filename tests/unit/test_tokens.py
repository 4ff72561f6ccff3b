"""Token counters: exact tiktoken offline, the fallback and its single warning, resolution."""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.resources
import importlib.util
import marshal
import threading
import types
import warnings
from pathlib import Path

import pytest
import tiktoken.load
from langchain_core.language_models import FakeListChatModel

from langchain_result_layer.core import tokens
from langchain_result_layer.core.tokens import (
    ApproximateTokenCounter,
    CallableTokenCounter,
    ChatModelTokenCounter,
    OfflineTokenizerWarning,
    TiktokenCounter,
    TokenCounter,
    default_token_counter,
    load_offline_encoding,
    resolve_token_counter,
)


class WordCountingModel(FakeListChatModel):
    """A chat model whose own counter counts words (the fake's default needs transformers)."""

    def get_num_tokens(self, text: str) -> int:
        return len(text.split())


O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget loaded encodings and the warn-once flag, for this test only."""
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    monkeypatch.setattr(tokens, "_WARNED_FALLBACK", False)


@pytest.fixture
def no_download(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt by tiktoken to fetch a file fails the test loudly."""

    def refuse(*args: object, **kwargs: object) -> bytes:
        raise AssertionError(f"tiktoken tried to download: {args}")

    monkeypatch.setattr(tiktoken.load, "read_file", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file_cached", refuse)


def hide_bpe_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the `bpe-openai` package (and so its copy of the merge tables) unavailable."""
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, *args: object, **kwargs: object) -> object:
        if name.split(".", maxsplit=1)[0] == "bpe_openai":
            return None
        return real_find_spec(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tokens.importlib.util, "find_spec", find_spec)


@pytest.fixture
def no_bpe_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the packaged merge tables unavailable: `bpe-openai`'s and this package's own."""
    monkeypatch.setattr(tokens, "_bundled_bpe_path", lambda name: None)
    hide_bpe_openai(monkeypatch)


@pytest.fixture
def empty_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture(scope="module")
def o200k_file() -> bytes:
    """The o200k_base merge table as tiktoken caches it (read before any patching)."""
    data = importlib.resources.files("bpe_openai.data") / "o200k_base.tiktoken.gz"
    return gzip.decompress(data.read_bytes())


# --------------------------------------------------------------------------- exact counts


def test_exact_counts_match_tiktoken_reference_values() -> None:
    counter = TiktokenCounter()
    assert counter.name == "tiktoken:o200k_base"
    assert counter.exact is True
    assert counter.count("") == 0
    assert counter.count("hello world") == 2
    assert TiktokenCounter(encoding="cl100k_base").count("hello world") == 2


def test_model_name_selects_the_encoding() -> None:
    assert TiktokenCounter(model="gpt-4").name == "tiktoken:cl100k_base"
    assert TiktokenCounter(model="gpt-4o").name == "tiktoken:o200k_base"
    assert TiktokenCounter(model="some-unknown-model").name == "tiktoken:o200k_base"


def test_special_token_text_counts_as_ordinary_text() -> None:
    counter = TiktokenCounter()
    assert counter.count("<|endoftext|>") > 1


def test_lone_surrogates_are_counted_not_raised() -> None:
    counter = TiktokenCounter()
    assert counter.count("a\ud800b\udfffc") >= 3


def test_the_network_is_blocked_in_these_tests() -> None:
    # The offline tests below rely on it: any download attempt would fail, not hang.
    import socket

    from pytest_socket import SocketConnectBlockedError

    with pytest.raises(SocketConnectBlockedError), pytest.warns(UserWarning, match="8.8.8.8"):
        socket.create_connection(("8.8.8.8", 443), timeout=1)


def test_offline_load_never_downloads(
    fresh_cache: None, no_download: None, empty_cache_dir: Path
) -> None:
    # pytest-socket is active for the whole suite; on top, tiktoken's fetchers refuse.
    enc = load_offline_encoding("o200k_base")
    assert enc is not None
    assert len(enc.encode_ordinary("hello world")) == 2


def test_o200k_loads_from_the_copy_this_package_ships(
    fresh_cache: None, no_download: None, empty_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default encoding is exact without `bpe-openai` (an optional extra)."""
    hide_bpe_openai(monkeypatch)
    bundled = tokens._bundled_bpe_path("o200k_base")
    assert bundled is not None
    assert bundled.stat().st_size < 1_500_000
    assert tokens._bundled_bpe_path("cl100k_base") is None  # only the default is shipped
    counter = default_token_counter()
    assert isinstance(counter, TiktokenCounter)
    assert counter.count("hello world") == 2


@pytest.mark.parametrize(
    "content",
    [
        gzip.compress(marshal.dumps([b"a", b"b"])),  # a valid list, not the recorded one
        b"not gzip at all",
        gzip.compress(b"\x00 not marshal"),
    ],
)
def test_a_corrupt_shipped_copy_is_rejected(
    fresh_cache: None,
    no_download: None,
    no_bpe_openai: None,
    empty_cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    content: bytes,
) -> None:
    bad = empty_cache_dir / "o200k_base.tokens.marshal.gz"
    bad.write_bytes(content)
    monkeypatch.setattr(tokens, "_bundled_bpe_path", lambda name: bad)
    assert load_offline_encoding("o200k_base") is None  # and nothing else to fall back to


def test_the_shipped_copy_is_tiktokens_o200k_base(o200k_file: bytes) -> None:
    """Rebuilt as a `.tiktoken` file, the shipped list is byte for byte the official one."""
    official_hash, _ = tokens._BUNDLED["o200k_base"]
    ranks = tokens._bundled_ranks("o200k_base", official_hash)
    assert ranks is not None
    rebuilt = b"".join(
        base64.b64encode(token) + b" " + str(rank).encode() + b"\n" for token, rank in ranks.items()
    )
    assert hashlib.sha256(rebuilt).hexdigest() == official_hash
    assert rebuilt == o200k_file
    # tiktoken's registry still expects exactly that file, so the copy is used only for it
    seen: list[str | None] = []

    def capture(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen.append(expected_hash)
        return {}

    from tiktoken_ext import openai_public

    constructor = openai_public.ENCODING_CONSTRUCTORS["o200k_base"]
    globals_ = {**constructor.__globals__, "load_tiktoken_bpe": capture}
    types.FunctionType(constructor.__code__, globals_)()
    assert seen == [official_hash]
    assert tokens._bundled_ranks("o200k_base", "another hash") is None


def test_loading_does_not_import_the_bpe_openai_package(fresh_cache: None) -> None:
    import sys

    sys.modules.pop("bpe_openai", None)
    assert load_offline_encoding("o200k_base") is not None
    assert "bpe_openai" not in sys.modules  # its import costs about a second


def test_encodings_load_once_across_threads(fresh_cache: None) -> None:
    seen: list[object] = []

    def load() -> None:
        seen.append(load_offline_encoding("cl100k_base"))

    threads = [threading.Thread(target=load) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(e) for e in seen}) == 1
    assert seen[0] is not None


# --------------------------------------------------------------------------- local sources


def test_tiktoken_cache_dir_is_used_when_the_package_data_is_missing(
    o200k_file: bytes,
    fresh_cache: None,
    no_download: None,
    no_bpe_openai: None,
    empty_cache_dir: Path,
) -> None:
    name = hashlib.sha1(O200K_URL.encode()).hexdigest()
    (empty_cache_dir / name).write_bytes(o200k_file)
    counter = TiktokenCounter()
    assert counter.available
    assert counter.count("hello world") == 2


def test_a_corrupt_cache_file_is_rejected_by_its_hash(
    fresh_cache: None, no_download: None, no_bpe_openai: None, empty_cache_dir: Path
) -> None:
    name = hashlib.sha1(O200K_URL.encode()).hexdigest()
    (empty_cache_dir / name).write_bytes(b"aGVsbG8= 0\n")
    assert load_offline_encoding("o200k_base") is None


def test_a_corrupt_cache_file_falls_through_to_the_package_data(
    fresh_cache: None, no_download: None, empty_cache_dir: Path
) -> None:
    name = hashlib.sha1(O200K_URL.encode()).hexdigest()
    (empty_cache_dir / name).write_bytes(b"garbage")
    enc = load_offline_encoding("o200k_base")
    assert enc is not None
    assert len(enc.encode_ordinary("hello world")) == 2


def test_unknown_encoding_is_unavailable(fresh_cache: None) -> None:
    assert load_offline_encoding("no_such_encoding") is None
    counter = TiktokenCounter(encoding="no_such_encoding")
    assert not counter.available
    with pytest.raises(LookupError, match="not available offline"):
        counter.count("x")


# --------------------------------------------------------------------------- fallback


def test_fallback_to_the_estimate_warns_exactly_once(
    fresh_cache: None, no_download: None, no_bpe_openai: None, empty_cache_dir: Path
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = default_token_counter()
        second = default_token_counter("gpt-4o")
        third = resolve_token_counter("tiktoken")
        fourth = resolve_token_counter("cl100k_base")
        fifth = resolve_token_counter(None)
    counters = [first, second, third, fourth, fifth]
    assert all(isinstance(c, ApproximateTokenCounter) for c in counters)
    offline = [w for w in caught if issubclass(w.category, OfflineTokenizerWarning)]
    assert len(offline) == 1
    assert "TIKTOKEN_CACHE_DIR" in str(offline[0].message)
    assert first.count("hello world") >= 2


def test_fallback_counter_is_usable_in_a_layer(
    fresh_cache: None, no_download: None, no_bpe_openai: None, empty_cache_dir: Path
) -> None:
    from langchain_core.messages import ToolMessage

    from langchain_result_layer import ResultLayer

    with pytest.warns(OfflineTokenizerWarning):
        layer = ResultLayer(context_window=4_000, max_result_tokens=300, store=False)
    assert layer.token_counter.exact is False
    out = layer.process_tool_message(ToolMessage(content="x\n" * 50_000, tool_call_id="c1"))
    assert layer.token_counter.count(str(out.content)) <= 300


# --------------------------------------------------------------------------- resolution


def test_resolution_of_every_spec() -> None:
    assert isinstance(resolve_token_counter("approximate"), ApproximateTokenCounter)
    assert isinstance(resolve_token_counter("auto"), TiktokenCounter)
    assert resolve_token_counter("cl100k_base").name == "tiktoken:cl100k_base"
    mine = CallableTokenCounter(len, name="len")
    assert resolve_token_counter(mine) is mine
    model = WordCountingModel(responses=["x"])
    by_model = resolve_token_counter(model)
    assert isinstance(by_model, ChatModelTokenCounter)
    assert by_model.count("hello world") == 2
    assert by_model.name == "model:WordCountingModel"
    assert by_model.count("") == 0
    fn = resolve_token_counter(lambda s: len(s) // 2)
    assert isinstance(fn, CallableTokenCounter)
    assert fn.count("abcd") == 2
    assert fn.count("") == 0
    with pytest.raises(TypeError, match="token_counter must be"):
        resolve_token_counter(42)


def test_every_counter_satisfies_the_port() -> None:
    for counter in (
        TiktokenCounter(),
        ApproximateTokenCounter(),
        ChatModelTokenCounter(WordCountingModel(responses=["x"])),
        CallableTokenCounter(len),
    ):
        assert isinstance(counter, TokenCounter)
        assert isinstance(counter.name, str)
        assert counter.count("") == 0
