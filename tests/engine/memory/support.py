"""Helpers shared by the event-memory tests: reading every fact, row snapshots, the change feed, invariants."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine import Settings, Vault
from engine.changes import Change
from engine.facts.model import Fact, normalise_object, standing_for
from engine.facts.params import INJECTABLE

ALL_STATUSES = ("active", "contested", "superseded", "retracted", "deleted")
AUTHORITATIVE = ("user", "manual")
LIVE = ("active", "contested")
#: Tables whose rows an analysis must never touch (dry runs) and re-enrichment must leave as they are.
MEMORY_TABLES = (
    "events",
    "facts",
    "conflicts",
    "subjects",
    "fact_subjects",
    "event_subjects",
    "episodes",
    "objects",
    "jobs",
)


def offline(**changes: Any) -> Settings:
    """Rule path and hashing embedder, plus ``changes`` (dotted paths)."""
    return Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing", **changes})


@contextmanager
def open_vault(root: Path, settings: Settings | None = None, **kwargs: Any) -> Iterator[Vault]:
    """A real vault in ``root`` (closed on exit)."""
    vault = Vault.open(root, settings=settings or offline(), **kwargs)
    try:
        yield vault
    finally:
        vault.close()


def every_fact(vault: Vault, **filters: Any) -> list[Fact]:
    """Every fact of any status (newest first)."""
    return vault.facts(limit=1000, status=ALL_STATUSES, **filters)


def one(facts: Iterable[Fact], predicate: str, obj: str, *, subject: str = "user") -> Fact:
    """The single fact with this subject, predicate and value (any status); fails if there is not exactly one."""
    found = [
        f
        for f in facts
        if f.subject == subject
        and f.predicate == predicate
        and normalise_object(f.object_text) == normalise_object(obj)
    ]
    assert len(found) == 1, (subject, predicate, obj, [(f.id, f.status, f.object_text) for f in found])
    return found[0]


def counts(vault: Vault, tables: Iterable[str] = MEMORY_TABLES) -> dict[str, int]:
    """Row counts of ``tables``."""
    return {t: int(vault.store.scalar(f"SELECT COUNT(*) FROM {t}")) for t in tables}


def rows(vault: Vault, table: str) -> list[tuple[Any, ...]]:
    """Every row of ``table`` in key order, for before/after comparisons."""
    return [tuple(r) for r in vault.store.query(f"SELECT * FROM {table} ORDER BY 1, 2")]


class ChangeLog:
    """The changes published on ``vault.changes`` since it was made (or since :meth:`mark`)."""

    def __init__(self, vault: Vault) -> None:
        self._feed = vault.changes
        self._seq = vault.changes.last_seq

    def mark(self) -> None:
        self._seq = self._feed.last_seq

    def all(self) -> list[Change]:
        items, complete = self._feed.since(self._seq)
        assert complete, "the change backlog no longer reaches back to the mark"
        return items

    def of(self, change_type: str, object_id: int | None = None) -> list[Change]:
        return [c for c in self.all() if c.type == change_type and (object_id is None or c.object_id == object_id)]

    def types(self, object_id: int) -> list[str]:
        return [c.type for c in self.all() if c.object_id == object_id]


def cardinalities(vault: Vault) -> dict[str, str]:
    return {str(name): str(card) for name, card in vault.store.query("SELECT name, cardinality FROM predicates")}


def check_invariants(vault: Vault) -> None:
    """The invariants of DESIGN §3–§4 that must hold after every step, whatever the decisions were.

    (a) a single-valued slot has at most one winner: without an open conflict at most one live authoritative
        fact, and assistant/tool values beside it are non-injectable candidates (at most one); facts are
        ``contested`` exactly when an open conflict holds them;
    (c) no two live facts of a slot carry the same normalised value (MERGE leaves one row);
    (e) every fact learned from an event quotes it verbatim at its offsets;
    (f) no assistant/tool fact supersedes, or wins a conflict against, a user fact;
    (g) standing is the band of the confidence (``challenged`` while contested);
    (h) superseded, retracted and deleted facts are cold; superseded ones say when and by what.
    """
    facts = every_fact(vault)
    by_id = {f.id: f for f in facts}
    card = cardinalities(vault)
    open_conflicts = vault.conflicts(status="open", limit=1000)
    in_open_conflict = {fid for c in open_conflicts for fid in (c.fact_a.id, c.fact_b.id)}
    contents = {int(r[0]): str(r[1]) for r in vault.store.query("SELECT id, content FROM events")}

    for f in facts:
        if f.event_id is not None:  # (e)
            assert f.source_start is not None and f.source_end is not None
            assert contents[f.event_id][f.source_start : f.source_end] == f.source_text, f
        if f.status == "contested":  # (g)
            assert f.standing == "challenged" and f.id in in_open_conflict, f
        else:
            assert f.standing == standing_for(f.confidence), (f.id, f.status, f.confidence, f.standing)
            assert f.id not in in_open_conflict or f.status != "active", f
        if f.status in ("superseded", "retracted", "deleted"):  # (h)
            assert f.tier == "cold", (f.id, f.status, f.tier)
        if f.status == "superseded":
            assert f.superseded_at is not None and f.superseded_by is not None, f
            successor = by_id[f.superseded_by]
            if f.source_role in AUTHORITATIVE:  # (f)
                assert successor.source_role in AUTHORITATIVE, (f, successor)
    for c in vault.conflicts(status="resolved", limit=1000):  # (f) and conflicts only ever between user facts
        assert c.fact_a.source_role in AUTHORITATIVE and c.fact_b.source_role in AUTHORITATIVE, c

    slots: dict[tuple[str, int, str], list[Fact]] = defaultdict(list)
    for f in facts:
        if f.status in LIVE:
            slots[(f.user_id, f.subject_id, f.predicate)].append(f)
    for (_user, _subject, predicate), live in slots.items():
        values = [normalise_object(f.object_text) for f in live]  # (c)
        assert len(values) == len(set(values)), [(f.id, f.object_text, f.status) for f in live]
        if card.get(predicate, "multi") != "single":
            continue
        active = [f for f in live if f.status == "active"]  # (a)
        winners = [f for f in active if f.source_role in AUTHORITATIVE]
        beside = [f for f in active if f.source_role not in AUTHORITATIVE]
        assert len(winners) <= 1, [(f.id, f.object_text) for f in winners]
        if winners or any(f.status == "contested" for f in live):
            assert len(beside) <= 1, [(f.id, f.object_text) for f in beside]
            assert all(f.standing not in INJECTABLE for f in beside), beside
        else:
            assert len(beside) <= 1, [(f.id, f.object_text) for f in beside]


def metadata(vault: Vault, fact_id: int) -> dict[str, Any]:
    return dict(json.loads(vault.store.scalar("SELECT metadata FROM facts WHERE id = ?", (fact_id,)) or "{}"))
