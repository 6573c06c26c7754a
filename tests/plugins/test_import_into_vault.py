"""Transcripts into a real vault: every built-in format end to end, re-imports, and turns the vault refuses.

Each test writes a sample file (``importer_samples``), imports it through ``vault.conversations.import_file`` into a
SQLite vault in ``tmp_path`` opened with the app's plugin manager, and reads the stored events back.  Workers are off:
what is checked is what ingest stored, not what enrichment later learns from it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.plugins import build_plugin_manager
from engine import Settings, Vault
from engine.events import MAX_CONTENT_CHARS, MAX_ID_CHARS, Event
from engine.plugin_api import ImportedConversation
from plugins.importers import builtin_importers, read_all
from tests.plugins import importer_samples as samples
from tests.plugins.importer_samples import at

#: (role, author, occurred_at) of a turn, keyed by (conversation_id, external_id); ``None`` time = "import time".
Expected = dict[tuple[str, str], tuple[str, str | None, datetime | None]]


@contextmanager
def open_vault(root: Path) -> Iterator[Vault]:
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    vault = Vault.open(
        root, settings=settings, plugins=build_plugin_manager(load_entry_points=False), start_workers=False
    )
    try:
        yield vault
    finally:
        vault.close()


def stored(vault: Vault) -> list[Event]:
    ids = [int(r[0]) for r in vault.store.query("SELECT id FROM events ORDER BY id")]
    return [vault.conversations.event(i) for i in ids]


def event_rows(vault: Vault) -> list[tuple[Any, ...]]:
    """Every stored column of every event except when it was ingested (for before/after comparisons)."""
    return [tuple(r) for r in vault.store.query("SELECT * FROM events ORDER BY id")]


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


# -- one sample file per format, with what a few of its turns must keep ---------------------------------------------
def chatgpt(tmp_path: Path) -> tuple[Path, Expected]:
    path = samples.write_json(tmp_path / "conversations.json", samples.chatgpt_conversations())
    return path, {
        ("chatgpt:conv-1", "m-u1"): ("user", None, at(10)),
        ("chatgpt:conv-1", "m-a1"): ("assistant", None, at(12)),
        ("chatgpt:conv-1", "m-out"): ("tool", "python", at(22)),
        ("chatgpt:conv-2", "m-a-new"): ("assistant", None, at(102)),
    }


def claude(tmp_path: Path) -> tuple[Path, Expected]:
    path = samples.write_json(tmp_path / "claude.json", samples.claude_conversations())
    return path, {
        ("claude:c-1", "c1-m1"): ("user", None, utc(2024, 6, 1, 8, 0, 1) + timedelta(microseconds=250000)),
        ("claude:c-1", "c1-m2"): ("assistant", None, utc(2024, 6, 1, 8, 0, 2)),
        ("claude:c-2", "c2-m1"): ("user", None, utc(2023, 1, 2, 3, 4, 5)),
        ("claude:c-2", "c2-m2"): ("assistant", None, None),  # no time in the export: imported at import time
    }


def jsonl(tmp_path: Path) -> tuple[Path, Expected]:
    path = tmp_path / "chat.jsonl"
    path.write_text(samples.JSONL_SINGLE, encoding="utf-8")
    return path, {
        ("jsonl:chat", "a"): ("user", None, utc(2024, 5, 1, 10, 22)),
        ("jsonl:chat", "line:3"): ("assistant", "bot", utc(2024, 5, 1, 10, 22, 5)),
        ("jsonl:chat", "line:5"): ("tool", None, utc(2024, 5, 1, 10, 22, 30)),
        ("jsonl:chat", "line:7"): ("user", None, utc(2024, 5, 1, 10, 24)),
    }


def text_log(tmp_path: Path) -> tuple[Path, Expected]:
    path = tmp_path / "friday.txt"
    path.write_text(samples.TEXT_BRACKETS, encoding="utf-8")
    return path, {
        ("text:friday", "line:1"): ("user", "Alice", utc(2024, 5, 1, 10, 22)),
        ("text:friday", "line:2"): ("user", "Bob", utc(2024, 5, 1, 10, 23, 15)),
        ("text:friday", "line:6"): ("user", "Alice", utc(2024, 5, 1, 10, 25)),
    }


def locomo(tmp_path: Path) -> tuple[Path, Expected]:
    path = samples.write_json(tmp_path / "26.json", samples.locomo_conversation())
    return path, {
        ("locomo:26", "D1:1"): ("user", "Ana", utc(2023, 5, 28, 23, 47)),
        ("locomo:26", "D1:2"): ("user", "Ben", utc(2023, 5, 28, 23, 47, 1)),
        ("locomo:26", "D2:3"): ("user", "Ben", utc(2023, 6, 3, 9, 5, 2)),
        ("locomo:26", "D10:1"): ("user", "Ana", utc(2023, 7, 1, 12, 30)),
    }


FORMATS: dict[str, Callable[[Path], tuple[Path, Expected]]] = {
    "chatgpt": chatgpt,
    "claude": claude,
    "jsonl": jsonl,
    "text": text_log,
    "locomo": locomo,
}


def read_turns(path: Path) -> list[ImportedConversation]:
    importer = next(i for i in builtin_importers() if i.sniff(path, path.read_bytes()[:65536]))
    good, bad = read_all(importer, path)
    assert bad == []
    return good


@pytest.mark.parametrize("name", list(FORMATS))
def test_each_format_imports_with_original_times_authors_roles_and_source(tmp_path: Path, name: str) -> None:
    path, expected = FORMATS[name](tmp_path)
    conversations = read_turns(path)
    turns = {(c.conversation_id, t.external_id): t for c in conversations for t in c.turns}
    with open_vault(tmp_path / "v") as vault:
        started = datetime.now(UTC)
        summary = vault.conversations.import_summary(path)
        finished = datetime.now(UTC)
        events = stored(vault)
        listed = {
            c.conversation_id: [e.external_id for e in vault.conversations.events(c.conversation_id)]
            for c in conversations
        }

    assert summary.importer == name and summary.errors == ()
    assert summary.conversations == len(conversations) and summary.events_added == len(turns) == len(events)
    assert summary.duplicates == 0
    assert {e.source for e in events} == {f"import:{name}"}
    by_key = {(e.conversation_id, e.external_id): e for e in events}
    assert set(by_key) == set(turns)
    for key, turn in turns.items():  # every turn as the file has it
        event = by_key[key]
        assert (event.role, event.author, event.content, event.type) == (
            turn.role,
            turn.author,
            turn.content,
            turn.type,
        )
        if turn.occurred_at is not None:
            assert event.occurred_at == turn.occurred_at, key
        else:
            assert started - timedelta(seconds=1) <= event.occurred_at <= finished + timedelta(seconds=1), key
    for key, (role, author, when) in expected.items():  # and what the file says, spelled out
        event = by_key[key]
        assert (event.role, event.author) == (role, author), key
        if when is not None:
            assert event.occurred_at == when, key
    # each conversation reads back in time order, turns of the same time in the file's order
    assert listed == {
        c.conversation_id: [t.external_id for t in sorted(c.turns, key=lambda t: t.occurred_at or finished)]
        for c in conversations
    }


@pytest.mark.parametrize("name", list(FORMATS))
def test_re_importing_the_same_file_adds_nothing(tmp_path: Path, name: str) -> None:
    path, _ = FORMATS[name](tmp_path)
    with open_vault(tmp_path / "v") as vault:
        first = vault.conversations.import_summary(path)
        before = event_rows(vault)
        jobs = vault.store.scalar("SELECT COUNT(*) FROM jobs")
        again = vault.conversations.import_summary(path)
        assert (again.events_added, again.duplicates, again.errors) == (0, first.events_added, ())
        assert event_rows(vault) == before
        assert vault.store.scalar("SELECT COUNT(*) FROM jobs") == jobs, "no second enrichment is queued"
    # and reopened, the vault still finds them duplicates
    with open_vault(tmp_path / "v") as vault:
        assert vault.conversations.import_summary(path).events_added == 0
        assert event_rows(vault) == before


# -- turns the file reads fine but the vault refuses ----------------------------------------------------------------
def test_an_oversized_turn_rejects_its_conversation_only_and_names_its_line(tmp_path: Path) -> None:
    lines = [
        {"conversation_id": "first", "role": "user", "content": "I live in Porto.", "time": "2024-05-01T10:00:00Z"},
        {
            "conversation_id": "first",
            "role": "assistant",
            "content": "x" * (MAX_CONTENT_CHARS + 1),
            "time": "2024-05-01T10:00:05Z",
        },
        {"conversation_id": "second", "role": "user", "content": "I work as a nurse.", "time": 1714557600},
        {"conversation_id": "second", "role": "assistant", "content": "Noted.", "time": 1714557605},
    ]
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    with open_vault(tmp_path / "v") as vault:
        steps = list(vault.conversations.import_file(path))
        events = stored(vault)

    last = steps[-1]
    assert (last.conversations_done, last.conversations_total) == (2, 2), "the file was read to its end"
    (error,) = last.errors
    assert error.startswith("big.jsonl line 2 (conversation first): 'content' is ")
    assert f"the limit is {MAX_CONTENT_CHARS}" in error and "'first'" in error and "events[" not in error
    assert last.events_added == 2
    assert {e.conversation_id for e in events} == {"second"}, "nothing of the refused conversation is stored"
    assert [e.content for e in events] == ["I work as a nurse.", "Noted."]


def test_an_overlong_author_is_named_by_record_and_the_next_conversation_still_imports(tmp_path: Path) -> None:
    data = samples.chatgpt_conversations()
    node = data[0]["mapping"]["out"]["message"]
    node["author"]["name"] = "p" * (MAX_ID_CHARS + 1)
    path = samples.write_json(tmp_path / "conversations.json", data)
    with open_vault(tmp_path / "v") as vault:
        summary = vault.conversations.import_summary(path)
        conversations = {e.conversation_id for e in stored(vault)}

    (error,) = summary.errors
    assert error.startswith("conversations.json: conversation[0] (id conv-1), message[")
    assert "(node out): 'author' is longer than 256 characters" in error
    assert "'Lisbon trip'" in error and "events[" not in error
    assert conversations == {"chatgpt:conv-2"} and summary.events_added == 2


def test_every_turn_knows_where_it_was_read(tmp_path: Path) -> None:
    for name, make in FORMATS.items():
        path, _ = make(tmp_path)
        for conversation in read_turns(path):
            for turn in conversation.turns:
                assert turn.location.startswith(path.name), (name, turn)
        if name in ("jsonl", "text"):
            assert all(" line " in t.location for c in read_turns(path) for t in c.turns), name
