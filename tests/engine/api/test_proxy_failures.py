"""The memory proxy when things go wrong, and who may use it: upstream errors passed through, Cairn's own failures
never blocking the chat, ``proxy.mode``, the token and the tokenless Ollama admission (real clients, real HTTP)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import ollama
import openai
import pytest

from engine.changes import Change
from engine.recall.types import RecallRequest
from tests.engine.api.conftest import Served, assert_error
from tests.engine.api.proxy_support import (
    QUESTION,
    TIMEOUT,
    ollama_client,
    openai_client,
    settle,
    system_texts,
    turns,
    wait_until,
)
from tests.fakes.ollama import FakeOllama
from tests.fakes.openai_server import FakeOpenAI


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


def test_an_unreachable_upstream_is_a_502_in_the_clients_protocol(via_ollama: Served, fake_ollama: FakeOllama) -> None:
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


# -- Cairn failing ---------------------------------------------------------------------------------------------
# Real faults in the vault itself, through the real recall and writer: nothing in Cairn is patched.
def _run_sql(served: Served, sql: str) -> None:
    """Change the vault's schema on its own writer connection, between transactions (the fault being injected)."""
    served.vault.store.writer.run_outside_transaction(lambda driver: driver.execute(sql))


def test_a_damaged_vault_still_forwards_and_says_so(via_ollama: Served, fake_ollama: FakeOllama) -> None:
    # the facts' table is gone (a vault damaged outside Cairn): recall cannot read what it ranks, and fails
    _run_sql(via_ollama, "ALTER TABLE facts RENAME TO facts_lost")
    with pytest.raises(Exception, match="no such table: facts"):
        via_ollama.vault.recall(RecallRequest(conversation_id="check", query=QUESTION))
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
    assert "recall failed (OperationalError)" in warnings[0].data["warnings"][0]
    assert "no such table" not in json.dumps(warnings[0].as_dict())  # the type, never the text
    assert [e.content for e in turns(via_ollama.vault, "degraded", 2)] == [QUESTION, "Still here."]


def test_a_vault_refusing_writes_still_answers(via_ollama: Served, fake_ollama: FakeOllama) -> None:
    # the store refuses every new event, as a full or failing disk would: the writer's transaction fails
    _run_sql(
        via_ollama, "CREATE TRIGGER refuse_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    fake_ollama.queue_chat("Answered anyway.")
    answer = ollama_client(via_ollama, "unrecorded").chat(
        model="llama3.2", messages=[{"role": "user", "content": "hi"}], stream=False
    )
    settle(via_ollama)

    assert answer.message.content == "Answered anyway."
    assert via_ollama.vault.conversations.events("unrecorded") == []
    health = via_ollama.server.app.proxy.memory.health
    assert health.failures == 1
    assert health.last_failure == (
        "recording the user turn failed (IntegrityError); the chat was forwarded without memory"
    )

    _run_sql(via_ollama, "DROP TRIGGER refuse_events")  # the disk recovers: the next turn is recorded again
    fake_ollama.queue_chat("Recorded again.")
    ollama_client(via_ollama, "unrecorded").chat(
        model="llama3.2", messages=[{"role": "user", "content": "hello again"}], stream=False
    )
    assert [e.content for e in turns(via_ollama.vault, "unrecorded", 2)] == ["hello again", "Recorded again."]


def test_a_client_leaving_mid_answer_stops_the_upstream_and_keeps_no_part_reply(
    via_ollama: Served, fake_ollama: FakeOllama
) -> None:
    fake_ollama.pace(0.2)  # a model generating: a piece every 200 ms
    fake_ollama.queue_chat("one two three four five six seven eight nine ten eleven twelve")
    client = ollama_client(via_ollama, "stopped")
    stream = client.chat(model="llama3.2", messages=[{"role": "user", "content": QUESTION}], stream=True)
    assert next(stream).message.content == "one "
    stream.close()  # the user pressed Stop: the client closes its connection

    wait_until(lambda: fake_ollama.streams_cut == 1)  # the upstream saw its reader go, so it stops generating
    settle(via_ollama)
    assert [(e.role, e.content) for e in via_ollama.vault.conversations.events("stopped")] == [("user", QUESTION)]
    assert via_ollama.server.app.proxy.memory.health.failures == 0  # leaving is not a failure

    fake_ollama.pace(0)
    fake_ollama.queue_chat("Ann lives in Lisbon.")
    answer = client.chat(
        model="llama3.2",
        messages=[{"role": "user", "content": QUESTION}, {"role": "user", "content": "Are you sure?"}],
        stream=True,
    )
    assert "".join(part.message.content for part in answer) == "Ann lives in Lisbon."
    assert [e.content for e in turns(via_ollama.vault, "stopped", 3)] == [
        QUESTION,
        "Are you sure?",
        "Ann lives in Lisbon.",
    ]


# -- modes -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mode", "records", "injects"),
    [("off", False, False), ("record", True, False), ("inject", False, True), ("both", True, True)],
)
def test_modes(via_ollama: Served, fake_ollama: FakeOllama, mode: str, records: bool, injects: bool) -> None:
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


def test_the_upstream_api_key_is_sent_in_place_of_cairns_token(via_openai: Served, fake_openai: FakeOpenAI) -> None:
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
