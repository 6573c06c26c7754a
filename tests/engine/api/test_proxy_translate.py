"""The memory proxy translating for Ollama-protocol clients when the upstream is OpenAI-compatible: the real
``ollama`` client against a served endpoint whose upstream is the fake OpenAI-compatible server."""

from __future__ import annotations

import httpx
import ollama
import pytest

from engine.api.proxy.translate import OLLAMA_API_VERSION
from tests.engine.api.conftest import Served
from tests.engine.api.proxy_support import QUESTION, TIMEOUT, ollama_client, system_texts, turns
from tests.fakes.openai_server import FakeOpenAI

CHAT_MODEL = "qwen2.5-7b-instruct"


def test_a_chat_is_translated_both_ways_with_memory(via_openai: Served, fake_openai: FakeOpenAI) -> None:
    fake_openai.queue_chat("Ann lives in Lisbon.")
    answer = ollama_client(via_openai, "translated").chat(
        model=CHAT_MODEL,
        messages=[{"role": "user", "content": QUESTION}],
        stream=False,
        format="json",
        options={"temperature": 0.2, "num_predict": 64},
    )

    assert answer.message.content == "Ann lives in Lisbon."
    assert answer.done and answer.done_reason == "stop"
    sent = fake_openai.requests_to("/v1/chat/completions")[-1].body
    assert sent["stream"] is False
    assert (sent["temperature"], sent["max_tokens"]) == (0.2, 64)
    assert sent["response_format"] == {"type": "json_object"}
    assert sent["messages"][-1] == {"role": "user", "content": QUESTION}
    assert any("Lisbon" in text for text in system_texts(sent))
    user, reply = turns(via_openai.vault, "translated", 2)
    assert (user.content, reply.content) == (QUESTION, "Ann lives in Lisbon.")


def test_a_stream_becomes_ollamas_lines_in_order(via_openai: Served, fake_openai: FakeOpenAI) -> None:
    reply = "Ann lives in Lisbon and sails on the Tagus on Sundays."
    fake_openai.queue_chat(reply)
    chunks = list(
        ollama_client(via_openai, "translated-stream").chat(
            model=CHAT_MODEL, messages=[{"role": "user", "content": QUESTION}], stream=True
        )
    )

    assert len(chunks) > 3
    assert "".join(c.message.content for c in chunks) == reply
    assert [c.done for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert chunks[-1].done_reason == "stop"
    assert fake_openai.requests_to("/v1/chat/completions")[-1].body["stream"] is True
    user, recorded = turns(via_openai.vault, "translated-stream", 2)
    assert (user.content, recorded.content) == (QUESTION, reply)


def test_generate_becomes_a_chat(via_openai: Served, fake_openai: FakeOpenAI) -> None:
    fake_openai.queue_chat("Lisbon.")
    answer = ollama_client(via_openai, "translated-generate").generate(
        model=CHAT_MODEL, prompt=QUESTION, system="Be brief.", stream=False
    )

    assert answer.response == "Lisbon."
    messages = fake_openai.requests_to("/v1/chat/completions")[-1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"].startswith("Be brief.")  # the memory joined the system text
    assert messages[1]["content"] == QUESTION


def test_models_and_embeddings_are_translated(via_openai: Served, fake_openai: FakeOpenAI) -> None:
    client = ollama_client(via_openai)
    assert [m.model for m in client.list().models] == fake_openai.models
    assert client.show(CHAT_MODEL).capabilities == ["completion"]
    with pytest.raises(ollama.ResponseError) as missing:
        client.show("not-served")
    assert missing.value.status_code == 404
    vectors = client.embed(model=fake_openai.models[1], input=["hello world", "good night"]).embeddings
    assert vectors[0] == pytest.approx(fake_openai.embedding("hello world"), abs=1e-6)
    assert vectors[1] == pytest.approx(fake_openai.embedding("good night"), abs=1e-6)
    with httpx.Client(base_url=via_openai.url, headers=via_openai.auth(), timeout=TIMEOUT) as http:
        assert http.get("/api/version").json() == {"version": OLLAMA_API_VERSION}


def test_an_upstream_error_keeps_its_status_in_ollamas_shape(via_openai: Served, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(429, "Rate limit reached", path="/v1/chat/completions")
    with pytest.raises(ollama.ResponseError) as raised:
        ollama_client(via_openai).chat(model=CHAT_MODEL, messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 429
    assert raised.value.error == "Rate limit reached"

    with pytest.raises(ollama.ResponseError) as unknown:
        ollama_client(via_openai).chat(model="not-served", messages=[{"role": "user", "content": "hi"}], stream=False)
    assert unknown.value.status_code == 404
    assert unknown.value.error == "The model `not-served` does not exist."


def test_loading_a_model_is_answered_without_the_upstream(via_openai: Served, fake_openai: FakeOpenAI) -> None:
    answer = ollama_client(via_openai).chat(model=CHAT_MODEL, messages=[], stream=False)
    assert (answer.done, answer.done_reason) == (True, "load")
    assert fake_openai.requests_to("/v1/chat/completions") == []
