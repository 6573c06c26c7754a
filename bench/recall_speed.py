"""Recall latency on a synthetic vault of 100k facts and 100k events, beside a brute-force numpy scan.

Builds (or reuses) the vault with :mod:`bench.synth`, waits for the in-memory vector mirror, then times
``Vault.recall`` end to end (query embedding included) over templated questions, and in the same run the cost of
the raw building blocks: a brute-force numpy scan over all stored vectors, and sqlite-vec's vec0 KNN scan.

Usage: ``python -m bench.recall_speed [--facts N] [--events N] [--embedder hashing|onnx] [--queries 300]``
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np

from app.plugins import build_plugin_manager
from bench.common import ROOT, machine, make_embedder, percentile, write_json
from bench.synth import FIRST, PLACES, THINGS, build
from engine.config import Settings
from engine.recall.types import RecallRequest
from engine.vault import Vault

QUESTIONS = (
    "Where does {name} live now?",
    "What does {name} like to do on weekends?",
    "When did {name} visit {place}?",
    "What do you know about {name}?",
    "Any ideas for a birthday gift for {name}?",
    "Who in my circle does {thing}?",
    "What pet does {name} have?",
)


def main() -> None:
    """Build or reuse the vault, time recall, time the baselines."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--embedder", choices=["hashing", "onnx"], default="hashing")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--cache", type=Path, default=ROOT / "bench" / "out")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    vectors = args.embedder
    folder = args.cache / f"synth-{args.facts}-{args.events}-{vectors}"
    if not (folder / "synth.json").exists():
        print(f"building {folder} …", flush=True)
        build(folder, args.facts, args.events, vectors)
    embedder = make_embedder(args.embedder)
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    vault = Vault.open(
        folder, settings=settings, plugins=build_plugin_manager(load_entry_points=False), embedder=embedder
    )
    try:
        t0 = time.perf_counter()
        loaded = vault.vectors.load_mirror()
        mirror_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        # the vault's own loader may have fitted a shelf already (fits run one at a time): report every fit in place
        vault.vectors.mirror.maintain()
        fitted = [
            dict(
                zip(
                    ("vectors", "dims", "pool", "recall", "fit_s"),
                    (st.vectors, st.dims, st.pool, st.recall, st.fit_s),
                    strict=True,
                )
            )
            for st in vault.vectors.mirror.reduced_stats().values()
        ]
        fit_s = time.perf_counter() - t0

        rng = random.Random(5)
        names = [r[0] for r in vault.store.query("SELECT name FROM subjects LIMIT 500")]
        queries = [
            rng.choice(QUESTIONS).format(name=rng.choice(names), place=rng.choice(PLACES), thing=rng.choice(THINGS))
            for _ in range(args.queries)
        ]
        for q in queries[:10]:  # warm caches (page cache, predicate index)
            vault.recall(RecallRequest(conversation_id="bench", query=q))
        latencies, channel_ms = [], {}
        for q in queries:
            t1 = time.perf_counter()
            result = vault.recall(RecallRequest(conversation_id="bench", query=q))
            latencies.append((time.perf_counter() - t1) * 1000)
            for name, report in result.routing.channels.items():
                channel_ms.setdefault(name, []).append(report.ms)
        scan = _numpy_scan(vault, embedder, queries[:100])
        vector_recall = _vector_recall(vault, embedder, queries[:100])

        vec0 = _vec0_scan(vault, embedder, queries[:20])
        payload = {
            "machine": machine(),
            "embedder": embedder.model_id,
            "vectors": loaded,
            "mirror_load_s": round(mirror_s, 2),
            "first_pass": fitted,
            "first_pass_fit_s": round(fit_s, 2),
            "vector_recall_at_30_vs_exact": vector_recall,
            "recall_ms": {
                "p50": round(percentile(latencies, 50), 2),
                "p95": round(percentile(latencies, 95), 2),
                "max": round(max(latencies), 2),
            },
            "channels_ms_p95": {k: round(percentile(v, 95), 2) for k, v in channel_ms.items()},
            "numpy_scan_ms": scan,
            "vec0_scan_ms": vec0,
            "facts": args.facts,
            "events": args.events,
        }
        print(json.dumps(payload, indent=2))
        write_json(args.json, payload)
    finally:
        vault.close()


def _numpy_scan(vault: Vault, embedder: object, queries: list[str]) -> dict[str, float]:
    """Brute force over every stored vector (one matrix, query embedding excluded), top 30."""
    rows = vault.store.query(f"SELECT embedding FROM {vault.vectors.table}")
    matrix = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    qv = embedder.embed(queries)  # type: ignore[attr-defined]
    times = []
    for q in qv:
        t0 = time.perf_counter()
        sims = matrix @ q
        np.argpartition(-sims, 30)[:30]
        times.append((time.perf_counter() - t0) * 1000)
    return {"p50": round(percentile(times, 50), 2), "p95": round(percentile(times, 95), 2)}


def _vector_recall(vault: Vault, embedder: object, queries: list[str]) -> float:
    """recall@30 of the mirror's search (with its reduced first pass) against an exact scan, on these queries.

    A returned vector as similar as the exact 30th best counts as a hit (ties between duplicates are equal).
    """
    rows = vault.store.query(f"SELECT embedding, kind FROM {vault.vectors.table} WHERE kind IN ('fact', 'event')")
    matrix = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    hits = total = 0
    for q in embedder.embed(queries):  # type: ignore[attr-defined]
        threshold = float(np.sort(matrix @ q)[::-1][29]) - 1e-6
        found = vault.vectors.mirror.search(q, 30, kinds=["fact", "event"], user_id="default")
        hits += sum(1 for _i, _k, sim in found if sim >= threshold)
        total += 30
    return round(hits / total, 4)


def _vec0_scan(vault: Vault, embedder: object, queries: list[str]) -> dict[str, float]:
    """sqlite-vec's own KNN over the same vectors (what the mirror replaces)."""
    qv = embedder.embed(queries)  # type: ignore[attr-defined]
    times = []
    for q in qv:
        t0 = time.perf_counter()
        vault.store.query(
            f"SELECT rowid, distance FROM {vault.vectors.table} WHERE embedding MATCH ? AND k = 30",
            (np.ascontiguousarray(q, dtype=np.float32).tobytes(),),
        )
        times.append((time.perf_counter() - t0) * 1000)
    return {"p50": round(percentile(times, 50), 2), "p95": round(percentile(times, 95), 2)}


_ = FIRST  # the name pool is shared with the generator

if __name__ == "__main__":
    main()
