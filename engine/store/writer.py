"""The single writer: one thread owns every write transaction, with group commit.

Callers hand the writer an *operation* — a function of a :class:`Tx` — and get a future.  The writer thread takes
every operation waiting in its queue (up to ``max_batch``), opens one ``BEGIN IMMEDIATE`` transaction, runs each
operation inside its own SAVEPOINT, and commits once.  Only after COMMIT returns are the futures answered and the
changes published, so an acknowledgement always means "on disk".

A failing operation rolls back to its savepoint and fails only its own caller; the others in the batch commit.
If COMMIT itself fails (disk full, read-only disk), every operation of that batch fails with a clear
:class:`~engine.errors.StorageFull` and nothing of it is acknowledged.

Many small operations of one kind — single-event ingests from many chat clients at once — are also *merged*:
handed over with :meth:`Writer.submit_merged` (an item and the function that writes a list of such items), the
ones waiting together run as one call in one savepoint, so the per-operation cost (a savepoint, the bookkeeping,
the statements that could have been one ``executemany``) is paid once per batch rather than per request.  This is
the one place writes are batched: callers submit what they have, when they have it.  If the merged call fails,
each item is run again alone in its own savepoint, so one bad item still fails only its own caller.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import sqlalchemy
from sqlalchemy import Connection

from engine.errors import StorageFull, VaultError

log = logging.getLogger(__name__)

T = TypeVar("T")
#: How long the writer lets merged writes gather before a batch while many arrive at once (see ``Writer._loop``).
MERGE_DELAY_S = 0.003
I = TypeVar("I")  # noqa: E741 - an item of a merged write


@dataclass(slots=True)
class PendingChange:
    """A change recorded inside a transaction, published to the change feed after COMMIT."""

    type: str
    object_id: int | None
    data: Mapping[str, Any]


class Rows:
    """The result of one statement run on the driver: the few SQLAlchemy result calls the engine uses.

    Write operations run their SQL on the writer's DB-API connection directly, inside the transaction SQLAlchemy
    opened: SQLAlchemy's per-statement bookkeeping cost about 12 µs here, ten times what SQLite itself takes for a
    primary-key lookup, and an ingest or enrichment runs several statements per event on the one writer thread.
    Rows are plain tuples.
    """

    __slots__ = ("_cursor",)

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def first(self) -> Any:
        """The first row, or None; the statement is finished either way."""
        row = self._cursor.fetchone()
        self._cursor.close()
        return row

    def fetchall(self) -> list[Any]:
        """Every row."""
        rows: list[Any] = self._cursor.fetchall()
        return rows

    def scalar(self) -> Any:
        """The first column of the first row, or None."""
        row = self.first()
        return None if row is None else row[0]

    @property
    def rowcount(self) -> int:
        """Rows changed by an INSERT, UPDATE or DELETE."""
        return int(self._cursor.rowcount)

    @property
    def lastrowid(self) -> int | None:
        """The rowid of the last row inserted."""
        last: int | None = self._cursor.lastrowid
        return last

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cursor)


class Tx:
    """What a write operation may do: run SQL on the writer connection, take ids, record changes."""

    __slots__ = ("_after_commit", "_driver", "changes", "conn", "fresh", "now")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._driver: Any = conn.connection.dbapi_connection
        self.now = time.time()
        self.changes: list[PendingChange] = []
        self._after_commit: list[Callable[[], None]] = []
        #: Object ids taken in this transaction (:meth:`new_id`) that have no vector yet: a vector write that would
        #: replace an older one may skip looking for it (the vector index takes an id out once it stores one).
        self.fresh: set[int] = set()

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Rows:
        """Run one statement (``?`` or ``:name`` placeholders as the DB-API module takes them)."""
        return Rows(self._driver.execute(sql, params if isinstance(params, Mapping) else tuple(params)))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]] | Sequence[Mapping[str, Any]]) -> None:
        """Run one statement for many parameter rows."""
        if rows:
            self._driver.executemany(sql, rows)

    def scalar(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        """The first column of the first row, or None."""
        return self.execute(sql, params).scalar()

    def new_id(self, kind: str) -> int:
        """Take the next global id for an object of ``kind``."""
        result = self.execute("INSERT INTO objects(kind, created_at) VALUES (?, ?)", (kind, self.now))
        new = result.lastrowid
        assert new is not None
        self.fresh.add(int(new))
        return int(new)

    def new_ids(self, kind: str, count: int) -> list[int]:
        """Take ``count`` consecutive global ids (safe: only this thread writes, inside one transaction)."""
        if count <= 0:
            return []
        if count == 1:
            return [self.new_id(kind)]
        self.executemany("INSERT INTO objects(kind, created_at) VALUES (?, ?)", [(kind, self.now)] * count)
        last = int(self.scalar("SELECT last_insert_rowid()"))
        first = last - count + 1
        self.fresh.update(range(first, last + 1))
        return list(range(first, last + 1))

    def emit(self, change_type: str, object_id: int | None = None, **data: Any) -> None:
        """Record a change to publish once this transaction has committed."""
        self.changes.append(PendingChange(change_type, object_id, data))

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` on the writer thread after COMMIT (e.g. to update an in-memory index)."""
        self._after_commit.append(callback)


#: How a merged write stores a list of items: one result per item, in order.
WriteMany = Callable[[Tx, list[Any]], list[Any]]


@dataclass(slots=True)
class _Request(Generic[T]):
    op: Callable[[Tx], T]
    future: Future[T] = field(default_factory=Future)
    raw: bool = False
    #: For :meth:`Writer.submit_merged`: the function writing many items, and this request's item.
    many: WriteMany | None = None
    item: Any = None


class WriterClosed(VaultError):
    """The writer has shut down; the operation was not run."""

    code = "writer_closed"


class Writer:
    """Owns the writer connection and its thread.  ``submit`` from any thread; ``run`` to wait for the result."""

    def __init__(
        self,
        engine: sqlalchemy.Engine,
        publish: Callable[[Sequence[PendingChange]], None] | None = None,
        *,
        max_batch: int = 256,
        name: str = "vault-writer",
    ) -> None:
        self._engine = engine
        self._publish = publish
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[_Request[Any] | None] = queue.SimpleQueue()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()
        self.commits = 0  # number of COMMITs (for tests and benchmarks)
        self._merging = False  # whether the last batch merged several writes (see _loop)

    def submit(self, op: Callable[[Tx], T]) -> Future[T]:
        """Queue ``op`` for the next transaction and return its future."""
        request: _Request[T] = _Request(op)
        if self._closed.is_set():
            request.future.set_exception(WriterClosed("The vault is closing; nothing was written."))
            return request.future
        self._queue.put(request)
        return request.future

    def submit_merged(self, write_many: Callable[[Tx, list[I]], list[T]], item: I) -> Future[T]:
        """Queue ``item`` to be written by ``write_many`` together with the other items for the same function
        (the same object: keep one) that wait in the queue with it; the future gets this item's result."""
        request: _Request[T] = _Request(lambda tx: write_many(tx, [item])[0], many=write_many, item=item)
        if self._closed.is_set():
            request.future.set_exception(WriterClosed("The vault is closing; nothing was written."))
            return request.future
        self._queue.put(request)
        return request.future

    def run_outside_transaction(self, op: Callable[[Connection], T], timeout: float | None = None) -> T:
        """Run ``op`` on the writer connection with no transaction open (checkpoint, VACUUM, backup).

        It runs alone, between batches, so nothing else writes meanwhile.
        """
        request: _Request[T] = _Request(op, raw=True)  # type: ignore[arg-type]
        if self._closed.is_set():
            raise WriterClosed("The vault is closing; nothing was written.")
        self._queue.put(request)
        return request.future.result(timeout)

    def run(self, op: Callable[[Tx], T], timeout: float | None = None) -> T:
        """Run ``op`` in a write transaction and return its result once committed."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("Writer.run called from the writer thread (would deadlock)")
        return self.submit(op).result(timeout)

    def close(self, timeout: float = 30.0) -> None:
        """Finish every queued operation, then stop the thread and release the connection."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._queue.put(None)
        self._thread.join(timeout)
        self._engine.dispose()

    def _loop(self) -> None:
        with self._engine.connect() as conn:
            stop = False
            while not stop:
                first = self._queue.get()
                if first is None:
                    break
                if first.raw:
                    self._run_raw(conn, first)
                    continue
                batch: list[_Request[Any]] = [first]
                raw_next: _Request[Any] | None = None
                if first.many is not None and self._merging:
                    # Many clients are handing over merged writes (the last batch merged several): give them a
                    # moment to hand over what they are holding, so it joins this transaction instead of each
                    # request starting one of its own — what PostgreSQL's commit_delay does when other transactions
                    # are active.  A lone client never waits here: its batches hold one write each.
                    time.sleep(MERGE_DELAY_S)
                while len(batch) < self._max_batch:
                    try:
                        nxt = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if nxt is None:
                        stop = True
                        break
                    if nxt.raw:
                        raw_next = nxt
                        break
                    batch.append(nxt)
                self._merging = sum(1 for request in batch if request.many is not None) > 1
                self._run_batch(conn, batch)
                if raw_next is not None:
                    self._run_raw(conn, raw_next)

    def _run_raw(self, conn: Connection, request: _Request[Any]) -> None:
        if not request.future.set_running_or_notify_cancel():
            return
        try:
            driver = conn.connection.dbapi_connection
            result = request.op(driver)  # type: ignore[arg-type]
        except BaseException as exc:
            request.future.set_exception(_translate(exc))
        else:
            request.future.set_result(result)

    def _run_batch(self, conn: Connection, batch: list[_Request[Any]]) -> None:
        done: list[tuple[_Request[Any], Any]] = []
        txs: list[Tx] = []
        failed: list[tuple[_Request[Any], BaseException]] = []
        try:
            with conn.begin():
                # Each operation in its own savepoint, so one that fails leaves the others in the commit.  Plain
                # statements on the driver, not SQLAlchemy's nested transactions: those cost more interpreter time
                # than a merged batch of ingests takes to insert.  If SQLite has rolled the whole transaction back
                # (disk full, I/O error), ROLLBACK TO fails and the batch fails as one, below.
                driver = conn.connection.dbapi_connection
                assert driver is not None
                for group in _groups(batch):
                    live = [request for request in group if request.future.set_running_or_notify_cancel()]
                    if len(live) > 1 and self._merged(conn, driver, live, done, txs):
                        continue
                    for request in live:
                        self._one(conn, driver, request, done, txs, failed)
            self.commits += 1
        except BaseException as exc:
            error = _translate(exc)
            log.error("write transaction failed at commit: %s", type(exc).__name__)
            for request, _result in done:
                request.future.set_exception(error)
            for request, op_error in failed:
                request.future.set_exception(op_error)
            return
        for request, op_error in failed:
            request.future.set_exception(op_error)
        changes: list[PendingChange] = []
        for tx in txs:
            for callback in tx._after_commit:
                try:
                    callback()
                except Exception:
                    log.exception("after-commit callback failed")
            changes.extend(tx.changes)
        # Published before anyone is answered: a caller that hears "done" finds its change in the feed.
        if changes and self._publish is not None:
            try:
                self._publish(changes)
            except Exception:
                log.exception("publishing changes failed")
        for request, result in done:
            request.future.set_result(result)

    @staticmethod
    def _one(
        conn: Connection,
        driver: Any,
        request: _Request[Any],
        done: list[tuple[_Request[Any], Any]],
        txs: list[Tx],
        failed: list[tuple[_Request[Any], BaseException]],
    ) -> None:
        """Run one operation in its own savepoint."""
        tx = Tx(conn)
        driver.execute("SAVEPOINT cairn_op")
        try:
            result = request.op(tx)
        except BaseException as exc:
            driver.execute("ROLLBACK TO cairn_op")
            driver.execute("RELEASE cairn_op")
            failed.append((request, _translate(exc)))
        else:
            driver.execute("RELEASE cairn_op")
            done.append((request, result))
            txs.append(tx)

    @staticmethod
    def _merged(
        conn: Connection, driver: Any, group: list[_Request[Any]], done: list[tuple[_Request[Any], Any]], txs: list[Tx]
    ) -> bool:
        """Run a group of merged requests as one call in one savepoint; False (nothing kept) if that call failed."""
        many = group[0].many
        assert many is not None
        tx = Tx(conn)
        driver.execute("SAVEPOINT cairn_op")
        try:
            results = many(tx, [request.item for request in group])
            if len(results) != len(group):
                raise RuntimeError(f"a merged write returned {len(results)} results for {len(group)} items")
        except Exception as exc:
            driver.execute("ROLLBACK TO cairn_op")
            driver.execute("RELEASE cairn_op")
            log.debug("a merged write of %s items failed (%s); writing them one by one", len(group), type(exc).__name__)
            return False
        driver.execute("RELEASE cairn_op")
        done.extend(zip(group, results, strict=True))
        txs.append(tx)
        return True


def _groups(batch: list[_Request[Any]]) -> Iterator[list[_Request[Any]]]:
    """The batch in order, consecutive requests merged by the same function gathered into one group."""
    group: list[_Request[Any]] = []
    for request in batch:
        if group and (request.many is None or request.many is not group[0].many):
            yield group
            group = []
        group.append(request)
        if request.many is None:
            yield group
            group = []
    if group:
        yield group


def _translate(exc: BaseException) -> BaseException:
    """Turn SQLite's storage failures into a clear :class:`StorageFull`; leave everything else as it is."""
    text = str(getattr(exc, "orig", exc)).lower()
    if "disk is full" in text or "database or disk is full" in text:
        return StorageFull(
            "The disk is full, so the change was not saved.",
            fix="Free some disk space and try again; nothing was lost that had been acknowledged.",
        )
    if "readonly database" in text or "read-only" in text:
        return StorageFull(
            "The vault is on a read-only disk or folder, so the change was not saved.",
            fix="Make the vault folder writable or move the vault.",
        )
    return exc
