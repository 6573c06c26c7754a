"""Document uploads shared by REST (``POST /v6/documents``) and MCP (``upload_document``).

Three ways in: a file (multipart), a text with a file name (JSON ``{name, content}``), or the path
of a file on this machine (JSON ``{path}``).  The endpoint only listens on loopback behind the
token, but a path is still checked before the vault reads it: it must be absolute and name a regular
file this process can read.  A folder, a named pipe (reading it would block), a device or a socket
is refused with a 400 that says which it is.  The vault then reads it only when it leads (links
followed) into a watched folder or ``documents.allowed_roots``; anything else is a 403
``path_not_allowed`` naming that setting (:class:`~engine.documents.service.PathNotAllowed`).

An upload the parser cannot read is quarantined by the vault; the endpoint answers that with
:class:`DocumentQuarantined` (422, ``document_quarantined``) carrying the typed reason and the
quarantine id, because a 200/201 must mean the document is in the vault and searchable.  A large file
(or any file sent with ``wait=false``) is answered 202 ``parsing`` instead: the document exists and
shows its reading progress, and a file that then cannot be read leaves it ``failed`` with the reason
and its quarantine entry.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from engine.api.models.documents import DocumentJsonBody, UploadOut
from engine.documents.model import UploadResult
from engine.errors import UserError, ValidationError
from engine.vault import Vault

#: Documents looked through to tell a new path from one already in the vault.
_PATH_LOOKUP_LIMIT = 1_000_000

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class DocumentQuarantined(UserError):
    """The upload was well-formed, but its file could not be parsed and is held in quarantine."""

    code = "document_quarantined"

    def __init__(self, result: UploadResult) -> None:
        reason, _, detail = result.reason.partition(": ")
        super().__init__(
            f"{result.name} could not be read ({reason}) and is held in quarantine.",
            fix="Repair or re-export the file and upload it again. A file uploaded by path can "
            f"be retried in place: POST /v6/documents/quarantine/{result.quarantine_id}/retry.",
            details={
                "name": result.name,
                "reason": reason,
                "detail": detail,
                "quarantine_id": result.quarantine_id,
            },
        )


@dataclass(frozen=True, slots=True)
class Upload:
    """What a request asks to upload, checked; :meth:`run` hands it to the vault."""

    path: Path | None = None
    name: str | None = None
    data: bytes | None = None
    text: str | None = None
    mime: str | None = None
    document_id: int | None = None
    collection_id: int | None = None
    project_id: str | None = None
    user_id: str = "default"
    background: bool | None = False  # read after answering; None: when larger than documents.background_above_bytes

    @classmethod
    def of_json(cls, body: DocumentJsonBody) -> Upload:
        """A JSON upload: ``name`` with ``content``, or ``path`` (checked here)."""
        if body.path is not None:
            if body.name is not None or body.content is not None:
                raise ValidationError(
                    "path",
                    "give either path, or name and content, not both",
                    fix="Send {path} for a file on this machine, {name, content} for a text.",
                )
            return cls(
                path=regular_file(body.path),
                document_id=body.document_id,
                collection_id=body.collection_id,
                project_id=body.project_id,
                user_id=body.user_id,
            )
        if body.content is None:
            raise ValidationError(
                "content",
                "is required (with name), unless path is given",
                fix="Send {name, content} for a text, or {path} for a file on this machine.",
            )
        if body.name is None:
            raise ValidationError("name", "is required with content (its extension picks the parser, e.g. notes.md)")
        return cls(
            name=body.name,
            text=body.content,
            document_id=body.document_id,
            collection_id=body.collection_id,
            project_id=body.project_id,
            user_id=body.user_id,
        )

    def run(self, vault: Vault) -> tuple[UploadResult, bool]:
        """Upload; returns the vault's result and whether a new document was created.

        Raises:
            DocumentQuarantined: the file could not be parsed.
            VaultError: what the vault raised (validation, not found, unsupported type, …).
        """
        existing = (
            _document_at(vault, self.path, self.user_id) if self.path is not None and self.document_id is None else None
        )
        result = vault.documents.upload(
            path=self.path,
            name=self.name,
            data=self.data,
            text=self.text,
            mime=self.mime,
            document_id=self.document_id,
            collection_id=self.collection_id,
            project_id=self.project_id,
            user_id=self.user_id,
            client_path=True,  # a client named it: only files in the folders the person allowed
            background=self.background,
        )
        if result.status == "quarantined" or result.document_id is None:
            raise DocumentQuarantined(result)
        created = result.status != "unchanged" and self.document_id is None and (self.path is None or existing is None)
        return result, created


def retry(vault: Vault, quarantine_id: int) -> tuple[UploadResult, bool]:
    """Parse a quarantined file again from its path; like :meth:`Upload.run`.

    Raises:
        NotFound: no such quarantine entry.
        ValidationError: the file is no longer at its path (or was uploaded as bytes).
        DocumentQuarantined: it still cannot be parsed.
    """
    entry = vault.documents.quarantined(quarantine_id)
    existing = _document_at(vault, Path(entry.path), None) if entry.path else None
    result = vault.documents.retry(quarantine_id)
    if result.status == "quarantined" or result.document_id is None:
        raise DocumentQuarantined(result)
    return result, result.status != "unchanged" and existing is None


def upload_out(result: UploadResult) -> UploadOut:
    """The answer for a stored upload."""
    return UploadOut(
        document_id=int(result.document_id or 0),
        status=result.status,  # quarantined never gets here (DocumentQuarantined)
        sections=result.sections,
        spans=result.spans,
        name=result.name,
        reason=result.reason,
    )


def regular_file(raw: str) -> Path:
    """``raw`` as an absolute path to a regular, readable file (a link to one is fine).

    Raises:
        ValidationError: on ``path``, saying what is wrong with it.
    """
    path = Path(raw).expanduser()
    if not path.is_absolute():
        raise ValidationError(
            "path",
            f"{raw!r} is a relative path",
            fix="Give the absolute path of the file (the endpoint has no working folder of yours).",
        )
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ValidationError("path", f"{path} does not exist") from None
    except PermissionError:
        raise ValidationError("path", f"{path} cannot be reached (permission denied)") from None
    except OSError as exc:
        raise ValidationError("path", f"{path} cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
        raise ValidationError(
            "path",
            f"{path} is {kind}; only regular files can be uploaded",
            fix="Give the path of a file. Folders are kept in sync with POST /v6/watch.",
        )
    if not os.access(path, os.R_OK):
        raise ValidationError("path", f"{path} cannot be read by Cairn (permission denied)")
    return path


def _document_at(vault: Vault, path: Path, user_id: str | None) -> int | None:
    """The document already uploaded from ``path`` (as the vault records it: resolved), if any
    (``user_id`` None: of any user)."""
    resolved = str(path.resolve())
    for info in vault.documents(user_id=user_id, limit=_PATH_LOOKUP_LIMIT):
        if info.path == resolved:
            return info.id
    return None
