"""The durable job queue: retries with backoff, parking with the error visible, restart resumes."""

from __future__ import annotations

import threading
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
        assert runner.wait_idle(10)
        runner.stop()
        assert calls == [1, 2, 3]
        stats = vault.jobs()
        assert stats.parked == 1 and stats.queued == 0
        parked = stats.failures[0]
        assert parked.id == job_id and parked.last_error == "RuntimeError: the model fell over"
        assert vault.retry_jobs() == 1
        assert vault.jobs().queued == 1
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
        assert runner.wait_idle(10)
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
        assert runner.wait_idle(10)
        runner.stop()
        assert len(done) == 3
    finally:
        vault.close()
