"""Crash safety: kill -9 between acknowledgement and enrichment, and during enrichment; restart resumes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine import Settings, Vault

CHILD = Path(__file__).with_name("child_ingest.py")


def _run_child(vault_dir: Path, count: int, workers: bool, *, kill_after_acks: int | None = None) -> list[int]:
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(vault_dir), str(count), "1" if workers else "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    acked: list[int] = []
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.startswith("ack "):
                acked.append(int(line.split()[1]))
                if kill_after_acks is not None and len(acked) >= kill_after_acks:
                    break
            elif line.startswith("done"):
                break
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    return acked


def _settings() -> Settings:
    return Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})


def test_kill_9_between_enqueue_and_processing_loses_nothing(tmp_path: Path) -> None:
    vault_dir = tmp_path / "v"
    acked = _run_child(vault_dir, 40, workers=False)
    assert len(acked) == 40
    with Vault.open(vault_dir, settings=_settings()) as vault:
        assert vault.store.scalar("SELECT COUNT(*) FROM jobs WHERE kind = 'enrich'") == 40
        assert vault.jobs.wait_idle(120)
        statuses = dict(vault.store.query("SELECT id, status FROM events"))
        assert sorted(statuses) == sorted(acked)
        assert set(statuses.values()) == {"enriched"}
        assert vault.store.scalar("SELECT COUNT(*) FROM facts") >= 40
        assert vault.store.scalar("PRAGMA integrity_check") == "ok"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_during_enrichment_resumes_and_stays_consistent(tmp_path: Path, seed: int) -> None:
    vault_dir = tmp_path / "v"
    rng = random.Random(seed)
    acked = _run_child(vault_dir, 200, workers=True, kill_after_acks=rng.randint(20, 180))
    time.sleep(rng.random() * 0.05)
    with Vault.open(vault_dir, settings=_settings()) as vault:
        assert vault.jobs.wait_idle(120)
        ids = {int(r[0]) for r in vault.store.query("SELECT id FROM events")}
        assert set(acked) <= ids, "every acknowledged event survived"
        assert vault.store.scalar("SELECT COUNT(*) FROM events WHERE status != 'enriched'") == 0
        assert vault.store.scalar("PRAGMA integrity_check") == "ok"
        # FTS and vector rows match their base rows
        assert vault.store.scalar("SELECT COUNT(*) FROM events_fts") == len(ids)
        vec_rows = vault.store.scalar(f"SELECT COUNT(*) FROM {vault.vectors.table}")  # type: ignore[attr-defined]
        assert vec_rows == vault.store.scalar("SELECT COUNT(*) FROM embeddings")
        # each event's facts exist once (no duplicate processing after the crash)
        dupes = vault.store.scalar(
            "SELECT COUNT(*) FROM (SELECT event_id, object_norm, COUNT(*) c FROM facts "
            "GROUP BY event_id, predicate, object_norm HAVING c > 1)"
        )
        assert dupes == 0
