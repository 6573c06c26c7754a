"""Keyword search over document spans, with the question's terms weighed within the scope that is searched.

A filing, a contract or a manual repeats its own vocabulary: the company's name is on every page of its 10-K, the
product's on every page of its manual.  Which of the question's words can tell one span from another therefore
depends on where the search looks:

* **over the whole vault** a word is worth searching unless it is nearly everywhere (in more than
  :data:`VAULT_COMMON_SHARE` of all spans); the content words of a question ("capital", "cash", "flow",
  "statement") are kept even when they are common, rarest first, within a postings budget that bounds BM25's work
  (:data:`VAULT_POSTINGS`; a word commoner than the whole budget is not searched over the vault at all);
* **within documents** (a document- or collection-scoped recall) a word is weighed by how many of *those*
  documents' spans hold it: the company's name, in every span of its own 10-K, is dropped there while it is the
  best word of a vault-wide search.  The search itself reads only the scope's spans: a document's spans are stored
  together, so their ids form one range and FTS5 walks just that range of each posting list.

BM25 then ranks the spans holding any kept word, as the plain page index it is measured against does
(``make bench-docs``).
"""

from __future__ import annotations

import math
import re
import threading
import time
import weakref
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from engine.recall.channels import fold, frequencies
from engine.recall.porter import stem
from engine.store import Reader

#: A word in more than this share of the vault's spans cannot tell spans apart.
VAULT_COMMON_SHARE = 0.25
#: A word in more than this share of the scope's spans (a document's own name, its running header) is not searched
#: there.
SCOPE_COMMON_SHARE = 0.5
#: Postings a vault-wide search may score: words past it (the commonest kept ones) are dropped, and a word holding
#: more spans than this alone is never searched over the vault (BM25 scores every span holding a word: 200,000 of
#: them take ~0.6 s; 12,000 about 30 ms).  Within a document the scope bounds the work instead.
VAULT_POSTINGS = 12_000
#: Words searched at most (a pasted paragraph is not a question).
MAX_TERMS = 24
_TOKEN = re.compile(r"\w+", re.UNICODE)


#: A scope of more documents than this is weighed and searched as the whole vault is, then filtered: one query per
#: document and word would cost more than it tells.
MAX_SCOPE_DOCUMENTS = 8


@dataclass(frozen=True, slots=True)
class SpanScope:
    """The spans a scoped search may return (``ids``) and, per document, the id range its spans lie in."""

    ids: frozenset[int]
    ranges: tuple[tuple[int, int], ...]
    documents: tuple[int, ...] = ()

    @classmethod
    def of_documents(cls, store: Reader, user_id: str, document_ids: Collection[int]) -> SpanScope:
        """The spans of the user's ``document_ids`` (none when the list is empty or names no document of theirs)."""
        if not document_ids:
            return cls(frozenset(), ())
        marks = ",".join("?" * len(document_ids))
        rows = store.query(
            f"SELECT sp.document_id, sp.id FROM spans sp JOIN documents d ON d.id = sp.document_id "
            f"WHERE d.user_id = ? AND sp.document_id IN ({marks})",
            (user_id, *document_ids),
        )
        by_document: dict[int, list[int]] = {}
        for document_id, span_id in rows:
            by_document.setdefault(int(document_id), []).append(int(span_id))
        ranges = tuple(sorted((min(ids), max(ids)) for ids in by_document.values()))
        return cls(frozenset(int(r[1]) for r in rows), ranges, tuple(sorted(by_document)))

    @property
    def narrow(self) -> bool:
        """Few enough documents to weigh words within them and search only their ranges."""
        return 0 < len(self.ranges) <= MAX_SCOPE_DOCUMENTS


def tokens_of(keywords: Sequence[str]) -> list[str]:
    """The searchable tokens of the question's keywords, folded as the index folds them, once each."""
    tokens = list(dict.fromkeys(fold(t) for k in keywords for t in _TOKEN.findall(k)))
    return [t for t in tokens if t and (not t.isdigit() or len(t) >= 4)][:MAX_TERMS]  # years yes, '3' no


def vault_terms(store: Reader, keywords: Sequence[str]) -> list[str]:
    """The tokens worth a vault-wide span search: not nearly everywhere, rarest first, within the budget."""
    tokens = tokens_of(keywords)
    if not tokens:
        return []
    stems = {t: stem(t) for t in tokens}
    df = frequencies(store).of(store, "spans_fts_vocab", set(stems.values()))
    if not df:
        return []
    total = _span_count(store)
    affordable = {t: df[stems[t]] for t in tokens if 0 < df.get(stems[t], 0) <= VAULT_POSTINGS}
    present = _discriminating(affordable, VAULT_COMMON_SHARE * total)
    chosen: list[str] = []
    budget = VAULT_POSTINGS
    for token in present:
        cost = df[stems[token]]
        if cost > budget:
            break
        chosen.append(token)
        budget -= cost
    return chosen


_COUNTS: weakref.WeakKeyDictionary[Any, tuple[float, int]] = weakref.WeakKeyDictionary()
_COUNTS_LOCK = threading.Lock()
#: How long a vault's span count is remembered: it only sets how common "nearly everywhere" is, and counting a
#: million spans reads the whole table (tens of milliseconds).
COUNT_TTL_S = 60.0


def _span_count(store: Reader) -> int:
    """How many spans the vault holds, remembered for :data:`COUNT_TTL_S`."""
    now = time.monotonic()
    with _COUNTS_LOCK:
        hit = _COUNTS.get(store)
    if hit is not None and now - hit[0] < COUNT_TTL_S:
        return hit[1]
    count = int(store.query("SELECT count(*) FROM spans")[0][0])
    with _COUNTS_LOCK:
        _COUNTS[store] = (now, count)
    return count


def scope_terms(store: Reader, keywords: Sequence[str], scope: SpanScope) -> list[str]:
    """The tokens worth searching within a narrow ``scope``: held by some of its spans but not by most, rarest
    first."""
    counts: dict[str, int] = {}
    for token in tokens_of(keywords):
        counts[token] = sum(
            int(
                store.query(
                    "SELECT count(*) FROM spans_fts WHERE spans_fts MATCH ? AND rowid BETWEEN ? AND ?",
                    (f'"{token}"', low, high),
                )[0][0]
            )
            for low, high in scope.ranges
        )
    return _discriminating({t: n for t, n in counts.items() if n > 0}, SCOPE_COMMON_SHARE * len(scope.ids))


def _discriminating(counts: dict[str, int], ceiling: float) -> list[str]:
    """The tokens held by at most ``ceiling`` spans, rarest first; when every token is commoner than that, the
    rarest alone (a question of common words still ranks spans by how much of it they hold)."""
    ordered = sorted(counts, key=lambda t: counts[t])
    kept = [t for t in ordered if counts[t] <= ceiling]
    return kept or ordered[:1]


def search(
    store: Reader,
    keywords: Sequence[str],
    user_id: str,
    depth: int,
    *,
    scope: SpanScope | None = None,
    project_id: str | None = None,
) -> list[int]:
    """Span ids holding any of the question's kept words, best BM25 first: the user's spans (of the project and of
    none, when a project is given), or the scope's."""
    if scope is not None and scope.narrow:
        terms = scope_terms(store, keywords, scope)
        if not terms:
            return []
        scored: list[tuple[float, int]] = []
        for low, high in scope.ranges:
            rows = store.query(
                "SELECT rowid, bm25(spans_fts) AS score FROM spans_fts WHERE spans_fts MATCH ? "
                "AND rowid BETWEEN ? AND ? ORDER BY score LIMIT ?",
                (_match(terms), low, high, depth * 2),
            )
            scored += [(float(r[1]), int(r[0])) for r in rows if int(r[0]) in scope.ids]
        return [span_id for _score, span_id in sorted(scored)[:depth]]
    terms = vault_terms(store, keywords)
    if not terms:
        return []
    project = " AND (d.project_id = ? OR d.project_id IS NULL)" if project_id is not None else ""
    # FTS5 ranks on its own first (its top k), then the rows are filtered: joining first would make SQLite score,
    # join and sort every match.  A wide scope filters a deeper top k.
    pool = depth * (16 if scope is not None else 4)
    rows = store.query(
        "SELECT m.id FROM (SELECT rowid AS id, bm25(spans_fts) AS score FROM spans_fts WHERE spans_fts MATCH ? "
        "ORDER BY score LIMIT ?) m JOIN spans sp ON sp.id = m.id JOIN documents d ON d.id = sp.document_id "
        f"WHERE d.user_id = ?{project} ORDER BY m.score",
        (_match(terms), pool, user_id, *((project_id,) if project_id is not None else ())),
    )
    found = [int(r[0]) for r in rows]
    if scope is not None:
        found = [i for i in found if i in scope.ids]
    return found[:depth]


def _match(terms: Sequence[str]) -> str:
    return " OR ".join(f'"{t}"' for t in terms)


#: Sections whose titles answer the question best that lend their spans to :func:`by_section_title`.
TITLE_SECTIONS = 3


def by_section_title(
    store: Reader, keywords: Sequence[str], scope: SpanScope, keyword_ranking: Sequence[int], depth: int
) -> list[int]:
    """The spans of the sections whose titles share the most telling words with the question, within a narrow
    scope: "… based on the balance sheet" and the section "Consolidated Balance Sheets", whose spans hold figures
    but rarely the words of the statement's name.

    Title words are weighed by how rare they are among the scope's section titles (``log(N / titles holding
    it)``); the best :data:`TITLE_SECTIONS` sections lend their spans, those the keyword search ranked first in its
    order, then the rest in document order.
    """
    asked = {stem(t) for t in tokens_of(keywords)}
    if not asked or not scope.narrow:
        return []
    sections = store.query(
        f"SELECT id, title FROM sections WHERE document_id IN ({','.join('?' * len(scope.documents))})",
        scope.documents,
    )
    words = {int(sid): {stem(fold(t)) for t in _TOKEN.findall(str(title))} & asked for sid, title in sections}
    scores = rarity_scores(words, len(sections))
    best = sorted((sid for sid, score in scores.items() if score > 0), key=lambda sid: -scores[sid])[:TITLE_SECTIONS]
    if not best:
        return []
    rows = store.query(
        f"SELECT id FROM spans WHERE section_id IN ({','.join('?' * len(best))}) ORDER BY ordinal", tuple(best)
    )
    spans = [int(r[0]) for r in rows if int(r[0]) in scope.ids]
    held_spans = set(spans)
    first = [i for i in keyword_ranking if i in held_spans]
    return (first + [i for i in spans if i not in set(first)])[:depth]


def rarity_scores(shared: dict[int, set[str]], total: int) -> dict[int, float]:
    """For each of ``total`` names or titles, the words it shares with a question, each counted by how rare it is
    among them (``log(total / holders)``: a word every one holds counts nothing).  Those sharing none are left out.
    """
    held: dict[str, int] = {}
    for words in shared.values():
        for word in words:
            held[word] = held.get(word, 0) + 1
    return {key: sum(math.log(total / held[w]) for w in words) for key, words in shared.items() if words}
