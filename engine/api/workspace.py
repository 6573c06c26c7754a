"""The workspace verbs as the endpoint serves them: a request model in, a response model out.

``POST /v6/workspace/<verb>`` (:mod:`engine.api.routes.workspace`) and the MCP tools of the same names
(:mod:`engine.api.mcp`) both call :class:`WorkspaceVerbs`, so the two answer the same JSON for the same input and
keep the same rules: the session an observation is deleted in, who owns an understanding, how many observations one
call may add.  The engine (:class:`~engine.workspace.Workspace`) does the work and validates every value itself; its
refusals (``ValidationError`` naming the field, ``NotFound``) pass through to the error contract unchanged.
"""

from __future__ import annotations

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
from engine.errors import NotFound, ValidationError
from engine.vault import Vault
from engine.workspace import Understanding, Workspace

#: The header a REST client may name its session in (a request's body wins over it).
SESSION_HEADER = "X-Session-Id"


def session_of(given: str | None, header: str | None) -> str | None:
    """The session of a request: the body's ``session_id``, else the header's, else none."""
    return given if given is not None else header


class WorkspaceVerbs:
    """Each workspace verb over one vault.  ``header_session`` is the REST ``X-Session-Id`` (MCP has none)."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault

    @property
    def _ws(self) -> Workspace:
        return self._vault.workspace

    # -- subjects ----------------------------------------------------------------------------------------------
    def create_subjects(self, body: CreateSubjectsBody) -> SubjectsCreatedOut:
        subjects, created = self._ws.create_subjects(body.names, kind=body.kind, user_id=body.user_id)
        return SubjectsCreatedOut(subjects=[SubjectOut.of(s) for s in subjects], subjects_created=created)

    def get_subjects(self, body: GetSubjectsBody) -> SubjectsFoundOut:
        found, missing = self._ws.get_subjects(body.names, user_id=body.user_id)
        return SubjectsFoundOut(subjects=[SubjectOut.of(s) for s in found], missing=missing)

    def update_subject_summary(self, body: UpdateSubjectSummaryBody) -> SubjectOut:
        subject = self._ws.update_subject_summary(body.subject_name, body.summary, tags=body.tags, user_id=body.user_id)
        return SubjectOut.of(subject)

    # -- observations ------------------------------------------------------------------------------------------
    def remember(self, body: RememberBody, header_session: str | None = None) -> RememberOut:
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
        session = session_of(body.session_id, header_session)
        if session is None:
            raise ValidationError(
                "session_id",
                "is required: only the session that wrote an observation may delete it",
                fix=f"Send the writing session's id as session_id (or, over REST, the {SESSION_HEADER} header).",
            )
        done = self._ws.delete_observations(body.ids, session_id=session, user_id=body.user_id)
        return DeletedOut(deleted=list(done.deleted), rejected=dict(done.rejected))

    def search_observations(self, body: SearchObservationsBody) -> ObservationList:
        found = self._ws.search_observations(
            body.query, subject_names=body.subject_names, limit=body.limit, user_id=body.user_id
        )
        return ObservationList(observations=[ObservationOut.of(o) for o in found])

    # -- understandings ----------------------------------------------------------------------------------------
    def create_understanding(
        self, body: CreateUnderstandingBody, header_session: str | None = None
    ) -> UnderstandingOut:
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
        found = self._ws.get_understandings(body.subject_names, kind=body.kind, user_id=body.user_id)
        return UnderstandingList(understandings=[UnderstandingOut.of(u) for u in found])

    def understanding_history(self, body: UnderstandingHistoryBody) -> UnderstandingList:
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
        return MarkedOut(marked=self._ws.mark(body.ids, useful=True, user_id=body.user_id))

    def mark_questionable(self, body: MarkBody) -> MarkedOut:
        return MarkedOut(marked=self._ws.mark(body.ids, useful=False, user_id=body.user_id))

    # -- relationships -----------------------------------------------------------------------------------------
    def open_intersection(self, body: OpenIntersectionBody) -> IntersectionOut:
        shared = self._ws.open_intersection(body.subject_a, body.subject_b, limit=body.limit, user_id=body.user_id)
        return IntersectionOut.of(shared)

    def open_around(self, body: OpenAroundBody) -> AroundOut:
        around = self._ws.open_around(body.subject_name, limit=body.limit, user_id=body.user_id)
        return AroundOut(subject_name=body.subject_name, neighbours=[NeighbourOut.of(n) for n in around])

    def stats(self, body: StatsBody) -> WorkspaceStatsOut:
        return WorkspaceStatsOut.of(self._ws.stats(user_id=body.user_id))

    # -- helpers -----------------------------------------------------------------------------------------------
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
