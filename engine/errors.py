"""The one error hierarchy of the engine.

Every error the engine raises on purpose derives from :class:`VaultError`.  Two families matter to callers:

* :class:`UserError` — something the person (or a client) can fix: a bad request, a file Cairn can't read, a vault
  written by a newer Cairn.  It carries ``message`` (what happened) and ``fix`` (what to do), shown as they are.
* :class:`EnvironmentProblem` — the machine is not as needed: disk full, sqlite-vec won't load, Ollama is down.
  Also shown with a fix, but it is not the caller's input that is wrong.

Anything else escaping the engine is a bug and is reported as such by the GUI and the endpoint (never with a stack
trace over HTTP).  Each error names itself with a ``code``; which HTTP status answers it is the endpoint's business
(:data:`engine.api.errors.HTTP_STATUS`), not the engine's.

::

    VaultError
    ├── UserError
    │   ├── ValidationError        (field, message)
    │   ├── NotFound               (kind, id)
    │   ├── Conflict               (state clash)
    │   ├── VaultTooNew            (schema newer than this app)
    │   ├── VaultDamaged           (not SQLite, corrupt) — the file is left untouched
    │   ├── VaultLocked            (another process owns the vault)
    │   └── UnsupportedFile        (no parser for this type)
    └── EnvironmentProblem
        ├── ExtensionUnavailable   (sqlite-vec / extension loading)
        ├── StorageFull            (disk full, read-only disk)
        └── ModelUnavailable       (Ollama down, model missing)
"""

from __future__ import annotations

from typing import Any


class VaultError(Exception):
    """Base of every error the engine raises deliberately."""

    code = "vault_error"

    def __init__(self, message: str, *, fix: str = "", details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.details: dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        return f"{self.message} — {self.fix}" if self.fix else self.message


class UserError(VaultError):
    """Something the user or the calling client can fix."""

    code = "user_error"


class ValidationError(UserError):
    """Input that does not fit the contract; ``field`` names the offending field."""

    code = "validation_error"

    def __init__(self, field: str, message: str, *, fix: str = "") -> None:
        super().__init__(f"{field}: {message}", fix=fix, details={"field": field})
        self.field = field


class NotFound(UserError):
    """The object asked for does not exist (or was forgotten)."""

    code = "not_found"

    def __init__(self, kind: str, ident: object) -> None:
        super().__init__(f"No {kind} with id {ident!r}.", details={"kind": kind, "id": ident})


class Conflict(UserError):
    """The request clashes with the current state (e.g. resolving an already resolved conflict)."""

    code = "conflict"


class VaultTooNew(UserError):
    """The vault's schema is newer than this Cairn understands; opening it could damage it."""

    code = "vault_too_new"


class VaultDamaged(UserError):
    """The vault database is not SQLite or is corrupt. It is reported and never replaced."""

    code = "vault_damaged"


class VaultLocked(UserError):
    """Another Cairn process has this vault open for writing."""

    code = "vault_locked"


class UnsupportedFile(UserError):
    """No parser handles this kind of file."""

    code = "unsupported_file"


class EnvironmentProblem(VaultError):
    """The machine lacks something Cairn needs; not the caller's fault."""

    code = "environment"


class ExtensionUnavailable(EnvironmentProblem):
    """A SQLite extension (sqlite-vec) or extension loading itself is unavailable."""

    code = "extension_unavailable"


class StorageFull(EnvironmentProblem):
    """The disk is full or read-only; nothing was acknowledged."""

    code = "storage_full"


class ModelUnavailable(EnvironmentProblem):
    """The configured model server or model cannot be used right now."""

    code = "model_unavailable"


class ModelAnswerUnusable(ModelUnavailable):
    """The model answered, but not with something usable (not JSON).  The caller falls back exactly as for an
    outage, yet the model is not treated as down: the next call asks it again."""

    code = "model_answer_unusable"
