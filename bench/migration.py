"""A change of embedder on a synthetic vault of 100k facts and 100k events: the re-embedding rate, and recall while
it runs beside recall before it, in the same run.

Builds (or reuses) the hashing vault of :mod:`bench.synth`, copies it, times recall on the copy as it is, then
opens the copy with ``embedder.provider = <to>`` as a user's settings change would: the vault starts its background
re-embedding (the ``vectors.fill`` job) and the same recall questions are timed again while it runs (the query
embedded with both models, both spaces searched).  The re-embedding rate is the objects re-embedded over the wall
time from the open until the old space is dropped.

Usage: ``python -m bench.migration [--facts 100000] [--events 100000] [--to onnx] [--json out.json]``
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from app.plugins import build_plugin_manager
from bench.common import ROOT, machine, percentile, write_json
from bench.recall_speed import QUESTIONS
from bench.synth import PLACES, THINGS, build
from engine.config import Settings
from engine.recall.types import RecallRequest
from engine.vault import Vault


def _questions(vault: Vault, count: int) -> list[str]:
    rng = random.Random(5)
    names = [str(r[0]) for r in vault.store.query("SELECT name FROM subjects LIMIT 500")]
    return [
        rng.choice(QUESTIONS).format(name=rng.choice(names), place=rng.choice(PLACES), thing=rng.choice(THINGS))
        for _ in range(count)
    ]


def _time_recall(vault: Vault, questions: list[str], stop: threading.Event | None = None) -> list[float]:
    """Milliseconds per recall, cycling through ``questions`` until ``stop`` is set (or once through)."""
    latencies: list[float] = []
    i = 0
    while True:
        if stop is None and i >= len(questions):
            break
        if stop is not None and (stop.is_set() or i >= 20 * len(questions)):
            break
        t0 = time.perf_counter()
        vault.recall(RecallRequest(conversation_id="bench", query=questions[i % len(questions)]))
        latencies.append((time.perf_counter() - t0) * 1000)
        i += 1
        if stop is not None:
            time.sleep(0.2)  # a person asking, not a flood: the fill job gets the rest of the machine
    return latencies


def _ms(latencies: list[float]) -> dict[str, float]:
    return {
        "n": len(latencies),
        "p50": round(percentile(latencies, 50), 1),
        "p95": round(percentile(latencies, 95), 1),
        "max": round(max(latencies), 1),
    }


def main() -> None:
    """Build or reuse the vault, time recall, switch the embedder, time the migration and recall during it."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--to", choices=["onnx", "hashing-256"], default="onnx")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--cache", type=Path, default=ROOT / "bench" / "out")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    source = args.cache / f"synth-{args.facts}-{args.events}-hashing"
    if not (source / "synth.json").exists():
        print(f"building {source} …", flush=True)
        build(source, args.facts, args.events, "hashing")
    work = args.cache / f"migration-{args.facts}-{args.events}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, work)
    plugins = build_plugin_manager(load_entry_points=False)
    before_settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    after = {"embedder.provider": "onnx"} if args.to == "onnx" else {"embedder.hashing_dim": 256}
    after_settings = before_settings.updated({**after, "jobs.backoff_s": 0.5})

    vault = Vault.open(work, settings=before_settings, plugins=plugins, start_workers=False)
    try:
        vault.vectors.load_mirror()
        questions = _questions(vault, args.queries)
        _time_recall(vault, questions[:10])  # warm the page cache
        before = _time_recall(vault, questions)
    finally:
        vault.close()

    print("switching the embedder …", flush=True)
    t0 = time.perf_counter()
    vault = Vault.open(work, settings=after_settings, plugins=plugins, start_workers=True)
    try:
        status = vault.vector_status()
        assert status.migration is not None, "the change of embedder did not start a migration"
        total = status.migration.total
        stop = threading.Event()
        during: list[float] = []
        asker = threading.Thread(target=lambda: during.extend(_time_recall(vault, questions, stop)), daemon=True)
        asker.start()
        last_print = 0.0
        while vault.vector_status().migration is not None:
            time.sleep(1.0)
            if time.perf_counter() - last_print > 30:
                last_print = time.perf_counter()
                left = vault.vector_status().remaining
                print(f"  {total - left} of {total} re-embedded ({time.perf_counter() - t0:.0f} s)", flush=True)
        elapsed = time.perf_counter() - t0
        stop.set()
        asker.join()
        after_done = _time_recall(vault, questions)
        spaces = [str(r[0]) for r in vault.store.query("SELECT model_id FROM vector_spaces")]
        payload: dict[str, Any] = {
            "machine": machine(),
            "facts": args.facts,
            "events": args.events,
            "from": "hashing-v1-384",
            "to": vault.embedder.model_id,
            "objects_re_embedded": total,
            "migration_s": round(elapsed, 1),
            "vectors_per_s": round(total / elapsed, 1),
            "recall_ms_before": _ms(before),
            "recall_ms_during": _ms(during) if during else None,
            "recall_ms_after": _ms(after_done),
            "spaces_after": spaces,
        }
    finally:
        vault.close()
    print(json.dumps(payload, indent=2))
    write_json(args.json, payload)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
