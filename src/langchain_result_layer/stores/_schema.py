"""Tables of the SQL result store, their version, and the migrations between versions.

Schema version 1:

- `<prefix>schema_version(id, version, updated_at)`: one row, the schema version in use;
- `<prefix>records`: one row per stored result (owner, sizes, line count, cap, lifetime);
- `<prefix>chunks(record_id, start, nl_before, data)`: the result in pieces; the primary key
  `(record_id, start)` finds the piece holding an offset and the index
  `(record_id, nl_before, start)` the piece holding a line;
- `<prefix>audit`: one row per put, read, info and delete, granted or denied.

To change the schema: bump `SCHEMA_VERSION`, add a function `MIGRATIONS[old_version]` that
takes a connection (inside the migration transaction) and the tables of the new version, and
brings a database from `old_version` to `old_version + 1`. Stores apply pending migrations on
first use under a lock (an advisory lock on PostgreSQL, `BEGIN IMMEDIATE` on SQLite), so many
workers can start at once; `SQLResultStore.migrate()` does the same explicitly.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    inspect,
    select,
    update,
)

from langchain_result_layer.errors import StoreUnavailableError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Tables", "ensure_schema", "make_tables"]

SCHEMA_VERSION = 1
"""Version of the tables this package writes."""

_AutoId = BigInteger().with_variant(Integer(), "sqlite")


@dataclass(frozen=True, slots=True)
class Tables:
    """The store's tables."""

    metadata: MetaData
    version: Table
    records: Table
    chunks: Table
    audit: Table


def make_tables(prefix: str = "lrl_") -> Tables:
    """Build the table objects for a table-name prefix.

    Args:
        prefix: Prefix of every table name.

    Returns:
        The tables.
    """
    md = MetaData()
    version = Table(
        f"{prefix}schema_version",
        md,
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("version", Integer, nullable=False),
        Column("updated_at", Float, nullable=False),
    )
    records = Table(
        f"{prefix}records",
        md,
        Column("record_id", String(64), primary_key=True),
        Column("tenant", Text),
        Column("user_id", Text),
        Column("thread_id", Text),
        Column("kind", String(32), nullable=False),
        Column("is_binary", Boolean, nullable=False),
        Column("codec", String(16), nullable=False),
        Column("chunk_size", Integer, nullable=False),
        Column("size", BigInteger, nullable=False),
        Column("original_size", BigInteger, nullable=False),
        Column("line_count", BigInteger, nullable=False),
        Column("capped", Boolean, nullable=False),
        Column("gap_start", BigInteger),
        Column("gap_end", BigInteger),
        Column("cap_reason", String(32)),
        Column("created_at", Float, nullable=False),
        Column("expires_at", Float),
        Column("tool_name", Text),
        Column("tool_call_id", Text),
        Column("extra", Text, nullable=False),
        Index(f"{prefix}records_tenant", "tenant", "expires_at"),
        Index(f"{prefix}records_expires", "expires_at"),
    )
    chunks = Table(
        f"{prefix}chunks",
        md,
        Column("record_id", String(64), primary_key=True),
        Column("start", BigInteger, primary_key=True, autoincrement=False),
        Column("nl_before", BigInteger, nullable=False),
        Column("data", LargeBinary, nullable=False),
        Index(f"{prefix}chunks_lines", "record_id", "nl_before", "start"),
    )
    audit = Table(
        f"{prefix}audit",
        md,
        Column("id", _AutoId, primary_key=True, autoincrement=True),
        Column("at", Float, nullable=False),
        Column("tenant", Text),
        Column("user_id", Text),
        Column("thread_id", Text),
        Column("record_id", String(128), nullable=False),
        Column("action", String(16), nullable=False),
        Column("range", Text, nullable=False),
        Column("granted", Boolean, nullable=False),
        Index(f"{prefix}audit_record", "record_id", "id"),
        Index(f"{prefix}audit_at", "at"),
    )
    return Tables(metadata=md, version=version, records=records, chunks=chunks, audit=audit)


Migration = Callable[[Connection, Tables], None]

MIGRATIONS: dict[int, Migration] = {}
"""`MIGRATIONS[v]` upgrades a database from version `v` to `v + 1`."""


def ensure_schema(conn: Connection, tables: Tables) -> int:
    """Create the tables or migrate them to `SCHEMA_VERSION` (call inside a locked transaction).

    Args:
        conn: A connection inside a transaction that holds the schema lock.
        tables: The tables.

    Returns:
        The version found before (0 for a new database).

    Raises:
        StoreUnavailableError: When the database is newer than this package or a
            migration is missing.
    """
    names = set(inspect(conn).get_table_names())
    if tables.version.name not in names:
        tables.metadata.create_all(conn, checkfirst=True)
        conn.execute(
            tables.version.insert().values(id=1, version=SCHEMA_VERSION, updated_at=time.time())
        )
        return 0
    found = conn.execute(select(tables.version.c.version).where(tables.version.c.id == 1)).scalar()
    if found is None:
        tables.metadata.create_all(conn, checkfirst=True)
        conn.execute(
            tables.version.insert().values(id=1, version=SCHEMA_VERSION, updated_at=time.time())
        )
        return 0
    if found > SCHEMA_VERSION:
        msg = (
            f"the result store's tables are at schema version {found}, newer than this "
            f"package supports ({SCHEMA_VERSION}); upgrade langchain-result-layer"
        )
        raise StoreUnavailableError(msg)
    for version in range(found, SCHEMA_VERSION):
        step = MIGRATIONS.get(version)
        if step is None:
            msg = f"no migration from result-store schema version {version}"
            raise StoreUnavailableError(msg)
        step(conn, tables)
    if found < SCHEMA_VERSION:
        conn.execute(
            update(tables.version)
            .where(tables.version.c.id == 1)
            .values(version=SCHEMA_VERSION, updated_at=time.time())
        )
    # Tables added by a later version on a database created by an earlier one.
    tables.metadata.create_all(conn, checkfirst=True)
    return int(found)
