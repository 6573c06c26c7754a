"""Rule-path enrichment: throughput on the LoCoMo turns and extraction coverage through the real pipeline.

All conversations are imported into one vault with the job workers stopped, then the workers start and the clock
runs until the queue is empty: events/s is the whole enrichment path (classifier, rules, temporal resolution, map,
gate, score, match/decide, embed, store) on this machine.  Coverage: the fraction of LoCoMo's annotated
``session_N_observation`` items whose evidence turn yielded at least one fact.  A sample of stored facts is printed
to eyeball.

Usage: ``python -m bench.enrich [--data DIR] [--json FILE] [--sample 25]``
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from app.plugins import build_plugin_manager
from bench.common import DEFAULT_LOCOMO, locomo_files, machine, write_json
from engine.ai.embedders import HashingEmbedder
from engine.config import Settings
from engine.vault import Vault


def observations(data: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """(speaker, observation, evidence dia_ids) for every annotated observation."""
    out = []
    for key, value in data.items():
        if not (key.startswith("session_") and key.endswith("_observation") and isinstance(value, dict)):
            continue
        for speaker, items in value.items():
            for item in items:
                if isinstance(item, list) and len(item) >= 2:
                    evidence = item[1] if isinstance(item[1], list) else [item[1]]
                    out.append((speaker, str(item[0]), [str(e).strip() for e in evidence]))
    return out


def main() -> None:
    """Import, enrich, measure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--sample", type=int, default=25)
    args = parser.parse_args()
    files = locomo_files(args.data)
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    with tempfile.TemporaryDirectory(prefix="cairn-enrich-") as tmp:
        root = Path(tmp) / "vault"
        vault = Vault.open(
            root,
            settings=settings,
            plugins=build_plugin_manager(load_entry_points=False),
            embedder=HashingEmbedder(384),
            start_workers=False,
        )
        t0 = time.perf_counter()
        for path in files:
            vault.conversations.import_summary(path)
        import_s = time.perf_counter() - t0
        events = vault.counts().events
        vault.close()
        vault = Vault.open(
            root,
            settings=settings,
            plugins=build_plugin_manager(load_entry_points=False),
            embedder=HashingEmbedder(384),
        )
        t0 = time.perf_counter()
        assert vault.jobs.wait_idle(timeout=3600)
        enrich_s = time.perf_counter() - t0
        # a turn "yielded" a fact when a fact cites it as evidence: as the source of a new fact, or as a later
        # statement that corroborated (merged into) an existing one
        facts_by_turn: dict[tuple[str, str], int] = {}
        for conversation_id, external_id, count in vault.store.query(
            "SELECT e.conversation_id, e.external_id, COUNT(f.id) FROM events e JOIN facts f ON f.event_id = e.id "
            "OR e.id IN (SELECT value FROM json_each(f.metadata, '$.corroborated_by')) GROUP BY e.id"
        ):
            facts_by_turn[(str(conversation_id), str(external_id))] = int(count)
        covered = total = 0
        per_file = []
        for path in files:
            conversation_id = f"locomo:{path.stem}"
            data = json.loads(path.read_text(encoding="utf-8"))
            items = observations(data)
            hit = sum(1 for _s, _o, ev in items if any(facts_by_turn.get((conversation_id, e), 0) for e in ev))
            covered += hit
            total += len(items)
            per_file.append(
                {
                    "file": path.name,
                    "observations": len(items),
                    "covered": hit,
                    "coverage": round(hit / max(1, len(items)), 4),
                }
            )
        counts = vault.counts()
        rows = vault.store.query(
            "SELECT s.name, f.predicate, f.object_text, f.standing, e.content FROM facts f "
            "JOIN subjects s ON s.id = f.subject_id JOIN events e ON e.id = f.event_id"
        )
        sample = random.Random(7).sample(rows, min(args.sample, len(rows)))
        vault.close()
    payload = {
        "machine": machine(),
        "events": events,
        "import_s": round(import_s, 2),
        "enrich_s": round(enrich_s, 2),
        "events_per_s": round(events / enrich_s, 1),
        "facts": counts.facts,
        "coverage": round(covered / max(1, total), 4),
        "observations": total,
        "per_file": per_file,
    }
    print(json.dumps(payload, indent=2))
    print("\nsample facts (subject | predicate | object | standing | turn):")
    for name, predicate, obj, standing, content in sample:
        print(f"- {name} | {predicate} | {obj} | {standing} | {content[:90]}")
    write_json(args.json, payload)


if __name__ == "__main__":
    main()
