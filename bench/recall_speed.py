"""Recall latency on a synthetic vault of 100k facts and 100k events, beside a brute-force numpy scan.

Builds (or reuses) the vault with :mod:`bench.synth`, waits for the in-memory vector mirror, then times
``Vault.recall`` end to end (query embedding included) over templated questions, and in the same run the cost of
the raw building blocks: a brute-force numpy scan over all stored vectors, and sqlite-vec's vec0 KNN scan.

It also checks the mirror's reduced first pass against **real questions** (the LoCoMo development questions and
the truth set's queries, read from ``../shared/bench-data``, never copied here): shuffled, the first
``--asked`` of them are given to the vault as questions it was asked (what recall does with each question it
embeds) and the rest are held out.  Each large shelf's recall@10/30/60 against its exact scan is measured on the
held-out questions twice: with the first pass fitted before any question (the cautious choice), and after the
vault has judged it on the asked ones (:meth:`engine.vectors.matrix.MatrixMirror.maintain`).

Usage: ``python -m bench.recall_speed [--facts N] [--events N] [--embedder hashing|onnx] [--queries 300]
[--asked 256]``
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from app.plugins import build_plugin_manager
from bench.common import DEFAULT_LOCOMO, ROOT, locomo_files, machine, make_embedder, percentile, write_json
from bench.synth import FIRST, PLACES, THINGS, build
from engine.api.server import set_aside_startup_heap
from engine.config import Settings
from engine.recall.types import RecallRequest
from engine.vault import Vault

DEFAULT_TRUTH = ROOT.parent / "shared" / "bench-data" / "truth-dev"
#: The k of recall's own searches: a channel asks a shelf for twice its depth (≥ 30); documents for the depth.
KS = (10, 30, 60)

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
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="LoCoMo-format files: their questions")
    parser.add_argument("--truth", type=Path, default=DEFAULT_TRUTH, help="a truth set: its checks' queries")
    parser.add_argument("--asked", type=int, default=256, help="real questions the vault is given as asked")
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
        fitted = {kind: _stats(st) for kind, st in vault.vectors.mirror.reduced_stats().items()}
        fit_s = time.perf_counter() - t0

        # the first pass against real questions: held-out recall before and after the vault was asked some
        real = _against_real_questions(vault, embedder, real_questions(args.locomo, args.truth), args.asked)

        rng = random.Random(5)
        names = [r[0] for r in vault.store.query("SELECT name FROM subjects LIMIT 500")]
        queries = [
            rng.choice(QUESTIONS).format(name=rng.choice(names), place=rng.choice(PLACES), thing=rng.choice(THINGS))
            for _ in range(args.queries)
        ]
        for q in queries[:10]:  # warm caches (page cache, predicate index)
            vault.recall(RecallRequest(conversation_id="bench", query=q))
        # the collector as `cairn serve` sets it before serving: what start-up made is never traversed again
        set_aside_startup_heap()
        latencies, channel_ms = [], {}
        for q in queries:
            t1 = time.perf_counter()
            result = vault.recall(RecallRequest(conversation_id="bench", query=q))
            latencies.append((time.perf_counter() - t1) * 1000)
            for name, report in result.routing.channels.items():
                channel_ms.setdefault(name, []).append(report.ms)
        at_end = {kind: _stats(st) for kind, st in vault.vectors.mirror.reduced_stats().items()}
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
            "real_questions": real,
            "vector_recall_at_30_vs_exact": vector_recall,
            "recall_ms": {
                "p50": round(percentile(latencies, 50), 2),
                "p95": round(percentile(latencies, 95), 2),
                "max": round(max(latencies), 2),
            },
            "first_pass_while_timed": at_end,
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


def real_questions(locomo: Path, truth: Path) -> list[str]:
    """Question texts people asked: LoCoMo's ``qa[].question`` (every category) and the truth set's check queries."""
    texts: list[str] = []
    if locomo.is_dir():
        for path in locomo_files(locomo):
            texts += [str(qa["question"]) for qa in json.loads(path.read_text(encoding="utf-8")).get("qa", [])]
    checks = truth / "checks"
    if checks.is_dir():
        for path in sorted(checks.glob("*.json")):
            texts += [str(c["query"]) for c in json.loads(path.read_text(encoding="utf-8"))["checks"] if c.get("query")]
    return list(dict.fromkeys(t.strip() for t in texts if t.strip()))


def _against_real_questions(vault: Vault, embedder: Any, real: list[str], asked: int) -> dict[str, object]:
    """Held-out recall of each shelf's first pass before and after the vault is given ``asked`` of ``real`` as
    questions it was asked (see the module docstring); skipped when there are no real questions to read."""
    if len(real) <= asked:
        return {"skipped": f"{len(real)} real questions found, more than --asked {asked} needed"}
    random.Random(3).shuffle(real)
    asked_texts, held_texts = real[:asked], real[asked:]
    t0 = time.perf_counter()
    asked_vecs, held_vecs = embedder.embed(asked_texts), embedder.embed(held_texts)
    embed_s = time.perf_counter() - t0
    shelves = _shelves(vault)
    before = _shelf_recall(vault, shelves, held_vecs)
    for v in asked_vecs:
        vault.vectors.note_question(v)
    t0 = time.perf_counter()
    vault.vectors.maintain()
    judge_s = time.perf_counter() - t0
    return {
        "asked": len(asked_texts),
        "held_out": len(held_texts),
        "embed_s": round(embed_s, 1),
        "first_pass_after_asked": {kind: _stats(st) for kind, st in vault.vectors.mirror.reduced_stats().items()},
        "judge_s": round(judge_s, 2),
        "held_out_recall_before": before,
        "held_out_recall_after": _shelf_recall(vault, shelves, held_vecs),
        "asked_recall_after": _shelf_recall(vault, shelves, asked_vecs),
    }


def _stats(st: object) -> dict[str, object]:
    """A fitted first pass's figures (dims, pool, recall@30 on data samples, recall@60 on questions)."""
    names = ("vectors", "dims", "pool", "recall", "question_recall", "questions", "fit_s")
    return {name: getattr(st, name) for name in names}


def _shelves(vault: Vault) -> dict[str, np.ndarray]:
    """The stored vectors of each kind with a first pass to judge (fact, event), as matrices."""
    out = {}
    for kind in ("fact", "event"):
        rows = vault.store.query(f"SELECT embedding FROM {vault.vectors.table} WHERE kind = ?", (kind,))
        out[kind] = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    return out


def _shelf_recall(vault: Vault, shelves: dict[str, np.ndarray], questions: np.ndarray) -> dict[str, object]:
    """Per shelf searched alone: the share of each question's exact top k (k = 10, 30, 60) the mirror returns, and
    whether a first pass answered (else the shelf was scanned exactly).

    A returned vector as similar as the exact k-th best counts as a hit (ties between duplicates are equal).  The
    mirror's answer for k = 60 holds its answers for 10 and 30: the first pass's pool is the same for every k ≤ 100.
    """
    questions = np.asarray(questions, dtype=np.float32)
    reduced = vault.vectors.mirror.reduced_stats()
    out: dict[str, object] = {}
    for kind, matrix in shelves.items():
        hits = dict.fromkeys(KS, 0)
        for start in range(0, len(questions), 64):
            chunk = questions[start : start + 64]
            exact = -np.sort(-np.partition(matrix @ chunk.T, matrix.shape[0] - max(KS), axis=0)[-max(KS) :], axis=0)
            for column, q in enumerate(chunk):
                found = vault.vectors.mirror.search(q, max(KS), kinds=[kind], user_id="default")
                sims = np.array([sim for _i, _k, sim in found], dtype=np.float32)
                for k in KS:
                    hits[k] += int((sims[:k] >= exact[k - 1, column] - 1e-6).sum())
        st = reduced.get(kind)
        out[kind] = {
            "first_pass": f"{st.dims} dims, pool {st.pool}" if st is not None else "none (exact scan)",
            **{f"recall@{k}": round(hits[k] / (k * len(questions)), 4) for k in KS},
        }
    return out


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
