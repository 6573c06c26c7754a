"""Ingest: validation naming the field, all-or-nothing batches, duplicates, the firewall at the door."""

from __future__ import annotations

import pytest

from engine import Vault
from engine.errors import ValidationError
from engine.events import MAX_CONTENT_CHARS, EventIn


def _count(vault: Vault, table: str) -> int:
    return int(vault.store.scalar(f"SELECT COUNT(*) FROM {table}"))


def test_ingest_returns_an_id_and_queues_enrichment(vault: Vault) -> None:
    result = vault.events.ingest(EventIn(conversation_id="c1", content="I live in Hanoi.", occurred_at="2024-05-01"))
    assert result.status == "queued" and result.event_id > 0
    event = vault.conversations.event(result.event_id)
    assert event.content == "I live in Hanoi." and event.conversation_id == "c1"
    assert event.occurred_at.isoformat().startswith("2024-05-01")
    assert vault.store.scalar("SELECT kind FROM objects WHERE id = ?", (result.event_id,)) == "event"
    assert vault.jobs.wait_idle(120)
    assert vault.conversations.event(result.event_id).status == "enriched"


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (EventIn(conversation_id="", content="x"), "conversation_id"),
        (EventIn(conversation_id="c", content="   "), "content"),
        (EventIn(conversation_id="c", content="x", role="robot"), "role"),
        (EventIn(conversation_id="c", content="x", type="sms"), "type"),
        (EventIn(conversation_id="c", content="x" * (MAX_CONTENT_CHARS + 1)), "content"),
        (EventIn(conversation_id="c", content="x", occurred_at="the day after the war"), "occurred_at"),
        (EventIn(conversation_id="c", content="x", metadata={"k": object()}), "metadata"),
        (EventIn(conversation_id="c", content="x", user_id=""), "user_id"),
        (EventIn(conversation_id="c", content="x", author=""), "author"),
    ],
)
def test_bad_input_names_the_field_and_stores_nothing(vault: Vault, event: EventIn, field: str) -> None:
    before = _count(vault, "objects")
    with pytest.raises(ValidationError) as info:
        vault.events.ingest(event)
    assert info.value.field == field
    assert _count(vault, "objects") == before


def test_a_bad_event_in_a_batch_stores_nothing(vault: Vault) -> None:
    events = [EventIn(conversation_id="c", content=f"turn {i}") for i in range(5)]
    events.insert(3, EventIn(conversation_id="c", content="ok", role="narrator"))
    with pytest.raises(ValidationError) as info:
        vault.events.ingest(events)
    assert info.value.field == "events[3].role"
    assert _count(vault, "events") == 0 and _count(vault, "jobs") == 0


def test_exact_duplicates_return_the_existing_id(vault: Vault) -> None:
    e = EventIn(conversation_id="c", content="I like tea.", occurred_at="2024-01-01T10:00:00Z")
    first = vault.events.ingest(e)
    again = vault.events.ingest(e)
    assert again.event_id == first.event_id and again.status == "duplicate"
    other_time = vault.events.ingest(
        EventIn(conversation_id="c", content="I like tea.", occurred_at="2024-01-02T10:00:00Z")
    )
    assert other_time.event_id != first.event_id
    by_id = [
        EventIn(conversation_id="c", content="v1", external_id="msg-1"),
        EventIn(conversation_id="c", content="v1 edited", external_id="msg-1"),
    ]
    results = vault.events.ingest(by_id)
    assert results[0].event_id == results[1].event_id
    assert _count(vault, "events") == 3


def test_a_batch_finds_each_of_its_stored_duplicates_and_writes_only_the_new(vault: Vault) -> None:
    def turn(content: str, hour: int, conversation: str = "c", author: str | None = None) -> EventIn:
        return EventIn(
            conversation_id=conversation, content=content, occurred_at=f"2024-01-01T{hour:02d}:00:00Z", author=author
        )

    stored = vault.events.ingest([turn("one", 1), turn("two", 2), turn("three", 3, author="Bo")])
    batch = [
        turn("new A", 4),
        turn("two", 2),  # stored
        turn("two", 2, conversation="d"),  # same words elsewhere: new
        turn("three", 3),  # stored, but by Bo: new
        turn("three", 3, author="Bo"),  # stored
        turn("one", 1),  # stored
        turn("one", 5),  # another time: new
    ]
    results = vault.events.ingest(batch)
    assert [r.status for r in results] == [
        "queued",
        "duplicate",
        "queued",
        "queued",
        "duplicate",
        "duplicate",
        "queued",
    ]
    assert (results[1].event_id, results[4].event_id, results[5].event_id) == (
        stored[1].event_id,
        stored[2].event_id,
        stored[0].event_id,
    )
    assert _count(vault, "events") == 3 + 4


def test_secrets_are_never_stored_and_pii_is_redacted(vault: Vault) -> None:
    card = vault.events.ingest(EventIn(conversation_id="c", content="My card is 4111 1111 1111 1111 thanks"))
    mail = vault.events.ingest(EventIn(conversation_id="c", content="Write to me at ann.lee@example.org please"))
    assert card.status == "blocked"
    stored = vault.conversations.event(card.event_id)
    assert "4111" not in stored.content and "[CARD]" in stored.content
    assert "card:block" in stored.metadata["pii"]
    email = vault.conversations.event(mail.event_id)
    assert "ann.lee@example.org" not in email.content and "[EMAIL]" in email.content
    assert vault.store.scalar("SELECT COUNT(*) FROM events_fts WHERE events_fts MATCH '4111'") == 0
    assert (
        vault.store.scalar("SELECT COUNT(*) FROM jobs WHERE json_extract(payload, '$.event_id') = ?", (card.event_id,))
        == 0
    )


def test_system_messages_are_stored_but_never_processed(vault: Vault) -> None:
    result = vault.events.ingest(EventIn(conversation_id="c", role="system", content="I am a helpful assistant."))
    assert result.status == "skipped"
    assert vault.jobs.wait_idle(120)
    assert vault.facts() == []
