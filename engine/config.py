"""One Settings object: typed, defaulted, described; read from ``settings.toml`` in the vault and ``CAIRN_*`` env.

Precedence (later wins): built-in defaults → the vault's ``settings.toml`` → environment variables named
``CAIRN_<SECTION>_<FIELD>`` (e.g. ``CAIRN_LLM_PROVIDER=simple``, ``CAIRN_ENDPOINT_PORT=9000``).  Settings are
passed around as an immutable object; nothing reads a module global, so tests build their own.

The same field descriptions feed ``cairn doctor``, the GUI's settings page and the documentation.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import pydantic
import tomli_w
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from engine.errors import ValidationError
from engine.permissions import create_private_file

PiiPolicy = Literal["block", "redact", "keep"]

#: Sections whose changes take effect at once (the running vault reads them at each use, or
#: ``Vault.update_settings`` hands them over); the others apply when the vault is opened next.
LIVE_SECTIONS: frozenset[str] = frozenset({"privacy", "facts", "recall", "watch", "backups", "workspace", "proxy"})
#: Settings of live sections that the running parts only read when the vault opens.
STARTUP_SETTINGS: frozenset[str] = frozenset({"watch.debounce_s", "watch.rescan_interval_s", "workspace.use_model"})
#: Settings of the other sections that are read at each use, so they apply at once too.
LIVE_SETTINGS: frozenset[str] = frozenset(
    {
        "documents.max_bytes",
        "documents.background_above_bytes",
        "documents.max_sections",
        "documents.max_spans",
        "documents.allowed_roots",
        "endpoint.mcp_upload_path",
        "llm.query_timeout_s",
    }
)
#: Pseudo-file systems of the running system: reading a "file" there reads the process's environment, memory
#: maps or devices, never a document.  No watched folder, allowed root or upload may resolve into them.
SYSTEM_FOLDERS: tuple[str, ...] = ("/proc", "/sys", "/dev")
ENV_PREFIX = "CAIRN_"


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)


class LLMSettings(_Section):
    """The language model used for extraction, summaries and query analysis."""

    provider: Literal["auto", "ollama", "openai", "simple"] = Field(
        "auto",
        description="auto: Ollama when reachable with the model present, else the rule path; "
        "ollama: always try Ollama (falls back per job with a warning); openai: an OpenAI-compatible server "
        "(LM Studio, llama.cpp, vLLM, LocalAI, Jan) at llm.openai_base_url; simple: never use a model.",
    )
    ollama_host: str = Field("http://127.0.0.1:11434", description="Address of the local Ollama server.")
    model: str = Field("llama3.2", description="Ollama chat model for extraction and summaries.")
    openai_base_url: str = Field(
        "http://127.0.0.1:1234/v1",
        description="Address of an OpenAI-compatible server, ending in /v1 (LM Studio 1234, llama.cpp 8080, "
        "vLLM 8000, Jan 1337).",
    )
    openai_model: str = Field("", description="Chat model on the OpenAI-compatible server (as its /v1/models lists).")
    openai_api_key: str = Field(
        "", description="Key the OpenAI-compatible server expects, if any (local servers usually need none)."
    )
    timeout_s: float = Field(60.0, gt=0, description="Seconds to wait for one model answer.")
    connect_timeout_s: float = Field(2.0, gt=0, description="Seconds to wait when connecting to Ollama.")
    query_timeout_s: float = Field(2.0, gt=0, description="Budget for model query analysis during recall.")

    @field_validator("openai_base_url")
    @classmethod
    def _base_url_shape(cls, value: str) -> str:
        """Refuse an address the client would fail on later, far from the setting that caused it."""
        parts = urlsplit(value)
        try:
            parts.port  # noqa: B018 - a port that is not a number raises ValueError
        except ValueError:
            raise ValueError("the port is not a number") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected http://host:port/v1, such as http://127.0.0.1:1234/v1")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _openai_needs_a_model(self) -> LLMSettings:
        """``openai`` names no default model: servers have different ones, so the user must say which."""
        if self.provider == "openai" and not self.openai_model.strip():
            raise ValueError("llm.provider 'openai' needs llm.openai_model (a model the server lists)")
        return self


class EmbedderSettings(_Section):
    """How text is turned into vectors."""

    provider: Literal["auto", "ollama", "onnx", "openai", "hashing"] = Field(
        "auto",
        description="auto: Ollama embedding model if present, else local ONNX MiniLM if its files are "
        "in the models folder, else the built-in hashing embedder (works offline, lower quality); openai: "
        "embedder.openai_model on the server at llm.openai_base_url. A change re-embeds everything in the background.",
    )
    ollama_model: str = Field("nomic-embed-text", description="Ollama embedding model.")
    openai_model: str = Field(
        "", description="Embedding model on the OpenAI-compatible server at llm.openai_base_url (/v1/embeddings)."
    )

    @model_validator(mode="after")
    def _openai_needs_a_model(self) -> EmbedderSettings:
        """As for the chat model: the user names the embedding model the server has."""
        if self.provider == "openai" and not self.openai_model.strip():
            raise ValueError("embedder.provider 'openai' needs embedder.openai_model (a model the server lists)")
        return self

    onnx_model: str = Field(
        "all-MiniLM-L6-v2", description="Folder name under the models folder holding model.onnx and tokenizer.json."
    )
    hashing_dim: int = Field(384, ge=32, le=4096, description="Dimensions of the hashing embedder.")
    batch_size: int = Field(64, ge=1, le=1024, description="Texts embedded per batch.")


class VectorSettings(_Section):
    """Where vectors are searched.

    Vectors are always recorded in ``vault.db`` (sqlite-vec), in the same transaction as their rows: that is what
    makes acknowledgements durable and forgetting complete.  ``sqlite-vec`` also searches them there, through an
    in-memory mirror; ``chroma`` pushes them, once committed, to a Chroma collection that answers searches (an
    HNSW index whose search time grows slowly with size; on a server, the vault process holds no vectors in memory).
    See :mod:`engine.vectors.chroma`.
    """

    backend: Literal["sqlite-vec", "chroma"] = Field(
        "sqlite-vec",
        description="sqlite-vec searches vault.db through an in-memory mirror; chroma searches a Chroma collection "
        "(needs the chroma extra).",
    )
    chroma_url: str = Field(
        "",
        description="With backend chroma: a Chroma server such as http://127.0.0.1:8000 (from `chroma run`); empty "
        "keeps Chroma embedded in the vault folder.  Only vectors and their kind and user reach it, never text.",
    )

    @field_validator("chroma_url")
    @classmethod
    def _url_shape(cls, value: str) -> str:
        """Refuse a URL the Chroma client would fail on later, far from the setting that caused it."""
        if not value:
            return value
        parts = urlsplit(value)
        try:
            parts.port  # noqa: B018 - a port that is not a number raises ValueError
        except ValueError:
            raise ValueError("the port is not a number") from None
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
            raise ValueError("expected http://host:port, such as http://127.0.0.1:8000")
        return value.rstrip("/")


class EndpointSettings(_Section):
    """The localhost endpoint (REST, MCP, SSE)."""

    enabled: bool = Field(True, description="Serve the endpoint while the app runs.")
    port: int = Field(8642, ge=1, le=65535, description="TCP port on 127.0.0.1 and ::1.")
    allowed_origins: tuple[str, ...] = Field(
        (), description="Browser origins allowed to call the endpoint (empty: none — the safe default)."
    )
    max_body_bytes: int = Field(25 * 1024 * 1024, ge=1024, description="Largest accepted request body.")
    max_concurrency: int = Field(64, ge=1, description="Requests handled at once before answering 429/503.")
    max_streams: int = Field(8, ge=1, description="Change streams (SSE) open at once.")
    mcp_upload_path: bool = Field(
        False,
        description="Let MCP clients (chat models) upload a document by naming a file path on this machine. Off: "
        "upload_document takes only a name and its content, so a model steered by a prompt it read cannot pull "
        "local files into its own context. On: paths are still limited to the watched folders and "
        "documents.allowed_roots.",
    )


ProxyMode = Literal["both", "record", "inject", "off"]


class ProxySettings(_Section):
    """The memory proxy: the endpoint speaking Ollama's and OpenAI's chat APIs to chat apps, forwarding to a model
    server, remembering each turn and putting recalled memory in front of the model (:mod:`engine.api.proxy`)."""

    upstream: str = Field(
        "",
        description="The model server the proxy forwards to: an Ollama server (http://127.0.0.1:11434) or an "
        "OpenAI-compatible one, ending in /v1 (http://127.0.0.1:1234/v1). Empty: the proxy answers 503.",
    )
    mode: ProxyMode = Field(
        "both",
        description="both: record each turn and inject recalled memory; record: only record; inject: only inject; "
        "off: forward unchanged, remembering nothing.",
    )
    upstream_api_key: str = Field(
        "",
        description="Key the upstream server expects, if any (sent as its bearer token; the client's Cairn token is "
        "never forwarded).",
    )
    ollama_without_token: bool = Field(
        False,
        description="Admit Ollama-protocol clients that cannot send a token (the /api/* proxy routes only). Risk: "
        "any program on this machine, and any web page the browser lets through the Origin check, can then chat "
        "through the proxy, read what recall puts in the model's context, and write turns into the vault. Leave "
        "off unless a client truly cannot send an Authorization header.",
    )
    timeout_s: float = Field(
        600.0, gt=0, description="Seconds to wait for the upstream's next bytes (a model may load for minutes)."
    )

    @field_validator("upstream")
    @classmethod
    def _upstream_shape(cls, value: str) -> str:
        """Refuse an address the proxy would fail on at the first chat, far from the setting that caused it."""
        if not value.strip():
            return ""
        parts = urlsplit(value.strip())
        try:
            parts.port  # noqa: B018 - a port that is not a number raises ValueError
        except ValueError:
            raise ValueError("the port is not a number") from None
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise ValueError("expected http://host:port (Ollama) or http://host:port/v1 (OpenAI-compatible)")
        return value.strip().rstrip("/")


class PrivacySettings(_Section):
    """The L0 firewall: what happens to personal identifiers before anything is stored, embedded or sent.

    Defaults: secrets (API keys, tokens, passwords) and card numbers block the text, since a message carrying
    credentials is no memory worth keeping; the other identifiers are redacted, so the rest of the sentence is
    still learned from.
    """

    card: PiiPolicy = Field("block", description="Payment card numbers (Luhn-checked).")
    national_id: PiiPolicy = Field("redact", description="National identity numbers (SSN and similar).")
    iban: PiiPolicy = Field("redact", description="Bank account numbers (IBAN, checksum-verified).")
    secret: PiiPolicy = Field("block", description="API keys, tokens and other secrets.")
    password: PiiPolicy = Field("block", description="Passwords stated in text.")
    email: PiiPolicy = Field("redact", description="E-mail addresses.")
    phone: PiiPolicy = Field("redact", description="Phone numbers.")


class JobSettings(_Section):
    """The durable background job queue."""

    workers: int = Field(2, ge=1, le=32, description="Worker threads running enrichment and distillation.")
    max_attempts: int = Field(5, ge=1, le=50, description="Attempts before a failing job is parked.")
    backoff_s: float = Field(2.0, gt=0, description="First retry delay; doubles with each attempt.")


class EpisodeSettings(_Section):
    """How conversations are cut into episodes."""

    idle_gap_minutes: float = Field(30.0, gt=0, description="A gap this long (event time) closes a segment.")
    max_turns: int = Field(40, ge=2, description="A segment closes after this many turns.")


class FactSettings(_Section):
    """Fact pipeline behaviour the user may want to change."""

    conflict_auto_resolve: bool = Field(
        False, description="Resolve contradictions at once in favour of the higher-confidence side."
    )


class DocumentSettings(_Section):
    """Limits for parsing untrusted files (each parse runs in a separate process), the shape a document may take in
    the vault, and the folders a client may name a file in."""

    parse_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Wall-clock limit per file, before its pages are counted: a paged file (PDF) gets "
        "parse_seconds_per_page more for each page, and any file parse_seconds_per_megabyte more for each "
        "megabyte, up to parse_timeout_max_s.",
    )
    parse_seconds_per_page: float = Field(
        0.5,
        ge=0,
        description="Seconds added to parse_timeout_s for each page of a paged file: a 300-page annual report "
        "may take minutes where a letter takes a second.",
    )
    parse_seconds_per_megabyte: float = Field(
        2.0,
        ge=0,
        description="Seconds added to parse_timeout_s for each megabyte of the file, from the start: a 40 MB "
        "export of plain text or HTML has no pages to count, and takes longer than a note.",
    )
    parse_timeout_max_s: float = Field(
        900.0, gt=0, description="Wall-clock limit per file however many pages or megabytes it has."
    )
    parse_memory_mb: int = Field(1024, ge=64, description="Address-space limit of the parser process.")
    max_bytes: int = Field(100 * 1024 * 1024, ge=1, description="Largest file accepted.")
    background_above_bytes: int = Field(
        1024 * 1024,
        ge=0,
        description="An upload over the endpoint larger than this is answered at once (202) and read in the "
        "background: the document is listed as processing, with the pages read so far, until its text is stored. "
        "A client can still ask to wait (wait=true) or not to (wait=false) for any file.",
    )
    max_pages: int = Field(2000, ge=1, description="Most PDF pages read from one file.")
    max_sections: int = Field(
        2000,
        ge=1,
        description="Most sections one document keeps (a 300-page book has a few hundred). Past it, the deepest "
        "headings are merged into their parents, then neighbouring sections into one; the document is marked "
        "degraded and says so.",
    )
    max_spans: int = Field(
        20_000,
        ge=2,
        description="Most spans (the ~700-character pieces that are searched) one document keeps: about 14 million "
        "characters, or 4,000 pages. Past it, neighbouring spans of a section are joined, so every word stays "
        "searchable by keyword while each vector covers less; the document is marked degraded and says so.",
    )
    allowed_roots: tuple[str, ...] = Field(
        (),
        description="Folders (absolute paths) whose files a client of the endpoint may upload by naming their path "
        "(REST {path}, MCP upload_document with endpoint.mcp_upload_path on), besides the watched folders. Empty: "
        "only files in watched folders. Links are followed to where they lead, which must be inside one of them.",
    )

    @field_validator("allowed_roots")
    @classmethod
    def _absolute_folders(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        """Each root as an absolute, normalised path (``~`` expanded), like a watched folder; refused at once when
        relative or inside a system folder, because the check at upload time would otherwise never match."""
        roots: list[str] = []
        for raw in value:
            expanded = os.path.expanduser(raw.strip())
            if not expanded or not os.path.isabs(expanded):
                raise ValueError(f"{raw!r} is not an absolute folder path (such as /home/me/Documents)")
            path = os.path.normpath(expanded)
            if any(path == top or path.startswith(top + "/") for top in SYSTEM_FOLDERS):
                raise ValueError(f"{path} is a system folder ({', '.join(SYSTEM_FOLDERS)} hold no documents)")
            if path not in roots:
                roots.append(path)
        return tuple(roots)

    @model_validator(mode="after")
    def _spans_hold_sections(self) -> DocumentSettings:
        """Every section has at least one span, so the span cap must leave room for the section cap."""
        if self.max_spans <= self.max_sections:
            raise ValueError(
                f"documents.max_spans ({self.max_spans}) must be larger than documents.max_sections "
                f"({self.max_sections}): every section holds at least one span"
            )
        return self


class WatchedFolder(_Section):
    """One watched folder with its include/exclude globs."""

    path: str = Field(description="Folder to keep in sync.")
    include: tuple[str, ...] = Field(("*.md", "*.markdown", "*.txt", "*.pdf", "*.html", "*.htm"))
    exclude: tuple[str, ...] = Field((".*", "*~", "*.swp", "*.tmp", "node_modules", "__pycache__"))


class WatchSettings(_Section):
    """Watched folders and reconciliation."""

    folders: tuple[WatchedFolder, ...] = Field((), description="Folders kept in sync with the vault.")
    rescan_interval_s: float = Field(300.0, gt=0, description="Seconds between reconciliation scans.")
    debounce_s: float = Field(0.5, ge=0, description="A file must be unchanged this long before ingest.")


class BackupSettings(_Section):
    """Online backups into ``backups/``."""

    generations: int = Field(5, ge=0, description="Backups kept (0 disables backups).")
    interval_hours: float = Field(24.0, gt=0, description="Hours between automatic backups.")


class RecallSettings(_Section):
    """Defaults for recall requests."""

    token_budget: int = Field(1500, ge=100, description="Default size of llm_context in tokens.")
    limit: int = Field(20, ge=1, le=200, description="Default number of ranked items.")
    understandings: bool = Field(
        True,
        description="Show the understanding of each subject a question names (from the subject workspace), "
        "expanded to the turns it was made from that bear on the question.",
    )
    processes: int = Field(
        -1,
        ge=-1,
        le=16,
        description="Helper processes that rank recalls beside the vault's own, so concurrent recalls use every "
        "core (each holds a copy of the vectors in memory). -1: automatic — one per core (2–4) once the vault holds "
        "20,000 vectors and the machine has two cores or more; 0: rank in the vault's process only.",
    )


class WorkspaceSettings(_Section):
    """The subject workspace: when consolidation runs by itself, and how its items are embedded."""

    consolidate_after_quiet_minutes: float = Field(
        60.0,
        ge=0,
        description="Run a consolidation pass once no new evidence has arrived for this many minutes and some "
        "subject has evidence newer than the last pass (0: only when asked).",
    )
    use_model: bool = Field(
        True, description="Let the configured model write understandings (the extractive synthesis is the draft)."
    )
    perspective_instructions: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Embed workspace items once per perspective with its instruction prefix: auto when the "
        "embedder is instruction-tuned (nomic-embed, e5, bge, gte, mxbai, arctic-embed, Qwen3 and Gemma "
        "embeddings); off gives one vector per item.",
    )


class Settings(_Section):
    """Everything configurable, by section."""

    llm: LLMSettings = LLMSettings()
    embedder: EmbedderSettings = EmbedderSettings()
    vectors: VectorSettings = VectorSettings()
    endpoint: EndpointSettings = EndpointSettings()
    proxy: ProxySettings = ProxySettings()
    privacy: PrivacySettings = PrivacySettings()
    jobs: JobSettings = JobSettings()
    episodes: EpisodeSettings = EpisodeSettings()
    facts: FactSettings = FactSettings()
    documents: DocumentSettings = DocumentSettings()
    watch: WatchSettings = WatchSettings()
    backups: BackupSettings = BackupSettings()
    recall: RecallSettings = RecallSettings()
    workspace: WorkspaceSettings = WorkspaceSettings()

    @classmethod
    def load(cls, toml_path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
        """Read the TOML file (if it exists) and apply ``CAIRN_*`` environment overrides.

        Raises:
            ValidationError: a value is of the wrong type or out of range; the message names the setting and
                where it came from.
        """
        data: dict[str, Any] = {}
        if toml_path is not None and toml_path.exists():
            try:
                data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ValidationError(
                    str(toml_path), f"not valid TOML ({exc})", fix="Correct or delete the settings file."
                ) from exc
        data = _apply_env(data, os.environ if env is None else env)
        return cls.from_dict(data, origin=str(toml_path) if toml_path else "settings")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, origin: str = "settings") -> Settings:
        """Validate a nested mapping into Settings, naming the first bad field."""
        try:
            return cls.model_validate(data)
        except pydantic.ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise ValidationError(field, f"{err['msg']} (from {origin})", fix="Fix the value or remove it.") from exc

    def save(self, toml_path: Path) -> None:
        """Write the values that differ from the defaults to ``toml_path`` atomically."""
        payload = self.model_dump(mode="json", exclude_defaults=True)
        toml_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = toml_path.with_suffix(".toml.tmp")
        tmp.unlink(missing_ok=True)
        create_private_file(tmp)  # it may hold an API key: never readable by others, not even while written
        tmp.write_text(tomli_w.dumps(payload), encoding="utf-8")
        os.replace(tmp, toml_path)

    def updated(self, changes: Mapping[str, Any]) -> Settings:
        """A copy with dotted-path changes applied (``{"llm.model": "qwen3"}``), validated."""
        data = self.model_dump(mode="json")
        for dotted, value in changes.items():
            section, _, key = dotted.partition(".")
            if section not in data or not key:
                raise ValidationError(dotted, "unknown setting")
            data[section][key] = value
        return Settings.from_dict(data)


def applies_live(name: str) -> bool:
    """True when the running vault uses a new value of the dotted setting ``name`` as soon as it is saved.

    The settings page says which changes wait for a restart from this, so it stays true to what the engine does.
    """
    if name in LIVE_SETTINGS:
        return True
    return name.partition(".")[0] in LIVE_SECTIONS and name not in STARTUP_SETTINGS


def describe(settings: Settings) -> Iterator[tuple[str, Any, str]]:
    """Yield ``(dotted name, current value, description)`` for every scalar setting."""
    for section_name in Settings.model_fields:
        section = getattr(settings, section_name)
        for field_name, info in type(section).model_fields.items():
            yield f"{section_name}.{field_name}", getattr(section, field_name), info.description or ""


def _apply_env(data: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    merged: dict[str, Any] = {k: dict(v) if isinstance(v, dict) else v for k, v in data.items()}
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX):
            continue
        section, _, key = name[len(ENV_PREFIX) :].lower().partition("_")
        section_model = Settings.model_fields.get(section)
        if section_model is None or not key:
            continue  # CAIRN_HOME and friends are paths, not settings
        section_type = section_model.annotation
        if not isinstance(section_type, type) or key not in getattr(section_type, "model_fields", {}):
            continue
        merged.setdefault(section, {})[key] = _parse_env_value(raw)
    return merged


def _parse_env_value(raw: str) -> Any:
    """Env values are strings; JSON lists/objects are accepted, and commas split a plain list."""
    text = raw.strip()
    if text.startswith(("[", "{")):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return raw
    return raw
