"""Watched folders: list them with their state, watch one, let go of one, rescan now.

A watched folder is kept in sync with the vault: new and changed files are ingested, removed
files' documents deleted (held for confirmation when the whole folder vanishes or many files go at
once).  The list is saved in the vault's settings, so it survives a restart.  Paths are folders on
this machine, given absolute.
"""

from __future__ import annotations

import concurrent.futures
from pathlib import Path

from fastapi import APIRouter, Response, status

from engine.api.deps import VaultDep
from engine.api.models.watch import (
    RescanBody,
    RescanOut,
    ScanOut,
    UnwatchBody,
    WatchBody,
    WatchedFolderOut,
    WatchList,
)
from engine.errors import EnvironmentProblem, ValidationError
from engine.vault import Vault

router = APIRouter(prefix="/v6", tags=["watch"])


@router.get("/watch", summary="Watched folders")
def watched(vault: VaultDep) -> WatchList:
    """Every watched folder with its globs, its state and its last scan."""
    return _folders(vault)


@router.post(
    "/watch",
    summary="Watch a folder",
    responses={400: {"description": "Not an absolute path to a folder, or it overlaps one."}},
)
def watch(body: WatchBody, vault: VaultDep) -> WatchList:
    """Keep the folder in sync with the vault from now on; its first scan starts at once.

    Watching a folder again replaces its globs.  Answers every watched folder.
    """
    vault.watcher.watch(_absolute(body.path), include=body.include, exclude=body.exclude)
    return _folders(vault)


@router.delete(
    "/watch",
    summary="Stop watching a folder",
    responses={404: {"description": "The folder is not watched."}},
)
def unwatch(body: UnwatchBody, vault: VaultDep) -> WatchList:
    """Stop following the folder; its documents stay unless `forget` is true.

    Answers the folders still watched.
    """
    vault.watcher.unwatch(_absolute(body.path), forget=body.forget)
    return _folders(vault)


@router.post(
    "/watch/rescan",
    summary="Reconcile watched folders now",
    responses={
        202: {
            "description": "The scan outlasted `wait_s` and goes on (`completed: false`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RescanOut"}}},
        },
        404: {"description": "The folder is not watched."},
    },
)
def rescan(vault: VaultDep, response: Response, body: RescanBody | None = None) -> RescanOut:
    """Compare a watched folder (or every one) with the vault now and ingest what changed.

    Waits for the scan up to `wait_s` seconds; a longer scan goes on (202, `completed: false`)
    and its counts appear in `GET /v6/watch`.
    """
    request = body if body is not None else RescanBody()
    path = _absolute(request.path) if request.path is not None else None
    try:
        result = vault.watcher.rescan(path, timeout=request.wait_s)
    except TimeoutError:
        response.status_code = status.HTTP_202_ACCEPTED
        return RescanOut(completed=False, result=None)
    except concurrent.futures.CancelledError:
        raise EnvironmentProblem(
            "The folder watcher stopped before the scan ran.",
            fix="The vault is closing; retry once Cairn is running again.",
        ) from None
    return RescanOut(completed=True, result=ScanOut.of_result(result))


def _folders(vault: Vault) -> WatchList:
    settings = {Path(f.path): f for f in vault.settings.watch.folders}
    return WatchList(
        folders=[
            WatchedFolderOut.of_status(status_, settings.get(Path(status_.path))) for status_ in vault.watcher.status()
        ]
    )


def _absolute(raw: str) -> Path:
    path = Path(raw).expanduser()
    if not path.is_absolute():
        raise ValidationError(
            "path",
            f"{raw!r} is a relative path",
            fix="Give the absolute path of the folder (the endpoint has no working folder of yours).",
        )
    return path
