"""Single events written together by the writer (``Writer.submit_merged``, used by ``vault.events.submit``): events
that arrive while a write runs share the next one, each caller still gets its own answer and error, and nothing is
acknowledged before it is committed — driven directly and over real loopback HTTP."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine import Settings, Vault
from engine.api.fast_ingest import committed
from engine.errors import ValidationError
from engine.events import EventIn, IngestResult
from tests.engine.api.conftest import Served


class Held:
    """The vault's writer held by an operation waiting for ``gate``; what is submitted meanwhile queues behind it."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.gate = threading.Event()
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
    return EventIn(conversation_id="merged", content=content, **fields)


def _outcomes(futures: list[Future[IngestResult]]) -> list[IngestResult | BaseException]:
    out: list[IngestResult | BaseException] = []
    for future in futures:
        error = future.exception(20)
        out.append(error if error is not None else future.result())
    return out


def test_events_arriving_during_a_write_are_committed_together_after_it(quiet_vault: Vault) -> None:
    held = Held(quiet_vault)
    events = [turn(f"Turn number {n}.") for n in range(10)]
    futures = [quiet_vault.events.submit(event) for event in events]
    time.sleep(0.1)
    assert not any(f.done() for f in futures), "nothing is answered before it is committed"
    held.gate.set()
    results = _outcomes(futures)
    assert held.commits() == 2  # the held write's transaction, then one for all ten events
    ids = [r.event_id for r in results if isinstance(r, IngestResult)]
    assert len(set(ids)) == 10
    for event_id, event in zip(ids, events, strict=True):  # each answer is its own event's
        assert quiet_vault.conversations.event(event_id).content == event.content


def test_a_merged_write_that_fails_is_written_again_item_by_item(quiet_vault: Vault) -> None:
    """One event the store refuses (here a trigger; in life a constraint, say) fails only its own caller."""
    assert quiet_vault.store.writer is not None
    quiet_vault.store.writer.run(
        lambda tx: tx.execute(
            "CREATE TRIGGER refuse_one BEFORE INSERT ON events WHEN new.content = 'Refuse me.' "
            "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
        )
    )
    held = Held(quiet_vault)
    futures = [quiet_vault.events.submit(turn(text)) for text in ("Good one.", "Refuse me.", "Good two.")]
    held.gate.set()
    good_one, refused, good_two = _outcomes(futures)
    assert isinstance(good_one, IngestResult) and isinstance(good_two, IngestResult)
    assert isinstance(refused, Exception) and "refused by the test" in str(refused)
    contents = [e.content for e in quiet_vault.conversations.events("merged")]
    assert contents == ["Good one.", "Good two."]  # each exactly once
    assert held.commits() == 2  # the failed merged call left nothing: the retries share the same transaction


def test_an_invalid_event_is_refused_at_once_naming_its_field(quiet_vault: Vault) -> None:
    with pytest.raises(ValidationError) as refused:
        quiet_vault.events.submit(turn("   "))
    assert refused.value.field == "content"  # not events[0].content
    assert quiet_vault.conversations.events("merged") == []


def test_identical_turns_stay_two_events_and_a_resent_id_stays_one(quiet_vault: Vault) -> None:
    held = Held(quiet_vault)
    events = [turn("ok"), turn("ok"), turn("Noted.", external_id="msg-1"), turn("Noted.", external_id="msg-1")]
    futures = []
    for event in events:
        futures.append(quiet_vault.events.submit(event))
        time.sleep(0.002)  # two turns sent at two moments
    held.gate.set()
    plain_a, plain_b, sent, resent = _outcomes(futures)
    assert isinstance(plain_a, IngestResult) and isinstance(plain_b, IngestResult)
    assert plain_a.event_id != plain_b.event_id
    assert (plain_a.status, plain_b.status) == ("queued", "queued")
    assert isinstance(sent, IngestResult) and isinstance(resent, IngestResult)
    assert resent == IngestResult(sent.event_id, "duplicate")
    assert len(quiet_vault.conversations.events("merged")) == 3


def test_merged_and_other_writes_keep_their_order_and_their_own_results(quiet_vault: Vault) -> None:
    writer = quiet_vault.store.writer
    assert writer is not None
    held = Held(quiet_vault)
    first = quiet_vault.events.submit(turn("Before the count."))
    count = writer.submit(lambda tx: int(tx.scalar("SELECT COUNT(*) FROM events WHERE conversation_id = 'merged'")))
    second = quiet_vault.events.submit(turn("After the count."))
    held.gate.set()
    assert count.result(20) == 1  # the write between them saw the first event and not the second
    assert first.result(20).event_id < second.result(20).event_id


def test_a_caller_that_leaves_still_gets_its_event_written(quiet_vault: Vault) -> None:
    vault = quiet_vault
    held = Held(vault)

    async def go() -> None:
        task = asyncio.create_task(committed(vault.events.submit(turn("Written anyway."))))
        await asyncio.sleep(0.1)
        task.cancel()  # the client went away while its write waited
        held.gate.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.to_thread(_wait_written, vault)

    asyncio.run(go())
    assert [e.content for e in vault.conversations.events("merged")] == ["Written anyway."]


def _wait_written(vault: Vault) -> None:
    deadline = time.monotonic() + 10
    while not vault.conversations.events("merged"):
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
    stored = {e.id: e.content for n in range(16) for e in vault.conversations.events(f"c{n}")}
    assert stored == acknowledged
