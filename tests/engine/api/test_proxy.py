"""The memory proxy, driven by the real ``ollama`` and ``openai`` clients against a served endpoint whose upstream is
the fake Ollama or the fake OpenAI-compatible server (both real HTTP on loopback)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import ollama
import openai
import pytest

from engine import Vault
from engine.api.proxy.dialects import MEMORY_PREAMBLE
from engine.changes import Change
from engine.events import Event, EventIn
from tests.engine.api.conftest import Served, assert_error
from tests.fakes.ollama import FakeOllama
from tests.fakes.openai_server import FakeOpenAI

TIMEOUT = httpx.Timeout(20, connect=2)
REMEMBERED = "My sister Ann lives in Lisbon and she loves sailing."
QUESTION = "Where does my sister Ann live?"


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait for something the server does after its answer (the reply is recorded once the answer is complete)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def turns(vault: Vault, conversation_id: str, count: int) -> list[Event]:
    """The conversation's events, once there are ``count`` of them."""
    wait_until(lambda: len(vault.conversations.events(conversation_id)) >= count)
    events = vault.conversations.events(conversation_id)
    assert len(events) == count, [(e.role, e.content) for e in events]
    return events


def proxy_events(vault: Vault) -> list[Event]:
    rows = vault.store.query("SELECT DISTINCT conversation_id FROM events WHERE source = 'proxy'")
    return [e for (cid,) in rows for e in vault.conversations.events(cid)]


def settle(served: Served) -> None:
    """Every request has finished, recording included (the guard's slots are free again)."""
    guard = served.server.app.middleware_stack
    wait_until(lambda: guard.requests.in_use == 0)


@pytest.fixture
def remembered(vault: Vault) -> Vault:
    """A vault that knows where Ann lives (from an earlier conversation)."""
    vault.events.ingest(EventIn(conversation_id="earlier", content=REMEMBERED))
    vault.jobs.wait_idle(30)
    return vault


@pytest.fixture
def via_ollama(remembered: Vault, fake_ollama: FakeOllama, served: Served) -> Served:
    remembered.update_settings({"proxy.upstream": fake_ollama.url})
    return served


@pytest.fixture
def via_openai(remembered: Vault, fake_openai: FakeOpenAI, served: Served) -> Served:
    remembered.update_settings({"proxy.upstream": fake_openai.url})
    return served


def ollama_client(served: Served, conversation: str | None = None, *, token: bool = True) -> ollama.Client:
    headers = {"X-Cairn-Conversation": conversation} if conversation else {}
    if token:
        headers |= served.auth()
    return ollama.Client(host=served.url, headers=headers, timeout=TIMEOUT)


def openai_client(served: Served, conversation: str | None = None) -> openai.OpenAI:
    headers = {"X-Cairn-Conversation": conversation} if conversation else None
    return openai.OpenAI(
        base_url=f"{served.url}/v1", api_key=served.token, default_headers=headers, timeout=20, max_retries=0
    )


def system_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m.get("role") == "system"]


# -- recording -------------------------------------------------------------------------------------------------
def test_ollama_chat_records_both_turns_under_the_header_conversation(
    via_ollama: Served, fake_ollama: FakeOllama
) -> None:
    fake_ollama.queue_chat("Ann lives in Lisbon.")
    answer = ollama_client(via_ollama, "trip-planning").chat(
        model="llama3.2", messages=[{"role": "user", "content": QUESTION}], stream=False
    )

    assert answer.message.content == "Ann lives in Lisbon."
    user, reply = turns(via_ollama.vault, "trip-planning", 2)
    assert (user.role, user.content, user.source) == ("user", QUESTION, "proxy")
    assert (reply.role, reply.content, reply.source) == ("assistant", "Ann lives in Lisbon.", "proxy")
    assert reply.author == "llama3.2"


def test_without_the_header_a_conversation_keeps_one_derived_id(via_ollama: Served, fake_ollama: FakeOllama) -> None:
    client = ollama_client(via_ollama)
    opening = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello there"}]
    fake_ollama.queue_chat("Hi!", "Fine, thanks.")
    client.chat(model="llama3.2", messages=opening, stream=False)
    settle(via_ollama)
    later = [*opening, {"role": "assistant", "content": "Hi!"}, {"role": "user", "content": "How are you?"}]
    client.chat(model="llama3.2", messages=later, stream=False)
    settle(via_ollama)

    events = proxy_events(via_ollama.vault)
    assert {e.conversation_id for e in events} == {events[0].conversation_id}
    assert events[0].conversation_id.startswith("chat-")
    assert [(e.role, e.content) for e in events] == [
        ("user", "Hello there"),
        ("assistant", "Hi!"),
        ("user", "How are you?"),
        ("assistant", "Fine, thanks."),
    ]
    # another conversation (another opening) gets another id
    fake_ollama.queue_chat("Hello.")
    client.chat(model="llama3.2", messages=[{"role": "user", "content": "Something else"}], stream=False)
    settle(via_ollama)
    assert len({e.conversation_id for e in proxy_events(via_ollama.vault)}) == 2


def test_a_resent_user_turn_is_recorded_once(via_ollama: Served, fake_ollama: FakeOllama) -> None:
    client = ollama_client(via_ollama, "retry")
    for reply in ("First try.", "Second try."):  # the app's "regenerate": the same turn sent again
        fake_ollama.queue_chat(reply)
        client.chat(model="llama3.2", messages=[{"role": "user", "content": "Tell me a joke"}], stream=False)
        settle(via_ollama)

    events = via_ollama.vault.conversations.events("retry")
    assert [(e.role, e.content) for e in events] == [
        ("user", "Tell me a joke"),
        ("assistant", "First try."),
        ("assistant", "Second try."),
    ]


# -- injection -------------------------------------------------------------------------------------------------
def test_recalled_memory_reaches_the_upstream_as_a_system_message(
    via_ollama: Served, fake_ollama: FakeOllama
) -> None:
    messages = [{"role": "system", "content": "You are a travel agent."}, {"role": "user", "content": QUESTION}]
    ollama_client(via_ollama, "inject").chat(model="llama3.2", messages=messages, stream=False)

    sent = fake_ollama.requests_to("/api/chat")[-1].body
    assert sent["messages"][0] == messages[0]  # the app's own instructions still come first
    assert sent["messages"][-1] == messages[-1]
    memory = sent["messages"][1]
    assert memory["role"] == "system"
    assert memory["content"].startswith(MEMORY_PREAMBLE)
    assert "Lisbon" in memory["content"]


def test_generate_gets_memory_in_its_system_text(via_ollama: Served, fake_ollama: FakeOllama) -> None:
    answer = ollama_client(via_ollama, "gen").generate(model="llama3.2", prompt=QUESTION, system="Be brief.")

    sent = fake_ollama.requests_to("/api/generate")[-1].body
    assert sent["prompt"] == QUESTION
    assert sent["system"].startswith("Be brief.\n\n" + MEMORY_PREAMBLE)
    assert "Lisbon" in sent["system"]
    user, reply = turns(via_ollama.vault, "gen", 2)
    assert (user.content, reply.content) == (QUESTION, answer.response)


def test_the_answer_says_whether_memory_was_used(via_ollama: Served, fake_ollama: FakeOllama) -> None:
    body = {"model": "llama3.2", "messages": [{"role": "user", "content": QUESTION}], "stream": False}
    with httpx.Client(base_url=via_ollama.url, headers=via_ollama.auth(), timeout=TIMEOUT) as http:
        assert http.post("/api/chat", json=body).headers["x-cairn-memory"] == "injected"
        via_ollama.vault.update_settings({"proxy.mode": "record"})
        assert http.post("/api/chat", json=body).headers["x-cairn-memory"] == "recorded"


# -- streaming -------------------------------------------------------------------------------------------------
def test_ollama_stream_passes_through_in_order_and_the_reply_is_recorded(
    via_ollama: Served, fake_ollama: FakeOllama
) -> None:
    reply = "Lisbon, on the Tagus, where Ann sails every weekend."
    fake_ollama.queue_chat(reply)
    chunks = list(
        ollama_client(via_ollama, "streamed").chat(
            model="llama3.2", messages=[{"role": "user", "content": QUESTION}], stream=True
        )
    )

    assert len(chunks) > 5
    assert "".join(c.message.content for c in chunks) == reply
    assert [c.done for c in chunks] == [False] * (len(chunks) - 1) + [True]
    user, recorded = turns(via_ollama.vault, "streamed", 2)
    assert recorded.content == reply


def test_openai_client_chat_records_and_injects(via_openai: Served, fake_openai: FakeOpenAI) -> None:
    fake_openai.queue_chat("Ann lives in Lisbon.")
    answer = openai_client(via_openai, "oa").chat.completions.create(
        model="qwen2.5-7b-instruct", messages=[{"role": "user", "content": QUESTION}]
    )

    assert answer.choices[0].message.content == "Ann lives in Lisbon."
    sent = fake_openai.requests_to("/v1/chat/completions")[-1]
    assert any("Lisbon" in text for text in system_texts(sent.body))
    assert sent.headers.get("authorization") is None  # Cairn's token stays with Cairn
    user, reply = turns(via_openai.vault, "oa", 2)
    assert (user.content, reply.content) == (QUESTION, "Ann lives in Lisbon.")


def test_openai_stream_passes_through_in_order_and_the_reply_is_recorded(
    via_openai: Served, fake_openai: FakeOpenAI
) -> None:
    reply = "Ann lives in Lisbon and sails on the Tagus on Sundays."
    fake_openai.queue_chat(reply)
    stream = openai_client(via_openai, "oa-stream").chat.completions.create(
        model="qwen2.5-7b-instruct",
        messages=[{"role": "user", "content": [{"type": "text", "text": QUESTION}]}],
        stream=True,
    )
    pieces = [chunk.choices[0].delta.content or "" for chunk in stream]

    assert len(pieces) > 3
    assert "".join(pieces) == reply
    user, recorded = turns(via_openai.vault, "oa-stream", 2)
    assert (user.content, recorded.content) == (QUESTION, reply)


# -- the other routes, and errors ------------------------------------------------------------------------------
def test_ollama_model_routes_pass_through(via_ollama: Served, fake_ollama: FakeOllama) -> None:
    client = ollama_client(via_ollama)
    assert [m.model for m in client.list().models] == list(fake_ollama.models)
    assert client.show("llama3.2").details.family == "llama"  # type: ignore[union-attr]
    vectors = client.embed(model="nomic-embed-text", input=["hello world"]).embeddings
    assert vectors[0] == pytest.approx(fake_ollama.embedding("hello world"), abs=1e-6)
    with httpx.Client(base_url=via_ollama.url, headers=via_ollama.auth(), timeout=TIMEOUT) as http:
        assert http.get("/api/version").json() == {"version": fake_ollama.version}
    assert proxy_events(via_ollama.vault) == []


def test_openai_model_routes_pass_through(via_openai: Served, fake_openai: FakeOpenAI) -> None:
    client = openai_client(via_openai)
    assert [m.id for m in client.models.list()] == fake_openai.models
    vector = client.embeddings.create(model=fake_openai.models[1], input="hello world").data[0].embedding
    assert vector == pytest.approx(fake_openai.embedding("hello world"), abs=1e-6)


def test_upstream_errors_pass_through_unchanged(via_ollama: Served, fake_ollama: FakeOllama) -> None:
    with pytest.raises(ollama.ResponseError) as raised:
        ollama_client(via_ollama).chat(model="not-installed", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 404
    assert raised.value.error == 'model "not-installed" not found, try pulling it first'

    fake_ollama.fail_next(503, "server busy", path="/api/chat")
    body = {"model": "llama3.2", "messages": [{"role": "user", "content": "hi"}], "stream": False}
    with httpx.Client(base_url=via_ollama.url, headers=via_ollama.auth(), timeout=TIMEOUT) as http:
        response = http.post("/api/chat", json=body)
    assert response.status_code == 503
    assert response.json() == {"error": "server busy"}


def test_openai_upstream_errors_pass_through_unchanged(via_openai: Served, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(429, "Rate limit reached", path="/v1/chat/completions")
    with pytest.raises(openai.RateLimitError) as raised:
        openai_client(via_openai).chat.completions.create(
            model="qwen2.5-7b-instruct", messages=[{"role": "user", "content": "hi"}]
        )
    assert raised.value.status_code == 429
    assert raised.value.message.endswith("Rate limit reached")


def test_an_unreachable_upstream_is_a_502_in_the_clients_protocol(
    via_ollama: Served, fake_ollama: FakeOllama
) -> None:
    fake_ollama.stop()
    with pytest.raises(ollama.ResponseError) as raised:
        ollama_client(via_ollama).chat(model="llama3.2", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 502
    assert fake_ollama.url in raised.value.error


def test_without_an_upstream_the_proxy_says_what_to_set(served: Served) -> None:
    with pytest.raises(openai.APIStatusError) as raised:
        openai_client(served).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 503
    assert "proxy.upstream" in raised.value.message


def test_ollama_clients_before_an_openai_upstream_get_a_clear_error(via_openai: Served) -> None:
    with pytest.raises(ollama.ResponseError) as raised:
        ollama_client(via_openai).chat(model="qwen2.5-7b-instruct", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 501
    assert "/v1" in raised.value.error


# -- Cairn failing ---------------------------------------------------------------------------------------------
def test_a_failing_recall_still_forwards_and_says_so(
    via_ollama: Served, fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_recall(request: object) -> object:
        raise RuntimeError("the index is gone")

    monkeypatch.setattr(via_ollama.vault, "recall", broken_recall)
    seen: list[Change] = []
    via_ollama.vault.changes.subscribe(seen.extend)
    fake_ollama.queue_chat("Still here.")
    body = {"model": "llama3.2", "messages": [{"role": "user", "content": QUESTION}], "stream": False}
    with httpx.Client(base_url=via_ollama.url, headers=via_ollama.auth(), timeout=TIMEOUT) as http:
        response = http.post("/api/chat", json=body, headers={"X-Cairn-Conversation": "degraded"})

    assert response.status_code == 200
    assert response.json()["message"]["content"] == "Still here."
    assert response.headers["x-cairn-memory"] == "unavailable"
    assert system_texts(fake_ollama.requests_to("/api/chat")[-1].body) == []
    warnings = [c for c in seen if c.type == "proxy.warning"]
    assert len(warnings) == 1
    assert "recall failed (RuntimeError)" in warnings[0].data["warnings"][0]
    assert "the index is gone" not in json.dumps(warnings[0].as_dict())  # the type, never the text
    assert [e.content for e in turns(via_ollama.vault, "degraded", 2)] == [QUESTION, "Still here."]


def test_a_failing_recording_still_answers(
    via_ollama: Served, fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    coalescer = via_ollama.server.app.state.ingest

    async def broken_ingest(event: EventIn) -> object:
        raise OSError("disk full")

    monkeypatch.setattr(coalescer, "ingest", broken_ingest)
    fake_ollama.queue_chat("Answered anyway.")
    answer = ollama_client(via_ollama, "unrecorded").chat(
        model="llama3.2", messages=[{"role": "user", "content": "hi"}], stream=False
    )
    settle(via_ollama)

    assert answer.message.content == "Answered anyway."
    assert via_ollama.vault.conversations.events("unrecorded") == []
    assert via_ollama.server.app.proxy.memory.health.failures == 1


# -- modes -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mode", "records", "injects"),
    [("off", False, False), ("record", True, False), ("inject", False, True), ("both", True, True)],
)
def test_modes(
    via_ollama: Served, fake_ollama: FakeOllama, mode: str, records: bool, injects: bool
) -> None:
    via_ollama.vault.update_settings({"proxy.mode": mode})
    ollama_client(via_ollama, f"mode-{mode}").chat(
        model="llama3.2", messages=[{"role": "user", "content": QUESTION}], stream=False
    )
    settle(via_ollama)

    sent = fake_ollama.requests_to("/api/chat")[-1].body
    assert any("Lisbon" in text for text in system_texts(sent)) is injects
    assert len(via_ollama.vault.conversations.events(f"mode-{mode}")) == (2 if records else 0)


# -- auth ------------------------------------------------------------------------------------------------------
def test_every_proxy_route_needs_the_token(via_ollama: Served) -> None:
    with httpx.Client(base_url=via_ollama.url, timeout=TIMEOUT) as http:
        for method, path in [
            ("POST", "/api/chat"),
            ("POST", "/api/generate"),
            ("GET", "/api/tags"),
            ("POST", "/api/show"),
            ("POST", "/api/embed"),
            ("GET", "/api/version"),
            ("POST", "/v1/chat/completions"),
            ("GET", "/v1/models"),
            ("POST", "/v1/embeddings"),
        ]:
            body = {"model": "llama3.2"} if method == "POST" else None
            assert_error(http.request(method, path, json=body), 401, "unauthorized")
            assert_error(
                http.request(method, path, json=body, headers={"Authorization": "Bearer wrong"}), 401, "unauthorized"
            )


def test_tokenless_ollama_admission_is_off_by_default_and_only_opens_ollama_routes(
    via_ollama: Served, fake_ollama: FakeOllama
) -> None:
    client = ollama_client(via_ollama, "tokenless", token=False)
    with pytest.raises(ollama.ResponseError) as refused:
        client.list()
    assert refused.value.status_code == 401

    via_ollama.vault.update_settings({"proxy.ollama_without_token": True})
    fake_ollama.queue_chat("Hello without a token.")
    answer = client.chat(model="llama3.2", messages=[{"role": "user", "content": "hi"}], stream=False)
    assert answer.message.content == "Hello without a token."
    assert [m.model for m in client.list().models] == list(fake_ollama.models)

    with httpx.Client(base_url=via_ollama.url, timeout=TIMEOUT) as http:
        assert_error(http.get("/v1/models"), 401, "unauthorized")
        assert_error(http.post("/v6/recall", json={"conversation_id": "c", "query": "q"}), 401, "unauthorized")
        # the guard's other checks still hold on the opened routes
        assert_error(http.get("/api/tags", headers={"Host": "evil.com"}), 421)
        assert_error(http.get("/api/tags", headers={"Origin": "http://evil.com"}), 403)
        assert_error(http.post("/api/chat", content=b"{}", headers={"Content-Type": "text/plain"}), 415)

    via_ollama.vault.update_settings({"proxy.ollama_without_token": False})
    with pytest.raises(ollama.ResponseError) as closed_again:
        client.list()
    assert closed_again.value.status_code == 401


def test_the_upstream_api_key_is_sent_in_place_of_cairns_token(
    via_openai: Served, fake_openai: FakeOpenAI
) -> None:
    fake_openai.api_key = "upstream-secret"
    with pytest.raises(openai.AuthenticationError):
        openai_client(via_openai).models.list()
    via_openai.vault.update_settings({"proxy.upstream_api_key": "upstream-secret"})
    assert [m.id for m in openai_client(via_openai).models.list()] == fake_openai.models
    assert via_openai.token not in json.dumps([dict(r.headers) for r in fake_openai.requests])


@pytest.fixture
def no_network_leak(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An HTTP proxy in the environment must not be used for the upstream."""
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    yield


def test_the_upstream_is_called_directly_whatever_the_environment_says(
    no_network_leak: None, via_ollama: Served, fake_ollama: FakeOllama
) -> None:
    fake_ollama.queue_chat("Direct.")
    client = ollama.Client(host=via_ollama.url, headers=via_ollama.auth(), timeout=TIMEOUT, trust_env=False)
    answer = client.chat(model="llama3.2", messages=[{"role": "user", "content": "hi"}])
    assert answer.message.content == "Direct."
