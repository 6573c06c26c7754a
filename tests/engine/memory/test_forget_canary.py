"""Forget leaves nothing behind, for every scope: a canary name planted in everything a scope holds — turns, facts,
subjects, episodes, a document and its sections, spans and summaries, a conversation's title, and for a whole user
their collections and quarantined files — is gone afterwards from every row of every table and from the raw bytes
of every file in the vault folder (database, WAL, backups, logs, work files), while what lies outside the scope is
untouched.  Backups deleted by the forget are replaced by a fresh one, which holds nothing forgotten either.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.logs import PrivateRotatingFileHandler
from app.plugins import build_plugin_manager
from engine import Settings, Vault
from engine.conversations import set_title
from engine.events import EventIn
from engine.forget import ForgetScope
from engine.recall.types import RecallRequest
from tests.plugins.parser_pdf import garbage_with_header

CANARY = "Zelvorquin"  # occurs nowhere else
NEEDLES = (CANARY.encode(), CANARY.lower().encode(), CANARY.upper().encode(), CANARY.lower()[-6:].encode())
SETTINGS = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    """A vault whose log file is in its folder, as the app runs it (so the logs are checked too)."""
    v = Vault.open(tmp_path / "vault", settings=SETTINGS, plugins=build_plugin_manager(load_entry_points=False))
    v.paths.logs.mkdir(mode=0o700, exist_ok=True)
    handler = PrivateRotatingFileHandler(v.paths.logs / "cairn.log", maxBytes=5_000_000, backupCount=1)
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    before = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield v
    finally:
        root.removeHandler(handler)
        root.setLevel(before)
        handler.close()
        v.close()


def turns(conversation: str, *, user: str = "default", project: str | None = None, day: str = "2024-03-01") -> list:
    return [
        EventIn(
            conversation_id=conversation,
            user_id=user,
            project_id=project,
            content=f"My friend {CANARY} lives in Oslo.",
            occurred_at=f"{day}T10:00:00Z",
        ),
        EventIn(
            conversation_id=conversation,
            user_id=user,
            project_id=project,
            content=f"{CANARY} loves climbing and teaches chess.",
            occurred_at=f"{day}T10:05:00Z",
        ),
    ]


def kept_turns() -> list[EventIn]:
    return [
        EventIn(conversation_id="keep", content="I work as a nurse.", occurred_at="2024-05-02T09:00:00Z"),
        EventIn(conversation_id="keep", content="I live in Hanoi.", occurred_at="2024-05-02T09:05:00Z"),
        EventIn(conversation_id="theirs", user_id="third", content="I like green tea.", occurred_at="2024-05-03"),
    ]


def note(title: str) -> str:
    return f"# {title}\n\n## Climbing\n\n{CANARY} leads the Tuesday climbing group at the old quarry.\n"


def seed(vault: Vault, scope: str) -> ForgetScope:
    """Plant the canary in everything the scope holds, plus data outside it; return the scope."""
    vault.events.ingest(kept_turns())
    vault.documents.upload(text="# Garden\n\nThe tomatoes need water daily.", name="garden.md")
    if scope == "conversation":
        vault.events.ingest(turns("secret"))
        vault.store.write(lambda tx: set_title(tx, "default", "secret", f"Chat about {CANARY}", "import"))
        chosen = ForgetScope(conversation_id="secret")
    elif scope == "project":
        vault.events.ingest(turns("p-chat", project="p-secret"))
        vault.documents.upload(text=note(f"{CANARY} notes"), name=f"{CANARY}.md", project_id="p-secret")
        chosen = ForgetScope(project_id="p-secret")
    elif scope == "document":
        uploaded = vault.documents.upload(text=note(f"{CANARY} notes"), name=f"{CANARY}-notes.md")
        garden = vault.collections.create("Garden and friends", description="plans")
        vault.collections.add(garden.id, [uploaded.document_id])
        chosen = ForgetScope(document_id=uploaded.document_id)
    elif scope == "time range":
        vault.events.ingest(turns("old", day="2023-01-10"))
        jotted = vault.workspace.remember(
            f"{CANARY} leads the climbing group.", [f"{CANARY} Climbing Club"], observed_at="2023-01-11T09:00:00Z"
        ).observation
        vault.workspace.create_understanding(
            f"{CANARY} runs the club.", summary="club", subject_names=["Climbing"], sources=[jotted.id]
        )
        chosen = ForgetScope(since="2023-01-01", until="2023-02-01")
    else:  # a whole user
        vault.events.ingest(turns("theirs", user="other"))
        vault.events.ingest([EventIn(conversation_id="more", user_id="other", content="I live in Quito.")])
        vault.store.write(lambda tx: set_title(tx, "other", "theirs", f"Chat about {CANARY}", "import"))
        uploaded = vault.documents.upload(text=note(f"{CANARY} notes"), name=f"{CANARY}.md", user_id="other")
        shelf = vault.collections.create(f"{CANARY} and friends", description=f"all about {CANARY}", user_id="other")
        vault.collections.add(shelf.id, [uploaded.document_id])
        refused = vault.documents.upload(data=garbage_with_header(), name=f"{CANARY}-scan.pdf", user_id="other")
        assert refused.status == "quarantined"
        jotted = vault.workspace.remember(
            f"{CANARY} teaches chess.", [f"{CANARY}"], session_id=f"{CANARY}-session", user_id="other"
        ).observation
        vault.workspace.create_understanding(
            f"{CANARY} is a chess teacher.", summary=f"{CANARY}", subject_names=[CANARY], user_id="other"
        )
        vault.workspace.update_understanding(
            vault.workspace.get_understandings([CANARY], user_id="other")[0].id,
            new_content=f"{CANARY} teaches chess on Tuesdays.",
            new_summary=f"{CANARY} revised",
            sources=[jotted.id],
        )
        vault.store.write(
            lambda tx: tx.execute(
                "INSERT INTO workspace_sessions(user_id, session_id, token, last_seen_at) VALUES ('other', ?, '', 0)",
                (f"{CANARY}-session",),
            )
        )
        chosen = ForgetScope(user_id="other")
    assert vault.jobs.wait_idle(120)
    vault.backups.now()  # holds the canary: the forget must delete it and make a fresh one
    return chosen


def rows_with_canary(vault: Vault) -> dict[str, int]:
    """Tables (every one in the file, shadow tables of FTS and vec0 included) with rows that mention the canary."""
    found: dict[str, int] = {}
    tables = [str(r[0]) for r in vault.store.query("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        if table.startswith("sqlite_"):
            continue
        try:
            rows = vault.store.query(f'SELECT * FROM "{table}"')
        except Exception:  # a virtual table that cannot be scanned directly: its shadow tables are
            continue
        hits = sum(1 for row in rows if any(_mentions(value) for value in row))
        if hits:
            found[table] = hits
    return found


def _mentions(value: Any) -> bool:
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
    elif isinstance(value, str):
        raw = value.encode()
    else:
        return False
    return any(needle in raw for needle in NEEDLES)


def files_with_canary(root: Path) -> list[str]:
    out = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            data = path.read_bytes()
            if any(needle in data for needle in NEEDLES):
                out.append(str(path.relative_to(root)))
    return out


def outside(vault: Vault) -> list[tuple[Any, ...]]:
    """What lies outside every scope: the kept turns and facts, the third user's, the garden document."""
    return [
        tuple(r)
        for r in vault.store.query(
            "SELECT id, content, status FROM events WHERE conversation_id IN ('keep', 'theirs') AND user_id != 'other' "
            "UNION ALL SELECT id, statement, status FROM facts WHERE user_id = 'third' OR conversation_id = 'keep' "
            "UNION ALL SELECT id, name, status FROM documents WHERE name = 'garden.md' ORDER BY 1"
        )
    ]


@pytest.mark.parametrize("scope", ["conversation", "project", "document", "time range", "user"])
def test_forget_leaves_no_trace_of_the_canary_in_any_table_or_file(vault: Vault, scope: str) -> None:
    chosen = seed(vault, scope)
    assert rows_with_canary(vault), "the canary was planted"
    kept = outside(vault)
    assert len(kept) >= 5

    receipt = vault.forget(chosen)
    assert not receipt.dry_run and sum(receipt.deleted_counts.values()) > 0
    if scope == "user":
        assert receipt.deleted_counts["collections"] == 1 and receipt.deleted_counts["quarantine"] == 1
        assert vault.collections(user_id="other") == []
    (fresh,) = vault.backups()
    assert any("fresh backup" in n and Path(fresh.path).name in n for n in receipt.notes)

    assert rows_with_canary(vault) == {}
    vault.store.scalar("PRAGMA wal_checkpoint(TRUNCATE)")
    assert files_with_canary(vault.paths.root) == []
    answer = vault.recall(RecallRequest(conversation_id="asker", query=f"Who is {CANARY}? Where does {CANARY} live?"))
    assert CANARY not in answer.llm_context.text
    assert outside(vault) == kept
    assert vault.store.scalar("PRAGMA integrity_check") == "ok"
