"""The Vault: the one door into the engine.

The GUI, the CLI, the REST routes and the MCP tools all call these methods; nothing else reaches storage.  Methods
return frozen DTOs (``engine.dto`` and the sub-packages' DTO modules), never rows.

A vault is owned by one process at a time (an advisory lock); inside it one writer thread makes every change and
publishes committed changes on :attr:`Vault.changes`.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pluggy

from engine import paths
from engine.ai.embedders import Embedder, EmbedderChoice
from engine.ai.llm import LLM, GuardedLLM, LLMChoice, resolve_llm
from engine.ai.ollama import OllamaClient, OllamaStatus
from engine.ai.openai_compat import OpenAICompatClient
from engine.backups import Backup, list_backups, make_backup
from engine.changes import ChangeFeed
from engine.config import Settings, WatchedFolder
from engine.conversations import ConversationsApi
from engine.documents.collections import CollectionsApi
from engine.documents.distill import Distiller
from engine.documents.folders import VaultFolderSink
from engine.documents.ingest import IngestProgress, collect, ingest as ingest_files
from engine.documents.service import DocumentsApi
from engine.dto import Counts, DoctorReport, VaultInfo
from engine.enrich import Enricher, EnrichmentResult, EpisodeSummarizer
from engine.episodes import EpisodeCutter
from engine.errors import NotFound, ValidationError, VaultDamaged, VaultError
from engine.events import EventIn, IngestResult, PreparedEvent, insert_prepared, prepare_batch, validate
from engine.facts.api import FactsApi
from engine.facts.catalog import Catalog, load_catalog, sync_predicates
from engine.facts.conflicts import ConflictsApi, ConflictView
from engine.facts.decide import Decider
from engine.facts.pipeline import Analysis, Pipeline
from engine.facts.statements import Restater
from engine.facts.trace import stage_traces
from engine.facts.types import StageTrace
from engine.forget import ForgetScope, Receipt, forget as forget_scope, read_receipt
from engine.jobs import JobInfo, JobRunner, JobStats, job_stats, list_jobs, retry_parked
from engine.lockfile import VaultLock
from engine.permissions import Loosened, private_dir, tighten
from engine.plugin_api import new_plugin_manager
from engine.recall.gate import default_slots
from engine.recall.processes import AUTO_MIN_VECTORS, RankerProcesses
from engine.recall.service import Recall
from engine.recall.types import RecallRequest, RecallResult
from engine.store import PendingChange, Store
from engine.subjects import SubjectsApi
from engine.temporal import parse_datetime
from engine.token import read_or_create_token, rotate_token
from engine.upkeep import Upkeep, UpkeepTasks
from engine.vectors import SqliteVecIndex
from engine.vectors.migration import (
    FILL_JOB,
    GuardedEmbedder,
    VectorFiller,
    VectorStatus,
    vector_status,
)
from engine.version import __version__
from engine.watcher import FolderWatcher, RootStatus, ScanResult
from engine.wiring import VectorWiring, build_openai_client, plan_vectors, probe_ollama, resolve_vault_embedder
from engine.workspace import CONSOLIDATE_JOB, PERSPECTIVES_JOB, Workspace

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ObjectView:
    """An object found by global id: its kind and its DTO (None for kinds without a public view, e.g. jobs)."""

    id: int
    kind: str
    value: Any


@dataclass(frozen=True, slots=True)
class ExtractionReport:
    """What ``Vault.extract`` found: every stage's trace, the decisions, and (with ``learn``) what was stored."""

    stages: tuple[StageTrace, ...]
    decisions: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...]
    learned: bool
    event_id: int | None = None
    fact_ids: tuple[int, ...] = ()


class Vault:
    """A vault folder opened for use.  Create with :meth:`Vault.open`; always :meth:`close` (or use ``with``).

    Sub-objects group the larger areas: :attr:`facts`, :attr:`conflicts`, :attr:`conversations`.
    """

    def __init__(
        self,
        root: Path,
        *,
        settings: Settings,
        store: Store,
        changes: ChangeFeed,
        lock: VaultLock | None,
        plugins: pluggy.PluginManager,
        llm_choice: LLMChoice,
        embedder_choice: EmbedderChoice,
        vectors: SqliteVecIndex,
        ollama: OllamaClient | None,
        ollama_status: OllamaStatus | None,
        catalog: Catalog,
        wiring: VectorWiring | None = None,
        openai_client: OpenAICompatClient | None = None,
    ) -> None:
        self.paths = paths.VaultPaths(root)
        if wiring is None:
            guarded = GuardedEmbedder(embedder_choice.embedder, first_backoff_s=settings.jobs.backoff_s)
            wiring = VectorWiring(guarded, vectors, None, None)
        self._wiring = wiring
        self._settings = settings
        self.store = store
        self.changes = changes
        self._lock = lock
        self.plugins = plugins
        self._llm_choice = llm_choice
        self._guarded_llm = (
            GuardedLLM(llm_choice.llm, first_skip_s=settings.jobs.backoff_s) if llm_choice.llm is not None else None
        )
        self._embedder_choice = embedder_choice
        self.vectors = vectors
        self.ollama = ollama
        self.ollama_status = ollama_status
        self.openai_client = openai_client
        self.tightened_at_open: tuple[Loosened, ...] = ()
        """What was readable by others in the vault folder when it was opened (and is private now)."""
        self.catalog = catalog
        self._closed = False
        self.pipeline = Pipeline(catalog, embedder_choice.embedder, settings, llm=lambda: self.llm)
        self._restater = Restater(catalog, embedder_choice.embedder.embed, vectors)
        self._decider = Decider(settings.facts, vectors, self._restater)
        self._episodes = EpisodeCutter(settings.episodes)
        self.facts = FactsApi(store, self._decider, self.pipeline, vectors)
        self.conflicts = ConflictsApi(store, self.facts)
        self.subjects = SubjectsApi(store, restate=self._restater.restate_subject)
        self.workspace = Workspace(
            store,
            self.subjects,
            llm=lambda: self.llm,
            timeout_s=settings.llm.timeout_s,
            use_model=settings.workspace.use_model,
            notify=self._wake_runner,
            embedder=lambda: self.embedder,
            perspective_instructions=lambda: self.settings.workspace.perspective_instructions,
        )
        self.conversations = ConversationsApi(
            store, plugins, self.ingest_events, settings.episodes.idle_gap_minutes * 60
        )
        self._recall = Recall(
            store,
            vectors,
            embedder_choice.embedder,
            catalog,
            lambda: self._settings,
            lambda: self.llm,
            self._submit_write,
        )
        self.documents = DocumentsApi(
            store,
            plugins,
            embedder_choice.embedder,
            vectors,
            lambda: self._settings,
            on_enqueue=self._wake_runner,
            work_dir=self.paths.work,
        )
        self.collections = CollectionsApi(store)
        self.watcher = FolderWatcher(VaultFolderSink(store, self.documents, self.changes.emit), settings.watch)
        self._enricher = Enricher(store, self.pipeline, self._decider, vectors, lambda: self.llm)
        self._runner = JobRunner(store, settings.jobs)
        self._runner.register("enrich", self._enricher, batch_size=32)
        self._runner.register(
            "summarize_episode",
            EpisodeSummarizer(store, embedder_choice.embedder.embed, vectors, lambda: self.llm, settings.llm.timeout_s),
            batch_size=4,
        )
        self._runner.register(
            "distill_document",
            Distiller(store, embedder_choice.embedder.embed, vectors, lambda: self.llm, settings.llm.timeout_s),
            batch_size=2,
        )
        self._runner.register(CONSOLIDATE_JOB, self.workspace.run_jobs, batch_size=1)
        self._runner.register(PERSPECTIVES_JOB, self.workspace.searcher.run_jobs, batch_size=1)
        self._runner.register(
            FILL_JOB,
            VectorFiller(
                store,
                lambda: self._wiring.embedder,
                lambda: self._wiring.index,
                self._migration_done,
                first_backoff_s=settings.jobs.backoff_s,
            ),
            batch_size=1,
            patient=True,
        )
        self._upkeep = Upkeep(
            UpkeepTasks(
                store=store,
                settings=lambda: self._settings,
                notify_jobs=self._wake_runner,
                maintain_vectors=self._maintain_vectors,
                workspace=self.workspace,
                backups_dir=self.paths.backups,
                backup_now=self.backup_now,
            )
        )
        self._starting_helpers = threading.Lock()

    # -- lifecycle ------------------------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        settings: Settings | None = None,
        plugins: pluggy.PluginManager | None = None,
        embedder: Embedder | None = None,
        env: dict[str, str] | None = None,
        start_workers: bool = True,
    ) -> Vault:
        """Create or open the vault folder ``path`` (default: the platform's data folder or ``$CAIRN_HOME``).

        Args:
            path: the vault folder; created when missing.
            settings: use these instead of reading ``settings.toml`` and the environment (tests).
            plugins: the plugin manager built by the app (tests build their own); empty when omitted.
            embedder: force an embedder instead of resolving one from settings.
            env: environment for ``CAIRN_*`` overrides (default: ``os.environ``).
            start_workers: run background jobs (enrichment, summaries); tools that only read pass False.

        Raises:
            VaultLocked: another process has the vault open.
            VaultDamaged: the database is not SQLite or is corrupt (it is left untouched).
            VaultTooNew: the vault was written by a newer Cairn.
            ExtensionUnavailable: sqlite-vec cannot be loaded.
        """
        root = paths.resolve_vault_dir(path)
        if root.exists() and not root.is_dir():
            raise ValidationError("path", f"{root} is a file, not a vault folder", fix="Choose a folder.")
        tightened = tighten(root)  # an existing vault that a copy, a restore or an older Cairn left readable
        private_dir(root)
        vault_paths = paths.VaultPaths(root)
        lock = VaultLock(vault_paths.lock)
        lock.acquire()
        _sweep_work(vault_paths.work)  # left by a process that was killed: nobody else can be using it now
        # Numbers start from the clock so that a client resuming after a restart (SSE Last-Event-ID) is always
        # behind the new feed's numbers and learns that it missed something, instead of silently skipping ahead.
        changes = ChangeFeed(first_seq=int(time.time() * 1000) * 1000)
        store: Store | None = None
        try:
            if settings is None:
                settings = Settings.load(vault_paths.settings, env)

            def publish(items: Sequence[PendingChange]) -> None:
                changes.publish([(c.type, c.object_id, c.data) for c in items])

            store = Store(vault_paths.db, publish=publish, backup_dir=vault_paths.backups)
            pm = plugins or new_plugin_manager()
            catalog = load_catalog(pm)
            sync_predicates(store, catalog)
            ollama, status = probe_ollama(settings)
            openai_client = build_openai_client(settings, store)
            llm_choice = resolve_llm(settings, ollama, status, openai_client=openai_client)
            if embedder is not None:
                embedder_choice = EmbedderChoice(embedder, "given by the caller")
            else:
                embedder_choice = resolve_vault_embedder(store, settings, ollama, status, openai_client)
            embedder_choice, vectors, wiring = plan_vectors(
                store,
                settings,
                vault_paths,
                embedder_choice,
                ollama,
                status,
                openai_client,
                forced=embedder is not None,
            )
            vault = cls(
                root,
                settings=settings,
                store=store,
                changes=changes,
                lock=lock,
                plugins=pm,
                llm_choice=llm_choice,
                embedder_choice=embedder_choice,
                vectors=vectors,
                ollama=ollama,
                ollama_status=status,
                catalog=catalog,
                wiring=wiring,
                openai_client=openai_client,
            )
            vault.tightened_at_open = tuple(tightened)
            if start_workers:
                vault._start_background()
        except BaseException:
            if store is not None:
                store.close()
            lock.release()
            raise
        log.info(
            "vault opened (schema %s, embedder %s, llm %s)", store.schema_version, vectors.model_id, llm_choice.engine
        )
        return vault

    def _start_background(self) -> None:
        self._runner.start()
        self.watcher.start()
        threading.Thread(target=self._load_vectors, name="vault-vectors", daemon=True).start()
        self._upkeep.start()

    def _load_vectors(self) -> None:
        """Ready the search side of the vectors (the in-memory mirror, or the Chroma collection catching up);
        until it is ready, searches use sqlite-vec directly."""
        try:
            count = self.vectors.load_mirror()
            log.info("vectors ready to search: %s (%s vectors)", self.vectors.backend, count)
            self._maintain_vectors()
        except Exception:
            log.exception("readying the vector search failed; searches keep using sqlite-vec")
            return
        self.start_recall_processes(count)

    def start_recall_processes(self, vectors: int | None = None) -> RankerProcesses | None:
        """Start the helper processes that rank recalls, if ``[recall] processes`` asks for them.

        Automatic (-1): one per core, 2–4, when the machine has two cores or more and the vault holds
        :data:`AUTO_MIN_VECTORS` vectors (``vectors``, default: counted now) — below that a recall is quick enough
        in this process and the helpers' copies of the vectors would cost memory for nothing.  Only the in-memory
        sqlite-vec index has copies to hand out; with Chroma, recalls are ranked here.  Returns the helpers (also
        used by tests and benchmarks, which may then wait until they are ready); the running ones if started.
        """
        with self._starting_helpers:
            running = self._recall.processes
            if running is not None:
                return running
            return self._start_recall_processes(vectors)

    def _start_recall_processes(self, vectors: int | None) -> RankerProcesses | None:
        wanted = self._settings.recall.processes
        if wanted == -1:
            cores = os.cpu_count() or 1
            if vectors is None:
                vectors = self.vectors.mirror.count()
            wanted = default_slots() if cores >= 2 and vectors >= AUTO_MIN_VECTORS else 0
        if wanted <= 0 or type(self.vectors) is not SqliteVecIndex or self._closed or self.store.writer is None:
            return None
        processes = RankerProcesses(self.paths.db, self.vectors, wanted)
        log.info("recalls ranked in %s helper processes", wanted)
        self._recall.use_processes(processes)
        return processes

    def _migration_done(self) -> None:
        """The re-embedding finished (the fill job dropped the old space): search the new space alone from now on."""
        wiring = self._wiring
        if wiring.migrating is not None:
            wiring.migrating.done = True
        log.info("re-embedding finished: vectors are all in %s", wiring.embedder.model_id)

    def model_status(self) -> dict[str, Any]:
        """The language model in use, why, and its last error with its time (epoch seconds), if any."""
        error = self._guarded_llm.last_error if self._guarded_llm is not None else None
        return {
            "engine": self._llm_choice.engine,
            "reason": self._llm_choice.reason,
            "last_error": error[0] if error else None,
            "last_error_at": error[1] if error else None,
        }

    def vector_status(self) -> VectorStatus:
        """The active embedder, a re-embedding under way and its progress, vectors waiting for an embedder that was
        down, and its last error (``cairn doctor``, ``/v6/jobs``, the GUI)."""
        return vector_status(self.store, self._wiring.index.space_id, self._wiring.dual or self._wiring.embedder)

    def _maintain_vectors(self) -> None:
        for stats in self.vectors.maintain():
            log.info(
                "vector first pass fitted: %s dims, pool %s, recall@30 %.3f on %s vectors",
                stats.dims,
                stats.pool,
                stats.recall,
                stats.vectors,
            )

    def _wake_runner(self) -> None:
        """Tell the job runner new work was queued (uploads enqueue distillation jobs)."""
        self._runner.notify()

    def _submit_write(self, op: Any) -> Any:
        assert self.store.writer is not None
        return self.store.writer.submit(op)

    def close(self) -> None:
        """Finish running jobs, drain the writer and release the vault (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._upkeep.request_stop()
        self.watcher.stop()
        self._runner.stop()
        self._recall.close()
        self.documents.close()
        self._upkeep.stop()
        self.vectors.close()
        self.store.close()
        if self.ollama is not None:
            self.ollama.close()
        if self.openai_client is not None:
            self.openai_client.close()
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    # -- configuration --------------------------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        """The settings in effect."""
        return self._settings

    def update_settings(self, changes: dict[str, Any]) -> Settings:
        """Apply dotted-path changes (``{"llm.model": "qwen3"}``), save them to ``settings.toml`` and return them.

        Settings for which :func:`engine.config.applies_live` holds apply at once (a folder added to
        ``watch.folders`` is scanned and watched from now on, one removed is no longer watched and keeps its
        documents); the others (models, embedder, endpoint, jobs) at the next start.

        Raises:
            ValidationError: an unknown setting or a bad value, or a watched folder that is missing, not absolute
                or overlapping another; nothing is saved and the watched folders stay as they were.
        """
        # Only the file's own values plus these changes are saved: environment overrides (CAIRN_*) stay in force
        # for this process but never leak into settings.toml.
        file_only = Settings.load(self.paths.settings, env={}).updated(changes)
        new = self._settings.updated(changes)
        if "watch.folders" in changes:
            self._rewatch(self._settings.watch.folders, new.watch.folders)
        file_only.save(self.paths.settings)
        self._settings = new
        self.pipeline.settings = new
        self._decider.settings = new.facts
        self.changes.emit("settings.changed", keys=sorted(changes))
        return new

    def _rewatch(self, old: Sequence[WatchedFolder], new: Sequence[WatchedFolder]) -> None:
        """Bring the running watcher from the folders ``old`` to ``new``, all or nothing.

        Raises:
            ValidationError: a new folder is missing, not absolute or overlaps another; the watcher is put back.
        """
        before = {_folder_key(f): f for f in old}
        after = {_folder_key(f): f for f in new}
        for key, folder in after.items():
            if key not in before and not Path(key).is_dir():
                raise ValidationError(
                    "watch.folders", f"{folder.path} is not a folder", fix="Choose a folder that exists."
                )
        removed = [folder for key, folder in before.items() if key not in after]
        changed = [folder for key, folder in after.items() if before.get(key) != folder]
        unwatched: list[WatchedFolder] = []
        watched: list[WatchedFolder] = []
        try:
            for folder in removed:  # first, so that a folder may be swapped for one inside or around it
                self._unwatch_quietly(folder)
                unwatched.append(folder)
            for folder in changed:
                self.watcher.watch(folder)
                watched.append(folder)
        except VaultError:
            for folder in watched:
                previous = before.get(_folder_key(folder))
                if previous is None:
                    self._unwatch_quietly(folder)
                else:
                    self.watcher.watch(previous)
            for folder in unwatched:
                self.watcher.watch(folder)
            raise

    def _unwatch_quietly(self, folder: WatchedFolder) -> None:
        """Stop watching ``folder`` (its documents stay); a folder the watcher no longer has is fine."""
        try:
            self.watcher.unwatch(_folder_key(folder))
        except NotFound:
            pass

    @property
    def embedder(self) -> Embedder:
        """The embedder in use."""
        return self._embedder_choice.embedder

    @property
    def llm(self) -> LLM | None:
        """The model in use (failures remembered and backed off from, see :class:`GuardedLLM`), or None on the rule
        path."""
        return self._guarded_llm

    @property
    def llm_engine(self) -> str:
        """``ollama:<model>``, ``openai:<model>`` or ``simple``."""
        return self._llm_choice.engine

    def endpoint_token(self) -> str:
        """The endpoint's bearer token (created with mode 0600 on first use)."""
        return read_or_create_token(self.paths.token)

    def rotate_endpoint_token(self) -> str:
        """Replace the endpoint token; clients using the old one get 401 from now on."""
        token = rotate_token(self.paths.token)
        self.changes.emit("settings.changed", keys=["endpoint.token"])
        return token

    def vault_id(self) -> str:
        """This vault's stable id: a random value kept in ``meta`` (``vault_id``), made on first use.

        Not the folder's path, which says something about the person and changes when the folder moves.  The
        endpoint's public health answer carries it, so the desktop app and ``cairn doctor`` can tell this vault's
        endpoint from another vault's on the same port; Chroma names its collections after it.
        """
        rows = self.store.query("SELECT value FROM meta WHERE key = 'vault_id'")
        if rows:
            return str(rows[0][0])

        def make(tx: Any) -> str:
            import secrets

            tx.execute(
                "INSERT INTO meta(key, value) VALUES ('vault_id', ?) ON CONFLICT(key) DO NOTHING",
                (secrets.token_hex(6),),
            )
            return str(tx.scalar("SELECT value FROM meta WHERE key = 'vault_id'"))

        made: str = self.store.write(make)
        return made

    # -- events ---------------------------------------------------------------------------------------------------
    def ingest_event(self, event: EventIn) -> IngestResult:
        """Validate and store one event, queue its enrichment, and return its id once committed.

        Raises:
            ValidationError: a field is missing or wrong (the message names it); nothing is stored.
        """
        self._runner.note_foreground()
        prepared = validate(event, self._settings, time.time())
        result: list[IngestResult] = self.store.write(lambda tx: insert_prepared(tx, [prepared], self._episodes))
        self._runner.notify()
        return result[0]

    def ingest_events(self, events: Sequence[EventIn]) -> list[IngestResult]:
        """Validate a batch (all or nothing) and store it in one transaction; one result per event, in order."""
        results: list[IngestResult] = self.submit_events(events).result(600)
        return results

    def submit_events(self, events: Sequence[EventIn]) -> Future[list[IngestResult]]:
        """:meth:`ingest_events` without waiting: validated now, stored by the writer; the future is settled after
        COMMIT (with the results, or the error that stored nothing).

        For callers that keep several batches in flight, so the writer can commit what arrived during the previous
        commit together with it (the endpoint's coalescer).

        Raises:
            ValidationError: an event is invalid (named ``events[i].field``); nothing is queued.
        """
        self._runner.note_foreground(len(events))
        return self._submit_prepared(prepare_batch(events, self._settings, time.time()))

    def submit_event(self, event: EventIn) -> Future[list[IngestResult]]:
        """:meth:`submit_events` for one event, refused as :meth:`ingest_event` refuses it (the field named as
        ``content``, not ``events[0].content``): the coalescer's way of answering each request of a refused batch.

        Raises:
            ValidationError: the event is invalid; nothing is queued.
        """
        self._runner.note_foreground()
        return self._submit_prepared([validate(event, self._settings, time.time())])

    def _submit_prepared(self, prepared: list[PreparedEvent]) -> Future[list[IngestResult]]:
        if self.store.writer is None:
            raise VaultDamaged("This vault was opened read-only.", fix="Open it normally to make changes.")
        future: Future[list[IngestResult]] = self.store.writer.submit(
            lambda tx: insert_prepared(tx, prepared, self._episodes)
        )
        future.add_done_callback(lambda _done: self._runner.notify())
        return future

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
        analysis = self.pipeline.analyse(text, role=role, author=author, occurred_at=when, run_firewall=True)
        with self.store.snapshot() as snap:
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

        The event's enrichment job is claimed (``running``) in the ingest transaction, so no worker enriches the
        same event meanwhile; after a crash the job runner requeues it.  If the analysis fails, the job goes back
        to the queue (retried, then parked with its error) and the error is raised.
        """
        prepared = validate(event, self._settings, time.time())

        def ingest(tx: Any) -> IngestResult:
            result = insert_prepared(tx, [prepared], self._episodes)[0]
            if result.status == "queued":
                tx.execute(
                    "UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? "
                    "WHERE kind = 'enrich' AND status = 'queued' "
                    "AND json_extract(payload, '$.event_id') = ?",
                    (tx.now, result.event_id),
                )
            return result

        result: IngestResult = self.store.write(ingest)
        try:
            return self._enrich_now(result.event_id)
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
            self.store.write(
                lambda tx: tx.execute(
                    "UPDATE jobs SET status = 'queued', last_error = ?, updated_at = ? WHERE kind = 'enrich' "
                    "AND status = 'running' AND json_extract(payload, '$.event_id') = ?",
                    (error, tx.now, result.event_id),
                )
            )
            self._runner.notify()
            raise

    def _enrich_now(self, event_id: int) -> ExtractionReport:
        event = self.conversations.event(event_id)
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
        analysis: Analysis = self._enricher.analyse(event)

        def op(tx: Any) -> EnrichmentResult:
            out = self._enricher.store(tx, event, analysis)
            tx.execute(
                "DELETE FROM jobs WHERE kind = 'enrich' AND json_extract(payload, '$.event_id') = ?", (event_id,)
            )
            return out

        result: EnrichmentResult = self.store.write(op)
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

    # -- backups --------------------------------------------------------------------------------------------------
    def backup_now(self) -> Backup:
        """Write an online backup now (keeps ``backups.generations`` of them)."""
        backup = make_backup(self.store, self.paths.backups, max(1, self._settings.backups.generations))
        self.changes.emit("backup.created", None, path=backup.path)
        return backup

    def backups(self) -> list[Backup]:
        """Backups in the vault's ``backups/`` folder, newest first."""
        return list_backups(self.paths.backups)

    # -- files and watched folders -------------------------------------------------------------------------------
    def ingest_paths(
        self,
        paths: Sequence[str | Path],
        *,
        user_id: str = "default",
        collection_id: int | None = None,
        project_id: str | None = None,
        should_stop: Any = None,
    ) -> Iterator[IngestProgress]:
        """Ingest files and folders (walked with the default globs), yielding progress after each file."""
        files = collect(paths)
        return ingest_files(
            self.documents,
            files,
            self.changes.emit,
            user_id=user_id,
            collection_id=collection_id,
            project_id=project_id,
            should_stop=should_stop or (lambda: False),
        )

    def watch(
        self, path: str | Path, *, include: Sequence[str] | None = None, exclude: Sequence[str] | None = None
    ) -> list[RootStatus]:
        """Keep ``path`` in sync with the vault (saved in settings; scanned now, then watched).

        Raises:
            ValidationError: not a folder, or overlapping a watched one.
        """
        folder_path = Path(path).expanduser()
        if not folder_path.is_dir():
            raise ValidationError("path", f"{folder_path} is not a folder")
        defaults = WatchedFolder(path=str(folder_path.resolve()))
        folder = WatchedFolder(
            path=defaults.path,
            include=tuple(include) if include else defaults.include,
            exclude=tuple(exclude) if exclude else defaults.exclude,
        )
        others = [f for f in self._settings.watch.folders if Path(f.path) != Path(folder.path)]
        self.update_settings({"watch.folders": [f.model_dump(mode="json") for f in (*others, folder)]})
        return self.watcher.status()

    def unwatch(self, path: str | Path, *, forget: bool = False) -> list[RootStatus]:
        """Stop watching ``path``; its documents stay unless ``forget``."""
        resolved = Path(path).expanduser().resolve()
        self.watcher.unwatch(resolved, forget=forget)
        kept = [f for f in self._settings.watch.folders if Path(f.path) != resolved]
        self.update_settings({"watch.folders": [f.model_dump(mode="json") for f in kept]})
        return self.watcher.status()

    def rescan(self, path: str | Path | None = None, *, timeout: float | None = None) -> ScanResult:
        """Reconcile a watched folder (or all) with the vault now."""
        return self.watcher.scan(path, timeout=timeout)

    def watch_status(self) -> list[RootStatus]:
        """Each watched folder's state and last scan result."""
        return self.watcher.status()

    def confirm_deletions(self, path: str | Path) -> ScanResult:
        """Delete the documents of files that vanished from ``path`` (held until confirmed)."""
        return self.watcher.confirm_deletions(path)

    def cancel_deletions(self, path: str | Path) -> None:
        """Keep the documents of vanished files; resume normal watching."""
        self.watcher.cancel_deletions(path)

    # -- recall ---------------------------------------------------------------------------------------------------
    def recall(self, request: RecallRequest) -> RecallResult:
        """Context for a chat client's next model call (DESIGN §5): ranked blocks and prompt-ready text.

        Raises:
            ValidationError: a request field is missing or out of range (the message names it).
        """
        return self._recall.recall(request)

    # -- jobs -----------------------------------------------------------------------------------------------------
    def jobs(self) -> JobStats:
        """Queue depth by status and kind, and parked jobs with their errors."""
        return job_stats(self.store)

    def job_list(self, *, status: str | None = None, limit: int = 200) -> list[JobInfo]:
        """Jobs, newest first."""
        return list_jobs(self.store, status=status, limit=limit)

    def retry_jobs(self, job_ids: Sequence[int] | None = None) -> int:
        """Requeue parked jobs (all, or the given ids); returns how many."""
        count = int(self.store.write(lambda tx: retry_parked(tx, job_ids)))
        self._runner.notify()
        return count

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until no job is queued or running, searches see every stored vector and the recall usage gathered so
        far is recorded; False if ``timeout`` passed first.  Vectors waiting for an embedder that is down do not
        count: their job is scheduled for its next try and the vault is otherwise idle (:meth:`vector_status`)."""
        started = time.monotonic()
        usage = self._recall.flush_usage()
        if usage is not None:
            try:
                usage.result(timeout)
            except TimeoutError:
                return False
            except Exception:
                log.warning("recording recall usage failed", exc_info=True)
        if not self._runner.wait_idle(timeout):
            return False
        return self.vectors.flush(max(0.0, timeout - (time.monotonic() - started)))

    def queue_depth(self) -> int:
        """Jobs waiting or running."""
        return int(self.store.scalar("SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')") or 0)

    # -- conflicts and forgetting ---------------------------------------------------------------------------------
    def resolve_conflict(self, conflict_id: int, winner_id: int | None) -> ConflictView:
        """Resolve a conflict: ``winner_id`` wins, or ``None`` keeps both."""
        return self.conflicts.resolve(conflict_id, winner_id)

    def forget(self, scope: ForgetScope) -> Receipt:
        """Forget everything in ``scope`` (``dry_run`` only counts) and return the receipt."""
        receipt = forget_scope(self.store, scope, self.paths.backups, generations=self._settings.backups.generations)
        if not scope.dry_run:
            self.vectors.after_forget()  # cascaded deletions bypass the search side; rebuild it from the store
        return receipt

    def receipt(self, receipt_id: int) -> Receipt:
        """A forget receipt."""
        return read_receipt(self.store, receipt_id)

    # -- any object by global id ----------------------------------------------------------------------------------
    def get_object(self, object_id: int) -> ObjectView:
        """Any object by its global id: the kind and the object's DTO.

        Raises:
            NotFound: no such id (or it was forgotten).
        """
        kind = self.store.scalar("SELECT kind FROM objects WHERE id = ?", (object_id,))
        if kind is None:
            raise NotFound("object", object_id)
        loaders: dict[str, Any] = {
            "fact": self.facts.get,
            "event": self.conversations.event,
            "subject": self.subjects.get,
            "conflict": self.conflicts.get,
            "episode": self.conversations.episode,
            "receipt": self.receipt,
            "document": self.documents.get,
            "collection": self.collections.get,
            "section": self.documents.section,
            "span": self.documents.span,
            "quarantine": self.documents.quarantined,
            "observation": self.workspace.observation,
            "understanding": self.workspace.understanding,
        }
        loader = loaders.get(str(kind))
        if loader is None:
            return ObjectView(object_id, str(kind), None)
        return ObjectView(object_id, str(kind), loader(object_id))

    # -- overview -------------------------------------------------------------------------------------------------
    @property
    def schema_version(self) -> int:
        """The vault's schema version."""
        return self.store.schema_version

    def doctor(self) -> DoctorReport:
        """``cairn doctor``'s findings for this open vault."""
        from engine.doctor import run_doctor

        return run_doctor(self.paths.root, settings=self._settings, vault=self)

    def counts(self) -> Counts:
        """How many events, facts, documents … the vault holds."""
        row = self.store.query(
            """SELECT
                 (SELECT COUNT(*) FROM events),
                 (SELECT COUNT(*) FROM facts WHERE status != 'deleted'),
                 (SELECT COUNT(*) FROM facts WHERE status IN ('active', 'contested')),
                 (SELECT COUNT(*) FROM documents),
                 (SELECT COUNT(*) FROM spans),
                 (SELECT COUNT(*) FROM subjects WHERE merged_into IS NULL),
                 (SELECT COUNT(*) FROM conflicts WHERE status = 'open'),
                 (SELECT COUNT(*) FROM episodes),
                 (SELECT COUNT(*) FROM collections),
                 (SELECT COUNT(DISTINCT conversation_id) FROM events)"""
        )[0]
        return Counts(*(int(v) for v in row))

    def info(self) -> VaultInfo:
        """A summary of the vault and the machinery in use."""
        sqlite_version, vec_version = self.store.query("SELECT sqlite_version(), vec_version()")[0]
        warnings = tuple(self._embedder_choice.warnings)
        return VaultInfo(
            path=str(self.paths.root),
            schema_version=self.store.schema_version,
            app_version=__version__,
            sqlite_version=str(sqlite_version),
            vec_version=str(vec_version),
            llm_engine=self.llm_engine,
            llm_reason=self._llm_choice.reason,
            embedder=self.embedder.model_id,
            embedder_reason=self._embedder_choice.reason,
            vector_backend=self.vectors.backend,
            queue_depth=self.queue_depth(),
            counts=self.counts(),
            warnings=warnings,
        )


def _folder_key(folder: WatchedFolder) -> str:
    """A watched folder's path as the watcher keys it (``~`` expanded, normalised, links kept)."""
    return os.path.normpath(os.path.expanduser(folder.path.strip()))


def _sweep_work(work: Path) -> None:
    """Empty the vault's work folder (files a killed process left being parsed)."""
    if work.is_dir():
        for item in work.iterdir():
            if item.is_dir() and not item.is_symlink():
                shutil.rmtree(item, ignore_errors=True)
            else:
                item.unlink(missing_ok=True)
