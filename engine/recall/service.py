"""Recall: validate, embed and analyse the question, then rank it here or in a helper process (DESIGN §5).

How a question is ranked — channels, fusion, weights, assembly — is :mod:`engine.recall.ranker`.  This module is
the service in front of it: the question understood as soon as it arrives (its vector, its analysis, the model's
rewrites under the query budget), the fair gate that lets a few recalls rank at a time, the choice between the
helper processes and ranking inline, and the usage counted for what was injected.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from engine.ai.embedders import Embedder
from engine.ai.llm import LLM
from engine.config import Settings
from engine.errors import ModelUnavailable, ValidationError
from engine.facts.catalog import Catalog
from engine.recall.analyze import QueryAnalyzer
from engine.recall.gate import FairGate, default_slots
from engine.recall.ranker import INLINE, Question, Ranker, _ms
from engine.recall.types import RecallRequest, RecallResult
from engine.recall.usage import UsageRecorder
from engine.store import Store
from engine.temporal import parse_datetime
from engine.vectors.base import VectorIndex

if TYPE_CHECKING:
    from engine.recall.processes import RankerProcesses


log = logging.getLogger(__name__)

#: How long the known subjects (names recognised in a question) are trusted before asking whether they changed.
SUBJECTS_RECHECK_S = 1.0


class Recall:
    """The recall service behind ``Vault.recall``."""

    def __init__(
        self,
        store: Store,
        vectors: VectorIndex,
        embedder: Embedder,
        catalog: Catalog,
        settings: Callable[[], Settings],
        llm: Callable[[], LLM | None],
        writer_submit: Callable[[Callable[[Any], Any]], Future[Any]],
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._embedder = embedder
        self._analyzer = QueryAnalyzer(catalog, embedder)
        self._settings = settings
        self._llm = llm
        self._usage = UsageRecorder(writer_submit)
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall")
        self._gate = FairGate(default_slots())
        self.ranker = Ranker(store, vectors, embedder.model_id)
        self._processes: RankerProcesses | None = None
        self._closed = False
        self._subject_cache: dict[str, tuple[float, tuple[Any, ...], dict[str, int]]] = {}

    def close(self) -> None:
        """Stop the ranking processes (if any) and the channel threads; queue the usage gathered so far."""
        self._closed = True
        self._usage.close()
        processes, self._processes = self._processes, None
        if processes is not None:
            processes.close()
        self._pool.shutdown(wait=True, cancel_futures=True)

    # -- the request -------------------------------------------------------------------------------------------
    def recall(self, request: RecallRequest) -> RecallResult:
        """Answer one recall request.

        Understanding the question (embedding it, analysing it — either may wait on a model) happens as soon as it
        arrives; the ranking after it runs a few recalls at a time, the rest in arrival order (see
        :mod:`engine.recall.gate`), so a recall waiting on a model never holds up the others.  The ranking runs in a
        helper process when the vault has them (:mod:`engine.recall.processes`), else — or when none can — here.
        """
        question = self._understand(request)
        t0 = time.perf_counter()
        with self._gate as gate:
            question.timings["queued"] = _ms(t0)  # waiting for a slot: part of "total", in no stage
            processes = self._processes
            result = processes.rank(question) if processes is not None else None
            if result is None:
                result = self.ranker.rank(question, INLINE if gate.inside > 1 else self._pool)
            else:
                result.timings_ms["total"] = _ms(question.started)  # the helper's own clock stopped before sending
        self._record_usage(result)
        return result

    @property
    def processes(self) -> RankerProcesses | None:
        """The helper processes ranking recalls, if any."""
        return self._processes

    def use_processes(self, processes: RankerProcesses | None) -> None:
        """Rank in helper processes from now on (``None``: in this process again); see :mod:`.processes`."""
        if processes is not None and self._closed:
            processes.close()  # the vault closed while they were being started
            return
        self._processes = processes
        if processes is not None:
            # one more recall than there are helpers ranks here: helpers sit idle while a question and its answer
            # cross over, and this process has spare cycles meanwhile (figures: BENCHMARKS.md, Endpoint)
            self._gate.widen(processes.size + 1)

    def _understand(self, request: RecallRequest) -> Question:
        """Validate, embed and analyse the question."""
        t_start = time.perf_counter()
        timings: dict[str, float] = {}
        settings = self._settings()
        req = _validated(request)
        limit = req.limit or settings.recall.limit
        reference = parse_datetime(req.reference_time) if req.reference_time is not None else datetime.now(UTC)

        t0 = time.perf_counter()
        query_vector = None
        unembedded = ""
        if req.query.strip():
            try:
                query_vector = self._embedder.embed([req.query])[0]
                self._vectors.note_question(query_vector)
            except ModelUnavailable as exc:
                # an outage degrades the answer, never fails it: the other channels still search
                unembedded = (
                    f"embedder unavailable ({exc.message}): searched without vectors — keyword, predicate, time "
                    "and documents' full text"
                )
        timings["embed"] = _ms(t0)
        t0 = time.perf_counter()
        known = self._known_subjects(req.user_id)
        analysis = self._analyzer.analyse(
            req.query,
            reference_time=reference,
            known_subjects=known,
            query_vector=query_vector,
            llm=self._llm(),
            llm_timeout_s=settings.llm.query_timeout_s,
            relatives=lambda predicates: self._relatives(req.user_id, known, predicates),
        )
        timings["analyse"] = _ms(t0)
        if unembedded:
            analysis = replace(analysis, notes=(*analysis.notes, unembedded))
        rewrite_vectors: tuple[Any, ...] = ()
        if len(analysis.used_queries) > 1 and query_vector is not None:
            t0 = time.perf_counter()
            try:
                rewrite_vectors = tuple(self._embedder.embed(list(analysis.used_queries[1:])))
            except ModelUnavailable:
                rewrite_vectors = ()
            timings["embed"] += _ms(t0)
        return Question(
            req,
            limit,
            req.token_budget or settings.recall.token_budget,
            reference,
            analysis,
            query_vector,
            rewrite_vectors,
            timings,
            t_start,
            settings.recall.understandings,
        )

    # -- helpers -----------------------------------------------------------------------------------------------
    def _known_subjects(self, user_id: str) -> dict[str, int]:
        """Lower-cased names and aliases → subject id, cached until the user's subjects change.

        Whether they changed is asked at most once every :data:`SUBJECTS_RECHECK_S`: the question counts the user's
        subjects (0.3 ms at 2,000 of them), which every recall paid in the process that also serves the endpoint.
        Subjects come from extraction, which runs after a turn is acknowledged anyway, so a name learnt a second
        late changes nothing a client can tell.
        """
        now = time.monotonic()
        cached = self._subject_cache.get(user_id)
        if cached is not None and now - cached[0] < SUBJECTS_RECHECK_S:
            return cached[2]
        fingerprint = tuple(
            self._store.query("SELECT COUNT(*), MAX(updated_at), MAX(id) FROM subjects WHERE user_id = ?", (user_id,))[
                0
            ]
        )
        if cached is not None and cached[1] == fingerprint:
            self._subject_cache[user_id] = (now, fingerprint, cached[2])
            return cached[2]
        known: dict[str, int] = {}
        for subject_id, name, aliases in self._store.query(
            "SELECT id, name, aliases FROM subjects WHERE user_id = ? AND merged_into IS NULL", (user_id,)
        ):
            known[str(name).casefold()] = int(subject_id)
            for alias in json.loads(aliases or "[]"):
                known.setdefault(str(alias).casefold(), int(subject_id))
        self._subject_cache[user_id] = (now, fingerprint, known)
        return known

    def _relatives(self, user_id: str, known: dict[str, int], predicates: tuple[str, ...]) -> tuple[int, ...]:
        """Subject ids of the people the user's live facts of ``predicates`` name ("has_child" → the children)."""
        user = known.get("user")
        if user is None or not predicates:
            return ()
        marks = ",".join("?" * len(predicates))
        rows = self._store.query(
            f"SELECT object_text FROM facts WHERE user_id = ? AND subject_id = ? AND predicate IN ({marks}) "
            "AND status IN ('active', 'contested') ORDER BY recorded_at DESC LIMIT 20",
            (user_id, user, *predicates),
        )
        found: list[int] = []
        for (value,) in rows:
            text = str(value).casefold()
            for name in (text, text.split()[-1] if text.split() else text):
                subject_id = known.get(name)
                if subject_id is not None and subject_id != user and subject_id not in found:
                    found.append(subject_id)
                    break
        return tuple(found)

    def _record_usage(self, result: RecallResult) -> None:
        """Count an access for each fact the query itself ranked and injected.

        Background hot facts ride along with every answer whatever was asked; counting them would keep every hot
        fact fresh forever and the decay sweep could never cool one down.  A hot fact still counts when the query
        ranked it (then it is among the ranked blocks too).
        """
        self._usage.add(b.id for b in result.blocks if b.kind == "fact" and b.meta.get("injected"))

    def flush_usage(self) -> Future[Any] | None:
        """Queue the usage gathered so far now (it is written within a second anyway); the write's future."""
        return self._usage.flush()


def _validated(request: RecallRequest) -> RecallRequest:
    if not isinstance(request.conversation_id, str) or not request.conversation_id.strip():
        raise ValidationError("conversation_id", "is required", fix="Pass the id of the chat asking.")
    if not isinstance(request.query, str):
        raise ValidationError("query", "must be text")
    if len(request.query) > 8000:
        raise ValidationError("query", "is longer than 8,000 characters")
    if request.limit is not None and not 1 <= request.limit <= 200:
        raise ValidationError("limit", "must be between 1 and 200")
    if request.token_budget is not None and not 100 <= request.token_budget <= 32000:
        raise ValidationError("token_budget", "must be between 100 and 32,000")
    if not request.user_id:
        raise ValidationError("user_id", "must not be empty")
    return request
