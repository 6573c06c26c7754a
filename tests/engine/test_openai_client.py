"""The OpenAI-compatible client against the fake server: the real ``openai`` package over real HTTP on loopback.

Structured output the standard way, and the other way for servers that only take ``json_object`` (remembered);
answers that are not JSON (a fence around JSON is fine); every failure a clear ``ModelUnavailable``; embeddings in
order, blank texts unsent; and the settings that choose this provider.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.ai.embedders import OpenAIEmbedder
from engine.ai.llm import GuardedLLM
from engine.ai.openai_compat import OpenAICompatClient, OpenAILLM, parse_json_answer
from engine.config import Settings
from engine.errors import ModelAnswerUnusable, ModelUnavailable, ValidationError
from tests.fakes.openai_server import DEFAULT_MODELS, FakeOpenAI, running_fake_openai

CHAT, EMBED = DEFAULT_MODELS
SCHEMA = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "object"}}},
    "required": ["facts"],
}


def client(fake: FakeOpenAI, **kwargs: object) -> OpenAICompatClient:
    return OpenAICompatClient(fake.url, timeout_s=5, connect_timeout_s=1, **kwargs)  # type: ignore[arg-type]


def test_a_structured_answer_is_asked_for_with_the_schema_and_parsed(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue_chat({"facts": [{"subject": "user"}]})
    answer = client(fake_openai).chat_json(CHAT, "system text", "user text", SCHEMA)
    assert answer == {"facts": [{"subject": "user"}]}
    (request,) = fake_openai.requests_to("/v1/chat/completions")
    body = request.body
    assert body["model"] == CHAT and body["temperature"] == 0 and body.get("stream") in (False, None)
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    # no key configured: a placeholder, never the user's OPENAI_API_KEY
    assert request.headers["authorization"] == "Bearer no-key"
    assert fake_openai.errors == []


@pytest.mark.parametrize("refusal", [400, 422, 500], ids=["400", "422", "500 like llama-cpp-python"])
def test_a_server_that_only_takes_json_object_is_asked_that_way_from_then_on(refusal: int) -> None:
    with running_fake_openai(schema_styles=["json_object"], refusal_status=refusal) as fake:
        models = client(fake)
        assert models.chat_json(CHAT, "s", "u", SCHEMA) == {"facts": []}
        assert models.chat_json(CHAT, "s", "u", SCHEMA) == {"facts": []}
        kinds = [r.body["response_format"]["type"] for r in fake.requests_to("/v1/chat/completions")]
        assert kinds == ["json_schema", "json_object", "json_object"]  # refused once, then remembered
        assert fake.requests_to("/v1/chat/completions")[-1].body["response_format"]["schema"] == SCHEMA


def test_text_that_is_not_json_is_an_unusable_answer_and_a_fence_is_tolerated(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue_chat("Sure! Here are the facts: none.", '```json\n{"facts": []}\n```')
    models = client(fake_openai)
    with pytest.raises(ModelAnswerUnusable) as caught:
        models.chat_json(CHAT, "s", "u", SCHEMA)
    assert "not JSON" in caught.value.message and caught.value.details["answer_start"].startswith("Sure!")
    assert models.chat_json(CHAT, "s", "u", SCHEMA) == {"facts": []}
    assert parse_json_answer("```\n[1, 2]\n```", "m") == [1, 2]


def test_an_unusable_answer_is_noted_but_does_not_make_the_model_skipped(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue_chat("no json", {"facts": []})
    guarded = GuardedLLM(OpenAILLM(client(fake_openai), CHAT))
    with pytest.raises(ModelAnswerUnusable):
        guarded.complete_json("s", "u", SCHEMA)
    assert guarded.last_error is not None and "not JSON" in guarded.last_error[0]
    assert guarded.complete_json("s", "u", SCHEMA) == {"facts": []}  # asked again at once


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("stopped", "No model server is answering at"),
        ("bad key", "refused the API key (HTTP 401)"),
        ("missing model", "does not have the model 'nope'"),
        ("server error", "(HTTP 500): model crashed"),
    ],
)
def test_every_failure_is_model_unavailable_with_a_fix(fault: str, expected: str) -> None:
    with running_fake_openai(api_key="sesame" if fault == "bad key" else "") as fake:
        model = "nope" if fault == "missing model" else CHAT
        if fault == "stopped":
            fake.stop()
        if fault == "server error":
            fake.fail_next(500, "model crashed")
        models = client(fake, api_key="wrong" if fault == "bad key" else "")
        with pytest.raises(ModelUnavailable) as caught:
            models.chat_json(model, "s", "u", SCHEMA)
        assert expected in caught.value.message and caught.value.fix
        assert not isinstance(caught.value, ModelAnswerUnusable)
        if fault != "stopped":
            assert len(fake.requests_to("/v1/chat/completions")) == 1  # never retried by the client itself


def test_a_configured_key_is_sent(tmp_path: object) -> None:
    with running_fake_openai(api_key="sesame") as fake:
        assert client(fake, api_key="sesame").chat_json(CHAT, "s", "u", SCHEMA) == {"facts": []}
        assert fake.requests[-1].headers["authorization"] == "Bearer sesame"


def test_the_probe_lists_the_models_and_never_raises(fake_openai: FakeOpenAI) -> None:
    status = client(fake_openai).probe()
    assert status.reachable and status.models == tuple(sorted(DEFAULT_MODELS)) and status.has_model(CHAT)
    assert not status.has_model("other")
    fake_openai.stop()
    down = client(fake_openai).probe()
    assert not down.reachable and down.error and "No model server" in down.error


def test_embeddings_come_back_in_order_and_blank_texts_are_not_sent(fake_openai: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(client(fake_openai), EMBED, batch_size=2)
    assert embedder.model_id == f"openai:{EMBED}" and embedder.dim == fake_openai.embedding_dim
    texts = ["I live in Hanoi.", "", "My daughter plays the violin.", "Bake at 250 degrees."]
    matrix = embedder.embed(texts)
    assert matrix.shape == (4, fake_openai.embedding_dim) and not matrix[1].any()
    for row, text in ((0, texts[0]), (2, texts[2]), (3, texts[3])):
        assert np.allclose(matrix[row], fake_openai.embedding(text, EMBED), atol=1e-5)
    sent = [r.body["input"] for r in fake_openai.requests_to("/v1/embeddings")]
    assert sent == [["probe"], [texts[0], texts[2]], [texts[3]]]
    assert all(r.body["encoding_format"] == "float" for r in fake_openai.requests_to("/v1/embeddings"))


def test_per_token_embeddings_are_mean_pooled() -> None:
    with running_fake_openai(token_embeddings=True) as fake:
        embedder = OpenAIEmbedder(client(fake), EMBED)
        (row,) = embedder.embed(["violin lessons"])
        mean = (np.asarray(fake.embedding("violin", EMBED)) + np.asarray(fake.embedding("lessons", EMBED))) / 2
        assert np.allclose(row, mean / np.linalg.norm(mean), atol=1e-5)


def test_a_recorded_space_is_rebuilt_without_asking_the_server(fake_openai: FakeOpenAI) -> None:
    fake_openai.stop()
    embedder = OpenAIEmbedder(client(fake_openai), EMBED, dim=768)
    assert embedder.dim == 768
    with pytest.raises(ModelUnavailable):
        embedder.embed(["anything"])


def test_the_provider_needs_a_model_and_a_well_formed_address() -> None:
    with pytest.raises(ValidationError, match=r"needs llm\.openai_model"):
        Settings().updated({"llm.provider": "openai"})
    with pytest.raises(ValidationError, match=r"needs embedder\.openai_model"):
        Settings().updated({"embedder.provider": "openai"})
    with pytest.raises(ValidationError, match="expected http"):
        Settings().updated({"llm.openai_base_url": "localhost:1234"})
    chosen = Settings().updated(
        {"llm.provider": "openai", "llm.openai_model": CHAT, "llm.openai_base_url": "http://h:1/v1/"}
    )
    assert chosen.llm.openai_base_url == "http://h:1/v1"
