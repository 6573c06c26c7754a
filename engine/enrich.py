"""Job handlers: enrichment of events (the fact pipeline) and episode summaries.

Enrichment reads a batch of events, runs the analysis stages outside any transaction (classification, extraction,
embedding — the slow part), then stores every result in one write: match/decide for each event's proposals in
order, the event's vector, its subject tags, its status, and the deletion of its job.  If that write fails, each
event is retried alone so one bad event cannot hold back the others.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from engine.ai.llm import LLM, model_error_text
from engine.episodes import EPISODE_COLUMNS, episode_from_row, extractive_summary
from engine.errors import ModelUnavailable
from engine.events import EVENT_COLUMNS, Event, event_from_row
from engine.facts.decide import Decider
from engine.facts.outcomes import Applied, FactContext
from engine.facts.pipeline import Analysis, Pipeline
from engine.jobs import Job, JobOutcome, each_job, finish_jobs, job_failed
from engine.prompts import load_prompt
from engine.store import Store, Tx, chunked
from engine.subjects import ensure_subject
from engine.temporal import to_epoch
from engine.vectors import VectorIndex, VectorItem
from engine.vectors.migration import queue_vectors

#: How far back a pronoun may look for who it means (see :meth:`Enricher._earlier_messages`).
EARLIER_WINDOW_S = 3600.0

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EnrichmentResult:
    """What enrichment did to one event (used by ``vault.events.extract(learn=True)`` and tests)."""

    event_id: int
    analysis: Analysis
    applied: tuple[Applied, ...]


class Enricher:
    """The ``enrich`` job handler."""

    def __init__(
        self, store: Store, pipeline: Pipeline, decider: Decider, vectors: VectorIndex, llm: Callable[[], LLM | None]
    ) -> None:
        self._store = store
        self._pipeline = pipeline
        self._decider = decider
        self._vectors = vectors
        self._llm = llm

    def __call__(self, jobs: Sequence[Job]) -> list[JobOutcome]:
        """Enrich the events of ``jobs``."""
        events = self._load_events([int(j.payload.get("event_id", 0)) for j in jobs])
        earlier = self._earlier_messages(list(events.values()))
        outcomes: list[JobOutcome] = []
        ready: list[tuple[Job, Event | None, Analysis | None]] = []
        for job in jobs:
            event = events.get(int(job.payload.get("event_id", 0)))
            if event is None or event.status != "queued":
                ready.append((job, None, None))  # forgotten or already done: just finish the job
                outcomes.append(JobOutcome(job.id))
                continue
            try:
                analysis = self.analyse(event, embed=False, earlier=earlier.get(event.id, ()))
            except Exception as exc:
                log.warning("enrichment of event %s failed: %s", event.id, type(exc).__name__)
                outcomes.append(job_failed(job, exc))
                continue
            ready.append((job, event, analysis))
            outcomes.append(JobOutcome(job.id, warnings=list(analysis.warnings)))
        analysed = [a for _j, _e, a in ready if a is not None]
        if analysed:
            try:
                self._pipeline.embed_batch(analysed)
            except ModelUnavailable as exc:
                # the embedder is down: the facts are stored without their vectors, which wait in the backlog for
                # it to come back (engine.vectors.migration) — the rules' facts are never lost to an outage
                note = f"embedder unavailable, vectors queued: {exc.message}"
                for outcome in outcomes:
                    if outcome.error is None:
                        outcome.warnings.append(note)
        if not ready:
            return outcomes
        try:
            self._store.write(lambda tx: self._store_batch(tx, ready))
        except Exception as exc:
            log.warning("batch write failed (%s); retrying events one by one", exc)
            failed = self._write_one_by_one(ready)
            for outcome in outcomes:
                if outcome.job_id in failed:
                    outcome.error = failed[outcome.job_id]
        return outcomes

    def analyse(self, event: Event, *, embed: bool = True, earlier: Sequence[str] | None = None) -> Analysis:
        """The analysis stages for one stored event (its content is already firewalled); ``earlier`` are the
        speaker's messages just before it (looked up when not given, see :meth:`_earlier_messages`)."""
        known = self._known_about(event) if self._llm() is not None else ()
        if earlier is None:
            earlier = self._earlier_messages([event]).get(event.id, ())
        return self._pipeline.analyse(
            event.content,
            role=event.role,
            author=event.author,
            occurred_at=event.occurred_at,
            run_firewall=False,
            source=event.source,
            known=known,
            embed=embed,
            valid_time=event.valid_time,
            earlier=earlier,
        )

    def _earlier_messages(self, events: Sequence[Event]) -> dict[int, tuple[str, ...]]:
        """For each user message of ``events``: the same speaker's last two messages of its conversation in the hour
        before it, oldest first — where a pronoun with nobody to point back to in its own message looks ("wait no,
        his birthday is the 22nd").

        One query per user and batch, not one per event: a read per event, between the analyses of a busy worker,
        cost more in waiting for the interpreter than in SQLite.
        """
        found: dict[int, tuple[str, ...]] = {}
        by_user: dict[str, list[Event]] = {}
        for event in events:
            if event.role == "user" and event.conversation_id:
                by_user.setdefault(event.user_id, []).append(event)
        for user_id, mine in by_user.items():
            times = [to_epoch(e.occurred_at) for e in mine]
            conversations = sorted({e.conversation_id for e in mine})
            history: dict[tuple[str, str | None], list[tuple[float, int, str]]] = {}
            for chunk in chunked(conversations):
                marks = ",".join("?" * len(chunk))
                rows = self._store.query(
                    f"SELECT conversation_id, author, occurred_at, id, content FROM events WHERE user_id = ? "
                    f"AND conversation_id IN ({marks}) AND role = 'user' AND occurred_at >= ? AND occurred_at < ?",
                    (user_id, *chunk, min(times) - EARLIER_WINDOW_S, max(times)),
                )
                for conversation_id, author, occurred_at, event_id, content in rows:
                    key = (str(conversation_id), author)
                    history.setdefault(key, []).append((float(occurred_at), int(event_id), str(content)))
            for said in history.values():
                said.sort()
            for event, at in zip(mine, times, strict=True):
                said = history.get((event.conversation_id, event.author), [])
                before = [content for when, _id, content in said if at - EARLIER_WINDOW_S <= when < at]
                if before:
                    found[event.id] = tuple(before[-2:])
        return found

    def store(
        self,
        tx: Tx,
        event: Event,
        analysis: Analysis,
        *,
        event_vectors: list[VectorItem] | None = None,
        status: str | None = None,
    ) -> EnrichmentResult:
        """Write one event's analysis (used directly by ``extract(learn=True)``).

        The event's status is checked inside the transaction: an event enriched (or forgotten) since it was read
        is left alone, so no analysis is ever applied twice.  With ``event_vectors`` the event's own vector is
        appended there for the caller to store with the rest of its batch (three statements for the batch instead
        of three per event); nothing in the transaction reads it meanwhile.  ``status`` is the event's status as
        read in this transaction, when the caller read it already (for a whole batch in one query).
        """
        if status is None:
            status = tx.scalar("SELECT status FROM events WHERE id = ?", (event.id,))
        if status != "queued":
            return EnrichmentResult(event.id, analysis, ())
        ctx = FactContext(
            user_id=event.user_id,
            project_id=event.project_id,
            conversation_id=event.conversation_id,
            event_id=event.id,
            span_id=None,
            extractor=analysis.extractor,
            prompt_hash=analysis.prompt_hash,
            valid_time=to_epoch(event.valid_time) if event.valid_time else None,
            stated_at=to_epoch(event.occurred_at),
        )
        # a batch of background enrichment shows no trace; extract(learn=True) stores one event and reports it
        applied = self._decider.decide_and_apply(tx, ctx, analysis.proposals, trace=event_vectors is None)
        if analysis.text_vector is not None:
            item = VectorItem(event.id, "event", event.user_id, analysis.text_vector, "event")
            if event_vectors is None:
                self._vectors.add(tx, [item])
            else:
                event_vectors.append(item)
        elif analysis.text.strip():
            queue_vectors(tx, self._vectors.space_id, [(event.id, "event", event.user_id, "event")])
        if event.author:
            speaker_id = ensure_subject(tx, event.user_id, event.author, "person")
            tx.execute(
                "INSERT OR IGNORE INTO event_subjects(event_id, subject_id) VALUES (?, ?)", (event.id, speaker_id)
            )
        tx.execute("UPDATE events SET status = 'enriched' WHERE id = ?", (event.id,))
        return EnrichmentResult(event.id, analysis, tuple(applied))

    def _store_batch(self, tx: Tx, ready: list[tuple[Job, Event | None, Analysis | None]]) -> None:
        # Jobs go first: deleting rows after the vec0 inserts of the same transaction is measurably slower.
        finish_jobs(tx, [job.id for job, _e, _a in ready])
        event_vectors: list[VectorItem] = []
        ids = [event.id for _job, event, analysis in ready if event is not None and analysis is not None]
        statuses: dict[int, str] = {}
        for chunk in chunked(ids):
            marks = ",".join("?" * len(chunk))
            for event_id, status in tx.execute(
                f"SELECT id, status FROM events WHERE id IN ({marks})", tuple(chunk)
            ).fetchall():
                statuses[int(event_id)] = str(status)
        for _job, event, analysis in ready:
            if event is not None and analysis is not None:
                # a forgotten event has no row: "" is not "queued", so nothing is stored for it
                self.store(tx, event, analysis, event_vectors=event_vectors, status=statuses.get(event.id, ""))
        self._vectors.add(tx, event_vectors)

    def _write_one_by_one(self, ready: list[tuple[Job, Event | None, Analysis | None]]) -> dict[int, str]:
        failed: dict[int, str] = {}
        for item in ready:
            try:
                self._store.write(functools.partial(self._store_batch, ready=[item]))
            except Exception as exc:
                failed[item[0].id] = f"{type(exc).__name__}: {exc}"
        return failed

    def _load_events(self, ids: Sequence[int]) -> dict[int, Event]:
        found: dict[int, Event] = {}
        for chunk in chunked(ids):
            marks = ",".join("?" * len(chunk))
            for row in self._store.query(f"SELECT {EVENT_COLUMNS} FROM events WHERE id IN ({marks})", tuple(chunk)):
                event = event_from_row(row)
                found[event.id] = event
        return found

    def _known_about(self, event: Event) -> list[str]:
        speaker = event.author or "user"
        rows = self._store.query(
            "SELECT f.statement FROM facts f JOIN subjects s ON s.id = f.subject_id WHERE f.user_id = ? "
            "AND s.name = ? COLLATE NOCASE AND f.status = 'active' ORDER BY f.importance DESC, f.updated_at DESC "
            "LIMIT 12",
            (event.user_id, speaker),
        )
        return [str(r[0]) for r in rows]


class EpisodeSummarizer:
    """The ``summarize_episode`` job handler."""

    def __init__(
        self,
        store: Store,
        embed: Callable[[list[str]], Any],
        vectors: VectorIndex,
        llm: Callable[[], LLM | None],
        timeout_s: float,
    ) -> None:
        self._store = store
        self._embed = embed
        self._vectors = vectors
        self._llm = llm
        self._timeout_s = timeout_s

    def __call__(self, jobs: Sequence[Job]) -> list[JobOutcome]:
        """Summarise each job's episode."""
        return each_job(jobs, lambda job: self._summarise(job, int(job.payload.get("episode_id", 0))))

    def _summarise(self, job: Job, episode_id: int) -> list[str]:
        rows = self._store.query(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?", (episode_id,))
        if not rows:
            self._store.write(lambda tx: finish_jobs(tx, [job.id]))
            return []
        episode = episode_from_row(rows[0])
        turns = [
            (str(author or role), str(content))
            for author, role, content in self._store.query(
                "SELECT author, role, content FROM events WHERE episode_id = ? AND status != 'blocked' "
                "AND role != 'system' ORDER BY occurred_at, id",
                (episode_id,),
            )
        ]
        warnings: list[str] = []
        summary, summarizer = "", "extractive"
        llm = self._llm()
        if llm is not None and turns:
            prompt = load_prompt("summarize_episode")
            text = prompt.render(
                today=f"{datetime.now(UTC):%Y-%m-%d}",
                started=f"{episode.started_at:%Y-%m-%d %H:%M}",
                ended=f"{episode.ended_at:%Y-%m-%d %H:%M}",
                speakers=", ".join(sorted({s for s, _ in turns})),
                turns="\n".join(f"{s}: {t}" for s, t in turns)[:12000],
            )
            try:
                answer = llm.complete_json(
                    text,
                    "Answer as JSON.",
                    {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]},
                    timeout_s=self._timeout_s,
                )
                if (
                    not isinstance(answer, dict)
                    or not isinstance(answer.get("summary"), str)
                    or not answer["summary"].strip()
                ):
                    raise ValueError("the model's summary is missing or empty")
                summary, summarizer = answer["summary"].strip(), f"{llm.name}@{prompt.hash}"
            except ModelUnavailable as exc:
                warnings.append(model_error_text(exc, "an extractive summary"))
            except ValueError as exc:  # an answer of the wrong shape, or an empty summary: never retried
                warnings.append(f"the model's summary was not usable ({exc}), used an extractive summary")
        if not summary:
            summary = extractive_summary(turns, episode.started_at, episode.ended_at)
        vector = None
        try:
            vector = self._embed([summary])[0]
        except ModelUnavailable as exc:
            warnings.append(f"embedder unavailable, vector queued: {exc.message}")

        def write(tx: Tx) -> None:
            tx.execute(
                "UPDATE episodes SET summary = ?, status = 'summarized', summarizer = ?, updated_at = ? WHERE id = ?",
                (summary, summarizer, tx.now, episode_id),
            )
            if vector is not None:
                self._vectors.add(tx, [VectorItem(episode_id, "episode", episode.user_id, vector, "episode")])
            else:
                queue_vectors(tx, self._vectors.space_id, [(episode_id, "episode", episode.user_id, "episode")])
            tx.emit("episode.created", episode_id, conversation_id=episode.conversation_id, user_id=episode.user_id)
            finish_jobs(tx, [job.id])

        self._store.write(write)
        return warnings
