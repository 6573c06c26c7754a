"""The Vault: the one door into the engine.

The GUI, the CLI, the REST routes and the MCP tools all go through it; nothing else reaches storage.  The vault
opens and closes the machinery and says what is in use; the work is grouped in its sub-objects (``vault.events``,
``vault.facts``, ``vault.jobs`` …), the way a collection's decks and tags are.  Methods return frozen DTOs
(``engine.dto`` and the sub-packages' DTO modules), never rows.

A vault is owned by one process at a time (an advisory lock); inside it one writer thread makes every change and
publishes committed changes on :attr:`Vault.changes`.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pluggy

from engine import paths
from engine.activity import ActivityLog
from engine.ai.embedders import Embedder, EmbedderChoice
from engine.ai.llm import LLM, GuardedLLM, LLMChoice, resolve_llm
from engine.ai.ollama import OllamaClient, OllamaStatus
from engine.ai.openai_compat import OpenAICompatClient
from engine.archive import ArchiveReport, Progress, export_archive
from engine.backups import BackupsApi
from engine.changes import ChangeFeed
from engine.config import Settings
from engine.conversations import ConversationsApi
from engine.documents.collections import CollectionsApi
from engine.documents.distill import Distiller
from engine.documents.folders import WatchApi
from engine.documents.originals import sweep as sweep_originals
from engine.documents.service import DocumentsApi
from engine.dto import Counts, VaultInfo
from engine.enrich import Enricher, EpisodeSummarizer
from engine.episodes import EpisodeCutter
from engine.errors import NotFound, ValidationError
from engine.facts.api import FactsApi
from engine.facts.catalog import Catalog, load_catalog, sync_predicates
from engine.facts.conflicts import ConflictsApi, count_open, move_to_subject
from engine.facts.decide import Decider
from engine.facts.pipeline import Pipeline
from engine.facts.statements import Restater
from engine.forget import ForgetScope, Receipt, forget as forget_scope, read_receipt
from engine.ingest import EventsApi
from engine.jobs import JobRunner, JobsApi
from engine.lockfile import VaultLock
from engine.permissions import Loosened, private_dir, tighten
from engine.plugin_api import new_plugin_manager
from engine.recall.gate import default_slots
from engine.recall.processes import AUTO_MIN_VECTORS, RankerProcesses
from engine.recall.service import Recall
from engine.recall.types import RecallRequest, RecallResult
from engine.store import PendingChange, Store
from engine.subjects import SubjectsApi
from engine.token import read_or_create_token, rotate_token
from engine.upkeep import Upkeep, UpkeepTasks, maintain_vectors, ready_vectors
from engine.vectors import SqliteVecIndex, VectorIndex
from engine.vectors.migration import (
    FILL_JOB,
    GuardedEmbedder,
    VectorFiller,
    VectorStatus,
    vector_status,
)
from engine.version import __version__
from engine.wiring import VectorWiring, build_openai_client, plan_vectors, probe_ollama, resolve_vault_embedder
from engine.workspace import CONSOLIDATE_JOB, PERSPECTIVES_JOB, Workspace

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ObjectView:
    """An object found by global id: its kind and its DTO (None for kinds without a public view, e.g. jobs)."""

    id: int
    kind: str
    value: Any


class Vault:
    """A vault folder opened for use.  Create with :meth:`Vault.open`; always :meth:`close` (or use ``with``).

    The vault itself opens, closes and holds the machinery; the work is done by its sub-objects: :attr:`events`
    (the one way events get in), :attr:`facts`, :attr:`conflicts`, :attr:`subjects`, :attr:`conversations`,
    :attr:`documents`, :attr:`collections`, :attr:`watcher`, :attr:`jobs`, :attr:`backups`, :attr:`workspace`,
    :attr:`activity`.
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
        vectors: VectorIndex,
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
        self._enricher = Enricher(store, self.pipeline, self._decider, vectors, lambda: self.llm)
        self._runner = JobRunner(store, settings.jobs)
        self.events = EventsApi(
            store,
            self._runner,
            settings=lambda: self._settings,
            episodes=EpisodeCutter(settings.episodes),
            pipeline=self.pipeline,
            decider=self._decider,
            enricher=self._enricher,
            event=lambda event_id: self.conversations.event(event_id),
        )
        self.facts = FactsApi(store, self._decider, self.pipeline, vectors)
        self.conflicts = ConflictsApi(store, self.facts)
        self.subjects = SubjectsApi(store, restate=self._restater.restate_subject, merged=move_to_subject)
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
            store, plugins, self.events.ingest, settings.episodes.idle_gap_minutes * 60
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
            originals_dir=self.paths.originals,
            uploads_dir=self.paths.uploads,
            emit=changes.emit,
        )
        self.collections = CollectionsApi(store)
        self.watcher = WatchApi(store, self.documents, self.changes.emit, lambda: self._settings, self.update_settings)
        self.backups = BackupsApi(store, self.paths.backups, lambda: self._settings.backups.generations, changes.emit)
        self.activity = ActivityLog(store, changes.subscribe)  # the history the Activity view shows after a restart
        self.jobs = JobsApi(store, self._runner, flush_usage=self._recall.flush_usage, flush_vectors=vectors.flush)
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
                maintain_vectors=lambda: maintain_vectors(vectors),
                workspace=self.workspace,
                backups_dir=self.paths.backups,
                backup_now=self.backups.now,
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
        self.documents.resume_reading()
        self.watcher.start()
        threading.Thread(
            target=ready_vectors, args=(self.vectors, self.start_recall_processes), name="vault-vectors", daemon=True
        ).start()
        self._upkeep.start()

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
        index = self.vectors
        if not isinstance(index, SqliteVecIndex) or self._closed or self.store.writer is None:
            return None  # only the in-memory mirror has copies to hand out (not Chroma, not during a migration)
        wanted = self._settings.recall.processes
        if wanted == -1:
            cores = os.cpu_count() or 1
            if vectors is None:
                vectors = index.held()
            wanted = default_slots() if cores >= 2 and vectors >= AUTO_MIN_VECTORS else 0
        if wanted <= 0:
            return None
        processes = RankerProcesses(self.paths.db, index, wanted)
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
        self.activity.close()  # after the workers: their last warnings are kept too
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
            self.watcher.rewatch(self._settings.watch.folders, new.watch.folders)
        file_only.save(self.paths.settings)
        self._settings = new
        self.pipeline.settings = new
        self._decider.settings = new.facts
        self.changes.emit("settings.changed", keys=sorted(changes))
        return new

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
        return self.store.vault_id()

    # -- recall ---------------------------------------------------------------------------------------------------
    def recall(self, request: RecallRequest) -> RecallResult:
        """Context for a chat client's next model call (DESIGN §5): ranked blocks and prompt-ready text.

        Raises:
            ValidationError: a request field is missing or out of range (the message names it).
        """
        return self._recall.recall(request)

    # -- forgetting -----------------------------------------------------------------------------------------------
    def forget(self, scope: ForgetScope) -> Receipt:
        """Forget everything in ``scope`` (``dry_run`` only counts) and return the receipt."""
        receipt = forget_scope(self.store, scope, self.paths.backups, generations=self._settings.backups.generations)
        if not scope.dry_run:
            self.vectors.after_forget()  # cascaded deletions bypass the search side; rebuild it from the store
            sweep_originals(self.store, self.paths.originals)  # a forgotten document's original file goes too
            self.documents.sweep_waiting()  # and the bytes of an upload that was still waiting to be read
        return receipt

    # -- the whole vault in one file -------------------------------------------------------------------------------
    def export(self, path: str | Path, *, progress: Progress | None = None) -> ArchiveReport:
        """Write the whole vault to one archive (``docs/export-format.md``); ``cairn restore`` rebuilds a vault
        from it.  Reads one consistent snapshot, so recording and enrichment go on meanwhile.

        Raises:
            ValidationError: ``path`` is a folder or cannot be written.
            StorageFull: the disk filled up (nothing is left behind).
        """
        self.activity.flush()  # the history up to now goes with the rest
        report = export_archive(self.store, self.paths.settings, Path(path), progress=progress)
        self.changes.emit("vault.exported", path=report.path, counts=report.counts)
        return report

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
                 (SELECT COUNT(*) FROM episodes),
                 (SELECT COUNT(*) FROM collections),
                 (SELECT COUNT(DISTINCT conversation_id) FROM events)"""
        )[0]
        names = (
            "events",
            "facts",
            "active_facts",
            "documents",
            "spans",
            "subjects",
            "episodes",
            "collections",
            "conversations",
        )
        counted = dict(zip(names, (int(v) for v in row), strict=True))
        return Counts(**counted, open_conflicts=count_open(self.store))  # the conflicts table's owner counts those

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
            queue_depth=self.jobs.queue_depth(),
            counts=self.counts(),
            warnings=warnings,
        )


def _sweep_work(work: Path) -> None:
    """Empty the vault's work folder (files a killed process left being parsed)."""
    if work.is_dir():
        for item in work.iterdir():
            if item.is_dir() and not item.is_symlink():
                shutil.rmtree(item, ignore_errors=True)
            else:
                item.unlink(missing_ok=True)
