"""The vault database as one object: checks on open, migrations, the writer, and reader connections."""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import sqlalchemy
from sqlalchemy import Connection

from engine.errors import VaultDamaged
from engine.permissions import create_private_file
from engine.store.db import RawReaders, create_engine, inspect_database, probe_vector_extension, too_new
from engine.store.migrations import MIGRATIONS, SCHEMA_VERSION
from engine.store.writer import PendingChange, Tx, Writer

log = logging.getLogger(__name__)


class Reader(Protocol):
    """Anything that answers read queries: the :class:`Store` (a connection per call) or a :class:`Snapshot`."""

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Any]:
        """All rows of one read statement, as plain tuples."""
        ...


class Snapshot:
    """A read transaction with the same ``execute``/``scalar`` calls as a write :class:`Tx`.

    Code that only reads (matching, planning a dry run) takes either, so a dry run runs the very same queries as
    the real thing.
    """

    __slots__ = ("_driver", "conn")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._driver: Any = None

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        """Run one read statement."""
        return self.conn.exec_driver_sql(sql, params if isinstance(params, Mapping) else tuple(params))

    def scalar(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        """The first column of the first row, or None."""
        row = self.execute(sql, params).first()
        return None if row is None else row[0]

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Any]:
        """All rows of one read statement, as plain tuples (same signature as :meth:`Store.query`).

        Runs on the driver's cursor inside this snapshot's transaction: SQLAlchemy's result layer would cost as much
        interpreter time as the statement itself, and nothing here needs it.
        """
        if self._driver is None:
            self._driver = self.conn.connection.driver_connection
        return list(self._driver.execute(sql, params if isinstance(params, Mapping) else tuple(params)).fetchall())


class Store:
    """Owns the SQLite file of one vault.

    Use :meth:`write` (or :attr:`writer`) for every change and :meth:`read` for snapshots.  Never write through a
    reader connection: they are ``query_only``.
    """

    def __init__(
        self,
        db_path: Path,
        *,
        publish: Callable[[Sequence[PendingChange]], None] | None = None,
        backup_dir: Path | None = None,
        read_only: bool = False,
        schema: int = SCHEMA_VERSION,
    ) -> None:
        """Open (or create) the database at ``db_path`` and bring it to ``schema``.

        ``schema`` below the current version exists for one purpose: making the fixture vault of an earlier
        released schema (``tests/fixtures/make_fixture_vault.py``), so that every migration is tested against a
        real file of the schema before it.  The app always opens at :data:`SCHEMA_VERSION`.

        Raises:
            VaultDamaged: not a SQLite database, or ``quick_check`` found damage (the file is left untouched).
            VaultTooNew: the file's schema is newer than this code.
            ExtensionUnavailable: sqlite-vec cannot be loaded (no file is created).
            ValueError: ``schema`` is not a version this code can write.
        """
        if not 1 <= schema <= SCHEMA_VERSION:
            raise ValueError(f"schema must be between 1 and {SCHEMA_VERSION}, not {schema}")
        self.path = db_path
        self.read_only = read_only
        # Every refusal happens here, before any engine connects: the extension first (a new vault is never
        # created without vectors), then the file through a read-only connection (the writer's WAL switch would
        # already rewrite the header of a rollback-journal file).  Read-only opens skip quick_check, so that what
        # is still readable in a damaged vault can be salvaged.
        probe_vector_extension()
        inspect_database(db_path, check_integrity=not read_only)
        if not read_only:
            create_private_file(db_path)  # owner only; SQLite gives its WAL and -shm files the database's mode
        self._readers = create_engine(db_path, "reader")
        self._raw = RawReaders(db_path)
        self.writer: Writer | None = None
        try:
            if not read_only:
                writer_engine = create_engine(db_path, "writer")
                migrate(writer_engine, backup_dir=backup_dir, target=schema)
                if _drop_shadow_statistics(writer_engine):
                    writer_engine.dispose()  # statistics are read when a connection opens: start afresh
                self.writer = Writer(writer_engine, publish)
                self.optimize()
        except BaseException:
            self._readers.dispose()
            self._raw.close()
            raise

    # -- reading ------------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def read(self) -> Iterator[Connection]:
        """A consistent snapshot: one deferred transaction on a pooled reader connection."""
        with self._readers.connect() as conn, conn.begin():
            yield conn

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        """A consistent read snapshot with the :class:`Tx`-like query interface."""
        with self.read() as conn:
            yield Snapshot(conn)

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Any]:
        """Run one read query and return all rows, as plain tuples.

        One statement is consistent on its own, so this takes a plain driver connection (:class:`RawReaders`) with no
        explicit transaction; several reads that must agree with each other belong in one :meth:`snapshot`.
        """
        with self._raw.connection() as conn:
            return list(conn.execute(sql, params if isinstance(params, Mapping) else tuple(params)).fetchall())

    def stream(self, sql: str, params: Sequence[Any] = (), *, batch: int = 4096) -> Iterator[list[Any]]:
        """Run one read query and yield its rows a batch at a time.

        For reads too large to hold as one list beside what is built from them — loading every vector, say, whose
        blobs would otherwise double the memory the load needs (and the heap keeps that peak afterwards).  One
        statement reads one snapshot: rows committed while the stream runs are not among those yielded.
        """
        with self._raw.connection() as conn:
            cursor = conn.execute(sql, tuple(params))
            try:
                while rows := cursor.fetchmany(batch):
                    yield rows
            finally:
                cursor.close()

    def scalar(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        """The first column of the first row of a read query, or None."""
        rows = self.query(sql, params)
        return rows[0][0] if rows else None

    # -- writing ------------------------------------------------------------------------------------------------
    def write(self, op: Callable[[Tx], Any], timeout: float | None = 60.0) -> Any:
        """Run ``op`` in a write transaction; returns after COMMIT."""
        if self.writer is None:
            raise VaultDamaged("This vault was opened read-only.", fix="Open it normally to make changes.")
        return self.writer.run(op, timeout)

    def optimize(self) -> None:
        """Refresh the query planner's statistics (cheap and bounded): without them SQLite may pick an index on
        ``user_id`` over a far more selective one on ``conversation_id`` and scan a whole table.

        Only the vault's own tables are analysed, never the tables behind its full-text and vector indexes: FTS5
        plans its internal queries for shadow tables without statistics, and once one of them had been analysed
        (as ``PRAGMA optimize`` does, even while empty) every insert into that index cost time in proportion to
        its size, for as long as the connection lived — 0.1 s per thousand spans on a new vault, over 3 s at 270k.
        """
        if self.writer is None:
            return

        def run(driver: Any) -> None:
            driver.execute("PRAGMA analysis_limit = 1000")
            for table in _analysable_tables(driver):
                driver.execute(f'ANALYZE "{table}"')

        self.writer.run_outside_transaction(run, timeout=120)

    def close(self) -> None:
        """Drain the writer, then release every connection."""
        if self.writer is not None:
            self.writer.close()
        self._readers.dispose()
        self._raw.close()

    @property
    def schema_version(self) -> int:
        """The schema version stored in the file."""
        return int(self.scalar("PRAGMA user_version") or 0)

    def vault_id(self) -> str:
        """This vault's stable id: a random value kept in ``meta`` (``vault_id``), made on first use.

        Not the folder's path, which says something about the person and changes when the folder moves.

        Raises:
            VaultDamaged: the id was never made and the vault is open read-only.
        """
        rows = self.query("SELECT value FROM meta WHERE key = 'vault_id'")
        if rows:
            return str(rows[0][0])

        def make(tx: Tx) -> str:
            tx.execute(
                "INSERT INTO meta(key, value) VALUES ('vault_id', ?) ON CONFLICT(key) DO NOTHING",
                (secrets.token_hex(6),),
            )
            return str(tx.scalar("SELECT value FROM meta WHERE key = 'vault_id'"))

        made: str = self.write(make)
        return made


def _shadow_tables(names: Sequence[str], virtual: Sequence[str]) -> set[str]:
    """The tables SQLite keeps for virtual tables (``events_fts_data``, a vec0 table's chunks, …)."""
    return {name for name in names if any(name.startswith(f"{v}_") for v in virtual)}


def _analysable_tables(driver: Any) -> list[str]:
    """The vault's own tables: not SQLite's, not virtual, not a virtual table's shadow tables."""
    rows = driver.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
    ).fetchall()
    virtual = [str(name) for name, sql in rows if str(sql or "").upper().startswith("CREATE VIRTUAL TABLE")]
    plain = [str(name) for name, sql in rows if str(name) not in virtual]
    shadow = _shadow_tables(plain, virtual)
    return [name for name in plain if name not in shadow]


def _drop_shadow_statistics(engine: sqlalchemy.Engine) -> bool:
    """Remove planner statistics of shadow tables that an earlier version analysed (see :meth:`Store.optimize`).

    Returns whether any were removed (connections opened before then still hold them).
    """
    with engine.connect() as conn:
        has_stats = conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").first()
        if has_stats is None:
            conn.rollback()
            return False
        tables = [str(r[0]) for r in conn.exec_driver_sql("SELECT DISTINCT tbl FROM sqlite_stat1")]
        virtual = [
            str(r[0])
            for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'")
        ]
        stale = sorted(_shadow_tables(tables, virtual))
        conn.rollback()
        if not stale:
            return False
        with conn.begin():
            for table in stale:
                conn.exec_driver_sql("DELETE FROM sqlite_stat1 WHERE tbl = ?", (table,))
        return True


def migrate(engine: sqlalchemy.Engine, *, backup_dir: Path | None = None, target: int = SCHEMA_VERSION) -> int:
    """Bring the database to ``target`` (normally :data:`SCHEMA_VERSION`); returns the version found before.

    A database already at or past ``target`` (but not past :data:`SCHEMA_VERSION`) is left as it is.

    Raises:
        VaultTooNew: the file's schema is newer than this code.
    """
    with engine.connect() as conn:
        found = int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)
        conn.rollback()  # SQLAlchemy autobegan a transaction for the read; migrations open their own
        if found > SCHEMA_VERSION:
            raise too_new(engine.url.database or "?", found)
        if found >= target:
            return found
        if found > 0 and backup_dir is not None:
            _backup_before_migration(conn, backup_dir, found)
        for migration in MIGRATIONS:
            if migration.version <= found or migration.version > target:
                continue
            log.info("applying migration %s", migration.name)
            with conn.begin():
                migration.apply(conn)
                conn.exec_driver_sql(f"PRAGMA user_version = {migration.version}")
                conn.exec_driver_sql(
                    "INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (str(migration.version),),
                )
                conn.exec_driver_sql(
                    "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING",
                    (f"migrated:{migration.name}", str(time.time())),
                )
        return found


def _backup_before_migration(conn: Connection, backup_dir: Path, version: int) -> None:
    """An online copy of the vault as it was, so a migration can always be undone by hand."""
    backup_dir.mkdir(parents=True, exist_ok=True)
    target = backup_dir / f"before-schema-{version + 1}-{time.strftime('%Y%m%d-%H%M%S')}.db"
    if not target.exists():
        # VACUUM cannot run inside a transaction, and SQLAlchemy would autobegin one: use the driver directly.
        driver = conn.connection.dbapi_connection
        assert driver is not None
        driver.execute("VACUUM INTO ?", (str(target),))
