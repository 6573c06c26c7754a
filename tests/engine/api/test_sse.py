"""The change stream over real HTTP on loopback: connected, changes, replay, reset, heartbeat,
the guard, shutdown — and, in process, a client too slow to keep up."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine import Vault
from engine.api.app import create_app
from engine.api.server import EndpointServer
from engine.api.sse import StreamHub, StreamSettings
from engine.config import EndpointSettings, Settings
from engine.facts.pipeline import Pipeline
from tests.engine.api.conftest import assert_error
from tests.plugins.parser_pdf import garbage_with_header

HEARTBEAT_S = 0.2


@dataclass
class Event:
    event: str
    data: dict[str, Any]
    id: int | None = None


@dataclass
class Reader:
    """One SSE client on a background thread; parsed events arrive on ``events``."""

    url: str
    headers: dict[str, str]
    events: queue.Queue[Event] = field(default_factory=queue.Queue)
    status: int = 0
    content_type: str = ""
    ended_cleanly: bool = False
    error: BaseException | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _opened: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Reader:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._opened.wait(10), "the stream did not open"
        return self

    def _run(self) -> None:
        try:
            with (
                httpx.Client(trust_env=False, timeout=httpx.Timeout(10, read=None)) as http,
                http.stream("GET", self.url, headers=self.headers) as response,
            ):
                self.status = response.status_code
                self.content_type = response.headers.get("content-type", "")
                self._opened.set()
                fields: dict[str, str] = {}
                for line in response.iter_lines():
                    if self._stop.is_set():
                        return
                    if line == "":
                        if "event" in fields:
                            raw_id = fields.get("id")
                            self.events.put(
                                Event(
                                    fields["event"],
                                    json.loads(fields.get("data", "{}")),
                                    int(raw_id) if raw_id is not None else None,
                                )
                            )
                        fields = {}
                        continue
                    name, _, value = line.partition(": ")
                    fields[name] = value
                self.ended_cleanly = True
        except BaseException as exc:
            self.error = exc
        finally:
            self._opened.set()

    def next(self, kind: str | None = None, timeout: float = 10.0) -> Event:
        """The next event (of ``kind``, skipping others)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {kind or 'event'} within {timeout} s"
            try:
                event = self.events.get(timeout=remaining)
            except queue.Empty:
                continue
            if kind is None or event.event == kind:
                return event

    def until(self, predicate: Callable[[Event], bool], timeout: float = 20.0) -> list[Event]:
        """Every event up to and including the first that satisfies ``predicate``."""
        seen: list[Event] = []
        while True:
            seen.append(self.next(timeout=timeout))
            if predicate(seen[-1]):
                return seen

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def join(self, timeout: float) -> bool:
        assert self._thread is not None
        self._thread.join(timeout)
        return not self._thread.is_alive()


@dataclass
class Live:
    server: EndpointServer
    vault: Vault
    token: str

    @property
    def url(self) -> str:
        return f"{self.server.address}/v6/events/stream"

    def auth(self, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", **extra}

    def reader(self, **headers: str) -> Reader:
        return Reader(self.url, self.auth(**headers)).start()

    def ingest(self, content: str, conversation: str = "sse") -> int:
        with httpx.Client(trust_env=False, timeout=10) as http:
            response = http.post(
                f"{self.server.address}/v6/ingest",
                json={"conversation_id": conversation, "content": content},
                headers=self.auth(),
            )
        assert response.status_code == 202, response.text
        return int(response.json()["event_id"])


def serve(vault: Vault, **endpoint: Any) -> EndpointServer:
    token = vault.endpoint_token()
    settings = EndpointSettings(**endpoint) if endpoint else None
    server = EndpointServer(
        lambda port: create_app(
            vault,
            token=token,
            port=port,
            settings=settings,
            streams=StreamSettings(heartbeat_s=HEARTBEAT_S),
        ),
        0,
    )
    server.start()
    return server


@pytest.fixture
def live(vault: Vault) -> Iterator[Live]:
    server = serve(vault)
    try:
        yield Live(server, vault, vault.endpoint_token())
    finally:
        server.stop()


def test_connected_then_every_change_of_an_ingest(live: Live) -> None:
    reader = live.reader()
    try:
        assert reader.status == 200 and reader.content_type.startswith("text/event-stream")
        connected = reader.next()
        assert connected.event == "connected"
        assert connected.data["seq"] == live.vault.changes.last_seq == connected.id
        event_id = live.ingest("I live in Lisbon and I work as a nurse.")
        created = reader.next("event.created")
        assert created.data["object_id"] == event_id and created.data["conversation_id"] == "sse"
        assert created.id == created.data["seq"] and created.data["at"].endswith("Z")
        seen = reader.until(lambda e: e.event == "memory.created")
        memory = seen[-1]
        assert live.vault.facts.get(memory.data["object_id"]).event_id == event_id
        ids = [created.id, *(e.id for e in seen if e.id is not None)]
        assert ids == sorted(set(ids))  # strictly increasing, nothing twice
    finally:
        reader.close()


# -- every kind of change ----------------------------------------------------------------------------
@dataclass
class Stream:
    """The events one reader has received, searchable by kind and object, in arrival order."""

    reader: Reader
    events: list[Event] = field(default_factory=list)

    def find(self, kind: str, object_id: int | None = None, timeout: float = 30.0) -> Event:
        """The first ``kind`` event (about ``object_id``) received so far or arriving within ``timeout``."""

        def wanted(event: Event) -> bool:
            return event.event == kind and (object_id is None or event.data.get("object_id") == object_id)

        for event in self.events:
            if wanted(event):
                return event
        return self._read_until(wanted, timeout)

    def through(self, seq: int, timeout: float = 30.0) -> None:
        """Read on until the change numbered ``seq`` has arrived."""
        if not any(event.id is not None and event.id >= seq for event in self.events):
            self._read_until(lambda event: event.id is not None and event.id >= seq, timeout)

    def _read_until(self, wanted: Callable[[Event], bool], timeout: float) -> Event:
        deadline = time.monotonic() + timeout
        while True:
            event = self.reader.next(timeout=max(0.01, deadline - time.monotonic()))
            self.events.append(event)
            if wanted(event):
                return event


def assert_framed(event: Event, kind: str, object_id: int) -> None:
    """A change frame: its SSE id is the feed's sequence number, and it names the object it is about."""
    assert event.event == kind
    assert event.id is not None and event.id == event.data["seq"]
    assert event.data["type"] == kind and event.data["object_id"] == object_id
    assert event.data["at"].endswith("Z")


def test_every_kind_of_change_arrives_with_its_id_and_a_resume_replays_the_missed(live: Live) -> None:
    """Each change DESIGN §8 lists for the stream, caused through the endpoint: the conflict's and the
    document's live, the rest while the client is away and replayed when it comes back with Last-Event-ID."""
    with httpx.Client(base_url=live.server.address, headers=live.auth(), trust_env=False, timeout=30) as http:
        first = Stream(live.reader())
        try:
            first.find("connected")
            hanoi_event = live.ingest("I live in Hanoi.")
            hanoi = first.find("memory.created").data["object_id"]
            assert http.get(f"/v6/facts/{hanoi}").json()["event_id"] == hanoi_event
            live.ingest("I live in Paris.")
            conflict = first.find("conflict.created")
            paris = next(f for f in conflict.data["fact_ids"] if f != hanoi)
            assert_framed(conflict, "conflict.created", http.get("/v6/conflicts").json()["conflicts"][0]["id"])
            assert_framed(first.find("memory.created", paris), "memory.created", paris)
            assert_framed(first.find("memory.updated", hanoi), "memory.updated", hanoi)  # now contested

            resolved = http.post(f"/v6/conflicts/{conflict.data['object_id']}/resolve", json={"winner_id": paris})
            assert resolved.status_code == 200, resolved.text
            assert_framed(first.find("conflict.resolved"), "conflict.resolved", conflict.data["object_id"])
            superseded = first.find("memory.superseded", hanoi)
            assert_framed(superseded, "memory.superseded", hanoi)
            assert superseded.data["superseded_by"] == paris

            upload = http.post(
                "/v6/documents", json={"name": "trip.md", "content": "# Trip\n\nWe fly to Hanoi in May."}
            )
            assert upload.status_code == 201, upload.text
            document = upload.json()["document_id"]
            assert_framed(first.find("document.ready", document), "document.ready", document)
            last_seen = max(e.id for e in first.events if e.id is not None)
        finally:
            first.reader.close()

        # Away: what happens now reaches the client only by the replay.
        assert http.post(f"/v6/facts/{paris}/tier", json={"tier": "hot", "pinned": True}).status_code == 200
        assert http.delete(f"/v6/facts/{paris}").status_code == 200  # what curl -X DELETE sends: no type, no body
        blank = http.post("/v6/documents", json={"name": "blank.txt", "content": " \n\n \t \n"})
        assert blank.status_code == 201 and blank.json()["status"] == "degraded", blank.text
        scan = http.post("/v6/documents", files={"file": ("scan.pdf", garbage_with_header(), "application/pdf")})
        assert scan.status_code == 422, scan.text
        quarantined = scan.json()["error"]["details"]["quarantine_id"]
        assert live.vault.jobs.wait_idle(120)
        missed, complete = live.vault.changes.since(last_seen)
        assert complete

        again = Stream(live.reader(**{"Last-Event-ID": str(last_seen)}))
        try:
            connected = again.find("connected")
            assert connected.id == last_seen and connected.data["resumed_from"] == last_seen
            assert_framed(again.find("memory.updated", paris), "memory.updated", paris)
            assert again.find("memory.updated", paris).data["reason"] == "tier"
            assert_framed(again.find("memory.deleted", paris), "memory.deleted", paris)
            degraded = blank.json()["document_id"]
            assert_framed(again.find("document.degraded", degraded), "document.degraded", degraded)
            assert_framed(again.find("document.quarantined", quarantined), "document.quarantined", quarantined)
            again.through(missed[-1].seq)
            replayed = [e for e in again.events if e.event != "connected"]
            # exactly the feed's record of what was missed: in order, each once, nothing from before the resume point
            assert [(e.id, e.event, e.data["object_id"]) for e in replayed] == [
                (c.seq, c.type, c.object_id) for c in missed
            ]
            assert all(e.id is not None and e.id > last_seen for e in replayed)
            # and the stream goes on live after the replay
            assert http.delete(f"/v6/documents/{document}").status_code == 200
            assert_framed(again.find("document.deleted", document), "document.deleted", document)
        finally:
            again.reader.close()


def test_a_job_that_fails_for_good_arrives_with_its_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault of Cairn's own (here a stand-in bug in the analysis) fails the enrichment job; parked, it is a
    ``job.failed`` — a model's bad answer never gets this far, it falls back to the rule path."""

    def broken(self: Pipeline, *args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the analysis")

    monkeypatch.setattr(Pipeline, "analyse", broken)
    settings = Settings().updated(
        {"llm.provider": "simple", "embedder.provider": "hashing", "jobs.max_attempts": 1, "jobs.backoff_s": 0.02}
    )
    with Vault.open(tmp_path / "vault", settings=settings) as vault:
        server = serve(vault)
        live = Live(server, vault, vault.endpoint_token())
        stream = Stream(live.reader())
        try:
            stream.find("connected")
            event_id = live.ingest("I live in Hanoi.")
            failed = stream.find("job.failed")
            with httpx.Client(trust_env=False, timeout=10) as http:
                jobs = http.get(f"{server.address}/v6/jobs", headers=live.auth()).json()
            (parked,) = jobs["failures"]
            assert parked["payload"]["event_id"] == event_id
            assert_framed(failed, "job.failed", parked["id"])
            assert failed.data["kind"] == "enrich" and "RuntimeError: a bug in the analysis" in failed.data["error"]
        finally:
            stream.reader.close()
            server.stop()


def test_reconnecting_with_last_event_id_replays_what_was_missed(live: Live) -> None:
    first = live.reader()
    live.ingest("First turn.")
    last = first.next("event.created")
    first.close()
    missed = [live.ingest(f"Missed turn {i}.") for i in range(3)]
    assert live.vault.jobs.wait_idle(120)
    for resume in (
        {"Last-Event-ID": str(last.id)},  # what EventSource sends
        {},  # ?since= for clients that cannot set headers
    ):
        url_reader = live.reader(**resume) if resume else Reader(f"{live.url}?since={last.id}", live.auth()).start()
        try:
            connected = url_reader.next()
            assert connected.event == "connected" and connected.id == last.id
            assert connected.data["resumed_from"] == last.id
            replayed = url_reader.until(
                lambda e, target=missed[-1]: e.event == "event.created" and e.data["object_id"] == target
            )
            assert all(e.id is not None and e.id > (last.id or 0) for e in replayed)
            created = [e.data["object_id"] for e in replayed if e.event == "event.created"]
            assert created == missed
            assert "reset" not in [e.event for e in replayed]
        finally:
            url_reader.close()


def test_reset_when_the_backlog_no_longer_reaches_back(live: Live) -> None:
    old = live.vault.changes.last_seq
    for _ in range(10_001):  # the feed keeps the last 10 000 changes
        live.vault.changes.emit("test.noise")
    reader = live.reader(**{"Last-Event-ID": str(old)})
    try:
        connected = reader.next()
        reset = reader.next()
        assert (reset.event, reset.data["reason"]) == ("reset", "backlog")
        assert connected.id == reset.id == live.vault.changes.last_seq
        event_id = live.ingest("After the reset.")  # the stream goes on from now
        assert reader.next("event.created").data["object_id"] == event_id
    finally:
        reader.close()


def test_reset_when_the_id_is_ahead_of_the_feed(live: Live) -> None:
    """After a restart the feed counts from 0 again; an old id is then 'in the future'."""
    reader = live.reader(**{"Last-Event-ID": str(live.vault.changes.last_seq + 500)})
    try:
        reader.next("connected")
        assert reader.next().data["reason"] == "unknown_id"
    finally:
        reader.close()


def test_heartbeats_keep_an_idle_stream_alive(live: Live) -> None:
    reader = live.reader()
    try:
        reader.next("connected")
        beats = [reader.next("heartbeat", timeout=60), reader.next("heartbeat", timeout=60)]
        assert all(b.id is None and b.data["seq"] == live.vault.changes.last_seq for b in beats)
    finally:
        reader.close()


def test_the_guard_applies_to_the_stream(live: Live) -> None:
    url = live.url
    with httpx.Client(trust_env=False, timeout=5) as http:
        assert_error(http.get(url), 401, "unauthorized")
        assert_error(http.get(url, headers=live.auth(Host="evil.com")), 421)
        assert_error(http.get(url, headers=live.auth(Origin="http://evil.com")), 403)
        bad = http.get(url, headers=live.auth(**{"Last-Event-ID": "yesterday"}))
        assert assert_error(bad, 400)["details"]["field"] == "Last-Event-ID"  # type: ignore[index]


def test_streams_use_their_own_pool(vault: Vault) -> None:
    server = serve(vault, max_streams=1)
    live = Live(server, vault, vault.endpoint_token())
    reader = live.reader()
    try:
        reader.next("connected")
        with httpx.Client(trust_env=False, timeout=5) as http:
            assert_error(http.get(live.url, headers=live.auth()), 429, "too_many_requests")
            jobs = http.get(f"{server.address}/v6/jobs", headers=live.auth())
            assert jobs.status_code == 200  # ordinary requests are not starved by the stream
    finally:
        reader.close()
        server.stop()


def test_shutdown_ends_open_streams_at_once(vault: Vault) -> None:
    server = serve(vault)
    live = Live(server, vault, vault.endpoint_token())
    readers = [live.reader(), live.reader()]
    for reader in readers:
        reader.next("connected")
    hub: StreamHub = server.app.state.streams
    assert hub.open_streams == 2
    server.stop()
    for reader in readers:
        assert reader.join(30)
        # a complete response, no reset: the hub ended them, instead of the graceful-shutdown timeout cutting them
        assert reader.ended_cleanly and reader.error is None
    assert hub.open_streams == 0


def test_a_client_that_leaves_is_unsubscribed(live: Live) -> None:
    hub: StreamHub = live.server.app.state.streams
    reader = live.reader()
    reader.next("connected")
    assert hub.open_streams == 1
    reader.close()
    deadline = time.monotonic() + 30
    while hub.open_streams and time.monotonic() < deadline:
        live.vault.changes.emit("test.noise")  # writing is how a server notices, at the latest
        time.sleep(0.05)
    assert hub.open_streams == 0


def test_a_slow_client_gets_reset_and_is_disconnected(vault: Vault) -> None:
    """The client stops reading: its queue stays bounded, then it gets `reset` and the end."""
    hub = StreamHub(vault.changes, StreamSettings(heartbeat_s=30, queue_limit=50))

    async def go() -> tuple[list[bytes], int, bool]:
        response = hub.response(None)
        reading = asyncio.Event()  # the client reads only while this is set
        reading.set()
        bodies: list[bytes] = []
        more: list[bool] = []

        async def send(message: dict[str, Any]) -> None:
            await reading.wait()
            if message["type"] == "http.response.body":
                bodies.append(message["body"])
                more.append(bool(message.get("more_body")))

        async def receive() -> dict[str, Any]:
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}

        task = asyncio.create_task(response({"type": "http"}, receive, send))
        while not bodies:
            await asyncio.sleep(0.01)
        reading.clear()  # the client stalls …
        vault.changes.emit("test.first")  # … the stream blocks writing this one …
        await asyncio.sleep(0.05)
        for i in range(200):  # … while many more changes arrive
            vault.changes.emit("test.noise", n=i)
        await asyncio.sleep(0.1)
        peak = max(q.size for q in hub._queues)  # what the stalled stream holds
        reading.set()
        await asyncio.wait_for(task, 5)
        return bodies, peak, more[-1]

    bodies, peak, last_more = asyncio.run(go())
    assert peak <= 50  # bounded, although 200 changes arrived
    text = b"".join(bodies).decode()
    assert text.startswith("id: ") and "event: connected" in text
    assert "event: test.first" in text
    assert 'event: reset\ndata: {"reason":"overflow"' in text
    assert text.count("event: test.noise") == 0  # dropped, not delivered late
    assert last_more is False  # the response was ended
    assert hub.open_streams == 0


def test_a_client_that_accepts_nothing_is_dropped_after_the_write_timeout(vault: Vault) -> None:
    hub = StreamHub(vault.changes, StreamSettings(heartbeat_s=0.05, write_timeout_s=0.2))

    async def go() -> int:
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if message["type"] == "http.response.body":
                await asyncio.sleep(3600)  # the socket's buffers are full: nothing gets through

        async def receive() -> dict[str, Any]:
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}

        # without the write timeout the response would wait on the stuck send for an hour: wait_for would fail
        await asyncio.wait_for(hub.response(None)({"type": "http"}, receive, send), 60)
        return len(sent)

    messages = asyncio.run(go())
    assert messages == 2  # the response start, then the first frame that never got through
    assert hub.open_streams == 0
