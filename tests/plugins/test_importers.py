"""The built-in transcript importers: parsing, sniffing, error locations, isolating bad records."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import plugins.importers
from engine.plugin_api import (
    ImportedConversation,
    ImportedTurn,
    Importer,
    ImportFormatError,
    new_plugin_manager,
)
from plugins.importers import (
    ChatGPTImporter,
    ClaudeImporter,
    JsonlImporter,
    LocomoImporter,
    TextLogImporter,
    builtin_importers,
    detect,
    read_all,
)
from plugins.importers.reading import read_head
from tests.plugins import importer_samples as samples
from tests.plugins.importer_samples import T0, at

Damage = Callable[[dict[str, Any]], object]
Row = tuple[str, str | None, str, str | None, datetime | None]


def rows(conversation: ImportedConversation) -> list[Row]:
    return [(t.role, t.author, t.content, t.external_id, t.occurred_at) for t in conversation.turns]


def only(importer: Importer, path: Path) -> list[ImportedConversation]:
    good, bad = read_all(importer, path)
    assert bad == []
    return good


def error_of(importer: Importer, path: Path) -> ImportFormatError:
    good, bad = read_all(importer, path)
    assert good == [] and len(bad) == 1
    return bad[0]


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, micro: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)


# -- ChatGPT ---------------------------------------------------------------------------------------
def test_chatgpt_follows_the_current_branch_and_keeps_text(tmp_path: Path) -> None:
    path = samples.write_json(tmp_path / "conversations.json", samples.chatgpt_conversations())
    first, second = only(ChatGPTImporter(), path)

    assert (first.conversation_id, first.title) == ("chatgpt:conv-1", "Lisbon trip")
    assert rows(first) == [
        ("user", None, "Plan a trip to Lisbon", "m-u1", at(10)),
        ("assistant", None, "Day 1: Alfama.\nDay 2: Belém.", "m-a1", at(12)),
        ("user", None, "Is this it?", "m-u2", at(20)),
        ("assistant", None, "print(1 + 1)", "m-call", at(21)),
        ("tool", "python", "2", "m-out", at(22)),
        ("assistant", None, "Yes, that is the tram.", "m-a2", at(23)),
    ]
    assert first.turns[0].occurred_at == T0 + timedelta(seconds=10)
    assert first.turns[1].metadata == {"model": "gpt-4o"}
    assert first.turns[2].metadata == {
        "content_type": "multimodal_text",
        "skipped_parts": "image_asset_pointer",
    }
    assert first.turns[3].type == "tool_call"
    assert first.turns[3].metadata["recipient"] == "python"
    assert [t.type for t in first.turns if t.external_id != "m-call"] == ["message"] * 5

    # no current_node: the newest child wins
    assert second.conversation_id == "chatgpt:conv-2"
    assert rows(second) == [
        ("user", None, "What is 2+2?", "m-q", at(100)),
        ("assistant", None, "4", "m-a-new", at(102)),
    ]


def test_chatgpt_bad_conversation_fails_alone(tmp_path: Path) -> None:
    data = samples.chatgpt_conversations()
    bad = data[0]["mapping"]["u2"]["message"]
    bad["author"]["role"] = "robot"
    path = samples.write_json(tmp_path / "conversations.json", data)

    good, errors = read_all(ChatGPTImporter(), path)

    assert [c.conversation_id for c in good] == ["chatgpt:conv-2"]
    assert len(errors) == 1
    message = str(errors[0])
    assert "conversations.json: conversation[0] (id conv-1), message[" in message
    assert "(node u2)" in message and "'robot'" in message
    with pytest.raises(ImportFormatError, match="robot"):
        list(ChatGPTImporter().read(path))


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda c: c.pop("mapping"), "missing key 'mapping'"),
        (
            lambda c: c.update(current_node="nowhere"),
            "node nowhere (named by current_node) is missing",
        ),
        (
            lambda c: c["mapping"]["a2"]["message"].update(create_time="noon"),
            "'create_time' must be",
        ),
        (lambda c: c["mapping"]["a2"]["message"].update(create_time=1e300), "bad timestamp"),
        (lambda c: c["mapping"]["a2"]["message"]["content"].update(parts="x"), "'content.parts'"),
        (lambda c: c["mapping"]["root"].update(parent="a2"), "cycle"),
    ],
)
def test_chatgpt_malformed_records_are_named(tmp_path: Path, damage: Damage, expected: str) -> None:
    data = samples.chatgpt_conversations()[:1]
    damage(data[0])
    error = error_of(ChatGPTImporter(), samples.write_json(tmp_path / "c.json", data))
    assert error.location.startswith("c.json: conversation[0]")
    assert expected in str(error)


def test_json_files_that_are_not_json_fail_as_a_whole(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text('[{"title": "x",\n "mapping": {]', encoding="utf-8")
    error = error_of(ChatGPTImporter(), path)
    assert str(error).startswith("conversations.json: invalid JSON at line 2 column")
    path.write_text('{"not": "a list"}', encoding="utf-8")
    assert "expected a list of conversations, found an object" in str(error_of(ClaudeImporter(), path))


# -- Claude ----------------------------------------------------------------------------------------
def test_claude_export(tmp_path: Path) -> None:
    path = samples.write_json(tmp_path / "conversations.json", samples.claude_conversations())
    first, second = only(ClaudeImporter(), path)

    assert (first.conversation_id, first.title) == ("claude:c-1", "Garden")
    assert rows(first) == [
        ("user", None, "Which tomatoes grow in shade?", "c1-m1", utc(2024, 6, 1, 8, 0, 1, 250000)),
        (
            "assistant",
            None,
            "Let me check.\nCherry tomatoes cope best.",
            "c1-m2",
            utc(2024, 6, 1, 8, 0, 2),
        ),
    ]
    assert first.turns[0].metadata == {"attachments": "garden.pdf"}
    assert first.turns[1].metadata == {"skipped_parts": "tool_use, tool_result"}
    assert (second.conversation_id, second.title) == ("claude:c-2", "")
    assert rows(second) == [
        ("user", None, "hi", "c2-m1", utc(2023, 1, 2, 3, 4, 5)),
        ("assistant", None, "Hello!", "c2-m2", None),
    ]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("sender", "robot", "sender 'robot' is not one of human, assistant"),
        ("created_at", "yesterday", "bad timestamp in 'created_at' ('yesterday')"),
        ("uuid", 7, "'uuid' must be a string, not a number"),
        ("content", [{"type": "text"}], "content[0]: missing key 'text'"),
    ],
)
def test_claude_malformed_message_fails_its_conversation(
    tmp_path: Path, field: str, value: object, expected: str
) -> None:
    data = samples.claude_conversations()
    data[1]["chat_messages"][1][field] = value
    good, errors = read_all(ClaudeImporter(), samples.write_json(tmp_path / "x.json", data))
    assert [c.conversation_id for c in good] == ["claude:c-1"]
    assert len(errors) == 1
    assert errors[0].location.startswith("x.json: conversation[1] (uuid c-2), message[1]")
    assert expected in str(errors[0])


# -- JSONL -----------------------------------------------------------------------------------------
def test_jsonl_single_conversation(tmp_path: Path) -> None:
    path = tmp_path / "chat log.jsonl"
    path.write_text(samples.JSONL_SINGLE, encoding="utf-8")
    (conversation,) = only(JsonlImporter(), path)
    assert (conversation.conversation_id, conversation.title) == ("jsonl:chat log", "chat log")
    assert rows(conversation) == [
        ("user", None, "I moved to Porto.", "a", utc(2024, 5, 1, 10, 22)),
        ("assistant", "bot", "Nice!", "line:3", utc(2024, 5, 1, 10, 22, 5)),
        ("tool", None, "ok", "line:5", utc(2024, 5, 1, 10, 22, 30)),
        ("system", None, "naive", "line:6", utc(2024, 5, 1, 10, 23)),
        ("user", None, "offset", "line:7", utc(2024, 5, 1, 10, 24)),
        ("user", None, "text epoch", "line:8", utc(2024, 5, 1, 10, 22, 5)),
    ]


def test_jsonl_groups_conversations_and_isolates_a_bad_one(tmp_path: Path) -> None:
    lines = [
        {"conversation_id": "x", "role": "user", "content": "x1", "occurred_at": 1714557600},
        {"conversation_id": 42, "role": "user", "content": "y1", "id": 1, "occurred_at": 1714557601},
        {"conversation_id": "x", "role": "assistant", "content": "x2", "occurred_at": 1714557602},
        {"conversation_id": 42, "role": "robot", "content": "y2", "occurred_at": 1714557603},
        {"role": "user", "content": "z1", "occurred_at": 1714557604},
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")

    good, errors = read_all(JsonlImporter(), path)

    assert [(c.conversation_id, [t.content for t in c.turns]) for c in good] == [
        ("x", ["x1", "x2"]),
        ("jsonl:mixed", ["z1"]),
    ]
    assert [t.external_id for t in good[0].turns] == ["line:1", "line:3"]
    assert [str(e) for e in errors] == [
        "mixed.jsonl line 4 (conversation 42): role 'robot' is not one of user, assistant, system, tool"
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"role": "user", "content": ', "line 2: invalid JSON at column"),
        ('["user", "hi"]', "line 2: expected a JSON object, found a list"),
        ('{"role": "user"}', "line 2: missing key 'content'"),
        ('{"role": "user", "content": 5}', "line 2: 'content' must be a string, not a number"),
        ('{"role": "user", "content": "x", "time": "soon"}', "line 2: bad timestamp in 'time'"),
        ('{"role": "user", "content": "x", "occurred_at": "soon"}', "line 2: bad timestamp in 'occurred_at'"),
        ('{"role": "user", "content": "x"}', "line 2: no time: give each turn 'occurred_at'"),
        ('{"role": "user", "content": "x", "id": "a", "time": 1}', "line 2: id 'a' is already used on line 1"),
    ],
)
def test_jsonl_errors_name_the_line(tmp_path: Path, line: str, expected: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"role": "user", "content": "hi", "id": "a", "time": 1}\n' + line + "\n", encoding="utf-8")
    good, errors = read_all(JsonlImporter(), path)
    assert good == []
    assert expected in str(errors[0])
    assert str(errors[0]).startswith("bad.jsonl line 2")


@pytest.mark.parametrize("key", ["occurred_at", "timestamp", "time", "created_at"])
def test_jsonl_reads_the_turn_time_under_every_usual_name(tmp_path: Path, key: str) -> None:
    path = tmp_path / "times.jsonl"
    path.write_text(
        json.dumps({"role": "user", "content": "ISO", key: "2025-06-18T15:10:23Z"})
        + "\n"
        + json.dumps({"role": "assistant", "content": "epoch", key: 1750259435})
        + "\n",
        encoding="utf-8",
    )
    (conversation,) = only(JsonlImporter(), path)
    assert [t.occurred_at for t in conversation.turns] == [utc(2025, 6, 18, 15, 10, 23), utc(2025, 6, 18, 15, 10, 35)]


def test_jsonl_prefers_occurred_at_and_keeps_a_conversation_title(tmp_path: Path) -> None:
    path = tmp_path / "titled.jsonl"
    path.write_text(
        json.dumps(
            {
                "conversation_id": "c1",
                "title": "Moving to Lisbon",
                "role": "user",
                "content": "hi",
                "occurred_at": "2025-06-18T15:10:23Z",
                "time": "1999-01-01T00:00:00Z",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    (conversation,) = only(JsonlImporter(), path)
    assert conversation.title == "Moving to Lisbon"
    assert conversation.turns[0].occurred_at == utc(2025, 6, 18, 15, 10, 23)


def test_jsonl_unassignable_line_withholds_every_conversation(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    path.write_text(
        '{"conversation_id": "a", "role": "user", "content": "1", "time": 1}\n'
        "not json\n"
        '{"conversation_id": "b", "role": "user", "content": "2", "time": 2}\n',
        encoding="utf-8",
    )
    good, errors = read_all(JsonlImporter(), path)
    assert good == []
    assert [e.location for e in errors] == [
        "two.jsonl line 2",
        "two.jsonl (conversation a)",
        "two.jsonl (conversation b)",
    ]
    assert "line(s) 2 could not be assigned" in str(errors[1])


# -- plain-text logs -------------------------------------------------------------------------------
def write_text(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_text_log_with_timestamps_and_continuations(tmp_path: Path) -> None:
    path = write_text(tmp_path, "friday.txt", samples.TEXT_BRACKETS)
    (conversation,) = only(TextLogImporter(), path)
    assert (conversation.conversation_id, conversation.title) == ("text:friday", "friday")
    assert rows(conversation) == [
        ("user", "Alice", "Are we still on for Friday?", "line:1", utc(2024, 5, 1, 10, 22)),
        (
            "user",
            "Bob",
            "Yes!\nI booked the table.\nPS: bring the tickets",
            "line:2",
            utc(2024, 5, 1, 10, 23, 15),
        ),
        ("user", "Alice", "Great", "line:6", utc(2024, 5, 1, 10, 25)),
    ]


def test_text_log_whatsapp_export(tmp_path: Path) -> None:
    (conversation,) = only(TextLogImporter(), write_text(tmp_path, "WhatsApp Chat.txt", samples.WHATSAPP))
    assert rows(conversation) == [
        (
            "system",
            None,
            "Messages and calls are end-to-end encrypted.",
            "line:1",
            utc(2024, 5, 13, 9, 0),
        ),
        ("user", "Carla", "Morning!", "line:2", utc(2024, 5, 13, 9, 1)),
        ("user", "Dev Patel", "See you at 8\nand don't be late", "line:3", utc(2024, 6, 1, 21, 15)),
        ("user", "Carla", "ok", "line:5", utc(2024, 6, 2, 22, 22)),
    ]
    assert conversation.turns[0].type == "app_event"
    assert conversation.turns[1].metadata == {"date_order": "day-first"}


def test_text_log_numeric_date_order(tmp_path: Path) -> None:
    month_first = "05/13/2024, 09:00 - A: one\n06/01/2024, 09:00 - B: two\n"
    (conversation,) = only(TextLogImporter(), write_text(tmp_path, "us.txt", month_first))
    assert [t.occurred_at for t in conversation.turns] == [utc(2024, 5, 13, 9), utc(2024, 6, 1, 9)]
    ambiguous = "[01/05/2024, 10:22:33 PM] A: hi\n"
    (conversation,) = only(TextLogImporter(), write_text(tmp_path, "x.txt", ambiguous))
    assert conversation.turns[0].occurred_at == utc(2024, 5, 1, 22, 22, 33)
    assert conversation.turns[0].metadata == {"date_order": "day-first (assumed)"}


def test_text_log_plain_and_clock_only(tmp_path: Path) -> None:
    (conversation,) = only(TextLogImporter(), write_text(tmp_path, "family.log", samples.PLAIN))
    assert rows(conversation) == [
        ("user", "Mum", "Did you call grandma?", "line:2", None),
        ("user", "Sam", "Not yet.\nI will tonight.\n  (promise)", "line:3", None),
        ("user", "Mum", "Good.", "line:6", None),
    ]
    (clock,) = only(TextLogImporter(), write_text(tmp_path, "c.txt", "[9:05] Ann: hi\n[21:10:02] Bo: yo\n"))
    assert [(t.author, t.occurred_at, dict(t.metadata)) for t in clock.turns] == [
        ("Ann", None, {"time_of_day": "09:05"}),
        ("Bo", None, {"time_of_day": "21:10:02"}),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[2024-13-45 10:22] Al: hi\n", "log.txt line 1: bad timestamp '2024-13-45 10:22'"),
        ("Al: hi\n[25:10] Bo: late\n", "log.txt line 2: bad timestamp '25:10'"),
        ("\nno speaker here\nAl: hi\n", "log.txt line 2: expected 'Name: message'"),
        (
            "13/01/2024, 10:00 - A: x\n01/13/2024, 10:00 - B: y\n",
            "log.txt line 2: dates mix day-first",
        ),
        ("\n\n", "log.txt: no chat messages found"),
    ],
)
def test_text_log_errors_name_the_line(tmp_path: Path, text: str, expected: str) -> None:
    assert str(error_of(TextLogImporter(), write_text(tmp_path, "log.txt", text))).startswith(expected)


def test_byte_order_mark_and_crlf_are_tolerated(tmp_path: Path) -> None:
    plain = samples.write_json(tmp_path / "plain.json", samples.chatgpt_conversations())
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert detect(builtin_importers(), bom).name == "chatgpt"
    assert only(ChatGPTImporter(), bom) == only(ChatGPTImporter(), plain)

    unix = write_text(tmp_path, "chat.txt", samples.WHATSAPP)
    windows = tmp_path / "windows" / "chat.txt"
    windows.parent.mkdir()
    windows.write_bytes(b"\xef\xbb\xbf" + samples.WHATSAPP.replace("\n", "\r\n").encode())
    assert detect(builtin_importers(), windows).name == "text"
    assert only(TextLogImporter(), windows) == only(TextLogImporter(), unix)


def test_undecodable_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes(b"Al: hi\nBo: \xff\xfe\n")
    assert str(error_of(TextLogImporter(), path)).startswith("log.txt line 2: not UTF-8 text")
    path = tmp_path / "chat.jsonl"
    path.write_bytes(b'{"role": "user", "content": "\xc3"}\n')
    assert str(error_of(JsonlImporter(), path)).startswith("chat.jsonl line 1: not UTF-8 text")


# -- LoCoMo ----------------------------------------------------------------------------------------
def test_locomo_bare_conversation(tmp_path: Path) -> None:
    path = samples.write_json(tmp_path / "26.json", samples.locomo_conversation())
    (conversation,) = only(LocomoImporter(), path)
    assert (conversation.conversation_id, conversation.title) == ("locomo:26", "Ana and Ben")
    assert rows(conversation) == [
        ("user", "Ana", "Hi Ben, I adopted a cat.", "D1:1", utc(2023, 5, 28, 23, 47, 0)),
        ("user", "Ben", "Congrats! Name?", "D1:2", utc(2023, 5, 28, 23, 47, 1)),
        ("user", "Ben", "Back from the coast!", "D2:1", utc(2023, 6, 3, 9, 5, 0)),
        (
            "user",
            "Ana",
            "Looks lovely. [shares a photo: a photo of a lighthouse on a cliff]",
            "D2:2",
            utc(2023, 6, 3, 9, 5, 1),
        ),
        ("user", "Ben", "[shares a photo: a photo of a crab]", "D2:3", utc(2023, 6, 3, 9, 5, 2)),
        ("user", "Ana", "New job starts Monday.", "D10:1", utc(2023, 7, 1, 12, 30, 0)),
    ]
    assert conversation.turns[3].metadata == {
        "session": "2",
        "image_url": "https://example.invalid/a.jpg",
    }
    assert conversation.turns[5].metadata == {"session": "10"}


def test_locomo_release_shape_isolates_a_bad_sample(tmp_path: Path) -> None:
    broken = samples.locomo_conversation()
    broken["session_2_date_time"] = "sometime in June"
    path = samples.write_json(tmp_path / "locomo10.json", samples.locomo_release(samples.locomo_conversation(), broken))
    good, errors = read_all(LocomoImporter(), path)
    assert [(c.conversation_id, len(c.turns)) for c in good] == [("locomo:conv-1", 6)]
    assert [str(e) for e in errors] == [
        "locomo10.json: sample[1] (sample_id conv-2): bad timestamp in 'session_2_date_time' "
        "('sometime in June'): expected a time like '1:56 pm on 8 May, 2023'"
    ]
    single = samples.locomo_release(samples.locomo_conversation())[0]
    (conversation,) = only(LocomoImporter(), samples.write_json(tmp_path / "one.json", single))
    assert conversation.conversation_id == "locomo:conv-1"


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda c: c["session_1"][1].pop("dia_id"), "session_1[1]: missing key 'dia_id'"),
        (
            lambda c: c["session_1"][1].update(text=["x"]),
            "session_1[1] (dia_id D1:2): 'text' must be",
        ),
        (lambda c: c["session_2"][0].update(dia_id="D1:1"), "dia_id 'D1:1' is already used"),
        (lambda c: c.pop("session_10_date_time"), "missing key 'session_10_date_time'"),
        (lambda c: c.update(session_1="hello"), "'session_1' must be a list of turns"),
    ],
)
def test_locomo_malformed_records_are_named(tmp_path: Path, damage: Damage, expected: str) -> None:
    conversation = samples.locomo_conversation()
    damage(conversation)
    error = error_of(LocomoImporter(), samples.write_json(tmp_path / "7.json", conversation))
    assert error.location.startswith("7.json")
    assert expected in str(error)


# -- across formats --------------------------------------------------------------------------------
def sample_files(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    yield "chatgpt", samples.write_json(tmp_path / "gpt.json", samples.chatgpt_conversations())
    yield "claude", samples.write_json(tmp_path / "claude.json", samples.claude_conversations())
    yield "locomo", samples.write_json(tmp_path / "26.json", samples.locomo_conversation())
    yield (
        "locomo",
        samples.write_json(tmp_path / "locomo10.json", samples.locomo_release(samples.locomo_conversation())),
    )
    yield "jsonl", write_text(tmp_path, "a.jsonl", samples.JSONL_SINGLE)
    yield "text", write_text(tmp_path, "b.txt", samples.TEXT_BRACKETS)
    yield "text", write_text(tmp_path, "c.txt", samples.WHATSAPP)
    yield "text", write_text(tmp_path, "d.txt", samples.PLAIN)


@pytest.mark.parametrize("head_size", [16, 65536])
def test_each_sample_is_claimed_by_exactly_its_importer(tmp_path: Path, head_size: int) -> None:
    importers = builtin_importers()
    for expected, path in sample_files(tmp_path):
        head = read_head(path, head_size)
        assert [i.name for i in importers if i.sniff(path, head)] == [expected], path.name
        assert detect(importers, path).name == expected
        assert detect(reversed(importers), path).name == expected


def test_detect_lists_the_supported_formats(tmp_path: Path) -> None:
    candidates = {
        "notes.md": "# Notes\n\nSome prose without speakers.\nMore prose.\n",
        "title.txt": "Title: My notes\nSome text.\nMore text.\n",
        "blob.bin": "\x00\x01binary",
        "other.json": '{"name": "not a transcript"}',
        "empty.txt": "",
    }
    for name, text in candidates.items():
        path = write_text(tmp_path, name, text)
        with pytest.raises(ImportFormatError) as caught:
            detect(builtin_importers(), path)
        message = str(caught.value)
        assert message.startswith(f"{name}: not a recognised transcript format")
        for fmt in ("chatgpt", "claude", "jsonl", "text", "locomo"):
            assert f"{fmt} (" in message


def test_rereading_yields_identical_ids_and_utc_times(tmp_path: Path) -> None:
    importers = builtin_importers()
    for _, path in sample_files(tmp_path):
        importer = detect(importers, path)
        first, again = only(importer, path), only(importer, path)
        assert first == again and first
        ids = [(c.conversation_id, [t.external_id for t in c.turns]) for c in first]
        assert all(all(ext for ext in exts) for _, exts in ids)
        for conversation in first:
            for turn in conversation.turns:
                assert turn.occurred_at is None or turn.occurred_at.utcoffset() == timedelta(0)
                assert turn.content == turn.content.rstrip() and turn.content.strip()


def test_registration_through_pluggy_yields_all_five() -> None:
    pm = new_plugin_manager()
    pm.register(plugins.importers)
    registered: list[Importer] = []
    pm.hook.register_importers(register=registered.append)
    assert sorted(i.name for i in registered) == ["chatgpt", "claude", "jsonl", "locomo", "text"]
    assert all(isinstance(i, Importer) for i in registered)


def test_read_all_keeps_what_a_third_party_importer_yielded_before_failing(tmp_path: Path) -> None:
    class HalfBroken:
        name = "half"
        description = "fails midway"
        extensions: tuple[str, ...] = (".x",)

        def sniff(self, path: Path, head: bytes) -> bool:
            return True

        def read(self, path: Path) -> Iterator[ImportedConversation]:
            yield ImportedConversation("half:1", "", (ImportedTurn(role="user", content="hi"),))
            raise ImportFormatError("broken", location="record 2")

    good, bad = read_all(HalfBroken(), tmp_path / "any.x")
    assert [c.conversation_id for c in good] == ["half:1"]
    assert [str(e) for e in bad] == ["record 2: broken"]
