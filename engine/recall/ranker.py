"""Ranking an understood question: the channels, fusion, weights and the assembled answer (DESIGN §5).

Ranking works on *anchors*: a fact extracted from a turn and the turn itself are one piece of evidence, so they
share an anchor (the turn) and compete for one place in the ranking instead of two.  An anchor's block shows its
best fact when one ranked (compact, structured), with the turn as the verbatim evidence; otherwise the turn.
Episodes, document spans and facts without a turn (typed by hand, from documents) are anchors of their own.

Scores: reciprocal-rank fusion over the channels, then multiplied by the item's standing, importance,
recency/decay and utility signals, and by how well it matches the named subjects and the time window.

Indirect questions (advice, plans) share few words with their answers, so they are served differently (DESIGN §5):
every channel digs twice as deep, and the wider pool is reranked by closeness in meaning to the question and by
whether an item says what someone likes or does.

The :class:`Ranker` is the unit of work of the helper processes (:mod:`engine.recall.processes`) as well as of
:class:`engine.recall.service.Recall`; it lives here, below both, so neither imports the other to reach it.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from engine.errors import VaultError
from engine.facts import params
from engine.facts.model import Fact
from engine.recall import assemble
from engine.recall.analyze import QueryAnalysis
from engine.recall.channels import (
    ADVICE_KINDS,
    ChannelInput,
    Key,
    fact_keyword_channel,
    keyword_channel,
    predicate_channel,
    profile_channel,
    temporal_channel,
    vector_channel,
)
from engine.recall.documents import DocumentRoute, DocumentRouter
from engine.recall.hydrate import (
    EpisodeRow,
    Turn,
    adjacent_ids,
    load_episodes,
    load_facts,
    load_spans,
    load_turns,
)
from engine.recall.types import ChannelReport, RecallRequest, RecallResult, Routing
from engine.recall.understandings import gathers, understanding_blocks
from engine.store import Reader, Store
from engine.vectors.base import VectorIndex

if TYPE_CHECKING:
    pass


log = logging.getLogger(__name__)
T = TypeVar("T")

RRF_K = 10.0
#: The hashing embedder is lexical like BM25, so its vector channel mostly repeats the keyword channel and adds
#: noise; a semantic embedder (ONNX MiniLM, Ollama) earns more weight.
VECTOR_WEIGHT = {"hashing": 0.5, "semantic": 0.8}
#: Reciprocal-rank fusion: ``weight / (RRF_K + rank)``.  A small k rewards each channel's top hits, which are
#: precise here (BM25 on names and rare words, slot truths); LoCoMo development data agreed (k 5–15 ≈ equal).
CHANNEL_WEIGHTS = {
    "keyword": 1.0,
    "keyword_facts": 0.6,
    "vector": 1.0,
    "predicate": 0.9,
    "profile": 1.0,
    "temporal": 0.7,
    "documents": 1.0,
    "neighbours": 0.6,
}
NEIGHBOUR_HITS = 8
#: The best turns whose follow-up question's answer is lifted (:func:`_follow_ups`).
FOLLOW_UP_HITS = 3
HYDRATE_MIN = 60
KINDS = ("fact", "event", "episode")
STANDING_WEIGHT = {"fact": 1.0, "working": 0.92, "challenged": 0.75, "candidate": 0.6}
SUBJECT_BOOST = 1.6
WINDOW_BOOST = 1.4
OUT_OF_WINDOW = 0.7  # the query names a time: dated items outside it are less likely what is asked for
SAME_CONVERSATION = 1.05
#: A personal question's slot facts ("where do I live" → the user's lives_in): × SLOT_BOOST for the first predicate
#: asked, × SLOT_DECAY less for each later one.
SLOT_BOOST = 4.0
SLOT_DECAY = 0.8
#: Indirect questions: how much deeper every channel digs, how many of the weighed anchors are reranked, how
#: much closeness in meaning can raise an anchor (× 1 + w·cosine), and the lift of a preference or habit.
INDIRECT_WIDEN = 2
RERANK_POOL = 60
RERANK_SIMILARITY = 1.0
ADVICE_BOOST = 1.3


@dataclass(frozen=True, slots=True)
class Question:
    """A recall request understood: what :meth:`Ranker.rank` works from (picklable: it may go to a process)."""

    request: RecallRequest
    limit: int
    budget: int
    reference: datetime
    analysis: QueryAnalysis
    query_vector: Any
    rewrite_vectors: tuple[Any, ...]
    timings: dict[str, float]
    started: float
    understandings: bool = True  # show the named subjects' understandings (``recall.understandings``)


@dataclass(slots=True)
class Anchor:
    """One unit of evidence in the ranking, with everything that contributed to it."""

    key: Key
    score: float = 0.0
    channels: set[str] = field(default_factory=set)
    facts: list[tuple[float, int]] = field(default_factory=list)  # (score, fact id)


class Ranker:
    """Ranks an understood question: the channels, fusion, weights and the assembled answer.

    Everything it needs is the store, the vectors and the embedder's name, so that a helper process holding its own
    read-only copies (:mod:`engine.recall.processes`) ranks exactly as this process would.
    """

    def __init__(self, store: Store, vectors: VectorIndex, model_id: str) -> None:
        self._store = store
        self._vectors = vectors
        self._model_id = model_id
        self.documents = DocumentRouter(store, vectors)

    def rank(self, question: Question, pool: Executor) -> RecallResult:
        """Rank and assemble the answer, the channels run on ``pool``.

        The channels run side by side only when this is the one recall under way: that cuts an idle request's
        latency by a fifth to a quarter, while under concurrent requests the cores are already busy and the
        hand-offs between threads (each contending for the interpreter lock) cost more than the overlap gains — the
        channels then run one after another on the request's own thread.
        """
        req, limit, budget, reference = question.request, question.limit, question.budget, question.reference
        analysis, query_vector, rewrite_vectors = question.analysis, question.query_vector, question.rewrite_vectors
        timings = question.timings
        widen = INDIRECT_WIDEN if analysis.mode == "indirect" else 1
        ci = ChannelInput(
            analysis,
            req.user_id,
            req.project_id,
            req.conversation_id,
            query_vector,
            max(30, limit * 3) * widen,
            rewrite_vectors,
        )
        t0 = time.perf_counter()
        ranked, reports, route = self._run_channels(ci, req, pool)
        timings["channels"] = _ms(t0)

        t0 = time.perf_counter()
        weights = {**CHANNEL_WEIGHTS, "vector": self._vector_weight()}
        # one read snapshot for everything after the channels: consistent, and one connection checkout
        with self._store.snapshot() as snap:
            fused, channels_of = _fuse(ranked, weights)
            t1 = time.perf_counter()
            around = neighbours(snap, fused, NEIGHBOUR_HITS * widen)
            ranked["neighbours"] = around.turns
            reports["neighbours"] = ChannelReport(True, len(around.turns) + len(around.replies), _ms(t1))
            fused, channels_of = _fuse(ranked, weights)
            lift_replies(fused, channels_of, around.replies)
            lift_replies(fused, channels_of, follow_ups(snap, fused))
            # weights (and an indirect question's rerank of the top RERANK_POOL) only reorder the fused list
            # moderately: the long tail of single-channel hits never reaches the top, so it is not loaded at all.
            # Three times the limit (six for an indirect question's wider pool): LoCoMo's recall@5/10/20 were the
            # same as with six times, and loading and weighing half as many items is a sixth of a recall's CPU.
            fused = dict(sorted(fused.items(), key=lambda kv: -kv[1])[: max(HYDRATE_MIN, limit * 3 * widen)])
            hydrated = self._hydrate(snap, fused, route.pinned)
            scored = weigh(fused, channels_of, hydrated, analysis, req.conversation_id, reference)
            if analysis.mode == "indirect" and query_vector is not None:
                scored = rerank_indirect(scored, hydrated, self._closeness(scored, (query_vector, *rewrite_vectors)))
            timings["fuse"] = _ms(t0)

            t0 = time.perf_counter()
            result_parts = assemble.build(
                store=snap,
                anchors=scored[:limit],
                hydrated=hydrated,
                analysis=analysis,
                request=req,
                budget=budget,
                reference=reference,
                documents_degraded=route.degraded,
                pinned=route.pinned,
                understand=(
                    functools.partial(
                        understanding_blocks,
                        snap,
                        user_id=req.user_id,
                        subjects=analysis.subjects,
                        query=req.query,
                        predicates=analysis.predicates,
                    )
                    if question.understandings and analysis.subjects and not route.pinned and gathers(req.query)
                    else None
                ),
            )
            timings["assemble"] = _ms(t0)
        routing = Routing(
            mode=analysis.mode,
            predicates=analysis.predicates,
            subjects=tuple(s if s != "user" else "user (vault owner)" for s in analysis.subjects),
            channels=reports,
            temporal_range=analysis.temporal,
            strategy=route.strategy,
            used_queries=analysis.used_queries,
            engine=analysis.engine,
            degraded=bool(analysis.notes) or route.degraded,
            notes=analysis.notes,
        )
        timings["total"] = _ms(question.started)
        return assemble.result(result_parts, routing, timings)

    # -- channels ----------------------------------------------------------------------------------------------
    def _run_channels(
        self, ci: ChannelInput, req: RecallRequest, pool: Executor
    ) -> tuple[dict[str, list[Key]], dict[str, ChannelReport], DocumentRoute]:
        jobs: dict[str, Callable[[], list[Key]]] = {
            # the vector scan is the largest single cost: first, so that side by side it starts first
            "vector": lambda: vector_channel(self._store, self._vectors, ci, KINDS),
            "predicate": lambda: predicate_channel(self._store, ci),
            "profile": lambda: profile_channel(self._store, ci),
            "keyword": lambda: keyword_channel(self._store, ci),
            "keyword_facts": lambda: fact_keyword_channel(self._store, ci),
            "temporal": lambda: temporal_channel(self._store, self._vectors, ci),
        }
        route_box: list[DocumentRoute] = [DocumentRoute((), "LOCAL", False)]

        def documents() -> list[Key]:
            route_box[0] = self.documents.channel(ci, req)
            return list(route_box[0].keys)

        jobs["documents"] = documents
        futures = {name: pool.submit(_timed, fn) for name, fn in jobs.items()}
        ranked: dict[str, list[Key]] = {}
        reports: dict[str, ChannelReport] = {}
        for name, future in futures.items():
            try:
                keys, ms = future.result(timeout=10)
            except VaultError:
                raise  # a bad request (e.g. an unknown document_id) is the caller's to see
            except Exception as exc:
                log.warning("recall channel %s failed: %s", name, type(exc).__name__)
                reports[name] = ChannelReport(True, 0, 0.0, note=f"failed: {type(exc).__name__}")
                continue
            ran = bool(keys) or _channel_applies(name, ci)
            ranked[name] = keys
            reports[name] = ChannelReport(ran, len(keys), ms)
        return ranked, reports, route_box[0]

    # -- fusion and weights ------------------------------------------------------------------------------------
    def _hydrate(self, q: Reader, scores: dict[Key, float], pinned: tuple[Key, ...]) -> dict[str, dict[int, Any]]:
        by_kind: dict[str, list[int]] = {}
        for kind, object_id in [*scores, *pinned]:
            by_kind.setdefault(kind, []).append(object_id)
        facts = load_facts(q, by_kind.get("fact", []))
        turn_ids = set(by_kind.get("event", [])) | {f.event_id for f in facts.values() if f.event_id}
        return {
            "fact": facts,
            "event": load_turns(q, turn_ids),
            "episode": load_episodes(q, by_kind.get("episode", [])),
            "span": load_spans(q, by_kind.get("span", []) + [f.span_id for f in facts.values() if f.span_id]),
            **self.documents.hydrate(q, by_kind),
        }

    def _closeness(self, anchors: list[Anchor], query_vectors: tuple[Any, ...]) -> dict[int, float]:
        """Cosine closeness of the reranked pool to the question (or its nearest rewrite), by object id."""
        ids = sorted({i for a in anchors[:RERANK_POOL] for i in (a.key[1], *(f for _s, f in a.facts))})
        best: dict[int, float] = {}
        for vector in query_vectors:
            for object_id, sim in self._vectors.similarities(vector, ids).items():
                best[object_id] = max(best.get(object_id, -1.0), sim)
        return best

    def _vector_weight(self) -> float:
        lexical = self._model_id.startswith("hashing")
        return VECTOR_WEIGHT["hashing" if lexical else "semantic"]


def _fuse(ranked: dict[str, list[Key]], weights: dict[str, float]) -> tuple[dict[Key, float], dict[Key, set[str]]]:
    """Reciprocal-rank fusion: each channel adds ``weight / (k + rank)`` for every item it ranked."""
    scores: dict[Key, float] = {}
    channels_of: dict[Key, set[str]] = {}
    for channel, keys in ranked.items():
        weight = weights.get(channel, 1.0)
        for rank, key in enumerate(keys):
            scores[key] = scores.get(key, 0.0) + weight / (RRF_K + rank + 1)
            channels_of.setdefault(key, set()).add(channel)
    return scores, channels_of


def weigh(
    scores: dict[Key, float],
    channels_of: dict[Key, set[str]],
    hydrated: dict[str, dict[int, Any]],
    analysis: QueryAnalysis,
    conversation_id: str,
    reference: datetime,
) -> list[Anchor]:
    """Fused scores × the item's own signals, gathered into anchors, best first (ties by key).

    A fact is weighed by its standing, importance, recency/decay (:func:`decay_weight`) and utility marks; every
    item by the named subjects and the time window; a turn of the asking conversation a little more.
    """
    anchors: dict[Key, Anchor] = {}
    subjects = {s.casefold() for s in analysis.subjects}
    window = analysis.temporal
    for key, rrf in scores.items():
        kind, object_id = key
        item = hydrated.get(kind, {}).get(object_id)
        if item is None:
            continue  # forgotten meanwhile, or not visible
        weight = 1.0
        anchor_key = key
        when: datetime | None = None
        who: str | None = None
        if isinstance(item, Fact):
            if item.standing == "quarantine":
                continue
            weight *= STANDING_WEIGHT.get(item.standing, 0.5)
            weight *= 0.6 + 0.4 * item.importance
            weight *= decay_weight(item, reference)
            weight *= 1.0 + 0.1 * max(-3, min(3, item.useful_count - item.questionable_count))
            when, who = item.valid_from, item.subject
            if item.event_id and item.event_id in hydrated["event"]:
                anchor_key = ("event", item.event_id)
            elif item.span_id and item.span_id in hydrated["span"]:
                anchor_key = ("span", item.span_id)
        elif isinstance(item, Turn):
            when, who = item.at, item.author or item.role
            if item.conversation_id == conversation_id:
                weight *= SAME_CONVERSATION
        elif isinstance(item, EpisodeRow):
            when = item.started_at
        if subjects and who is not None and who.casefold() in subjects:
            weight *= SUBJECT_BOOST
        if isinstance(item, Fact) and analysis.slot_predicates:
            weight *= _slot_weight(item, analysis, reference)
        if window is not None and when is not None:
            weight *= WINDOW_BOOST if window.start <= when < window.end else OUT_OF_WINDOW
        score = rrf * weight
        anchor = anchors.setdefault(anchor_key, Anchor(anchor_key))
        anchor.channels |= channels_of.get(key, set())
        if isinstance(item, Fact):
            anchor.facts.append((score, item.id))
        # an anchor gathers evidence from its turn and its facts: the best counts fully, the rest a little
        anchor.score = max(anchor.score, score) + 0.25 * min(anchor.score, score)
    ordered = sorted(anchors.values(), key=lambda a: (-a.score, a.key))
    for anchor in ordered:
        anchor.facts.sort(key=lambda f: -f[0])
    return ordered


def _slot_weight(fact: Fact, analysis: QueryAnalysis, reference: datetime) -> float:
    """A personal question's own slot first: a live fact of an asked predicate, about whom it asks, leads (the
    first-listed predicate most; see :func:`engine.recall.slots.slot_rank`)."""
    rank = analysis.slot_rank_of(fact, reference)
    return 1.0 if rank is None else SLOT_BOOST * (SLOT_DECAY**rank)


def rerank_indirect(
    anchors: list[Anchor], hydrated: dict[str, dict[int, Any]], closeness: dict[int, float]
) -> list[Anchor]:
    """Rerank the top of an indirect question's wider pool.

    Fusion rewards sharing the question's words; advice is rather found in what is *close in meaning* to the
    question (``closeness``: cosine to the question or its nearest rewrite, by object id) and in what someone
    likes or does.  Each of the first :data:`RERANK_POOL` anchors is raised by ``1 + RERANK_SIMILARITY · cosine``
    (its closest member counts), and by :data:`ADVICE_BOOST` when one of its facts is a preference or a habit; the
    rest keep their order below.
    """
    pool, rest = anchors[:RERANK_POOL], anchors[RERANK_POOL:]
    facts: dict[int, Fact] = hydrated.get("fact", {})
    for anchor in pool:
        members = (anchor.key[1], *(fact_id for _s, fact_id in anchor.facts))
        close = max((closeness.get(i, 0.0) for i in members), default=0.0)
        factor = 1.0 + RERANK_SIMILARITY * max(0.0, close)
        if any(f is not None and f.kind in ADVICE_KINDS for f in (facts.get(i) for _s, i in anchor.facts)):
            factor *= ADVICE_BOOST
        anchor.score *= factor
    # a lift is never below 1, so the pool stays above the rest
    pool.sort(key=lambda a: (-a.score, a.key))
    return pool + rest


@dataclass(frozen=True, slots=True)
class Around:
    """What surrounds the best-ranked turns (:func:`neighbours`)."""

    #: The turns right before and after them, ranked in the order of the hits they surround (a channel of its own).
    turns: list[Key]
    #: The reply to each question among them, with the score the question had: ``(reply, score)``.
    replies: list[tuple[Key, float]]


def neighbours(q: Reader, fused: dict[Key, float], hits: int = NEIGHBOUR_HITS) -> Around:
    """The turns right before and after the best-ranked turns, and the replies to the questions among them.

    Answers in a dialogue often span a reply, so neighbours get a modest, rank-aware share of fusion.  A reply to a
    question is more than a neighbour: when one speaker asks "How long have you been married?" and the other
    answers "5 years already!", the question holds the words a later question shares and the reply holds the
    answer, which shares none.  So the turn right after a question, said by someone else, is returned apart (see
    :func:`lift_replies`).  A fact stands for the turn it was drawn from.
    """
    top_events, score_of = _top_turns(q, fused, hits)
    adjacent = adjacent_ids(q, top_events)
    after = {event_id: int(pair[1]) for event_id, pair in adjacent.items() if pair[1] is not None}
    said = _speakers(q, [*top_events, *after.values()])
    turns: list[Key] = []
    replies: list[tuple[Key, float]] = []
    seen = set(top_events)
    for event_id in top_events:
        reply = after.get(event_id)
        if reply is not None and reply not in seen and _answers(said.get(event_id), said.get(reply)):
            seen.add(reply)
            replies.append((("event", reply), score_of[event_id]))
        for neighbour in adjacent.get(event_id, (None, None)):
            if neighbour is not None and int(neighbour) not in seen:
                seen.add(int(neighbour))
                turns.append(("event", int(neighbour)))
    return Around(turns, replies)


def follow_ups(q: Reader, fused: dict[Key, float], hits: int = FOLLOW_UP_HITS) -> list[tuple[Key, float]]:
    """The answers to follow-up questions on the very best turns, each with the score of the turn it continues.

    Melanie says "I had a picnic with friends from church", Maria asks "What games?", and Melanie's next turn,
    "charades and a scavenger hunt", is what a question about the picnic wants — yet it shares neither the
    question's words nor the follow-up's.  So where someone else's question comes right after one of the best
    turns (replies already lifted, :func:`lift_replies`), the first speaker's answer to it is returned with that
    turn's score.  Only the best :data:`FOLLOW_UP_HITS` turns: deeper, the answers crowd out better hits.  LoCoMo
    figures in BENCHMARKS.md.
    """
    tops, score_of = _top_turns(q, fused, hits)
    after = {top: int(pair[1]) for top, pair in adjacent_ids(q, tops).items() if pair[1] is not None}
    said = _speakers(q, [*tops, *after.values()])
    asked = {
        top: question
        for top, question in after.items()
        if top in said and question in said and said[question][2] and said[question][:2] != said[top][:2]
    }
    if not asked:
        return []
    next_of = {m: int(pair[1]) for m, pair in adjacent_ids(q, list(asked.values())).items() if pair[1] is not None}
    said |= _speakers(q, list(next_of.values()))
    found: list[tuple[Key, float]] = []
    for top, question in asked.items():
        answer = next_of.get(question)
        reply = said.get(answer) if answer is not None else None
        # answered by the person it was asked of
        if answer is not None and reply is not None and reply[:2] == said[top][:2] and _answers(said[question], reply):
            found.append((("event", answer), score_of[top]))
    return found


def _top_turns(q: Reader, fused: dict[Key, float], hits: int) -> tuple[list[int], dict[int, float]]:
    """The best-ranked turns (a fact stands for the turn it was drawn from), best first, with their scores."""
    ordered = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[: hits * 2]
    fact_ids = [i for (k, i), _score in ordered if k == "fact"]
    fact_events = (
        dict(
            q.query(
                f"SELECT id, event_id FROM facts WHERE id IN ({','.join('?' * len(fact_ids))}) "
                "AND event_id IS NOT NULL",
                tuple(fact_ids),
            )
        )
        if fact_ids
        else {}
    )
    tops: list[int] = []
    score_of: dict[int, float] = {}
    for (kind, object_id), score in ordered:
        event_id = object_id if kind == "event" else fact_events.get(object_id)
        if event_id is not None and int(event_id) not in score_of:
            tops.append(int(event_id))
            score_of[int(event_id)] = score
    return tops[:hits], score_of


def _speakers(q: Reader, event_ids: list[int]) -> dict[int, tuple[str, str, bool]]:
    """For each turn: its role, its author (folded, "" when none) and whether it asks something (holds a "?")."""
    if not event_ids:
        return {}
    rows = q.query(
        "SELECT id, role, COALESCE(author, ''), instr(content, '?') > 0 FROM events "
        f"WHERE id IN ({','.join('?' * len(event_ids))})",
        tuple(event_ids),
    )
    return {int(r[0]): (str(r[1]), str(r[2]).casefold(), bool(r[3])) for r in rows}


#: Roles whose turns are a person's answer.  A model's or a tool's answer to a question is not what anyone said of
#: themselves, and an assistant's reply is long: lifted beside every question a user asked it, it would crowd the
#: budget with suggestions (it still comes in as an ordinary neighbour).
ANSWERING_ROLES = frozenset({"user"})


def _answers(asked: tuple[str, str, bool] | None, reply: tuple[str, str, bool] | None) -> bool:
    """Whether ``reply`` answers ``asked``: ``asked`` holds a question and someone else, a person, said ``reply``."""
    return (
        asked is not None and reply is not None and asked[2] and asked[:2] != reply[:2] and reply[0] in ANSWERING_ROLES
    )


def lift_replies(fused: dict[Key, float], channels_of: dict[Key, set[str]], replies: list[tuple[Key, float]]) -> None:
    """Give each reply to a well-ranked question at least the question's fused score (in place).

    The reply then competes on its own signals (:func:`weigh`: who said it, when): asked "How long has Mel been
    married?", the question turn is someone else's and the reply is Mel's, so the reply ranks first.  LoCoMo
    development data, recall@10 with and without (tuned on three conversations, checked on the other two): in
    BENCHMARKS.md.
    """
    for key, score in replies:
        if score > fused.get(key, 0.0):
            fused[key] = score
            channels_of.setdefault(key, set()).add("replies")


def decay_weight(fact: Fact, reference: datetime) -> float:
    """Recency weight by decay class: stable facts don't fade; moderate and ephemeral ones halve per half-life."""
    half_life = params.HALF_LIFE_DAYS.get(fact.decay)
    if fact.valid_to is not None and fact.valid_to < reference:
        return 0.5  # expired (ephemeral, retracted window) but still evidence of the past
    if half_life is None:
        return 1.0
    last = fact.last_accessed_at or fact.recorded_at
    age_days = max(0.0, (reference - last).total_seconds() / 86400)
    return 0.5 + 0.5 * math.pow(0.5, age_days / half_life)


def _channel_applies(name: str, ci: ChannelInput) -> bool:
    a = ci.analysis
    return {
        "predicate": bool(a.predicates),
        "profile": a.mode == "broad" or (a.mode == "indirect" and bool(a.subject_ids)),
        "temporal": a.temporal is not None,
        "keyword": bool(a.keywords),
        "keyword_facts": bool(a.keywords),
        "vector": ci.query_vector is not None,
    }.get(name, True)


class _Inline(Executor):
    """Runs each submitted call at once on the calling thread (a completed future holds its result or error)."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # the caller sees it from result(), as from a pool's future
            future.set_exception(exc)
        return future


INLINE = _Inline()


def _timed(fn: Callable[[], T]) -> tuple[T, float]:
    t0 = time.perf_counter()
    return fn(), _ms(t0)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)
