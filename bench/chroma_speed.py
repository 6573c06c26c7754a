"""The Chroma vector backend on the 100k-fact synthetic vault: catching up, nearest-neighbour search, recall.

A copy of the synthetic vault of :mod:`bench.synth` (100k facts, 100k events, hashing vectors) is opened with
``vectors.backend = "chroma"`` (embedded in the copy's folder).  The clock runs while the collection catches up
with the 200k vectors of vault.db (the reconciliation a first start does), then times, over the same templated
questions as :mod:`bench.recall_speed`: the vector search alone (Chroma's HNSW, with the kind and user filters
recall uses) beside the exact numpy scan of the same vectors, its recall@30 against that scan, and ``Vault.recall``
end to end.

Usage: ``python -m bench.chroma_speed [--queries 200] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from app.plugins import build_plugin_manager
from bench.common import ROOT, machine, make_embedder, percentile, write_json
from bench.gui import cached_vault
from bench.recall_speed import QUESTIONS
from bench.synth import PLACES, THINGS
from engine.config import Settings
from engine.recall.types import RecallRequest
from engine.vault import Vault
from engine.vectors.chroma import ChromaIndex

KINDS = ("fact", "event")


def main(argv: list[str] | None = None) -> None:
    """Copy the vault, let the collection catch up, time searches and recall."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cache", type=Path, default=ROOT / "bench" / "out")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    source = cached_vault(args.cache, args.facts, args.events)
    embedder = make_embedder("hashing")
    settings = Settings().updated(
        {"llm.provider": "simple", "embedder.provider": "hashing", "vectors.backend": "chroma"}
    )
    with tempfile.TemporaryDirectory(prefix="cairn-chroma-bench-") as tmp:
        folder = Path(tmp) / "vault"
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns("*.lock", "token", "backups"))
        vault = Vault.open(
            folder,
            settings=settings,
            plugins=build_plugin_manager(load_entry_points=False),
            embedder=embedder,
            start_workers=False,
        )
        try:
            index = vault.vectors
            assert isinstance(index, ChromaIndex)
            t0 = time.perf_counter()
            index.load_mirror()  # starts the push thread and queues the first reconciliation
            index.flush(3600)
            catch_up_s = time.perf_counter() - t0
            if index.stale:
                raise SystemExit(f"the collection did not catch up: {index.backend}")
            stored = index.count()

            rng = random.Random(5)
            names = [r[0] for r in vault.store.query("SELECT name FROM subjects LIMIT 500")]
            queries = [
                rng.choice(QUESTIONS).format(name=rng.choice(names), place=rng.choice(PLACES), thing=rng.choice(THINGS))
                for _ in range(args.queries)
            ]
            vectors = embedder.embed(queries)
            matrix, ids = _all_vectors(vault, index.space.table)
            search_ms, scan_ms, overlap = [], [], 0
            for q in vectors[:10]:
                index.search(q, 30, kinds=KINDS, user_id="default")
            for q in vectors:
                t1 = time.perf_counter()
                hits = index.search(q, 30, kinds=KINDS, user_id="default")
                search_ms.append((time.perf_counter() - t1) * 1000)
                t1 = time.perf_counter()
                exact = ids[np.argpartition(-(matrix @ q), 30)[:30]]
                scan_ms.append((time.perf_counter() - t1) * 1000)
                overlap += len({h.object_id for h in hits} & set(exact.tolist()))
            recall_ms = []
            for text in queries[:10]:
                vault.recall(RecallRequest(conversation_id="bench", query=text))
            for text in queries:
                t1 = time.perf_counter()
                vault.recall(RecallRequest(conversation_id="bench", query=text))
                recall_ms.append((time.perf_counter() - t1) * 1000)
            payload = {
                "machine": machine(),
                "vectors": stored,
                "chroma_vectors": index.chroma_count(),
                "catch_up_s": round(catch_up_s, 1),
                "catch_up_vectors_per_s": round(stored / catch_up_s, 1),
                "search_ms": _summary(search_ms),
                "numpy_scan_ms": _summary(scan_ms),
                "search_recall_at_30_vs_exact": round(overlap / (30 * len(vectors)), 4),
                "recall_ms": _summary(recall_ms),
                "queries": len(queries),
            }
        finally:
            vault.close()
    print(json.dumps(payload, indent=2))
    write_json(args.json, payload)


def _all_vectors(vault: Vault, table: str) -> tuple[np.ndarray, np.ndarray]:
    """Every fact and event vector of the store, for the exact answer (the kinds recall searches)."""
    rows = vault.store.query(f"SELECT rowid, embedding FROM {table} WHERE kind IN ('fact', 'event')")
    ids = np.array([int(r[0]) for r in rows], dtype=np.int64)
    matrix = np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
    return matrix, ids


def _summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 2), "p95": round(percentile(values, 95), 2)}


if __name__ == "__main__":
    main()
