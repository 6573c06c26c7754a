"""FolderWatcher: keeps the vault's documents in step with watched folders, on one worker thread.

Threads: watchdog's observer threads only record hints (:mod:`engine.watching.hints`).  One worker
thread owns every folder's state and makes every sink call, in order.  Public methods called from
other threads hand the worker a command and wait for it; before :meth:`FolderWatcher.start` (or
after :meth:`FolderWatcher.stop`) they run in the calling thread instead, so an on-demand scan
works without a running watcher.

The worker's loop: run commands, absorb hints (a changed path starts or restarts its debounce;
folder-level hints request a debounced folder scan; too many pending paths collapse into one),
check every ``liveness_interval_s`` that each folder still exists, is the same folder and is still
watched, run due folder scans (start-up, periodic, requested), then ingest paths whose size, mtime
and inode held still for ``debounce_s``.  A settled path that has disappeared never deletes
anything by itself: it requests a folder scan, and only scans remove files, behind the
mass-deletion safeguard.
"""

from __future__ import annotations

import logging
import os
import queue
import stat
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar

from engine.config import WatchedFolder, WatchSettings
from engine.errors import NotFound, ValidationError
from engine.watching.contract import FolderSink, RootStatus, ScanResult
from engine.watching.debounce import PathDebounce
from engine.watching.hints import HintBuffer
from engine.watching.observation import Observation, system_watch_budget
from engine.watching.reconcile import Reconciler
from engine.watching.root import WatchedRoot, WatchTuning, root_path
from engine.watching.walk import FileSig

log = logging.getLogger(__name__)

T = TypeVar("T")


class FolderWatcher:
    """Watched folders kept in sync with a :class:`~engine.watching.contract.FolderSink`.

    Args:
        sink: the vault's document service (called from the worker thread only; from the
            caller's thread for on-demand work while the watcher is stopped).
        settings: folders, debounce and rescan interval.
        clock: monotonic seconds; injectable for tests.
        tuning: thresholds (storms, mass deletion, intervals).

    Raises:
        ValidationError: a folder of ``settings`` is not absolute or overlaps another.
    """

    def __init__(
        self,
        sink: FolderSink,
        settings: WatchSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        tuning: WatchTuning | None = None,
    ) -> None:
        self._settings = settings
        self._clock = clock
        self._tuning = tuning or WatchTuning()
        self._debounce = settings.debounce_s
        self._lock = threading.Lock()  # guards _folders and _status (read by any thread)
        self._life = threading.Lock()  # serialises start/stop and work done in a caller's thread
        self._folders: dict[Path, WatchedFolder] = {}
        self._status: dict[Path, RootStatus] = {}
        self._roots: dict[Path, WatchedRoot] = {}
        self._commands: queue.SimpleQueue[tuple[Callable[[], object], Future[object]]] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._worker: threading.Thread | None = None
        self._next_liveness = 0.0
        self._hints = HintBuffer(
            clock,
            self._wake.set,
            storm_paths=self._tuning.storm_paths,
            storm_events=self._tuning.storm_events,
        )
        self._reconciler = Reconciler(
            sink,
            debounce_s=settings.debounce_s,
            rescan_interval_s=settings.rescan_interval_s,
            tuning=self._tuning,
            clock=clock,
            stopping=self._stopping,
            defer=self._defer,
            on_state=self._publish,
        )
        self._observation = Observation(self._hints, self._reconciler.report)
        self._paths = PathDebounce(
            self._reconciler,
            debounce_s=settings.debounce_s,
            storm_paths=self._tuning.storm_paths,
            clock=clock,
            stopping=self._stopping,
        )
        self._watch_budget = self._tuning.watch_budget
        for folder in settings.folders:
            self._register(folder)

    def start(self) -> None:
        """Start the observer, the worker and a start-up scan of every folder.  Idempotent."""
        with self._life:
            if self._worker is not None:
                return
            self._stopping.clear()
            self._paths.clear()
            self._worker = threading.Thread(target=self._run, name="cairn-folder-watcher", daemon=True)
            self._worker.start()

    def stop(self) -> None:
        """Stop the worker and the observer, waiting for both; pending commands are cancelled."""
        with self._life:
            worker = self._worker
            if worker is None:
                return
            self._stopping.set()
            self._wake.set()
            if worker is not threading.current_thread():
                worker.join()
            self._worker = None

    def watch(self, folder: WatchedFolder) -> None:
        """Add a folder (or change a watched folder's globs); it is scanned at once when running.

        Raises:
            ValidationError: the path is not absolute, or it lies inside (or contains) another
                watched folder.
        """
        self._register(folder)
        self._call(self._sync_roots)

    def unwatch(self, path: Path | str, *, forget: bool = False) -> None:
        """Stop watching a folder; its documents stay in the vault unless ``forget`` is true.

        Raises:
            NotFound: the folder is not watched.
        """
        key = self._key(path)
        with self._lock:
            folder = self._folders.pop(key)
            self._status.pop(key, None)

        def apply() -> None:
            if forget:
                root = self._roots.get(key) or WatchedRoot.for_folder(folder)
                self._reconciler.forget_root(root)
            self._sync_roots()

        self._call(apply)

    def scan(self, path: Path | str | None = None, *, timeout: float | None = None) -> ScanResult:
        """Reconcile one folder (or all of them) now and return the counts.

        Raises:
            NotFound: ``path`` is not a watched folder.
            TimeoutError: the worker did not finish within ``timeout`` seconds (the scan still
                runs; its result shows in :meth:`status`).
            concurrent.futures.CancelledError: the watcher was stopped before the scan ran.
        """
        key = None if path is None else self._key(path)

        def run() -> ScanResult:
            self._sync_roots()
            targets = [self._roots[key]] if key is not None else list(self._roots.values())
            result = ScanResult(roots=())
            for root in targets:
                result = result.merged(self._scan_root(root, "demand"))
            return result

        return self._call(run, timeout)

    def confirm_deletions(self, path: Path | str, *, timeout: float | None = None) -> ScanResult:
        """Carry out the deletions held for a folder (vanished, or many files gone) and resume."""
        key = self._key(path)
        return self._call(lambda: self._scan_root(self._runtime(key), "confirm", confirm=True), timeout)

    def cancel_deletions(self, path: Path | str, *, timeout: float | None = None) -> None:
        """Keep the documents whose files disappeared; resume normal operation for the rest."""
        key = self._key(path)
        self._call(lambda: self._cancel(self._runtime(key)), timeout)

    def status(self) -> list[RootStatus]:
        """One snapshot per watched folder, sorted by path."""
        with self._lock:
            return [self._status.get(p) or RootStatus(p, "scanning") for p in sorted(self._folders)]

    def _call(self, fn: Callable[[], T], timeout: float | None = None) -> T:
        if self._in_worker():  # a sink calling back into the watcher: already on the right thread
            return fn()
        with self._life:
            if self._worker is None:
                return fn()
            future: Future[object] = Future()
            self._commands.put((fn, future))
            self._wake.set()
        return future.result(timeout)  # type: ignore[return-value]

    def _register(self, folder: WatchedFolder) -> None:
        key = root_path(folder)
        real = os.path.realpath(key)
        with self._lock:
            for other in self._folders:
                if other == key:
                    continue
                other_real = os.path.realpath(other)
                if _nested(key, other) or _nested(Path(real), Path(other_real)):
                    raise ValidationError(
                        "watch.folders.path",
                        f"{key} overlaps the watched folder {other}",
                        fix="Watch either the outer folder or the inner one, not both.",
                    )
            self._folders[key] = folder

    def _key(self, path: Path | str) -> Path:
        key = Path(os.path.normpath(os.path.expanduser(str(path))))
        with self._lock:
            if key not in self._folders:
                raise NotFound("watched folder", str(path))
        return key

    def _runtime(self, key: Path) -> WatchedRoot:
        self._sync_roots()
        root = self._roots.get(key)
        if root is None:
            raise NotFound("watched folder", str(key))
        return root

    def _publish(self, root: WatchedRoot) -> None:
        pending = self._paths.counts().get(root.path, 0)
        with self._lock:
            if root.path in self._folders:
                self._status[root.path] = root.status(pending)

    def _defer(self, root: WatchedRoot, path: Path, sig: FileSig | None) -> None:
        self._paths.defer(root, path, sig)

    def _run(self) -> None:
        try:
            self._observation.open()
            now = self._clock()
            # folders known from before: an earlier run, or a scan while stopped
            for root in self._roots.values():
                self._observation.schedule(root)
                root.want_scan(now, "start", delay=0, max_delay=0)
            self._sync_roots("start")
            while not self._stopping.is_set():
                self._wake.clear()
                self._step()
                self._wake.wait(self._next_timeout())
        finally:
            self._shutdown()

    def _step(self) -> None:
        for name, action in (
            ("commands", self._run_commands),
            ("hints", self._absorb_hints),
            ("liveness", self._check_liveness),
            ("scans", self._run_due_scans),
            ("paths", self._run_due_paths),
        ):
            if self._stopping.is_set():
                return
            try:
                action()
            except Exception as exc:
                log.exception("folder watcher step %s failed", name)
                self._reconciler.report("watch.error", {"root": None, "error": f"{name}: {exc}"})
        counts = self._paths.counts()
        with self._lock:
            for path, root in self._roots.items():
                if path in self._folders:
                    self._status[path] = root.status(counts.get(path, 0))

    def _run_commands(self) -> None:
        while not self._stopping.is_set():
            try:
                fn, future = self._commands.get_nowait()
            except queue.Empty:
                return
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

    def _absorb_hints(self) -> None:
        now = self._clock()
        for key, hints in self._hints.drain().items():
            root = self._roots.get(key)
            if root is None or root.vanished:
                continue  # the liveness check owns vanished folders
            if hints.scan_reason is not None:
                if hints.scan_reason == "storm":
                    self._paths.drop(root)
                root.want_scan(now, hints.scan_reason, delay=self._debounce, max_delay=self._max_delay)
            if root.scan_due is not None:
                if hints.paths:  # the coming scan covers these; the events only say "not quiet yet"
                    root.want_scan(now, "events", delay=self._debounce, max_delay=self._max_delay)
                continue
            if not self._paths.note(root, hints.paths, now):
                root.want_scan(now, "storm", delay=self._debounce, max_delay=self._max_delay)

    def _check_liveness(self) -> None:
        now = self._clock()
        if now < self._next_liveness:
            return
        self._next_liveness = now + self._tuning.liveness_interval_s
        if not self._observation.healthy():
            self._observation.reopen(list(self._roots.values()))
            for root in self._roots.values():
                root.want_scan(now, "watcher_error", delay=0, max_delay=0)
        for root in self._roots.values():
            try:
                st = os.stat(root.path)
                missing = not stat.S_ISDIR(st.st_mode)
            except (FileNotFoundError, NotADirectoryError):
                missing = True
            except OSError:
                continue  # unreachable (stale mount): periodic scans report it, nothing to conclude
            if root.vanished or missing:
                if root.vanished != missing:  # came back, or vanished just now
                    reason = "returned" if root.vanished else "vanished"
                    root.want_scan(now, reason, delay=0, max_delay=0)
                continue
            if root.identity is not None and root.identity != (st.st_dev, st.st_ino):
                # replaced or remounted: the old watch follows the old directory
                self._observation.schedule(root)
                root.want_scan(now, "replaced", delay=0, max_delay=0)
            elif root.watch_error is not None:
                if now >= root.next_watch_retry:
                    root.next_watch_retry = now + self._tuning.poll_interval_s
                    self._observation.schedule(root)
                    if root.watch_error is None:
                        root.want_scan(now, "watch_restored", delay=0, max_delay=0)
            elif not self._observation.watches_alive(root):
                self._reconciler.report("watch.error", {"root": str(root.path), "error": "watch lost; rescanning"})
                self._observation.schedule(root)
                root.want_scan(now, "watcher_error", delay=0, max_delay=0)

    def _run_due_scans(self) -> None:
        for root in list(self._roots.values()):
            if self._stopping.is_set():
                return
            now = self._clock()
            if root.scan_due is not None and root.scan_due <= now:
                reason = root.scan_reason or "requested"
            elif root.scan_due is None and not root.vanished and now >= root.next_periodic:
                reason = "periodic"
            else:
                continue
            try:
                self._scan_root(root, reason)
            except Exception as exc:  # one folder's failure must not starve the others
                log.exception("scan of %s failed", root.path)
                self._reconciler.report("watch.error", {"root": str(root.path), "error": str(exc)})

    def _run_due_paths(self) -> None:
        self._paths.run_due(self._roots, self._max_delay)

    def _next_timeout(self) -> float:
        now = self._clock()
        deadlines = [self._next_liveness]
        for root in self._roots.values():
            if root.scan_due is not None:
                deadlines.append(root.scan_due)
            elif not root.vanished:
                deadlines.append(root.next_periodic)
        path_due = self._paths.next_due()
        if path_due is not None:
            deadlines.append(path_due)
        return max(0.0, min(deadlines) - now)

    @property
    def _max_delay(self) -> float:
        return max(self._tuning.scan_max_delay_s, 4 * self._debounce)

    def _sync_roots(self, reason: str = "added") -> None:
        with self._lock:
            folders = dict(self._folders)
        for key in [k for k in self._roots if k not in folders]:
            root = self._roots.pop(key)
            self._observation.unschedule(root)
            self._paths.drop(root)
            self._hints.forget(key)
        now = self._clock()
        for key, folder in folders.items():
            old = self._roots.get(key)
            if old is not None and old.folder == folder:
                continue
            root = WatchedRoot.for_folder(folder)
            if old is not None:  # new globs, same folder: what the person chose to keep stays kept
                self._observation.unschedule(old)
                root.kept = old.kept
            self._roots[key] = root
            if self._in_worker():
                self._observation.schedule(root)
                root.want_scan(now, reason, delay=0, max_delay=0)
            self._publish(root)

    def _in_worker(self) -> bool:
        return self._worker is not None and threading.current_thread() is self._worker

    def _scan_root(self, root: WatchedRoot, reason: str, *, confirm: bool = False) -> ScanResult:
        root.clear_scan_request()  # whatever was requested, this scan covers it
        if self._in_worker() and root.root_watch is None and root.path.is_dir():
            # watch before the walk, so nothing written during the scan is missed
            self._observation.schedule(root)
        try:
            result = self._reconciler.scan(root, reason, confirm=confirm)
        except Exception as exc:  # the sink failed: say so, and try again at the next period
            root.state, root.error = "error", f"scan failed: {exc}"
            root.next_periodic = self._clock() + min(self._settings.rescan_interval_s, self._tuning.poll_interval_s)
            self._publish(root)
            raise
        if root.vanished:
            self._observation.unschedule(root)
        else:
            self._observation.sync_links(root)
        if self._in_worker():
            self._check_watch_budget()
        self._publish(root)
        return result

    def _check_watch_budget(self) -> None:
        """Fall back to frequent rescans when the folders need more watches than the system has."""
        if self._watch_budget is None:
            self._watch_budget = system_watch_budget()
        total = sum(r.dir_count for r in self._roots.values() if not r.vanished)
        warning = None
        if self._watch_budget and total > self._watch_budget:
            warning = (
                f"{total} directories to watch but only {self._watch_budget} inotify watches "
                f"allowed (fs.inotify.max_user_watches); changes are found by rescans every "
                f"{self._tuning.poll_interval_s:g} s"
            )
        now = self._clock()
        for root in self._roots.values():
            if warning == root.watch_warning:
                continue
            if warning is not None:
                self._reconciler.report("watch.error", {"root": str(root.path), "error": warning})
                root.next_periodic = min(root.next_periodic, now + self._tuning.poll_interval_s)
            if root.state in ("ok", "error") and root.error == root.watch_warning:
                root.error = root.watch_error or warning
                root.state = "error" if root.error else "ok"
            root.watch_warning = warning
            self._publish(root)

    def _cancel(self, root: WatchedRoot) -> None:
        kept = len(root.held)
        root.kept |= root.held
        root.held, root.hold_reason = set(), None
        if not root.vanished:
            root.state = "error" if root.error else "ok"
        self._reconciler.report("watch.resumed", {"root": str(root.path), "reason": "cancelled", "kept": kept})
        self._publish(root)

    def _shutdown(self) -> None:
        self._observation.close(list(self._roots.values()))
        while True:
            try:
                _, future = self._commands.get_nowait()
            except queue.Empty:
                break
            future.cancel()


def _nested(a: Path, b: Path) -> bool:
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)
