"""SQLite connections: sqlean as the DB-API module, sqlite-vec on every connection, the vault's PRAGMAs.

Python's own ``sqlite3`` often cannot load extensions (pyenv, python.org, macOS builds), so Cairn connects through
``sqlean.py``.  sqlite-vec loads per connection, hence in the ``connect`` event.  If it cannot load, opening fails
with :class:`~engine.errors.ExtensionUnavailable` — Cairn never runs silently without vectors.

Two engines share one file: the *writer* engine (one connection, owned by the writer thread, transactions begin
with ``BEGIN IMMEDIATE``) and the *reader* engine (a pool, plain deferred ``BEGIN`` snapshots, ``query_only``).

Before either exists, :func:`inspect_database` looks at an existing file through a read-only connection: the
writer's first act is ``PRAGMA journal_mode = WAL``, which rewrites the header of a rollback-journal file, so a
damaged or too-new vault must be refused before the writer ever connects if "left untouched" is to be true.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import sqlalchemy
from sqlalchemy import event
from sqlalchemy.pool import QueuePool

from engine.errors import ExtensionUnavailable, StorageFull, VaultDamaged, VaultTooNew
from engine.store.migrations import SCHEMA_VERSION

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 10_000

Role = Literal["writer", "reader"]


def sqlean_module() -> Any:
    """The DB-API module used for every connection (imported lazily: startup of the CLI stays cheap)."""
    try:
        import sqlean
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ExtensionUnavailable(
            "The SQLite build Cairn needs (sqlean.py) is not installed.",
            fix="Reinstall Cairn: `make run` or `pip install 'sqlean.py>=3.45'`.",
        ) from exc
    return sqlean


def load_vector_extension(dbapi_conn: Any) -> None:
    """Load sqlite-vec into one DB-API connection or raise a readable error."""
    try:
        import sqlite_vec
    except ImportError as exc:
        raise ExtensionUnavailable(
            "sqlite-vec is not installed, so vectors cannot be stored.",
            fix="Reinstall Cairn: `make run` or `pip install sqlite-vec`.",
        ) from exc
    if not hasattr(dbapi_conn, "enable_load_extension"):
        raise ExtensionUnavailable(
            "This SQLite build cannot load extensions, so sqlite-vec cannot be used.",
            fix="Use the sqlean.py SQLite build that Cairn depends on (`pip install 'sqlean.py>=3.45'`).",
        )
    try:
        dbapi_conn.enable_load_extension(True)
        sqlite_vec.load(dbapi_conn)
        dbapi_conn.enable_load_extension(False)
    except Exception as exc:
        raise ExtensionUnavailable(
            f"sqlite-vec could not be loaded into SQLite: {exc}",
            fix="Reinstall sqlite-vec for this platform (`pip install --force-reinstall sqlite-vec`).",
        ) from exc


def probe_vector_extension() -> None:
    """Load sqlite-vec into a throwaway in-memory connection.

    Run before a vault file is touched, so a machine that cannot store vectors gets the readable error before an
    empty database is created, rather than after (Cairn never makes a vault without vectors).
    """
    conn = sqlean_module().connect(":memory:")
    try:
        load_vector_extension(conn)
    finally:
        conn.close()


def too_new(path: Path | str, version: int) -> VaultTooNew:
    """The refusal of a vault whose schema is newer than this code understands."""
    return VaultTooNew(
        f"The vault {path} was written by a newer Cairn (schema {version}); this Cairn understands schema "
        f"{SCHEMA_VERSION} at most, so it did not open it to avoid damaging it.",
        fix="Upgrade Cairn, or open a different vault with --vault.",
    )


class _HotJournal(Exception):
    """A read-only connection met a hot rollback journal: a writer crashed mid-transaction."""


def inspect_database(db_path: Path, *, check_integrity: bool = True) -> int | None:
    """Check an existing vault database without changing it; returns its schema version (None: no database yet).

    The file is opened with ``mode=ro`` and no journal PRAGMA, its ``user_version`` read (a newer schema is refused
    before anything else, as its layout may be unknown here) and, with ``check_integrity``, ``PRAGMA quick_check``
    run.  A refused file keeps every byte: the read-only connection cannot write, and the empty ``-wal``/``-shm``
    files SQLite makes to read a WAL-mode file are removed again.

    The one exception is a hot rollback journal left by a crashed writer: no connection can read the file until
    SQLite rolls it back, which it does on the first read of a read-write connection (no journal PRAGMA is set even
    then).  That restores the last committed state, which is what any SQLite program opening the file would do.

    Raises:
        VaultDamaged: not a SQLite database, unreadable, or ``quick_check`` found damage.
        VaultTooNew: the schema is newer than this code.
        ExtensionUnavailable: sqlite-vec cannot be loaded.
        StorageFull: a hot journal must be rolled back, but the file or its folder is read-only.
    """
    check_database_file(db_path)
    if not db_path.exists() or db_path.stat().st_size == 0:
        return None
    side_files = [db_path.with_name(db_path.name + suffix) for suffix in ("-wal", "-shm")]
    made = [path for path in side_files if not path.exists()]
    try:
        try:
            return _inspect(db_path, read_only=True, check_integrity=check_integrity)
        except _HotJournal:
            return _inspect(db_path, read_only=False, check_integrity=check_integrity)
    except BaseException:
        _remove_empty_side_files(made)
        raise


def _inspect(db_path: Path, *, read_only: bool, check_integrity: bool) -> int:
    module = sqlean_module()
    uri = db_path.resolve().as_uri() + ("?mode=ro" if read_only else "?mode=rw")
    try:
        conn = module.connect(uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    except module.DatabaseError as exc:
        raise _unreadable(db_path, exc, read_only) from exc
    try:
        load_vector_extension(conn)
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise too_new(db_path, version)
            if not check_integrity:
                return version
            findings = [str(row[0]) for row in conn.execute("PRAGMA quick_check").fetchall()]
        except module.DatabaseError as exc:
            if getattr(exc, "sqlite_errorcode", None) == _SQLITE_READONLY:
                if read_only:
                    raise _HotJournal from exc
                raise StorageFull(
                    f"The vault database {db_path} needs recovery after a crash, but its disk or folder is "
                    "read-only. It was left untouched.",
                    fix="Make the vault folder writable and open it again.",
                ) from exc
            raise _unreadable(db_path, exc, read_only) from exc
    finally:
        conn.close()
    if findings != ["ok"]:
        summary = "; ".join(findings[:5]) + (f"; … {len(findings) - 5} more" if len(findings) > 5 else "")
        raise VaultDamaged(
            f"The vault database {db_path} is damaged ({summary}).{_what_was_done(read_only)}",
            fix="Restore it from the backups/ folder; `cairn doctor` shows what is wrong.",
            details={"quick_check": findings[:50]},
        )
    return version


#: SQLite's primary result code for "attempt to write a readonly database".
_SQLITE_READONLY = 8


def _what_was_done(read_only: bool) -> str:
    if read_only:
        return " It was left untouched."
    return " Only SQLite's crash recovery (rolling back an unfinished transaction) was applied to it."


def _unreadable(db_path: Path, exc: BaseException, read_only: bool) -> VaultDamaged:
    return VaultDamaged(
        f"The vault database {db_path} cannot be read: {exc}.{_what_was_done(read_only)}",
        fix="Restore it from the backups/ folder, or open a different vault with --vault.",
    )


def _remove_empty_side_files(made: list[Path]) -> None:
    """Remove the ``-wal``/``-shm`` files a refused inspection created, when they hold nothing."""
    wal = [path for path in made if path.name.endswith("-wal")]
    if any(path.exists() and path.stat().st_size > 0 for path in wal):
        return  # never the case for a read-only connection; kept as a guard against deleting data
    for path in made:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def check_database_file(db_path: Path) -> None:
    """Refuse a file that is not a SQLite database, without modifying it.

    An empty (0-byte) file is what SQLite itself creates before the first write, so it counts as new.
    """
    if not db_path.exists():
        return
    if db_path.is_dir():
        raise VaultDamaged(
            f"{db_path} is a folder, not a vault database.",
            fix="Move it away or choose another vault folder.",
        )
    with db_path.open("rb") as fh:
        header = fh.read(len(SQLITE_MAGIC))
    if header and header != SQLITE_MAGIC:
        raise VaultDamaged(
            f"{db_path} is not a SQLite database (it starts with {header[:8]!r}). It was left untouched.",
            fix="Restore the vault from a backup in its backups/ folder, or open a different vault.",
        )


def create_engine(db_path: Path, role: Role, *, pool_size: int = 8) -> sqlalchemy.Engine:
    """An SQLAlchemy engine over ``db_path`` configured for ``role``.

    The writer engine holds exactly one connection; readers get a bounded pool.  Both set WAL, ``busy_timeout``,
    ``foreign_keys`` and ``secure_delete`` on every new connection.
    """
    module = sqlean_module()
    url = f"sqlite:///{db_path}"
    engine = sqlalchemy.create_engine(
        url,
        module=module,
        poolclass=QueuePool,
        pool_size=1 if role == "writer" else pool_size,
        max_overflow=0 if role == "writer" else pool_size * 4,
        pool_timeout=60,
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        configure_connection(dbapi_conn, role)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sqlalchemy.Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if role == "writer" else "BEGIN")

    return engine


def _casefold(value: object) -> str | None:
    return value.casefold() if isinstance(value, str) else None


def configure_connection(dbapi_conn: Any, role: Role) -> None:
    """Set up one new DB-API connection for ``role``: vectors, WAL, limits and the role's safety pragmas."""
    # Our own transaction control: pysqlite would otherwise delay BEGIN until the first DML.
    dbapi_conn.isolation_level = None
    load_vector_extension(dbapi_conn)
    # SQLite's lower() folds ASCII only: name filters ("café" finds "CAFÉ") use Python's casefold
    dbapi_conn.create_function("casefold", 1, _casefold, deterministic=True)
    cur = dbapi_conn.cursor()
    try:
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.execute("PRAGMA secure_delete = ON")
        cur.execute("PRAGMA temp_store = MEMORY")
        cur.execute("PRAGMA cache_size = -32000")
        if role == "writer":
            cur.execute("PRAGMA journal_mode = WAL")
            # FULL survives power loss; group commit keeps it cheap (HARDENING.md).
            cur.execute("PRAGMA synchronous = FULL")
        else:
            cur.execute("PRAGMA query_only = ON")
            cur.execute("PRAGMA mmap_size = 268435456")
    finally:
        cur.close()


class RawReaders:
    """Plain driver connections for one-statement reads, reused across calls (``Store.query``).

    A read of one statement is consistent on its own (SQLite wraps it in an implicit read transaction), so it needs
    neither SQLAlchemy's pool events nor an explicit BEGIN/COMMIT.  Recall runs a score of such reads per request;
    through the SQLAlchemy layer each cost about as much interpreter time as the query itself, and under concurrent
    requests that interpreter time is what the requests queue for.  Connections are ``query_only`` like the pooled
    readers; at most ``keep`` idle ones are kept.
    """

    def __init__(self, db_path: Path, keep: int = 8) -> None:
        self._path = db_path
        self._keep = keep
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._closed = False

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        """A reader connection for the duration of the block (not shared with another thread meanwhile)."""
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._open()
        try:
            yield conn
        except BaseException:
            conn.close()  # its state is unknown after an error mid-read: never hand it out again
            raise
        with self._lock:
            if not self._closed and len(self._idle) < self._keep and not conn.in_transaction:
                self._idle.append(conn)
                return
        conn.close()

    def _open(self) -> Any:
        module = sqlean_module()
        conn = module.connect(str(self._path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        try:
            configure_connection(conn, "reader")
        except BaseException:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        """Close the idle connections; any in use close when they come back."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
