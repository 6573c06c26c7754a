"""Events in: ``vault.events``, the one write path for events, and ``extract`` (what the pipeline makes of a text).

Every way an event comes in — the REST routes, the memory proxy, the MCP tool, the importers, the GUI, the
benchmarks — ends in :meth:`EventsApi.submit`: validated on the caller's thread, stored by the writer together with
its enrichment job (single events waiting together in one merged write), the future settled after COMMIT.
:meth:`EventsApi.ingest` is the same, waited for.

The job runner hears about every ingest twice: before it (background jobs give way while events arrive) and after
the commit (new jobs are waiting).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, overload

from engine.config import Settings
from engine.enrich import Enricher, EnrichmentResult
from engine.episodes import EpisodeCutter
from engine.errors import ValidationError, VaultDamaged
from engine.events import Event, EventIn, IngestResult, PreparedEvent, insert_prepared, prepare_batch, validate
from engine.facts.decide import Decider
from engine.facts.pipeline import Pipeline
from engine.facts.trace import stage_traces
from engine.facts.types import StageTrace
from engine.jobs import JobRunner, claim_for, finish_for, release_for
from engine.store import Store, Tx
from engine.temporal import parse_datetime

#: How long :meth:`EventsApi.ingest` waits for the COMMIT (a batch of a thousand events on a slow disk).
INGEST_TIMEOUT_S = 600.0


@dataclass(frozen=True, slots=True)
class ExtractionReport:
    """What :meth:`EventsApi.extract` found: every stage's trace, the decisions, and (with ``learn``) what was
    stored."""

    stages: tuple[StageTrace, ...]
    decisions: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...]
    learned: bool
    event_id: int | None = None
    fact_ids: tuple[int, ...] = ()


class EventsApi:
    """``vault.events``: store events (:meth:`submit`, :meth:`ingest`) and trace the pipeline (:meth:`extract`)."""

    def __init__(
        self,
        store: Store,
        runner: JobRunner,
        *,
        settings: Callable[[], Settings],
        episodes: EpisodeCutter,
        pipeline: Pipeline,
        decider: Decider,
        enricher: Enricher,
        event: Callable[[int], Event],
    ) -> None:
        self._store = store
        self._runner = runner
        self._settings = settings
        self._episodes = episodes
        self._pipeline = pipeline
        self._decider = decider
        self._enricher = enricher
        self._event = event

    @overload
    def submit(self, events: EventIn) -> Future[IngestResult]: ...

    @overload
    def submit(self, events: Sequence[EventIn]) -> Future[list[IngestResult]]: ...

    def submit(self, events: EventIn | Sequence[EventIn]) -> Future[IngestResult] | Future[list[IngestResult]]:
        """Validate ``events`` now and hand them to the writer; the future is settled after COMMIT with the event's
        result, or a batch's results in order (or with the error that stored nothing).

        One event is written together with the other single events waiting for the writer then (one call, one
        savepoint: :meth:`~engine.store.writer.Writer.submit_merged`), which is what lets many chat clients be
        acknowledged at once; it is refused with the field named plainly (``content``).  A batch is all or nothing,
        its fields named ``events[i].field``.  An event without ``occurred_at`` is stamped now, on arrival.

        Raises:
            ValidationError: an event is invalid; nothing is queued.
            VaultDamaged: the vault was opened read-only.
        """
        now = time.time()
        writer = self._store.writer
        if isinstance(events, EventIn):
            self._runner.note_foreground()
            one = validate(events, self._settings(), now)
            if writer is None:
                raise _read_only()
            return writer.submit_merged(self._write, one)
        self._runner.note_foreground(len(events))
        prepared = prepare_batch(events, self._settings(), now)
        if writer is None:
            raise _read_only()
        return writer.submit(lambda tx: self._write(tx, prepared))

    def _write(self, tx: Tx, items: list[PreparedEvent]) -> list[IngestResult]:
        """Store validated events with their enrichment jobs; the job runner is woken once they are committed."""
        results = insert_prepared(tx, items, self._episodes)
        tx.after_commit(self._runner.notify)
        return results

    @overload
    def ingest(self, events: EventIn) -> IngestResult: ...

    @overload
    def ingest(self, events: Sequence[EventIn]) -> list[IngestResult]: ...

    def ingest(self, events: EventIn | Sequence[EventIn]) -> IngestResult | list[IngestResult]:
        """:meth:`submit`, waiting for the COMMIT: one event gives its result, a batch a list of them.

        Raises:
            ValidationError: an event is invalid; nothing is stored.
        """
        if isinstance(events, EventIn):
            return self.submit(events).result(INGEST_TIMEOUT_S)
        return self.submit(events).result(INGEST_TIMEOUT_S)

    def extract(
        self,
        text: str,
        *,
        role: str = "user",
        author: str | None = None,
        occurred_at: datetime | str | float | None = None,
        learn: bool = False,
        conversation_id: str = "extract",
        user_id: str = "default",
    ) -> ExtractionReport:
        """Run the pipeline on ``text`` and report what every stage did.

        Without ``learn`` nothing is stored: the decide stage is planned against the current facts only.  With
        ``learn`` the text is ingested as an event (source ``extract``) and enriched at once.
        """
        if learn:
            return self._learn(
                EventIn(
                    conversation_id=conversation_id,
                    content=text,
                    role=role,
                    author=author,
                    occurred_at=occurred_at,
                    user_id=user_id,
                    source="extract",
                )
            )
        if not isinstance(text, str) or not text.strip():
            raise ValidationError("text", "must be non-empty text")
        when = parse_datetime(occurred_at) if occurred_at is not None else datetime.now(UTC)
        analysis = self._pipeline.analyse(text, role=role, author=author, occurred_at=when, run_firewall=True)
        with self._store.snapshot() as snap:
            planned = self._decider.plan_all(snap, user_id, analysis.proposals, None, at=when.timestamp())
        actions = [o.action for o in planned]
        decisions = tuple(
            {
                "decision": a.decision,
                "statement": a.proposal.statement,
                "predicate": a.proposal.predicate,
                "object": a.proposal.object_text,
                "targets": list(a.targets),
                "reason": a.reason,
                "confidence": a.proposal.confidence,
                "standing": a.proposal.standing,
            }
            for a in actions
        )
        decide = StageTrace("decide", f"{len(actions)} decisions (dry run)", {"decisions": list(decisions)})
        stages = stage_traces(analysis.traces, planned, decide, planned=True)
        return ExtractionReport(stages, decisions, tuple(analysis.warnings), learned=False)

    def _learn(self, event: EventIn) -> ExtractionReport:
        """Ingest ``event`` and enrich it on this thread, reporting what was decided.

        The event's enrichment job is claimed in the ingest transaction, so no worker enriches the same event
        meanwhile.  If the analysis fails, the job goes back to the queue (retried, then parked with its error) and
        the error is raised.
        """
        prepared = validate(event, self._settings(), time.time())

        def ingest(tx: Tx) -> IngestResult:
            result = insert_prepared(tx, [prepared], self._episodes)[0]
            if result.status == "queued":
                claim_for(tx, "enrich", result.event_id)
            return result

        result: IngestResult = self._store.write(ingest)
        try:
            return self._enrich_now(result.event_id)
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
            self._store.write(lambda tx: release_for(tx, "enrich", result.event_id, error))
            self._runner.notify()
            raise

    def _enrich_now(self, event_id: int) -> ExtractionReport:
        event = self._event(event_id)
        # The firewall ran when the event was ingested; report what it did there.
        findings = list(event.metadata.get("pii", []))
        firewall = StageTrace(
            "firewall",
            ("blocked: " if event.status == "blocked" else "")
            + (", ".join(findings) if findings else "nothing found")
            + " (at ingest)",
            {"findings": findings, "blocked": event.status == "blocked", "text": event.content},
        )
        if event.status != "queued":
            return ExtractionReport(
                (firewall,), (), (f"event {event_id} is {event.status}; nothing to learn",), True, event_id
            )
        analysis = self._enricher.analyse(event)

        def store(tx: Tx) -> EnrichmentResult:
            out = self._enricher.store(tx, event, analysis)
            finish_for(tx, "enrich", event_id)
            return out

        result: EnrichmentResult = self._store.write(store)
        decisions = tuple(
            {
                "decision": a.action.decision,
                "statement": a.action.proposal.statement,
                "predicate": a.action.proposal.predicate,
                "object": a.action.proposal.object_text,
                "targets": list(a.action.targets),
                "reason": a.action.reason,
                "fact_id": a.fact_id,
            }
            for a in result.applied
        )
        decide = StageTrace("decide", f"{len(decisions)} decisions applied", {"decisions": list(decisions)})
        stages = stage_traces((firewall, *analysis.traces), result.applied, decide, planned=False)
        fact_ids = tuple(a.fact_id for a in result.applied if a.fact_id is not None)
        return ExtractionReport(tuple(stages), decisions, tuple(analysis.warnings), True, event_id, fact_ids)


def _read_only() -> VaultDamaged:
    return VaultDamaged("This vault was opened read-only.", fix="Open it normally to make changes.")
