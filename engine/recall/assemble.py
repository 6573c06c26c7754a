"""Assembly (DESIGN §5 step 4): ranked anchors → blocks → the prompt-ready ``llm_context``.

Injection rules: only facts of standing ``working``/``fact`` are injected as facts; ``candidate`` facts appear in
``blocks`` (search, GUI) but never in the text; ``quarantine`` never leaves the store; ``challenged`` facts appear
as a conflict block phrased as something to ask the user.  Hot facts are always in ``background_context``.

``llm_context.text`` is deterministic for the same vault and request: fixed section order, ties broken by id, and
no clock other than the request's reference time.  Every line cites its item's id and date (a document's lines
the date of the document's current version, a conflict's the day it was raised).  Everything in the text counts
against the token budget, the document status marker included.

Context around a hit: a short turn or a question among the first hits carries its neighbouring turns as evidence.
When one of the first hits is a turn of a closed episode of the asking conversation, and the episode's summary holds
words of the query that the hit (with its neighbours) lacks, the episode is added as a block of its own — after
the ranked blocks, ``meta.around`` naming the hit — because it explains what the hit was part of.  An episode that
would only repeat the hit is left out, and episodes of other conversations never appear.

What the text carries (issue 24: a chat model pastes it into its prompt and trusts it — every line should help
answer, none should mislead): background hot facts only about whom the question asks and touching what it asks; a
turn whose facts have all ended (superseded, retracted) labelled ``(earlier, until <date>)``; document passages from
an unnamed search only above :data:`DOCUMENT_FLOOR`; for a personal slot question with its slot's answer at hand, no
fact of another predicate; and no ranked item below :data:`RELEVANT_FLOOR` of the best.  A fact's evidence is the
turn it was extracted from and nothing else (a short turn's neighbours are the turn's context, not the fact's).
These rules change only the text and the ``left_out`` and ``earlier`` marks: the ranked blocks, and so recall@k,
stay as ranked.

A DOCUMENT request pins the document's outline (its distillation and every section distillation, in order) ahead of
the ranked blocks; only the token budget trims it, and the text then says how many were left out.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from engine.facts.model import Fact
from engine.recall.analyze import QueryAnalysis
from engine.recall.channels import Key, fold
from engine.recall.hydrate import (
    Ended,
    EpisodeRow,
    OpenConflict,
    SpanRow,
    Turn,
    conversation_facts,
    ended_turns,
    hot_facts,
    latest_turns,
    load_episodes,
    neighbour_turns,
    open_conflicts,
)
from engine.recall.porter import stem
from engine.recall.tables import table_view
from engine.recall.types import Block, Evidence, LLMContext, RecallRequest, RecallResult, Routing, Turn as HistoryTurn
from engine.store import Reader

INJECTABLE = frozenset({"working", "fact"})
HISTORY_TURNS = 12
BACKGROUND_LIMIT = 20
WORKING_LIMIT = 10
ANSWER_FACTS = 3
NEIGHBOUR_BLOCKS = 5
SHORT_TURN = 90
#: An episode shown around a hit scores this share of the hit's score.
EPISODE_SHARE = 0.5
#: Ranked blocks before the named subjects' understandings.  Measured on LoCoMo's development conversations
#: (BENCHMARKS.md, "Understandings in recall"), an understanding's evidence turns placed third or eighth displaced
#: better-ranked turns (recall@10 0.7087 → 0.678–0.700 at third, tuned and held-out halves alike); after the ten best
#: they cost nothing at 10 and 0.002 at 20.  In ``llm_context`` they follow the answer facts: the model reads the
#: synthesis beside its sources.
UNDERSTANDING_AT = 10
#: A document passage found by an unnamed search reaches the text only when it holds at least this share of the
#: question's keywords (and two of them when the question has two or more): a passage the vector channel found for a
#: word or two in common with the question ("live" in an orchard handbook) is not an answer to it.
DOCUMENT_FLOOR = 0.5
#: … but never more than this many: half of a long question's keywords (a question of sixteen, as a filing's reader
#: asks them) is more than any one passage holds, and left two passages of ten in the text.
DOCUMENT_FLOOR_WORDS = 3
#: The most of the token budget a DOCUMENT request's pinned outline takes when the request asks something: room for
#: the document's own distillation and its first sections, while the passages that answer come after it (an empty
#: query gets the outline whole).  On real filings a hundred section distillations filled the whole budget and no
#: passage reached the text; shares of 0 / 0.1 / 0.15 / 0.2 / 0.3 / 0.45 gave the quote words in the text 0.614 /
#: 0.611 / 0.606 / 0.606 / 0.557 / 0.557 on the development filings, 0.553 / 0.558 / 0.549 / 0.543 / 0.537 / 0.500
#: on the held-out ones (all the page index reaches is 0.460 and 0.417).
OUTLINE_SHARE = 0.15
#: A ranked item reaches the text only when it scores at least this share of the best ranked item: the long tail of
#: weak hits (a turn reached only as a neighbour, one shared word) fills the budget without helping answer.
#: Tuned on LoCoMo's development conversations 26, 30 and 41 and checked on 42 and 43 (BENCHMARKS.md, "Precision of
#: llm_context"): 0.2 / 0.3 / 0.4 kept 78.5 / 77.1 / 72.5 % of the evidence turns in the text at a precision of
#: 0.051 / 0.062 / 0.086 — past 0.3 the text starts to lose evidence faster than it sheds padding.
RELEVANT_FLOOR = 0.3
#: The first line under the header while a document's distillations are still being made.
DEGRADED_MARKER = "[DOCUMENT UNDERSTANDING STATUS: DEGRADED]"
_TOKEN = re.compile(r"\w+", re.UNICODE)


@dataclass(slots=True)
class Parts:
    """Everything assembled, before the routing is attached."""

    blocks: list[Block]
    background: list[Block]
    answer: list[Block]
    supporting: list[Block]
    conflicts: list[Block]
    documents: list[Block]
    working: list[Block]
    history: list[HistoryTurn]
    context: LLMContext


def tokens(text: str) -> int:
    """A fast token estimate (≈ 4 characters per token for English prose)."""
    return math.ceil(len(text) / 4)


def build(
    *,
    store: Reader,
    anchors: list[Any],
    hydrated: dict[str, dict[int, Any]],
    analysis: QueryAnalysis,
    request: RecallRequest,
    budget: int,
    reference: datetime,
    documents_degraded: bool = False,
    pinned: Sequence[Key] = (),
    understand: Callable[..., list[Block]] | None = None,
) -> Parts:
    """Turn ranked anchors into blocks and text; ``pinned`` distillations lead, whole and in the given order.

    ``understand`` (given the turns the first :data:`UNDERSTANDING_AT` blocks hold, and a score) answers the
    understanding blocks of the subjects the question names; they follow those first blocks.
    """
    outline = [b for b in (_pinned_block(hydrated, key) for key in pinned) if b is not None]
    outline_keys = {(b.kind, b.id) for b in outline}
    ranked: list[Block] = []
    challenged: list[Fact] = []
    short = [t for a in anchors[:NEIGHBOUR_BLOCKS] if (t := _needs_neighbours(a, hydrated)) is not None]
    around_turns = neighbour_turns(store, short, hydrated["event"])
    for anchor in anchors:
        if anchor.key in outline_keys:
            continue
        block = _block(anchor, hydrated, around_turns)
        if block is None:
            continue
        ranked.append(block)
        for _score, fact_id in anchor.facts:
            fact = hydrated["fact"].get(fact_id)
            if fact is not None and fact.standing == "challenged":
                challenged.append(fact)
    if understand is not None:
        head = ranked[:UNDERSTANDING_AT]
        shown = {b.id for b in head if b.kind == "event"} | {
            e.source_id for b in head for e in b.evidence if e.source_kind == "event" and e.source_id is not None
        }
        score = head[-1].score if head else 0.0
        ranked = [*head, *understand(shown_events=shown, score=score), *ranked[UNDERSTANDING_AT:]]
    around = _episodes_around(store, ranked, hydrated, analysis, request)
    # one read for both lists: which of their turns state only facts that have ended
    ended = ended_turns(store, request.user_id, [b.id for b in (*ranked, *around) if b.kind == "event"])
    ranked = _hygiene(ended, ranked, hydrated, analysis, request, reference)
    around = _hygiene(ended, around, hydrated, analysis, request, reference)
    blocks = [*outline, *ranked, *around]
    background = [_fact_block(f, 1.0, "hot") for f in hot_facts(store, request.user_id, BACKGROUND_LIMIT)]
    background_ids = {b.id for b in background}
    fact_blocks = [b for b in ranked if b.kind == "fact"]
    # a hot fact the query asks about is an answer too (the text still shows it once, under Background)
    answerable = [b for b in fact_blocks if b.meta.get("injected") and not b.meta.get("left_out")]
    answer = _slot_first(answerable, analysis, hydrated, reference)[:ANSWER_FACTS]
    supporting = [b for b in fact_blocks if b not in answer and b.id not in background_ids]
    conflicts = [_conflict_block(c) for c in open_conflicts(store, request.user_id, sorted({f.id for f in challenged}))]
    docs = [b for b in blocks if b.kind in ("span", "section", "document")]
    working = [
        _fact_block(f, 1.0, "conversation")
        for f in conversation_facts(store, request.user_id, request.conversation_id, WORKING_LIMIT)
    ]
    history = [
        HistoryTurn(t.id, t.role, t.author, t.content, t.at, t.status)
        for t in latest_turns(store, request.user_id, request.conversation_id, HISTORY_TURNS)
    ]
    understood = [b for b in ranked if b.kind == "understanding"]
    shown_after = [*understood, *(b for b in ranked if b.kind != "understanding"), *around]
    context = _render(
        analysis,
        reference,
        documents_degraded,
        [b for b in background if _asked_about(b, analysis)],
        answer,
        shown_after,
        conflicts,
        outline,
        budget,
    )
    return Parts(blocks, background, answer, supporting, conflicts, docs, working, history, context)


def result(parts: Parts, routing: Routing, timings: dict[str, float]) -> RecallResult:
    """The final answer object."""
    return RecallResult(
        llm_context=parts.context,
        answer_facts=tuple(parts.answer),
        supporting_facts=tuple(parts.supporting),
        background_context=tuple(parts.background),
        blocks=tuple(parts.blocks + parts.conflicts),
        conversation_history=tuple(parts.history),
        working_memory=tuple(parts.working),
        documents=tuple(parts.documents),
        routing=routing,
        timings_ms=timings,
    )


# -- blocks -------------------------------------------------------------------------------------------------------
def _needs_neighbours(anchor: Any, hydrated: dict[str, dict[int, Any]]) -> Turn | None:
    """The turn of one of the first anchors that is too short (or a question) to stand without its neighbours."""
    kind, object_id = anchor.key
    turn: Turn | None = hydrated["event"].get(object_id) if kind == "event" else None
    if turn is not None and (len(turn.content) < SHORT_TURN or turn.content.rstrip().endswith("?")):
        return turn
    return None


def _block(anchor: Any, hydrated: dict[str, dict[int, Any]], around_turns: dict[int, list[Turn]]) -> Block | None:
    kind, object_id = anchor.key
    channels = tuple(sorted(anchor.channels))
    score = round(anchor.score, 6)
    best = hydrated["fact"].get(anchor.facts[0][1]) if anchor.facts else None
    if kind == "event":
        turn: Turn | None = hydrated["event"].get(object_id)
        if turn is None:
            return None
        evidence = [_turn_evidence(turn, best)]
        meta: dict[str, Any] = {
            "turn_id": turn.id,
            "external_id": turn.external_id,
            "conversation_id": turn.conversation_id,
            "author": turn.author,
            "role": turn.role,
        }
        if best is not None:
            meta.update(_fact_meta(best))
            meta["also"] = [fid for _s, fid in anchor.facts[1:]]
            return Block(
                "fact",
                best.id,
                best.statement,
                score,
                (best.id, turn.id),
                tuple(evidence),
                best.valid_from or turn.at,
                channels,
                meta,
            )
        meta["injected"] = True
        # a turn too short to stand alone carries its neighbours; a fact's evidence is its own turn and nothing else
        evidence += [_turn_evidence(t, None) for t in around_turns.get(turn.id, ())]
        speaker = turn.author or turn.role
        return Block(
            "event", turn.id, f"{speaker}: {turn.content}", score, (turn.id,), tuple(evidence), turn.at, channels, meta
        )
    if kind == "fact":
        fact: Fact | None = hydrated["fact"].get(object_id)
        if fact is None:
            return None
        ev = Evidence(
            fact.source_text,
            "manual" if fact.event_id is None else "event",
            fact.event_id,
            fact.recorded_at,
            None,
            fact.source_start,
            fact.source_end,
        )
        return Block(
            "fact",
            fact.id,
            fact.statement,
            score,
            (fact.id,),
            (ev,),
            fact.valid_from or fact.recorded_at,
            channels,
            _fact_meta(fact),
        )
    if kind == "episode":
        episode: EpisodeRow | None = hydrated["episode"].get(object_id)
        if episode is None:
            return None
        return Block(
            "episode",
            episode.id,
            episode.summary,
            score,
            (episode.id,),
            (),
            episode.started_at,
            channels,
            {
                "conversation_id": episode.conversation_id,
                "injected": True,
                "turns": [episode.first_event_id, episode.last_event_id],
            },
        )
    if kind == "span":
        span: SpanRow | None = hydrated["span"].get(object_id)
        if span is None:
            return None
        meta = {
            "document_id": span.document_id,
            "document": span.document_name,
            "section": span.section_title,
            "page_start": span.page_start,
            "page_end": span.page_end,
            "injected": True,
        }
        ev = Evidence(span.text, "span", span.id, span.document_at, None, span.start_char, span.end_char)
        if best is not None:
            meta.update(_fact_meta(best))
            return Block(
                "fact",
                best.id,
                best.statement,
                score,
                (best.id, span.id),
                (ev,),
                best.valid_from or best.recorded_at,
                channels,
                meta,
            )
        view = table_view(span)
        if view is not None:
            meta["table"] = {"id": view.table_id, "text": view.text, "whole": view.whole}
        return Block(
            "span", span.id, span.text, score, (span.id, span.document_id), (ev,), span.document_at, channels, meta
        )
    extra = hydrated.get(kind, {}).get(object_id)
    if extra is not None and isinstance(extra, Block):
        return Block(
            extra.kind, extra.id, extra.content, score, extra.source_ids, extra.evidence, extra.at, channels, extra.meta
        )
    return None


def _pinned_block(hydrated: dict[str, dict[int, Any]], key: Key) -> Block | None:
    """A distillation the strategy pins: shown whatever its rank, so it carries no fused score (1.0, like the
    other always-included blocks)."""
    found = hydrated.get(key[0], {}).get(key[1])
    if not isinstance(found, Block):
        return None
    return Block(
        found.kind, found.id, found.content, 1.0, found.source_ids, found.evidence, found.at, ("documents",), found.meta
    )


def _episodes_around(
    store: Reader,
    ranked: list[Block],
    hydrated: dict[str, dict[int, Any]],
    analysis: QueryAnalysis,
    request: RecallRequest,
) -> list[Block]:
    """The closed episodes of this conversation around the first hits, when they add evidence (module notes).

    One query for all of them: the hits' turns are already loaded and know their episode.
    """
    present = {b.id for b in ranked if b.kind == "episode"}
    hit_of: dict[int, Block] = {}
    for block in ranked[:NEIGHBOUR_BLOCKS]:
        turn: Turn | None = hydrated["event"].get(block.meta.get("turn_id", -1))
        if turn is None or turn.episode_id is None or turn.conversation_id != request.conversation_id:
            continue
        if turn.episode_id not in present:
            hit_of.setdefault(int(turn.episode_id), block)
    if not hit_of or not analysis.keywords:
        return []
    episodes = load_episodes(store, hit_of, conversation_id=request.conversation_id)
    wanted = {_stem(t) for k in analysis.keywords for t in _TOKEN.findall(k)}
    out: list[Block] = []
    for episode_id, hit in hit_of.items():
        episode = episodes.get(episode_id)
        if episode is None or episode.status == "open":
            continue
        shown = {_stem(t) for text in (hit.content, *(e.text for e in hit.evidence)) for t in _TOKEN.findall(text)}
        summary = {_stem(t) for t in _TOKEN.findall(episode.summary)}
        if not (wanted & summary) - shown:
            continue  # it would only repeat what the hit already shows
        out.append(
            Block(
                "episode",
                episode.id,
                episode.summary,
                round(hit.score * EPISODE_SHARE, 6),
                (episode.id,),
                (),
                episode.started_at,
                ("context",),
                {
                    "conversation_id": episode.conversation_id,
                    "around": hit.id,
                    "injected": True,
                    "turns": [episode.first_event_id, episode.last_event_id],
                },
            )
        )
    return out


def _hygiene(
    ended: dict[int, Ended],
    blocks: list[Block],
    hydrated: dict[str, dict[int, Any]],
    analysis: QueryAnalysis,
    request: RecallRequest,
    reference: datetime,
) -> list[Block]:
    """What the text may carry of the ranked blocks: every line should help answer, none should mislead.

    The blocks themselves stay (search and the GUI see the whole ranking); a block the text skips says why in
    ``meta["left_out"]``, and an ended turn carries ``meta["earlier"]``:

    * a turn whose facts have all ended (superseded or retracted) is labelled ``earlier`` with the date it ended,
      so "I live in Paris." is not read as where the user lives now;
    * a document passage from an unnamed search reaches the text only above :data:`DOCUMENT_FLOOR`, and a personal
      slot question ("where do I live?") takes none: the memory answers it, not a handbook that says *live*;
    * a personal slot question that has its slot's answer takes no fact of another predicate: the residence answers
      "where do I live", not a partner fact matched on the word *live* (predicate cues beat keyword hits).
    """
    if not blocks:
        return blocks
    named = request.document_id is not None or request.collection_id is not None or analysis.section is not None
    wanted = {_stem(t) for k in analysis.keywords for t in _TOKEN.findall(k)}
    slot_answered = bool(analysis.slot_predicates) and any(
        _is_slot_fact(hydrated["fact"].get(b.id), analysis, reference) for b in blocks if b.kind == "fact"
    )
    out: list[Block] = []
    for block in blocks:
        if not block.meta.get("injected"):
            out.append(block)
        elif block.kind == "event" and block.id in ended:
            was = ended[block.id]
            history = any(
                predicate in analysis.slot_predicates
                and (not analysis.slot_subject_ids or subject in analysis.slot_subject_ids)
                for subject, predicate in was.slots
            )
            marks = {"earlier": f"{was.until:%Y-%m-%d}"} | ({"slot_history": True} if history else {})
            out.append(replace(block, meta={**block.meta, **marks}))
        elif _padding(block, named=named, wanted=wanted, slot_answered=slot_answered):
            out.append(_hidden(block, "document passage below the relevance floor"))
        elif (
            block.kind == "fact"
            and slot_answered
            and not _is_slot_fact(hydrated["fact"].get(block.id), analysis, reference)
        ):
            out.append(_hidden(block, "not the slot the question asks about"))
        else:
            out.append(block)
    return out


def _padding(block: Block, *, named: bool, wanted: set[str], slot_answered: bool) -> bool:
    """A document passage from an unnamed search that does not reach :data:`DOCUMENT_FLOOR` (a personal slot
    question with its answer at hand takes none)."""
    if block.kind not in ("span", "section", "document") or named:
        return False
    return slot_answered or not _above_floor(block, wanted)


def _hidden(block: Block, reason: str) -> Block:
    """``block`` marked as left out of the text, saying why.

    ``injected`` (may this item be injected at all: its standing) is left as it was: it also decides which facts
    count an access (``Recall``), and a fact the text skips as padding was still ranked for this question — counting
    it differently would move later rankings.
    """
    return replace(block, meta={**block.meta, "left_out": reason})


def _above_floor(block: Block, wanted: set[str]) -> bool:
    """Whether a passage from an unnamed search holds enough of the question's keywords (:data:`DOCUMENT_FLOOR`)."""
    if not wanted:
        return False
    held = wanted & {_stem(t) for t in _TOKEN.findall(block.content)}
    needed = min(DOCUMENT_FLOOR_WORDS, math.ceil(DOCUMENT_FLOOR * len(wanted)))
    return len(held) >= max(min(2, len(wanted)), needed)


def _is_slot_fact(fact: Fact | None, analysis: QueryAnalysis, reference: datetime) -> bool:
    """A live fact of the slot a personal question asks about (its predicates, whose slot it is)."""
    if fact is None or fact.status != "active":
        return False
    rank = analysis.slot_rank_of(fact, reference)
    return rank is not None


def _asked_about(block: Block, analysis: QueryAnalysis) -> bool:
    """A background (hot) fact reaches the text when it is about whom the question asks.

    A question naming nobody takes the vault owner's profile, whole (DESIGN §5: hot facts always).  A question
    naming people (the asker included: "I") takes only their hot facts — another person's hot fact is not context
    for a question about someone else — and of those, a profile question (``broad``) all, any other question those
    of a predicate it targets or sharing a word with it (the person's name aside): on LoCoMo the rest were a fifth
    of the text's items and almost never evidence.  A hot fact the ranking found still shows, among the ranked items.
    """
    asked = {*analysis.subject_ids, *analysis.slot_subject_ids}
    if not asked:
        return block.meta.get("subject") == "user"
    if block.meta.get("subject_id") not in asked:
        return False
    if analysis.mode == "broad":
        return True
    if block.meta.get("predicate") in {*analysis.predicates, *analysis.slot_predicates}:
        return True
    names = {_stem(t) for name in analysis.subjects for t in _TOKEN.findall(name)}
    wanted = {_stem(t) for k in analysis.keywords for t in _TOKEN.findall(k)} - names
    return bool(wanted & {_stem(t) for t in _TOKEN.findall(block.content)})


def _stem(token: str) -> str:
    return stem(fold(token))


def _slot_first(
    blocks: list[Block], analysis: QueryAnalysis, hydrated: dict[str, dict[int, Any]], reference: datetime
) -> list[Block]:
    """A personal question's answer facts with its own slot first ("where do I work" → the current employer before
    the role said in the same message), in the order the question ranks the slot's predicates; the rest keep their
    rank after them."""
    if not analysis.slot_predicates:
        return blocks
    last = 2 * len(analysis.slot_predicates) + 1

    def key(item: tuple[int, Block]) -> tuple[int, int]:
        index, block = item
        fact = hydrated["fact"].get(block.id)
        if fact is None:
            return last, index
        rank = analysis.slot_rank_of(fact, reference)
        return (last if rank is None else rank), index

    return [b for _i, b in sorted(enumerate(blocks), key=key)]


def _fact_meta(fact: Fact) -> dict[str, Any]:
    return {
        "subject": fact.subject,
        "subject_id": fact.subject_id,
        "predicate": fact.predicate,
        "object": fact.object_text,
        "standing": fact.standing,
        "tier": fact.tier,
        "confidence": fact.confidence,
        "status": fact.status,
        "injected": fact.status == "active" and fact.standing in INJECTABLE,
    }


def _turn_evidence(turn: Turn, fact: Fact | None) -> Evidence:
    if fact is not None and fact.source_start is not None and fact.source_end is not None:
        return Evidence(
            fact.source_text, "event", turn.id, turn.at, turn.author or turn.role, fact.source_start, fact.source_end
        )
    return Evidence(turn.content, "event", turn.id, turn.at, turn.author or turn.role)


def _fact_block(fact: Fact, score: float, channel: str) -> Block:
    ev = Evidence(
        fact.source_text,
        "event" if fact.event_id else ("span" if fact.span_id else "manual"),
        fact.event_id or fact.span_id,
        fact.recorded_at,
        None,
        fact.source_start,
        fact.source_end,
    )
    return Block(
        "fact",
        fact.id,
        fact.statement,
        score,
        tuple(i for i in (fact.id, fact.event_id) if i),
        (ev,),
        fact.valid_from or fact.recorded_at,
        (channel,),
        _fact_meta(fact),
    )


def _conflict_block(conflict: OpenConflict) -> Block:
    a, b = conflict.a, conflict.b
    text = (
        f"Unsure: {a.statement} ({_date(a.recorded_at)}) or {b.object_text} ({_date(b.recorded_at)})? "
        f"Ask the user which is right."
    )
    evidence = tuple(
        Evidence(f.source_text, "event" if f.event_id else "manual", f.event_id, f.recorded_at) for f in (a, b)
    )
    return Block(
        "conflict",
        conflict.id,
        text,
        1.0,
        (a.id, b.id),
        evidence,
        conflict.created_at,
        ("conflicts",),
        {"fact_a": a.id, "fact_b": b.id, "injected": True},
    )


# -- text ---------------------------------------------------------------------------------------------------------
def _date(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d}" if value is not None else "undated"


def _line(block: Block, *, plain: bool = False) -> str:
    """The block's line of the prompt text; a span inside a table shows the table (see :mod:`engine.recall.tables`)
    unless ``plain``."""
    when = _date(block.at)
    if block.kind == "fact":
        quote = block.evidence[0].text if block.evidence else ""
        quote = quote if len(quote) <= 160 else quote[:157] + "…"
        return f"- [#{block.id} {when}] {block.content}" + (f' — "{quote}"' if quote else "")
    if block.kind == "event":
        text = block.content if len(block.content) <= 300 else block.content[:297] + "…"
        if block.meta.get("earlier"):
            # what it said has since changed: an earlier state, never the current answer
            text = f"(earlier, until {block.meta['earlier']}) {text}"
        return f"- [#{block.id} {when}] {text}"
    if block.kind == "episode":
        return f"- [episode #{block.id} {when}] {block.content}"
    if block.kind == "conflict":
        return f"- [conflict #{block.id} {when}] {block.content}"
    if block.kind == "understanding":
        about = " & ".join(block.meta.get("subjects", []))
        return f"- [understanding #{block.id} {when}] ({about}) {block.content}"
    where = block.meta.get("document", "document")
    if block.meta.get("section"):
        where += f" › {block.meta['section']}"
    if block.meta.get("page_start"):
        where += f" (p. {block.meta['page_start']})"
    table = block.meta.get("table")
    if table and not plain:
        text = str(table["text"])
    else:
        text = block.content if len(block.content) <= 600 else block.content[:597] + "…"
    return f"- [#{block.id} {where}] ({when}) {text}"


class _Sheet:
    """The prompt text being written under a token budget: titled sections whose lines are taken only while they
    fit, the length counted exactly as it grows (the header, section titles and line breaks included)."""

    TITLES = ("Background", "Relevant", "Ask the user", "Documents")

    def __init__(self, header: str, budget: int) -> None:
        self.header = header
        self.budget = budget
        self.sections: dict[str, list[str]] = {title: [] for title in self.TITLES}
        self.carried: dict[str, list[tuple[str, int]]] = {title: [] for title in self.TITLES}
        self.chars = len(header)

    def cost(self, section: str, line: str) -> int:
        """Characters ``line`` adds to the text: a line break, and the section title before its first line."""
        return len(line) + 1 + (0 if self.sections[section] else len(section) + 2)

    def fits(self, extra: int) -> bool:
        return math.ceil((self.chars + extra) / 4) <= self.budget

    @contextlib.contextmanager
    def capped(self, tokens: int) -> Iterator[None]:
        """Lines taken inside the block fit ``tokens`` in all (never more than the budget)."""
        budget = self.budget
        self.budget = min(budget, tokens)
        try:
            yield
        finally:
            self.budget = budget

    def take(self, section: str, line: str, block: Block | None = None) -> bool:
        """Add ``line`` (standing for ``block``) to ``section`` if it fits; whether it did."""
        extra = self.cost(section, line)
        if not self.fits(extra):
            return False
        self.sections[section].append(line)
        if block is not None:
            self.carried[section].append((block.kind, block.id))
        self.chars += extra
        return True

    def context(self) -> LLMContext:
        parts = [self.header]
        for title, lines in self.sections.items():
            if lines:
                parts.append(f"{title}:")
                parts.extend(lines)
        text = "\n".join(parts)
        return LLMContext(text, tokens(text), tuple(item for t in self.sections for item in self.carried[t]))


def _render(
    analysis: QueryAnalysis,
    reference: datetime,
    documents_degraded: bool,
    background: list[Block],
    answer: list[Block],
    blocks: list[Block],
    conflicts: list[Block],
    outline: list[Block],
    budget: int,
) -> LLMContext:
    """The prompt text: background (up to 40% of the budget), open conflicts, the pinned document outline, then
    the ranked blocks in order, each line only while it fits the budget.

    The budget is kept exactly: the text's length is counted as it grows (the header, the status marker, section
    titles and line breaks included), so the token estimate of the finished text never exceeds it.
    """
    header = f"Memory context (as of {reference:%Y-%m-%d}; cite items by #id)."
    if documents_degraded:
        # distillations are still being made: the model should know it sees raw passages only
        header += "\n" + DEGRADED_MARKER
    sheet = _Sheet(header, budget)
    shown: set[int] = set()
    for block in background:
        if sheet.chars / 4 > budget * 0.4 or not sheet.take("Background", _line(block), block):
            break
        shown.add(block.id)
    for block in conflicts:
        sheet.take("Ask the user", _line(block), block)
    floor = RELEVANT_FLOOR * max((b.score for b in blocks if b.kind != "understanding"), default=0.0)
    outline_ids = {b.id for b in outline}
    ranked: list[Block] = []
    seen = shown | outline_ids
    for block in [*answer, *blocks]:
        if block.id not in seen and _worth_a_line(block, floor, answer, analysis):
            seen.add(block.id)
            ranked.append(block)
    room = budget
    if analysis.keywords and outline:
        # a question needs room for the passages that answer it: they keep what they take, up to all the budget
        # but OUTLINE_SHARE; an empty query asks for the outline itself
        room -= min(_tokens_wanted(ranked), math.floor(budget * (1 - OUTLINE_SHARE)))
    with sheet.capped(room):
        _render_outline(sheet, outline)
    shown |= outline_ids
    whole_tables: set[int] = set()  # tables shown whole: a later span of one adds nothing
    for block in ranked:
        table = _table_of(block)
        if table and table["id"] in whole_tables:
            continue
        section = _section_of(block)
        if sheet.take(section, _line(block), block):
            shown.add(block.id)
            if table and table["whole"]:
                whole_tables.add(table["id"])
        elif table and sheet.take(section, _line(block, plain=True), block):
            shown.add(block.id)  # the table is too long for what is left of the budget: the span alone
    return sheet.context()


def _table_of(block: Block) -> dict[str, Any] | None:
    """The table a span block shows (:mod:`engine.recall.tables`), if any."""
    table = block.meta.get("table") if block.kind == "span" else None
    return table if isinstance(table, dict) else None


def _section_of(block: Block) -> str:
    return "Documents" if block.kind in ("span", "section", "document") else "Relevant"


def _tokens_wanted(ranked: Sequence[Block]) -> int:
    """The tokens the ranked blocks' lines take together (a table shown whole once), their section titles
    included."""
    chars, tables, sections = 0, set(), set()
    for block in ranked:
        table = _table_of(block)
        if table and table["id"] in tables:
            continue
        if table and table["whole"]:
            tables.add(table["id"])
        chars += len(_line(block)) + 1
        sections.add(_section_of(block))
    return math.ceil((chars + sum(len(s) + 2 for s in sections)) / 4)


def _render_outline(sheet: _Sheet, outline: list[Block]) -> None:
    """The pinned outline, whole if it fits; else as much as fits beside a note saying how much is missing."""
    lines = [(_line(b), b) for b in outline]
    whole = sum(len(line) + 1 for line, _b in lines) + (len("Documents") + 2 if lines else 0)
    trimmed = not sheet.fits(whole)
    for position, (line, block) in enumerate(lines):
        if trimmed:
            note = _outline_note(len(lines) - position, len(lines))
            if not sheet.fits(sheet.cost("Documents", line) + len(note) + 1):
                sheet.take("Documents", note)
                break
        sheet.take("Documents", line, block)


def _worth_a_line(block: Block, floor: float, answer: list[Block], analysis: QueryAnalysis) -> bool:
    """Whether a ranked block goes into the text: injected and not left out, above the floor (padding far below the
    best hit stays out, unless spared), and, for a fact, of a standing that may be injected."""
    if not block.meta.get("injected") or block.meta.get("left_out"):
        return False
    if block.score < floor and not _spared(block, answer, analysis):
        return False
    return not (block.kind == "fact" and block.meta.get("standing") not in INJECTABLE)


def _spared(block: Block, answer: list[Block], analysis: QueryAnalysis) -> bool:
    """Items the floor under the ranked tail does not apply to: the answer facts; an understanding (placed after the
    ten best, not ranked, so its score says nothing); and, for a personal slot question, a turn labelled as an
    earlier state of that very slot — its history ("where did I live before?"), which the label keeps from
    misleading."""
    if block.kind == "understanding" or block in answer:
        return True
    return bool(block.meta.get("slot_history"))


def _outline_note(missing: int, total: int) -> str:
    """Said in the text when the token budget cut the pinned outline short."""
    return f"({missing} of {total} distillations of this document left out to fit the token budget.)"
