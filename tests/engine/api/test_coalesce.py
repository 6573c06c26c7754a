"""Single ingests written together (:mod:`engine.api.coalesce`): events that arrive while a write
runs share the next one, each request still gets its own answer and error, and nothing is
acknowledged before it is committed — driven directly and over real loopback HTTP."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine import Settings, Vault
from engine.api.coalesce import IngestCoalescer
from engine.errors import ValidationError
from engine.events import EventIn, IngestResult
from tests.engine.api.conftest import Served


class Gated:
    """The vault's writer held by an operation waiting for ``gate``; the coalescer's calls recorded."""

    def __init__(self, vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
        self.vault = vault
        self.gate = threading.Event()
        self.calls: list[tuple[str, int]] = []
        self._submit = vault.events.submit
        monkeypatch.setattr(vault.events, "submit", self.submit)
        assert vault.store.writer is not None
        running = threading.Event()

        def hold(_tx: Any) -> bool:
            running.set()
            return self.gate.wait(10)

        self.commits_before = vault.store.writer.commits
        self.held = vault.store.writer.submit(hold)
        # the writer has taken the holding write into a transaction of its own: what is sent from here on cannot
        # join it (taken later, it would share one transaction with the first events sent)
        assert running.wait(10)

    def submit(self, events: EventIn | Sequence[EventIn]) -> Any:
        self.calls.append(("one", 1) if isinstance(events, EventIn) else ("batch", len(events)))
        return self._submit(events)

    def commits(self) -> int:
        """Transactions committed since the writer was held (the holding one included)."""
        assert self.vault.store.writer is not None
        return self.vault.store.writer.commits - self.commits_before


@pytest.fixture
def quiet_vault(tmp_path: Path, offline_settings: Settings) -> Iterator[Vault]:
    """A vault without job workers: every transaction its writer commits is one the test made."""
    opened = Vault.open(tmp_path / "quiet", settings=offline_settings, start_workers=False)
    try:
        yield opened
    finally:
        opened.close()


def turn(content: str, **fields: Any) -> EventIn:
    return EventIn(conversation_id="coalesce", content=content, **fields)


async def _behind_a_slow_write(
    coalescer: IngestCoalescer, gated: Gated, events: list[EventIn]
) -> list[IngestResult | BaseException]:
    """Send ``events`` while the writer is held by another write, then let it go."""
    sent = [asyncio.create_task(coalescer.ingest(event)) for event in events]
    await asyncio.sleep(0.3)  # every one of them reached the coalescer and is waiting for the writer
    gated.gate.set()
    return list(await asyncio.gather(*sent, return_exceptions=True))


def test_events_arriving_during_a_write_are_committed_together_after_it(
    quiet_vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    gated = Gated(quiet_vault, monkeypatch)
    coalescer = IngestCoalescer(quiet_vault)
    events = [turn(f"Turn number {n}.") for n in range(10)]
    results = asyncio.run(_behind_a_slow_write(coalescer, gated, events))
    assert gated.commits() == 2  # the held write's transaction, then one for all ten events
    assert sum(n for kind, n in gated.calls if kind == "batch") == 10 and ("one", 1) not in gated.calls
    ids = [r.event_id for r in results if isinstance(r, IngestResult)]
    assert len(set(ids)) == 10
    for event_id, event in zip(ids, events, strict=True):  # each answer is its own event's
        assert quiet_vault.conversations.event(event_id).content == event.content


def test_one_bad_event_fails_only_its_own_request(quiet_vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    gated = Gated(quiet_vault, monkeypatch)
    coalescer = IngestCoalescer(quiet_vault)
    events = [turn("Good one."), turn("   "), turn("Good two.")]
    results = asyncio.run(_behind_a_slow_write(coalescer, gated, events))
    good_one, bad, good_two = results
    assert isinstance(bad, ValidationError) and bad.field == "content"  # not events[1].content
    assert isinstance(good_one, IngestResult) and isinstance(good_two, IngestResult)
    assert ("one", 1) in gated.calls  # the refused batch was written again event by event
    contents = [e.content for e in quiet_vault.conversations.events("coalesce")]
    assert contents == ["Good one.", "Good two."]  # each exactly once


def test_identical_turns_stay_two_events_and_a_resent_id_stays_one(
    quiet_vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    gated = Gated(quiet_vault, monkeypatch)
    coalescer = IngestCoalescer(quiet_vault)
    events = [
        turn("ok"),
        turn("ok"),
        turn("Noted.", external_id="msg-1"),
        turn("Noted.", external_id="msg-1"),
    ]
    results = asyncio.run(_behind_a_slow_write(coalescer, gated, events))
    plain_a, plain_b, sent, resent = results
    assert isinstance(plain_a, IngestResult) and isinstance(plain_b, IngestResult)
    assert plain_a.event_id != plain_b.event_id  # two turns sent at two moments
    assert (plain_a.status, plain_b.status) == ("queued", "queued")
    assert isinstance(sent, IngestResult) and isinstance(resent, IngestResult)
    assert resent == IngestResult(sent.event_id, "duplicate")
    assert len(quiet_vault.conversations.events("coalesce")) == 3


def test_requests_from_different_event_loops_are_each_answered_on_their_own(vault: Vault) -> None:
    coalescer = IngestCoalescer(vault)
    first = asyncio.run(coalescer.ingest(turn("From the first loop.")))  # that loop is closed afterwards
    answers: list[IngestResult] = []

    def other_loop() -> None:
        async def go() -> None:
            answers.extend(await asyncio.gather(*(coalescer.ingest(turn(f"Other loop {n}.")) for n in range(3))))

        asyncio.run(go())

    thread = threading.Thread(target=other_loop)
    thread.start()
    second = asyncio.run(coalescer.ingest(turn("From a third loop, meanwhile.")))
    thread.join(20)
    assert len(answers) == 3 and second.event_id > first.event_id
    contents = {vault.conversations.event(a.event_id).content for a in answers}
    assert contents == {f"Other loop {n}." for n in range(3)}
    assert vault.conversations.event(second.event_id).content == "From a third loop, meanwhile."
    assert coalescer.pending() == 0


def test_at_most_two_batches_are_in_flight_and_the_rest_wait_for_one_batch(
    quiet_vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    gated = Gated(quiet_vault, monkeypatch)
    coalescer = IngestCoalescer(quiet_vault)

    async def go() -> list[IngestResult]:
        waves = []
        for wave in range(4):  # four turns of the loop, each with its own arrivals
            waves += [asyncio.create_task(coalescer.ingest(turn(f"Wave {wave} turn {n}."))) for n in range(5)]
            await asyncio.sleep(0.05)
        gated.gate.set()
        return list(await asyncio.gather(*waves))

    results = asyncio.run(go())
    # two waves handed over at once; the other two, arriving while those were uncommitted, as one batch of ten
    assert gated.calls == [("batch", 5), ("batch", 5), ("batch", 10)]
    assert len({r.event_id for r in results}) == 20


def test_a_request_that_left_still_gets_its_event_written(quiet_vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = quiet_vault
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
