"""Assembly (DESIGN §5 step 4): ranked anchors → blocks → the prompt-ready ``llm_context``.

Injection rules: only facts of standing ``working``/``fact`` are injected as facts; ``candidate`` facts appear in
``blocks`` (search, GUI) but never in the text; ``quarantine`` never leaves the store; ``challenged`` facts appear
as a conflict block phrased as something to ask the user.  Hot facts are always in ``background_context``.

``llm_context.text`` is deterministic for the same vault and request: fixed section order, ties broken by id, and
no clock other than the request's reference time.  Every line cites its item's id and date.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.facts.model import FACT_COLUMNS, FACT_FROM, Fact, fact_from_row
from engine.recall.analyze import QueryAnalysis
from engine.recall.hydrate import TURN_COLUMNS, EpisodeRow, SpanRow, Turn, neighbour_turns, turn_from_row
from engine.recall.types import Block, Evidence, LLMContext, RecallRequest, RecallResult, Routing, Turn as HistoryTurn
from engine.store import Reader

INJECTABLE = frozenset({"working", "fact"})
HISTORY_TURNS = 12
BACKGROUND_LIMIT = 20
WORKING_LIMIT = 10
ANSWER_FACTS = 3
NEIGHBOUR_BLOCKS = 5
SHORT_TURN = 90


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
    strategy: str,
    documents: Any,
) -> Parts:
    """Turn ranked anchors into blocks and text."""
    blocks: list[Block] = []
    challenged: list[Fact] = []
    for position, anchor in enumerate(anchors):
        block = _block(store, anchor, hydrated, with_neighbours=position < NEIGHBOUR_BLOCKS)
        if block is None:
            continue
        blocks.append(block)
        for _score, fact_id in anchor.facts:
            fact = hydrated["fact"].get(fact_id)
            if fact is not None and fact.standing == "challenged":
                challenged.append(fact)
    background = _background(store, request)
    background_ids = {b.id for b in background}
    fact_blocks = [b for b in blocks if b.kind == "fact"]
    # a hot fact the query asks about is an answer too (the text still shows it once, under Background)
    answer = [b for b in fact_blocks if b.meta.get("injected")][:ANSWER_FACTS]
    supporting = [b for b in fact_blocks if b not in answer and b.id not in background_ids]
    conflicts = _conflicts(store, request, challenged)
    docs = [b for b in blocks if b.kind in ("span", "section", "document")]
    working = _working(store, request)
    history = _history(store, request)
    context = _render(analysis, reference, strategy, background, answer, blocks, conflicts, docs, budget)
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
def _block(store: Reader, anchor: Any, hydrated: dict[str, dict[int, Any]], *, with_neighbours: bool) -> Block | None:
    kind, object_id = anchor.key
    channels = tuple(sorted(anchor.channels))
    score = round(anchor.score, 6)
    best = hydrated["fact"].get(anchor.facts[0][1]) if anchor.facts else None
    if kind == "event":
        turn: Turn | None = hydrated["event"].get(object_id)
        if turn is None:
            return None
        evidence = [_turn_evidence(turn, best)]
        if with_neighbours and (len(turn.content) < SHORT_TURN or turn.content.rstrip().endswith("?")):
            evidence += [_turn_evidence(t, None) for t in neighbour_turns(store, turn)]
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
        ev = Evidence(span.text, "span", span.id, None, None, span.start_char, span.end_char)
        if best is not None:
            meta.update(_fact_meta(best))
            return Block(
                "fact", best.id, best.statement, score, (best.id, span.id), (ev,), best.valid_from, channels, meta
            )
        return Block("span", span.id, span.text, score, (span.id, span.document_id), (ev,), None, channels, meta)
    extra = hydrated.get(kind, {}).get(object_id)
    if extra is not None and isinstance(extra, Block):
        return Block(
            extra.kind, extra.id, extra.content, score, extra.source_ids, extra.evidence, extra.at, channels, extra.meta
        )
    return None


def _fact_meta(fact: Fact) -> dict[str, Any]:
    return {
        "subject": fact.subject,
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


def _background(store: Reader, request: RecallRequest) -> list[Block]:
    rows = store.query(
        f"SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE f.user_id = ? AND f.tier = 'hot' AND f.status = 'active' "
        "AND f.standing IN ('working', 'fact') ORDER BY f.importance DESC, f.updated_at DESC, f.id LIMIT ?",
        (request.user_id, BACKGROUND_LIMIT),
    )
    return [_fact_block(fact_from_row(r), 1.0, "hot") for r in rows]


def _working(store: Reader, request: RecallRequest) -> list[Block]:
    rows = store.query(
        f"SELECT {FACT_COLUMNS} FROM facts f INDEXED BY facts_conversation JOIN subjects s ON s.id = f.subject_id "
        "WHERE f.user_id = ? AND f.conversation_id = ? AND f.status IN ('active', 'contested') "
        "AND f.standing != 'quarantine' "
        "ORDER BY f.recorded_at DESC, f.id DESC LIMIT ?",
        (request.user_id, request.conversation_id, WORKING_LIMIT),
    )
    return [_fact_block(fact_from_row(r), 1.0, "conversation") for r in rows]


def _history(store: Reader, request: RecallRequest) -> list[HistoryTurn]:
    rows = store.query(
        f"SELECT {TURN_COLUMNS} FROM events WHERE user_id = ? AND conversation_id = ? AND role != 'system' "
        "ORDER BY occurred_at DESC, id DESC LIMIT ?",
        (request.user_id, request.conversation_id, HISTORY_TURNS),
    )
    turns = [turn_from_row(r) for r in reversed(rows)]
    return [HistoryTurn(t.id, t.role, t.author, t.content, t.at, t.status) for t in turns]


def _conflicts(store: Reader, request: RecallRequest, challenged: list[Fact]) -> list[Block]:
    fact_ids = sorted({f.id for f in challenged})
    if not fact_ids:
        return []
    marks = ",".join("?" * len(fact_ids))
    rows = store.query(
        f"SELECT c.id, c.fact_a, c.fact_b, c.created_at FROM conflicts c WHERE c.status = 'open' AND c.user_id = ? "
        f"AND (c.fact_a IN ({marks}) OR c.fact_b IN ({marks})) ORDER BY c.id",
        (request.user_id, *fact_ids, *fact_ids),
    )
    blocks = []
    for conflict_id, fact_a, fact_b, _created in rows:
        facts = {
            int(r[0]): fact_from_row(r)
            for r in store.query(f"SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE f.id IN (?, ?)", (fact_a, fact_b))
        }
        a, b = facts.get(int(fact_a)), facts.get(int(fact_b))
        if a is None or b is None:
            continue
        text = (
            f"Unsure: {a.statement} ({_date(a.recorded_at)}) or {b.object_text} ({_date(b.recorded_at)})? "
            f"Ask the user which is right."
        )
        evidence = tuple(
            Evidence(f.source_text, "event" if f.event_id else "manual", f.event_id, f.recorded_at) for f in (a, b)
        )
        blocks.append(
            Block(
                "conflict",
                int(conflict_id),
                text,
                1.0,
                (a.id, b.id),
                evidence,
                None,
                ("conflicts",),
                {"fact_a": a.id, "fact_b": b.id, "injected": True},
            )
        )
    return blocks


# -- text ---------------------------------------------------------------------------------------------------------
def _date(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d}" if value is not None else "undated"


def _line(block: Block) -> str:
    when = _date(block.at)
    if block.kind == "fact":
        quote = block.evidence[0].text if block.evidence else ""
        quote = quote if len(quote) <= 160 else quote[:157] + "…"
        return f"- [#{block.id} {when}] {block.content}" + (f' — "{quote}"' if quote else "")
    if block.kind == "event":
        text = block.content if len(block.content) <= 300 else block.content[:297] + "…"
        return f"- [#{block.id} {when}] {text}"
    if block.kind == "episode":
        return f"- [episode #{block.id} {when}] {block.content}"
    if block.kind == "conflict":
        return f"- [conflict #{block.id}] {block.content}"
    where = block.meta.get("document", "document")
    if block.meta.get("section"):
        where += f" › {block.meta['section']}"
    if block.meta.get("page_start"):
        where += f" (p. {block.meta['page_start']})"
    text = block.content if len(block.content) <= 600 else block.content[:597] + "…"
    return f"- [#{block.id} {where}] {text}"


def _render(
    analysis: QueryAnalysis,
    reference: datetime,
    strategy: str,
    background: list[Block],
    answer: list[Block],
    blocks: list[Block],
    conflicts: list[Block],
    documents: list[Block],
    budget: int,
) -> LLMContext:
    header = f"Memory context (as of {reference:%Y-%m-%d}; cite items by #id)."
    sections: dict[str, list[str]] = {"Background": [], "Relevant": [], "Ask the user": [], "Documents": []}
    used = tokens(header) + 12  # section titles
    if strategy.endswith(" (degraded)"):
        # distillations are still being made: the model should know it sees raw passages only
        header += "\n[DOCUMENT UNDERSTANDING STATUS: DEGRADED]"

    def take(section: str, block: Block) -> bool:
        nonlocal used
        line = _line(block)
        cost = tokens(line) + 1
        if used + cost > budget:
            return False
        sections[section].append(line)
        used += cost
        return True

    background_cap = budget * 0.4
    for block in background:
        if used > background_cap or not take("Background", block):
            break
    for block in conflicts:
        take("Ask the user", block)
    shown = {b.id for b in background}
    for block in [*answer, *blocks]:
        if block.id in shown or not block.meta.get("injected"):
            continue
        if block.kind == "fact" and block.meta.get("standing") not in INJECTABLE:
            continue
        section = "Documents" if block.kind in ("span", "section", "document") else "Relevant"
        if take(section, block):
            shown.add(block.id)
    parts = [header]
    for title, lines in sections.items():
        if lines:
            parts.append(f"{title}:")
            parts.extend(lines)
    text = "\n".join(parts)
    return LLMContext(text, tokens(text))
