"""The documents channel of recall and its strategies (DESIGN §5 "Document strategies").

* LOCAL (default): the best spans across the user's documents (of the project, when one is given), by vector
  similarity and BM25 fused.
* SECTION (the query names a section: "the Installation section of the README"): that section's distillation and
  its spans.
* DOCUMENT (``document_id``): the document's distillation, every section distillation, then its best spans;
  ``degraded`` while the distillations are still being made.  The distillations are the document's outline, not
  candidates: they are *pinned* — returned whole, in document order, outside fusion and the ``limit`` (only the
  token budget of the text trims them, and says so) — while the spans compete with the memory channels.
* COLLECTION (``collection_id``): each document's distillation and relevance-weighted spans across the collection.

Distillations come back as ``document`` and ``section`` blocks, spans as ``span`` blocks, each dated by its
document's current version (``updated_at``) so the text can cite when it was written down.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import NotFound
from engine.recall import span_keywords
from engine.recall.channels import ChannelInput, Key, _project
from engine.recall.span_keywords import MAX_SCOPE_DOCUMENTS, SpanScope
from engine.recall.types import Block, RecallRequest
from engine.store import Store
from engine.temporal import from_epoch
from engine.vectors.base import VectorIndex

RRF_K = 60.0


@dataclass(frozen=True, slots=True)
class DocumentRoute:
    """What a document strategy found: ranked candidates for fusion, and distillations pinned whole."""

    keys: tuple[Key, ...]
    strategy: str
    degraded: bool
    pinned: tuple[Key, ...] = ()


class DocumentRouter:
    """Chooses and runs a document strategy for a recall request."""

    def __init__(self, store: Store, vectors: VectorIndex) -> None:
        self._store = store
        self._vectors = vectors

    def channel(self, ci: ChannelInput, req: RecallRequest) -> DocumentRoute:
        """Ranked document candidates, the strategy that produced them, whether it is degraded, and what it pins."""
        if req.document_id is not None:
            return self._document(ci, req.document_id)
        if req.collection_id is not None:
            keys, strategy, degraded = self._collection(ci, req.collection_id)
            return DocumentRoute(tuple(keys), strategy, degraded)
        if ci.analysis.section:
            found = self._section(ci)
            if found is not None:
                return DocumentRoute(tuple(found[0]), found[1], found[2])
        return DocumentRoute(tuple(self.local(ci)), "LOCAL", False)

    def _document(self, ci: ChannelInput, document_id: int) -> DocumentRoute:
        rows = self._store.query("SELECT status FROM documents WHERE id = ? AND user_id = ?", (document_id, ci.user_id))
        if not rows:
            raise NotFound("document", document_id)
        sections = [
            int(r[0])
            for r in self._store.query(
                "SELECT id FROM sections WHERE document_id = ? AND distillation IS NOT NULL ORDER BY ordinal",
                (document_id,),
            )
        ]
        distilled = self._store.scalar("SELECT distillation IS NOT NULL FROM documents WHERE id = ?", (document_id,))
        pinned: list[Key] = [("document", document_id)] if distilled else []
        pinned += [("section", i) for i in sections]
        spans = self.local(ci, document_ids=[document_id])
        return DocumentRoute(tuple(spans), "DOCUMENT", rows[0][0] == "processing" or not distilled, tuple(pinned))

    def _collection(self, ci: ChannelInput, collection_id: int) -> tuple[list[Key], str, bool]:
        if not self._store.query("SELECT 1 FROM collections WHERE id = ? AND user_id = ?", (collection_id, ci.user_id)):
            raise NotFound("collection", collection_id)
        documents = [
            int(r[0])
            for r in self._store.query(
                "SELECT document_id FROM collection_documents WHERE collection_id = ?", (collection_id,)
            )
        ]
        spans = self.local(ci, document_ids=documents)
        # documents whose spans rank best come first; each contributes its distillation
        order: list[int] = []
        span_docs = (
            dict(
                self._store.query(
                    f"SELECT id, document_id FROM spans WHERE id IN ({','.join('?' * len(spans))})",
                    tuple(i for _k, i in spans),
                )
            )
            if spans
            else {}
        )
        for _kind, span_id in spans:
            doc = span_docs.get(span_id)
            if doc is not None and doc not in order:
                order.append(int(doc))
        order += [d for d in documents if d not in order]
        distilled = (
            {
                int(r[0])
                for r in self._store.query(
                    f"SELECT id FROM documents WHERE id IN ({','.join('?' * len(order))}) AND distillation IS NOT NULL",
                    tuple(order),
                )
            }
            if order
            else set()
        )
        keys: list[Key] = []
        for position in range(max(len(order), len(spans))):
            if position < len(order) and order[position] in distilled:
                keys.append(("document", order[position]))
            if position < len(spans):
                keys.append(spans[position])
        pending = any(d not in distilled for d in order)
        return keys, "COLLECTION", pending

    def _section(self, ci: ChannelInput) -> tuple[list[Key], str, bool] | None:
        title = " ".join((ci.analysis.section or "").casefold().split())
        doc_hint = (ci.analysis.section_document or "").casefold()
        pattern = title.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        # the section is looked for where LOCAL would look: the user's documents of this project (or of none)
        project, pparams = _project("d", ci.project_id)
        rows = self._store.query(
            "SELECT se.id, se.title, d.name, se.distillation FROM sections se "
            "JOIN documents d ON d.id = se.document_id "
            f"WHERE d.user_id = ? AND lower(se.title) LIKE ? ESCAPE '\\'{project} "
            "ORDER BY d.updated_at DESC, se.ordinal LIMIT 200",
            (ci.user_id, f"%{pattern}%", *pparams),
        )
        # "Installation" is the section called so, before "Pre-installation checks" or "Installation on Windows"
        rows.sort(key=lambda r: _title_rank(str(r[1]), title))
        if doc_hint:
            preferred = [
                r
                for r in rows
                if doc_hint in str(r[2]).casefold() or str(r[2]).casefold().rsplit(".", 1)[0] in doc_hint
            ]
            rows = preferred or rows
        if not rows:
            return None
        section_id, _title, _doc, distillation = rows[0]
        spans = [
            ("span", int(r[0]))
            for r in self._store.query(
                "SELECT id FROM spans WHERE section_id = ? ORDER BY ordinal LIMIT ?", (section_id, ci.depth)
            )
        ]
        keys: list[Key] = [("section", int(section_id))] if distillation else []
        return keys + spans, "SECTION", distillation is None

    def local(self, ci: ChannelInput, *, document_ids: list[int] | None = None) -> list[Key]:
        """Spans by vector and keyword, fused (optionally limited to ``document_ids``)."""
        scope = None if document_ids is None else SpanScope.of_documents(self._store, ci.user_id, document_ids)
        if scope is not None and not scope.ids:
            return []
        ranked: list[list[int]] = []
        if ci.query_vector is not None:
            if scope is None:
                hits = self._vectors.search(ci.query_vector, ci.depth, kinds=["span"], user_id=ci.user_id)
                ranked.append([h.object_id for h in hits])
            else:
                sims = self._vectors.similarities(ci.query_vector, sorted(scope.ids))
                ranked.append(sorted(sims, key=lambda i: -sims[i])[: ci.depth])
        keyword = span_keywords.search(
            self._store, ci.analysis.keywords, ci.user_id, ci.depth, scope=scope, project_id=ci.project_id
        )
        if keyword:
            ranked.append(keyword)
        if scope is None:
            ranked += self._named_rankings(ci)
        elif scope.narrow:
            ranked.append(span_keywords.by_section_title(self._store, ci.analysis.keywords, scope, keyword, ci.depth))
        scores: dict[int, float] = {}
        for ranking in ranked:
            for rank, span_id in enumerate(ranking):
                scores[span_id] = scores.get(span_id, 0.0) + 1.0 / (RRF_K + rank + 1)
        if scope is None and ci.project_id is not None:
            scores = {k: v for k, v in scores.items() if k in self._project_spans(list(scores), ci)}
        return [("span", i) for i in sorted(scores, key=lambda i: -scores[i])[: ci.depth]]

    def hydrate(self, q: Any, by_kind: dict[str, list[int]]) -> dict[str, dict[int, Any]]:
        """Blocks for the distillations this router ranked (``document`` and ``section`` keys)."""
        out: dict[str, dict[int, Any]] = {"document": {}, "section": {}}
        documents = by_kind.get("document", [])
        if documents:
            for doc_id, name, distillation, status, updated in q.query(
                "SELECT id, name, distillation, status, updated_at FROM documents "
                f"WHERE id IN ({','.join('?' * len(documents))})",
                tuple(documents),
            ):
                if distillation:
                    out["document"][int(doc_id)] = Block(
                        "document",
                        int(doc_id),
                        str(distillation),
                        0.0,
                        (int(doc_id),),
                        (),
                        from_epoch(float(updated)),
                        (),
                        {"document_id": int(doc_id), "document": str(name), "status": str(status), "injected": True},
                    )
        sections = by_kind.get("section", [])
        if sections:
            for sid, title, distillation, doc_id, name, page, updated, ordinal in q.query(
                "SELECT se.id, se.title, se.distillation, d.id, d.name, se.page_start, d.updated_at, se.ordinal "
                "FROM sections se "
                f"JOIN documents d ON d.id = se.document_id WHERE se.id IN ({','.join('?' * len(sections))})",
                tuple(sections),
            ):
                if distillation:
                    out["section"][int(sid)] = Block(
                        "section",
                        int(sid),
                        str(distillation),
                        0.0,
                        (int(sid), int(doc_id)),
                        (),
                        from_epoch(float(updated)),
                        (),
                        {
                            "document_id": int(doc_id),
                            "document": str(name),
                            "section": str(title),
                            "ordinal": int(ordinal),
                            "page_start": page,
                            "injected": True,
                        },
                    )
        return out

    def _named_rankings(self, ci: ChannelInput) -> list[list[int]]:
        """When the question names documents ("3M's FY2018 capital expenditure" and ``3M_2018_10K.pdf``), their
        spans searched as a document-scoped recall would search them: one more ranking of each kind for fusion,
        so a passage of the named document outranks a like passage elsewhere."""
        project, pparams = _project("d", ci.project_id)
        rows = self._store.query(
            f"SELECT d.id, d.name FROM documents d WHERE d.user_id = ?{project}", (ci.user_id, *pparams)
        )
        named = named_documents(ci.analysis.keywords, [(int(r[0]), str(r[1])) for r in rows])
        if not named:
            return []
        scope = SpanScope.of_documents(self._store, ci.user_id, named)
        if not scope.narrow:
            return []
        keyword = span_keywords.search(self._store, ci.analysis.keywords, ci.user_id, ci.depth, scope=scope)
        rankings = [
            keyword,
            span_keywords.by_section_title(self._store, ci.analysis.keywords, scope, keyword, ci.depth),
        ]
        if ci.query_vector is not None:
            sims = self._vectors.similarities(ci.query_vector, sorted(scope.ids))
            rankings.append(sorted(sims, key=lambda i: -sims[i])[: ci.depth])
        return [r for r in rankings if r]

    def _project_spans(self, span_ids: list[int], ci: ChannelInput) -> set[int]:
        if not span_ids:
            return set()
        marks = ",".join("?" * len(span_ids))
        return {
            int(r[0])
            for r in self._store.query(
                f"SELECT sp.id FROM spans sp JOIN documents d ON d.id = sp.document_id WHERE sp.id IN ({marks}) "
                "AND (d.project_id = ? OR d.project_id IS NULL)",
                (*span_ids, ci.project_id),
            )
        }


def _title_rank(candidate: str, wanted: str) -> int:
    """0 for the title asked for, 1 for a title starting with it, 2 for one merely containing it."""
    folded = " ".join(candidate.casefold().split())
    if folded == wanted:
        return 0
    return 1 if folded.startswith(wanted) else 2


_NAME_PART = re.compile(r"[^\W_]+")
_LETTERS_OR_DIGITS = re.compile(r"[^\W\d_]+|\d+")
#: Parts of file names that name a format, not a document.
_FORMAT_WORDS = frozenset({"pdf", "md", "txt", "html", "htm", "markdown", "doc", "docx", "final", "copy", "draft"})


def name_tokens(text: str) -> set[str]:
    """The words of a name or question as names are matched: whole runs of letters and digits ("3m", "fy2018")
    and, where letters meet digits, their parts of two characters or more ("fy", "2018")."""
    out: set[str] = set()
    for run in _NAME_PART.findall(text.casefold()):
        out.add(run)
        parts = _LETTERS_OR_DIGITS.findall(run)
        if len(parts) > 1:
            out.update(p for p in parts if len(p) >= 2)
    return out - _FORMAT_WORDS


def named_documents(keywords: Sequence[str], documents: Sequence[tuple[int, str]]) -> list[int]:
    """The documents a question names: those whose name shares the most telling words with it.

    Each shared word counts by how rare it is among the names (``log(N / names holding it)``: a company's name
    beats the year every filing of that year shares, and a word in every name counts nothing); the best-scoring
    documents are named, and none when more than the scope cap tie or nothing telling is shared.
    """
    asked = name_tokens(" ".join(keywords))
    if not asked or not documents:
        return []
    tokens = {doc_id: name_tokens(name.rsplit(".", 1)[0]) & asked for doc_id, name in documents}
    scores = span_keywords.rarity_scores(tokens, len(documents))
    best = max(scores.values(), default=0.0)
    if best <= 0.0:
        return []
    named = [d for d, score in scores.items() if score >= best - 1e-9]
    return named if len(named) <= MAX_SCOPE_DOCUMENTS else []
