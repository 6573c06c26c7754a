"""Single ingests written together (:mod:`engine.api.coalesce`): events that arrive while a write
runs share the next one, each request still gets its own answer and error, and nothing is
acknowledged before it is committed — driven directly and over real loopback HTTP."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from engine import Vault
from engine.api.coalesce import IngestCoalescer
from engine.errors import ValidationError
from engine.events import EventIn, IngestResult
from tests.engine.api.conftest import Served


class Gated:
    """The vault's ingest calls, recorded; the first single write waits for ``gate``."""

    def __init__(self, vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gate = threading.Event()
        self.calls: list[tuple[str, int]] = []
        self._one, self._many = vault.ingest_event, vault.ingest_events
        monkeypatch.setattr(vault, "ingest_event", self.one)
        monkeypatch.setattr(vault, "ingest_events", self.many)

    def one(self, event: EventIn) -> IngestResult:
        self.gate.wait(10)
        self.calls.append(("one", 1))
        return self._one(event)

    def many(self, events: Sequence[EventIn]) -> list[IngestResult]:
        self.calls.append(("many", len(events)))
        return self._many(events)


def turn(content: str, **fields: Any) -> EventIn:
    return EventIn(conversation_id="coalesce", content=content, **fields)


async def _behind_a_slow_write(
    coalescer: IngestCoalescer, gated: Gated, events: list[EventIn]
) -> list[IngestResult | BaseException]:
    """Send one event (its write held at the gate), then ``events`` while it is held."""
    first = asyncio.create_task(coalescer.ingest(turn("The first turn.")))
    await asyncio.sleep(0.3)  # the first write is running (held)
    rest = [asyncio.create_task(coalescer.ingest(event)) for event in events]
    await asyncio.sleep(0.2)  # every one of them is queued
    gated.gate.set()
    await first
    return list(await asyncio.gather(*rest, return_exceptions=True))


def test_events_arriving_during_a_write_share_the_next_one(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    gated = Gated(vault, monkeypatch)
    coalescer = IngestCoalescer(vault)
    events = [turn(f"Turn number {n}.") for n in range(10)]
    results = asyncio.run(_behind_a_slow_write(coalescer, gated, events))
    assert gated.calls == [("one", 1), ("many", 10)]
    assert (coalescer.batches, coalescer.events) == (2, 11)
    ids = [r.event_id for r in results if isinstance(r, IngestResult)]
    assert len(set(ids)) == 10
    for event_id, event in zip(ids, events, strict=True):  # each answer is its own event's
        assert vault.conversations.event(event_id).content == event.content


def test_one_bad_event_fails_only_its_own_request(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    gated = Gated(vault, monkeypatch)
    coalescer = IngestCoalescer(vault)
    events = [turn("Good one."), turn("   "), turn("Good two.")]
    results = asyncio.run(_behind_a_slow_write(coalescer, gated, events))
    # the batch was refused as a whole (nothing stored), then written event by event
    assert gated.calls == [("one", 1), ("many", 3), ("one", 1), ("one", 1), ("one", 1)]
    good_one, bad, good_two = results
    assert isinstance(bad, ValidationError) and bad.field == "content"  # not events[1].content
    assert isinstance(good_one, IngestResult) and isinstance(good_two, IngestResult)
    contents = [e.content for e in vault.conversations.events("coalesce")]
    assert contents == ["The first turn.", "Good one.", "Good two."]  # each exactly once


def test_identical_turns_stay_two_events_and_a_resent_id_stays_one(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    gated = Gated(vault, monkeypatch)
    coalescer = IngestCoalescer(vault)
    events = [
        turn("ok"),
        turn("ok"),
        turn("Noted.", external_id="msg-1"),
        turn("Noted.", external_id="msg-1"),
    ]
    results = asyncio.run(_behind_a_slow_write(coalescer, gated, events))
    assert gated.calls[1] == ("many", 4)
    plain_a, plain_b, sent, resent = results
    assert isinstance(plain_a, IngestResult) and isinstance(plain_b, IngestResult)
    assert plain_a.event_id != plain_b.event_id  # two turns sent at two moments
    assert (plain_a.status, plain_b.status) == ("queued", "queued")
    assert isinstance(sent, IngestResult) and isinstance(resent, IngestResult)
    assert resent == IngestResult(sent.event_id, "duplicate")


def test_the_thread_ends_when_idle_and_comes_back(vault: Vault) -> None:
    coalescer = IngestCoalescer(vault, idle_s=0.1)
    assert not coalescer.running
    first = asyncio.run(coalescer.ingest(turn("Before the pause.")))
    deadline = time.monotonic() + 5
    while coalescer.running:
        assert time.monotonic() < deadline, "the idle thread did not end"
        time.sleep(0.02)
    second = asyncio.run(coalescer.ingest(turn("After the pause.")))
    assert second.event_id > first.event_id
    assert vault.conversations.event(second.event_id).content == "After the pause."


def test_a_request_that_left_still_gets_its_event_written(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    gated = Gated(vault, monkeypatch)
    coalescer = IngestCoalescer(vault)

    async def go() -> None:
        task = asyncio.create_task(coalescer.ingest(turn("Written anyway.")))
        await asyncio.sleep(0.2)
        task.cancel()  # the client went away while its write was running
        gated.gate.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.to_thread(_wait_written, vault)

    asyncio.run(go())
    assert [e.content for e in vault.conversations.events("coalesce")] == ["Written anyway."]


def _wait_written(vault: Vault) -> None:
    deadline = time.monotonic() + 10
    while not vault.conversations.events("coalesce"):
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_concurrent_clients_over_loopback_each_get_their_committed_event(served: Served) -> None:
    vault = served.vault
    acknowledged: dict[int, str] = {}
    problems: list[str] = []
    lock = threading.Lock()

    def client(n: int) -> None:
        with httpx.Client(base_url=served.url, headers=served.auth(), trust_env=False) as http:
            for i in range(15):
                content = f"Client {n} says thing {i}."
                answer = http.post("/v6/ingest", json={"conversation_id": f"c{n}", "content": content})
                if answer.status_code != 202:
                    problems.append(answer.text)
                    return
                event_id = answer.json()["event_id"]
                # committed before the answer: readable at once
                if vault.conversations.event(event_id).content != content:
                    problems.append(f"event {event_id} is not {content!r}")
                with lock:
                    if event_id in acknowledged:
                        problems.append(f"event {event_id} acknowledged twice")
                    acknowledged[event_id] = content

    threads = [threading.Thread(target=client, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not problems
    assert len(acknowledged) == 16 * 15
    coalescer: IngestCoalescer = served.server.app.state.ingest
    assert coalescer.events == 16 * 15
    stored = {e.id: e.content for n in range(16) for e in vault.conversations.events(f"c{n}")}
    assert stored == acknowledged
