"""The vault database: creation, PRAGMAs, damaged and newer files, migrations."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine import Settings, Vault
from engine.errors import ValidationError, VaultDamaged, VaultLocked, VaultTooNew
from engine.store import Store
from engine.store.migrations import OBJECT_TABLES, SCHEMA_VERSION

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

EXPECTED_TABLES = {
    "meta",
    "objects",
    "events",
    "facts",
    "predicates",
    "conflicts",
    "episodes",
    "subjects",
    "understandings",
    "fact_subjects",
    "event_subjects",
    "understanding_subjects",
    "documents",
    "sections",
    "spans",
    "collections",
    "collection_documents",
    "jobs",
    "receipts",
    "quarantine",
    "files",
    "vector_spaces",
    "embeddings",
    "events_fts",
    "facts_fts",
    "spans_fts",
    "episodes_fts",
    "understandings_fts",
}


def test_new_vault_has_every_table_and_the_schema_version(vault: Vault) -> None:
    names = {r[0] for r in vault.store.query("SELECT name FROM sqlite_master WHERE type IN ('table')")}
    assert names >= EXPECTED_TABLES
    assert vault.store.schema_version == SCHEMA_VERSION
    assert vault.store.scalar("SELECT value FROM meta WHERE key = 'schema_version'") == str(SCHEMA_VERSION)


def test_connections_have_the_vault_pragmas(vault: Vault) -> None:
    with vault.store.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA secure_delete").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000
        assert conn.exec_driver_sql("SELECT vec_version()").scalar().startswith("v")
    # the writer connection too
    assert vault.store.write(lambda tx: tx.scalar("PRAGMA foreign_keys")) == 1
    assert vault.store.write(lambda tx: tx.scalar("PRAGMA synchronous")) == 2  # FULL


def test_reader_connections_cannot_write(vault: Vault) -> None:
    with pytest.raises(Exception, match=r"readonly|query_only|read-only|attempt to write"):
        vault.store.query("INSERT INTO meta(key, value) VALUES ('x', 'y')")


def test_every_object_table_draws_ids_from_the_registry(vault: Vault) -> None:
    def make(tx):  # type: ignore[no-untyped-def]
        sid = tx.new_id("subject")
        tx.execute(
            "INSERT INTO subjects(id, user_id, name, created_at, updated_at) VALUES (?, 'u', 'Ann', 0, 0)", (sid,)
        )
        cid = tx.new_id("collection")
        tx.execute(
            "INSERT INTO collections(id, user_id, name, created_at, updated_at) VALUES (?, 'u', 'c', 0, 0)", (cid,)
        )
        return sid, cid

    sid, cid = vault.store.write(make)
    assert sid != cid
    kinds = dict(vault.store.query("SELECT id, kind FROM objects WHERE id IN (?, ?)", (sid, cid)))
    assert kinds == {sid: "subject", cid: "collection"}
    # deleting the row releases the id; deleting the id removes the row
    vault.store.write(lambda tx: tx.execute("DELETE FROM subjects WHERE id = ?", (sid,)))
    vault.store.write(lambda tx: tx.execute("DELETE FROM objects WHERE id = ?", (cid,)))
    assert vault.store.scalar("SELECT COUNT(*) FROM objects WHERE id IN (?, ?)", (sid, cid)) == 0
    assert vault.store.scalar("SELECT COUNT(*) FROM collections") == 0
    assert set(OBJECT_TABLES.values()) <= EXPECTED_TABLES


def test_new_ids_are_consecutive_and_registered(vault: Vault) -> None:
    ids = vault.store.write(lambda tx: tx.new_ids("job", 50))
    assert ids == list(range(ids[0], ids[0] + 50))
    assert vault.store.scalar("SELECT COUNT(*) FROM objects WHERE kind = 'job'") == 50


def test_non_sqlite_file_is_reported_and_left_untouched(tmp_path: Path, offline_settings: Settings) -> None:
    root = tmp_path / "v"
    root.mkdir()
    db = root / "vault.db"
    garbage = b"this is my shopping list, not a database\n" * 100
    db.write_bytes(garbage)
    with pytest.raises(VaultDamaged, match="not a SQLite database") as info:
        Vault.open(root, settings=offline_settings)
    assert "untouched" in info.value.message and info.value.fix
    assert db.read_bytes() == garbage
    assert not (root / "vault.db-wal").exists()


def test_corrupt_sqlite_file_is_reported_and_left_untouched(tmp_path: Path, offline_settings: Settings) -> None:
    root = tmp_path / "v"
    with Vault.open(root, settings=offline_settings) as v:
        v.store.write(
            lambda tx: tx.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?)", [(f"k{i}", "x" * 500) for i in range(400)]
            )
        )
    db = root / "vault.db"
    data = bytearray(db.read_bytes())
    assert len(data) > 8 * 4096
    for offset in range(4096 * 2, 4096 * 6):  # smash pages after the header
        data[offset] = 0xFF
    db.write_bytes(bytes(data))
    before = db.read_bytes()
    with pytest.raises(VaultDamaged) as info:
        Vault.open(root, settings=offline_settings)
    assert "left untouched" in info.value.message
    assert db.read_bytes() == before


def test_newer_vault_is_refused(tmp_path: Path, offline_settings: Settings) -> None:
    root = tmp_path / "v"
    with Vault.open(root, settings=offline_settings) as v:
        v.store.write(lambda tx: tx.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}"))
    before = (root / "vault.db").read_bytes()
    with pytest.raises(VaultTooNew, match="newer Cairn") as info:
        Vault.open(root, settings=offline_settings)
    assert "Upgrade Cairn" in info.value.fix
    assert (root / "vault.db").read_bytes() == before


def test_a_file_where_the_folder_should_be_is_an_error(tmp_path: Path, offline_settings: Settings) -> None:
    target = tmp_path / "not-a-folder"
    target.write_text("x")
    with pytest.raises(ValidationError, match="is a file"):
        Vault.open(target, settings=offline_settings)


def test_second_process_cannot_open_the_same_vault(vault: Vault, offline_settings: Settings) -> None:
    with pytest.raises(VaultLocked, match="already open"):
        Vault.open(vault.paths.root, settings=offline_settings)


def test_vault_reopens_with_data_intact(tmp_path: Path, offline_settings: Settings) -> None:
    root = tmp_path / "v"
    with Vault.open(root, settings=offline_settings) as v:
        v.store.write(lambda tx: tx.execute("INSERT INTO meta(key, value) VALUES ('hello', 'world')"))
    with Vault.open(root, settings=offline_settings) as v:
        assert v.store.scalar("SELECT value FROM meta WHERE key = 'hello'") == "world"


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.glob("vault_v*.db")))
def test_fixture_vaults_of_every_released_schema_upgrade(tmp_path: Path, fixture: str) -> None:
    db = tmp_path / "vault.db"
    shutil.copy(FIXTURES / fixture, db)
    store = Store(db, backup_dir=tmp_path / "backups")
    try:
        assert store.schema_version == SCHEMA_VERSION
        assert store.scalar("PRAGMA integrity_check") == "ok"
        # rows written by the old schema are still there
        assert store.scalar("SELECT COUNT(*) FROM events") >= 1
        assert store.scalar("SELECT COUNT(*) FROM facts") >= 1
        assert store.scalar("SELECT COUNT(*) FROM events_fts WHERE events_fts MATCH 'fixture'") >= 1
    finally:
        store.close()
    if fixture != f"vault_v{SCHEMA_VERSION}.db":
        assert list((tmp_path / "backups").glob("before-schema-*.db")), "a backup is made before migrating"


def test_online_backups_keep_generations_and_are_consistent(tmp_path: Path) -> None:
    import sqlean

    from engine.events import EventIn

    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing", "backups.generations": 2})
    with Vault.open(tmp_path / "v", settings=settings, start_workers=False) as vault:
        vault.ingest_event(EventIn(conversation_id="c", content="I like tea."))
        made = [vault.backup_now() for _ in range(3)]
        listed = vault.backups()
        assert len([b for b in listed if Path(b.path).name.startswith("vault-")]) == 2
        assert not Path(made[0].path).exists() and Path(made[-1].path).exists()
    conn = sqlean.connect(made[-1].path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT content FROM events").fetchone()[0] == "I like tea."
    finally:
        conn.close()
