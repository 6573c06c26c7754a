"""The durable job queue and its worker threads.

Jobs live in the ``jobs`` table, written in the same transaction as whatever created them (an ingested event and
its enrichment job commit together), so a crash can never lose the work an acknowledgement promised.  On start,
jobs left ``running`` by a crashed process are put back in the queue.

Workers claim a *batch* of ready jobs of one kind in a single write transaction and hand the batch to the kind's
handler: batching keeps the writer's transaction count low (one claim + one result write per batch), which is what
makes the rule path fast.  A handler reports per job: done (the job row is deleted with the handler's writes), or
failed (retried with exponential backoff; parked with its error after ``max_attempts`` and announced as
``job.failed`` on the change feed).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.config import JobSettings
from engine.store import Store, Tx, chunked
from engine.store.writer import WriterClosed

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Job:
    """A claimed job."""

    id: int
    kind: str
    payload: Mapping[str, Any]
    attempts: int
    max_attempts: int


@dataclass(frozen=True, slots=True)
class JobInfo:
    """A job as the GUI and ``GET /v6/jobs`` show it."""

    id: int
    kind: str
    status: str
    attempts: int
    max_attempts: int
    last_error: str | None
    warnings: tuple[str, ...]
    created_at: float
    updated_at: float
    run_after: float
    payload: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class JobStats:
    """Queue depth by status and kind, plus the parked (failed) jobs."""

    queued: int
    running: int
    parked: int
    by_kind: Mapping[str, int]
    failures: tuple[JobInfo, ...] = ()


@dataclass(slots=True)
class JobOutcome:
    """What a handler says about one job of its batch."""

    job_id: int
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    retryable: bool = True


class JobHandler(Protocol):
    """Runs a batch of jobs of one kind and returns one outcome per job.

    The handler does its own writes (through the store's writer) and must delete finished jobs in the same
    transaction as their results with :func:`finish_jobs`; failed jobs are rescheduled by the runner.
    """

    def __call__(self, jobs: Sequence[Job]) -> list[JobOutcome]:
        """Run ``jobs`` (all of one kind); one outcome per job, matched to its job by ``job_id``."""
        ...


def job_failed(job: Job, exc: BaseException) -> JobOutcome:
    """The outcome of a job whose work raised: the error's type and message, for the retry and the parked list."""
    return JobOutcome(job.id, error=f"{type(exc).__name__}: {exc}")


def each_job(jobs: Sequence[Job], run: Callable[[Job], Sequence[str]]) -> list[JobOutcome]:
    """Run ``run`` on each job of a batch in turn, for handlers whose jobs stand alone: its warnings, or the error
    it raised, become that job's outcome and the others go on."""
    outcomes: list[JobOutcome] = []
    for job in jobs:
        try:
            warnings = run(job)
        except Exception as exc:
            outcomes.append(job_failed(job, exc))
        else:
            outcomes.append(JobOutcome(job.id, warnings=list(warnings)))
    return outcomes


def enqueue(
    tx: Tx,
    kind: str,
    payload: Mapping[str, Any],
    *,
    priority: int = 100,
    max_attempts: int = 5,
    dedupe_key: str | None = None,
    delay_s: float = 0.0,
) -> int | None:
    """Add a job inside the caller's transaction; returns its id (None when ``dedupe_key`` is already queued)."""
    if dedupe_key is not None:
        existing = tx.scalar("SELECT id FROM jobs WHERE dedupe_key = ?", (dedupe_key,))
        if existing is not None:
            return None
    job_id = tx.new_id("job")
    tx.execute(
        "INSERT INTO jobs(id, kind, payload, status, priority, attempts, max_attempts, run_after, dedupe_key, "
        "created_at, updated_at) VALUES (?, ?, ?, 'queued', ?, 0, ?, ?, ?, ?, ?)",
        (job_id, kind, json.dumps(dict(payload)), priority, max_attempts, tx.now + delay_s, dedupe_key, tx.now, tx.now),
    )
    return job_id


def enqueue_many(tx: Tx, kind: str, payloads: Sequence[Mapping[str, Any]], *, priority: int = 100) -> list[int]:
    """Add one job per payload inside the caller's transaction (no dedupe key); returns their ids in order."""
    job_ids = tx.new_ids("job", len(payloads))
    tx.executemany(
        "INSERT INTO jobs(id, kind, payload, status, priority, attempts, max_attempts, run_after, dedupe_key, "
        "created_at, updated_at) VALUES (?, ?, ?, 'queued', ?, 0, 5, ?, NULL, ?, ?)",
        [
            (job_id, kind, json.dumps(dict(payload)), priority, tx.now, tx.now, tx.now)
            for job_id, payload in zip(job_ids, payloads, strict=True)
        ],
    )
    return job_ids


def finish_jobs(tx: Tx, job_ids: Sequence[int]) -> None:
    """Delete finished jobs (their ids are released with them)."""
    for chunk in chunked(job_ids):
        tx.execute(f"DELETE FROM jobs WHERE id IN ({','.join('?' * len(chunk))})", tuple(chunk))


def jobs_about(tx: Tx, events: set[int], episodes: set[int], documents: set[int]) -> list[int]:
    """The jobs (any status) whose payload names one of these events, episodes or documents: what a forget takes."""
    found = []
    for job_id, payload in tx.execute("SELECT id, payload FROM jobs").fetchall():
        data = json.loads(payload or "{}")
        if data.get("event_id") in events or data.get("episode_id") in episodes or data.get("document_id") in documents:
            found.append(int(job_id))
    return found


def drop_document_jobs(tx: Tx, kind: str, document_id: int) -> None:
    """Delete the ``kind`` jobs of a document that is going away (a deleted document is not distilled after all)."""
    tx.execute("DELETE FROM jobs WHERE kind = ? AND json_extract(payload, '$.document_id') = ?", (kind, document_id))


# The three steps of a job done on its caller's thread instead of a worker's (``vault.events.extract(learn=True)``
# enriches the event it has just stored and reports what happened), keyed by the job's event.
_OF_EVENT = "kind = ? AND json_extract(payload, '$.event_id') = ?"


def claim_for(tx: Tx, kind: str, event_id: int) -> None:
    """Mark the queued ``kind`` job of ``event_id`` running, so no worker takes it meanwhile (after a crash,
    :meth:`JobRunner.start` requeues it)."""
    tx.execute(
        f"UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? "
        f"WHERE status = 'queued' AND {_OF_EVENT}",
        (tx.now, kind, event_id),
    )


def release_for(tx: Tx, kind: str, event_id: int, error: str) -> None:
    """Hand a job claimed with :func:`claim_for` back to the queue with ``error`` (retried, then parked)."""
    tx.execute(
        f"UPDATE jobs SET status = 'queued', last_error = ?, updated_at = ? WHERE status = 'running' AND {_OF_EVENT}",
        (error, tx.now, kind, event_id),
    )


def finish_for(tx: Tx, kind: str, event_id: int) -> None:
    """Delete the ``kind`` job of ``event_id``, in the transaction that stores its results."""
    tx.execute(f"DELETE FROM jobs WHERE {_OF_EVENT}", (kind, event_id))


#: While foreground work (events being acknowledged) keeps arriving, background jobs use at most this share of
#: the time: after a batch that took ``t`` seconds, the workers rest ``t * (1 / share - 1)`` before the next one.
#: Acknowledgements come first because a client waits for them and nobody waits for enrichment, which catches up at
#: full speed after the burst (the shares tried and their figures: BENCHMARKS.md, Endpoint).
FOREGROUND_SHARE = 0.05
#: During a burst — acknowledgements arriving at :data:`BURST_RATE` per second or more, which keeps the writer and
#: the interpreter busy — jobs give way harder still; a steady stream (a chat) keeps the larger share, so its
#: enrichment keeps up.
BURST_SHARE = 0.01
BURST_RATE = 500.0
#: The foreground rate is counted over windows this long.
RATE_WINDOW_S = 0.5
#: While foreground work is under way, jobs are claimed in batches this many times smaller (see ``_claim_size``).
FOREGROUND_BATCH_DIVISOR = 4
#: Foreground work counts as ongoing this long after the last of it.
FOREGROUND_WINDOW_S = 0.25


class JobRunner:
    """Worker threads that claim and run jobs until :meth:`stop`.

    Acknowledging an event comes before enriching one: both need the one writer thread and the interpreter,
    and a chat client waits for the acknowledgement while nobody waits for the enrichment.  So while events keep
    arriving (:meth:`note_foreground`), the workers give way — they keep working, but at most
    :data:`FOREGROUND_SHARE` of the time — and catch up at full speed once the burst is over.
    """

    def __init__(
        self,
        store: Store,
        settings: JobSettings,
        *,
        batch_size: int = 32,
        poll_s: float = 0.5,
        on_parked: Callable[[JobInfo], None] | None = None,
    ) -> None:
        self._store = store
        self._settings = settings
        self._batch_size = batch_size
        self._poll_s = poll_s
        self._handlers: dict[str, JobHandler] = {}
        self._batch_sizes: dict[str, int] = {}
        self._patient: set[str] = set()
        self._wake = threading.Condition()
        self._pending_wake = False
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._busy = 0
        self._on_parked = on_parked
        self._foreground_at = -1e9
        self._window_at = -1e9  # the current rate window started then, with this many events noted in it
        self._window_events = 0
        self._rate = 0.0  # foreground events per second in the last full window
        self._rest_until = 0.0
        self._turns = 0  # workers inside a claim-and-run turn (under foreground load: one at most)

    # -- set-up --------------------------------------------------------------------------------------------------
    def register(self, kind: str, handler: JobHandler, *, batch_size: int | None = None, patient: bool = False) -> None:
        """Route jobs of ``kind`` to ``handler`` (batches of at most ``batch_size``).

        A ``patient`` kind waits for something outside Cairn (a model server that is down): while its job is
        scheduled for later, the queue counts as idle (:meth:`wait_idle`) — waiting for it could take hours.
        """
        self._handlers[kind] = handler
        self._batch_sizes[kind] = batch_size or self._batch_size
        if patient:
            self._patient.add(kind)

    def start(self) -> None:
        """Requeue jobs a crashed process left running, then start the workers."""
        self._store.write(
            lambda tx: tx.execute(
                "UPDATE jobs SET status = 'queued', updated_at = ? WHERE status = 'running'", (tx.now,)
            )
        )
        for n in range(self._settings.workers):
            thread = threading.Thread(target=self._loop, name=f"vault-jobs-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 30.0) -> None:
        """Let running batches finish, then stop the workers (queued jobs stay queued for the next start)."""
        self._stopping.set()
        self.notify()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._threads.clear()

    def note_foreground(self, events: int = 1) -> None:
        """Foreground work (``events`` being acknowledged) is happening now: background jobs give way a while.

        Called on the endpoint's event loop for every ingest, so it takes no lock: a count off by one in a race
        changes nothing that matters.
        """
        now = time.monotonic()
        elapsed = now - self._window_at
        if elapsed >= RATE_WINDOW_S:
            self._rate = self._window_events / elapsed if elapsed < 2 * RATE_WINDOW_S else 0.0
            self._window_at, self._window_events = now, 0
        self._window_events += events
        self._foreground_at = now

    def foreground_share(self) -> float:
        """The share of the time jobs may use while foreground work is under way (see :data:`BURST_SHARE`)."""
        return BURST_SHARE if self._rate >= BURST_RATE else FOREGROUND_SHARE

    def _under_load(self, now: float) -> bool:
        """Whether foreground work was noted within the last :data:`FOREGROUND_WINDOW_S`."""
        return now - self._foreground_at <= FOREGROUND_WINDOW_S

    def _take_turn(self) -> float:
        """Reserve a claim-and-run turn, or say how long to wait first because foreground work is under way.

        Returns 0.0 when the turn is taken (the caller must :meth:`_end_turn`).  Under foreground load only one
        worker runs at a time, and only once the rest owed for the previous batch is over: two workers resting
        and running in step would double the share the foreground gives away.
        """
        with self._wake:
            now = time.monotonic()
            if self._under_load(now):
                if self._turns:
                    return FOREGROUND_WINDOW_S / 5
                if self._rest_until > now:
                    # rest in slices of the window: when the foreground goes quiet mid-rest, the worker is back
                    # within a window instead of sleeping out a rest that is no longer owed
                    return min(self._rest_until - now, FOREGROUND_WINDOW_S)
            self._turns += 1
            return 0.0

    def _end_turn(self) -> None:
        with self._wake:
            self._turns -= 1

    def notify(self) -> None:
        """Wake idle workers (called after enqueueing)."""
        with self._wake:
            self._pending_wake = True
            self._wake.notify_all()

    # -- waiting -------------------------------------------------------------------------------------------------
    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until no job is queued or running (parked jobs don't count); False on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = self._pending_count()
            if remaining == 0 and self._busy == 0:
                return True
            if time.monotonic() >= deadline:
                return False
            self.notify()
            time.sleep(0.02)

    def _pending_count(self) -> int:
        """Jobs queued or running, but not those of a patient kind scheduled for later."""
        if not self._patient:
            return queue_depth(self._store)
        kinds = sorted(self._patient)
        marks = ",".join("?" * len(kinds))
        return int(
            self._store.scalar(
                "SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running') AND NOT "
                f"(status = 'queued' AND kind IN ({marks}) AND run_after > ?)",
                (*kinds, time.time()),
            )
            or 0
        )

    # -- the loop ------------------------------------------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stopping.is_set():
            rest = self._take_turn()
            if rest > 0:
                self._stopping.wait(rest)
                continue
            try:
                try:
                    batch = self._claim()
                except WriterClosed:
                    return
                except Exception:
                    log.exception("claiming jobs failed")
                    batch = []
                if batch:
                    self._run(batch)
            finally:
                self._end_turn()
            if not batch:
                with self._wake:
                    if not self._pending_wake and not self._stopping.is_set():
                        self._wake.wait(self._poll_s)
                    self._pending_wake = False

    def _claim_size(self, kind: str) -> int:
        """Jobs of ``kind`` to claim now: the kind's batch, or a slice of it while foreground work is under way.

        A batch's results are written in one transaction, and every acknowledgement waiting meanwhile waits for it;
        smaller batches under load keep those waits short (the share of time the jobs get stays the same).
        """
        size = self._batch_sizes[kind]
        return max(1, size // FOREGROUND_BATCH_DIVISOR) if self._under_load(time.monotonic()) else size

    def _claim(self) -> list[Job]:
        kinds = tuple(self._handlers)
        if not kinds:
            return []

        def claim(tx: Tx) -> list[Job]:
            # the first ready job of each kind (one walk of the claim index each), then the most urgent of those
            firsts = []
            for kind in kinds:
                row = tx.execute(
                    "SELECT priority, id FROM jobs WHERE status = 'queued' AND kind = ? AND run_after <= ? "
                    "ORDER BY priority, id LIMIT 1",
                    (kind, tx.now),
                ).first()
                if row is not None:
                    firsts.append((int(row[0]), int(row[1]), kind))
            if not firsts:
                return []
            kind = min(firsts)[2]
            rows = tx.execute(
                "SELECT id, kind, payload, attempts, max_attempts FROM jobs WHERE status = 'queued' "
                "AND run_after <= ? AND kind = ? ORDER BY priority, id LIMIT ?",
                (tx.now, kind, self._claim_size(kind)),
            ).fetchall()
            ids = [int(r[0]) for r in rows]
            tx.execute(
                f"UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? "
                f"WHERE id IN ({','.join('?' * len(ids))})",
                (tx.now, *ids),
            )
            return [Job(int(r[0]), str(r[1]), json.loads(r[2]), int(r[3]) + 1, int(r[4])) for r in rows]

        with self._wake:
            self._busy += 1
        try:
            claimed: list[Job] = self._store.write(claim)
            return claimed
        finally:
            with self._wake:
                self._busy -= 1

    def _run(self, batch: list[Job]) -> None:
        handler = self._handlers[batch[0].kind]
        with self._wake:
            self._busy += 1
        started = time.monotonic()
        try:
            try:
                outcomes = handler(batch)
            except Exception as exc:
                log.exception("job handler %s crashed", batch[0].kind)
                outcomes = [job_failed(job, exc) for job in batch]
            by_id = {o.job_id: o for o in outcomes}
            failed = [(job, by_id[job.id]) for job in batch if job.id in by_id and by_id[job.id].error]
            warned = [
                (job, by_id[job.id])
                for job in batch
                if job.id in by_id and not by_id[job.id].error and by_id[job.id].warnings
            ]
            if failed or warned:
                self._record_failures(failed, warned)
        finally:
            finished = time.monotonic()
            with self._wake:
                self._busy -= 1
                share = self.foreground_share()
                self._rest_until = max(self._rest_until, finished + (finished - started) * (1 / share - 1))

    def _record_failures(self, failed: list[tuple[Job, JobOutcome]], warned: list[tuple[Job, JobOutcome]]) -> None:
        parked: list[JobInfo] = []

        def record(tx: Tx) -> None:
            for job, outcome in failed:
                final = job.attempts >= job.max_attempts or not outcome.retryable
                delay = self._settings.backoff_s * (2 ** (job.attempts - 1))
                tx.execute(
                    "UPDATE jobs SET status = ?, run_after = ?, last_error = ?, warnings = ?, updated_at = ? "
                    "WHERE id = ?",
                    (
                        "parked" if final else "queued",
                        tx.now + delay,
                        outcome.error,
                        json.dumps(outcome.warnings),
                        tx.now,
                        job.id,
                    ),
                )
                if final:
                    tx.emit("job.failed", job.id, kind=job.kind, error=outcome.error, attempts=job.attempts)
                    parked.append(
                        JobInfo(
                            job.id,
                            job.kind,
                            "parked",
                            job.attempts,
                            job.max_attempts,
                            outcome.error,
                            tuple(outcome.warnings),
                            tx.now,
                            tx.now,
                            tx.now,
                            job.payload,
                        )
                    )
            for job, outcome in warned:
                # A finished job that degraded (e.g. model down → rule path) keeps a visible note in the log of
                # warnings; the job row itself is gone, so record it as a change for the GUI and the endpoint.
                tx.emit("job.warning", job.id, kind=job.kind, warnings=outcome.warnings)

        try:
            self._store.write(record)
        except WriterClosed:
            return
        for info in parked:
            log.warning("job %s (%s) parked after %s attempts", info.id, info.kind, info.attempts)
            if self._on_parked is not None:
                self._on_parked(info)


def job_stats(store: Store, *, failures: int = 50) -> JobStats:
    """Counts by status and kind, and the most recent parked jobs with their errors."""
    rows = store.query("SELECT status, kind, COUNT(*) FROM jobs GROUP BY status, kind")
    totals = {"queued": 0, "running": 0, "parked": 0}
    by_kind: dict[str, int] = {}
    for status, kind, count in rows:
        totals[str(status)] = totals.get(str(status), 0) + int(count)
        if status in ("queued", "running"):
            by_kind[str(kind)] = by_kind.get(str(kind), 0) + int(count)
    parked = store.query(
        "SELECT id, kind, status, attempts, max_attempts, last_error, warnings, created_at, updated_at, run_after, "
        "payload FROM jobs WHERE status = 'parked' ORDER BY updated_at DESC LIMIT ?",
        (failures,),
    )
    return JobStats(totals["queued"], totals["running"], totals["parked"], by_kind, tuple(_job_info(r) for r in parked))


def retry_parked(tx: Tx, job_ids: Sequence[int] | None = None) -> int:
    """Put parked jobs (all, or ``job_ids``) back in the queue with a fresh attempt budget."""
    if job_ids is None:
        result = tx.execute(
            "UPDATE jobs SET status = 'queued', attempts = 0, run_after = ?, updated_at = ? WHERE status = 'parked'",
            (tx.now, tx.now),
        )
        return int(result.rowcount or 0)
    count = 0
    for chunk in chunked(job_ids):
        result = tx.execute(
            f"UPDATE jobs SET status = 'queued', attempts = 0, run_after = ?, updated_at = ? "
            f"WHERE status = 'parked' AND id IN ({','.join('?' * len(chunk))})",
            (tx.now, tx.now, *chunk),
        )
        count += int(result.rowcount or 0)
    return count


def queue_depth(store: Store) -> int:
    """Jobs waiting or running."""
    return int(store.scalar("SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')") or 0)


class JobsApi:
    """``vault.jobs``: the background queue as the GUI, the endpoint, the CLI and tests see it.

    ``flush_usage`` and ``flush_vectors`` are the two other things an idle vault has caught up with (see
    :meth:`wait_idle`): recall usage gathered off the queue, and the search side of the vectors.
    """

    def __init__(
        self,
        store: Store,
        runner: JobRunner,
        *,
        flush_usage: Callable[[], Future[Any] | None],
        flush_vectors: Callable[[float], bool],
    ) -> None:
        self._store = store
        self._runner = runner
        self._flush_usage = flush_usage
        self._flush_vectors = flush_vectors

    def stats(self) -> JobStats:
        """Queue depth by status and kind, and parked jobs with their errors."""
        return job_stats(self._store)

    def retry(self, job_ids: Sequence[int] | None = None) -> int:
        """Requeue parked jobs (all, or the given ids) with a fresh attempt budget; returns how many."""
        count = int(self._store.write(lambda tx: retry_parked(tx, job_ids)))
        self._runner.notify()
        return count

    def queue_depth(self) -> int:
        """Jobs waiting or running."""
        return queue_depth(self._store)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until the recall usage gathered so far is recorded, no job is queued or running and searches see
        every stored vector; False if ``timeout`` passed first.  Vectors waiting for an embedder that is down do not
        count: their job is scheduled for its next try and the vault is otherwise idle (``vault.vector_status()``).
        """
        started = time.monotonic()
        usage = self._flush_usage()
        if usage is not None:
            try:
                usage.result(timeout)
            except TimeoutError:
                return False
            except Exception:
                log.warning("recording recall usage failed", exc_info=True)
        if not self._runner.wait_idle(timeout):
            return False
        return self._flush_vectors(max(0.0, timeout - (time.monotonic() - started)))


def _job_info(row: Sequence[Any]) -> JobInfo:
    return JobInfo(
        id=int(row[0]),
        kind=str(row[1]),
        status=str(row[2]),
        attempts=int(row[3]),
        max_attempts=int(row[4]),
        last_error=row[5],
        warnings=tuple(json.loads(row[6] or "[]")),
        created_at=float(row[7]),
        updated_at=float(row[8]),
        run_after=float(row[9]),
        payload=json.loads(row[10] or "{}"),
    )
