"""The single writer: concurrency, group commit, failure isolation, acknowledgement after COMMIT."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlean

from engine.store import Store, Tx


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = Store(tmp_path / "w.db")
    s.write(lambda tx: tx.execute("CREATE TABLE t (k TEXT PRIMARY KEY, thread INTEGER, n INTEGER)"))
    yield s
    s.close()


def test_8_threads_x_1000_writes_all_land_without_lock_errors(store: Store) -> None:
    errors: list[BaseException] = []

    def worker(thread: int) -> None:
        try:
            for n in range(1000):
                store.write(lambda tx, n=n: tx.execute("INSERT INTO t VALUES (?, ?, ?)", (f"{thread}-{n}", thread, n)))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert store.scalar("SELECT COUNT(*) FROM t") == 8000
    assert store.scalar("SELECT COUNT(DISTINCT thread) FROM t") == 8
    for thread in range(8):
        assert store.scalar("SELECT COUNT(*) FROM t WHERE thread = ?", (thread,)) == 1000
    assert store.writer is not None
    assert store.writer.commits < 8000, "concurrent writes are grouped into fewer transactions"


def test_a_failing_write_fails_only_its_own_caller(store: Store) -> None:
    store.write(lambda tx: tx.execute("INSERT INTO t VALUES ('dup', 0, 0)"))
    assert store.writer is not None
    gate = threading.Event()
    # hold the writer so that the next three operations land in one batch
    blocker = store.writer.submit(lambda tx: gate.wait(5))
    good1 = store.writer.submit(lambda tx: tx.execute("INSERT INTO t VALUES ('a', 1, 1)"))
    bad = store.writer.submit(lambda tx: tx.execute("INSERT INTO t VALUES ('dup', 2, 2)"))
    good2 = store.writer.submit(lambda tx: tx.execute("INSERT INTO t VALUES ('b', 3, 3)"))
    gate.set()
    blocker.result(5)
    good1.result(5)
    good2.result(5)
    with pytest.raises(sqlean.IntegrityError, match="UNIQUE"):
        bad.result(5)
    assert sorted(r[0] for r in store.query("SELECT k FROM t")) == ["a", "b", "dup"]
    assert store.scalar("SELECT n FROM t WHERE k = 'dup'") == 0


def test_partial_work_of_a_failed_operation_is_rolled_back(store: Store) -> None:
    def op(tx: Tx) -> None:
        tx.execute("INSERT INTO t VALUES ('x', 1, 1)")
        raise ValueError("changed my mind")

    with pytest.raises(ValueError):
        store.write(op)
    assert store.scalar("SELECT COUNT(*) FROM t WHERE k = 'x'") == 0


def test_result_is_visible_to_readers_when_the_caller_is_answered(store: Store) -> None:
    for i in range(50):
        store.write(lambda tx, i=i: tx.execute("INSERT INTO t VALUES (?, 0, 0)", (f"r{i}",)))
        assert store.scalar("SELECT COUNT(*) FROM t WHERE k = ?", (f"r{i}",)) == 1


def test_changes_are_published_only_after_commit(tmp_path: Path) -> None:
    published: list[str] = []
    s = Store(tmp_path / "c.db", publish=lambda items: published.extend(c.type for c in items))
    try:

        def ok(tx: Tx) -> None:
            tx.emit("thing.created", 1)

        def failing(tx: Tx) -> None:
            tx.emit("thing.created", 2)
            raise RuntimeError("boom")

        s.write(ok)
        with pytest.raises(RuntimeError):
            s.write(failing)
        assert published == ["thing.created"]
    finally:
        s.close()


def test_close_drains_queued_writes(tmp_path: Path) -> None:
    s = Store(tmp_path / "d.db")
    s.write(lambda tx: tx.execute("CREATE TABLE t (n INTEGER)"))
    assert s.writer is not None
    futures = [s.writer.submit(lambda tx, i=i: tx.execute("INSERT INTO t VALUES (?)", (i,))) for i in range(500)]
    s.close()
    assert all(f.done() and f.exception() is None for f in futures)
    s2 = Store(tmp_path / "d.db")
    try:
        assert s2.scalar("SELECT COUNT(*) FROM t") == 500
    finally:
        s2.close()
