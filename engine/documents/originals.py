"""Original files that came with a restored vault: ``<vault>/originals/<document id>/<file name>``.

A vault keeps a document as its tree (sections and spans), not as the file it was parsed from: a watched file stays
where its owner keeps it.  An export carries the original bytes where they can still be read, so that the person
who moves to another machine keeps them; a restore puts them here, one folder per document, private to the vault.
Forgetting a document must not leave its file behind, so every forget and every document deletion ends with
:func:`sweep`, which removes the folders of documents the vault no longer holds.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from engine.permissions import private_dir
from engine.store import Reader, chunked

#: Characters kept in a stored file name; anything else (separators, controls) becomes ``_``.
_UNSAFE = re.compile(r"[^\w.\- ()+,@&]+", re.UNICODE)


def safe_name(name: str) -> str:
    """A file name that stays inside its folder: the last path part, without separators, dots-only or controls."""
    base = re.split(r"[\\/]", name)[-1]
    cleaned = _UNSAFE.sub("_", base).strip(" .")
    return cleaned[:180] or "document"


def original_path(folder: Path, document_id: int, name: str) -> Path:
    """Where the original of ``document_id`` named ``name`` is kept (its folder is created private)."""
    home = private_dir(folder / str(int(document_id)))
    return home / safe_name(name)


def held(folder: Path) -> dict[int, Path]:
    """Document id → its originals folder, for every folder present."""
    if not folder.is_dir():
        return {}
    return {int(p.name): p for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and p.name.isdigit()}


def sweep(store: Reader, folder: Path) -> int:
    """Remove the originals of documents the vault no longer holds; returns how many folders went."""
    present = held(folder)
    if not present:
        return 0
    kept: set[int] = set()
    for chunk in chunked(sorted(present)):
        marks = ",".join("?" * len(chunk))
        kept.update(int(r[0]) for r in store.query(f"SELECT id FROM documents WHERE id IN ({marks})", tuple(chunk)))
    gone = [path for doc_id, path in present.items() if doc_id not in kept]
    for path in gone:
        shutil.rmtree(path, ignore_errors=True)
    return len(gone)
