"""A whole vault in one file: export to an open archive, and load an archive into a new vault.

The format is documented for people and other programs in ``docs/export-format.md``.  In short, a ZIP file holding

- ``manifest.json``: the format and its version, the schema version and Cairn version that wrote it, when, and each
  kind's file and count;
- one JSON Lines file per kind (``events.jsonl``, ``facts.jsonl`` …): one object per line, the kind's columns by
  name, times as Unix seconds, JSON columns as JSON, and the links a row has (a fact's subjects, a collection's
  documents) as lists on the row itself;
- ``vectors.jsonl``: which objects carry a vector (not the vectors: they belong to one embedding model, and the
  restored vault makes its own);
- ``settings.json``: the vault's own settings with every secret (API keys) left out; the endpoint token never leaves;
- ``originals/<document id>``: a document's original bytes, where its file could still be read unchanged.

Why rows keep their ids: a fact names the turn it was drawn from, a conflict its two facts, a job the event it
enriches; keeping every id keeps every one of those links without rewriting payloads.  A restore therefore goes into
a vault with nothing in it (:func:`load_archive` refuses any other), in one transaction with foreign keys checked at
its end, so a damaged archive leaves no half-restored vault.

The archive copies whole tables, as the schema's migrations do: it is the one module besides each table's owner that
writes SQL on them (``tests/test_architecture.py`` knows).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tomllib
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.documents.originals import original_path
from engine.errors import Conflict, StorageFull, ValidationError, VaultTooNew
from engine.paths import VaultPaths
from engine.permissions import create_private_file, private_file
from engine.store import Snapshot, Store, Tx
from engine.store.migrations import SCHEMA_VERSION
from engine.vectors.migration import queue_vectors
from engine.version import __version__
from engine.workspace.searcher import queue_embedding

FORMAT = "cairn-export"
#: Raised when the format changes in a way an older reader would misread.
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SETTINGS = "settings.json"
VECTORS = "vectors.jsonl"
ORIGINALS = "originals/"
#: Rows written per statement batch while restoring.
BATCH = 2000

#: ``progress(stage, done, total)``: stages are ``export``, ``originals``, ``restore`` and ``vectors``.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class Link:
    """Rows of a link table shown on the row they hang from: ``field`` lists ``columns`` of ``table`` whose ``key``
    is the row's id (one column: a list of values; more: a list of objects)."""

    field: str
    table: str
    key: str
    columns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of record, one file: the rows of ``table`` (those matching ``where``)."""

    name: str
    table: str
    object_kind: str | None = None  # rows whose id is a vault object id (``objects.kind``)
    where: str = ""
    links: tuple[Link, ...] = ()

    @property
    def file(self) -> str:
        """The kind's file in the archive."""
        return f"{self.name}.jsonl"


def _subjects(table: str, key: str) -> Link:
    return Link("subject_ids", table, key, ("subject_id",))


#: Every kind, in an order a reader can load them in (what a row names comes before it, mostly: foreign keys are
#: checked at the end of the restore's transaction, so the order is for readers, not for the database).
KINDS: tuple[Kind, ...] = (
    Kind("subjects", "subjects", "subject"),
    Kind("predicates", "predicates", where="origin != 'catalog'"),  # the catalog comes with Cairn itself
    Kind("episodes", "episodes", "episode"),
    Kind("events", "events", "event", links=(_subjects("event_subjects", "event_id"),)),
    Kind("conversation_titles", "conversation_titles"),
    Kind("documents", "documents", "document"),
    Kind("sections", "sections", "section"),
    Kind("spans", "spans", "span"),
    Kind("tables", "document_tables"),
    Kind("facts", "facts", "fact", links=(_subjects("fact_subjects", "fact_id"),)),
    Kind("conflicts", "conflicts", "conflict"),
    Kind("observations", "observations", "observation", links=(_subjects("observation_subjects", "observation_id"),)),
    Kind(
        "understandings",
        "understandings",
        "understanding",
        links=(
            _subjects("understanding_subjects", "understanding_id"),
            Link("source_ids", "understanding_sources", "understanding_id", ("object_id",)),
        ),
    ),
    Kind("perspectives", "perspectives"),
    Kind(
        "collections",
        "collections",
        "collection",
        links=(Link("documents", "collection_documents", "collection_id", ("document_id", "added_at")),),
    ),
    Kind("quarantine", "quarantine", "quarantine"),
    Kind("watched_files", "files"),
    Kind("jobs", "jobs", "job"),
    Kind("receipts", "receipts", "receipt"),
    Kind("activity", "activity"),
)

#: Columns holding JSON text: exported as JSON values, stored back as text.
JSON_COLUMNS = frozenset({"metadata", "aliases", "tags", "cues", "examples", "payload", "warnings", "deleted_counts"})
#: ``receipts.scope`` is JSON too, but ``scope`` is an ordinary word elsewhere: named with its table.
JSON_COLUMNS_OF = {"receipts": frozenset({"scope"})}
#: Setting names whose values are secrets (a name ending so, or equal to one): never written to an archive.
SECRET_ENDINGS = ("api_key", "token", "password", "secret")


@dataclass(frozen=True, slots=True)
class ArchiveReport:
    """What an export wrote or a restore loaded."""

    path: str
    counts: dict[str, int]
    originals: int
    originals_missing: int
    size_bytes: int = 0
    schema_version: int = SCHEMA_VERSION
    notes: tuple[str, ...] = field(default_factory=tuple)


# -- export ------------------------------------------------------------------------------------------------------------
def export_archive(
    store: Store, settings_file: Path, target: Path, *, progress: Progress | None = None
) -> ArchiveReport:
    """Write the whole vault, as one consistent snapshot, to ``target`` (a ZIP file, mode 0600).

    The file appears only when complete (it is written beside, as ``<name>.part``, then renamed).

    Raises:
        ValidationError: ``target`` is a folder, or its folder does not exist or cannot be written.
        StorageFull: the disk filled up (the partial file is removed).
    """
    target = _export_target(target)
    part = target.with_name(target.name + ".part")
    part.unlink(missing_ok=True)
    try:
        create_private_file(part)  # it will hold the whole vault: never readable by others, not even while written
        with store.snapshot() as snap, zipfile.ZipFile(part, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            counts, originals, missing = _write_kinds(snap, zf, progress)
            settings, left_out = settings_without_secrets(settings_file)
            zf.writestr(SETTINGS, json.dumps(settings, indent=2, sort_keys=True))
            manifest = {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "schema_version": store.schema_version,
                "app_version": __version__,
                "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "kinds": {k.name: {"file": k.file, "count": counts[k.name]} for k in KINDS},
                "vectors": {"file": VECTORS, "count": counts["vectors"]},
                "originals": {"folder": ORIGINALS, "included": originals, "not_included": missing},
                "settings": {"file": SETTINGS, "left_out": left_out},
            }
            zf.writestr(MANIFEST, json.dumps(manifest, indent=2))
        private_file(part)
        os.replace(part, target)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise _write_error(target, exc) from exc
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    notes = []
    if missing:
        notes.append(
            f"{missing} document{'s' if missing != 1 else ''} went without the original file (uploaded without a "
            "path, or the file changed or moved since); their text is in the archive."
        )
    if left_out:
        notes.append(f"Secrets left out of the settings: {', '.join(left_out)}.")
    kinds = {k: v for k, v in counts.items() if k != "vectors"}
    return ArchiveReport(str(target), kinds, originals, missing, target.stat().st_size, notes=tuple(notes))


def _export_target(target: Path) -> Path:
    target = Path(target).expanduser().resolve()
    if target.is_dir():
        raise ValidationError("file", f"{target} is a folder", fix="Name the file to write, e.g. cairn-export.zip.")
    if not target.parent.is_dir():
        raise ValidationError("file", f"the folder {target.parent} does not exist", fix="Create it or choose another.")
    if not os.access(target.parent, os.W_OK):
        raise ValidationError("file", f"the folder {target.parent} cannot be written", fix="Choose another folder.")
    return target


def _write_error(target: Path, exc: OSError) -> Exception:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return StorageFull(f"The disk is full: {target} could not be written.", fix="Free some space and export again.")
    return ValidationError("file", f"{target} could not be written ({exc.strerror or exc})", fix="Choose another file.")


def _write_kinds(snap: Snapshot, zf: zipfile.ZipFile, progress: Progress | None) -> tuple[dict[str, int], int, int]:
    totals = {k.name: int(snap.scalar(f"SELECT COUNT(*) FROM {k.table}{_where(k)}")) for k in KINDS}
    grand, done = sum(totals.values()), 0
    counts: dict[str, int] = {}
    for kind in KINDS:
        links = {link.field: _link_rows(snap, link) for link in kind.links}
        n = 0
        with zf.open(_member(kind.file), "w") as out:
            for row in _rows(snap, kind.table, kind.where):
                for name, by_key in links.items():
                    row[name] = by_key.get(row["id"], [])
                out.write(_line(row))
                n += 1
                done += 1
                if progress is not None and done % 2000 == 0:
                    progress("export", done, grand)
        counts[kind.name] = n
    counts["vectors"] = _write_vectors(snap, zf)
    if progress is not None:
        progress("export", grand, grand)
    originals, missing = _write_originals(snap, zf, progress)
    return counts, originals, missing


def _member(name: str) -> zipfile.ZipInfo:
    """A member written now (``ZipFile.open`` would date a streamed member 1980-01-01)."""
    info = zipfile.ZipInfo(name, date_time=datetime.now().timetuple()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o600 << 16
    return info


def _where(kind: Kind) -> str:
    return f" WHERE {kind.where}" if kind.where else ""


def _rows(snap: Snapshot, table: str, where: str = "") -> Iterator[dict[str, Any]]:
    """The table's rows as dicts, JSON columns decoded, streamed (a big table is never held whole)."""
    driver = snap.conn.connection.driver_connection
    assert driver is not None
    cursor = driver.execute(f"SELECT * FROM {table}" + (f" WHERE {where}" if where else ""))
    names = [d[0] for d in cursor.description]
    json_cols = JSON_COLUMNS | JSON_COLUMNS_OF.get(table, frozenset())
    try:
        while batch := cursor.fetchmany(1024):
            for values in batch:
                row = dict(zip(names, values, strict=True))
                for col in json_cols.intersection(row):
                    row[col] = _json_value(row[col])
                yield row
    finally:
        cursor.close()


def _json_value(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text  # kept as the text it is


def _link_rows(snap: Snapshot, link: Link) -> dict[int, list[Any]]:
    out: dict[int, list[Any]] = {}
    cols = ", ".join(link.columns)
    for row in snap.query(f"SELECT {link.key}, {cols} FROM {link.table} ORDER BY {link.key}, {link.columns[0]}"):
        value = row[1] if len(link.columns) == 1 else dict(zip(link.columns, row[1:], strict=True))
        out.setdefault(int(row[0]), []).append(value)
    return out


def _line(row: Mapping[str, Any]) -> bytes:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _write_vectors(snap: Snapshot, zf: zipfile.ZipFile) -> int:
    """Every object that has (or waits for) a vector, once: the restore queues exactly these to be embedded."""
    rows = snap.query(
        "SELECT object_id, kind, user_id, content_hash FROM embeddings "
        "UNION SELECT object_id, kind, user_id, content_hash FROM vector_backlog ORDER BY 1"
    )
    seen: set[int] = set()
    with zf.open(_member(VECTORS), "w") as out:
        for oid, kind, user, digest in rows:
            if int(oid) in seen:
                continue
            seen.add(int(oid))
            out.write(_line({"object_id": int(oid), "kind": kind, "user_id": user, "content_hash": digest}))
    return len(seen)


def _write_originals(snap: Snapshot, zf: zipfile.ZipFile, progress: Progress | None) -> tuple[int, int]:
    """Each document's original bytes, where its file is still there and unchanged (same size, same SHA-256)."""
    docs = snap.query("SELECT id, path, size_bytes, content_hash FROM documents ORDER BY id")
    included = 0
    for n, (doc_id, path, size, digest) in enumerate(docs, start=1):
        source = _unchanged(path, int(size or 0), str(digest))
        if source is not None:
            zf.write(source, f"{ORIGINALS}{int(doc_id)}")
            included += 1
        if progress is not None:
            progress("originals", n, len(docs))
    return included, len(docs) - included


def _unchanged(path: str | None, size: int, digest: str) -> Path | None:
    if not path:
        return None
    file = Path(path)
    try:
        if not file.is_file() or file.stat().st_size != size:
            return None
        sha = hashlib.sha256()
        with file.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                sha.update(chunk)
    except OSError:
        return None
    return file if sha.hexdigest() == digest else None


def settings_without_secrets(settings_file: Path) -> tuple[dict[str, Any], list[str]]:
    """The vault's own settings (what ``settings.toml`` sets), and the dotted names of secrets left out."""
    try:
        data = tomllib.loads(settings_file.read_text(encoding="utf-8")) if settings_file.exists() else {}
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}, ["settings.toml (unreadable)"]
    left_out: list[str] = []

    def clean(node: Mapping[str, Any], prefix: str) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        for key, value in node.items():
            dotted = f"{prefix}{key}"
            if isinstance(value, Mapping):
                kept[key] = clean(value, f"{dotted}.")
            elif key.lower().endswith(SECRET_ENDINGS):
                if value:
                    left_out.append(dotted)
            else:
                kept[key] = value
        return kept

    return clean(data, ""), left_out


# -- restore -----------------------------------------------------------------------------------------------------------
def read_manifest(path: Path) -> dict[str, Any]:
    """The archive's manifest, checked: a Cairn export this Cairn can read.

    Raises:
        ValidationError: not a ZIP file, no manifest, or another format.
        VaultTooNew: written by a newer Cairn (a newer format or schema).
    """
    try:
        with zipfile.ZipFile(path) as zf:
            return _manifest(zf)
    except zipfile.BadZipFile as exc:
        raise ValidationError("file", f"{path} is not a Cairn export (not a ZIP file)", fix=_EXPORT_FIX) from exc
    except OSError as exc:
        raise ValidationError("file", f"{path} cannot be read ({exc.strerror or exc})", fix="Check the path.") from exc


_EXPORT_FIX = "Choose a file written by `cairn export` or File → Export, or a backup from `cairn backups`."


def _manifest(zf: zipfile.ZipFile) -> dict[str, Any]:
    try:
        manifest = json.loads(zf.read(MANIFEST))
    except KeyError as exc:
        raise ValidationError("file", "the archive has no manifest.json", fix=_EXPORT_FIX) from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValidationError("file", f"the archive's manifest.json is not JSON ({exc})", fix=_EXPORT_FIX) from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValidationError("file", "the archive is not a Cairn export (no cairn-export manifest)", fix=_EXPORT_FIX)
    version = manifest.get("format_version")
    schema = manifest.get("schema_version")
    if not isinstance(version, int) or not isinstance(schema, int):
        raise ValidationError("file", "the archive's manifest has no format or schema version", fix=_EXPORT_FIX)
    if version > FORMAT_VERSION or schema > SCHEMA_VERSION:
        raise VaultTooNew(
            f"The archive was written by a newer Cairn ({manifest.get('app_version', '?')}, schema {schema}); "
            f"this one reads schema {SCHEMA_VERSION} and older.",
            fix="Update Cairn, then restore again.",
        )
    return manifest


def archive_settings(path: Path) -> dict[str, Any]:
    """The settings an archive carries (empty when it carries none)."""
    with zipfile.ZipFile(path) as zf:
        try:
            data = json.loads(zf.read(SETTINGS))
        except KeyError:
            return {}
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValidationError("file", f"the archive's settings.json is not JSON ({exc})", fix=_EXPORT_FIX) from exc
    return data if isinstance(data, dict) else {}


def load_archive(
    store: Store, originals_dir: Path, source: Path, *, space_id: int, progress: Progress | None = None
) -> ArchiveReport:
    """Load the archive ``source`` into the empty vault behind ``store``, in one transaction.

    Vectors are not in the archive: every object that had one is queued for the vault's embedder (the
    ``vectors.fill`` job makes them), and each user's workspace items for their perspective vectors.  The full-text
    indexes fill as the rows go in.  Originals are written under ``originals_dir`` once the rows are committed.

    Raises:
        Conflict: the vault already holds something.
        ValidationError: the archive is damaged (a file missing, a line that is not JSON, a row that breaks the
            schema); nothing was restored.
    """
    if store.scalar("SELECT 1 FROM objects LIMIT 1") is not None:
        raise Conflict("The vault to restore into is not empty.", fix="Restore into a new folder.")
    with zipfile.ZipFile(source) as zf:
        manifest = _manifest(zf)
        names = set(zf.namelist())
        counts = {k.name: 0 for k in KINDS}
        grand = sum(int(v.get("count", 0)) for v in manifest.get("kinds", {}).values() if isinstance(v, dict))

        def op(tx: Tx) -> None:
            tx.execute("PRAGMA defer_foreign_keys = ON")
            done = 0
            for kind in KINDS:
                if kind.file not in names:
                    if int(manifest.get("kinds", {}).get(kind.name, {}).get("count", 0) or 0):
                        raise ValidationError("file", f"the archive lacks {kind.file}", fix=_EXPORT_FIX)
                    continue
                columns = _columns(tx, kind.table)
                for batch in _batches(zf, kind.file):
                    _insert(tx, kind, columns, batch)
                    counts[kind.name] += len(batch)
                    done += len(batch)
                    if progress is not None:
                        progress("restore", done, grand)
            tx.execute("UPDATE jobs SET status = 'queued' WHERE status = 'running'")
            if VECTORS in names:
                for batch in _batches(zf, VECTORS):
                    items = [
                        (int(r["object_id"]), str(r["kind"]), str(r["user_id"]), str(r["content_hash"])) for r in batch
                    ]
                    queue_vectors(tx, space_id, items)
            for (user,) in tx.execute(
                "SELECT user_id FROM observations UNION SELECT user_id FROM understandings"
            ).fetchall():
                queue_embedding(tx, str(user))
            violations = tx.execute("PRAGMA foreign_key_check").fetchall()
            if violations:
                table, rowid, parent = violations[0][0], violations[0][1], violations[0][2]
                raise ValidationError(
                    "file",
                    f"the archive is inconsistent: a row of {table} (rowid {rowid}) names a missing {parent} row "
                    f"({len(violations)} such rows)",
                    fix=_EXPORT_FIX,
                )

        try:
            store.write(op, timeout=None)
        except (KeyError, TypeError) as exc:
            raise ValidationError("file", f"the archive has a malformed row ({exc})", fix=_EXPORT_FIX) from exc
        originals = _restore_originals(zf, names, store, originals_dir)
    return ArchiveReport(
        str(source),
        counts,
        originals,
        counts["documents"] - originals,
        schema_version=int(manifest["schema_version"]),
    )


def _columns(tx: Tx, table: str) -> list[str]:
    return [str(r[1]) for r in tx.execute(f"PRAGMA table_info({table})").fetchall()]


def _batches(zf: zipfile.ZipFile, name: str) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    with zf.open(name) as raw:
        for number, line in enumerate(raw, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ValidationError("file", f"{name} line {number} is not JSON ({exc})", fix=_EXPORT_FIX) from exc
            if not isinstance(row, dict):
                raise ValidationError("file", f"{name} line {number} is not a JSON object", fix=_EXPORT_FIX)
            batch.append(row)
            if len(batch) >= BATCH:
                yield batch
                batch = []
    if batch:
        yield batch


def _insert(tx: Tx, kind: Kind, columns: Sequence[str], rows: list[dict[str, Any]]) -> None:
    """One batch of rows: their object ids first, then the rows (only the columns this schema has; a column the
    archive lacks takes its default), then their links."""
    json_cols = JSON_COLUMNS | JSON_COLUMNS_OF.get(kind.table, frozenset())
    present = [c for c in columns if c in rows[0]]
    if kind.object_kind is not None:
        tx.executemany(
            "INSERT INTO objects(id, kind, created_at) VALUES (?, ?, ?)",
            [(int(r["id"]), kind.object_kind, float(r.get("created_at") or r.get("ingested_at") or 0)) for r in rows],
        )
    values = [tuple(_stored(r.get(c), c in json_cols) for c in present) for r in rows]
    verb = "INSERT OR REPLACE" if kind.table == "predicates" else "INSERT"
    tx.executemany(f"{verb} INTO {kind.table}({', '.join(present)}) VALUES ({', '.join('?' * len(present))})", values)
    for link in kind.links:
        linked: list[tuple[Any, ...]] = []
        for r in rows:
            for item in r.get(link.field) or ():
                parts = (item,) if len(link.columns) == 1 else tuple(item[c] for c in link.columns)
                linked.append((int(r["id"]), *parts))
        cols = ", ".join((link.key, *link.columns))
        marks = ", ".join("?" * (1 + len(link.columns)))
        tx.executemany(f"INSERT OR IGNORE INTO {link.table}({cols}) VALUES ({marks})", linked)


def _stored(value: Any, is_json: bool) -> Any:
    if is_json and not isinstance(value, str) and value is not None:
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict | list):
        raise TypeError(f"a nested value where a plain one belongs: {str(value)[:60]}")
    return value


def _restore_originals(zf: zipfile.ZipFile, names: set[str], store: Store, folder: Path) -> int:
    wanted = sorted(n for n in names if n.startswith(ORIGINALS) and n[len(ORIGINALS) :].isdigit())
    written = 0
    for member in wanted:
        doc_id = int(member[len(ORIGINALS) :])
        rows = store.query("SELECT name FROM documents WHERE id = ?", (doc_id,))
        if not rows:
            continue
        target = original_path(folder, doc_id, str(rows[0][0]))
        create_private_file(target)
        with zf.open(member) as src, target.open("wb") as out:
            while chunk := src.read(1 << 20):
                out.write(chunk)
        written += 1
    return written


def export_folder(root: Path, target: Path, *, progress: Progress | None = None) -> ArchiveReport:
    """Export the vault in the folder ``root`` without opening it for writing.

    For ``cairn export`` while the desktop app (or ``cairn serve``) holds the vault: a read-only connection reads
    one consistent snapshot beside the writer of the running process, so nobody has to quit anything.

    Raises:
        VaultDamaged: the database is not SQLite or cannot be read.
        (and what :func:`export_archive` raises)
    """
    vault_paths = VaultPaths(root)
    store = Store(vault_paths.db, read_only=True)
    try:
        return export_archive(store, vault_paths.settings, target, progress=progress)
    finally:
        store.close()
