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

import sqlalchemy as sa

from langchain_result_layer.errors import StoreUnavailableError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Tables", "ensure_schema", "make_tables"]

SCHEMA_VERSION = 1
"""Version of the tables this package writes."""

_AutoId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


@dataclass(frozen=True, slots=True)
class Tables:
    """The store's tables."""

    metadata: sa.MetaData
    version: sa.Table
    records: sa.Table
    chunks: sa.Table
    audit: sa.Table


def make_tables(prefix: str = "lrl_") -> Tables:
    """Build the table objects for a table-name prefix.

    Args:
        prefix: Prefix of every table name.

    Returns:
        The tables.
    """
    md = sa.MetaData()
    version = sa.Table(
        f"{prefix}schema_version",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    records = sa.Table(
        f"{prefix}records",
        md,
        sa.Column("record_id", sa.String(64), primary_key=True),
        sa.Column("tenant", sa.Text),
        sa.Column("user_id", sa.Text),
        sa.Column("thread_id", sa.Text),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("is_binary", sa.Boolean, nullable=False),
        sa.Column("codec", sa.String(16), nullable=False),
        sa.Column("chunk_size", sa.Integer, nullable=False),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("original_size", sa.BigInteger, nullable=False),
        sa.Column("line_count", sa.BigInteger, nullable=False),
        sa.Column("capped", sa.Boolean, nullable=False),
        sa.Column("gap_start", sa.BigInteger),
        sa.Column("gap_end", sa.BigInteger),
        sa.Column("cap_reason", sa.String(32)),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float),
        sa.Column("tool_name", sa.Text),
        sa.Column("tool_call_id", sa.Text),
        sa.Column("extra", sa.Text, nullable=False),
        sa.Index(f"{prefix}records_tenant", "tenant", "expires_at"),
        sa.Index(f"{prefix}records_expires", "expires_at"),
    )
    chunks = sa.Table(
        f"{prefix}chunks",
        md,
        sa.Column("record_id", sa.String(64), primary_key=True),
        sa.Column("start", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("nl_before", sa.BigInteger, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Index(f"{prefix}chunks_lines", "record_id", "nl_before", "start"),
    )
    audit = sa.Table(
        f"{prefix}audit",
        md,
        sa.Column("id", _AutoId, primary_key=True, autoincrement=True),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("tenant", sa.Text),
        sa.Column("user_id", sa.Text),
        sa.Column("thread_id", sa.Text),
        sa.Column("record_id", sa.String(128), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("range", sa.Text, nullable=False),
        sa.Column("granted", sa.Boolean, nullable=False),
        sa.Index(f"{prefix}audit_record", "record_id", "id"),
        sa.Index(f"{prefix}audit_at", "at"),
    )
    return Tables(metadata=md, version=version, records=records, chunks=chunks, audit=audit)


Migration = Callable[[sa.Connection, Tables], None]

MIGRATIONS: dict[int, Migration] = {}
"""`MIGRATIONS[v]` upgrades a database from version `v` to `v + 1`."""


def ensure_schema(conn: sa.Connection, tables: Tables) -> int:
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
    names = set(sa.inspect(conn).get_table_names())
    if tables.version.name not in names:
        tables.metadata.create_all(conn, checkfirst=True)
        conn.execute(
            tables.version.insert().values(id=1, version=SCHEMA_VERSION, updated_at=time.time())
        )
        return 0
    found = conn.execute(
        sa.select(tables.version.c.version).where(tables.version.c.id == 1)
    ).scalar()
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
            sa.update(tables.version)
            .where(tables.version.c.id == 1)
            .values(version=SCHEMA_VERSION, updated_at=time.time())
        )
    # Tables added by a later version on a database created by an earlier one.
    tables.metadata.create_all(conn, checkfirst=True)
    return int(found)
