"""Scoped, complete, receipted forgetting (DESIGN §8 ``/v6/forget``, HARDENING "Privacy").

A scope is the conjunction of what is given: a user (always — deletion never crosses users), and optionally a
conversation, a project, a document and a time range.  Everything derived from what is forgotten goes with it:
facts from those events or document spans, their conflicts, the episodes summarising those turns, embeddings
(vector rows), full-text entries, subjects no longer mentioned anywhere, queued jobs.

"Gone" means gone from the bytes on disk, not just from queries: SQLite runs with ``secure_delete``, FTS5 with
its secure-delete option, each touched vec0 table is rebuilt (vec0 keeps deleted vectors inside its chunks), and
the WAL is checkpointed and truncated.

Backups: a backup is a whole copy of the database, and one cannot be scrubbed of one scope without rewriting it
(and every backup is a snapshot the person may restore as it was).  So a forget deletes every backup
(``purge_backups``, on by default): none made before it would still hold what was forgotten — and then makes a
fresh backup of the vault as it now is, so the person is never left without one.  The receipt counts the deleted
files (``deleted_counts["backups"]``), names the fresh one and states the policy in ``notes``; with
``purge_backups=False`` the notes say that the older backups still hold the data.

A whole user's forget also removes their collections (names and descriptions are their words) and their
quarantine entries (file names, paths, parse details).

A fact outside the scope that was in conflict with a forgotten fact is no longer contested by anything: it is
settled (back to ``active`` with the standing of its confidence) in the same transaction.  A kept fact that a
forgotten one had superseded becomes current again — or, when a later kept fact had replaced the forgotten one,
points at that fact instead — so a slot never ends up without its truth because the statement in between went.

Every forget (and every dry run) leaves a receipt: the scope and the counts, never the content.

A forgotten document that came from a watched folder leaves its ``files`` row (path, size, time, hash; no document)
as a tombstone: the file is still in the folder, and without the row the next scan would ingest it again.  The
tombstone holds no content; editing the file (a new hash) or un-watching the folder ends it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.backups import make_backup
from engine.errors import NotFound, ValidationError, VaultError
from engine.facts.conflicts import of_facts as conflicts_of_facts, restore_superseded, settle, sides as conflict_sides
from engine.jobs import jobs_about
from engine.store import Store, Tx, chunked
from engine.temporal import from_epoch, parse_datetime, to_epoch
from engine.vectors.space import rebuild_vec_table

COUNT_KEYS = (
    "events",
    "facts",
    "conflicts",
    "episodes",
    "documents",
    "sections",
    "chunks",
    "embeddings",
    "understandings",
    "observations",
    "subjects",
    "collections",
    "quarantine",
    "jobs",
    "backups",
)


@dataclass(frozen=True, slots=True)
class ForgetScope:
    """What to forget.  ``user_id`` alone forgets everything of that user."""

    user_id: str = "default"
    conversation_id: str | None = None
    project_id: str | None = None
    document_id: int | None = None
    since: datetime | str | float | None = None
    until: datetime | str | float | None = None
    dry_run: bool = False
    purge_backups: bool = True

    def describe(self) -> dict[str, Any]:
        """The scope as stored in the receipt (no content, only identifiers and times)."""
        out: dict[str, Any] = {k: v for k, v in asdict(self).items() if v is not None and k not in ("dry_run",)}
        for key in ("since", "until"):
            if key in out:
                out[key] = parse_datetime(out[key]).isoformat()
        return out


@dataclass(frozen=True, slots=True)
class Receipt:
    """What a forget (or dry run) removed."""

    receipt_id: int
    scope: dict[str, Any]
    dry_run: bool
    deleted_counts: dict[str, int]
    created_at: datetime
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class _Targets:
    events: list[int] = field(default_factory=list)
    facts: list[int] = field(default_factory=list)
    conflicts: list[int] = field(default_factory=list)
    episodes: list[int] = field(default_factory=list)
    documents: list[int] = field(default_factory=list)
    sections: list[int] = field(default_factory=list)
    spans: list[int] = field(default_factory=list)
    understandings: list[int] = field(default_factory=list)
    observations: list[int] = field(default_factory=list)
    subjects: list[int] = field(default_factory=list)
    collections: list[int] = field(default_factory=list)  # a whole user's: their names are the user's words
    quarantine: list[int] = field(default_factory=list)  # a whole user's refused files: names, paths, details
    jobs: list[int] = field(default_factory=list)
    opponents: list[int] = field(default_factory=list)  # kept facts in conflict with a forgotten one
    # kept facts a forgotten fact had replaced → the kept fact that replaces them now (None: nothing, restore)
    successors: dict[int, int | None] = field(default_factory=dict)
    embeddings: int = 0
    spaces: list[str] = field(default_factory=list)
    whole_user: str | None = None  # a whole user forgotten: their workspace sessions and generation go too


def forget(store: Store, scope: ForgetScope, backups_dir: Path | None, *, generations: int = 0) -> Receipt:
    """Forget everything in ``scope`` (or only count it, for a dry run) and return the receipt.

    When backups had to be deleted, a fresh backup of the vault as it now is is made (unless ``generations`` is 0:
    backups are off), so a forget never leaves the person without one; the receipt says which.
    """
    _validate(scope)
    backups = _backup_files(backups_dir) if scope.purge_backups and backups_dir is not None else []

    def op(tx: Tx) -> Receipt:
        targets = _collect(tx, scope)
        counts = {
            "events": len(targets.events),
            "facts": len(targets.facts),
            "conflicts": len(targets.conflicts),
            "episodes": len(targets.episodes),
            "documents": len(targets.documents),
            "sections": len(targets.sections),
            "chunks": len(targets.spans),
            "embeddings": targets.embeddings,
            "understandings": len(targets.understandings),
            "observations": len(targets.observations),
            "subjects": len(targets.subjects),
            "collections": len(targets.collections),
            "quarantine": len(targets.quarantine),
            "jobs": len(targets.jobs),
            "backups": len(backups),
        }
        if not scope.dry_run:
            _delete(tx, targets)
        receipt_id = tx.new_id("receipt")
        described = scope.describe()
        tx.execute(
            "INSERT INTO receipts(id, user_id, scope, dry_run, deleted_counts, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (
                receipt_id,
                scope.user_id,
                json.dumps(described, sort_keys=True),
                int(scope.dry_run),
                json.dumps(counts, sort_keys=True),
                tx.now,
            ),
        )
        return Receipt(
            receipt_id,
            described,
            scope.dry_run,
            counts,
            from_epoch(tx.now),
            receipt_notes(described, scope.dry_run, counts),
        )

    receipt: Receipt = store.write(op, timeout=600)
    if scope.dry_run:
        return receipt
    scrub(store)
    for path in backups:
        path.unlink(missing_ok=True)
    after: dict[str, Any] = {}
    if backups and backups_dir is not None:
        if generations <= 0:
            after["fresh_backup"] = ""
        else:
            try:
                after["fresh_backup"] = Path(make_backup(store, backups_dir, generations).path).name
            except VaultError as exc:
                after["fresh_backup_error"] = exc.message
    scope_now = {**receipt.scope, **after}

    def record(tx: Tx) -> None:
        if after:
            tx.execute(
                "UPDATE receipts SET scope = ? WHERE id = ?",
                (json.dumps(scope_now, sort_keys=True), receipt.receipt_id),
            )
        tx.emit(
            "forget.completed",
            receipt.receipt_id,
            user_id=scope.user_id,
            counts=receipt.deleted_counts,
            notes=list(receipt_notes(scope_now, False, receipt.deleted_counts)),
        )

    store.write(record)
    return replace(receipt, scope=scope_now, notes=receipt_notes(scope_now, False, receipt.deleted_counts))


def read_receipt(store: Store, receipt_id: int) -> Receipt:
    """A stored receipt."""
    rows = store.query(
        "SELECT id, scope, dry_run, deleted_counts, created_at FROM receipts WHERE id = ?", (receipt_id,)
    )
    if not rows:
        raise NotFound("receipt", receipt_id)
    r = rows[0]
    scope, dry_run, counts = json.loads(r[1]), bool(r[2]), json.loads(r[3])
    return Receipt(int(r[0]), scope, dry_run, counts, from_epoch(float(r[4])), receipt_notes(scope, dry_run, counts))


def receipt_notes(scope: dict[str, Any], dry_run: bool, counts: dict[str, int]) -> tuple[str, ...]:
    """What a receipt says beyond its counts: the backup policy as it applied to this forget.

    Derived from the stored scope and counts, so a receipt read back later says the same as when it was made.
    """
    backups = int(counts.get("backups", 0))
    files = f"{backups} file{'' if backups == 1 else 's'}"
    if not scope.get("purge_backups", True):
        return ("Backups were kept: those made before this forget still hold what it removed.",)
    if dry_run:
        return (
            f"Forgetting deletes every backup ({files}): a backup is a whole copy of the vault and cannot be scrubbed "
            "in part.",
        )
    deleted = (
        f"Every backup was deleted ({files}): a backup is a whole copy of the vault and cannot be scrubbed in part, "
        "so none made before this forget is kept."
    )
    if scope.get("fresh_backup"):
        return (deleted, f"A fresh backup of the vault as it is now was made: backups/{scope['fresh_backup']}.")
    if scope.get("fresh_backup_error"):
        return (deleted, f"No fresh backup could be made ({scope['fresh_backup_error']}); make one when that is fixed.")
    if "fresh_backup" in scope:
        return (deleted, "Backups are off (backups.generations = 0), so no fresh one was made.")
    return (deleted,)


def scrub(store: Store) -> None:
    """Push deleted bytes out of the files: checkpoint and truncate the WAL."""
    assert store.writer is not None

    def checkpoint(driver: Any) -> None:
        driver.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    store.writer.run_outside_transaction(checkpoint, timeout=600)


def _validate(scope: ForgetScope) -> None:
    if not scope.user_id or not str(scope.user_id).strip():
        raise ValidationError("user_id", "is required: forgetting never crosses users")
    if (
        scope.since is not None
        and scope.until is not None
        and to_epoch(parse_datetime(scope.since)) >= to_epoch(parse_datetime(scope.until))
    ):
        raise ValidationError("until", "must be later than since")


def _in(ids: Sequence[int]) -> tuple[str, tuple[int, ...]]:
    return ",".join("?" * len(ids)), tuple(ids)


def _ids(tx: Tx, sql: str, params: Iterable[Any]) -> list[int]:
    return [int(r[0]) for r in tx.execute(sql, tuple(params)).fetchall()]


@dataclass(frozen=True, slots=True)
class _Window:
    """A forget scope as the collecting phases read it: whose, which conversation, project or document, and when."""

    user: str
    conversation_id: str | None
    project_id: str | None
    document_id: int | None
    since: float | None
    until: float | None

    @property
    def whole_user(self) -> bool:
        """Nothing narrows the scope but the user: everything of theirs goes."""
        return (
            self.conversation_id is None
            and self.project_id is None
            and self.document_id is None
            and self.since is None
            and self.until is None
        )

    @property
    def untimed(self) -> bool:
        return self.since is None and self.until is None

    def conditions(self, time_column: str, **columns: object) -> tuple[str, list[Any]]:
        """``user_id = ? AND <column> = ? … AND <time_column> in the window`` for the columns given a value."""
        conds: list[str] = ["user_id = ?"]
        args: list[Any] = [self.user]
        for column, value in columns.items():
            if value is not None:
                conds.append(f"{column} = ?")
                args.append(value)
        if self.since is not None:
            conds.append(f"{time_column} >= ?")
            args.append(self.since)
        if self.until is not None:
            conds.append(f"{time_column} < ?")
            args.append(self.until)
        return " AND ".join(conds), args


def _collect(tx: Tx, scope: ForgetScope) -> _Targets:
    """Everything ``scope`` reaches, phase by phase: each phase reads what the phases before it found."""
    w = _Window(
        user=scope.user_id,
        conversation_id=scope.conversation_id,
        project_id=scope.project_id,
        document_id=scope.document_id,
        since=to_epoch(parse_datetime(scope.since)) if scope.since is not None else None,
        until=to_epoch(parse_datetime(scope.until)) if scope.until is not None else None,
    )
    t = _Targets()
    if w.document_id is None:
        where, args = w.conditions("occurred_at", conversation_id=w.conversation_id, project_id=w.project_id)
        t.events = _ids(tx, f"SELECT id FROM events WHERE {where}", args)
    _collect_documents(tx, w, t)
    _collect_facts(tx, w, t)
    _collect_episodes(tx, w, t)
    _collect_observations(tx, w, t)
    _collect_derived(tx, w, t)
    t.jobs = jobs_about(tx, set(t.events), set(t.episodes), set(t.documents))
    _count_vectors(tx, t)
    return t


def _collect_documents(tx: Tx, w: _Window, t: _Targets) -> None:
    """The documents in scope (none for a conversation's scope), with their sections and spans."""
    if w.conversation_id is None:
        where, args = w.conditions("created_at", id=w.document_id, project_id=w.project_id)
        t.documents = _ids(tx, f"SELECT id FROM documents WHERE {where}", args)
    if w.document_id is not None and not t.documents:
        raise NotFound("document", w.document_id)
    for chunk in chunked(t.documents):
        marks, vals = _in(chunk)
        t.sections += _ids(tx, f"SELECT id FROM sections WHERE document_id IN ({marks})", vals)
        t.spans += _ids(tx, f"SELECT id FROM spans WHERE document_id IN ({marks})", vals)


def _collect_facts(tx: Tx, w: _Window, t: _Targets) -> None:
    """Facts from the events and spans in scope, or (project, conversation, whole user) by their own scope; then
    their edited versions, the conflicts they are in, the kept facts opposing them and what replaces them."""
    user = w.user
    fact_ids: set[int] = set()
    for column, ids in (("event_id", t.events), ("span_id", t.spans)):
        for chunk in chunked(ids):
            marks, vals = _in(chunk)
            sql = f"SELECT id FROM facts WHERE user_id = ? AND {column} IN ({marks})"
            fact_ids.update(_ids(tx, sql, (user, *vals)))
    if w.whole_user:
        fact_ids.update(_ids(tx, "SELECT id FROM facts WHERE user_id = ?", (user,)))
    elif w.project_id is not None and w.conversation_id is None and w.untimed:
        fact_ids.update(_ids(tx, "SELECT id FROM facts WHERE user_id = ? AND project_id = ?", (user, w.project_id)))
    if w.conversation_id is not None and w.untimed:
        fact_ids.update(
            _ids(tx, "SELECT id FROM facts WHERE user_id = ? AND conversation_id = ?", (user, w.conversation_id))
        )
    # later versions of forgotten facts made by editing them carry the same content; a later statement that
    # replaced one (previous_id too, but its own event, maybe in another scope) is not a version of it
    frontier = set(fact_ids)
    while frontier:
        nxt: set[int] = set()
        for chunk in chunked(sorted(frontier)):
            marks, vals = _in(chunk)
            nxt.update(
                _ids(
                    tx,
                    f"SELECT id FROM facts WHERE user_id = ? AND previous_id IN ({marks}) "
                    "AND json_extract(metadata, '$.edited_from') IS NOT NULL",
                    (user, *vals),
                )
            )
        frontier = nxt - fact_ids
        fact_ids |= frontier
    t.facts = sorted(fact_ids)
    t.conflicts = sorted(conflicts_of_facts(tx, t.facts))
    forgotten = set(t.facts)
    t.opponents = sorted({f for a, b in conflict_sides(tx, t.conflicts) for f in (a, b) if f not in forgotten})
    t.successors = _successors(tx, forgotten)


def _collect_episodes(tx: Tx, w: _Window, t: _Targets) -> None:
    """Episodes summarising forgotten turns, and a whole conversation's or user's episodes."""
    episode_ids: set[int] = set()
    for chunk in chunked(t.events):
        marks, vals = _in(chunk)
        episode_ids.update(
            _ids(tx, f"SELECT DISTINCT episode_id FROM events WHERE id IN ({marks}) AND episode_id IS NOT NULL", vals)
        )
    if w.whole_user:
        episode_ids.update(_ids(tx, "SELECT id FROM episodes WHERE user_id = ?", (w.user,)))
    elif w.conversation_id is not None and w.untimed:
        episode_ids.update(
            _ids(tx, "SELECT id FROM episodes WHERE user_id = ? AND conversation_id = ?", (w.user, w.conversation_id))
        )
    t.episodes = sorted(episode_ids)


def _collect_observations(tx: Tx, w: _Window, t: _Targets) -> None:
    """A whole user's observations, or those observed in the time range (they belong to no conversation or
    project, so a narrower scope reaches none)."""
    if w.conversation_id is None and w.project_id is None and w.document_id is None:
        where, args = w.conditions("observed_at")
        t.observations = _ids(tx, f"SELECT id FROM observations WHERE {where}", args)


def _collect_derived(tx: Tx, w: _Window, t: _Targets) -> None:
    """What is made from the rest: understandings and subjects — and for a whole user, everything else of theirs."""
    user = w.user
    if w.whole_user:
        t.whole_user = user
        t.understandings = _ids(tx, "SELECT id FROM understandings WHERE user_id = ?", (user,))
        t.subjects = _ids(tx, "SELECT id FROM subjects WHERE user_id = ?", (user,))
        t.collections = _ids(tx, "SELECT id FROM collections WHERE user_id = ?", (user,))
        t.quarantine = _ids(tx, "SELECT id FROM quarantine WHERE user_id = ?", (user,))
        return
    # an understanding made from forgotten evidence repeats it: it goes with its sources
    sources = [*t.events, *t.facts, *t.spans, *t.episodes, *t.documents, *t.observations]
    built: set[int] = set()
    for chunk in chunked(sources):
        marks, vals = _in(chunk)
        sql = f"SELECT DISTINCT understanding_id FROM understanding_sources WHERE object_id IN ({marks})"
        built.update(_ids(tx, sql, vals))
    t.understandings = sorted(built)
    t.subjects = _orphaned_subjects(tx, user, set(t.facts), set(t.events), set(t.observations), set(t.understandings))


def _count_vectors(tx: Tx, t: _Targets) -> None:
    """How many stored vectors the targets have, and in which vector tables."""
    every = [
        *t.events,
        *t.facts,
        *t.conflicts,
        *t.episodes,
        *t.documents,
        *t.sections,
        *t.spans,
        *t.understandings,
        *t.observations,
        *t.subjects,
    ]
    spaces: set[str] = set()
    for chunk in chunked(every):
        marks, vals = _in(chunk)
        for count, table in tx.execute(
            f"SELECT COUNT(*), v.table_name FROM embeddings e JOIN vector_spaces v ON v.id = e.space_id "
            f"WHERE e.object_id IN ({marks}) GROUP BY v.table_name",
            vals,
        ).fetchall():
            t.embeddings += int(count)
            spaces.add(str(table))
    t.spaces = sorted(spaces)


def _orphaned_subjects(
    tx: Tx, user: str, facts: set[int], events: set[int], observations: set[int], understandings: set[int]
) -> list[int]:
    """Subjects that nothing outside the forgotten set mentions any more (their names are content too)."""
    candidates: set[int] = set()
    for chunk in chunked(sorted(observations)):
        marks, vals = _in(chunk)
        candidates.update(
            _ids(tx, f"SELECT subject_id FROM observation_subjects WHERE observation_id IN ({marks})", vals)
        )
    for chunk in chunked(sorted(understandings)):
        marks, vals = _in(chunk)
        candidates.update(
            _ids(tx, f"SELECT subject_id FROM understanding_subjects WHERE understanding_id IN ({marks})", vals)
        )
    for chunk in chunked(sorted(facts)):
        marks, vals = _in(chunk)
        candidates.update(_ids(tx, f"SELECT subject_id FROM facts WHERE id IN ({marks})", vals))
        candidates.update(_ids(tx, f"SELECT subject_id FROM fact_subjects WHERE fact_id IN ({marks})", vals))
    for chunk in chunked(sorted(events)):
        marks, vals = _in(chunk)
        candidates.update(_ids(tx, f"SELECT subject_id FROM event_subjects WHERE event_id IN ({marks})", vals))
    orphans = []
    for sid in sorted(candidates):
        row = tx.execute("SELECT kind, user_id FROM subjects WHERE id = ?", (sid,)).first()
        if row is None or row[0] == "owner" or row[1] != user:
            continue
        other_facts = {
            int(r[0])
            for r in tx.execute(
                "SELECT id FROM facts WHERE subject_id = ? "
                "UNION SELECT fact_id FROM fact_subjects WHERE subject_id = ?",
                (sid, sid),
            ).fetchall()
        } - facts
        other_events = {
            int(r[0]) for r in tx.execute("SELECT event_id FROM event_subjects WHERE subject_id = ?", (sid,)).fetchall()
        } - events
        other_understandings = {
            int(r[0])
            for r in tx.execute(
                "SELECT understanding_id FROM understanding_subjects WHERE subject_id = ?", (sid,)
            ).fetchall()
        } - understandings
        other_observations = {
            int(r[0])
            for r in tx.execute(
                "SELECT observation_id FROM observation_subjects WHERE subject_id = ?", (sid,)
            ).fetchall()
        } - observations
        if not other_facts and not other_events and not other_understandings and not other_observations:
            orphans.append(sid)
    return orphans


def _delete(tx: Tx, t: _Targets) -> None:
    """Delete by global id: cascades remove rows, FTS entries (triggers) and vectors (embeddings trigger)."""
    # facts first so conflicts and fact_subjects go by cascade; subjects last (facts reference them)
    order = (
        t.conflicts,
        t.facts,
        t.jobs,
        t.events,
        t.episodes,
        t.spans,
        t.sections,
        t.documents,
        t.understandings,
        t.observations,
        t.subjects,
        t.collections,
        t.quarantine,
    )
    for ids in order:
        for chunk in chunked(ids):
            marks, vals = _in(chunk)
            tx.execute(f"DELETE FROM objects WHERE id IN ({marks})", vals)
    for table in t.spaces:
        rebuild_vec_table(tx, table)
    if t.whole_user is not None:
        tx.execute("DELETE FROM workspace_seen WHERE user_id = ?", (t.whole_user,))
        tx.execute("DELETE FROM workspace_sessions WHERE user_id = ?", (t.whole_user,))
        tx.execute("DELETE FROM perspectives WHERE user_id = ?", (t.whole_user,))
        tx.execute("DELETE FROM workspace_vector_versions WHERE user_id = ?", (t.whole_user,))
        tx.execute("DELETE FROM meta WHERE key = ?", (f"workspace.generation:{t.whole_user}",))
    # a conversation's title goes with its last event
    tx.execute(
        "DELETE FROM conversation_titles WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.user_id = "
        "conversation_titles.user_id AND e.conversation_id = conversation_titles.conversation_id)"
    )
    for fact_id in t.opponents:
        settle(tx, fact_id)
    for fact_id, successor in t.successors.items():
        if successor is None:
            restore_superseded(tx, fact_id)
        else:
            tx.execute("UPDATE facts SET superseded_by = ? WHERE id = ?", (successor, fact_id))


def _successors(tx: Tx, forgotten: set[int]) -> dict[int, int | None]:
    """Kept facts that a forgotten fact superseded, each with the kept fact that now stands after it.

    Forgetting a statement means the vault behaves as if it had never been made: "I moved to Rome" forgotten
    gives "I live in Hanoi" back its place as the slot's truth — unless a later kept statement ("now Paris")
    had replaced Rome in turn, which then becomes Hanoi's successor, so the history chain stays unbroken.
    """
    out: dict[int, int | None] = {}
    for chunk in chunked(sorted(forgotten)):
        marks, vals = _in(chunk)
        rows = tx.execute(
            f"SELECT id, superseded_by FROM facts WHERE status = 'superseded' AND superseded_by IN ({marks})", vals
        ).fetchall()
        for fact_id, replaced_by in rows:
            if int(fact_id) in forgotten:
                continue
            successor: int | None = int(replaced_by)
            seen: set[int] = set()
            while successor is not None and successor in forgotten and successor not in seen:
                seen.add(successor)
                nxt = tx.scalar("SELECT superseded_by FROM facts WHERE id = ?", (successor,))
                successor = None if nxt is None else int(nxt)
            out[int(fact_id)] = None if successor in forgotten else successor
    return out


def _backup_files(backups_dir: Path) -> list[Path]:
    if not backups_dir.exists():
        return []
    return sorted(p for p in backups_dir.iterdir() if p.is_file() and p.suffix == ".db")
