"""Understanding blocks (DESIGN §3a, §5): a subject named in a question brings its understanding, expanded to its
evidence.

An understanding is what a subject's scattered facts and observations add up to — the picture a multi-hop question
("what do Ana's hobbies have in common?") needs and no single turn holds.  For a question that gathers across a
subject's history (:func:`gathers`), recall shows the active single-subject understanding of each subject the
question names (and the relationship of two named subjects), and expands it to the turns it was made from that bear
on the question: its cited facts whose predicate the question asks about or whose words it shares come first, turns
the ranked blocks already hold are left out.  So the block earns its place by the
turns it leads to — the evidence-recall benchmark scores it by exactly those — and a model reading the context sees
the synthesis beside its sources.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from engine.recall.porter import stem
from engine.recall.types import Block, Evidence
from engine.temporal import from_epoch

#: Understandings one recall shows (named subjects beyond are rare and each adds a block).
MAX_UNDERSTANDINGS = 2
#: Turns one understanding is expanded to.
EVIDENCE_TURNS = 2
#: Characters of an understanding's text shown in the context.
SHOWN_CHARS = 480
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be did do does for from has have how i in is it its me my of on or she he her his "
    "the their them they this to was were what when where which who whom why will with would you your".split()
)


#: A question that gathers across a subject's history rather than asking for one fact: "what books has Ana
#: read?", "where has she camped?", "what activities does he do?", "how many times…", "what do both…".
_GATHERING = re.compile(
    r"\b(how many|both|in common|ever|in what ways|what ways)\b"
    r"|^\s*(what|which|where|who)\s+(\w+\s+)?(has|have)\b"
    r"|^\s*(what|which)\s+(kinds? of |types? of )?\w+s\s+(has|have|does|do|did|are|were|is)\b",
    re.IGNORECASE,
)


def gathers(query: str) -> bool:
    """Whether ``query`` asks for what several turns add up to — the questions an understanding answers better
    than the best single turn (a one-fact question keeps its ranked turns in front)."""
    return bool(_GATHERING.search(query))


def _words(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def _subject_ids(q: Any, user_id: str, names: Iterable[str]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for name in names:
        if name.startswith("user"):
            continue  # the vault's owner: every fact is theirs, no single picture helps
        row = q.execute(
            "SELECT id, name FROM subjects WHERE user_id = ? AND name = ? COLLATE NOCASE AND merged_into IS NULL",
            (user_id, name),
        ).first()
        if row is not None and int(row[0]) not in {i for i, _ in found}:
            found.append((int(row[0]), str(row[1])))
    return found


def _active(q: Any, user_id: str, kind: str, subject_ids: Sequence[int]) -> Any:
    tagged = "".join(
        f" AND EXISTS (SELECT 1 FROM understanding_subjects us WHERE us.understanding_id = u.id "
        f"AND us.subject_id = {int(s)})"
        for s in subject_ids
    )
    return q.execute(
        "SELECT u.id, u.kind, u.title, u.summary, u.content, u.created_at FROM understandings u "
        f"WHERE u.user_id = ? AND u.kind = ? AND u.status = 'active' AND u.superseded_by IS NULL{tagged} "
        "ORDER BY u.created_at DESC, u.id DESC LIMIT 1",
        (user_id, kind),
    ).first()


def _evidence(
    q: Any, understanding_id: int, asked: set[str], predicates: set[str], shown: set[int]
) -> list[tuple[int, str | None, Evidence]]:
    """The turns an understanding cites (through its facts or directly), those bearing on the question first."""
    rows = q.execute(
        "SELECT e.id, e.external_id, e.content, e.occurred_at, e.author, f.predicate, f.statement, f.importance "
        "FROM understanding_sources s JOIN facts f ON f.id = s.object_id JOIN events e ON e.id = f.event_id "
        "WHERE s.understanding_id = ? "
        "UNION ALL "
        "SELECT e.id, e.external_id, e.content, e.occurred_at, e.author, '', '', 0.5 "
        "FROM understanding_sources s JOIN events e ON e.id = s.object_id WHERE s.understanding_id = ?",
        (understanding_id, understanding_id),
    ).fetchall()
    best: dict[int, tuple[float, Any]] = {}
    for row in rows:
        event_id = int(row[0])
        if event_id in shown:
            continue
        overlap = len(asked & _words(f"{row[6]} {row[2]}"))
        bearing = 2.0 * (str(row[5]) in predicates) + overlap
        if bearing <= 0:
            continue
        rank = bearing + 0.1 * float(row[7] or 0)
        if event_id not in best or rank > best[event_id][0]:
            best[event_id] = (rank, row)
    chosen = sorted(best.values(), key=lambda kv: (-kv[0], -float(kv[1][3])))[:EVIDENCE_TURNS]
    return [
        (
            int(row[0]),
            None if row[1] is None else str(row[1]),
            Evidence(
                text=str(row[2])[:300],
                source_kind="event",
                source_id=int(row[0]),
                at=from_epoch(float(row[3])),
                author=None if row[4] is None else str(row[4]),
            ),
        )
        for _, row in chosen
    ]


def understanding_blocks(
    q: Any,
    *,
    user_id: str,
    subjects: Sequence[str],
    query: str,
    predicates: Sequence[str],
    shown_events: set[int],
    score: float,
) -> list[Block]:
    """The understanding blocks of the subjects ``subjects`` names, each expanded to the turns it was made from that
    bear on ``query`` and are not among ``shown_events`` already; none when no understanding has such a turn."""
    named = _subject_ids(q, user_id, subjects)
    if not named:
        return []
    wanted: list[tuple[str, list[tuple[int, str]]]] = []
    if len(named) >= 2:
        wanted.append(("relationship", named[:2]))
    wanted += [("single_subject", [one]) for one in named[:MAX_UNDERSTANDINGS]]
    names_words = set().union(*(_words(name) for _, name in named))
    asked = _words(query) - names_words
    blocks: list[Block] = []
    shown = set(shown_events)
    for kind, group in wanted:
        if len(blocks) >= MAX_UNDERSTANDINGS:
            break
        row = _active(q, user_id, kind, [i for i, _ in group])
        if row is None:
            continue
        turns = _evidence(q, int(row[0]), asked, set(predicates), shown)
        if not turns:
            continue
        shown.update(event_id for event_id, _, _ in turns)
        summary, content = str(row[3]), str(row[4])
        text = content if len(content) <= SHOWN_CHARS else content[: SHOWN_CHARS - 1] + "…"
        blocks.append(
            Block(
                kind="understanding",
                id=int(row[0]),
                content=f"{summary}: {text}" if summary else text,
                score=score,
                source_ids=tuple(event_id for event_id, _, _ in turns),
                evidence=tuple(evidence for _, _, evidence in turns),
                at=_when(row[5]),
                channels=("understanding",),
                meta={
                    "understanding_kind": kind,
                    "subjects": [name for _, name in group],
                    "title": str(row[2]),
                    "evidence_external_ids": [external for _, external, _ in turns],
                    "injected": True,
                },
            )
        )
    return blocks


def _when(value: Any) -> datetime | None:
    return None if value is None else from_epoch(float(value))
