"""Synthetic transcript files in each importer format, written into a test's tmp_path.

The content is invented for the tests (no real export or benchmark data); the structure follows
each format.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

#: 2024-05-01 10:22:00.500 UTC, the ChatGPT sample's first message time.
T0 = datetime(2024, 5, 1, 10, 22, 0, 500000, tzinfo=UTC)


def at(seconds: float) -> datetime:
    """T0 plus ``seconds``."""
    return datetime.fromtimestamp(T0.timestamp() + seconds, tz=UTC)


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


# -- ChatGPT ---------------------------------------------------------------------------------------
def gpt_message(
    message_id: str,
    role: str,
    parts: list[Any] | None = None,
    *,
    seconds: float | None = None,
    content_type: str = "text",
    hidden: bool = False,
    recipient: str = "all",
    text: str | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    content: dict[str, Any] = {"content_type": content_type}
    if parts is not None:
        content["parts"] = parts
    if text is not None:
        content["text"] = text
    metadata: dict[str, Any] = {"is_visually_hidden_from_conversation": True} if hidden else {}
    if role == "assistant":
        metadata["model_slug"] = "gpt-4o"
    return {
        "id": message_id,
        "author": {"role": role, "name": name, "metadata": {}},
        "create_time": None if seconds is None else T0.timestamp() + seconds,
        "update_time": None,
        "content": content,
        "status": "finished_successfully",
        "metadata": metadata,
        "recipient": recipient,
    }


def gpt_mapping(*nodes: tuple[str, str | None, dict[str, Any] | None]) -> dict[str, Any]:
    """A mapping from ``(node_id, parent_id, message)`` triples; children are derived in order."""
    mapping: dict[str, Any] = {
        node_id: {"id": node_id, "message": message, "parent": parent, "children": []}
        for node_id, parent, message in nodes
    }
    for node_id, parent, _ in nodes:
        if parent is not None:
            mapping[parent]["children"].append(node_id)
    return mapping


def chatgpt_conversations() -> list[dict[str, Any]]:
    """Two conversations: one with an edited prompt, a regenerated answer and a tool call."""
    first = gpt_mapping(
        ("root", None, None),
        ("sys", "root", gpt_message("m-sys", "system", [""], hidden=True)),
        ("custom", "sys", gpt_message("m-custom", "user", ["Be brief."], hidden=True)),
        ("u1-old", "custom", gpt_message("m-u1-old", "user", ["Plan a trip"], seconds=0)),
        ("a1-old", "u1-old", gpt_message("m-a1-old", "assistant", ["Where to?"], seconds=1)),
        ("u1", "custom", gpt_message("m-u1", "user", ["Plan a trip to Lisbon  \n"], seconds=10)),
        ("a1-first", "u1", gpt_message("m-a1-first", "assistant", ["Draft one"], seconds=11)),
        (
            "a1",
            "u1",
            gpt_message("m-a1", "assistant", ["Day 1: Alfama.", "Day 2: Belém."], seconds=12),
        ),
        ("empty", "a1", gpt_message("m-empty", "assistant", [""], seconds=13)),
        (
            "u2",
            "empty",
            gpt_message(
                "m-u2",
                "user",
                [{"content_type": "image_asset_pointer", "asset_pointer": "fs://x"}, "Is this it?"],
                seconds=20,
                content_type="multimodal_text",
            ),
        ),
        (
            "call",
            "u2",
            gpt_message(
                "m-call",
                "assistant",
                None,
                seconds=21,
                content_type="code",
                text="print(1 + 1)",
                recipient="python",
            ),
        ),
        (
            "out",
            "call",
            gpt_message(
                "m-out",
                "tool",
                None,
                seconds=22,
                content_type="execution_output",
                text="2",
                name="python",
            ),
        ),
        ("a2", "out", gpt_message("m-a2", "assistant", ["Yes, that is the tram."], seconds=23)),
    )
    second = gpt_mapping(
        ("r", None, None),
        ("q", "r", gpt_message("m-q", "user", ["What is 2+2?"], seconds=100)),
        ("a-old", "q", gpt_message("m-a-old", "assistant", ["5"], seconds=101)),
        ("a-new", "q", gpt_message("m-a-new", "assistant", ["4"], seconds=102)),
    )
    return [
        {
            "title": "Lisbon trip",
            "create_time": T0.timestamp(),
            "update_time": T0.timestamp() + 23,
            "mapping": first,
            "moderation_results": [],
            "current_node": "a2",
            "conversation_id": "conv-1",
            "id": "conv-1",
        },
        # an older export: no current_node, no conversation_id
        {"title": "Sums", "create_time": T0.timestamp() + 100, "mapping": second, "id": "conv-2"},
    ]


# -- Claude ----------------------------------------------------------------------------------------
def claude_conversations() -> list[dict[str, Any]]:
    """Two conversations: blocks with a tool use and an attachment; an older text-only one."""
    return [
        {
            "uuid": "c-1",
            "name": "Garden",
            "created_at": "2024-06-01T08:00:00.000000Z",
            "updated_at": "2024-06-01T08:05:00.000000Z",
            "account": {"uuid": "acct"},
            "chat_messages": [
                {
                    "uuid": "c1-m1",
                    "text": "Which tomatoes grow in shade?",
                    "sender": "human",
                    "created_at": "2024-06-01T08:00:01.250000Z",
                    "content": [{"type": "text", "text": "Which tomatoes grow in shade?"}],
                    "attachments": [{"file_name": "garden.pdf", "extracted_content": "..."}],
                    "files": [],
                },
                {
                    "uuid": "c1-m2",
                    "text": "",
                    "sender": "assistant",
                    "created_at": "2024-06-01T10:00:02+02:00",
                    "content": [
                        {"type": "text", "text": "Let me check."},
                        {"type": "tool_use", "name": "search", "input": {"q": "shade tomatoes"}},
                        {"type": "tool_result", "content": []},
                        {"type": "text", "text": "Cherry tomatoes cope best.\n\n"},
                    ],
                },
                {
                    "uuid": "c1-m3",
                    "text": "",
                    "sender": "human",
                    "created_at": "2024-06-01T08:01:00Z",
                    "content": [],
                },
            ],
        },
        {
            "uuid": "c-2",
            "name": "",
            "created_at": "2023-01-02T03:04:05Z",
            "updated_at": "2023-01-02T03:04:05Z",
            "chat_messages": [
                {
                    "uuid": "c2-m1",
                    "text": "hi",
                    "sender": "human",
                    "created_at": "2023-01-02T03:04:05Z",
                },
                {"uuid": "c2-m2", "text": "Hello!", "sender": "assistant", "created_at": None},
            ],
        },
    ]


# -- LoCoMo ----------------------------------------------------------------------------------------
def locomo_conversation() -> dict[str, Any]:
    """A bare conversation (dev-split shape) with annotations beside it, sessions out of order."""
    return {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_2_date_time": "9:05 am on 3 June, 2023",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "Back from the coast!"},
            {
                "speaker": "Ana",
                "dia_id": "D2:2",
                "text": "Looks lovely. ",
                "img_url": ["https://example.invalid/a.jpg"],
                "blip_caption": "a photo of a lighthouse on a cliff",
                "query": "lighthouse",
            },
            {"speaker": "Ben", "dia_id": "D2:3", "text": "", "blip_caption": "a photo of a crab"},
        ],
        "session_10_date_time": "12:30 pm on 1 July, 2023",
        "session_10": [{"speaker": "Ana", "dia_id": "D10:1", "text": "New job starts Monday."}],
        "session_1_date_time": "11:47 pm on 28 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben, I adopted a cat."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! Name?"},
        ],
        "session_11_date_time": "1:00 pm on 2 July, 2023",  # no session_11 turns, as in the release
        "session_1_observation": {"Ana": [["Ana adopted a cat.", "D1:1"]]},
        "session_1_summary": "Ana told Ben about her cat.",
        "events_session_1": {"Ana": ["adopts a cat"], "Ben": [], "date": "28 May, 2023"},
        "qa": [
            {
                "question": "What did Ana adopt?",
                "answer": "a cat",
                "evidence": ["D1:1"],
                "category": 4,
            }
        ],
    }


def locomo_release(*samples: dict[str, Any]) -> list[dict[str, Any]]:
    """The released shape: samples wrapping a conversation, with annotations beside it."""
    return [
        {
            "qa": [],
            "conversation": conversation,
            "event_summary": {},
            "observation": {},
            "session_summary": {},
            "sample_id": f"conv-{index}",
        }
        for index, conversation in enumerate(samples, start=1)
    ]


# -- JSONL and text logs ---------------------------------------------------------------------------
JSONL_SINGLE = "\n".join(
    [
        '{"role": "user", "content": "I moved to Porto.", "time": "2024-05-01T10:22:00Z", "id": "a"}',
        "",
        '{"role": "assistant", "content": "Nice!  ", "time": 1714558925, "author": "bot"}',
        '{"role": "user", "content": "   ", "time": 1714558926000}',
        '{"role": "tool", "content": "ok", "time": 1714558950000, "extra": 1}',
        '{"role": "system", "content": "naive", "time": "2024-05-01 10:23:00"}',
        '{"role": "user", "content": "offset", "time": "2024-05-01T12:24:00+02:00"}',
        '{"role": "user", "content": "text epoch", "time": "1714558925"}',
        "",
    ]
)

TEXT_BRACKETS = """\
[2024-05-01 10:22] Alice: Are we still on for Friday?
[2024-05-01 10:23:15] Bob: Yes!
I booked the table.
PS: bring the tickets

[2024-05-01 10:25] Alice: Great
"""

WHATSAPP = """\
13/05/2024, 09:00 - Messages and calls are end-to-end encrypted.
13/05/2024, 09:01 - Carla: Morning!
01/06/2024, 21:15 - Dev Patel: See you at 8
and don't be late
02/06/24, 10:22 pm - Carla: ok
"""

PLAIN = """\

Mum: Did you call grandma?
Sam: Not yet.
I will tonight.
  (promise)
Mum: Good.
"""
