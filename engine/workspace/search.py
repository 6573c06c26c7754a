"""The workspace's ``search``: understandings and observations on a question, by their words and by their vectors
under every perspective (:mod:`engine.workspace.perspectives`), weighted the way an assistant reads a notebook.

- **Understandings before the observations they cover.** An understanding is the synthesis; an observation that
  an active understanding already cites is found through it, so it ranks lower than one nothing covers yet.
- **Recency and utility.** Newer items count a little more (a half-life of 90 days, never below three quarters),
  and each mark of useful or questionable moves an item up or down.
- **Both channels.** The words (full-text rank, normalised to the best match) and the best similarity across the
  perspectives are blended, so an item found both ways leads and an item not embedded yet is still found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.workspace.model import Observation, SearchHit, Understanding
from engine.workspace.rows import (
    OBSERVATION_COLUMNS,
    UNDERSTANDING_COLUMNS,
    observation_from_row,
    search_words,
    understanding_from_row,
)

#: Candidates taken from each channel and kind before weighting.
CANDIDATES = 200
#: Blend of the two channels (a similarity and a normalised full-text score, both in [0, 1]).
VECTOR_WEIGHT = 0.55
WORDS_WEIGHT = 0.45
#: Kind weights: a synthesis, evidence nothing covers yet, evidence an active understanding already cites.
UNDERSTANDING_BIAS = 1.15
FRESH_BIAS = 1.0
COVERED_BIAS = 0.8
HALF_LIFE_DAYS = 90.0
RECENCY_FLOOR = 0.75

#: Candidates read and weighed (at least; five per result asked for).
HYDRATE_MIN = 50

_ACTIVE = "u.status = 'active' AND u.superseded_by IS NULL"


@dataclass(frozen=True, slots=True)
class _Found:
    words: float = 0.0
    similarity: float = 0.0
    perspective: str | None = None


def _by_words(q: Any, table: str, words: list[str], user_id: str) -> dict[int, float]:
    """Full-text matches (any word) → score in (0, 1], the best match 1."""
    if not words:
        return {}
    match = " OR ".join(f'"{w}"' for w in words[:32])
    alias = "u" if table == "understandings" else "o"
    active = f" AND {_ACTIVE}" if table == "understandings" else ""
    rows = q.execute(
        f"SELECT f.id, f.rank FROM (SELECT rowid AS id, rank FROM {table}_fts WHERE {table}_fts MATCH ? "
        f"ORDER BY rank LIMIT {CANDIDATES}) f JOIN {table} {alias} ON {alias}.id = f.id "
        f"WHERE {alias}.user_id = ?{active}",
        (match, user_id),
    ).fetchall()
    if not rows:
        return {}
    best = min(float(r[1]) for r in rows)  # bm25 ranks are negative, the best the lowest
    return {int(r[0]): (float(r[1]) / best if best < 0 else 1.0) for r in rows}


def _weight(item: Observation | Understanding, covered: bool, now: datetime) -> tuple[float, float, float]:
    """The item's kind bias, recency factor and utility factor."""
    if isinstance(item, Understanding):
        bias, when = UNDERSTANDING_BIAS, item.created_at
    else:
        bias, when = (COVERED_BIAS if covered else FRESH_BIAS), item.observed_at
    # whole hours: the same question asked twice within the hour ranks and scores the same
    age_days = max(0, int((now - when).total_seconds() // 3600)) / 24
    recency = RECENCY_FLOOR + (1 - RECENCY_FLOOR) * 0.5 ** (age_days / HALF_LIFE_DAYS)
    utility = min(1.5, max(0.5, 1 + 0.1 * item.useful_count - 0.15 * item.questionable_count))
    return bias, recency, utility


def search(
    q: Any,
    *,
    user_id: str,
    query: str,
    similar: dict[int, tuple[float, str]],
    subject_ids: Sequence[int],
    include_observations: bool,
    limit: int,
    now: datetime,
    collapsed_as: str | None,
) -> list[SearchHit]:
    """The best ``limit`` items for ``query``: ``similar`` holds the vector channel's candidates (item → best
    similarity and the perspective key it matched under; ``collapsed_as`` names what to report for the collapsed
    key), ``subject_ids`` keeps only items tagged with every one of them."""
    words = search_words(query)
    found: dict[int, _Found] = {}
    for table in ("understandings", *(("observations",) if include_observations else ())):
        for object_id, score in _by_words(q, table, words, user_id).items():
            found[object_id] = _Found(words=score)
    for object_id, (similarity, key) in similar.items():
        was = found.get(object_id, _Found())
        found[object_id] = _Found(was.words, max(0.0, similarity), collapsed_as if key == "" else key)
    if not found:
        return []
    # only the best by the channels are read and weighed: the weights reorder them, never lift the long tail
    best = sorted(found, key=lambda i: -(VECTOR_WEIGHT * found[i].similarity + WORDS_WEIGHT * found[i].words))
    ids = tuple(best[: max(HYDRATE_MIN, limit * 5)])
    marks = ",".join("?" * len(ids))
    tagged = "".join(
        f" AND EXISTS (SELECT 1 FROM {{tags}} t WHERE t.{{col}} = {{alias}}.id AND t.subject_id = {int(s)})"
        for s in subject_ids
    )
    items: dict[int, Observation | Understanding] = {}
    for row in q.execute(
        f"SELECT {UNDERSTANDING_COLUMNS} FROM understandings u WHERE u.id IN ({marks}) AND u.user_id = ? "
        f"AND {_ACTIVE}" + tagged.format(tags="understanding_subjects", col="understanding_id", alias="u"),
        (*ids, user_id),
    ).fetchall():
        items[int(row[0])] = understanding_from_row(row)
    covered: set[int] = set()
    if include_observations:
        for row in q.execute(
            f"SELECT {OBSERVATION_COLUMNS} FROM observations o WHERE o.id IN ({marks}) AND o.user_id = ?"
            + tagged.format(tags="observation_subjects", col="observation_id", alias="o"),
            (*ids, user_id),
        ).fetchall():
            items[int(row[0])] = observation_from_row(row)
        observation_ids = [i for i, item in items.items() if isinstance(item, Observation)]
        if observation_ids:
            covered = {
                int(r[0])
                for r in q.execute(
                    f"SELECT DISTINCT s.object_id FROM understanding_sources s JOIN understandings u "
                    f"ON u.id = s.understanding_id WHERE s.object_id IN ({','.join('?' * len(observation_ids))}) "
                    f"AND {_ACTIVE}",
                    tuple(observation_ids),
                ).fetchall()
            }
    hits: list[SearchHit] = []
    for object_id, item in items.items():
        got = found[object_id]
        base = VECTOR_WEIGHT * got.similarity + WORDS_WEIGHT * got.words
        if base <= 0:
            continue
        bias, recency, utility = _weight(item, object_id in covered, now)
        hits.append(
            SearchHit(
                kind="understanding" if isinstance(item, Understanding) else "observation",
                id=object_id,
                score=round(base * bias * recency * utility, 6),
                matched_perspective=got.perspective if got.similarity > 0 else None,
                covered=object_id in covered,
                understanding=item if isinstance(item, Understanding) else None,
                observation=item if isinstance(item, Observation) else None,
            )
        )
    hits.sort(key=lambda h: (-h.score, -h.id))
    return hits[:limit]
