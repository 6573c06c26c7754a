"""The memory proxy, driven by the real ``ollama`` and ``openai`` clients against a served endpoint whose upstream is
the fake Ollama or the fake OpenAI-compatible server (both real HTTP on loopback): turns recorded, memory injected,
streams passed through, the model routes passed through."""

from __future__ import annotations

import httpx
import pytest

from engine.api.proxy.dialects import MEMORY_PREAMBLE
from tests.engine.api.conftest import Served
from tests.engine.api.proxy_support import (
    QUESTION,
    TIMEOUT,
    ollama_client,
    openai_client,
    proxy_events,
    settle,
    system_texts,
    turns,
)
from tests.fakes.ollama import FakeOllama
from tests.fakes.openai_server import FakeOpenAI


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
def test_recalled_memory_reaches_the_upstream_as_a_system_message(via_ollama: Served, fake_ollama: FakeOllama) -> None:
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
    assert (user.content, recorded.content) == (QUESTION, reply)


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


def test_openai_clients_reach_an_ollama_upstream_through_its_own_openai_api(
    via_ollama: Served, fake_ollama: FakeOllama
) -> None:
    client = openai_client(via_ollama, "oa-to-ollama")
    assert [m.id for m in client.models.list()] == list(fake_ollama.models)
    fake_ollama.queue_chat("Ann lives in Lisbon, by the river.")
    stream = client.chat.completions.create(
        model="llama3.2", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    reply = "".join(chunk.choices[0].delta.content or "" for chunk in stream)

    assert reply == "Ann lives in Lisbon, by the river."
    sent = fake_ollama.requests_to("/v1/chat/completions")[-1].body
    assert any("Lisbon" in text for text in system_texts(sent))
    user, recorded = turns(via_ollama.vault, "oa-to-ollama", 2)
    assert (user.content, recorded.content) == (QUESTION, reply)
