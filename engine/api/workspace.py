"""The workspace verbs as the endpoint serves them: a request model in, a response model out.

``POST /v6/workspace/<verb>`` (:mod:`engine.api.routes.workspace`) and the MCP tools of the same names
(:mod:`engine.api.mcp`) both call :class:`WorkspaceVerbs`, so the two answer the same JSON for the same input and
keep the same rules: the session an observation is deleted in, who owns an understanding, how many observations one
call may add.  The engine (:class:`~engine.workspace.Workspace`) does the work and validates every value itself; its
refusals (``ValidationError`` naming the field, ``NotFound``) pass through to the error contract unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.api.models.recall import BlockOut
from engine.api.models.subjects import SubjectOut
from engine.api.models.workspace import (
    AddObservationsBody,
    AddObservationsOut,
    AroundOut,
    CreateSubjectsBody,
    CreateUnderstandingBody,
    DeletedOut,
    DeleteObservationsBody,
    GetSubjectsBody,
    GetUnderstandingsBody,
    IntersectionOut,
    MarkBody,
    MarkedOut,
    NeighbourOut,
    ObservationIn,
    ObservationList,
    ObservationOut,
    OpenAroundBody,
    OpenIntersectionBody,
    RememberBody,
    RememberOut,
    SearchObservationsBody,
    SetStructuralUnderstandingBody,
    StatsBody,
    SubjectsCreatedOut,
    SubjectsFoundOut,
    UnderstandingHistoryBody,
    UnderstandingList,
    UnderstandingOut,
    UpdateSubjectSummaryBody,
    UpdateUnderstandingBody,
    WorkspaceStatsOut,
)
from engine.api.models.workspace_search import (
    AddPerspectiveBody,
    ListPerspectivesBody,
    PerspectiveOut,
    PerspectivesOut,
    RemovePerspectiveBody,
    SearchBody,
    SearchHitOut,
    SearchOut,
)
from engine.api.models.workspace_sessions import (
    RECALL_CONVERSATION,
    BringToMindBody,
    BroughtToMindOut,
    ConsolidateBody,
    ConsolidatedOut,
    ConsolidationQueuedOut,
    ConsolidationReportBody,
    ConsolidationReportOut,
    DenseIntersectionOut,
    FindSimilarSubjectsBody,
    IntersectionNeedingOut,
    MergeSubjectsBody,
    OrientBody,
    OrientedOut,
    PendingConsolidationBody,
    PendingConsolidationOut,
    ProvenanceOut,
    QuestionableOut,
    ResetSeenBody,
    ResetSeenOut,
    SimilarSubjectOut,
    SimilarSubjectsOut,
    SubjectNeedingOut,
    WorkspaceRecallBody,
    WorkspaceRecallOut,
)
from engine.errors import NotFound, ValidationError
from engine.recall.types import RecallRequest
from engine.vault import Vault
from engine.workspace import Understanding, Workspace

#: The header a REST client may name its session in (a request's body wins over it).
SESSION_HEADER = "X-Session-Id"
#: How recall's routing writes the vault owner among the subjects a question names (the subject is ``user``).
_OWNER_LABEL = " (vault owner)"


def session_of(given: str | None, header: str | None) -> str | None:
    """The session of a request: the body's ``session_id``, else the header's, else none."""
    return given if given is not None else header


def _required_session(given: str | None, header: str | None, why: str, whose: str = "the session's") -> str:
    """The request's session; refused (400 naming ``session_id``) when neither the body nor the header names one."""
    session = session_of(given, header)
    if session is None:
        raise ValidationError(
            "session_id",
            f"is required: {why}",
            fix=f"Send {whose} id as session_id (or, over REST, the {SESSION_HEADER} header).",
        )
    return session


class WorkspaceVerbs:
    """Each workspace verb over one vault.  ``header_session`` is the REST ``X-Session-Id`` (MCP has none)."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault

    @property
    def _ws(self) -> Workspace:
        return self._vault.workspace

    # -- subjects ----------------------------------------------------------------------------------------------
    def create_subjects(self, body: CreateSubjectsBody) -> SubjectsCreatedOut:
        """The subjects named, creating those that do not exist yet; answers them and the names created."""
        subjects, created = self._ws.create_subjects(body.names, kind=body.kind, user_id=body.user_id)
        return SubjectsCreatedOut(subjects=[SubjectOut.of(s) for s in subjects], subjects_created=created)

    def get_subjects(self, body: GetSubjectsBody) -> SubjectsFoundOut:
        """The subjects called (or aliased) the names given, and the names no subject answers to."""
        found, missing = self._ws.get_subjects(body.names, user_id=body.user_id)
        return SubjectsFoundOut(subjects=[SubjectOut.of(s) for s in found], missing=missing)

    def update_subject_summary(self, body: UpdateSubjectSummaryBody) -> SubjectOut:
        """Set a subject's summary (and its tags, when given); answers the subject as it now is."""
        subject = self._ws.update_subject_summary(body.subject_name, body.summary, tags=body.tags, user_id=body.user_id)
        return SubjectOut.of(subject)

    # -- observations ------------------------------------------------------------------------------------------
    def remember(self, body: RememberBody, header_session: str | None = None) -> RememberOut:
        """Write one observation in the request's session, if it names one; content already stored is a no-op."""
        return self._remember(body, session_of(body.session_id, header_session), body.user_id)

    def add_observations(self, body: AddObservationsBody, header_session: str | None = None) -> AddObservationsOut:
        """Each observation as ``remember`` writes it, in order; an engine refusal names the item
        (``observations[2].content``)."""
        session = session_of(body.session_id, header_session)
        results: list[RememberOut] = []
        for index, item in enumerate(body.observations):
            try:
                results.append(self._remember(item, session, body.user_id))
            except ValidationError as exc:
                if exc.field == "session_id":  # the call's, not the item's
                    raise
                reason = exc.message.removeprefix(f"{exc.field}: ")
                raise ValidationError(f"observations[{index}].{exc.field}", reason, fix=exc.fix) from exc
        return AddObservationsOut(results=results)

    def delete_observations(self, body: DeleteObservationsBody, header_session: str | None = None) -> DeletedOut:
        """Delete the observations this session wrote, the others rejected with a reason; without a session it is
        refused, since only the session that wrote an observation may delete it."""
        session = _required_session(
            body.session_id,
            header_session,
            "only the session that wrote an observation may delete it",
            whose="the writing session's",
        )
        done = self._ws.delete_observations(body.ids, session_id=session, user_id=body.user_id)
        return DeletedOut(deleted=list(done.deleted), rejected=dict(done.rejected))

    def search_observations(self, body: SearchObservationsBody) -> ObservationList:
        """Observations matching every word of the query, optionally only those tagged with every subject named."""
        found = self._ws.search_observations(
            body.query, subject_names=body.subject_names, limit=body.limit, user_id=body.user_id
        )
        return ObservationList(observations=[ObservationOut.of(o) for o in found])

    def search(self, body: SearchBody) -> SearchOut:
        """Understandings (and, unless left out, observations) on the query, by words and across the perspectives."""
        found = self._ws.search(
            body.query,
            subject_names=body.subject_names,
            include_observations=body.include_observations,
            limit=body.limit,
            user_id=body.user_id,
        )
        return SearchOut(
            results=[
                SearchHitOut(
                    kind="understanding" if h.kind == "understanding" else "observation",
                    id=h.id,
                    score=h.score,
                    matched_perspective=h.matched_perspective,
                    covered=h.covered,
                    understanding=None if h.understanding is None else UnderstandingOut.of(h.understanding),
                    observation=None if h.observation is None else ObservationOut.of(h.observation),
                )
                for h in found.hits
            ],
            perspectives=list(found.perspectives),
            perspectives_collapsed=found.collapsed,
            embedder=found.embedder,
            notes=list(found.notes),
        )

    # -- perspectives ------------------------------------------------------------------------------------------
    def list_perspectives(self, body: ListPerspectivesBody) -> PerspectivesOut:
        """The user's perspectives; ``collapsed``, with a note saying why, when the embedder ignores instructions."""
        found, instructed, model_id = self._ws.searcher.perspectives(body.user_id)
        collapsed = not instructed
        return PerspectivesOut(
            perspectives=[PerspectiveOut(name=p.name, instruction=p.instruction, builtin=p.builtin) for p in found],
            collapsed=collapsed,
            embedder=model_id,
            note=(
                f"The embedder {model_id or '(none)'} ignores instructions: the perspectives are one vector per item."
                if collapsed
                else None
            ),
        )

    def add_perspective(self, body: AddPerspectiveBody) -> PerspectivesOut:
        """Add (or re-word) one of the user's own perspectives; answers the perspectives as they now are."""
        self._ws.searcher.add_perspective(body.name, body.instruction, user_id=body.user_id)
        return self.list_perspectives(ListPerspectivesBody(user_id=body.user_id))

    def remove_perspective(self, body: RemovePerspectiveBody) -> PerspectivesOut:
        """Remove one of the user's own perspectives (a built-in one is refused); answers the perspectives left."""
        self._ws.searcher.remove_perspective(body.name, user_id=body.user_id)
        return self.list_perspectives(ListPerspectivesBody(user_id=body.user_id))

    # -- understandings ----------------------------------------------------------------------------------------
    def create_understanding(
        self, body: CreateUnderstandingBody, header_session: str | None = None
    ) -> UnderstandingOut:
        """Write an understanding in the request's session; it supersedes the active one of its kind and subjects."""
        made = self._ws.create_understanding(
            body.content,
            summary=body.summary,
            subject_names=body.subject_names,
            kind=body.kind,
            title=body.title,
            sources=body.source_observation_ids,
            session_id=session_of(body.session_id, header_session),
            user_id=body.user_id,
        )
        return UnderstandingOut.of(made)

    def update_understanding(
        self, body: UpdateUnderstandingBody, header_session: str | None = None
    ) -> UnderstandingOut:
        """Revise an active understanding the user owns (another user's is not found); answers the new revision."""
        self._owned(body.understanding_id, body.user_id)
        revised = self._ws.update_understanding(
            body.understanding_id,
            new_content=body.new_content,
            new_summary=body.new_summary,
            sources=body.source_observation_ids,
            session_id=session_of(body.session_id, header_session),
        )
        return UnderstandingOut.of(revised)

    def get_understandings(self, body: GetUnderstandingsBody) -> UnderstandingList:
        """The active understandings tagged with every subject named (none named: the workspace's own)."""
        found = self._ws.get_understandings(body.subject_names, kind=body.kind, user_id=body.user_id)
        return UnderstandingList(understandings=[UnderstandingOut.of(u) for u in found])

    def understanding_history(self, body: UnderstandingHistoryBody) -> UnderstandingList:
        """The revision chain of an understanding the user owns (another user's is not found), oldest first."""
        self._owned(body.understanding_id, body.user_id)
        chain = self._ws.understanding_history(body.understanding_id)
        return UnderstandingList(understandings=[UnderstandingOut.of(u) for u in chain])

    def set_structural_understanding(
        self, body: SetStructuralUnderstandingBody, header_session: str | None = None
    ) -> UnderstandingOut:
        """The engine's ``set_structural_understanding`` is this call for the default user; made here through
        ``create_understanding`` so that ``user_id`` is honoured too."""
        made = self._ws.create_understanding(
            body.content,
            summary=body.summary,
            subject_names=[body.subject_name],
            kind="structural",
            session_id=session_of(body.session_id, header_session),
            user_id=body.user_id,
        )
        return UnderstandingOut.of(made)

    # -- marks -------------------------------------------------------------------------------------------------
    def mark_useful(self, body: MarkBody) -> MarkedOut:
        """Count a use of each observation, understanding or fact named; answers, per id, the kind marked or why not."""
        return MarkedOut(marked=self._ws.mark(body.ids, useful=True, user_id=body.user_id))

    def mark_questionable(self, body: MarkBody) -> MarkedOut:
        """Count a doubt about each observation, understanding or fact named; answers as ``mark_useful`` does."""
        return MarkedOut(marked=self._ws.mark(body.ids, useful=False, user_id=body.user_id))

    # -- relationships -----------------------------------------------------------------------------------------
    def open_intersection(self, body: OpenIntersectionBody) -> IntersectionOut:
        """Everything tagged with both subjects: observations, current facts, turns and active understandings."""
        shared = self._ws.open_intersection(body.subject_a, body.subject_b, limit=body.limit, user_id=body.user_id)
        return IntersectionOut.of(shared)

    def open_around(self, body: OpenAroundBody) -> AroundOut:
        """The subjects sharing evidence with this one, the largest intersection first."""
        around = self._ws.open_around(body.subject_name, limit=body.limit, user_id=body.user_id)
        return AroundOut(subject_name=body.subject_name, neighbours=[NeighbourOut.of(n) for n in around])

    def stats(self, body: StatsBody) -> WorkspaceStatsOut:
        """The user's workspace counts."""
        return WorkspaceStatsOut.of(self._ws.stats(user_id=body.user_id))

    # -- sessions ----------------------------------------------------------------------------------------------
    def orient(self, body: OrientBody, header_session: str | None = None) -> OrientedOut:
        """Start this session afresh: soul, protocol, orientation, pending consolidation and the newest activity.
        Refused without a session."""
        session = _required_session(body.session_id, header_session, "orient starts this session afresh")
        return OrientedOut.of(self._ws.orient(session_id=session, recent=body.recent, user_id=body.user_id))

    def bring_to_mind(self, body: BringToMindBody, header_session: str | None = None) -> BroughtToMindOut:
        """Understandings and fresh observations on a topic that this session was not shown yet; refused without a
        session, since what a session was shown is remembered per session."""
        session = _required_session(
            body.session_id, header_session, "what a session was already shown is remembered per session"
        )
        brought = self._ws.bring_to_mind(
            body.topic_or_context,
            session_id=session,
            last_token=body.last_token,
            include_seen=body.include_seen,
            limit=body.limit,
            user_id=body.user_id,
        )
        return BroughtToMindOut.of(brought)

    def reset_seen(self, body: ResetSeenBody, header_session: str | None = None) -> ResetSeenOut:
        """Empty this session's seen log, so anything may be brought to mind again; refused without a session."""
        session = _required_session(body.session_id, header_session, "each session has its own seen log")
        return ResetSeenOut(cleared=self._ws.reset_seen(session_id=session, user_id=body.user_id))

    # -- recall ------------------------------------------------------------------------------------------------
    def recall(self, body: WorkspaceRecallBody) -> WorkspaceRecallOut:
        """Subject mode when the query is exactly a subject's name or alias; otherwise the vault's recall answers
        it as a question, with the active understandings of the subjects the question names."""
        found = self._ws.recall_subject(body.query, limit=body.limit, user_id=body.user_id)
        if found is not None:
            return WorkspaceRecallOut(
                mode="subject",
                subject=SubjectOut.of(found.subject),
                understandings=[UnderstandingOut.of(u) for u in found.understandings],
                observations=[ObservationOut.of(o) for o in found.observations],
                best_answer=None,
                supporting=[],
                provenance=[],
            )
        result = self._vault.recall(
            RecallRequest(conversation_id=RECALL_CONVERSATION, query=body.query, user_id=body.user_id, limit=body.limit)
        )
        answers = [BlockOut.of(b) for b in result.answer_facts]
        supporting = [*answers[1:], *(BlockOut.of(b) for b in result.supporting_facts)]
        best = answers[0] if answers else None
        returned = [best, *supporting] if best is not None else supporting
        return WorkspaceRecallOut(
            mode="question",
            subject=None,
            understandings=self._understandings_of(result.routing.subjects, body.user_id),
            observations=[],
            best_answer=best,
            supporting=supporting,
            provenance=[
                ProvenanceOut(id=b.id, kind=b.kind, source_ids=b.source_ids, evidence=b.evidence) for b in returned
            ],
        )

    # -- consolidation -----------------------------------------------------------------------------------------
    def consolidate(self, body: ConsolidateBody) -> ConsolidatedOut | ConsolidationQueuedOut:
        """A pass run now (the configured model writes when there is one), or queued with ``background``."""
        if body.background:
            job_id = self._ws.request_consolidation(user_id=body.user_id)
            return ConsolidationQueuedOut(queued=job_id is not None, job_id=job_id)
        return self.consolidate_now(body.user_id)

    def consolidate_now(self, user_id: str) -> ConsolidatedOut:
        """Run one consolidation pass for ``user_id`` now and answer what it wrote (also the MCP ``consolidate``)."""
        done = self._ws.consolidate(user_id=user_id)
        return ConsolidatedOut(
            generation=done.generation,
            subjects_written=list(done.subjects_written),
            relationships_written=[[a, b] for a, b in done.relationships_written],
            unchanged=done.unchanged,
            writer=done.writer,
            warnings=list(done.warnings),
        )

    def consolidation_report(self, body: ConsolidationReportBody) -> ConsolidationReportOut:
        """What consolidation should look at next: subjects without an understanding, stale understandings, pairs to
        synthesise or compare, unlinked observations and items doubted more than used."""
        report = self._ws.consolidation_report(limit=body.limit, user_id=body.user_id)
        return ConsolidationReportOut(
            generation=report.generation,
            pending_subjects=report.pending_subjects,
            subjects_needing_understanding=[
                SubjectNeedingOut(name=name, items=items) for name, items in report.subjects_needing_understanding
            ],
            stale_understandings=list(report.stale_understandings),
            intersections_needing_synthesis=[
                IntersectionNeedingOut(subject_a=a, subject_b=b, shared=n)
                for a, b, n in report.intersections_needing_synthesis
            ],
            dense_intersections=[
                DenseIntersectionOut(subject_a=a, subject_b=b, similarity=s) for a, b, s in report.dense_intersections
            ],
            unlinked_observations=list(report.unlinked_observations),
            questionable=[QuestionableOut(id=i, kind=kind) for i, kind in report.questionable],
        )

    def pending_consolidation(self, body: PendingConsolidationBody) -> PendingConsolidationOut:
        """How many subjects have evidence newer than the last consolidation pass."""
        return PendingConsolidationOut(pending_subjects=self._ws.pending_consolidation(user_id=body.user_id))

    # -- merging subjects --------------------------------------------------------------------------------------
    def find_similar_subjects(self, body: FindSimilarSubjectsBody) -> SimilarSubjectsOut:
        """Subjects whose name or an alias looks like this one: the candidates for ``merge_subjects``."""
        found = self._ws.find_similar_subjects(
            body.subject_name, threshold=body.threshold, limit=body.limit, user_id=body.user_id
        )
        return SimilarSubjectsOut(subjects=[SimilarSubjectOut.of(s) for s in found])

    def merge_subjects(self, body: MergeSubjectsBody) -> SubjectOut:
        """Fold ``names`` into ``subject_name``; merging a subject into itself is a ``Conflict`` (409)."""
        try:
            kept = self._ws.merge_subjects(body.subject_name, body.names, user_id=body.user_id)
        except ValidationError as exc:
            if exc.field != "merge":  # the engine's name for the request's `names`
                raise
            raise ValidationError("names", exc.message.removeprefix(f"{exc.field}: "), fix=exc.fix) from exc
        return SubjectOut.of(kept)

    # -- helpers -----------------------------------------------------------------------------------------------
    def _understandings_of(self, subjects: Iterable[str], user_id: str) -> list[UnderstandingOut]:
        """The active understandings of the subjects named, each once; names no subject answers to are skipped."""
        found: dict[int, UnderstandingOut] = {}
        for name in subjects:
            try:
                understandings = self._ws.get_understandings([name.removesuffix(_OWNER_LABEL)], user_id=user_id)
            except NotFound:
                continue
            for understanding in understandings:
                found.setdefault(understanding.id, UnderstandingOut.of(understanding))
        return list(found.values())

    def _remember(self, item: ObservationIn, session: str | None, user_id: str) -> RememberOut:
        done = self._ws.remember(
            item.content,
            item.subject_names,
            kind=item.kind,
            confidence=item.confidence,
            session_id=session,
            related_to=item.related_to,
            user_id=user_id,
        )
        return RememberOut.of(done)

    def _owned(self, understanding_id: int, user_id: str) -> Understanding:
        """The understanding, if ``user_id`` owns it; another user's is answered as not found (users never mix)."""
        found = self._ws.understanding(understanding_id)
        if found.user_id != user_id:
            raise NotFound("understanding", understanding_id)
        return found
