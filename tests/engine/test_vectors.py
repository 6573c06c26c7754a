"""The sqlite-vec index: writes in the caller's transaction, KNN with filters, deletion by cascade."""

from __future__ import annotations

import numpy as np

from engine import Vault
from engine.vectors import SqliteVecIndex, VectorItem


def _unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def _register(vault: Vault, kind: str, n: int) -> list[int]:
    return vault.store.write(lambda tx: tx.new_ids(kind, n))


def test_add_search_filter_and_replace(vault: Vault) -> None:
    index = SqliteVecIndex(vault.store, "test-model", 3)
    fact_ids = _register(vault, "fact", 2)
    event_ids = _register(vault, "event", 1)
    items = [
        VectorItem(fact_ids[0], "fact", "u1", _unit([1, 0, 0]), "h1"),
        VectorItem(fact_ids[1], "fact", "u2", _unit([0.9, 0.1, 0]), "h2"),
        VectorItem(event_ids[0], "event", "u1", _unit([0, 1, 0]), "h3"),
    ]
    vault.store.write(lambda tx: index.add(tx, items))
    assert index.count() == 3
    hits = index.search(_unit([1, 0, 0]), 3)
    assert [h.object_id for h in hits] == [fact_ids[0], fact_ids[1], event_ids[0]]
    assert abs(hits[0].similarity - 1.0) < 1e-5
    assert [h.object_id for h in index.search(_unit([1, 0, 0]), 3, kinds=["event"])] == [event_ids[0]]
    assert [h.object_id for h in index.search(_unit([1, 0, 0]), 3, user_id="u2")] == [fact_ids[1]]
    # replacing a vector keeps one row
    vault.store.write(lambda tx: index.add(tx, [VectorItem(fact_ids[0], "fact", "u1", _unit([0, 0, 1]), "h9")]))
    assert index.count() == 3
    assert index.search(_unit([0, 0, 1]), 1)[0].object_id == fact_ids[0]


def test_a_question_vector_with_no_direction_finds_nothing_rather_than_failing(vault: Vault) -> None:
    """A question of no indexed words embeds (hashing) to zeros; vec0 has no cosine distance for it (NULL)."""
    index = SqliteVecIndex(vault.store, "test-model", 3)
    [fact_id] = _register(vault, "fact", 1)
    vault.store.write(lambda tx: index.add(tx, [VectorItem(fact_id, "fact", "u1", _unit([1, 0, 0]), "h1")]))
    assert not index.mirror.loaded  # the vec0 path
    assert index.search(np.zeros(3, dtype=np.float32), 3) == []


def test_an_object_made_in_the_transaction_can_have_its_vector_replaced_there(vault: Vault) -> None:
    """A new object's first vector skips looking for an older one; a second write in the same transaction (a fact
    restated right after it was stored) must still replace it, not collide with it."""
    index = SqliteVecIndex(vault.store, "test-model", 3)

    def write(tx):  # type: ignore[no-untyped-def]
        new = tx.new_id("fact")
        index.add(tx, [VectorItem(new, "fact", "u", _unit([1, 0, 0]), "first")])
        index.add(tx, [VectorItem(new, "fact", "u", _unit([0, 1, 0]), "second")])
        return new

    fact_id = vault.store.write(write)
    assert vault.store.query("SELECT content_hash FROM embeddings WHERE object_id = ?", (fact_id,)) == [("second",)]
    assert index.count() == 1
    assert index.search(_unit([0, 1, 0]), 1)[0].object_id == fact_id


def test_vectors_follow_their_objects_and_roll_back_with_them(vault: Vault) -> None:
    index = SqliteVecIndex(vault.store, "test-model", 3)
    ids = _register(vault, "fact", 2)
    vault.store.write(lambda tx: index.add(tx, [VectorItem(i, "fact", "u", _unit([1, 1, 0]), "h") for i in ids]))
    vault.store.write(lambda tx: tx.execute("DELETE FROM objects WHERE id = ?", (ids[0],)))
    assert index.count() == 1
    assert vault.store.scalar("SELECT COUNT(*) FROM embeddings") == 1

    def add_then_fail(tx):  # type: ignore[no-untyped-def]
        index.add(tx, [VectorItem(ids[1], "fact", "u", _unit([0, 1, 0]), "h2")])
        raise RuntimeError("abort")

    try:
        vault.store.write(add_then_fail)
    except RuntimeError:
        pass
    assert index.search(_unit([1, 1, 0]), 1)[0].similarity > 0.99, "the failed replacement rolled back"


def test_each_model_has_its_own_space(vault: Vault) -> None:
    a = SqliteVecIndex(vault.store, "model-a", 3)
    b = SqliteVecIndex(vault.store, "model-b", 5)
    again = SqliteVecIndex(vault.store, "model-a", 3)
    assert a.table != b.table and again.table == a.table
    models = dict(vault.store.query("SELECT model_id, dim FROM vector_spaces"))
    assert models["model-a"] == 3 and models["model-b"] == 5


def test_every_backend_is_a_vector_index_and_none_is_a_kind_of_another(vault: Vault) -> None:
    """Callers type against the protocol; a backend that inherited another's internals could not change alone."""
    from engine.vectors import VectorIndex
    from engine.vectors.chroma import ChromaIndex
    from engine.vectors.migration import MigratingIndex

    members = {name for name in vars(VectorIndex) if not name.startswith("_")} | set(VectorIndex.__annotations__)
    assert {"add", "delete", "search", "similarities", "load_mirror", "after_forget", "backend", "space_id"} <= members
    for backend in (SqliteVecIndex, ChromaIndex, MigratingIndex):
        assert [c for c in backend.__mro__ if c not in (backend, object)] == [], backend
        methods = {name for name in members if name not in VectorIndex.__annotations__}
        assert {name for name in methods if not callable(getattr(backend, name, None))} - {"backend"} == set()
        assert isinstance(getattr(backend, "backend", None), property), backend
    assert isinstance(vault.vectors, VectorIndex)
    old = SqliteVecIndex(vault.store, "model-old", 3)
    migrating = MigratingIndex(vault.store, SqliteVecIndex(vault.store, "model-new", 3), old)
    assert isinstance(migrating, VectorIndex) and migrating.space_id != old.space_id
