"""Consolidation: turning a subject's scattered evidence into one current understanding, pass by pass.

A pass starts a new generation and touches only what changed since the last pass (evidence recorded after it):
each subject with new observations or facts gets a single-subject understanding, then each pair of subjects whose
shared evidence changed and holds at least :data:`MIN_PAIR_SHARED` items gets a relationship understanding.  The
work is linear in what changed, never in the size of the vault.

Without a model the text is an *extractive synthesis*: the subject's current facts (most important first) and its
newest observations, deduplicated, each line citing the id it came from — so the layer is useful offline and every
line can be traced.  With a model, the model rewrites that draft (it sees only the draft, so it cannot add what the
evidence does not hold); if it fails, the draft stands and the pass says so.  An understanding whose text would not
change is not revised.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from engine.ai.llm import LLM
from engine.prompts import load_prompt
from engine.store import Tx, chunked
from engine.workspace.model import ConsolidationReport
from engine.workspace.rows import current_generation

log = logging.getLogger(__name__)

MIN_SUBJECT_ITEMS = 1  # evidence items a subject needs for an understanding of its own
MIN_PAIR_SHARED = 3  # shared items two subjects need for a relationship understanding
MAX_FACT_LINES = 12  # lines of facts in a draft; facts saying the same of different objects share one
FACTS_PER_LINE = 6
FACT_POOL = 200  # a subject's most important facts a draft is made from
_CITATION = re.compile(r" \[#\d+\]")
MAX_OBSERVATION_LINES = 6
_LAST_PASS_KEY = "workspace.consolidated_at:"

#: Rewrites an extractive draft: (kind, title, draft) → text.  Raises when the model cannot answer.
Rewriter = Callable[[str, str, str], str]


@dataclass(frozen=True, slots=True)
class Draft:
    """The text of one understanding to write, and the ids it cites."""

    kind: str
    subject_ids: tuple[int, ...]
    title: str
    summary: str
    content: str
    sources: tuple[int, ...]


@dataclass(slots=True)
class PassResult:
    """What one consolidation pass did."""

    generation: int
    subjects_written: list[str] = field(default_factory=list)
    relationships_written: list[tuple[str, str]] = field(default_factory=list)
    unchanged: int = 0
    writer: str = "extractive"
    warnings: list[str] = field(default_factory=list)


def last_pass_at(q: Any, user_id: str) -> float:
    """When the last pass for ``user_id`` ran (epoch seconds; 0 before the first)."""
    row = q.execute("SELECT value FROM meta WHERE key = ?", (_LAST_PASS_KEY + user_id,)).first()
    return float(row[0]) if row is not None else 0.0


def mark_pass(tx: Tx, user_id: str) -> None:
    """Record that a pass ran now."""
    tx.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (_LAST_PASS_KEY + user_id, repr(tx.now)),
    )


def changed_subjects(q: Any, user_id: str, since: float) -> set[int]:
    """Subjects with evidence recorded after ``since``: new observations tagged with them, facts about or tagged
    with them that were stored or changed."""
    rows = q.execute(
        "SELECT os.subject_id FROM observations o JOIN observation_subjects os ON os.observation_id = o.id "
        "WHERE o.user_id = ?1 AND o.created_at > ?2 "
        "UNION SELECT f.subject_id FROM facts f WHERE f.user_id = ?1 AND f.updated_at > ?2 "
        "UNION SELECT fs.subject_id FROM facts f JOIN fact_subjects fs ON fs.fact_id = f.id "
        "WHERE f.user_id = ?1 AND f.updated_at > ?2",
        (user_id, since),
    ).fetchall()
    live: set[int] = set()
    for chunk in chunked(sorted({int(r[0]) for r in rows})):
        marks = ",".join("?" * len(chunk))
        live.update(
            int(r[0])
            for r in q.execute(
                f"SELECT id FROM subjects WHERE id IN ({marks}) AND merged_into IS NULL", tuple(chunk)
            ).fetchall()
        )
    return live


def changed_pairs(q: Any, user_id: str, since: float) -> set[tuple[int, int]]:
    """Pairs of subjects that share an item (observation or fact) recorded or changed after ``since``."""
    pairs: set[tuple[int, int]] = set()
    for sql in (
        "SELECT o.id, os.subject_id FROM observations o JOIN observation_subjects os ON os.observation_id = o.id "
        "WHERE o.user_id = ? AND o.created_at > ?",
        "SELECT f.id, fs.subject_id FROM facts f JOIN fact_subjects fs ON fs.fact_id = f.id "
        "WHERE f.user_id = ? AND f.updated_at > ? AND f.status = 'active'",
    ):
        tags: dict[int, set[int]] = {}
        for item, subject in q.execute(sql, (user_id, since)).fetchall():
            tags.setdefault(int(item), set()).add(int(subject))
        for subjects in tags.values():
            pairs.update(combinations(sorted(subjects), 2))
    return pairs


def subject_draft(q: Any, subject_id: int) -> Draft | None:
    """The extractive synthesis of one subject, or None when it has no evidence."""
    name = str(q.execute("SELECT name FROM subjects WHERE id = ?", (subject_id,)).scalar())
    facts = q.execute(
        "SELECT f.id, f.statement, f.object_text FROM facts f WHERE f.status = 'active' "
        "AND f.standing != 'quarantine' AND "
        "(f.subject_id = ?1 OR f.id IN (SELECT fact_id FROM fact_subjects WHERE subject_id = ?1)) "
        "ORDER BY f.importance DESC, f.updated_at DESC, f.id LIMIT ?2",
        (subject_id, FACT_POOL),
    ).fetchall()
    observations = q.execute(
        "SELECT o.id, o.content FROM observations o JOIN observation_subjects os ON os.observation_id = o.id "
        "WHERE os.subject_id = ? ORDER BY o.observed_at DESC, o.id DESC LIMIT ?",
        (subject_id, MAX_OBSERVATION_LINES),
    ).fetchall()
    return _draft("single_subject", (subject_id,), name, facts, observations)


def pair_draft(q: Any, a: int, b: int) -> Draft | None:
    """The extractive synthesis of what subjects ``a`` and ``b`` share, or None below :data:`MIN_PAIR_SHARED`."""
    names = [str(q.execute("SELECT name FROM subjects WHERE id = ?", (s,)).scalar()) for s in (a, b)]
    facts = q.execute(
        "SELECT f.id, f.statement, f.object_text FROM facts f WHERE f.status = 'active' "
        "AND f.standing != 'quarantine' AND f.id IN "
        "(SELECT x.fact_id FROM fact_subjects x JOIN fact_subjects y ON y.fact_id = x.fact_id "
        "WHERE x.subject_id = ? AND y.subject_id = ?) ORDER BY f.importance DESC, f.updated_at DESC LIMIT ?",
        (a, b, FACT_POOL),
    ).fetchall()
    observations = q.execute(
        "SELECT o.id, o.content FROM observations o WHERE o.id IN (SELECT x.observation_id FROM "
        "observation_subjects x JOIN observation_subjects y ON y.observation_id = x.observation_id "
        "WHERE x.subject_id = ? AND y.subject_id = ?) ORDER BY o.observed_at DESC, o.id DESC LIMIT ?",
        (a, b, MAX_OBSERVATION_LINES),
    ).fetchall()
    if len(facts) + len(observations) < MIN_PAIR_SHARED:
        return None
    return _draft("relationship", (a, b), " & ".join(names), facts, observations)


def _draft(
    kind: str, subject_ids: tuple[int, ...], title: str, facts: Sequence[Any], observations: Sequence[Any]
) -> Draft | None:
    # each kind of evidence has its own share of lines: a subject with many facts still shows its newest
    # observations (and a new observation changes the text, so the pass revises the understanding)
    lines, sources = _fact_lines(facts)
    seen: set[str] = set()
    taken = 0
    for object_id, text in observations:
        clean = " ".join(str(text).split())
        key = clean.casefold().rstrip(".")
        if not clean or key in seen:
            continue
        if taken >= MAX_OBSERVATION_LINES:
            break
        seen.add(key)
        taken += 1
        lines.append(f"- {clean} [#{int(object_id)}]")
        sources.append(int(object_id))
    if len(sources) < MIN_SUBJECT_ITEMS:
        return None
    headline = "; ".join(_CITATION.sub("", line[2:]).rstrip(".") for line in lines[:3])
    summary = f"{title}: {headline}"[:300]
    return Draft(kind, subject_ids, title, summary, "\n".join(lines), tuple(sources))


def _fact_lines(facts: Sequence[Any]) -> tuple[list[str], list[int]]:
    """The facts as lines, most important first: facts saying the same thing of different objects share a line
    ("Ana loves hiking [#1]; jazz [#2]"), so the draft's few lines cover many facts — a subject's picture, not its
    first dozen statements — and every object keeps the id it came from."""
    groups: dict[str, tuple[str, list[tuple[int, str]]]] = {}
    for fact_id, statement, object_text in facts:
        clean = " ".join(str(statement).split()).rstrip(".")
        obj = " ".join(str(object_text or "").split())
        if not clean:
            continue
        if obj and len(clean) > len(obj) and clean.casefold().endswith(obj.casefold()):
            label, part = clean[: -len(obj)].rstrip(" :"), clean[-len(obj) :]
        else:
            label, part = clean, ""
        group = groups.setdefault(label.casefold(), (label, []))
        if part.casefold() not in {p.casefold() for _, p in group[1]}:
            group[1].append((int(fact_id), part))
    lines: list[str] = []
    sources: list[int] = []
    for label, parts in list(groups.values())[:MAX_FACT_LINES]:
        shown = parts[:FACTS_PER_LINE]
        if len(shown) == 1 and not shown[0][1]:
            lines.append(f"- {label} [#{shown[0][0]}]")
        else:
            lines.append(f"- {label} " + "; ".join(f"{part} [#{fact_id}]" for fact_id, part in shown))
        sources += [fact_id for fact_id, _ in shown]
    return lines, sources


def rewrite(draft: Draft, rewriter: Rewriter | None, result: PassResult) -> str:
    """The draft's text as the model writes it, or the draft itself (without a model, or when it fails)."""
    if rewriter is None:
        return draft.content
    try:
        text = rewriter(draft.kind, draft.title, draft.content).strip()
    except Exception as exc:  # a model that is down (ModelUnavailable) or answers badly never loses the pass
        result.warnings.append(f"{draft.title}: the model did not answer ({type(exc).__name__}); kept the draft")
        log.warning("consolidation of %s fell back to the extractive draft: %s", draft.title, type(exc).__name__)
        return draft.content
    if not text:
        result.warnings.append(f"{draft.title}: the model's text was empty; kept the draft")
        return draft.content
    return text


def similar_names(names: Sequence[tuple[int, str, Sequence[str]]], name: str, *, threshold: float) -> list[Any]:
    """(subject id, name, score) of the subjects whose name or alias looks like ``name``, best first."""
    wanted = name.casefold()
    wanted_words = set(wanted.split())
    out: list[tuple[int, str, float]] = []
    for subject_id, other, aliases in names:
        best = 0.0
        for candidate in (other, *aliases):
            low = candidate.casefold()
            if low == wanted:
                continue
            score = difflib.SequenceMatcher(None, wanted, low).ratio()
            words = set(low.split())
            if wanted_words and words and (wanted_words <= words or words <= wanted_words):
                score = max(score, 0.85)  # "Bob" and "Bob Smith"
            best = max(best, score)
        if best >= threshold:
            out.append((subject_id, other, round(best, 3)))
    return sorted(out, key=lambda t: (-t[2], t[1].casefold()))


def summary_words(summary: str) -> set[str]:
    """The content words of a summary, for the overlap of two subjects' summaries."""
    return {w for w in "".join(c if c.isalnum() else " " for c in summary.casefold()).split() if len(w) > 3}


def jaccard(a: set[str], b: set[str]) -> float:
    """Overlap of two word sets."""
    return len(a & b) / len(a | b) if a and b else 0.0


def aliases_of(raw: str | None) -> list[str]:
    """A subject's aliases from its JSON column."""
    return [str(a) for a in json.loads(raw or "[]")]


def report(snap: Any, user_id: str, limit: int) -> ConsolidationReport:
    """What consolidation should look at (see :meth:`engine.workspace.Workspace.consolidation_report`), read from
    ``snap``."""
    limit = max(1, min(int(limit), 500))
    needing = [
        (str(r[0]), int(r[1]))
        for r in snap.execute(
            "SELECT s.name, (SELECT COUNT(*) FROM facts f WHERE f.subject_id = s.id AND f.status = 'active') "
            "+ (SELECT COUNT(*) FROM observation_subjects os WHERE os.subject_id = s.id) AS n "
            "FROM subjects s WHERE s.user_id = ? AND s.merged_into IS NULL AND NOT EXISTS ("
            "SELECT 1 FROM understandings u JOIN understanding_subjects us ON us.understanding_id = u.id "
            "WHERE us.subject_id = s.id AND u.kind = 'single_subject' AND u.superseded_by IS NULL) "
            "AND n >= ? ORDER BY n DESC, s.name LIMIT ?",
            (user_id, 2, limit),
        ).fetchall()
    ]
    stale = [
        int(r[0])
        for r in snap.execute(
            "SELECT u.id FROM understandings u WHERE u.user_id = ?1 AND u.superseded_by IS NULL "
            "AND u.status = 'active' AND u.kind IN ('single_subject', 'relationship') AND EXISTS ("
            "SELECT 1 FROM understanding_subjects us "
            "JOIN observation_subjects os ON os.subject_id = us.subject_id "
            "JOIN observations o ON o.id = os.observation_id WHERE us.understanding_id = u.id "
            "AND o.created_at > u.created_at "
            "UNION ALL SELECT 1 FROM understanding_subjects us JOIN facts f ON f.subject_id = us.subject_id "
            "WHERE us.understanding_id = u.id AND f.updated_at > u.created_at) ORDER BY u.id LIMIT ?2",
            (user_id, limit),
        ).fetchall()
    ]
    shared: dict[tuple[int, int], int] = {}
    for table, column in (("observation_subjects", "observation_id"), ("fact_subjects", "fact_id")):
        for a, b, n in snap.execute(
            f"SELECT x.subject_id, y.subject_id, COUNT(*) FROM {table} x JOIN {table} y "
            f"ON y.{column} = x.{column} AND y.subject_id > x.subject_id "
            "JOIN subjects s ON s.id = x.subject_id "
            "WHERE s.user_id = ? GROUP BY x.subject_id, y.subject_id",
            (user_id,),
        ).fetchall():
            shared[(int(a), int(b))] = shared.get((int(a), int(b)), 0) + int(n)
    written = {
        tuple(sorted(int(x) for x in json.loads(r[0])))
        for r in snap.execute(
            "SELECT (SELECT json_group_array(subject_id) FROM understanding_subjects us "
            "WHERE us.understanding_id = u.id) FROM understandings u WHERE u.user_id = ? "
            "AND u.kind = 'relationship' AND u.superseded_by IS NULL",
            (user_id,),
        ).fetchall()
    }
    names = {
        int(r[0]): (str(r[1]), str(r[2]), aliases_of(r[3]))
        for r in snap.execute(
            "SELECT id, name, summary, aliases FROM subjects WHERE user_id = ? AND merged_into IS NULL",
            (user_id,),
        ).fetchall()
    }
    intersections = [
        (names[a][0], names[b][0], n)
        for (a, b), n in sorted(shared.items(), key=lambda kv: (-kv[1], kv[0]))
        if n >= MIN_PAIR_SHARED and (a, b) not in written and a in names and b in names
    ][:limit]
    with_summary = [(i, summary_words(v[1])) for i, v in names.items() if v[1].strip()]
    dense = []
    for (a, wa), (b, wb) in combinations(with_summary, 2):
        pair = (min(a, b), max(a, b))
        similarity = jaccard(wa, wb)
        if similarity >= 0.3 and shared.get(pair, 0) < MIN_PAIR_SHARED:
            dense.append((names[pair[0]][0], names[pair[1]][0], round(similarity, 3)))
    dense.sort(key=lambda t: -t[2])
    unlinked = [
        int(r[0])
        for r in snap.execute(
            "SELECT o.id FROM observations o WHERE o.user_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM understanding_sources s WHERE s.object_id = o.id) ORDER BY o.id DESC LIMIT ?",
            (user_id, limit),
        ).fetchall()
    ]
    questionable = [
        (int(r[0]), str(r[1]))
        for r in snap.execute(
            "SELECT id, 'observation' FROM observations WHERE user_id = ?1 AND questionable_count > "
            "useful_count UNION ALL SELECT id, 'understanding' FROM understandings WHERE user_id = ?1 "
            "AND superseded_by IS NULL AND questionable_count > useful_count UNION ALL SELECT id, 'fact' "
            "FROM facts WHERE user_id = ?1 AND status = 'active' AND questionable_count > useful_count "
            "LIMIT ?2",
            (user_id, limit),
        ).fetchall()
    ]
    pending = len(changed_subjects(snap, user_id, last_pass_at(snap, user_id)))
    generation = current_generation(snap, user_id)
    return ConsolidationReport(
        generation=generation,
        pending_subjects=pending,
        subjects_needing_understanding=tuple(needing),
        stale_understandings=tuple(stale),
        intersections_needing_synthesis=tuple(intersections),
        dense_intersections=tuple(dense[:limit]),
        unlinked_observations=tuple(unlinked),
        questionable=tuple(questionable),
    )


def model_rewriter(llm: LLM, timeout_s: float) -> tuple[Rewriter, str]:
    """A rewriter asking ``llm`` to turn a draft into prose (the ``consolidate_understanding`` prompt), and the name
    the understandings record as their writer."""
    prompt = load_prompt("consolidate_understanding")
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    def rewrite(kind: str, title: str, draft: str) -> str:
        answer = llm.complete_json(
            prompt.render(kind=kind.replace("_", " "), title=title, draft=draft[:12000]),
            "Answer as JSON.",
            schema,
            timeout_s=timeout_s,
        )
        if not isinstance(answer, dict) or not isinstance(answer.get("text"), str) or not answer["text"].strip():
            raise ValueError("the model's text is missing or empty")
        return str(answer["text"])

    return rewrite, f"{llm.name}@{prompt.hash}"


def due_users(snap: Any, quiet_s: float, now: float) -> list[str]:
    """Users whose newest evidence (an observation, a fact stored or changed) is older than ``quiet_s`` and newer
    than their last pass."""
    due: list[str] = []
    users = [
        str(r[0]) for r in snap.execute("SELECT user_id FROM observations UNION SELECT user_id FROM facts").fetchall()
    ]
    for user_id in users:
        newest = snap.execute(
            "SELECT MAX(t) FROM (SELECT MAX(created_at) AS t FROM observations WHERE user_id = ?1 "
            "UNION ALL SELECT MAX(updated_at) FROM facts WHERE user_id = ?1)",
            (user_id,),
        ).scalar()
        if newest is not None and float(newest) > last_pass_at(snap, user_id) and now - float(newest) >= quiet_s:
            due.append(user_id)
    return due
