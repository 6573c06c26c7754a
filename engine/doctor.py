"""``cairn doctor``: check everything Cairn depends on and say, for each problem, the command that fixes it.

It never takes the vault's lock and never writes to the database, so it can run while the GUI or ``cairn serve``
has the vault open; nor does it create a vault where there is none.

It is also where a path given as a vault folder is judged (:func:`inspect_vault_dir`, :func:`vault_dir_problem`):
every command taking ``--vault`` asks here first, so a mistyped path is named with its fix instead of becoming a new
vault, turning a folder of other files into one, or ending in a traceback.  And it tells who holds the endpoint's
port (:func:`probe_port`): health names the vault it serves by its random id, so this vault's endpoint is told apart
from another vault's.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import httpx

from engine import paths
from engine.ai.embedders import ONNX_HELP
from engine.ai.ollama import OllamaClient
from engine.ai.openai_compat import OpenAICompatClient
from engine.config import Settings
from engine.dto import DoctorReport, Finding, FindingStatus
from engine.errors import UserError, VaultError
from engine.permissions import loosened, tighten
from engine.store.db import check_database_file, load_vector_extension, sqlean_module
from engine.store.migrations import SCHEMA_VERSION

if TYPE_CHECKING:
    from engine.vault import Vault

REINSTALL = "make run  (or: pip install -e .)"

#: What Cairn itself keeps in a vault folder.  A folder holding only these (or nothing) may become a vault; one
#: holding anything else without a ``vault.db`` is someone's folder, which Cairn must not take over (making a
#: vault there would also make every file in it private).
CAIRN_ENTRIES = frozenset(
    {
        paths.DB_FILE,
        f"{paths.DB_FILE}-wal",
        f"{paths.DB_FILE}-shm",
        f"{paths.DB_FILE}-journal",
        paths.TOKEN_FILE,
        paths.SETTINGS_FILE,
        f"{paths.SETTINGS_FILE}.tmp",
        paths.LOCK_FILE,
        paths.LOGS_DIR,
        paths.BACKUPS_DIR,
        paths.WORK_DIR,
        paths.CHROMA_DIR,
    }
)
CHOOSE_VAULT = "`cairn paths` prints the default vault's folder"
READ_ONLY_FIX = (
    "Make the folder writable (chmod u+w, or mount it read-write), or copy the vault to a writable folder and "
    "pass that with --vault."
)

VaultDirState = Literal["vault", "new", "missing", "not_vault", "file"]


@dataclass(frozen=True, slots=True)
class VaultDir:
    """What is at a path given as a vault folder.

    ``state``: ``vault`` (a folder with ``vault.db``), ``new`` (a folder holding nothing or only Cairn's own files),
    ``missing`` (nothing there), ``not_vault`` (a folder of other files), ``file`` (the path, or a folder on the way
    to it, is a file: ``blocker`` names it).  ``writable``: Cairn could write there (for a missing folder: create
    it); False on a read-only folder or file system.
    """

    root: Path
    state: VaultDirState
    writable: bool
    blocker: Path


def inspect_vault_dir(root: Path) -> VaultDir:
    """Look at ``root`` without changing anything."""
    if not root.exists():
        ancestor = root.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            return VaultDir(root, "file", False, ancestor)
        return VaultDir(root, "missing", os.access(ancestor, os.W_OK | os.X_OK), ancestor)
    if not root.is_dir():
        return VaultDir(root, "file", False, root)
    writable = os.access(root, os.W_OK | os.X_OK)
    db = root / paths.DB_FILE
    if db.exists():
        return VaultDir(root, "vault", writable and os.access(db, os.W_OK), root)
    try:
        names = [entry.name for entry in os.scandir(root)]
    except OSError:
        return VaultDir(root, "not_vault", writable, root)
    if all(name in CAIRN_ENTRIES or (name.startswith(".token.") and name.endswith(".tmp")) for name in names):
        return VaultDir(root, "new", writable, root)
    return VaultDir(root, "not_vault", writable, root)


def vault_dir_problem(found: VaultDir, *, create: bool, write: bool = True) -> UserError | None:
    """What is wrong with using ``found`` as a vault folder, as a message and its fix; None when it will do.

    ``create``: a missing or empty folder may become a new vault (``cairn serve``, the desktop app); otherwise it
    must hold one already (``cairn token``, which would otherwise hand out the token of a vault nobody serves).
    ``write``: the vault must be writable (everything that opens it: even reading needs its lock and journal).
    """
    root = found.root
    if found.state == "file":
        where = "" if found.blocker == root else f" ({found.blocker} is a file)"
        return UserError(
            f"{root} is not a folder{where}, so it cannot be a vault.",
            fix=f"Pass the folder that holds vault.db with --vault ({CHOOSE_VAULT}), or a new folder's path to "
            "start a vault there.",
        )
    if found.state == "not_vault":
        return UserError(
            f"{root} is not a Cairn vault: it holds other files and no vault.db.",
            fix=f"Pass the vault's own folder, the one holding vault.db ({CHOOSE_VAULT}), or a new or empty folder "
            "to start a vault there.",
        )
    if found.state in ("missing", "new") and not create:
        there = "(no such folder)" if found.state == "missing" else "(the folder holds no vault.db)"
        return UserError(
            f"There is no vault at {root} {there}.",
            fix=f"Pass the folder of your vault with --vault, the same one the desktop app or `cairn serve` uses "
            f"({CHOOSE_VAULT}); or create a vault there first by starting Cairn on it: cairn serve --vault {root}",
        )
    if write and not found.writable:
        if found.state == "missing":
            return UserError(f"{root} cannot be created: {found.blocker} is read-only.", fix=READ_ONLY_FIX)
        return UserError(
            f"{root} is read-only; Cairn must write there (the database's journal, the lock, the logs).",
            fix=READ_ONLY_FIX,
        )
    return None


@dataclass(frozen=True, slots=True)
class PortHolder:
    """Who answers on a loopback port: nobody, a Cairn (and the id of the vault it serves), or another program.

    ``answered``: an HTTP answer came (a port in use that did not answer in time may still be a busy Cairn).
    ``vault_id`` is None for another program, and for a Cairn too old to say which vault it serves.
    """

    in_use: bool
    answered: bool = False
    cairn: bool = False
    vault_id: str | None = None

    def serves(self, vault_id: str) -> bool:
        """True when the answer came from the Cairn serving the vault ``vault_id``."""
        return self.cairn and self.vault_id == vault_id

    def held_by_another(self, vault_id: str) -> bool:
        """True when the answer came from something else: another vault's Cairn, or a program that is no Cairn."""
        return self.answered and not self.serves(vault_id)


def probe_port(port: int, *, timeout: float = 1.0) -> PortHolder:
    """Ask whoever listens on 127.0.0.1:``port`` for Cairn's health answer."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        if sock.connect_ex(("127.0.0.1", port)) != 0:
            return PortHolder(in_use=False)
    try:
        response = httpx.get(
            f"http://127.0.0.1:{port}/v6/health", headers={"Host": f"127.0.0.1:{port}"}, timeout=timeout
        )
    except httpx.HTTPError:
        return PortHolder(in_use=True)
    try:
        health = response.json()
    except ValueError:
        return PortHolder(in_use=True, answered=True)
    if not (isinstance(health, dict) and "schema_version" in health):
        return PortHolder(in_use=True, answered=True)
    vault_id = health.get("vault_id")
    return PortHolder(in_use=True, answered=True, cairn=True, vault_id=vault_id if isinstance(vault_id, str) else None)


def recorded_vault_id(db: Path) -> str | None:
    """The id a vault's database records (``Vault.vault_id``), read without writing; None when there is none."""
    if not db.is_file():
        return None
    try:
        conn = sqlean_module().connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'vault_id'").fetchone()
        finally:
            conn.close()
    except Exception:  # no meta table, a damaged file, a read-only folder: the vault finding says which
        return None
    return str(row[0]) if row else None


def check_open_vault(vault: Vault) -> DoctorReport:
    """``cairn doctor``'s findings for an open vault (the desktop app's Overview asks this way).

    It lives here rather than on :class:`~engine.vault.Vault`: the doctor looks at a vault from outside (its
    folder, its permissions, the machine), and a ``Vault.doctor()`` made the two modules import each other.
    """
    return run_doctor(vault.paths.root, settings=vault.settings, vault=vault)


def run_doctor(vault_dir: Path, *, settings: Settings | None = None, vault: Vault | None = None) -> DoctorReport:
    """Run every check for the vault in ``vault_dir`` and return the findings in a fixed order."""
    findings: list[Finding] = [_python()]
    findings.extend(_sqlite())
    vault_paths = paths.VaultPaths(vault_dir)
    if settings is None:
        try:
            settings = Settings.load(vault_paths.settings)
            findings.append(Finding("settings", "ok", f"{vault_paths.settings} (or defaults)"))
        except VaultError as exc:
            findings.append(Finding("settings", "error", exc.message, exc.fix, essential=True))
            settings = Settings()
    findings.append(_vault(vault_paths, vault))
    findings.extend(_ollama(settings))
    findings.extend(_openai(settings))
    findings.append(_embedder(settings, vault))
    model = _vault_model(vault) if vault is not None else None
    if model is not None:
        findings.append(model)
    findings.append(_vectors(settings, vault))
    findings.append(_endpoint(settings, vault_paths, vault))
    findings.append(_token(vault_paths))
    findings.append(_permissions(vault_paths, vault))
    return DoctorReport(tuple(findings))


def _permissions(vault_paths: paths.VaultPaths, vault: Vault | None) -> Finding:
    """Whether anyone but the owner could read the vault folder; looser modes are made private on the spot."""
    if vault is not None:
        fixed = list(vault.tightened_at_open)
        left = loosened(vault_paths.root)
    else:
        found = inspect_vault_dir(vault_paths.root)
        if found.state in ("file", "not_vault"):
            # not a vault: its files are someone else's business (the vault finding says what is wrong)
            return Finding("permissions", "ok", f"not checked: {vault_paths.root} is not a vault")
        if found.state == "missing":
            return Finding("permissions", "ok", "the vault folder will be created private (0700, files 0600)")
        fixed = tighten(vault_paths.root) if found.writable else []
        left = loosened(vault_paths.root)
    if left:
        shown = ", ".join(f"{item.path.name} ({item.mode:o})" for item in left[:3])
        return Finding(
            "permissions",
            "error",
            f"{len(left)} paths in the vault folder are readable by others and could not be changed: {shown}",
            f"chmod -R go-rwx {vault_paths.root}   (as the owner of those files)",
            essential=True,
        )
    if fixed:
        shown = ", ".join(f"{item.path.name} ({item.mode:o})" for item in fixed[:3])
        return Finding(
            "permissions",
            "warn",
            f"{len(fixed)} paths in the vault folder were readable by others ({shown}…); made private (0700/0600)",
            "Nothing more to do; keep the vault folder out of shared places.",
        )
    return Finding("permissions", "ok", "owner only (folders 0700, files 0600)")


def _python() -> Finding:
    # Cairn cannot even be installed on Python < 3.11 (requires-python), so this only reports the version.
    return Finding("python", "ok", f"Python {'.'.join(map(str, sys.version_info[:3]))}")


def _sqlite() -> list[Finding]:
    try:
        module = sqlean_module()
        conn = module.connect(":memory:")
    except Exception as exc:
        return [Finding("sqlite", "error", f"SQLite unavailable: {exc}", REINSTALL, essential=True)]
    out: list[Finding] = []
    try:
        version = conn.execute("SELECT sqlite_version()").fetchone()[0]
        out.append(Finding("sqlite", "ok", f"SQLite {version} (sqlean.py)"))
        try:
            conn.execute("CREATE VIRTUAL TABLE doctor_fts USING fts5(x)")
            out.append(Finding("fts5", "ok", "FTS5 full-text search available"))
        except Exception as exc:
            out.append(Finding("fts5", "error", f"FTS5 missing: {exc}", REINSTALL, essential=True))
        try:
            load_vector_extension(conn)
            vec = conn.execute("SELECT vec_version()").fetchone()[0]
            out.append(Finding("sqlite-vec", "ok", f"sqlite-vec {vec} loads"))
        except VaultError as exc:
            out.append(Finding("sqlite-vec", "error", exc.message, exc.fix, essential=True))
    finally:
        conn.close()
    return out


def _vault(vault_paths: paths.VaultPaths, vault: Vault | None) -> Finding:
    db = vault_paths.db
    if vault is not None:
        return Finding("vault", "ok", f"{vault_paths.root} (schema {vault.store.schema_version}, open here)")
    found = inspect_vault_dir(vault_paths.root)
    problem = vault_dir_problem(found, create=True)
    if problem is not None:
        return Finding("vault", "error", problem.message, problem.fix, essential=True)
    if found.state != "vault":
        # Not an error: a first start creates it.  But a mistyped --vault looks just like this, so say so.
        return Finding(
            "vault",
            "warn",
            f"no vault at {vault_paths.root} yet; Cairn creates it there when it first starts with this folder",
            f"If you meant an existing vault, pass its folder with --vault ({CHOOSE_VAULT}).",
        )
    try:
        check_database_file(db)
        module = sqlean_module()
        conn = module.connect(f"file:{db}?mode=ro", uri=True)
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
    except VaultError as exc:
        return Finding("vault", "error", exc.message, exc.fix, essential=True)
    except Exception as exc:
        return Finding(
            "vault", "error", f"{db} cannot be read: {exc}", "Restore it from the backups/ folder.", essential=True
        )
    if version > SCHEMA_VERSION:
        return Finding(
            "vault",
            "error",
            f"{vault_paths.root}: schema {version} is newer than this Cairn ({SCHEMA_VERSION})",
            "Upgrade Cairn.",
            essential=True,
        )
    note = "" if version == SCHEMA_VERSION else f"; will be upgraded to {SCHEMA_VERSION} on open"
    return Finding("vault", "ok", f"{vault_paths.root} (schema {version}{note})")


def _ollama(settings: Settings) -> list[Finding]:
    cfg = settings.llm
    if cfg.provider in ("simple", "openai") and settings.embedder.provider in ("hashing", "onnx", "openai"):
        return [Finding("ollama", "ok", f"not used (llm.provider = {cfg.provider})")]
    status = OllamaClient(cfg.ollama_host, connect_timeout_s=cfg.connect_timeout_s).probe()
    if not status.reachable:
        level: FindingStatus = "error" if cfg.provider == "ollama" else "warn"
        return [
            Finding(
                "ollama",
                level,
                f"not reachable at {cfg.ollama_host} ({status.error}); the rule path is used",
                "Start Ollama with `ollama serve` (https://ollama.com), or set llm.provider = 'simple'.",
            )
        ]
    models = ", ".join(status.models) or "none"
    out = [Finding("ollama", "ok", f"Ollama {status.version} at {cfg.ollama_host}; models: {models}")]
    if status.has_model(cfg.model):
        out.append(Finding("llm", "ok", f"ollama:{cfg.model}"))
    else:
        out.append(
            Finding(
                "llm", "warn", f"model {cfg.model} not installed; the rule path is used", f"ollama pull {cfg.model}"
            )
        )
    return out


def _openai(settings: Settings) -> list[Finding]:
    """The OpenAI-compatible server, when a provider uses it: does it answer, and does it have the models named."""
    cfg = settings.llm
    uses_llm = cfg.provider == "openai"
    uses_embedder = settings.embedder.provider == "openai"
    if not uses_llm and not uses_embedder:
        return []
    client = OpenAICompatClient(
        cfg.openai_base_url, api_key=cfg.openai_api_key, connect_timeout_s=cfg.connect_timeout_s
    )
    try:
        status = client.probe()
    finally:
        client.close()
    if not status.reachable:
        return [
            Finding(
                "openai server",
                "error",
                f"not reachable at {cfg.openai_base_url} ({status.error}); "
                + ("the rule path is used" if uses_llm else "vectors wait for it"),
                "Start the server (LM Studio, llama.cpp, vLLM, LocalAI, Jan), or correct llm.openai_base_url.",
            )
        ]
    listed = ", ".join(status.models) or "none listed"
    out = [Finding("openai server", "ok", f"{cfg.openai_base_url}; models: {listed}")]
    wanted = [("llm", cfg.openai_model)] if uses_llm else []
    wanted += [("embedding model", settings.embedder.openai_model)] if uses_embedder else []
    for name, model in wanted:
        if status.has_model(model):
            out.append(Finding(name, "ok", f"openai:{model}"))
        else:
            out.append(
                Finding(
                    name, "warn", f"{model} is not listed by the server", "Load it in the server, or pick a listed one."
                )
            )
    return out


def _embedder(settings: Settings, vault: Vault | None) -> Finding:
    if vault is not None:
        return _vault_embedder(vault)
    cfg = settings.embedder
    folder = paths.models_dir() / cfg.onnx_model
    has_onnx = (folder / "model.onnx").exists() and (folder / "tokenizer.json").exists()
    if cfg.provider == "hashing":
        return Finding("embedder", "ok", f"hashing-v1-{cfg.hashing_dim} (chosen in settings)")
    if cfg.provider == "openai":
        return Finding(
            "embedder", "ok", f"openai:{cfg.openai_model} at {settings.llm.openai_base_url} (chosen in settings)"
        )
    if cfg.provider == "onnx" and not has_onnx:
        return Finding(
            "embedder", "error", f"no ONNX model in {folder}", ONNX_HELP.format(folder=folder), essential=True
        )
    if has_onnx:
        return Finding("embedder", "ok", f"onnx:{cfg.onnx_model} ({folder})")
    return Finding(
        "embedder",
        "warn",
        f"hashing-v1-{cfg.hashing_dim} (no Ollama embedding model, no ONNX model in {folder}); works, lower quality",
        "make models   (exports all-MiniLM-L6-v2 to ONNX offline), or `ollama pull " + cfg.ollama_model + "`",
    )


def _vault_embedder(vault: Vault) -> Finding:
    """The vault's embedder, a re-embedding under way with its progress, and vectors waiting for an embedder that
    is down."""
    status = vault.vector_status()
    parts = [f"{status.active} in use ({status.dim} dimensions)"]
    level: FindingStatus = "ok"
    fix = ""
    if status.migration is not None:
        done = max(0, status.migration.total - status.remaining)
        parts.append(
            f"re-embedding from {status.migration.from_model}: {done} of {status.migration.total} done "
            "(searches use both until it finishes)"
        )
        level = "warn"
        fix = "Nothing to do: it runs in the background while Cairn is open, and resumes after a restart."
    if status.queued:
        parts.append(f"{status.queued} items wait for their vectors")
        level = "warn"
    if status.last_error:
        when = datetime.fromtimestamp(status.last_error_at or 0, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        parts.append(f"last error {when}: {status.last_error}")
        level = "warn"
        fix = "Start the embedding model's server again; Cairn retries with back-off and fills in what waited."
    return Finding("embedder", level, "; ".join(parts), fix)


def _vault_model(vault: Vault) -> Finding | None:
    """The model's last error, when it had one."""
    status = vault.model_status()
    if not status["last_error"]:
        return None
    when = datetime.fromtimestamp(status["last_error_at"] or 0, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return Finding(
        "model",
        "warn",
        f"{status['engine']}: last error {when}: {status['last_error']} (jobs used the rule path meanwhile)",
        "Check the model server; Cairn tries it again with back-off.",
    )


def _vectors(settings: Settings, vault: Vault | None) -> Finding:
    """Where vectors are searched; with Chroma, whether its package is installed and its server answers."""
    if vault is not None:
        return Finding("vectors", "ok", vault.vectors.backend)
    cfg = settings.vectors
    if cfg.backend == "sqlite-vec":
        return Finding("vectors", "ok", "sqlite-vec in vault.db (searched through an in-memory mirror)")
    try:
        import chromadb  # noqa: F401
    except ImportError:
        return Finding(
            "vectors",
            "error",
            "vectors.backend is chroma, but the chromadb package is not installed",
            "pip install 'cairn[chroma]'   (or set vectors.backend = \"sqlite-vec\")",
            essential=True,
        )
    if not cfg.chroma_url:
        return Finding("vectors", "ok", "Chroma embedded in the vault folder (vectors recorded in vault.db too)")
    try:
        answered = httpx.get(f"{cfg.chroma_url}/api/v2/heartbeat", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        answered = False
    if answered:
        return Finding("vectors", "ok", f"Chroma server {cfg.chroma_url} answers")
    return Finding(
        "vectors",
        "warn",
        f"the Chroma server {cfg.chroma_url} does not answer; searches use sqlite-vec in vault.db until it does",
        f"Start it: chroma run --host 127.0.0.1 --port {cfg.chroma_url.rsplit(':', 1)[-1]} --path <folder>",
    )


def _endpoint(settings: Settings, vault_paths: paths.VaultPaths, vault: Vault | None) -> Finding:
    """Whether the port is free or served by this vault's Cairn; a port answered by another Cairn is not "ok"
    (this vault's endpoint cannot serve there), which the vault ids in the health answers tell apart."""
    port = settings.endpoint.port
    address = f"http://127.0.0.1:{port}"
    if not settings.endpoint.enabled:
        return Finding("endpoint", "ok", f"disabled in settings (would be {address})")
    holder = probe_port(port)
    if not holder.in_use:
        return Finding("endpoint", "ok", f"{address} (free; served while Cairn runs)")
    fix = (
        "Choose another port: CAIRN_ENDPOINT_PORT=NNNN or endpoint.port in settings.toml, or `cairn serve --port NNNN`."
    )
    if not holder.cairn:
        return Finding("endpoint", "warn", f"port {port} is used by another program", fix)
    if holder.vault_id is None:
        return Finding("endpoint", "ok", f"{address} (an older Cairn is serving; it does not say which vault)")
    own = vault.vault_id() if vault is not None else recorded_vault_id(vault_paths.db)
    if holder.vault_id == own:
        return Finding("endpoint", "ok", f"{address} (Cairn is serving this vault)")
    return Finding(
        "endpoint",
        "warn",
        f"port {port} is held by another Cairn, serving a different vault (id {holder.vault_id}); "
        f"this vault's endpoint cannot serve there",
        f"Quit that Cairn, or pass its vault's folder with --vault. {fix}",
    )


def _token(vault_paths: paths.VaultPaths) -> Finding:
    token = vault_paths.token
    if not token.exists():
        return Finding("token", "ok", "created on first start (mode 0600)")
    mode = token.stat().st_mode & 0o777
    if os.name != "nt" and mode & 0o077:
        return Finding(
            "token", "error", f"{token} is readable by others (mode {mode:o})", f"chmod 600 {token}", essential=True
        )
    return Finding("token", "ok", f"{token} (mode {mode:o}); `cairn token` prints it")
