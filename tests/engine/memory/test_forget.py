"""Forget: scoped, complete down to the bytes on disk, receipted; other scopes untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Vault
from engine.errors import NotFound, ValidationError
from engine.events import EventIn
from engine.forget import ForgetScope

CANARY = "Quorvanthe"  # a name that occurs nowhere else
TAIL = CANARY.lower()[-6:].encode()


def _seed(vault: Vault) -> None:
    vault.ingest_events(
        [
            EventIn(conversation_id="secret", content=f"My friend {CANARY} lives in Oslo.", occurred_at="2024-03-01"),
            EventIn(conversation_id="secret", content=f"{CANARY} loves climbing.", occurred_at="2024-03-01T10:05:00Z"),
            EventIn(conversation_id="keep", content="I work as a nurse.", occurred_at="2024-03-02"),
            EventIn(conversation_id="keep", content="I live in Hanoi.", occurred_at="2024-03-02T11:00:00Z"),
            EventIn(conversation_id="secret", content="I like green tea.", occurred_at="2024-03-03", user_id="other"),
        ]
    )
    assert vault.wait_idle(20)


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
