r"""A `ResultStore` over a LangGraph `BaseStore`, for graphs deployed with a platform store.

Records live under a namespace prefix (default `("langchain_result_layer",)`):

- `(*prefix, "records")`, key = record id: the record's metadata and its chunk index
  (`starts`, `nl_before`), so a range read gets exactly the chunks it needs;
- `(*prefix, "chunks", <record id>)`, key = `00000000`, `00000001`, ...: the pieces, as JSON
  strings when they are plain text and as base64 otherwise (lone surrogates, NUL, bytes), so
  any result round-trips exactly through JSON and `jsonb`;
- `(*prefix, "audit")`: one item per put, read, info and delete.

Works with `InMemoryStore`, `SqliteStore`, `PostgresStore` and their async variants (async
methods run the store's synchronous API in a worker thread, which the async stores support).
The quota check reads a running total per tenant (`_ledger`: one scan on first use, then
O(log n) per put, rescanned every `quota_refresh_seconds` to see other processes' writes) and
is serialised within the process only; `purge_expired` and `audit_log`
scan their namespace, so prefer the SQL store when records number in the millions.

Example:
    ```python
    from langgraph.store.memory import InMemoryStore

    from langchain_result_layer.stores.base import Principal
    from langchain_result_layer.stores.langgraph_store import LangGraphResultStore

    store = LangGraphResultStore(InMemoryStore())
    meta = store.put("a\nb\n", principal=Principal(user="ada"))
    assert store.read(meta.record_id, principal=Principal(user="ada"), start_line=2).data == "b\n"
    ```
"""

from __future__ import annotations

import base64
import logging
import re
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from langgraph.store.base import BaseStore, GetOp, Item, PutOp, SearchOp

from langchain_result_layer.errors import RecordNotAccessibleError, StoreUnavailableError
from langchain_result_layer.stores._chunked import ChunkedResultStore, put_label
from langchain_result_layer.stores._chunks import Chunk, ListChunkSource, decode_piece, encode_piece
from langchain_result_layer.stores._core import MetaColumns, PutPlan, permitted, validate_record_id
from langchain_result_layer.stores._faults import describe_fault, driver_faults, safe_audit_text
from langchain_result_layer.stores._ledger import UsageLedger
from langchain_result_layer.stores.base import AuditEntry, Principal, ReadResult, RecordMeta

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from langchain_result_layer.stores._chunked import ReadRequest, StoreOptions

__all__ = ["LangGraphResultStore"]

logger = logging.getLogger("langchain_result_layer.stores")

_PLAIN_RE = re.compile(r"[\x00\ud800-\udfff]")
_PAGE = 200


def _chunk_key(i: int) -> str:
    return f"{i:08d}"


def _encode_value(piece: str | bytes) -> dict[str, str]:
    if isinstance(piece, str) and not _PLAIN_RE.search(piece):
        return {"e": "s", "d": piece}
    return {"e": "b64", "d": base64.b64encode(encode_piece(piece, compress=False)).decode("ascii")}


def _decode_value(value: Mapping[str, Any], *, is_binary: bool) -> str | bytes:
    data = value.get("d", "")
    if value.get("e") == "s":
        return str(data).encode("utf-8") if is_binary else str(data)
    return decode_piece(base64.b64decode(str(data)), is_binary=is_binary, compressed=False)


_FIELDS = MetaColumns()


def _meta_value(meta: RecordMeta, starts: list[int], nl_before: list[int]) -> dict[str, Any]:
    return {
        **_FIELDS.flatten(meta),
        "extra": dict(meta.extra),
        "starts": starts,
        "nl_before": nl_before,
    }


def _value_meta(v: Mapping[str, Any]) -> RecordMeta:
    return _FIELDS.meta(v, extra=v.get("extra") or {})


class LangGraphResultStore(ChunkedResultStore):
    """A `ResultStore` that keeps records in a LangGraph `BaseStore`.

    Args:
        store: The LangGraph store (`InMemoryStore`, `SqliteStore`, `PostgresStore`, ...).
        namespace: Namespace prefix of every item this store writes.
        quota_refresh_seconds: Rescan the records for the quota's running totals after this
            long (other processes' writes; `None`: never).
        **options: The settings every store takes (`StoreOptions`: lifetime, access, size
            cap, quota, chunk size, clock).

    Example:
        ```python
        from langgraph.store.memory import InMemoryStore

        store = LangGraphResultStore(InMemoryStore(), namespace=("my_app", "results"))
        ```
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        namespace: Sequence[str] = ("langchain_result_layer",),
        quota_refresh_seconds: float | None = 300.0,
        **options: Unpack[StoreOptions],
    ) -> None:
        if not isinstance(cast("object", store), BaseStore):
            msg = f"store must be a langgraph BaseStore, got {type(store).__name__}"
            raise TypeError(msg)
        super().__init__(**options)
        self.store = store
        self.namespace = tuple(namespace)
        self._quota_lock = threading.Lock()
        self._ledger = UsageLedger(self._record_values, refresh_seconds=quota_refresh_seconds)

    def __repr__(self) -> str:
        return f"LangGraphResultStore({type(self.store).__name__}, namespace={self.namespace!r})"

    # ------------------------------------------------------------------ helpers

    @property
    def _records_ns(self) -> tuple[str, ...]:
        return (*self.namespace, "records")

    @property
    def _audit_ns(self) -> tuple[str, ...]:
        return (*self.namespace, "audit")

    def _chunks_ns(self, record_id: str) -> tuple[str, ...]:
        return (*self.namespace, "chunks", record_id)

    def _batch(self, ops: Sequence[Any]) -> list[Any]:
        with driver_faults(Exception, self._unavailable):
            return list(self.store.batch(ops))

    def _unavailable(self, exc: BaseException) -> StoreUnavailableError:
        # The driver's text can quote hosts and users: the model sees a general account.
        message, _down = describe_fault(exc, operation="operation")
        logger.warning("LangGraph store %s failed: %s", type(self.store).__name__, exc)
        return StoreUnavailableError(f"{message} (LangGraph {type(self.store).__name__})")

    def _audit_op(
        self, principal: Principal, record_id: str, action: str, rng: str, ok: bool
    ) -> PutOp:
        now = self._clock()
        key = f"{time.time_ns():020d}-{secrets.token_hex(4)}"
        value = {
            "at": now,
            "tenant": safe_audit_text(principal.tenant),
            "user": safe_audit_text(principal.user),
            "thread": safe_audit_text(principal.thread),
            "record_id": safe_audit_text(record_id[:128]),
            "action": action,
            "range": rng,
            "granted": ok,
        }
        return PutOp(self._audit_ns, key, value, index=False)

    def _get_value(self, record_id: str) -> Mapping[str, Any] | None:
        if not validate_record_id(record_id):
            return None
        item = self._batch([GetOp(self._records_ns, record_id)])[0]
        return item.value if isinstance(item, Item) else None

    def _checked(
        self, record_id: str, principal: Principal, action: str, rng: str
    ) -> Mapping[str, Any]:
        value = self._get_value(record_id)
        meta = _value_meta(value) if value is not None else None
        ok = permitted(meta, principal, self.access, self._clock())
        self._batch([self._audit_op(principal, str(record_id), action, rng, ok)])
        if not ok or value is None:
            raise RecordNotAccessibleError(str(record_id))
        return value

    def _scan(self, namespace: tuple[str, ...]) -> list[Item]:
        items: list[Item] = []
        offset = 0
        while True:
            page = self._batch([SearchOp(namespace, None, _PAGE, offset)])[0]
            items.extend(page)
            if len(page) < _PAGE:
                return items
            offset += _PAGE

    def _record_values(self) -> list[Mapping[str, Any]]:
        return [item.value for item in self._scan(self._records_ns)]

    def _usage(self, tenant: str | None, now: float) -> int:
        return self._ledger.used(tenant, now=now)

    # ------------------------------------------------------------------ port

    def _save(self, plan: PutPlan, principal: Principal) -> RecordMeta:
        with self._quota_lock:
            if plan.given_id and self._get_value(plan.record_id) is not None:
                msg = f"record id {plan.record_id!r} is already taken"
                raise ValueError(msg)
            tenant, now = plan.principal.tenant, plan.created_at
            used = self._usage(tenant, now) if self.tenant_quota is not None else None
            meta, pieces = self._sized(plan, used)
            starts: list[int] = []
            nl_before: list[int] = []
            ns = self._chunks_ns(meta.record_id)
            ops: list[Any] = []
            for i, chunk in enumerate(pieces):
                starts.append(chunk.start)
                nl_before.append(chunk.nl_before)
                ops.append(PutOp(ns, _chunk_key(i), _encode_value(chunk.data), index=False))
                if len(ops) >= 64:
                    self._batch(ops)
                    ops = []
            # The record item goes last: readers never see a record whose chunks are missing.
            value = _meta_value(meta, starts, nl_before)
            ops.append(PutOp(self._records_ns, meta.record_id, value, index=False))
            ops.append(self._audit_op(principal, meta.record_id, "put", put_label(meta), True))
            self._batch(ops)
            self._ledger.add(meta.record_id, tenant, meta.size, meta.expires_at, now=now)
        return meta

    def info(self, record_id: str, *, principal: Principal) -> RecordMeta:
        """Metadata of a record (audited)."""
        return _value_meta(self._checked(record_id, principal, "info", ""))

    def _read(self, record_id: str, principal: Principal, request: ReadRequest) -> ReadResult:
        value = self._checked(record_id, principal, "read", request.label)
        meta = _value_meta(value)
        ns = self._chunks_ns(meta.record_id)

        def load(i: int) -> Chunk:
            item = self._batch([GetOp(ns, _chunk_key(i))])[0]
            if not isinstance(item, Item):
                msg = f"chunk {i} of record {meta.record_id} is missing"
                raise StoreUnavailableError(msg)
            return Chunk(
                start=int(value["starts"][i]),
                nl_before=int(value["nl_before"][i]),
                data=_decode_value(item.value, is_binary=meta.is_binary),
            )

        source = ListChunkSource(list(value["starts"]), list(value["nl_before"]), load)
        result = request.serve(meta, source)
        self.stats.add(len(source.loaded))
        return result

    def _delete_value(self, value: Mapping[str, Any]) -> None:
        rid = str(value["record_id"])
        ns = self._chunks_ns(rid)
        ops: list[Any] = [PutOp(ns, _chunk_key(i), None) for i in range(len(value["starts"]))]
        ops.append(PutOp(self._records_ns, rid, None))
        self._batch(ops)
        self._ledger.remove(rid)

    def delete(self, record_id: str, *, principal: Principal) -> bool:
        """Delete a record the principal may read."""
        try:
            value = self._checked(record_id, principal, "delete", "")
        except RecordNotAccessibleError:
            return False
        self._delete_value(value)
        return True

    def purge_expired(self, *, now: float | None = None) -> int:
        """Delete expired records (scans the records namespace)."""
        now = self._clock() if now is None else now
        dead = [
            item.value
            for item in self._scan(self._records_ns)
            if item.value.get("expires_at") is not None and item.value["expires_at"] <= now
        ]
        for value in dead:
            self._delete_value(value)
        return len(dead)

    def usage(self, tenant: str | None) -> int:
        """Characters (bytes) a tenant keeps in unexpired records.

        Args:
            tenant: The tenant.

        Returns:
            The total.
        """
        return self._usage(tenant, self._clock())

    def audit_log(self, *, record_id: str | None = None, limit: int = 100) -> list[AuditEntry]:
        """Most recent audit entries first (scans the audit namespace)."""
        items = sorted(self._scan(self._audit_ns), key=lambda it: it.key, reverse=True)
        out: list[AuditEntry] = []
        for item in items:
            v = item.value
            if record_id is not None and v.get("record_id") != record_id[:128]:
                continue
            out.append(
                AuditEntry(
                    at=float(v["at"]),
                    principal=Principal(
                        tenant=v.get("tenant"), user=v.get("user"), thread=v.get("thread")
                    ),
                    record_id=str(v["record_id"]),
                    action=str(v["action"]),
                    range=str(v["range"]),
                    granted=bool(v["granted"]),
                )
            )
            if len(out) >= limit:
                break
        return out

    def close(self) -> None:
        """Nothing to release (the LangGraph store belongs to the caller)."""
