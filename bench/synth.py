"""A synthetic vault for speed benchmarks: N facts and N events about a few thousand people, built in bulk.

Rows go in through the store's writer (the real schema, triggers, FTS and vec0 tables) but skip the enrichment
pipeline, so 100k + 100k rows take minutes, not hours.  Texts come from templates with random names, places and
objects; vectors come from the chosen embedder (the ONNX build embeds 200k texts: ~15 minutes on two cores, so
benchmarks cache the vault).  Deterministic for a seed.

Usage: ``python -m bench.synth --out DIR --facts 100000 --events 100000 [--vectors hashing|onnx]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.plugins import build_plugin_manager
from bench.common import make_embedder
from engine.ai.embedders import HashingEmbedder
from engine.config import Settings
from engine.store import Tx
from engine.vault import Vault
from engine.vectors import VectorItem

FIRST = (
    "Ana Ben Chloe Dev Elena Farid Gia Hugo Ines Jon Kira Liam Mai Noor Omar Pia Quang Rosa Sven Tara Umar "
    "Vera Wen Xia Yuki Zane Linh Minh Hoa Bao"
).split()
LAST = "Nguyen Smith Garcia Kim Tran Lopez Silva Novak Costa Ito Berg Haddad Rossi Dubois Kowal".split()
PLACES = (
    "Hanoi Paris Lisbon Oslo Berlin Lagos Lima Osaka Denver Austin Madrid Seoul Nairobi Porto Quebec "
    "Dublin Krakow Hue Busan Perth"
).split()
THINGS = (
    "pottery painting jazz chess surfing climbing baking tennis poetry gardening photography kayaking "
    "coding sketching running yoga cooking hiking singing fishing"
).split()
FOODS = "pho ramen tacos curry pizza sushi falafel paella dumplings risotto".split()
PETS = "dog cat parrot rabbit turtle hamster".split()
JOBS = "nurse teacher engineer designer chef pilot lawyer farmer writer architect".split()

FACT_TEMPLATES = (
    ("lives_in", "lives in", PLACES),
    ("likes", "likes", THINGS),
    ("works_as", "works as", JOBS),
    ("has_pet", "has pet", PETS),
    ("favorite_food", "favorite food is", FOODS),
    ("visited", "visited", PLACES),
    ("has_hobby", "has hobby", THINGS),
)
TURN_TEMPLATES = (
    "I went to {place} last week and loved the food there.",
    "My friend {name} just started {thing} and it is going great.",
    "We adopted a {pet} yesterday, the kids are thrilled!",
    "Thinking about moving to {place} next year for work.",
    "I have been practising {thing} every morning before work.",
    "Dinner tonight is {food}, my absolute favourite.",
    "{name} told me the {thing} class was cancelled again.",
    "Work as a {job} is exhausting this month but rewarding.",
)


def people(rng: random.Random, count: int) -> list[str]:
    """Distinct full names."""
    names: set[str] = set()
    while len(names) < count:
        names.add(f"{rng.choice(FIRST)} {rng.choice(LAST)}{rng.randint(1, 999)}")
    return sorted(names)


def turns(rng: random.Random, names: list[str], count: int) -> Iterator[tuple[str, str, str]]:
    """(conversation id, author, text) for ``count`` turns in conversations of 50 turns."""
    for i in range(count):
        conversation = f"synth:{i // 50}"
        author = names[(i // 50 * 2 + i % 2) % len(names)]
        text = rng.choice(TURN_TEMPLATES).format(
            place=rng.choice(PLACES),
            name=rng.choice(names),
            thing=rng.choice(THINGS),
            pet=rng.choice(PETS),
            food=rng.choice(FOODS),
            job=rng.choice(JOBS),
        )
        yield conversation, author, text


def build(out: Path, facts: int, events: int, vectors: str, seed: int = 11) -> dict[str, Any]:
    """Create the vault in ``out`` (must not exist) and return what was built."""
    rng = random.Random(seed)
    embedder: Any = HashingEmbedder(384) if vectors == "hashing" else make_embedder("onnx")
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    vault = Vault.open(
        out,
        settings=settings,
        plugins=build_plugin_manager(load_entry_points=False),
        embedder=embedder,
        start_workers=False,
    )
    t0 = time.perf_counter()
    names = people(rng, 2000)
    subject_ids: list[int] = vault.store.write(lambda tx: _subjects(tx, names))
    base_time = 1_600_000_000.0
    event_ids: list[int] = []
    batch = 2000
    all_turns = list(turns(rng, names, events))
    for start in range(0, events, batch):
        chunk = all_turns[start : start + batch]
        vecs = embedder.embed([t for _c, _a, t in chunk])
        event_ids += vault.store.write(lambda tx, c=chunk, v=vecs, s=start: _events(tx, vault, c, v, base_time + s))
    for start in range(0, facts, batch):
        rows = []
        for i in range(start, min(facts, start + batch)):
            who = rng.randrange(len(names))
            predicate, label, values = FACT_TEMPLATES[rng.randrange(len(FACT_TEMPLATES))]
            value = rng.choice(values)
            rows.append(
                (
                    subject_ids[who],
                    names[who],
                    predicate,
                    value,
                    f"{names[who]} {label} {value}",
                    event_ids[i % len(event_ids)] if event_ids else None,
                )
            )
        vecs = embedder.embed([r[4] for r in rows])
        vault.store.write(lambda tx, r=rows, v=vecs, s=start: _facts(tx, vault, r, v, base_time + s))
    info = {
        "facts": facts,
        "events": events,
        "subjects": len(names),
        "vectors": vectors,
        "model_id": embedder.model_id,
        "build_s": round(time.perf_counter() - t0, 1),
    }
    (out / "synth.json").write_text(json.dumps(info))
    vault.close()
    return info


def _subjects(tx: Tx, names: list[str]) -> list[int]:
    ids = tx.new_ids("subject", len(names))
    tx.executemany(
        "INSERT INTO subjects(id, user_id, name, kind, created_at, updated_at) "
        "VALUES (?, 'default', ?, 'person', 0, 0)",
        [(i, n) for i, n in zip(ids, names, strict=True)],
    )
    return ids


def _events(tx: Tx, vault: Vault, chunk: list[tuple[str, str, str]], vecs: Any, at: float) -> list[int]:
    ids = tx.new_ids("event", len(chunk))
    tx.executemany(
        "INSERT INTO events(id, user_id, conversation_id, type, role, author, content, occurred_at, ingested_at, "
        "content_hash, source, status) VALUES (?, 'default', ?, 'message', 'user', ?, ?, ?, ?, ?, 'synth', "
        "'enriched')",
        [
            (i, c, a, t, at + n * 60, at + n * 60, hashlib.sha256(f"{i}{t}".encode()).hexdigest())
            for n, (i, (c, a, t)) in enumerate(zip(ids, chunk, strict=True))
        ],
    )
    vault.vectors.add(tx, [VectorItem(i, "event", "default", vecs[n], "synth") for n, i in enumerate(ids)])
    return ids


def _facts(tx: Tx, vault: Vault, rows: list[tuple[Any, ...]], vecs: Any, at: float) -> None:
    ids = tx.new_ids("fact", len(rows))
    tiers = ("warm", "warm", "warm", "hot", "cold")
    tx.executemany(
        "INSERT INTO facts(id, user_id, subject_id, predicate, object_text, object_norm, statement, source_text, "
        "event_id, conversation_id, source_role, confidence, importance, tier, standing, kind, decay, valid_from, "
        "recorded_at, updated_at, status, extractor) VALUES (?, 'default', ?, ?, ?, ?, ?, ?, ?, NULL, 'user', 0.9, "
        "0.6, ?, 'fact', 'preference', 'stable', ?, ?, ?, 'active', 'synth')",
        [
            (i, r[0], r[2], r[3], r[3].lower(), r[4], r[4], r[5], tiers[i % 5] if i % 97 else "hot", at, at, at)
            for i, r in zip(ids, rows, strict=True)
        ],
    )
    tx.executemany(
        "INSERT INTO fact_subjects(fact_id, subject_id) VALUES (?, ?)",
        [(i, r[0]) for i, r in zip(ids, rows, strict=True)],
    )
    vault.vectors.add(tx, [VectorItem(i, "fact", "default", vecs[n], "synth") for n, i in enumerate(ids)])


def main() -> None:
    """Build a synthetic vault."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--vectors", choices=["hashing", "onnx"], default="hashing")
    args = parser.parse_args()
    if args.out.exists():
        raise SystemExit(f"{args.out} exists; choose a new folder")
    print(json.dumps(build(args.out, args.facts, args.events, args.vectors)))


if __name__ == "__main__":
    main()
