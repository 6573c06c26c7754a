"""Recall channels (DESIGN §5 step 2): each finds candidates its own way and returns them ranked.

A channel returns ``(kind, id)`` pairs best first; fusion only uses ranks, so channels need not agree on score
scales.  Every channel filters by user (deletion and retrieval never cross users); episodes are scoped to the
asking conversation.  Quarantined facts never leave a channel.

When the model rewrote the query, the text channels (vector, keyword, keyword_facts) search the question and each
rewrite and merge the rankings by reciprocal rank, the question's own ranking first on ties: a rewrite adds what the
question's words miss without pushing aside what they found.

Tiers: similarity search covers hot and warm facts, never cold ones.  Cold is the archive (expired ephemeral facts,
low-utility ones); a vague likeness should not bring it back, while the precise channels still reach it — a named
slot (predicate), a rare word (keyword) or the time it held (temporal).
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.recall.analyze import QueryAnalysis
from engine.recall.porter import stem
from engine.store import Reader, Store
from engine.vectors.base import VectorIndex

Key = tuple[str, int]
#: BM25 column weights of ``events_fts`` (content, author).  The author column is left out: speakers are handled by
#: the subject boost, and a speaker's name would otherwise match half of a two-person conversation.
EVENT_BM25 = "bm25(events_fts, 1.0, 0.0)"
LIVE_FACT = "f.status IN ('active', 'contested') AND f.standing != 'quarantine'"


@dataclass(frozen=True, slots=True)
class ChannelInput:
    """What every channel may look at."""

    analysis: QueryAnalysis
    user_id: str
    project_id: str | None
    conversation_id: str
    query_vector: npt.NDArray[np.float32] | None
    depth: int
    #: Vectors of the model's rewrites of the query (``analysis.used_queries[1:]``).
    rewrite_vectors: tuple[npt.NDArray[np.float32], ...] = ()


def _project(alias: str, project_id: str | None) -> tuple[str, tuple[Any, ...]]:
    if project_id is None:
        return "", ()
    return f" AND ({alias}.project_id = ? OR {alias}.project_id IS NULL)", (project_id,)


def predicate_channel(store: Store, ci: ChannelInput) -> list[Key]:
    """Facts of the targeted predicates (and named subjects): slot truths first, then by importance."""
    a = ci.analysis
    if not a.predicates:
        return []
    marks = ",".join("?" * len(a.predicates))
    index = "facts_slot" if a.subject_ids else "facts_predicate"
    sql = (
        f"SELECT f.id FROM facts f INDEXED BY {index} WHERE f.user_id = ? AND {LIVE_FACT} AND f.predicate IN ({marks})"
    )
    params: list[Any] = [ci.user_id, *a.predicates]
    if a.subject_ids:
        sql += f" AND f.subject_id IN ({','.join('?' * len(a.subject_ids))})"
        params += list(a.subject_ids)
    extra, extra_params = _project("f", ci.project_id)
    sql += extra + (
        " ORDER BY (f.source_role IN ('user', 'manual')) DESC, "
        "CASE f.standing WHEN 'fact' THEN 0 WHEN 'working' THEN 1 WHEN 'challenged' THEN 2 ELSE 3 END, "
        "f.importance DESC, f.recorded_at DESC LIMIT ?"
    )
    rows = store.query(sql, (*params, *extra_params, ci.depth))
    return [("fact", int(r[0])) for r in rows]


#: Reciprocal-rank constant for merging one channel's rankings of the question and of its rewrites.
MERGE_K = 10.0


def merge_rankings(rankings: Sequence[Sequence[Key]], depth: int) -> list[Key]:
    """One ranking from several of the same channel (the question's first): reciprocal-rank sums, ties to the
    earlier ranking, so an item every text ranks high leads and a single list's tail stays at the tail."""
    rankings = [r for r in rankings if r]
    if len(rankings) == 1:
        return list(rankings[0][:depth])
    scores: dict[Key, float] = {}
    first_seen: dict[Key, tuple[int, int]] = {}
    for which, ranking in enumerate(rankings):
        for rank, key in enumerate(ranking):
            scores[key] = scores.get(key, 0.0) + 1.0 / (MERGE_K + rank + 1)
            first_seen.setdefault(key, (which, rank))
    return sorted(scores, key=lambda key: (-scores[key], first_seen[key]))[:depth]


def vector_search(
    store: Store, vectors: VectorIndex, ci: ChannelInput, vector: npt.NDArray[np.float32], kinds: Sequence[str]
) -> list[Key]:
    """Nearest neighbours of one query vector among facts, events and this conversation's episodes."""
    hits = vectors.search(vector, ci.depth * 2, kinds=kinds, user_id=ci.user_id)
    keys = [(h.kind, h.object_id) for h in hits if h.similarity > 0.05]
    return _scope(store, ci, keys)[: ci.depth]


def vector_channel(store: Store, vectors: VectorIndex, ci: ChannelInput, kinds: Sequence[str]) -> list[Key]:
    """Nearest neighbours of the query, and of each rewrite of it, merged."""
    if ci.query_vector is None or not ci.analysis.query:
        return []
    rankings = [vector_search(store, vectors, ci, v, kinds) for v in (ci.query_vector, *ci.rewrite_vectors)]
    return merge_rankings(rankings, ci.depth)


#: Keyword search scores every document containing any query term; past this many postings the most common terms
#: are dropped (rarest first are kept), which bounds BM25's cost on large vaults and leaves small ones untouched.
MAX_POSTINGS = 2_500
_TOKEN = re.compile(r"\w+", re.UNICODE)


def search_terms(store: Store, vocab: str, keywords: Sequence[str]) -> list[str]:
    """The query tokens worth a full-text search, rarest first, within the postings budget."""
    tokens = list(dict.fromkeys(fold(t) for k in keywords for t in _TOKEN.findall(k)))
    tokens = [t for t in tokens if t and (not t.isdigit() or len(t) >= 4)][:24]  # years yes, '3' no
    if not tokens:
        return []
    stems = {t: stem(t) for t in tokens}
    df = frequencies(store).of(store, vocab, set(stems.values()))
    present = [t for t in tokens if df.get(stems[t], 0) > 0]
    present.sort(key=lambda t: df[stems[t]])
    chosen: list[str] = []
    budget = MAX_POSTINGS
    for token in present:
        cost = df[stems[token]]
        if chosen and cost > budget:
            break
        if not chosen and cost > MAX_POSTINGS * 3:
            break  # even the rarest word is everywhere: keyword search cannot discriminate
        chosen.append(token)
        budget -= cost
    return chosen


class _DocFrequencies:
    """How many documents of a full-text index hold each term, remembered for a while.

    ``fts5vocab`` counts a term's documents by reading its whole posting list: a common word costs a few hundred
    microseconds, three indexes per recall.  The counts only decide which words are worth searching (rarest first,
    within a budget), so a count up to :data:`TTL_S` old does as well.  A term found in no document is never
    remembered: a word that has just arrived in a turn is searchable at once.
    """

    TTL_S = 60.0
    MAX_TERMS = 50_000

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def of(self, store: Reader, vocab: str, terms: set[str]) -> dict[str, int]:
        now = time.monotonic()
        known: dict[str, int] = {}
        with self._lock:
            for term in terms:
                hit = self._seen.get((vocab, term))
                if hit is not None and now - hit[0] < self.TTL_S:
                    known[term] = hit[1]
        missing = sorted(terms - known.keys())
        if missing:
            marks = ",".join("?" * len(missing))
            found = {
                str(r[0]): int(r[1])
                for r in store.query(f"SELECT term, doc FROM {vocab} WHERE term IN ({marks})", tuple(missing))
            }
            with self._lock:
                if len(self._seen) > self.MAX_TERMS:
                    self._seen.clear()
                for term, count in found.items():
                    self._seen[(vocab, term)] = (now, count)
            known.update(found)  # fts5vocab lists only terms that occur: every count here is positive
        return known


_FREQUENCIES: weakref.WeakKeyDictionary[Any, _DocFrequencies] = weakref.WeakKeyDictionary()
_FREQUENCIES_LOCK = threading.Lock()


def frequencies(store: Reader) -> _DocFrequencies:
    """The remembered counts of this store's indexes (each vault has its own)."""
    with _FREQUENCIES_LOCK:
        table = _FREQUENCIES.get(store)
        if table is None:
            table = _FREQUENCIES[store] = _DocFrequencies()
        return table


def fold(token: str) -> str:
    """Lower case without diacritics, as FTS5's ``unicode61 remove_diacritics 2`` indexes words."""
    decomposed = unicodedata.normalize("NFKD", token.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("đ", "d")


def _match(tokens: Sequence[str]) -> str:
    return " OR ".join(f'"{t}"' for t in tokens)


def _keyword_sets(ci: ChannelInput) -> list[tuple[str, ...]]:
    """The question's keywords, then each rewrite's."""
    return [k for k in (ci.analysis.keywords, *ci.analysis.rewrite_keywords) if k]


def keyword_channel(store: Store, ci: ChannelInput) -> list[Key]:
    """BM25 over turns and this conversation's episodes, for names and rare words (question and rewrites)."""
    return merge_rankings([_keyword_search(store, ci, words) for words in _keyword_sets(ci)], ci.depth)


def _keyword_search(store: Store, ci: ChannelInput, keywords: Sequence[str]) -> list[Key]:
    scored: list[tuple[float, Key]] = []
    terms = search_terms(store, "events_fts_vocab", keywords)
    if terms:
        project, pparams = _project("e", ci.project_id)
        # FTS ranks on its own first (top-k inside FTS5), then the rows are filtered: joining first would make
        # SQLite score, join and sort every match.
        for score, event_id in store.query(
            f"SELECT m.score, e.id FROM (SELECT rowid AS id, {EVENT_BM25} AS score FROM events_fts "
            f"WHERE events_fts MATCH ? ORDER BY score LIMIT ?) m JOIN events e ON e.id = m.id "
            f"WHERE e.user_id = ? AND e.status != 'blocked' AND e.role != 'system'{project} ORDER BY m.score LIMIT ?",
            (_match(terms), ci.depth * 4, ci.user_id, *pparams, ci.depth),
        ):
            scored.append((float(score), ("event", int(event_id))))
    words = [k for k in keywords if any(c.isalnum() for c in k)][:16]
    if words:
        match = " OR ".join('"' + k.replace('"', "") + '"' for k in words)
        for score, episode_id in store.query(
            "SELECT bm25(episodes_fts), ep.id FROM episodes_fts JOIN episodes ep ON ep.id = episodes_fts.rowid "
            "WHERE episodes_fts MATCH ? AND ep.user_id = ? AND ep.conversation_id = ? ORDER BY bm25(episodes_fts) "
            "LIMIT 10",
            (match, ci.user_id, ci.conversation_id),
        ):
            scored.append((float(score), ("episode", int(episode_id))))
    scored.sort(key=lambda s: s[0])  # bm25(): lower is better
    return [key for _score, key in scored[: ci.depth]]


def fact_keyword_channel(store: Store, ci: ChannelInput) -> list[Key]:
    """BM25 over fact statements (subject, predicate label, value): a ranking of its own, fused by rank, because
    BM25 scores of two different corpora are not comparable.  The question and each rewrite are searched."""
    return merge_rankings([_fact_keyword_search(store, ci, words) for words in _keyword_sets(ci)], ci.depth)


def _fact_keyword_search(store: Store, ci: ChannelInput, keywords: Sequence[str]) -> list[Key]:
    terms = search_terms(store, "facts_fts_vocab", keywords)
    if not terms:
        return []
    project, pparams = _project("f", ci.project_id)
    rows = store.query(
        "SELECT f.id FROM (SELECT rowid AS id, bm25(facts_fts) AS score FROM facts_fts "
        "WHERE facts_fts MATCH ? ORDER BY score LIMIT ?) m JOIN facts f ON f.id = m.id "
        f"WHERE f.user_id = ? AND {LIVE_FACT}{project} ORDER BY m.score LIMIT ?",
        (_match(terms), ci.depth * 4, ci.user_id, *pparams, ci.depth),
    )
    return [("fact", int(r[0])) for r in rows]


def temporal_channel(store: Store, vectors: VectorIndex, ci: ChannelInput) -> list[Key]:
    """Turns and facts inside the query's time window, most similar to the query first."""
    window = ci.analysis.temporal
    if window is None:
        return []
    start, end = window.start.timestamp(), window.end.timestamp()
    events = [
        int(r[0])
        for r in store.query(
            "SELECT id FROM events WHERE user_id = ? AND occurred_at >= ? AND occurred_at < ? AND status != 'blocked' "
            "AND role != 'system' ORDER BY occurred_at DESC LIMIT 400",
            (ci.user_id, start, end),
        )
    ]
    facts = [
        int(r[0])
        for r in store.query(
            f"SELECT f.id FROM facts f WHERE f.user_id = ? AND {LIVE_FACT} AND f.valid_from >= ? AND f.valid_from < ? "
            "ORDER BY f.valid_from DESC LIMIT 400",
            (ci.user_id, start, end),
        )
    ]
    keys: list[Key] = [("fact", i) for i in facts] + [("event", i) for i in events]
    if ci.query_vector is not None and keys:
        sims = vectors.similarities(ci.query_vector, [i for _k, i in keys])
        keys.sort(key=lambda key: -sims.get(key[1], -1.0))
    return keys[: ci.depth]


def _scope(store: Store, ci: ChannelInput, keys: list[Key]) -> list[Key]:
    """Drop what this request may not see (other conversations' episodes, quarantined or dead facts) and what
    similarity may not bring back (cold facts, see the module notes)."""
    episodes = [i for k, i in keys if k == "episode"]
    facts = [i for k, i in keys if k == "fact"]
    allowed_episodes: set[int] = set()
    if episodes:
        allowed_episodes = {
            int(r[0])
            for r in store.query(
                f"SELECT id FROM episodes WHERE conversation_id = ? AND id IN ({','.join('?' * len(episodes))})",
                (ci.conversation_id, *episodes),
            )
        }
    live_facts: set[int] = set()
    if facts:
        live_facts = {
            int(r[0])
            for r in store.query(
                f"SELECT f.id FROM facts f WHERE {LIVE_FACT} AND f.tier != 'cold' "
                f"AND f.id IN ({','.join('?' * len(facts))})",
                tuple(facts),
            )
        }
    out = []
    for kind, object_id in keys:
        if kind == "episode" and object_id not in allowed_episodes:
            continue
        if kind == "fact" and object_id not in live_facts:
            continue
        out.append((kind, object_id))
    return out


#: What advice draws on: what the person likes, wants and does (an indirect question's expansion).
ADVICE_KINDS = ("preference", "behavioral")


def profile_channel(store: Store, ci: ChannelInput) -> list[Key]:
    """The named subjects' standing profile.

    Broad questions ("what do you know about me/X"): the subject's live facts by importance and recency.
    Indirect questions ("what should I get Ana for her birthday?"): the query expanded to the subjects'
    preferences and habits, which the question seldom names but the advice depends on.  An indirect question that
    names nobody has no profile to expand to.
    """
    a = ci.analysis
    if a.mode == "indirect" and not a.subject_ids:
        return []
    if a.mode not in ("broad", "indirect"):
        return []
    params: list[Any] = [ci.user_id]
    # with subjects named, walk their slots (facts_slot); otherwise the importance index (facts_rank)
    index = "facts_slot" if a.subject_ids else "facts_rank"
    sql = (
        f"SELECT f.id FROM facts f INDEXED BY {index} WHERE f.user_id = ? AND {LIVE_FACT} AND f.standing != 'candidate'"
    )
    if a.subject_ids:
        sql += f" AND f.subject_id IN ({','.join('?' * len(a.subject_ids))})"
        params += list(a.subject_ids)
    if a.mode == "indirect":
        sql += f" AND f.kind IN ({','.join('?' * len(ADVICE_KINDS))})"
        params += list(ADVICE_KINDS)
    extra, extra_params = _project("f", ci.project_id)
    rows = store.query(
        sql + extra + " ORDER BY f.importance DESC, f.updated_at DESC LIMIT ?", (*params, *extra_params, ci.depth)
    )
    return [("fact", int(r[0])) for r in rows]
