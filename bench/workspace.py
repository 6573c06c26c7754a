"""The subject workspace at scale: a consolidation pass over the synthetic 100k-fact vault, and bring_to_mind latency.

Builds (or reuses) the hashing vault of :mod:`bench.synth` (2,000 people, 100k facts, 100k turns), copies it, adds
observations (each about one person or a pair), then times:

* the first consolidation pass (every subject with evidence gets a single-subject understanding, every pair sharing
  at least three items a relationship one), without a model — the extractive synthesis;
* an incremental pass after new observations about 50 people (it must touch only those);
* ``bring_to_mind`` on topics naming a person and a thing, over one session with its heartbeat token (p50/p95).
* embedding every item under the perspectives (the background job's work; one vector each with hashing), then
  ``search`` on questions naming a person and a thing (p50/p95).

    python -m bench.workspace [--facts 100000] [--events 100000] [--observations 5000] [--calls 300] [--json F]
"""

from __future__ import annotations

import argparse
import random
import shutil
import time
from pathlib import Path
from typing import Any

from app.plugins import build_plugin_manager
from bench.common import ROOT, machine, percentile, write_json
from bench.synth import PLACES, THINGS, build
from engine.config import Settings
from engine.vault import Vault

ACTIVITIES = ("cook", "hike", "paint", "run a book club", "play chess", "garden", "travel", "climb", "sing", "study")


def _names(vault: Vault) -> list[str]:
    return [str(r[0]) for r in vault.store.query("SELECT name FROM subjects WHERE kind != 'owner' ORDER BY id")]


def _observe(vault: Vault, rng: random.Random, names: list[str], count: int, pairs: list[tuple[str, str]]) -> float:
    """Write ``count`` observations (a third of them about a pair); returns the seconds taken."""
    t0 = time.perf_counter()
    for i in range(count):
        if i % 3 == 0 and pairs:
            a, b = rng.choice(pairs)
            text = f"{a} and {b} {rng.choice(ACTIVITIES)} together in {rng.choice(PLACES)} (note {i})."
            vault.workspace.remember(text, [a, b], session_id="bench")
        else:
            who = rng.choice(names)
            text = f"{who} talked about {rng.choice(THINGS)} and {rng.choice(ACTIVITIES)} (note {i})."
            vault.workspace.remember(text, [who], session_id="bench")
    return time.perf_counter() - t0


def main() -> None:
    """Build or reuse the vault, add observations, consolidate twice, time bring_to_mind."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--observations", type=int, default=5_000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--cache", type=Path, default=ROOT / "bench" / "out")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    source = args.cache / f"synth-{args.facts}-{args.events}-hashing"
    if not (source / "synth.json").exists():
        print(f"building {source} …", flush=True)
        build(source, args.facts, args.events, "hashing")
    work = args.cache / f"workspace-{args.facts}-{args.events}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, work)
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    vault = Vault.open(
        work, settings=settings, plugins=build_plugin_manager(load_entry_points=False), start_workers=False
    )
    rng = random.Random(5)
    out: dict[str, Any] = {"machine": machine(), "facts": args.facts, "events": args.events}
    try:
        names = _names(vault)
        pairs = [(rng.choice(names), rng.choice(names)) for _ in range(300)]
        pairs = [(a, b) for a, b in pairs if a != b]
        seconds = _observe(vault, rng, names, args.observations, pairs)
        out["observations"] = args.observations
        out["remember_per_s"] = round(args.observations / seconds, 1)

        t0 = time.perf_counter()
        first = vault.workspace.consolidate()
        out["first_pass_s"] = round(time.perf_counter() - t0, 1)
        out["first_pass_single_subject"] = len(first.subjects_written)
        out["first_pass_relationships"] = len(first.relationships_written)
        print(
            f"first pass: {out['first_pass_s']} s, {len(first.subjects_written)} subjects, "
            f"{len(first.relationships_written)} relationships",
            flush=True,
        )

        changed = rng.sample(names, 50)
        for i, who in enumerate(changed):
            vault.workspace.remember(f"{who} started learning {rng.choice(THINGS)} (update {i}).", [who])
        t0 = time.perf_counter()
        second = vault.workspace.consolidate()
        out["incremental_pass_s"] = round(time.perf_counter() - t0, 2)
        out["incremental_pass_single_subject"] = len(second.subjects_written)
        out["incremental_pass_relationships"] = len(second.relationships_written)

        token: str | None = None
        latencies: list[float] = []
        for _ in range(args.calls):
            topic = f"What do we know about {rng.choice(names)} and {rng.choice(THINGS)}?"
            t0 = time.perf_counter()
            shown = vault.workspace.bring_to_mind(topic, session_id="bench-session", last_token=token)
            latencies.append((time.perf_counter() - t0) * 1000)
            token = shown.heartbeat_token
        out["bring_to_mind_ms"] = {
            "p50": round(percentile(latencies, 50), 1),
            "p95": round(percentile(latencies, 95), 1),
            "max": round(max(latencies), 1),
        }
        t0 = time.perf_counter()
        embedded = vault.workspace.searcher.embed("default")  # what the background job does after the writes
        out["embed_items"] = embedded
        out["embed_items_s"] = round(time.perf_counter() - t0, 1)
        latencies = []
        for _ in range(args.calls):
            question = f"How is {rng.choice(names)} getting on with {rng.choice(THINGS)}?"
            t0 = time.perf_counter()
            vault.workspace.search(question)
            latencies.append((time.perf_counter() - t0) * 1000)
        out["search_ms"] = {
            "p50": round(percentile(latencies, 50), 1),
            "p95": round(percentile(latencies, 95), 1),
            "max": round(max(latencies), 1),
        }
        stats = vault.workspace.stats()
        out["understandings"] = stats.understandings
        out["superseded"] = stats.superseded_understandings
    finally:
        vault.close()
        shutil.rmtree(work, ignore_errors=True)
    for key, value in out.items():
        print(f"{key}: {value}")
    write_json(args.json, out)


if __name__ == "__main__":
    main()
