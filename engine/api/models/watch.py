"""Models of watched folders: what is watched, its state, and the counts of a scan.

They mirror :mod:`engine.watching.contract` (``RootStatus``, ``ScanResult``) with the folder's
include/exclude globs from the settings; wall-clock times become ISO-8601 UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from engine.api.models.common import RequestModel, ResponseModel
from engine.api.models.documents import MAX_PATH_CHARS
from engine.config import WatchedFolder
from engine.watching.contract import RootStatus, ScanResult

RootState = Literal["ok", "scanning", "paused", "vanished", "error"]

#: Longest wait for a rescan before the answer says it is still running.
MAX_WAIT_S = 300.0

_SCAN_EXAMPLE: dict[str, Any] = {
    "roots": ["/home/ana/Notes"],
    "reason": "demand",
    "added": 2,
    "updated": 1,
    "removed": 0,
    "unchanged": 40,
    "failed": 0,
    "skipped": 3,
    "degraded": 0,
    "quarantined": 0,
    "deferred": 0,
    "held_deletions": 0,
    "vanished": False,
    "aborted": False,
    "seconds": 0.42,
    "finished_at": "2026-03-01T09:30:00Z",
    "errors": [],
}
_FOLDER_EXAMPLE: dict[str, Any] = {
    "path": "/home/ana/Notes",
    "include": ["*.md", "*.markdown", "*.txt", "*.pdf", "*.html", "*.htm"],
    "exclude": [".*", "*~", "*.swp", "*.tmp", "node_modules", "__pycache__"],
    "state": "ok",
    "last_scan_at": "2026-03-01T09:30:00Z",
    "last_result": _SCAN_EXAMPLE,
    "pending_paths": 0,
    "held_deletions": 0,
    "error": None,
}
_GLOBS_HELP = "Glob patterns matched against file names (default: the usual document types)."


def _utc(epoch: float | None) -> datetime | None:
    return datetime.fromtimestamp(epoch, UTC) if epoch else None


class WatchBody(RequestModel):
    """A folder to keep in sync with the vault."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"path": "/home/ana/Notes"},
                {"path": "/home/ana/Papers", "include": ["*.pdf"], "exclude": ["drafts"]},
            ]
        }
    )

    path: str = Field(
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="Absolute path of a folder on this machine (it may not overlap a watched one).",
    )
    include: list[str] | None = Field(
        default=None, min_length=1, max_length=100, description=f"Files to take. {_GLOBS_HELP}"
    )
    exclude: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description=f"Files and folders to skip. {_GLOBS_HELP}",
    )


class UnwatchBody(RequestModel):
    """A watched folder to let go of."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"path": "/home/ana/Notes"}, {"path": "/x", "forget": True}]}
    )

    path: str = Field(min_length=1, max_length=MAX_PATH_CHARS, description="The watched folder, as listed.")
    forget: bool = Field(
        default=False,
        description="Also delete the documents that came from it (default: they stay).",
    )


class RescanBody(RequestModel):
    """Which folder to reconcile now."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"path": "/home/ana/Notes"}, {}]})

    path: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="The watched folder; omitted: every watched folder.",
    )
    wait_s: float = Field(
        default=30.0,
        ge=0,
        le=MAX_WAIT_S,
        description="Seconds to wait for the scan; a longer one goes on and answers 202.",
    )


class ScanOut(ResponseModel):
    """Counts of one reconciliation scan (or of several folders together)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_SCAN_EXAMPLE]})

    roots: list[str] = Field(description="The folders scanned.")
    reason: str = Field(description="Why it ran: demand, added, timer, change, confirm, …")
    added: int = Field(description="New files ingested.")
    updated: int = Field(description="Changed files ingested again.")
    removed: int = Field(description="Documents removed because their file is gone.")
    unchanged: int = Field(description="Files already in the vault as they are.")
    failed: int = Field(description="Files that could not be read.")
    skipped: int = Field(description="Files of a type no parser reads.")
    degraded: int = Field(description="Files stored without extractable text.")
    quarantined: int = Field(description="Files that could not be parsed.")
    deferred: int = Field(description="Files still being written; taken once they settle.")
    held_deletions: int = Field(description="Removals held until confirmed (the folder vanished, or many files went).")
    vanished: bool = Field(description="The folder itself is missing.")
    aborted: bool = Field(description="The scan stopped before the end.")
    seconds: float = Field(description="How long it took.")
    finished_at: datetime | None = Field(description="When it finished (UTC).")
    errors: list[str] = Field(description="What went wrong, file by file.")

    @classmethod
    def of_result(cls, result: ScanResult) -> ScanOut:
        """The model of one engine :class:`~engine.watching.contract.ScanResult`."""
        return cls(
            roots=[str(root) for root in result.roots],
            reason=result.reason,
            added=result.added,
            updated=result.updated,
            removed=result.removed,
            unchanged=result.unchanged,
            failed=result.failed,
            skipped=result.skipped,
            degraded=result.degraded,
            quarantined=result.quarantined,
            deferred=result.deferred,
            held_deletions=result.held_deletions,
            vanished=result.vanished,
            aborted=result.aborted,
            seconds=result.seconds,
            finished_at=_utc(result.finished_at),
            errors=list(result.errors),
        )


class RescanOut(ResponseModel):
    """The outcome of a rescan: its counts, or that it is still running."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"completed": True, "result": _SCAN_EXAMPLE},
                {"completed": False, "result": None},
            ]
        }
    )

    completed: bool = Field(
        description="False when the scan outlasted `wait_s`; it goes on, and `GET /v6/watch` "
        "shows its result when it ends."
    )
    result: ScanOut | None = Field(description="The counts (null while still running).")


class WatchedFolderOut(ResponseModel):
    """One watched folder: its globs, its state and its last scan."""

    model_config = ConfigDict(json_schema_extra={"examples": [_FOLDER_EXAMPLE]})

    path: str = Field(description="The folder.")
    include: list[str] = Field(description="Files taken.")
    exclude: list[str] = Field(description="Files and folders skipped.")
    state: RootState = Field(
        description="ok (in sync, watched), scanning, paused (removals held for confirmation), "
        "vanished (the folder is missing; nothing is deleted unless confirmed) or error."
    )
    last_scan_at: datetime | None = Field(description="When it was last scanned (UTC).")
    last_result: ScanOut | None = Field(description="Counts of the last scan.")
    pending_paths: int = Field(description="Changed files waiting to settle.")
    held_deletions: int = Field(description="Removals waiting for confirmation.")
    error: str | None = Field(description="Why it cannot be watched or read, if so.")

    @classmethod
    def of_status(cls, status: RootStatus, folder: WatchedFolder | None) -> WatchedFolderOut:
        """A folder's status, with its globs from ``folder`` (the defaults when not in settings)."""
        globs = folder or WatchedFolder(path=str(status.path))
        return cls(
            path=str(status.path),
            include=list(globs.include),
            exclude=list(globs.exclude),
            state=status.state,
            last_scan_at=_utc(status.last_scan_at),
            last_result=(ScanOut.of_result(status.last_result) if status.last_result is not None else None),
            pending_paths=status.pending_paths,
            held_deletions=status.held_deletions,
            error=status.error,
        )


class WatchList(ResponseModel):
    """Every watched folder, by path."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"folders": [_FOLDER_EXAMPLE]}]})

    folders: list[WatchedFolderOut] = Field(description="The watched folders.")
