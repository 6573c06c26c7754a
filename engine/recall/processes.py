"""Recall ranking in helper processes, so that concurrent recalls use every core.

Ranking a question is mostly interpreter work around short SQLite and numpy calls.  In one process, recalls take
turns at the interpreter lock: on the 100k-fact benchmark vault (two cores) the server never used more than 1.4
cores, however many recalls were waiting.  Two processes ranking side by side used 1.95.

So the vault's process keeps everything that writes or waits — the endpoint, the single writer, understanding a
question (embedding it, asking a model to analyse it) and recording what was recalled — and hands the ranking of the
understood question (:class:`~engine.recall.ranker.Question`) to one of a few helper processes.  Each helper:

- opens the vault file **read-only** (SQLite in WAL mode: it sees every commit as soon as it lands, never blocks
  the writer, and can never write);
- holds its own copy of the in-memory vector mirror, loaded from the store and then kept in step by the changes
  this process's index learns at each COMMIT (:meth:`SqliteVecIndex.follow`), sent in commit order on the same
  channel as the questions.  A question sent after a commit is therefore ranked with that commit's vectors, exactly
  as in this process; the first pass fitted here is sent too, so the copies rank identically;
- ranks one question at a time and answers with the :class:`~engine.recall.types.RecallResult`.

Nothing depends on a helper: until one is ready (loading the vectors takes seconds on a large vault), when it fails,
hangs or dies, the question is ranked in this process and the helper is replaced.  A helper exits when this process
goes away — its end of the channel closes — and when this process is killed it is ended with it, even in the middle
of loading or ranking (:mod:`engine.lifeline`: the kernel's death signal on Linux, a watching thread elsewhere).

The cost is memory: each helper holds a copy of the vectors (about 1.6 kB per vector at 384 dimensions, plus ~0.3 kB
of postings for the hashing embedder's sparse vectors, which each helper builds itself — they are exact, so every
copy answers alike), which is why the vault starts helpers only for large vaults (``[recall] processes``,
:mod:`engine.config`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from engine.lifeline import Child, Restarts, die_with_parent
from engine.recall.ranker import INLINE, Ranker
from engine.recall.types import RecallResult
from engine.vectors.sqlite_vec import SqliteVecIndex, VectorChange

log = logging.getLogger(__name__)

#: ``[recall] processes = -1`` starts helpers once the vault holds this many vectors: below it a recall ranks in
#: ~5 ms here and the helpers' copies of the vectors would be memory spent for nothing.
AUTO_MIN_VECTORS = 20_000
#: How long a question may take in a helper before the helper is deemed stuck (and replaced).
ANSWER_TIMEOUT_S = 60.0
#: How long a helper may take to open the vault and load its vectors.
START_TIMEOUT_S = 300.0
#: A helper that dies this many times in a row, each within a minute of starting, is not started again.
MAX_QUICK_DEATHS = 3


class _Helper:
    """This process's handle on one helper process: its channel, the changes not yet sent, its state."""

    def __init__(self, number: int, db_path: Path, model_id: str, dim: int) -> None:
        self.number = number
        self._db_path = db_path
        self._model_id = model_id
        self._dim = dim
        self.child: Child | None = None
        self.conn: Connection | None = None
        self.ready = False
        self._outbox: list[VectorChange] = []
        self._box = threading.Condition()
        self._send = threading.Lock()  # taking the outbox and sending it happen together: sends stay in order
        self._stopped = False

    # -- lifecycle -------------------------------------------------------------------------------------------------
    def spawn(self, first: Sequence[VectorChange]) -> None:
        """Start the process; ``first`` is sent before anything else (the first passes fitted so far)."""
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # the folder holding the engine package
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        try:
            self.child = Child.start(
                [
                    sys.executable,
                    "-m",
                    "engine.recall.processes",
                    str(self._db_path),
                    self._model_id,
                    str(self._dim),
                    str(theirs.fileno()),
                ],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                env=env,
            )
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        with self._box:
            self._outbox[:0] = list(first)
        threading.Thread(target=self._sender, name=f"recall-helper-{self.number}-send", daemon=True).start()

    def wait_ready(self, timeout: float) -> int:
        """Block until the helper has loaded its vectors; returns how many.  Raises if it failed or timed out."""
        conn = self.conn
        assert conn is not None
        if not conn.poll(timeout):
            raise TimeoutError(f"not ready after {timeout:.0f} s")
        kind, payload = conn.recv()
        if kind != "ready":
            raise RuntimeError(str(payload))
        self.ready = True
        return int(payload)

    def stop(self) -> None:
        """Close the channel (the helper exits when it sees that) and reap the process."""
        self.ready = False
        with self._box:
            self._stopped = True
            self._box.notify_all()
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()
        if self.child is not None:
            self.child.stop(grace_s=5.0)

    # -- changes ---------------------------------------------------------------------------------------------------
    def post(self, change: VectorChange) -> None:
        """Queue a change for the helper (never blocks: called on the writer's thread after COMMIT)."""
        with self._box:
            if not self._stopped:
                self._outbox.append(change)
                self._box.notify()

    def _take(self) -> list[VectorChange]:
        with self._box:
            changes, self._outbox = self._outbox, []
        return changes

    def _sender(self) -> None:
        """Send queued changes as they come, so they do not pile up here between questions."""
        while True:
            with self._box:
                while not self._outbox and not self._stopped:
                    self._box.wait()
                if self._stopped:
                    return
            try:
                with self._send:
                    changes = self._take()
                    conn = self.conn
                    if changes and conn is not None:
                        conn.send(("changes", _packed(changes)))
            except (OSError, ValueError):
                return  # the channel closed: the helper died or is being stopped (the pool notices on a question)

    # -- questions -------------------------------------------------------------------------------------------------
    def rank(self, question: Any) -> RecallResult:
        """Send ``question`` (after every change queued before it) and wait for the answer.

        Raises:
            RuntimeError: the helper could not rank it (its reason inside).
            TimeoutError, EOFError, OSError: the helper is stuck or gone.
        """
        conn = self.conn
        if conn is None:
            raise EOFError("helper stopped")
        with self._send:
            conn.send(("rank", _packed(self._take()), question))
        if not conn.poll(ANSWER_TIMEOUT_S):
            raise TimeoutError(f"no answer after {ANSWER_TIMEOUT_S:.0f} s")
        kind, payload = conn.recv()
        if kind != "ok":
            raise RuntimeError(str(payload))
        result: RecallResult = payload
        return result


class RankerProcesses:
    """A few helper processes ranking recalls; see the module docstring.  Thread-safe."""

    def __init__(self, db_path: Path, vectors: SqliteVecIndex, size: int) -> None:
        if size < 1:
            raise ValueError("at least one helper process")
        self.size = size
        self._db_path = db_path
        self._vectors = vectors
        self._lock = threading.Lock()
        self._idle: list[_Helper] = []
        self._helpers: list[_Helper] = []
        self._restarts = Restarts(limit=MAX_QUICK_DEATHS)
        self._closed = False
        # follow before any helper starts: a change committed while a helper loads is then both in what it reads
        # and in what it is sent afterwards (applying a change twice is harmless), never in neither
        self._unfollow = vectors.follow(self._broadcast)
        for number in range(size):
            self._start(number)

    @property
    def ready(self) -> int:
        """How many helpers are ranking or ready to."""
        with self._lock:
            return sum(1 for h in self._helpers if h.ready)

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> bool:
        """Block until every helper is ready (tests, benchmarks); False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ready == self.size:
                return True
            time.sleep(0.05)
        return False

    def rank(self, question: Any) -> RecallResult | None:
        """Rank ``question`` in an idle helper; ``None`` when none is ready or the helper failed (rank it here)."""
        with self._lock:
            helper = self._idle.pop() if self._idle else None
        if helper is None:
            return None
        try:
            result = helper.rank(question)
        except RuntimeError as exc:  # the helper is fine; this question failed there (a bad request, say)
            log.debug("recall helper %s could not rank a question: %s", helper.number, exc)
            self._release(helper)
            return None
        except Exception as exc:
            log.warning("recall helper %s failed (%s: %s); replacing it", helper.number, type(exc).__name__, exc)
            self._replace(helper)
            return None
        self._release(helper)
        return result

    def close(self) -> None:
        """Stop every helper (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            helpers, self._helpers, self._idle = self._helpers, [], []
        self._unfollow()
        for helper in helpers:
            helper.stop()

    # -- internals -------------------------------------------------------------------------------------------------
    def _broadcast(self, change: VectorChange) -> None:
        with self._lock:
            helpers = list(self._helpers)
        for helper in helpers:
            helper.post(change)

    def _release(self, helper: _Helper) -> None:
        with self._lock:
            if not self._closed and helper in self._helpers:
                self._idle.append(helper)

    def _start(self, number: int) -> None:
        helper = _Helper(number, self._db_path, self._vectors.model_id, self._vectors.dim)
        with self._lock:
            if self._closed:
                return
            self._helpers.append(helper)
        reducers = self._vectors.first_passes()
        try:
            helper.spawn([("reducers", reducers)] if reducers else [])
        except OSError as exc:
            log.error("could not start recall helper %s: %s; recalls are ranked in this process", number, exc)
            with self._lock:
                self._helpers.remove(helper)
            return
        threading.Thread(target=self._await_ready, args=(helper,), name=f"recall-helper-{number}", daemon=True).start()

    def _await_ready(self, helper: _Helper) -> None:
        try:
            count = helper.wait_ready(START_TIMEOUT_S)
        except Exception as exc:
            if not self._closed:
                log.warning("recall helper %s did not start (%s: %s)", helper.number, type(exc).__name__, exc)
                self._replace(helper)
            return
        log.info("recall helper %s ready (%s vectors)", helper.number, count)
        self._release(helper)

    def _replace(self, helper: _Helper) -> None:
        """Stop a failed helper and start another, unless helpers keep dying right after starting."""
        with self._lock:
            if helper in self._idle:
                self._idle.remove(helper)
            if helper in self._helpers:
                self._helpers.remove(helper)
            closed = self._closed
        threading.Thread(target=helper.stop, daemon=True).start()
        if closed:
            return
        if helper.child is not None and not self._restarts.died(helper.number, helper.child):
            log.error("recall helper %s keeps failing; its share of recalls is ranked in this process", helper.number)
            return
        self._start(helper.number)


def _packed(changes: list[VectorChange]) -> list[VectorChange]:
    """Changes as sent: consecutive upserts merged into one (fewer, larger messages to pickle)."""
    packed: list[VectorChange] = []
    rows: list[Any] | None = None  # the rows of the upsert being gathered (extended in place: jobs send one at a time)
    for change in changes:
        if change[0] != "upsert":
            packed.append(change)
            rows = None
        elif rows is None:
            rows = list(change[1])
            packed.append(("upsert", rows))
        else:
            rows.extend(change[1])
    return packed


# -- the helper process --------------------------------------------------------------------------------------------
def _return_free_memory() -> None:
    """Hand the heap freed after loading back to the system (glibc keeps it otherwise; this process lives long)."""
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to do


def serve(db_path: Path, model_id: str, dim: int, conn: Connection) -> None:
    """The helper's life: open the vault read-only, load the vectors, then apply changes and rank questions."""
    from engine.store import Store

    try:
        store = Store(db_path, read_only=True)
        vectors = SqliteVecIndex(store, model_id, dim)
        count = vectors.load_mirror()
        ranker = Ranker(store, vectors, model_id)
        _return_free_memory()
        # what loading made lives as long as the helper: no later collection needs to traverse it again
        gc.collect()
        gc.freeze()
    except Exception as exc:
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    try:
        conn.send(("ready", count))
    except OSError:
        return  # the vault's process went away while the vectors loaded
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the vault's process closed the channel or went away
        vectors.learn(message[1])
        if message[0] != "rank":
            continue
        try:
            answer: tuple[str, Any] = ("ok", ranker.rank(message[2], INLINE))
        except Exception as exc:
            answer = ("failed", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(answer)
        except OSError:
            return


def main(argv: Sequence[str]) -> int:
    """Entry point of a helper process: ``python -m engine.recall.processes DB MODEL DIM FD``."""
    die_with_parent()  # before the vectors load: that can take minutes, and nobody may be left to ask
    db_path, model_id, dim, fd = argv
    logging.basicConfig(level=logging.WARNING, format="cairn recall helper: %(levelname)s %(name)s: %(message)s")
    serve(Path(db_path), model_id, int(dim), Connection(int(fd)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
