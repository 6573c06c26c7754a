"""Reconciliation: make the vault's index of a folder equal the folder; ingest settled files.

A scan walks the folder (path, size, mtime), asks the sink what it holds, hashes only files whose
size or mtime differ, and ingests or removes the difference.  Three safeguards sit in the middle:

* files written within the last ``debounce_s`` (by mtime), and indexed files missing from a
  directory that just changed (an editor's rename dance in progress), are looked at again after
  ``debounce_s`` — a scan never ingests a half-written file or deletes a document whose file is
  being replaced;
* a folder that is gone, or a scan that would remove more than ``mass_delete_ratio`` of the indexed
  files (and more than ``mass_delete_min``), or any removal after the folder's device changed (an
  unmounted drive leaves an empty mount point), holds the deletions and reports ``watch.vanished``:
  nothing is removed until confirmed;
* files under a directory that could not be listed are never treated as deleted.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine.watching.containment import real_path, resolve_within
from engine.watching.contract import (
    INGEST_OUTCOMES,
    FileState,
    FolderSink,
    ScanResult,
    content_hash,
)
from engine.watching.root import WatchedRoot, WatchTuning
from engine.watching.walk import FileSig, WalkResult, stat_sig, walk_folder

log = logging.getLogger(__name__)

Defer = Callable[[WatchedRoot, Path, FileSig | None], None]


@dataclass(slots=True)
class _Tally:
    counts: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def count(self, outcome: str, *, new: bool) -> None:
        if outcome in ("ok", "degraded"):
            self.add("added" if new else "updated")
            if outcome == "degraded":
                self.add("degraded")
        else:
            self.add(outcome)


class _Progress:
    """``ingest.progress`` of one scan: first, last, and at most one per interval between."""

    def __init__(self, reconciler: Reconciler, root: Path, total: int) -> None:
        self._r = reconciler
        self._root = str(root)
        self._total = total
        self._done = 0
        self._last = reconciler.clock()
        if total:
            self._emit("")

    def step(self, current: Path) -> None:
        self._done += 1
        now = self._r.clock()
        if self._done >= self._total or now - self._last >= self._r.tuning.progress_interval_s:
            self._last = now
            self._emit(str(current))

    def _emit(self, current: str) -> None:
        self._r.report(
            "ingest.progress",
            {"root": self._root, "done": self._done, "total": self._total, "current": current},
        )


class Reconciler:
    """Scans folders and ingests settled files through the sink; runs on one thread at a time."""

    def __init__(
        self,
        sink: FolderSink,
        *,
        debounce_s: float,
        rescan_interval_s: float,
        tuning: WatchTuning,
        clock: Callable[[], float],
        stopping: threading.Event,
        defer: Defer,
        on_state: Callable[[WatchedRoot], None],
    ) -> None:
        self.sink = sink
        self.debounce_s = debounce_s
        self.rescan_interval_s = rescan_interval_s
        self.tuning = tuning
        self.clock = clock
        self._stopping = stopping
        self._defer = defer
        self._on_state = on_state

    def report(self, event: str, data: dict[str, object]) -> None:
        """Tell the sink; a failing report must never stop reconciliation."""
        try:
            self.sink.report(event, data)
        except Exception:
            log.exception("folder sink failed to take report %s", event)

    def known(self, root: WatchedRoot) -> dict[Path, FileState]:
        """The sink's index of ``root`` as last seen, loaded on first use."""
        if root.known is None:
            root.known = dict(self.sink.indexed_files(root.path))
        return root.known

    def ingest_path(self, root: WatchedRoot, path: Path, sig: FileSig) -> str:
        """Ingest a settled file unless the index has this size and mtime; returns the outcome."""
        held = self.known(root).get(path)
        if held is not None and sig.state().same_stat(held):
            return "unchanged"
        return self._ingest(root, path, sig, _Tally(), new=held is None)

    def forget_root(self, root: WatchedRoot) -> ScanResult:
        """Remove all the vault holds for ``root`` (the person asked: no safeguard applies)."""
        started, tally = self.clock(), _Tally()
        self._remove(root, sorted(self.sink.indexed_files(root.path)), tally)
        root.known, root.held, root.kept, root.hold_reason = {}, set(), set(), None
        return self._finish(root, "forget", tally, started, vanished=root.vanished)

    def scan(self, root: WatchedRoot, reason: str, *, confirm: bool = False) -> ScanResult:
        """Reconcile ``root``; ``confirm`` carries out deletions that would otherwise be held."""
        started, tally = self.clock(), _Tally()
        root.state = "scanning"
        self._on_state(root)
        try:
            st = os.stat(root.path)
            if not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(root.path)
        except (FileNotFoundError, NotADirectoryError):
            return self._vanished(root, reason, tally, started, confirm=confirm)
        except OSError as exc:  # an unreachable mount: say so, delete nothing
            error = f"{root.path}: {exc.strerror or exc}"
            tally.errors.append(error)
            return self._finish(root, reason, tally, started, error=error)
        if root.vanished:
            self._returned(root)
        device_changed = root.identity is not None and root.identity[0] != st.st_dev
        root.identity = (st.st_dev, st.st_ino)
        walk = walk_folder(root.path, root.scope, should_stop=self._stopping.is_set)
        if walk.aborted:  # a partial walk would make the unwalked files look deleted
            return self._finish(root, reason, tally, started, aborted=True)
        tally.errors.extend(walk.errors[:20])
        root.links, root.dir_count = walk.links, walk.dirs
        indexed = dict(self.sink.indexed_files(root.path))
        root.known = dict(indexed)
        work, missing = self._differences(root, walk, indexed, tally, confirm=confirm)
        if not self._settle(root, indexed, work, missing, tally):
            return self._finish(root, reason, tally, started, aborted=True)
        removals = self._guard(root, missing, indexed, device_changed=device_changed, confirm=confirm)
        progress = _Progress(self, root.path, len(work) + len(removals))
        for path in sorted(work):
            if self._stopping.is_set():
                return self._finish(root, reason, tally, started, aborted=True)
            self._ingest(root, path, work[path], tally, new=path not in indexed)
            progress.step(path)
        self._remove(root, sorted(removals), tally, progress)
        root.baselined = True
        return self._finish(root, reason, tally, started)

    def _differences(
        self,
        root: WatchedRoot,
        walk: WalkResult,
        indexed: dict[Path, FileState],
        tally: _Tally,
        *,
        confirm: bool,
    ) -> tuple[dict[Path, FileSig], set[Path]]:
        work = {p: s for p, s in walk.files.items() if p not in indexed or not s.state().same_stat(indexed[p])}
        tally.add("unchanged", len(walk.files) - len(work))
        unreadable = walk.unreadable
        missing = {p for p in indexed if p not in walk.files and not any(p.is_relative_to(u) for u in unreadable)}
        root.kept &= set(indexed)
        root.kept -= walk.files.keys()  # kept files that came back are ordinary files again
        if confirm:
            root.kept.clear()
        else:
            missing -= root.kept
        return work, missing

    def _settle(
        self,
        root: WatchedRoot,
        indexed: dict[Path, FileState],
        work: dict[Path, FileSig],
        missing: set[Path],
        tally: _Tally,
    ) -> bool:
        """Look again, ``debounce_s`` later, at whatever was in motion when the walk passed.

        Returns False when the watcher is stopping and nothing was settled.
        """
        fresh_ns = self.debounce_s * 1e9
        now_ns = time.time_ns()
        moving = [p for p, s in work.items() if now_ns - s.mtime_ns < fresh_ns]
        renaming = [p for p in missing if _dir_recently_changed(p, root.path, now_ns - fresh_ns)]
        if not (moving or renaming):
            return True
        if self._stopping.wait(self.debounce_s):
            return False
        for path in moving:
            now = stat_sig(path)
            if now == work[path]:
                continue
            del work[path]
            if now is None:
                if path in indexed:
                    missing.add(path)
            else:
                # still being written: the per-path debounce takes over
                self._defer(root, path, now)
                tally.add("deferred")
        for path in renaming:
            now = stat_sig(path)
            if now is not None and resolve_within(path, (root.path,)) is not None:  # a link out stays missing
                missing.discard(path)
                self._defer(root, path, now)
                tally.add("deferred")
        return True

    def _guard(
        self,
        root: WatchedRoot,
        missing: set[Path],
        indexed: dict[Path, FileState],
        *,
        device_changed: bool,
        confirm: bool,
    ) -> set[Path]:
        """Decide which missing files may be removed now; hold the rest and ask.

        Files first seen less than ``new_file_grace_s`` ago (a tool creating and deleting files in
        a burst) neither count toward the share nor are held, unless the device changed.
        """
        now = self.clock()
        grace = self.tuning.new_file_grace_s
        root.newcomers = {p: t for p, t in root.newcomers.items() if now - t < grace}
        if confirm:
            root.held, root.hold_reason = set(), None
            return missing
        if device_changed or root.hold_reason == "device_changed":
            protected = set(missing)
        else:
            protected = {p for p in missing if p not in root.newcomers}
        established = len(indexed) - sum(1 for p in root.newcomers if p in indexed)
        reason: str | None = None
        if root.hold_reason is not None and protected:
            # already asked: keep holding whatever is missing until answered
            reason = root.hold_reason
        elif device_changed and protected:
            reason = "device_changed"
        elif (
            len(protected) > self.tuning.mass_delete_min
            and len(protected) > self.tuning.mass_delete_ratio * established
        ):
            reason = "mass_disappearance"
        if reason is None:
            if root.hold_reason is not None:
                self.report("watch.resumed", {"root": str(root.path), "reason": "nothing_missing"})
            root.held, root.hold_reason = set(), None
            return missing
        newly = root.hold_reason is None
        root.held, root.hold_reason = protected, reason
        if newly:
            self.report(
                "watch.vanished",
                {
                    "root": str(root.path),
                    "reason": reason,
                    "missing": len(protected),
                    "indexed": established,
                    "sample": [str(p) for p in sorted(protected)[:10]],
                },
            )
        return missing - protected

    def _vanished(self, root: WatchedRoot, reason: str, tally: _Tally, started: float, *, confirm: bool) -> ScanResult:
        if confirm:
            self._remove(root, sorted(self.sink.indexed_files(root.path)), tally)
            root.known, root.held, root.kept, root.hold_reason = {}, set(), set(), None
        elif not root.vanished:
            indexed = self.sink.indexed_files(root.path)
            root.held = set(indexed) - root.kept
            root.hold_reason = "vanished"
            root.baselined = False  # when it comes back, its first scan is a new baseline
            self.report(
                "watch.vanished",
                {
                    "root": str(root.path),
                    "reason": "vanished",
                    "missing": len(root.held),
                    "indexed": len(indexed),
                },
            )
        root.vanished = True
        return self._finish(root, reason, tally, started, vanished=True)

    def _returned(self, root: WatchedRoot) -> None:
        """A folder that comes back simply rescans: the vanished-folder question is moot."""
        root.vanished = False
        if root.hold_reason == "vanished":
            root.held, root.hold_reason = set(), None
        self.report("watch.resumed", {"root": str(root.path), "reason": "returned"})

    def _ingest(self, root: WatchedRoot, path: Path, sig: FileSig, tally: _Tally, *, new: bool) -> str:
        if resolve_within(path, (root.path,)) is None and real_path(path) is not None:
            # Turned into a link out of the folder since the walk (or named by an event): never read.  A document
            # it had is left to the scan asked for here, whose walk no longer lists it, behind the usual guard.
            tally.add("skipped")
            tally.errors.append(f"{path}: a link out of the watched folder, not followed")
            if path in self.known(root):
                root.want_scan(self.clock(), "link", delay=0, max_delay=0)
            return "skipped"
        try:
            digest = content_hash(path)
        except OSError as exc:
            if stat_sig(path) is None:
                # gone meanwhile: the per-path check asks for the scan that removes it
                self._defer(root, path, None)
                tally.add("deferred")
                return "deferred"
            tally.add("failed")
            tally.errors.append(f"{path}: {exc.strerror or exc}")
            return "failed"
        after = stat_sig(path)
        if after != sig:  # written to while we hashed: not settled after all
            self._defer(root, path, after)
            tally.add("deferred")
            return "deferred"
        state = sig.state(digest)
        try:
            outcome = self.sink.ingest_file(path, root.path, state)
        except Exception as exc:
            log.exception("folder sink failed to ingest %s", path)
            tally.add("failed")
            tally.errors.append(f"{path}: {exc}")
            return "failed"
        if outcome not in INGEST_OUTCOMES:
            tally.add("failed")
            tally.errors.append(f"{path}: the sink answered {outcome!r}")
            return "failed"
        self.known(root)[path] = state
        root.kept.discard(path)
        if new and root.baselined:
            # appeared while watched, after the first full scan: see _guard
            root.newcomers[path] = self.clock()
        tally.count(outcome, new=new)
        return outcome

    def _remove(self, root: WatchedRoot, paths: list[Path], tally: _Tally, progress: _Progress | None = None) -> None:
        known = self.known(root)
        for path in paths:
            try:
                self.sink.remove_file(path, root.path)
            except Exception as exc:
                log.exception("folder sink failed to remove %s", path)
                tally.add("failed")
                tally.errors.append(f"{path}: {exc}")
            else:
                known.pop(path, None)
                root.newcomers.pop(path, None)
                tally.add("removed")
            if progress is not None:
                progress.step(path)

    def _finish(
        self,
        root: WatchedRoot,
        reason: str,
        tally: _Tally,
        started: float,
        *,
        vanished: bool = False,
        aborted: bool = False,
        error: str | None = None,
    ) -> ScanResult:
        c = tally.counts
        result = ScanResult(
            roots=(root.path,),
            reason=reason,
            added=c.get("added", 0),
            updated=c.get("updated", 0),
            removed=c.get("removed", 0),
            unchanged=c.get("unchanged", 0),
            failed=c.get("failed", 0),
            skipped=c.get("skipped", 0),
            degraded=c.get("degraded", 0),
            quarantined=c.get("quarantined", 0),
            deferred=c.get("deferred", 0),
            held_deletions=len(root.held),
            vanished=vanished,
            aborted=aborted,
            seconds=self.clock() - started,
            finished_at=time.time(),
            errors=tuple(tally.errors),
        )
        root.error = error or root.watch_error or root.watch_warning
        if vanished:
            root.state = "vanished"
        elif root.hold_reason is not None:
            root.state = "paused"
        else:
            root.state = "error" if root.error else "ok"
        root.last_scan_at, root.last_result = result.finished_at, result
        interval = self.rescan_interval_s
        if root.watch_error or root.watch_warning:
            interval = min(interval, self.tuning.poll_interval_s)
        root.next_periodic = self.clock() + interval
        if not aborted:
            self.report("watch.scanned", result.as_report())
        return result


def _dir_recently_changed(path: Path, root: Path, since_ns: float) -> bool:
    """Whether the nearest existing directory above ``path`` changed after ``since_ns``."""
    directory = path.parent
    while True:
        try:
            return os.stat(directory).st_mtime_ns >= since_ns
        except OSError:
            if directory == root or root not in directory.parents:
                return False
            directory = directory.parent
