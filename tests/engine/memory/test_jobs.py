"""The durable job queue: retries with backoff, parking with the error visible, restart resumes."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from engine import Settings, Vault
from engine.jobs import Job, JobOutcome, JobRunner, enqueue, finish_jobs


def test_failures_retry_with_backoff_then_park_with_the_error(tmp_path: Path) -> None:
    settings = Settings().updated(
        {"llm.provider": "simple", "embedder.provider": "hashing", "jobs.backoff_s": 0.05, "jobs.max_attempts": 3}
    )
    vault = Vault.open(tmp_path / "v", settings=settings, start_workers=False)
    try:
        calls: list[int] = []
        runner = JobRunner(vault.store, settings.jobs, poll_s=0.05)

        def flaky(jobs: list[Job]) -> list[JobOutcome]:
            calls.extend(j.attempts for j in jobs)
            return [JobOutcome(j.id, error="RuntimeError: the model fell over") for j in jobs]

        runner.register("flaky", flaky)
        job_id = vault.store.write(lambda tx: enqueue(tx, "flaky", {"n": 1}, max_attempts=3))
        runner.start()
        assert runner.wait_idle(120)
        runner.stop()
        assert calls == [1, 2, 3]
        stats = vault.jobs.stats()
        assert stats.parked == 1 and stats.queued == 0
        parked = stats.failures[0]
        assert parked.id == job_id and parked.last_error == "RuntimeError: the model fell over"
        assert vault.jobs.retry() == 1
        assert vault.jobs.stats().queued == 1
    finally:
        vault.close()


def test_a_job_that_succeeds_is_deleted_and_its_batch_is_grouped(tmp_path: Path) -> None:
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    vault = Vault.open(tmp_path / "v", settings=settings, start_workers=False)
    try:
        batches: list[int] = []
        lock = threading.Lock()
        runner = JobRunner(vault.store, settings.jobs, poll_s=0.05)

        def ok(jobs: list[Job]) -> list[JobOutcome]:
            with lock:
                batches.append(len(jobs))
            vault.store.write(lambda tx: finish_jobs(tx, [j.id for j in jobs]))
            return [JobOutcome(j.id) for j in jobs]

        runner.register("ok", ok, batch_size=10)
        vault.store.write(lambda tx: [enqueue(tx, "ok", {"i": i}) for i in range(25)])
        runner.start()
        assert runner.wait_idle(120)
        runner.stop()
        assert sum(batches) == 25 and max(batches) <= 10 and len(batches) < 25
        assert vault.store.scalar("SELECT COUNT(*) FROM jobs") == 0
    finally:
        vault.close()


def test_jobs_left_running_by_a_crash_are_resumed(tmp_path: Path) -> None:
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    vault = Vault.open(tmp_path / "v", settings=settings, start_workers=False)
    try:
        vault.store.write(lambda tx: [enqueue(tx, "ok", {"i": i}) for i in range(3)])
        vault.store.write(lambda tx: tx.execute("UPDATE jobs SET status = 'running'"))
        done: list[int] = []
        runner = JobRunner(vault.store, settings.jobs, poll_s=0.05)

        def ok(jobs: list[Job]) -> list[JobOutcome]:
            done.extend(j.id for j in jobs)
            vault.store.write(lambda tx: finish_jobs(tx, [j.id for j in jobs]))
            return [JobOutcome(j.id) for j in jobs]

        runner.register("ok", ok)
        runner.start()
        assert runner.wait_idle(120)
        runner.stop()
        assert len(done) == 3
    finally:
        vault.close()


def test_background_jobs_give_way_while_events_are_being_acknowledged(tmp_path: Path) -> None:
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing", "jobs.workers": 2})
    vault = Vault.open(tmp_path / "v", settings=settings, start_workers=False)
    try:
        starts: list[tuple[float, int]] = []  # (when, batch size)
        running = [0, 0]  # now, most at once
        lock = threading.Lock()
        runner = JobRunner(vault.store, settings.jobs, poll_s=0.05)
        stop = threading.Event()
        # once the acknowledgements stop, the first two batches wait for each other: both workers must be running
        # at once (however slow the machine, a generous timeout, not a timing, decides)
        meet = threading.Barrier(2, timeout=15)
        met: list[bool] = []
        joined = [0]

        def slow(jobs: list[Job]) -> list[JobOutcome]:
            with lock:
                starts.append((time.monotonic(), len(jobs)))
                running[0] += 1
                running[1] = max(running[1], running[0])
                meeting = stop.is_set() and joined[0] < 2
                joined[0] += meeting
            if meeting:
                try:
                    meet.wait()
                    met.append(True)
                except threading.BrokenBarrierError:
                    met.append(False)
            time.sleep(0.1)
            vault.store.write(lambda tx: finish_jobs(tx, [j.id for j in jobs]))
            with lock:
                running[0] -= 1
            return [JobOutcome(j.id) for j in jobs]

        runner.register("slow", slow, batch_size=8)
        vault.store.write(lambda tx: [enqueue(tx, "slow", {"i": i}) for i in range(60)])

        def acknowledging() -> None:
            while not stop.is_set():
                runner.note_foreground()
                time.sleep(0.02)

        runner.note_foreground()
        busy = threading.Thread(target=acknowledging)
        busy.start()
        runner.start()
        time.sleep(2.0)
        stop.set()
        busy.join()
        under_load = len(starts)
        under_load_running = running[1]
        assert runner.wait_idle(120)  # the rest at full speed once the acknowledgements stop
        runner.stop()
        # a 0.1 s batch is followed by a 1.9 s rest while events arrive, and the two workers take turns: one or two
        # batches in 2 s, not 20 or 40
        assert 1 <= under_load <= 3, under_load
        assert under_load_running == 1  # never both workers at once under load
        assert all(size == 2 for _, size in starts[:under_load])  # a quarter of the batch under load
        assert sum(size for _, size in starts) == 60
        # once the last acknowledgement is a window (0.25 s) behind: no more resting, full batches, both workers
        settled = starts[under_load + 2 :]
        assert any(size == 8 for _, size in settled)
        assert met == [True, True] and running[1] == 2
    finally:
        vault.close()


def test_jobs_give_way_harder_during_a_burst_of_acknowledgements(tmp_path: Path) -> None:
    """A steady stream keeps the jobs' twentieth; a burst (hundreds of events a second) leaves them a hundredth."""
    from engine import jobs as jobs_module

    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    vault = Vault.open(tmp_path / "v", settings=settings, start_workers=False)
    try:
        runner = JobRunner(vault.store, settings.jobs)

        def stream(per_second: float, seconds: float, batch: int = 1) -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                runner.note_foreground(batch)
                time.sleep(batch / per_second)

        stream(50, 1.2)  # a chat client, or the endpoint's mixed load
        assert runner.foreground_share() == jobs_module.FOREGROUND_SHARE
        stream(2_000, 1.2, batch=16)  # an import: batches of 16 acknowledged at 2,000 events/s
        assert runner.foreground_share() == jobs_module.BURST_SHARE
        stream(50, 1.2)
        assert runner.foreground_share() == jobs_module.FOREGROUND_SHARE, "the burst is over"
    finally:
        vault.close()
