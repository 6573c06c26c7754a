"""Forget: scoped, complete down to the bytes on disk, receipted; other scopes untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Vault
from engine.errors import NotFound, ValidationError
from engine.events import EventIn
from engine.forget import ForgetScope

CANARY = "Quorvanthe"  # a name that occurs nowhere else
TAIL = CANARY.lower()[-6:].encode()


def _seed(vault: Vault) -> None:
    vault.events.ingest(
        [
            EventIn(conversation_id="secret", content=f"My friend {CANARY} lives in Oslo.", occurred_at="2024-03-01"),
            EventIn(conversation_id="secret", content=f"{CANARY} loves climbing.", occurred_at="2024-03-01T10:05:00Z"),
            EventIn(conversation_id="keep", content="I work as a nurse.", occurred_at="2024-03-02"),
            EventIn(conversation_id="keep", content="I live in Hanoi.", occurred_at="2024-03-02T11:00:00Z"),
            EventIn(conversation_id="secret", content="I like green tea.", occurred_at="2024-03-03", user_id="other"),
        ]
    )
    assert vault.jobs.wait_idle(120)


def _snapshot(vault: Vault, where: str, params: tuple[object, ...]) -> list[tuple[object, ...]]:
    return [
        tuple(r) for r in vault.store.query(f"SELECT id, content, status FROM events WHERE {where} ORDER BY id", params)
    ] + [
        tuple(r)
        for r in vault.store.query(
            f"SELECT id, statement, status, confidence FROM facts WHERE {where} ORDER BY id", params
        )
    ]


def _raw_bytes(vault: Vault) -> bytes:
    data = vault.paths.db.read_bytes()
    wal = vault.paths.db.with_name("vault.db-wal")
    return data + (wal.read_bytes() if wal.exists() else b"")


def test_forgetting_a_conversation_removes_the_canary_everywhere(vault: Vault) -> None:
    _seed(vault)
    assert vault.store.scalar("SELECT COUNT(*) FROM facts WHERE statement LIKE ?", (f"%{CANARY}%",)) >= 1
    keep_before = _snapshot(vault, "conversation_id = ?", ("keep",))
    other_before = _snapshot(vault, "user_id = ?", ("other",))
    query_vector = vault.embedder.embed([f"My friend {CANARY} lives in Oslo."])[0]
    doomed = {h.object_id for h in vault.vectors.search(query_vector, 5)}

    dry = vault.forget(ForgetScope(user_id="default", conversation_id="secret", dry_run=True))
    assert dry.dry_run and dry.deleted_counts["events"] == 2
    assert vault.store.scalar("SELECT COUNT(*) FROM events WHERE conversation_id = 'secret'") == 3

    receipt = vault.forget(ForgetScope(user_id="default", conversation_id="secret"))
    assert receipt.deleted_counts["events"] == 2
    assert receipt.deleted_counts["facts"] >= 1 and receipt.deleted_counts["embeddings"] >= 2
    assert receipt.deleted_counts["subjects"] >= 1  # the friend's name is content too
    assert vault.receipt(receipt.receipt_id).deleted_counts == receipt.deleted_counts
    assert CANARY not in str(vault.receipt(receipt.receipt_id).scope)

    assert vault.store.scalar("SELECT COUNT(*) FROM events WHERE content LIKE ?", (f"%{CANARY}%",)) == 0
    assert vault.store.scalar("SELECT COUNT(*) FROM facts WHERE statement LIKE ?", (f"%{CANARY}%",)) == 0
    assert vault.store.scalar("SELECT COUNT(*) FROM subjects WHERE name LIKE ?", (f"%{CANARY}%",)) == 0
    for fts in ("events_fts", "facts_fts"):
        assert vault.store.scalar(f"SELECT COUNT(*) FROM {fts} WHERE {fts} MATCH ?", (CANARY,)) == 0
    remaining = {h.object_id for h in vault.vectors.search(query_vector, 10)}
    assert not (remaining & doomed & {int(r[0]) for r in vault.store.query("SELECT object_id FROM embeddings")})
    assert doomed - remaining, "the canary's own vectors are gone"
    raw = _raw_bytes(vault)
    assert CANARY.encode() not in raw and CANARY.lower().encode() not in raw and TAIL not in raw

    assert _snapshot(vault, "conversation_id = ?", ("keep",)) == keep_before
    assert _snapshot(vault, "user_id = ?", ("other",)) == other_before
    assert vault.store.scalar("PRAGMA integrity_check") == "ok"


def test_forgetting_a_user_never_touches_another_user(vault: Vault) -> None:
    _seed(vault)
    default_before = _snapshot(vault, "user_id = ?", ("default",))
    receipt = vault.forget(ForgetScope(user_id="other"))
    assert receipt.deleted_counts["events"] == 1
    assert vault.store.scalar("SELECT COUNT(*) FROM events WHERE user_id = 'other'") == 0
    assert vault.store.scalar("SELECT COUNT(*) FROM facts WHERE user_id = 'other'") == 0
    assert _snapshot(vault, "user_id = ?", ("default",)) == default_before


def test_forgetting_a_time_range(vault: Vault) -> None:
    _seed(vault)
    receipt = vault.forget(ForgetScope(user_id="default", since="2024-03-02", until="2024-03-03"))
    assert receipt.deleted_counts["events"] == 2
    left = [r[0] for r in vault.store.query("SELECT content FROM events WHERE user_id = 'default'")]
    assert all(CANARY in text for text in left)


def test_forget_purges_older_backups_and_says_so(vault: Vault, tmp_path: Path) -> None:
    _seed(vault)
    vault.paths.backups.mkdir(parents=True, exist_ok=True)
    backup = vault.paths.backups / "nightly.db"
    backup.write_bytes(b"SQLite format 3\x00 pretend backup containing " + CANARY.encode())
    receipt = vault.forget(ForgetScope(user_id="default", conversation_id="secret"))
    assert receipt.deleted_counts["backups"] == 1
    assert not backup.exists()


def test_bad_scopes_are_refused(vault: Vault) -> None:
    with pytest.raises(ValidationError):
        vault.forget(ForgetScope(user_id=""))
    with pytest.raises(ValidationError):
        vault.forget(ForgetScope(user_id="default", since="2024-05-01", until="2024-01-01"))
    with pytest.raises(NotFound):
        vault.forget(ForgetScope(user_id="default", document_id=999999))
    with pytest.raises(NotFound):
        vault.receipt(424242)


# -- projects ---------------------------------------------------------------------------------------------------------
def _project_rows(vault: Vault, project: str) -> dict[str, list[tuple[object, ...]]]:
    """Every row that belongs to ``project``, in full (every column), table by table, vectors included."""

    def q(sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        return [tuple(r) for r in vault.store.query(sql, params)]

    def ids(sql: str) -> str:
        return ",".join(str(r[0]) for r in q(sql, (project,))) or "NULL"

    events, facts = ids("SELECT id FROM events WHERE project_id = ?"), ids("SELECT id FROM facts WHERE project_id = ?")
    documents = ids("SELECT id FROM documents WHERE project_id = ?")
    sections = ",".join(str(r[0]) for r in q(f"SELECT id FROM sections WHERE document_id IN ({documents})")) or "NULL"
    spans = ",".join(str(r[0]) for r in q(f"SELECT id FROM spans WHERE document_id IN ({documents})")) or "NULL"
    episodes = ids("SELECT id FROM episodes WHERE project_id = ?")
    owned = ",".join(x for x in (events, facts, documents, sections, spans, episodes) if x != "NULL") or "NULL"
    return {
        "events": q("SELECT * FROM events WHERE project_id = ? ORDER BY id", (project,)),
        "facts": q("SELECT * FROM facts WHERE project_id = ? ORDER BY id", (project,)),
        "documents": q("SELECT * FROM documents WHERE project_id = ? ORDER BY id", (project,)),
        "sections": q(f"SELECT * FROM sections WHERE id IN ({sections}) ORDER BY id"),
        "spans": q(f"SELECT * FROM spans WHERE id IN ({spans}) ORDER BY id"),
        "episodes": q("SELECT * FROM episodes WHERE project_id = ? ORDER BY id", (project,)),
        "fact_subjects": q(f"SELECT * FROM fact_subjects WHERE fact_id IN ({facts}) ORDER BY 1, 2"),
        "event_subjects": q(f"SELECT * FROM event_subjects WHERE event_id IN ({events}) ORDER BY 1, 2"),
        "subjects": q(
            f"SELECT * FROM subjects WHERE id IN (SELECT subject_id FROM fact_subjects WHERE fact_id IN ({facts})) "
            "ORDER BY id"
        ),
        "objects": q(f"SELECT * FROM objects WHERE id IN ({owned}) ORDER BY id"),
        "embeddings": q(f"SELECT * FROM embeddings WHERE object_id IN ({owned}) ORDER BY 1, 2"),
        "vectors": q(f"SELECT rowid, embedding FROM {vault.vectors.table} WHERE rowid IN ({owned}) ORDER BY rowid"),
        "spans_fts": q(f"SELECT rowid, * FROM spans_fts WHERE rowid IN ({spans}) ORDER BY rowid"),
        "events_fts": q(f"SELECT rowid, * FROM events_fts WHERE rowid IN ({events}) ORDER BY rowid"),
    }


def test_forgetting_a_project_removes_its_rows_and_leaves_another_project_byte_identical(tmp_path: Path) -> None:
    from tests.engine.documents.support import open_vault as open_vault_with_parsers

    with open_vault_with_parsers(tmp_path / "v", start_workers=True) as vault:
        vault.events.ingest(
            [
                EventIn(conversation_id="a", project_id="alpha", content=f"My friend {CANARY} lives in Oslo."),
                EventIn(conversation_id="a", project_id="alpha", content="I work as a nurse."),
                EventIn(conversation_id="b", project_id="beta", content="I live in Hanoi."),
                EventIn(conversation_id="b", project_id="beta", content="I like jazz."),
            ]
        )
        alpha_doc = vault.documents.upload(
            name="alpha.md", text=f"# Alpha\n\nThe {CANARY} ledger lists every alpha shipment.\n", project_id="alpha"
        ).document_id
        beta_doc = vault.documents.upload(
            name="beta.md", text="# Beta\n\nThe lighthouse ledger lists every beta shipment.\n", project_id="beta"
        ).document_id
        assert vault.jobs.wait_idle(120)
        beta_before = _project_rows(vault, "beta")
        alpha_before = _project_rows(vault, "alpha")
        assert all(beta_before[t] for t in ("events", "facts", "documents", "sections", "spans", "vectors")), (
            beta_before
        )
        assert all(alpha_before[t] for t in ("events", "facts", "documents", "sections", "spans", "vectors"))

        receipt = vault.forget(ForgetScope(user_id="default", project_id="alpha"))

        counts = receipt.deleted_counts
        assert counts["events"] == len(alpha_before["events"]) == 2
        assert counts["facts"] == len(alpha_before["facts"]) >= 2
        assert (counts["documents"], counts["sections"], counts["chunks"]) == (
            1,
            len(alpha_before["sections"]),
            len(alpha_before["spans"]),
        )
        assert counts["episodes"] == len(alpha_before["episodes"]) >= 1 and counts["embeddings"] >= 4
        assert {t: rows for t, rows in _project_rows(vault, "alpha").items() if rows} == {}
        with pytest.raises(NotFound):
            vault.documents.get(alpha_doc)
        assert vault.store.scalar("SELECT COUNT(*) FROM spans_fts WHERE spans_fts MATCH ?", (CANARY,)) == 0
        assert _project_rows(vault, "beta") == beta_before
        assert vault.documents.get(beta_doc).info.status == "ready"
        raw = _raw_bytes(vault)
        assert CANARY.encode() not in raw and TAIL not in raw


# -- what a conversation forget reports ----------------------------------------------------------------------------
def test_a_conversation_forget_counts_its_conflict_and_episode_and_settles_the_other_side(vault: Vault) -> None:
    kept = vault.events.extract("I work as a nurse.", learn=True, conversation_id="keep").fact_ids[0]
    (home,) = vault.events.extract("I live in Hanoi.", learn=True, conversation_id="keep").fact_ids
    first = vault.events.extract("I like jazz.", learn=True, conversation_id="secret").fact_ids[0]
    # a conflict inside the scope, and one with a kept fact
    clash = vault.events.extract("I don't like jazz.", learn=True, conversation_id="secret")
    rome = vault.events.extract("I live in Rome.", learn=True, conversation_id="secret")
    assert [d["decision"] for d in clash.decisions] == [d["decision"] for d in rome.decisions] == ["CONFLICT"]
    assert vault.conflicts.count() == 2 and vault.facts.get(home).status == "contested"
    assert vault.conversations.close_episodes("secret") == 1
    assert vault.jobs.wait_idle(120)
    secret_episodes = vault.conversations.episodes("secret")
    assert len(secret_episodes) == 1 and secret_episodes[0].summary
    keep_episodes = [e.id for e in vault.conversations.episodes("keep")]

    dry = vault.forget(ForgetScope(conversation_id="secret", dry_run=True))
    receipt = vault.forget(ForgetScope(conversation_id="secret"))

    assert dry.deleted_counts == receipt.deleted_counts
    counts = receipt.deleted_counts
    assert (counts["events"], counts["facts"], counts["conflicts"], counts["episodes"]) == (3, 3, 2, 1)
    assert counts["embeddings"] >= 3 + 3 + 1  # the turns, the facts and the episode summary
    assert vault.conflicts.count() == 0
    assert vault.store.scalar("SELECT COUNT(*) FROM conflicts") == 0
    with pytest.raises(NotFound):
        vault.facts.get(first)
    # the kept side of the cross-conversation conflict is contested by nothing now
    settled = vault.facts.get(home)
    assert (settled.status, settled.standing) == ("active", "fact") and settled.tier != "cold"
    assert vault.facts.get(kept).status == "active"
    assert vault.conversations.episodes("secret") == []
    assert [e.id for e in vault.conversations.episodes("keep")] == keep_episodes


def test_a_whole_user_forget_counts_understandings(vault: Vault) -> None:
    _seed(vault)

    def add_understanding(tx: Any) -> int:
        uid = tx.new_id("understanding")
        tx.execute(
            "INSERT INTO understandings(id, user_id, kind, title, content, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (uid, "default", "single_subject", CANARY, f"{CANARY} is a friend from Oslo who climbs.", tx.now),
        )
        return int(uid)

    understanding = vault.store.write(add_understanding)
    other_before = _snapshot(vault, "user_id = ?", ("other",))
    receipt = vault.forget(ForgetScope(user_id="default"))
    assert receipt.deleted_counts["understandings"] == 1
    assert vault.store.scalar("SELECT COUNT(*) FROM understandings") == 0
    assert vault.store.scalar("SELECT COUNT(*) FROM objects WHERE id = ?", (understanding,)) == 0
    assert _snapshot(vault, "user_id = ?", ("other",)) == other_before
    assert CANARY.encode() not in _raw_bytes(vault)


# -- backups ----------------------------------------------------------------------------------------------------------
def test_the_receipt_states_the_backup_policy(vault: Vault) -> None:
    _seed(vault)
    first, second = vault.backups.now(), vault.backups.now()
    assert len(vault.backups()) == 2 and first.path != second.path

    dry = vault.forget(ForgetScope(conversation_id="secret", dry_run=True))
    assert dry.deleted_counts["backups"] == 2 and len(vault.backups()) == 2
    assert dry.notes == (
        "Forgetting deletes every backup (2 files): a backup is a whole copy of the vault and cannot be scrubbed in "
        "part.",
    )

    receipt = vault.forget(ForgetScope(conversation_id="secret"))
    (fresh,) = vault.backups()  # never left without a backup: a fresh one of the vault as it now is
    assert receipt.deleted_counts["backups"] == 2 and fresh.created_at >= receipt.created_at
    expected = (
        "Every backup was deleted (2 files): a backup is a whole copy of the vault and cannot be scrubbed in part, so "
        "none made before this forget is kept.",
        f"A fresh backup of the vault as it is now was made: backups/{Path(fresh.path).name}.",
    )
    assert receipt.notes == expected
    assert vault.receipt(receipt.receipt_id).notes == expected, "read back, the receipt says the same"
    raw = Path(fresh.path).read_bytes()
    assert CANARY.encode() not in raw and TAIL not in raw  # the fresh backup holds nothing forgotten
    assert b"nurse" in raw  # and what was kept

    kept = vault.forget(ForgetScope(conversation_id="keep", purge_backups=False))
    assert kept.deleted_counts["backups"] == 0 and len(vault.backups()) == 1
    assert kept.notes == ("Backups were kept: those made before this forget still hold what it removed.",)


def _lives_in(vault: Vault) -> list[tuple[str, str]]:
    return [
        (str(r[0]), str(r[1]))
        for r in vault.store.query("SELECT object_text, status FROM facts WHERE predicate = 'lives_in' ORDER BY id")
    ]


def test_forgetting_what_replaced_a_fact_gives_the_slot_its_truth_back(vault: Vault) -> None:
    vault.events.ingest(
        [
            EventIn(conversation_id="home", content="I live in Hanoi.", occurred_at="2024-03-01"),
            EventIn(conversation_id="move", content="I moved to Rome.", occurred_at="2024-04-01"),
        ]
    )
    assert vault.jobs.wait_idle(120)
    assert _lives_in(vault) == [("Hanoi", "superseded"), ("Rome", "active")]

    vault.forget(ForgetScope(user_id="default", conversation_id="move"))

    assert _lives_in(vault) == [("Hanoi", "active")]  # as if the move had never been mentioned
    truth = vault.store.query("SELECT superseded_at, superseded_by, tier FROM facts WHERE predicate = 'lives_in'")
    assert truth[0][0] is None and truth[0][1] is None and truth[0][2] != "cold"


def test_forgetting_a_fact_in_the_middle_of_a_chain_links_its_neighbours(vault: Vault) -> None:
    vault.events.ingest(
        [
            EventIn(conversation_id="home", content="I live in Hanoi.", occurred_at="2024-03-01"),
            EventIn(conversation_id="move", content="I moved to Rome.", occurred_at="2024-04-01"),
            EventIn(conversation_id="again", content="I moved to Paris.", occurred_at="2024-05-01"),
        ]
    )
    assert vault.jobs.wait_idle(120)
    assert _lives_in(vault) == [("Hanoi", "superseded"), ("Rome", "superseded"), ("Paris", "active")]

    vault.forget(ForgetScope(user_id="default", conversation_id="move"))

    # Paris (said in another conversation) stays, and stays the one truth
    assert _lives_in(vault) == [("Hanoi", "superseded"), ("Paris", "active")]
    hanoi_next, paris_id = vault.store.query(
        "SELECT (SELECT superseded_by FROM facts WHERE predicate = 'lives_in' AND object_text = 'Hanoi'), "
        "(SELECT id FROM facts WHERE predicate = 'lives_in' AND object_text = 'Paris')"
    )[0]
    assert hanoi_next == paris_id  # the history chain is unbroken
