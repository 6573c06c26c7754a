"""The vault database: creation, PRAGMAs, damaged and newer files, migrations."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlean

from engine import Settings, Vault
from engine.api.errors import status_of
from engine.conversations import set_title
from engine.errors import ExtensionUnavailable, ValidationError, VaultDamaged, VaultLocked, VaultTooNew
from engine.events import EventIn
from engine.forget import ForgetScope
from engine.store import Store
from engine.store.db import load_vector_extension
from engine.store.migrations import MIGRATIONS, OBJECT_TABLES, SCHEMA_VERSION

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
    "observations",
    "observation_subjects",
    "understanding_sources",
    "workspace_sessions",
    "workspace_seen",
    "observations_fts",
    "document_tables",
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


def test_planner_statistics_cover_the_tables_but_never_the_full_text_indexes_own(vault: Vault) -> None:
    # FTS5 plans its internal queries for shadow tables without statistics; a stale figure taken while an index
    # was empty made each insert cost time in proportion to the index's size.
    for n in range(50):
        vault.events.ingest(EventIn(conversation_id=f"c{n % 5}", content=f"Turn {n}: I like tea number {n}."))
    vault.store.optimize()
    analysed = {r[0] for r in vault.store.query("SELECT tbl FROM sqlite_stat1")}
    assert "events" in analysed  # the base tables have statistics
    shadow = {t for t in analysed if "_fts_" in t}
    assert shadow == set()
    fts_tables = {r[0] for r in vault.store.query("SELECT name FROM sqlite_master WHERE name GLOB '*_fts_data'")}
    assert "events_fts_data" in fts_tables  # the shadow tables exist: there is something to leave out


def test_shadow_statistics_an_earlier_version_wrote_are_removed_on_open(
    tmp_path: Path, offline_settings: Settings
) -> None:
    Vault.open(tmp_path / "v", settings=offline_settings, start_workers=False).close()
    conn = sqlean.connect(str(tmp_path / "v" / "vault.db"))
    conn.execute("ANALYZE spans_fts_data")  # what PRAGMA optimize used to do
    conn.commit()
    assert conn.execute("SELECT COUNT(*) FROM sqlite_stat1 WHERE tbl = 'spans_fts_data'").fetchone() == (1,)
    conn.close()
    with Vault.open(tmp_path / "v", settings=offline_settings, start_workers=False) as vault:
        assert vault.store.query("SELECT tbl FROM sqlite_stat1 WHERE tbl GLOB '*_fts_*'") == []


def test_reader_connections_cannot_write(vault: Vault) -> None:
    with pytest.raises(Exception, match=r"readonly|query_only|read-only|attempt to write"):
        vault.store.query("INSERT INTO meta(key, value) VALUES ('x', 'y')")
    with vault.store.snapshot() as snap, pytest.raises(Exception, match=r"readonly|query_only|attempt to write"):
        snap.query("INSERT INTO meta(key, value) VALUES ('x', 'y')")


def test_one_statement_reads_reuse_configured_connections_and_see_every_commit(vault: Vault) -> None:
    store = vault.store
    # the plain connections behind Store.query have the readers' pragmas and vectors, like the pooled ones
    assert store.query("PRAGMA query_only") == [(1,)]
    assert store.query("PRAGMA foreign_keys") == [(1,)]
    assert str(store.scalar("SELECT vec_version()")).startswith("v")
    rows = store.query("SELECT key, value FROM meta WHERE key = ?", ("schema_version",))
    assert rows == [("schema_version", str(SCHEMA_VERSION))] and type(rows[0]) is tuple
    assert store.query("SELECT :a + :b", {"a": 2, "b": 3}) == [(5,)]
    # no read transaction is left open between calls: a commit made afterwards is seen at once
    for n in range(3):
        store.write(lambda tx, n=n: tx.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (f"k{n}", str(n))))
        assert store.scalar("SELECT value FROM meta WHERE key = ?", (f"k{n}",)) == str(n)
    # a failing statement is reported and costs nothing: the next read works
    with pytest.raises(Exception, match="no such table"):
        store.query("SELECT * FROM no_such_table")
    assert store.scalar("SELECT COUNT(*) FROM meta WHERE key GLOB 'k*'") == 3


def test_one_statement_reads_from_many_threads_at_once(vault: Vault) -> None:
    import threading

    store = vault.store
    store.write(lambda tx: tx.execute("INSERT INTO meta(key, value) VALUES ('shared', 'yes')"))
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(200):
                assert store.query("SELECT value FROM meta WHERE key = 'shared'") == [("yes",)]
        except BaseException as exc:  # reported below with the others
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_snapshot_reads_agree_with_each_other_while_commits_land(vault: Vault) -> None:
    store = vault.store
    store.write(lambda tx: tx.execute("INSERT INTO meta(key, value) VALUES ('n', '1')"))
    with store.snapshot() as snap:
        assert snap.query("SELECT value FROM meta WHERE key = 'n'") == [("1",)]
        store.write(lambda tx: tx.execute("UPDATE meta SET value = '2' WHERE key = 'n'"))
        assert snap.query("SELECT value FROM meta WHERE key = 'n'") == [("1",)]  # still the snapshot's view
        assert store.query("SELECT value FROM meta WHERE key = 'n'") == [("2",)]  # a fresh read sees the commit


def test_a_streamed_read_yields_every_row_in_batches_from_one_snapshot(vault: Vault) -> None:
    store = vault.store
    keys = [f"stream-{n:03}" for n in range(250)]
    store.write(lambda tx: tx.executemany("INSERT INTO meta(key, value) VALUES (?, 'x')", [(k,) for k in keys]))
    batches = store.stream("SELECT key FROM meta WHERE key GLOB 'stream-*' ORDER BY key", batch=100)
    first = next(batches)
    # a commit landing mid-stream is not part of it: one statement reads one snapshot
    store.write(lambda tx: tx.execute("INSERT INTO meta(key, value) VALUES ('stream-999', 'late')"))
    rest = list(batches)
    assert [len(b) for b in [first, *rest]] == [100, 100, 50]
    assert [r[0] for b in [first, *rest] for r in b] == keys
    with pytest.raises(Exception, match="no such table"):
        list(store.stream("SELECT * FROM no_such_table"))
    # the connection went back unharmed: reads go on, and see the late commit
    assert store.scalar("SELECT COUNT(*) FROM meta WHERE key GLOB 'stream-*'") == 251


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


def _vault_with_rows(root: Path, settings: Settings, journal_mode: str) -> Path:
    """A closed vault with enough rows to span many pages, its file in ``journal_mode`` (``wal`` or ``delete``)."""
    with Vault.open(root, settings=settings, start_workers=False) as v:
        v.store.write(
            lambda tx: tx.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?)", [(f"k{i}", "x" * 500) for i in range(400)]
            )
        )
    db = root / "vault.db"
    conn = sqlean.connect(str(db))
    try:
        assert conn.execute(f"PRAGMA journal_mode = {journal_mode}").fetchone()[0] == journal_mode
    finally:
        conn.close()
    # header bytes 18/19: 1 = rollback journal, 2 = WAL (what the writer's first PRAGMA would change)
    assert db.read_bytes()[18:20] == (b"\x02\x02" if journal_mode == "wal" else b"\x01\x01")
    return db


def _smash_pages(data: bytearray) -> None:
    for offset in range(4096 * 2, 4096 * 6):  # whole b-tree pages after the header page
        data[offset] = 0xFF


def _wrong_freelist_count(data: bytearray) -> None:
    data[36:40] = (5).to_bytes(4, "big")  # the header claims free pages the file does not have


def _side_files(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if p.name.startswith(db.name + "-"))


@pytest.mark.parametrize("journal_mode", ["wal", "delete"])
@pytest.mark.parametrize(
    ("damage", "reported"),
    [(_smash_pages, "cannot be read"), (_wrong_freelist_count, "is damaged")],
    ids=["smashed-pages", "freelist-count"],
)
def test_corrupt_sqlite_file_is_reported_and_left_untouched(
    tmp_path: Path,
    offline_settings: Settings,
    journal_mode: str,
    damage: Callable[[bytearray], None],
    reported: str,
) -> None:
    root = tmp_path / "v"
    db = _vault_with_rows(root, offline_settings, journal_mode)
    data = bytearray(db.read_bytes())
    assert len(data) > 8 * 4096
    damage(data)
    db.write_bytes(bytes(data))
    before = db.read_bytes()
    with pytest.raises(VaultDamaged) as info:
        Vault.open(root, settings=offline_settings)
    assert reported in info.value.message and "left untouched" in info.value.message
    assert "backups/" in info.value.fix
    assert db.read_bytes() == before  # every byte, the header's journal mode and change counter included
    assert _side_files(db) == []  # no -journal, and no -wal/-shm left behind by the check
    with pytest.raises(VaultDamaged):  # it stays refused: nothing was "repaired" into an empty vault
        Vault.open(root, settings=offline_settings)
    assert db.read_bytes() == before


@pytest.mark.parametrize("journal_mode", ["wal", "delete"])
def test_newer_vault_is_refused(tmp_path: Path, offline_settings: Settings, journal_mode: str) -> None:
    root = tmp_path / "v"
    db = _vault_with_rows(root, offline_settings, journal_mode)
    conn = sqlean.connect(str(db))
    try:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
        conn.commit()
    finally:
        conn.close()
    before = db.read_bytes()
    with pytest.raises(VaultTooNew, match="newer Cairn") as info:
        Vault.open(root, settings=offline_settings)
    assert f"schema {SCHEMA_VERSION + 5}" in info.value.message
    assert "Upgrade Cairn" in info.value.fix
    assert db.read_bytes() == before
    assert _side_files(db) == []
    with pytest.raises(VaultTooNew):  # a read-only open refuses it too
        Store(db, read_only=True)
    assert db.read_bytes() == before


def test_a_crashed_rollback_journal_writer_is_recovered_not_reported(tmp_path: Path) -> None:
    """A hot journal is a crash, not damage: SQLite rolls it back and the committed rows are all there."""
    db = tmp_path / "vault.db"
    store = Store(db)
    store.write(
        lambda tx: tx.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?)", [(f"k{i}", "x" * 900) for i in range(600)]
        )
    )
    store.close()
    crash = f"""
import os, signal, sqlean
conn = sqlean.connect({str(db)!r}, isolation_level=None)
conn.execute("PRAGMA journal_mode = DELETE")
conn.execute("PRAGMA cache_size = 5")  # spill changed pages into the file before COMMIT
conn.execute("BEGIN")
conn.execute("UPDATE meta SET value = 'half-written' WHERE key LIKE 'k%'")
os.kill(os.getpid(), signal.SIGKILL)
"""
    subprocess.run([sys.executable, "-c", crash], check=False, timeout=60)
    journal = db.with_name("vault.db-journal")
    assert journal.exists() and journal.stat().st_size > 0, "the child did not leave a hot journal"
    store = Store(db)
    try:
        assert store.scalar("SELECT COUNT(*) FROM meta WHERE value = 'half-written'") == 0
        assert store.scalar("SELECT COUNT(*) FROM meta WHERE key LIKE 'k%'") == 600
        assert store.scalar("PRAGMA integrity_check") == "ok"
    finally:
        store.close()


# -- sqlite-vec ------------------------------------------------------------------------------------
def _broken_sqlite_vec(monkeypatch: pytest.MonkeyPatch) -> None:
    """sqlite-vec's loadable library fails to load, as it does for a wheel built for another platform."""
    import sqlite_vec

    def load(_conn: object) -> None:
        raise OSError("vec0.so: wrong ELF class: ELFCLASS32")

    monkeypatch.setattr(sqlite_vec, "load", load)


def test_sqlite_vec_that_cannot_load_is_a_readable_error_and_no_vault_is_made(
    tmp_path: Path, offline_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "v"
    _broken_sqlite_vec(monkeypatch)
    with pytest.raises(ExtensionUnavailable) as info:
        Vault.open(root, settings=offline_settings)
    assert info.value.message == "sqlite-vec could not be loaded into SQLite: vec0.so: wrong ELF class: ELFCLASS32"
    assert info.value.fix == "Reinstall sqlite-vec for this platform (`pip install --force-reinstall sqlite-vec`)."
    assert info.value.code == "extension_unavailable" and status_of(info.value) == 503
    assert not [p.name for p in root.iterdir() if p.name.startswith("vault.db")]  # no database without vectors
    with pytest.raises(ExtensionUnavailable):  # a Store on its own refuses the same way
        Store(tmp_path / "bare.db")
    assert not (tmp_path / "bare.db").exists()

    monkeypatch.undo()  # the extension is back: the same folder becomes a real vault (the lock was released)
    with Vault.open(root, settings=offline_settings) as vault:
        assert vault.store.scalar("SELECT vec_version()").startswith("v")
        assert vault.store.schema_version == SCHEMA_VERSION


def test_sqlite_vec_that_cannot_load_leaves_an_existing_vault_untouched(
    tmp_path: Path, offline_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "v"
    db = _vault_with_rows(root, offline_settings, "delete")
    before = db.read_bytes()
    _broken_sqlite_vec(monkeypatch)
    with pytest.raises(ExtensionUnavailable, match="sqlite-vec could not be loaded"):
        Vault.open(root, settings=offline_settings)
    assert db.read_bytes() == before and _side_files(db) == []


def test_a_sqlite_without_extension_loading_is_named_with_its_fix() -> None:
    """Python's own sqlite3 is often built without extension loading (pyenv, python.org, macOS)."""
    conn = sqlite3.connect(":memory:")
    try:
        if hasattr(conn, "enable_load_extension"):
            pytest.skip("this Python's sqlite3 can load extensions")
        with pytest.raises(ExtensionUnavailable) as info:
            load_vector_extension(conn)
    finally:
        conn.close()
    assert info.value.message == "This SQLite build cannot load extensions, so sqlite-vec cannot be used."
    assert "sqlean.py" in info.value.fix


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


def _all_rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table a migration must keep, read without changing the file."""
    conn = sqlean.connect(db.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        load_vector_extension(conn)
        names = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "AND name NOT LIKE '%_fts_%' AND name NOT LIKE 'vec_%\\_%' ESCAPE '\\' AND name != 'meta'"
            )
        ]
        rows: dict[str, list[tuple[object, ...]]] = {}
        for name in names:
            columns = "rowid, *" if name.startswith("vec_") else "*"  # vec0 keeps its key as the rowid
            rows[name] = sorted(conn.execute(f'SELECT {columns} FROM "{name}"').fetchall(), key=repr)
        return rows
    finally:
        conn.close()


def _assert_kept(before: dict[str, list[tuple[object, ...]]], after: dict[str, list[tuple[object, ...]]]) -> None:
    """Every row of every table in ``before`` is in ``after`` with the same values in the columns it had (a later
    migration may add a column with its default); tables made since are empty."""
    for name in sorted(set(after) - set(before)):
        assert after[name] == [], f"{name}: a new table, but not empty"
    for name, rows in before.items():
        width = len(rows[0]) if rows else 0
        kept = sorted((row[:width] for row in after[name]), key=repr)
        assert kept == rows, name


def test_the_schema_3_fixture_gains_conversation_titles_keeping_every_row(tmp_path: Path) -> None:
    """m004 applied to a real vault of schema 3: every row is kept, titles can be stored and listed, and a
    conversation's title is forgotten with its last event."""
    root = tmp_path / "v"
    root.mkdir()
    db = root / "vault.db"
    shutil.copy(FIXTURES / "vault_v3.db", db)
    before = _all_rows(db)
    store = Store(db, backup_dir=root / "backups")
    try:
        assert store.schema_version == SCHEMA_VERSION
        assert store.scalar("PRAGMA integrity_check") == "ok"
    finally:
        store.close()
    _assert_kept(before, _all_rows(db))
    settings = Settings().updated(
        {"llm.provider": "simple", "embedder.provider": "hashing", "embedder.hashing_dim": 64}
    )
    with Vault.open(root, settings=settings, start_workers=False) as vault:
        (conversation,) = vault.conversations()
        assert conversation.title == ""
        vault.store.write(
            lambda tx: set_title(tx, conversation.user_id, conversation.conversation_id, "Fixture chat", "test")
        )
        assert [c.title for c in vault.conversations()] == ["Fixture chat"]
        vault.forget(ForgetScope(user_id=conversation.user_id, conversation_id=conversation.conversation_id))
        assert vault.store.scalar("SELECT COUNT(*) FROM conversation_titles") == 0


def test_the_schema_2_fixture_upgrades_keeping_every_row(tmp_path: Path) -> None:
    """m003 (quarantine per user) applied to a real vault of schema 2: every row of every table is kept, the
    indexes that need them still find them, and the new rule holds."""
    root = tmp_path / "v"
    root.mkdir()
    db = root / "vault.db"
    shutil.copy(FIXTURES / "vault_v2.db", db)
    before = _all_rows(db)
    assert {name for name, rows in before.items() if rows} >= {
        "events", "facts", "subjects", "conflicts", "episodes", "documents", "sections", "spans", "collections",
        "collection_documents", "quarantine", "files", "jobs", "receipts", "understandings", "embeddings", "vec_1",
    }  # fmt: skip
    shutil.copy(FIXTURES / "vault_v2.db", tmp_path / "copy.db")
    raw = sqlean.connect(str(tmp_path / "copy.db"))  # the fixture really is of the schema before m003
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 2
        with pytest.raises(sqlean.IntegrityError):
            raw.execute(
                "INSERT INTO quarantine(id, user_id, name, content_hash, parser, parser_version, reason, created_at) "
                "SELECT 999999, 'someone-else', name, content_hash, parser, parser_version, reason, 0 FROM quarantine"
            )
    finally:
        raw.close()

    store = Store(db, backup_dir=root / "backups")
    try:
        assert store.schema_version == SCHEMA_VERSION
        assert store.scalar("PRAGMA integrity_check") == "ok"
        # the fixture's own history, then what this upgrade did
        migrated = {key for (key,) in store.query("SELECT key FROM meta WHERE key LIKE 'migrated:%'")}
        assert migrated == {f"migrated:{m.name}" for m in MIGRATIONS}
        for table, match in (
            ("events_fts", "Lisbon"),
            ("facts_fts", "tea"),
            ("spans_fts", "migration"),
            ("episodes_fts", "fixture"),
            ("understandings_fts", "engineer"),
        ):
            assert store.scalar(f"SELECT COUNT(*) FROM {table} WHERE {table} MATCH ?", (match,)) >= 1, table
        # m003: the same file quarantined for another user is that user's own entry now; one user's stays unique
        store.write(
            lambda tx: tx.execute(
                "INSERT INTO quarantine(id, user_id, name, content_hash, parser, parser_version, reason, created_at) "
                "SELECT ?, 'someone-else', name, content_hash, parser, parser_version, reason, 0 FROM quarantine",
                (tx.new_id("quarantine"),),
            )
        )
        with pytest.raises(Exception, match="UNIQUE"):
            store.write(
                lambda tx: tx.execute(
                    "INSERT INTO quarantine(id, user_id, name, content_hash, parser, parser_version, reason, "
                    "created_at) SELECT ?, 'default', name, content_hash, parser, parser_version, reason, 0 "
                    "FROM quarantine WHERE user_id = 'default'",
                    (tx.new_id("quarantine"),),
                )
            )
        store.write(lambda tx: tx.execute("DELETE FROM quarantine WHERE user_id = 'someone-else'"))
    finally:
        store.close()
    _assert_kept(before, _all_rows(db))  # every column of every row, vectors included; later tables new and empty
    (backup,) = (root / "backups").glob("before-schema-3-*.db")
    assert _all_rows(backup) == before

    # and the vault opens through the facade with its history, conflict, document and vectors in use
    settings = Settings().updated(
        {"llm.provider": "simple", "embedder.provider": "hashing", "embedder.hashing_dim": 64}
    )
    with Vault.open(root, settings=settings, start_workers=False) as vault:
        facts = {f.object_text: f for f in vault.facts(limit=50, status=("active", "contested", "superseded"))}
        lisbon, porto = facts["Lisbon"], facts["Porto"]
        assert (lisbon.status, porto.status, porto.superseded_by) == ("active", "superseded", lisbon.id)
        assert [f.id for f in vault.facts.history(lisbon.id)] == [porto.id, lisbon.id]
        (conflict,) = vault.conflicts()
        assert {conflict.fact_a.object_text, conflict.fact_b.object_text} == {"green tea", "black tea"}
        (document,) = vault.documents()
        tree = vault.documents.get(document.id)
        assert tree.info.status == "ready" and len(tree.sections) == 2
        query = vault.embedder.embed(["Ann likes green tea"])[0]
        assert vault.vectors.search(query, 1, kinds=["fact"])[0].object_id == facts["green tea"].id


def test_online_backups_keep_generations_and_are_consistent(tmp_path: Path) -> None:
    import sqlean

    from engine.events import EventIn

    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing", "backups.generations": 2})
    with Vault.open(tmp_path / "v", settings=settings, start_workers=False) as vault:
        vault.events.ingest(EventIn(conversation_id="c", content="I like tea."))
        made = [vault.backups.now() for _ in range(3)]
        listed = vault.backups()
        assert len([b for b in listed if Path(b.path).name.startswith("vault-")]) == 2
        assert not Path(made[0].path).exists() and Path(made[-1].path).exists()
    conn = sqlean.connect(made[-1].path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT content FROM events").fetchone()[0] == "I like tea."
    finally:
        conn.close()
