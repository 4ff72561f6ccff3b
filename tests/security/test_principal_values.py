"""Principal values are compared as the strings they were given; every denial is audited.

Issue 12 item 9. On every backend (in-memory, SQLite file and memory, PostgreSQL, the
LangGraph-store adapter over its in-memory, SQLite and PostgreSQL stores), for principals of
any characters (NUL, lone surrogates, control characters, astral characters, long values):

- the owner's exact strings read the record; every other string is denied, including the
  near misses a careless comparison would merge (case, Unicode normalisation, surrounding
  white space, a trailing newline, `""` for no value, the escaped spelling `\\x00` of a NUL);
- every read, granted or denied, adds one audit row naming the caller (NUL and lone
  surrogates escaped, see `safe_audit_text`);
- a save whose principal a backend cannot store exactly (NUL, lone surrogates) is refused
  rather than stored under another spelling.
"""

from __future__ import annotations

import unicodedata
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_result_layer.errors import RecordNotAccessibleError
from langchain_result_layer.principal import PrincipalResolver
from langchain_result_layer.stores import AccessPolicy, Principal
from langchain_result_layer.stores._faults import safe_audit_text
from tests.stores._backends import BACKENDS, backend_params, make_store

# Any characters, lone surrogates and NUL included, with the ones careless comparisons fold.
_chars = st.one_of(
    st.characters(codec=None, exclude_categories=()),
    st.sampled_from(["\x00", "\ud800", "\udfff", "\n", " ", "\t", "é", "e\u0301", "ß", "İ", "😀"]),
)
values = st.lists(_chars, min_size=1, max_size=20).map("".join)
principals = st.builds(Principal, tenant=values, user=values, thread=values)

_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _storable(value: str | None) -> bool:
    return value is None or not any(c == "\x00" or 0xD800 <= ord(c) <= 0xDFFF for c in value)


def near_misses(value: str) -> list[str | None]:
    """Strings a comparison that folds case, normalisation, space or escapes would merge."""
    out: list[str | None] = [
        None,
        "",
        value + " ",
        " " + value,
        value + "\n",
        value + "\x00",
        value.upper(),
        value.lower(),
        value.casefold(),
        value.replace("\x00", "\\x00"),
        value.encode("ascii", "backslashreplace").decode("ascii"),
        value[:-1],
    ]
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        out.append(unicodedata.normalize(form, value))
    return out


@pytest.fixture(scope="module", params=backend_params(BACKENDS))
def any_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    store, cleanup = make_store(request.param, tmp_path_factory.mktemp("principals"))
    try:
        yield store
    finally:
        cleanup()


def _audit_form(value: str | None) -> str | None:
    return safe_audit_text(value)


def _denied_and_audited(store: Any, record_id: str, caller: Principal) -> None:
    before = store.audit_log(record_id=record_id, limit=10_000)
    with pytest.raises(RecordNotAccessibleError) as info:
        store.read(record_id, principal=caller)
    assert str(info.value) == f"Tool result {record_id!r} not found or not accessible."
    after = store.audit_log(record_id=record_id, limit=10_000)
    assert len(after) == len(before) + 1, caller
    entry = after[0]
    assert entry.granted is False
    assert entry.action == "read"
    for field in ("tenant", "user", "thread"):
        logged = getattr(entry.principal, field)
        given_value = getattr(caller, field)
        assert logged in (given_value, _audit_form(given_value)), (field, logged, given_value)


@_SETTINGS
@given(owner=principals, data=st.data())
def test_principals_compare_as_the_strings_given(
    any_store: Any, owner: Principal, data: Any
) -> None:
    if not all(_storable(v) for v in (owner.tenant, owner.user, owner.thread)):
        with pytest.raises(ValueError, match="NUL characters or lone surrogates"):
            any_store.put("secret\n", principal=owner)
        return
    meta = any_store.put("secret\n", principal=owner)
    assert any_store.read(meta.record_id, principal=owner).data == "secret\n"
    granted = any_store.audit_log(record_id=meta.record_id, limit=10)[0]
    assert granted.granted is True
    assert granted.principal == owner
    field = data.draw(st.sampled_from(["tenant", "user", "thread"]), label="field")
    original = getattr(owner, field)
    assert isinstance(original, str)
    for miss in near_misses(original):
        caller = Principal(**{**owner.as_dict(), field: miss})
        if miss == original:
            assert any_store.read(meta.record_id, principal=caller).data == "secret\n"
        else:
            _denied_and_audited(any_store, meta.record_id, caller)


@_SETTINGS
@given(owner=principals, stranger=principals)
def test_any_other_principal_is_denied_and_audited(
    any_store: Any, owner: Principal, stranger: Principal
) -> None:
    safe_owner = Principal(**{k: (v if _storable(v) else "x") for k, v in owner.as_dict().items()})
    meta = any_store.put("secret\n", principal=safe_owner)
    if stranger == safe_owner:
        assert any_store.read(meta.record_id, principal=stranger).data == "secret\n"
    else:
        _denied_and_audited(any_store, meta.record_id, stranger)


@pytest.mark.parametrize("empty", ["", None])
def test_empty_strings_are_no_principal(
    tmp_path: Path, empty: str | None, store_maker: Callable[[Path, AccessPolicy], Any]
) -> None:
    """`""` is a value given as a string, but it names nobody: `require_principal` refuses it."""
    store = store_maker(tmp_path, AccessPolicy(require_principal=True))
    with pytest.raises(ValueError, match="no principal"):
        store.put("x", principal=Principal(tenant=empty, user=empty, thread=empty))


@pytest.fixture(params=backend_params(BACKENDS))
def store_maker(request: pytest.FixtureRequest) -> Iterator[Callable[[Path, AccessPolicy], Any]]:
    cleanups: list[Callable[[], None]] = []

    def build(path: Path, policy: AccessPolicy) -> Any:
        store, cleanup = make_store(request.param, path, access=policy)
        cleanups.append(cleanup)
        return store

    try:
        yield build
    finally:
        for cleanup in cleanups:
            cleanup()


def test_the_resolver_takes_tenants_and_users_only_as_strings() -> None:
    resolve = PrincipalResolver()
    given_as = resolve(
        {"configurable": {"tenant_id": " Acme ", "user_id": "ADA", "thread_id": "t"}}
    )
    assert given_as == Principal(
        tenant=" Acme ", user="ADA", thread="t"
    )  # not stripped, not folded
    for key in ("tenant_id", "user_id"):
        for not_text in (1, uuid.UUID(int=1), True, 1.0, b"acme", {"id": 1}, object()):
            with pytest.raises(TypeError, match="must be a str"):
                resolve({"configurable": {key: not_text}})


def test_thread_ids_are_taken_as_langgraph_takes_them() -> None:
    """LangGraph's checkpointers use `str(thread_id)`: the layer's thread is theirs."""
    resolve = PrincipalResolver()
    thread = uuid.UUID(int=7)
    assert resolve({"configurable": {"thread_id": thread}}).thread == str(thread)
    assert resolve({"configurable": {"thread_id": 12}}).thread == "12"
    for not_an_id in (True, 1.0, {"id": 1}, object()):
        with pytest.raises(TypeError, match="thread_id"):
            resolve({"configurable": {"thread_id": not_an_id}})


def test_principals_hold_only_strings() -> None:
    """A callback that builds `Principal(tenant=1)` is refused where the value is made."""
    for not_text in (1, uuid.UUID(int=1), b"a", 1.0):
        with pytest.raises(TypeError, match="must be a str"):
            Principal(tenant=not_text)  # type: ignore[arg-type]
    resolve = PrincipalResolver(callback=lambda cfg: Principal(user=cfg["metadata"]["who"]))
    with pytest.raises(TypeError, match="must be a str"):
        resolve({"metadata": {"who": 7}})
