"""``vault.collections``: named groups of documents.  Deleting a collection keeps its documents."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.documents.model import Collection
from engine.errors import Conflict, NotFound, ValidationError
from engine.store import Store, Tx
from engine.temporal import from_epoch

_COLUMNS = (
    "c.id, c.user_id, c.name, c.description, "
    "(SELECT COUNT(*) FROM collection_documents m WHERE m.collection_id = c.id), c.created_at, c.updated_at"
)


def _collection(r: Sequence[Any]) -> Collection:
    return Collection(
        int(r[0]), str(r[1]), str(r[2]), str(r[3]), int(r[4]), from_epoch(float(r[5])), from_epoch(float(r[6]))
    )


class CollectionsApi:
    """Collections of the vault (calling it lists them)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def __call__(self, *, user_id: str | None = None) -> list[Collection]:
        """Collections by name."""
        sql = f"SELECT {_COLUMNS} FROM collections c"
        args: tuple[str, ...] = ()
        if user_id:
            sql, args = sql + " WHERE c.user_id = ?", (user_id,)
        return [_collection(r) for r in self._store.query(sql + " ORDER BY c.name COLLATE NOCASE", args)]

    def get(self, collection_id: int) -> Collection:
        """One collection."""
        rows = self._store.query(f"SELECT {_COLUMNS} FROM collections c WHERE c.id = ?", (collection_id,))
        if not rows:
            raise NotFound("collection", collection_id)
        return _collection(rows[0])

    def create(self, name: str, *, description: str = "", user_id: str = "default") -> Collection:
        """A new collection (names are unique per user, case-insensitively)."""
        clean = _name(name)

        def op(tx: Tx) -> int:
            if (
                tx.scalar("SELECT id FROM collections WHERE user_id = ? AND name = ? COLLATE NOCASE", (user_id, clean))
                is not None
            ):
                raise Conflict(f"A collection called {clean!r} already exists.", fix="Choose another name.")
            collection_id = tx.new_id("collection")
            tx.execute(
                "INSERT INTO collections(id, user_id, name, description, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (collection_id, user_id, clean, description, tx.now, tx.now),
            )
            tx.emit("collection.changed", collection_id, created=True)
            return collection_id

        return self.get(int(self._store.write(op)))

    def rename(self, collection_id: int, name: str) -> Collection:
        """Rename a collection."""
        clean = _name(name)

        def op(tx: Tx) -> None:
            row = tx.execute("SELECT user_id FROM collections WHERE id = ?", (collection_id,)).first()
            if row is None:
                raise NotFound("collection", collection_id)
            other = tx.scalar(
                "SELECT id FROM collections WHERE user_id = ? AND name = ? COLLATE NOCASE", (row[0], clean)
            )
            if other is not None and int(other) != collection_id:
                raise Conflict(f"A collection called {clean!r} already exists.", fix="Choose another name.")
            tx.execute("UPDATE collections SET name = ?, updated_at = ? WHERE id = ?", (clean, tx.now, collection_id))
            tx.emit("collection.changed", collection_id, renamed=True)

        self._store.write(op)
        return self.get(collection_id)

    def delete(self, collection_id: int) -> None:
        """Delete a collection; its documents stay."""

        def op(tx: Tx) -> None:
            if tx.scalar("SELECT id FROM collections WHERE id = ?", (collection_id,)) is None:
                raise NotFound("collection", collection_id)
            tx.execute("DELETE FROM objects WHERE id = ?", (collection_id,))
            tx.emit("collection.changed", collection_id, deleted=True)

        self._store.write(op)

    def add(self, collection_id: int, document_ids: Sequence[int]) -> Collection:
        """Add documents to a collection (already members are fine)."""
        self._change(collection_id, document_ids, add=True)
        return self.get(collection_id)

    def remove(self, collection_id: int, document_ids: Sequence[int]) -> Collection:
        """Remove documents from a collection (the documents stay in the vault)."""
        self._change(collection_id, document_ids, add=False)
        return self.get(collection_id)

    def document_ids(self, collection_id: int) -> list[int]:
        """The collection's documents, most recently added first."""
        self.get(collection_id)
        return [
            int(r[0])
            for r in self._store.query(
                "SELECT document_id FROM collection_documents WHERE collection_id = ? ORDER BY added_at DESC",
                (collection_id,),
            )
        ]

    def _change(self, collection_id: int, document_ids: Sequence[int], *, add: bool) -> None:
        if not document_ids:
            raise ValidationError("document_ids", "name at least one document")

        def op(tx: Tx) -> None:
            owner = tx.scalar("SELECT user_id FROM collections WHERE id = ?", (collection_id,))
            if owner is None:
                raise NotFound("collection", collection_id)
            for document_id in document_ids:
                doc_owner = tx.scalar("SELECT user_id FROM documents WHERE id = ?", (document_id,))
                if doc_owner is None:
                    raise NotFound("document", document_id)
                if doc_owner != owner:
                    raise ValidationError("document_ids", f"document {document_id} belongs to another user")
                if add:
                    tx.execute(
                        "INSERT OR IGNORE INTO collection_documents(collection_id, document_id, added_at) "
                        "VALUES (?, ?, ?)",
                        (collection_id, document_id, tx.now),
                    )
                else:
                    tx.execute(
                        "DELETE FROM collection_documents WHERE collection_id = ? AND document_id = ?",
                        (collection_id, document_id),
                    )
            tx.execute("UPDATE collections SET updated_at = ? WHERE id = ?", (tx.now, collection_id))
            tx.emit("collection.changed", collection_id, documents=list(document_ids), added=add)

        self._store.write(op)


def _name(name: str) -> str:
    clean = " ".join((name or "").split())
    if not clean:
        raise ValidationError("name", "must not be empty")
    if len(clean) > 200:
        raise ValidationError("name", "is longer than 200 characters")
    return clean
