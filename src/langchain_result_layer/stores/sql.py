r"""SQL result store (SQLAlchemy 2.x Core): SQLite embedded, PostgreSQL for many workers.

Raw results are kept outside graph checkpoints, in chunks with a line index, so reading lines
10,000-10,100 of a 100 MB result loads one or two 64 KB chunks. Tables are created on first
use and migrated by version (see `stores/_schema.py` and `docs/stores.md`).

- SQLite (`sqlite:///tool_results.db`): WAL journal, a 30 s busy timeout and `BEGIN
  IMMEDIATE` for writes, so parallel tool calls from threads and processes queue instead of
  failing. `sqlite://` (in memory) shares one connection between threads behind a lock.
- PostgreSQL (`postgresql+psycopg://user:pass@host/db`, psycopg 3): a connection pool;
  quota checks take a per-tenant advisory lock.

Async methods run the synchronous calls in a worker thread (`asyncio.to_thread`): the event
loop never blocks, one code path serves both, and no async driver is needed.

Example:
    ```python
    from langchain_result_layer.stores.base import Principal
    from langchain_result_layer.stores.sql import SQLResultStore

    store = SQLResultStore("sqlite:///tool_results.db")
    meta = store.put("a\nb\nc\n", principal=Principal(user="ada"))
    assert store.read(meta.record_id, principal=Principal(user="ada"), start_line=2,
                      end_line=2).data == "b\n"
    ```
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import (
    Connection,
    Engine,
    Row,
    create_engine,
    delete,
    event,
    func,
    insert,
    or_,
    select,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from langchain_result_layer.errors import RecordNotAccessibleError, StoreUnavailableError
from langchain_result_layer.stores._chunked import ChunkedResultStore, put_label
from langchain_result_layer.stores._chunks import Chunk, count_newlines, decode_piece, encode_piece
from langchain_result_layer.stores._core import MetaColumns, PutPlan, permitted, validate_record_id
from langchain_result_layer.stores._faults import (
    FailFast,
    StoreTimeouts,
    describe_fault,
    driver_faults,
    safe_audit_text,
)
from langchain_result_layer.stores._schema import SCHEMA_VERSION, Tables, ensure_schema, make_tables
from langchain_result_layer.stores.base import AuditEntry, Principal, ReadResult, RecordMeta

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from langchain_result_layer.stores._chunked import ReadRequest, StoreOptions

__all__ = ["SQLResultStore"]

logger = logging.getLogger("langchain_result_layer.stores")

_WRITE_BATCH = 32
_SCHEMA_LOCK_KEY = 0x6C726C5F736368  # "lrl_sch"
_DRIVER_FAULTS = (SQLAlchemyError, OSError)
"""What SQLAlchemy and the drivers raise when the database fails."""
_AUDIT_ID_LEN = 128


def _lock_key(text_key: str) -> int:
    digest = hashlib.blake2b(text_key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _normalise_url(url: str) -> str:
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def _sqlite_file(engine: Engine) -> str | None:
    """The file of a file-backed SQLite engine (`None` for memory and other databases)."""
    if engine.dialect.name != "sqlite" or _is_memory_sqlite(engine):
        return None
    database = engine.url.database or ""
    if database.startswith("file:"):
        database = database[len("file:") :].split("?", 1)[0]
    return os.path.abspath(database) if database else None


def _is_memory_sqlite(engine: Engine) -> bool:
    database = engine.url.database
    return engine.dialect.name == "sqlite" and (
        not database or database == ":memory:" or "mode=memory" in str(engine.url)
    )


def _install_sqlite_hooks(engine: Engine, *, wal: bool, busy_ms: int) -> None:
    """Pragmas on connect and an explicit `BEGIN` (IMMEDIATE for writes)."""
    if getattr(engine, "_lrl_sqlite_hooks", False):
        return

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # the driver must not open transactions itself
        cur = dbapi_conn.cursor()
        try:
            cur.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
            if wal:
                with contextlib.suppress(Exception):
                    cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
        finally:
            cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("lrl_begin", "")
        conn.exec_driver_sql(f"BEGIN {mode}".strip())

    engine._lrl_sqlite_hooks = True  # type: ignore[attr-defined]


_COLUMNS = MetaColumns(user="user_id", thread="thread_id")


def _row_meta(row: Row[Any]) -> RecordMeta:
    m = row._mapping
    try:
        extra = json.loads(m["extra"]) if m["extra"] else {}
    except ValueError:
        extra = {}
    return _COLUMNS.meta(dict(m), extra=extra if isinstance(extra, dict) else {})


class _SQLChunkSource:
    """Chunk lookups for one read, on one connection."""

    __slots__ = (
        "_cache",
        "_chunk_size",
        "_compressed",
        "_conn",
        "_is_binary",
        "_newlines",
        "_record_id",
        "_t",
        "rows",
    )

    def __init__(
        self,
        conn: Connection,
        tables: Tables,
        record_id: str,
        *,
        is_binary: bool,
        compressed: bool,
        chunk_size: int,
    ) -> None:
        self._chunk_size = chunk_size
        self._newlines: dict[int, int] = {}
        self._conn = conn
        self._t = tables.chunks
        self._record_id = record_id
        self._is_binary = is_binary
        self._compressed = compressed
        self._cache: dict[int, Chunk] = {}
        self.rows = 0

    def _chunk(self, row: Any) -> Chunk:
        start = int(row.start)
        cached = self._cache.get(start)
        if cached is not None:
            return cached
        self.rows += 1
        chunk = Chunk(
            start=start,
            nl_before=int(row.nl_before),
            data=decode_piece(row.data, is_binary=self._is_binary, compressed=self._compressed),
        )
        self._cache[start] = chunk
        return chunk

    def _newline_lookup(self, k: int) -> Any:
        c = self._t.c
        return (
            select(c.start)
            .where(c.record_id == self._record_id, c.nl_before < k)
            .order_by(c.nl_before.desc(), c.start.desc())
            .limit(1)
            .scalar_subquery()
        )

    def prefetch_lines(self, k_first: int | None, k_last: int | None, max_size: int | None) -> None:
        """Load the chunks from newline `k_first` to newline `k_last` in one query."""
        c = self._t.c
        lower: Any = 0 if k_first is None else func.coalesce(self._newline_lookup(k_first), 0)
        query = select(c.start, c.nl_before, c.data).where(
            c.record_id == self._record_id, c.start >= lower
        )
        if k_last is not None:
            query = query.where(c.start <= self._newline_lookup(k_last))
        if max_size is not None:
            query = query.where(c.start < lower + (max_size + 2 * self._chunk_size))
        for row in self._conn.execute(query.order_by(c.start)):
            self._chunk(row)

    def chunk_with_newline(self, k: int) -> Chunk | None:
        c = self._t.c
        for chunk in self._cache.values():
            if chunk.nl_before < k <= chunk.nl_before + self._count(chunk):
                return chunk
        row = self._conn.execute(
            select(c.start, c.nl_before, c.data)
            .where(c.record_id == self._record_id, c.nl_before < k)
            .order_by(c.nl_before.desc(), c.start.desc())
            .limit(1)
        ).first()
        return None if row is None else self._chunk(row)

    def _count(self, chunk: Chunk) -> int:
        n = self._newlines.get(chunk.start)
        if n is None:
            n = self._newlines[chunk.start] = count_newlines(chunk.data)
        return n

    def chunks_in(self, lo: int, hi: int) -> Sequence[Chunk]:
        cached = sorted(self._cache.values(), key=lambda ch: ch.start)
        covering = [ch for ch in cached if ch.end > lo and ch.start < hi]
        if (
            covering
            and covering[0].start <= lo
            and covering[-1].end >= hi
            and all(a.end == b.start for a, b in itertools.pairwise(covering))
        ):
            return covering
        c = self._t.c
        first = (
            select(c.start)
            .where(c.record_id == self._record_id, c.start <= lo)
            .order_by(c.start.desc())
            .limit(1)
            .scalar_subquery()
        )
        rows = self._conn.execute(
            select(c.start, c.nl_before, c.data)
            .where(c.record_id == self._record_id, c.start >= first, c.start < hi)
            .order_by(c.start)
        ).all()
        return [chunk for chunk in (self._chunk(r) for r in rows) if chunk.end > lo]


class SQLResultStore(ChunkedResultStore):
    """A `ResultStore` in a SQL database through SQLAlchemy 2.x Core.

    Args:
        url: A SQLAlchemy URL (`sqlite:///tool_results.db`, `sqlite://`,
            `postgresql+psycopg://user:pass@host:5432/db`) or an `Engine`. A plain
            `postgresql://` URL uses psycopg 3.
        compress: zlib-compress chunks (smaller database, a little more CPU).
        table_prefix: Prefix of the table names.
        audit_ttl_seconds: Age after which `purge_expired` deletes audit rows (`None`: never).
        durable_audit: On PostgreSQL, wait for the audit row of every read to be flushed to
            disk before returning the data. Off by default: the row is written in the read's
            transaction, committed with `synchronous_commit = off`, so a server crash can lose
            the last moments of read-audit rows (never data, never consistency) and a read
            saves the WAL flush (about 3-6 ms on the benchmark machine).
        engine_options: Extra `create_engine` options (only when `url` is a string).
        timeouts: Connect, statement and lock timeouts, and how long to fail fast after an
            outage.
        **options: The settings every store takes (`StoreOptions`: lifetime, access, size
            cap, quota, chunk size, clock).

    Example:
        ```python
        store = SQLResultStore("sqlite:///tool_results.db", default_ttl_seconds=24 * 3600)
        ```
    """

    def __init__(
        self,
        url: str | Engine,
        *,
        compress: bool = False,
        table_prefix: str = "lrl_",
        audit_ttl_seconds: float | None = 90 * 24 * 3600.0,
        durable_audit: bool = False,
        engine_options: Mapping[str, Any] | None = None,
        timeouts: StoreTimeouts | None = None,
        **options: Unpack[StoreOptions],
    ) -> None:
        super().__init__(**options)
        self.compress = compress
        self.audit_ttl_seconds = audit_ttl_seconds
        self.tables = make_tables(table_prefix)
        self.timeouts = timeouts if timeouts is not None else StoreTimeouts()
        self._fail_fast = FailFast(self.timeouts.retry_after_seconds)
        self._owns_engine = isinstance(url, str)
        self.engine = self._make_engine(url, dict(engine_options or {}), self.timeouts)
        # Timeouts of an engine made elsewhere are set per transaction (SET LOCAL).
        self._set_local_timeouts = not self._owns_engine
        self.dialect = self.engine.dialect.name
        self._serial: threading.Lock | None = (
            threading.Lock() if _is_memory_sqlite(self.engine) else None
        )
        # PostgreSQL writes the audit row in the read's own transaction (one commit per read);
        # SQLite reads stay lock-free and audit in a short write transaction after the read.
        self._audit_inline = self.dialect != "sqlite"
        self.durable_audit = durable_audit
        self._relaxed_audit = self.dialect == "postgresql" and not durable_audit
        if self.dialect == "sqlite":
            _install_sqlite_hooks(
                self.engine,
                wal=not _is_memory_sqlite(self.engine),
                busy_ms=self.timeouts.sqlite_busy_ms(),
            )
        self._ready = threading.Event()
        self._ready_lock = threading.Lock()
        self._sqlite_path = _sqlite_file(self.engine)
        self._sqlite_identity: tuple[int, int] | None = None

    # ------------------------------------------------------------------ engine

    @staticmethod
    def _make_engine(url: str | Engine, options: dict[str, Any], timeouts: StoreTimeouts) -> Engine:
        if isinstance(url, Engine):
            return url
        if not isinstance(cast("object", url), str):
            msg = f"url must be a SQLAlchemy URL string or an Engine, got {type(url).__name__}"
            raise TypeError(msg)
        parsed = make_url(_normalise_url(url))
        backend = parsed.get_backend_name()
        if backend == "sqlite":
            database = parsed.database
            if not database or database == ":memory:":
                options.setdefault("poolclass", StaticPool)
                options.setdefault("connect_args", {"check_same_thread": False})
            else:
                options.setdefault("pool_size", 8)
                options.setdefault("max_overflow", 32)
        elif backend == "postgresql":
            options.setdefault("pool_size", 8)
            options.setdefault("max_overflow", 32)
            options.setdefault(
                "connect_args",
                {
                    "connect_timeout": max(1, round(timeouts.connect_seconds)),
                    "options": timeouts.postgres_options(),
                },
            )
        return create_engine(parsed, **options)

    def __repr__(self) -> str:
        return f"SQLResultStore({self.engine.url.render_as_string(hide_password=True)!r})"

    @contextlib.contextmanager
    def _connection(
        self, *, write: bool, audit_only: bool = False, operation: str = "operation"
    ) -> Iterator[Connection]:
        """A connection in a transaction; SQLAlchemy errors become `StoreUnavailableError`.

        `audit_only` marks a read whose only write is its audit row: on PostgreSQL, unless
        `durable_audit`, that commit does not wait for the WAL flush. Errors name no
        connection detail (see `_faults`); after a connection failure, calls fail at once for
        `timeouts.retry_after_seconds`.
        """
        self._fail_fast.check()
        serial = self._serial
        if serial is not None:
            serial.acquire()
        try:
            with driver_faults(_DRIVER_FAULTS, lambda exc: self._unavailable(exc, operation)):
                self._ensure_ready()
                if write:
                    self._check_sqlite_file()
                with self.engine.connect() as conn:
                    if write and self.dialect == "sqlite":
                        conn.execution_options(lrl_begin="IMMEDIATE")
                    with conn.begin():
                        if self._set_local_timeouts and self.dialect == "postgresql":
                            self._set_timeouts(conn)
                        if audit_only and self._relaxed_audit:
                            conn.exec_driver_sql("SET LOCAL synchronous_commit = off")
                        yield conn
        finally:
            if serial is not None:
                serial.release()

    def _set_timeouts(self, conn: Connection) -> None:
        t = self.timeouts
        settings = []
        if t.statement_seconds is not None:
            settings.append(f"SET LOCAL statement_timeout = {int(t.statement_seconds * 1000)}")
        if t.lock_seconds is not None:
            settings.append(f"SET LOCAL lock_timeout = {int(t.lock_seconds * 1000)}")
        if settings:
            conn.exec_driver_sql("; ".join(settings))

    def _unavailable(self, exc: BaseException, operation: str) -> StoreUnavailableError:
        message, connection_failed = describe_fault(exc, operation=operation)
        if connection_failed:
            self._fail_fast.tripped()
        logger.warning("result store %s failed: %s", operation, exc)
        return StoreUnavailableError(message)

    def _check_sqlite_file(self) -> None:
        """Reopen the database when its file was deleted or replaced since it was opened.

        Writes to a deleted SQLite file would land in the unlinked inode that open
        connections still hold: nobody could ever read them, yet they would be reported as
        saved. The check costs one `stat` per write.
        """
        path = self._sqlite_path
        if path is None:
            return
        try:
            st = os.stat(path)
            identity: tuple[int, int] | None = (st.st_dev, st.st_ino)
        except OSError:
            identity = None
        if identity is not None and identity == self._sqlite_identity:
            return
        with self._ready_lock:
            if self._sqlite_identity is None and identity is not None:
                self._sqlite_identity = identity  # first write: remember the file
                return
            if identity == self._sqlite_identity:
                return
            logger.warning(
                "the result store's SQLite file %s was deleted or replaced; reopening it "
                "(records kept only in the old file are gone)",
                path,
            )
            self.engine.dispose()
            self._ready.clear()
        self._ensure_ready()
        try:
            st = os.stat(path)
        except OSError as exc:
            msg = "the result store's SQLite file was deleted and could not be created again"
            raise StoreUnavailableError(msg) from exc
        with self._ready_lock:
            self._sqlite_identity = (st.st_dev, st.st_ino)

    def _ensure_ready(self) -> None:
        if self._ready.is_set():
            return
        with self._ready_lock:
            if self._ready.is_set():
                return
            with (
                driver_faults(_DRIVER_FAULTS, lambda exc: self._unavailable(exc, "setup")),
                self.engine.connect() as conn,
            ):
                if self.dialect == "sqlite":
                    conn.execution_options(lrl_begin="IMMEDIATE")
                with conn.begin():
                    if self.dialect == "postgresql":
                        conn.execute(
                            text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK_KEY}
                        )
                    ensure_schema(conn, self.tables)
            self._ready.set()

    def migrate(self) -> int:
        """Create the tables or bring them to the current schema version now.

        Returns:
            The schema version in use afterwards.

        Raises:
            StoreUnavailableError: When the database cannot be reached or is newer.

        Example:
            ```python
            from langchain_result_layer.stores._schema import SCHEMA_VERSION

            assert SQLResultStore("sqlite:///tool_results.db").migrate() == SCHEMA_VERSION
            ```
        """
        if self._serial is not None:
            with self._serial:
                self._ensure_ready()
        else:
            self._ensure_ready()
        return SCHEMA_VERSION

    # ------------------------------------------------------------------ helpers

    def _audit_rows(
        self, conn: Connection, entries: Sequence[tuple[float, Principal, str, str, str, bool]]
    ) -> None:
        conn.execute(
            insert(self.tables.audit),
            [
                {
                    "at": at,
                    "tenant": safe_audit_text(p.tenant),
                    "user_id": safe_audit_text(p.user),
                    "thread_id": safe_audit_text(p.thread),
                    "record_id": safe_audit_text(rid[:_AUDIT_ID_LEN]),
                    "action": action,
                    "range": rng,
                    "granted": ok,
                }
                for at, p, rid, action, rng, ok in entries
            ],
        )

    def _audit(self, principal: Principal, record_id: str, action: str, rng: str, ok: bool) -> None:
        with self._connection(write=True, operation="audit") as conn:
            self._audit_rows(conn, [(self._clock(), principal, record_id, action, rng, ok)])

    def _fetch_meta(self, conn: Connection, record_id: str) -> tuple[RecordMeta, str, int] | None:
        if not validate_record_id(record_id):
            return None
        r = self.tables.records
        row = conn.execute(select(r).where(r.c.record_id == record_id)).first()
        if row is None:
            return None
        m = row._mapping
        return _row_meta(row), str(m["codec"]), int(m["chunk_size"])

    def _tenant_filter(self, tenant: str | None) -> Any:
        col = self.tables.records.c.tenant
        return col.is_(None) if tenant is None else col == tenant

    def _usage(self, conn: Connection, tenant: str | None, now: float) -> int:
        r = self.tables.records.c
        total = conn.execute(
            select(func.coalesce(func.sum(r.size), 0)).where(
                self._tenant_filter(tenant), or_(r.expires_at.is_(None), r.expires_at > now)
            )
        ).scalar()
        return int(total or 0)

    # ------------------------------------------------------------------ port: write

    def _save(self, plan: PutPlan, principal: Principal) -> RecordMeta:
        extra_json = json.dumps(plan.extra, default=str, ensure_ascii=True)
        is_binary = isinstance(plan.data, bytes)
        codec = ("bytes" if is_binary else "utf8sp") + ("+zlib" if self.compress else "")
        try:
            with self._connection(write=True, operation="save") as conn:
                used = None
                if self.tenant_quota is not None:
                    if self.dialect == "postgresql":
                        key = _lock_key(f"quota:{plan.principal.tenant}")
                        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
                    used = self._usage(conn, plan.principal.tenant, plan.created_at)
                meta, pieces = self._sized(plan, used)
                conn.execute(
                    insert(self.tables.records).values(
                        **_COLUMNS.flatten(meta),
                        codec=codec,
                        chunk_size=self.chunk_size,
                        extra=extra_json,
                    )
                )
                batch: list[dict[str, Any]] = []
                for chunk in pieces:
                    batch.append(
                        {
                            "record_id": meta.record_id,
                            "start": chunk.start,
                            "nl_before": chunk.nl_before,
                            "data": encode_piece(chunk.data, compress=self.compress),
                        }
                    )
                    if len(batch) >= _WRITE_BATCH:
                        conn.execute(insert(self.tables.chunks), batch)
                        batch = []
                if batch:
                    conn.execute(insert(self.tables.chunks), batch)
                entry = (plan.created_at, principal, meta.record_id, "put", put_label(meta), True)
                self._audit_rows(conn, [entry])
        except StoreUnavailableError as exc:
            if isinstance(exc.__cause__, IntegrityError) and plan.given_id:
                msg = f"record id {plan.record_id!r} is already taken"
                raise ValueError(msg) from exc
            raise
        return meta

    # ------------------------------------------------------------------ port: read

    def _checked(
        self, conn: Connection, record_id: str, principal: Principal
    ) -> tuple[RecordMeta, str, int] | None:
        found = self._fetch_meta(conn, record_id)
        if found is None or not permitted(found[0], principal, self.access, self._clock()):
            return None
        return found

    def info(self, record_id: str, *, principal: Principal) -> RecordMeta:
        """Metadata of a record (audited; raises `RecordNotAccessibleError`)."""
        inline = self._audit_inline
        with self._connection(write=inline, audit_only=inline, operation="read") as conn:
            found = self._checked(conn, record_id, principal)
            if inline:
                ok = found is not None
                self._audit_rows(conn, [(self._clock(), principal, str(record_id), "info", "", ok)])
        if not inline:
            self._audit(principal, str(record_id), "info", "", found is not None)
        if found is None:
            raise RecordNotAccessibleError(str(record_id))
        return found[0]

    def _read(self, record_id: str, principal: Principal, request: ReadRequest) -> ReadResult:
        rng = request.label
        result: ReadResult | None = None
        inline = self._audit_inline
        with self._connection(write=inline, audit_only=inline, operation="read") as conn:
            found = self._checked(conn, record_id, principal)
            if found is not None:
                meta, codec, chunk_size = found
                source = _SQLChunkSource(
                    conn,
                    self.tables,
                    meta.record_id,
                    is_binary=meta.is_binary,
                    compressed=codec.endswith("+zlib"),
                    chunk_size=chunk_size,
                )
                result = request.serve(meta, source)
                self.stats.add(source.rows)
            if inline:
                entry = (self._clock(), principal, str(record_id), "read", rng, result is not None)
                self._audit_rows(conn, [entry])
        if not inline:
            self._audit(principal, str(record_id), "read", rng, result is not None)
        if result is None:
            raise RecordNotAccessibleError(str(record_id))
        return result

    # ------------------------------------------------------------------ port: lifecycle

    def _delete_ids(self, conn: Connection, ids: Sequence[str]) -> None:
        t = self.tables
        conn.execute(delete(t.chunks).where(t.chunks.c.record_id.in_(ids)))
        conn.execute(delete(t.records).where(t.records.c.record_id.in_(ids)))

    def delete(self, record_id: str, *, principal: Principal) -> bool:
        """Delete a record the principal may read; `False` when it is not accessible."""
        with self._connection(write=True, operation="delete") as conn:
            found = self._checked(conn, record_id, principal)
            if found is not None:
                self._delete_ids(conn, [found[0].record_id])
            self._audit_rows(
                conn, [(self._clock(), principal, str(record_id), "delete", "", found is not None)]
            )
        return found is not None

    def purge_expired(self, *, now: float | None = None, batch_size: int = 200) -> int:
        """Delete expired records (in batches) and audit rows older than `audit_ttl_seconds`.

        Args:
            now: The time to compare with (default: the clock).
            batch_size: Records deleted per transaction.

        Returns:
            Records deleted.
        """
        now = self._clock() if now is None else now
        r = self.tables.records.c
        total = 0
        while True:
            with self._connection(write=True, operation="purge") as conn:
                ids = list(
                    conn.execute(
                        select(r.record_id).where(r.expires_at <= now).limit(batch_size)
                    ).scalars()
                )
                if ids:
                    self._delete_ids(conn, ids)
            total += len(ids)
            if len(ids) < batch_size:
                break
        if self.audit_ttl_seconds is not None:
            with self._connection(write=True, operation="purge") as conn:
                a = self.tables.audit.c
                conn.execute(delete(self.tables.audit).where(a.at < now - self.audit_ttl_seconds))
        return total

    def usage(self, tenant: str | None) -> int:
        """Characters (bytes) a tenant keeps in unexpired records (what the quota measures).

        Args:
            tenant: The tenant.

        Returns:
            The total.
        """
        with self._connection(write=False, operation="read") as conn:
            return self._usage(conn, tenant, self._clock())

    def audit_log(self, *, record_id: str | None = None, limit: int = 100) -> list[AuditEntry]:
        """Most recent audit entries first, optionally for one record."""
        a = self.tables.audit.c
        query = select(self.tables.audit).order_by(a.id.desc()).limit(limit)
        if record_id is not None:
            query = query.where(a.record_id == record_id[:_AUDIT_ID_LEN])
        with self._connection(write=False, operation="read") as conn:
            rows = conn.execute(query).all()
        return [
            AuditEntry(
                at=float(m["at"]),
                principal=Principal(tenant=m["tenant"], user=m["user_id"], thread=m["thread_id"]),
                record_id=m["record_id"],
                action=m["action"],
                range=m["range"],
                granted=bool(m["granted"]),
            )
            for m in (row._mapping for row in rows)
        ]

    def close(self) -> None:
        """Release the connection pool (only an engine this store created)."""
        if self._owns_engine:
            self.engine.dispose()
