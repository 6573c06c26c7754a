"""A fact's statement is made from its slot, never kept from an older wording.

The statement ("User lives in Lisbon (2025-10-13)") is what recall shows, what is embedded and searched, and what a
person reads in the app; the evidence quote beside it stays verbatim.  Whenever the slot changes under a stored
fact — its value gets more detail in a MERGE, two values of one message are kept together, a person corrects it, its
subject is renamed or merged into another — :meth:`Restater.restate` writes the statement again from subject name,
predicate label, value and date, and re-embeds it, in the same transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.errors import ModelUnavailable
from engine.facts.catalog import Catalog
from engine.facts.model import render_statement
from engine.plugin_api import PredicateSpec
from engine.store import Tx
from engine.vectors import VectorIndex, VectorItem
from engine.vectors.migration import queue_vectors

Embed = Callable[[list[str]], npt.NDArray[np.float32]]


def label_for(catalog: Catalog, predicate: str) -> str:
    """The words a predicate is said with ("lives in"; a custom predicate's slug in words)."""
    if predicate in catalog:
        return catalog.get(predicate).label
    return predicate.removeprefix("custom:").replace("_", " ").replace("-", " ")


def when_of(metadata: dict[str, Any]) -> datetime | None:
    """The date a statement carries: the start of the time expression the fact was dated by, if any."""
    when = metadata.get("when")
    if not isinstance(when, dict) or not isinstance(when.get("start"), str):
        return None
    try:
        return datetime.fromisoformat(when["start"])
    except ValueError:
        return None


class Restater:
    """Rewrites stored facts' statements from their slots (and their vectors with them)."""

    def __init__(self, catalog: Catalog, embed: Embed, vectors: VectorIndex) -> None:
        self._catalog = catalog
        self._embed = embed
        self._vectors = vectors

    def spec(self, predicate: str) -> PredicateSpec | None:
        """The catalog entry of ``predicate`` (None for a custom one)."""
        return self._catalog.get(predicate) if predicate in self._catalog else None

    def statement(self, subject: str, predicate: str, object_text: str, when: datetime | None = None) -> str:
        """The statement of a slot value."""
        return render_statement(subject, label_for(self._catalog, predicate), object_text, when)

    def vector_of(self, statement: str) -> npt.NDArray[np.float32] | None:
        """The vector of a statement about to be stored, or None when the embedder is down (it is queued then)."""
        try:
            vectors = self._embed([statement])
        except ModelUnavailable:
            return None
        first: npt.NDArray[np.float32] = vectors[0]
        return first

    def restate(self, tx: Tx, fact_ids: Sequence[int]) -> list[int]:
        """Write the statements of ``fact_ids`` again from their slots; returns the ids whose statement changed.

        A changed fact that has a vector gets a new one, so search finds it by its new words.
        """
        if not fact_ids:
            return []
        marks = ",".join("?" * len(fact_ids))
        rows = tx.execute(
            "SELECT f.id, s.name, f.predicate, f.object_text, f.metadata, f.statement, f.user_id, f.object_norm, "
            "(SELECT 1 FROM embeddings e WHERE e.object_id = f.id) FROM facts f "
            f"JOIN subjects s ON s.id = f.subject_id WHERE f.id IN ({marks})",
            tuple(fact_ids),
        ).fetchall()
        changed: list[tuple[int, str, str, str]] = []
        for fact_id, name, predicate, object_text, meta_json, old, user_id, norm, embedded in rows:
            meta = json.loads(meta_json or "{}")
            new = self.statement(str(name), str(predicate), str(object_text), when_of(meta))
            if new == old:
                continue
            tx.execute("UPDATE facts SET statement = ?, updated_at = ? WHERE id = ?", (new, tx.now, fact_id))
            tx.emit("memory.updated", int(fact_id), reason="restated")
            if embedded:
                changed.append((int(fact_id), new, str(user_id), str(norm)))
        if changed:
            try:
                vectors = self._embed([c[1] for c in changed])
            except ModelUnavailable:
                # the embedder is down: the new words wait in the backlog; until then the old vector stands
                queue_vectors(tx, self._vectors.space_id, [(fid, "fact", uid, norm) for fid, _s, uid, norm in changed])
            else:
                self._vectors.add(
                    tx,
                    [VectorItem(fid, "fact", uid, vectors[i], norm) for i, (fid, _s, uid, norm) in enumerate(changed)],
                )
        return [c[0] for c in changed]

    def restate_subject(self, tx: Tx, subject_id: int) -> list[int]:
        """Restate every fact filed under ``subject_id`` (after a rename or a merge into it)."""
        ids = [int(r[0]) for r in tx.execute("SELECT id FROM facts WHERE subject_id = ?", (subject_id,)).fetchall()]
        done: list[int] = []
        for start in range(0, len(ids), 500):
            done += self.restate(tx, ids[start : start + 500])
        return done
