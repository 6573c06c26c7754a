"""The engine's Ollama wrapper, embedder and provider resolution against the fake Ollama server.

Everything here goes through real HTTP on loopback: ``OllamaClient`` uses the official ``ollama``
package, which talks to :class:`tests.fakes.ollama.FakeOllama`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.ai.embedders import HashingEmbedder, OllamaEmbedder, resolve_embedder
from engine.ai.llm import OllamaLLM, resolve_llm
from engine.ai.ollama import OllamaClient, OllamaStatus, canonical_model_name
from engine.config import Settings
from engine.errors import ModelUnavailable
from tests.fakes.ollama import FakeModel, FakeOllama, running_fake_ollama

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
}


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with running_fake_ollama() as server:
        yield server
    assert server.errors == []


def client(fake: FakeOllama, *, timeout_s: float = 5.0) -> OllamaClient:
    return OllamaClient(fake.url, timeout_s=timeout_s, connect_timeout_s=0.5)


def ask(ollama: OllamaClient, model: str = "llama3.2", **kwargs: Any) -> Any:
    return ollama.chat_json(model, "Extract facts as JSON.", "I moved to Lyon.", SCHEMA, **kwargs)


# -- probe ----------------------------------------------------------------------------------------
def test_probe_reports_version_and_installed_models(fake: FakeOllama) -> None:
    status = client(fake).probe()
    assert status.reachable and status.error == ""
    assert status.version == "0.12.0"
    assert status.models == ("llama3.2:latest", "nomic-embed-text:latest")
    assert status.host == fake.url
    assert status.has_model("llama3.2") and status.has_model("LLaMA3.2:latest")
    assert not status.has_model("llama3.2:1b") and not status.has_model("qwen3")


def test_a_host_without_scheme_is_accepted(fake: FakeOllama) -> None:
    ollama = OllamaClient(fake.url.removeprefix("http://") + "/", connect_timeout_s=0.5)
    assert ollama.host == fake.url
    assert ollama.probe().reachable
    assert ask(ollama) == {"facts": []}


def test_probe_of_a_stopped_server_says_connection_refused(fake: FakeOllama) -> None:
    fake.stop()
    status = client(fake).probe()
    assert not status.reachable
    assert status.error == "connection refused"
    assert status.models == () and not status.has_model("llama3.2")


def test_probe_treats_an_http_error_as_unreachable(fake: FakeOllama) -> None:
    # A failing /api/tags used to look like a healthy server with no models ("model not installed").
    fake.fail_next(500, "could not read manifests", path="/api/tags")
    status = client(fake).probe()
    assert not status.reachable
    assert status.error == "HTTP 500 from /api/tags"


def test_probe_of_a_server_that_is_not_ollama(fake: FakeOllama) -> None:
    fake.fail_next(404, "404 page not found", path="/api/version")
    status = client(fake).probe()
    assert not status.reachable and "404" in status.error


def test_canonical_model_names() -> None:
    assert canonical_model_name(" Llama3.2 ") == "llama3.2:latest"
    assert canonical_model_name("qwen3:8b") == "qwen3:8b"
    assert canonical_model_name("host:5000/ns/model") == "host:5000/ns/model:latest"
    status = OllamaStatus("h", True, models=("host:5000/ns/model:latest",))
    assert status.has_model("host:5000/ns/model")


# -- chat_json ------------------------------------------------------------------------------------
def test_chat_json_returns_the_parsed_answer_and_sends_the_schema(fake: FakeOllama) -> None:
    fake.queue_chat({"facts": ["lives in Lyon"]})
    assert ask(client(fake)) == {"facts": ["lives in Lyon"]}

    (request,) = fake.requests_to("/api/chat")
    assert request.body["model"] == "llama3.2"
    assert request.body["format"] == SCHEMA
    assert request.body["stream"] is False
    assert request.body["options"] == {"temperature": 0}
    assert fake.texts_sent() == ["Extract facts as JSON.", "I moved to Lyon."]


def test_chat_json_default_fake_answer_fits_the_schema(fake: FakeOllama) -> None:
    assert ask(client(fake)) == {"facts": []}


def test_a_non_json_answer_is_model_unavailable(fake: FakeOllama) -> None:
    fake.queue_chat("Sure! Here are the facts: Lyon")
    with pytest.raises(ModelUnavailable) as info:
        ask(client(fake))
    assert "not JSON" in info.value.message
    assert info.value.details["answer_start"] == "Sure! Here are the facts: Lyon"


def test_a_missing_model_says_how_to_pull_it(fake: FakeOllama) -> None:
    with pytest.raises(ModelUnavailable) as info:
        ask(client(fake), model="qwen3")
    assert "'qwen3' is not installed" in info.value.message
    assert "ollama pull qwen3" in info.value.fix
    # The other wording Ollama uses for a missing model (show, some versions of chat).
    fake.fail_next(404, "model 'llama3.2' not found", path="/api/chat")
    with pytest.raises(ModelUnavailable, match=r"ollama pull llama3\.2"):
        ask(client(fake))


def test_an_embedding_model_used_for_chat_is_explained(fake: FakeOllama) -> None:
    with pytest.raises(ModelUnavailable) as info:
        ask(client(fake), model="nomic-embed-text")
    assert "does not support chat" in info.value.message
    assert "chat model for llm.model" in info.value.fix


def test_a_slow_model_times_out_quickly(fake: FakeOllama) -> None:
    fake.delay(120.0, path="/api/chat")  # an answer at all would mean the timeout did not work
    with pytest.raises(ModelUnavailable) as info:
        ask(client(fake, timeout_s=0.3))
    assert "did not answer in time" in info.value.message
    assert "llm.timeout_s" in info.value.fix


def test_a_per_call_timeout_overrides_the_client_timeout(fake: FakeOllama) -> None:
    fake.delay(60.0, path="/api/chat")  # answers within the client's 120 s, long after the call's 0.3 s
    ollama = client(fake, timeout_s=120)
    with pytest.raises(ModelUnavailable, match="did not answer in time"):
        ask(ollama, timeout_s=0.3)


def test_per_call_timeouts_reuse_one_connection(fake: FakeOllama) -> None:
    # Each per-call timeout used to build (and leak) a new connection pool.
    ollama = client(fake)
    for _ in range(4):
        assert ask(ollama, timeout_s=2.0) == {"facts": []}
    assert ask(ollama) == {"facts": []}
    assert len(fake.requests_to("/api/chat")) == 5
    assert fake.connections_accepted == 1
    ollama.close()
    assert ask(ollama) == {"facts": []}  # a closed pool reconnects
    assert fake.connections_accepted == 2


def test_a_stopped_server_is_not_running(fake: FakeOllama) -> None:
    ollama = client(fake)
    assert ask(ollama) == {"facts": []}  # leaves a kept-alive connection in the pool
    fake.stop()
    with pytest.raises(ModelUnavailable) as info:
        ask(ollama)
    assert info.value.message == f"Ollama is not running at {fake.url}."
    assert "ollama serve" in info.value.fix


def test_a_dropped_connection_and_a_server_error_are_reported(fake: FakeOllama) -> None:
    fake.drop_next(path="/api/chat")
    with pytest.raises(ModelUnavailable, match="closed the connection without answering"):
        ask(client(fake))
    fake.fail_next(500, "llama runner process has terminated", path="/api/chat")
    with pytest.raises(ModelUnavailable) as info:
        ask(client(fake))
    assert "llama runner process has terminated" in info.value.message
    assert info.value.code == "model_unavailable"


def test_a_404_for_the_route_is_not_mistaken_for_a_missing_model(fake: FakeOllama) -> None:
    fake.fail_next(404, "404 page not found", path="/api/embed")
    with pytest.raises(ModelUnavailable) as info:
        client(fake).embed("nomic-embed-text", ["x"])
    assert "does not offer /api/embed" in info.value.message
    assert "ollama pull" not in info.value.fix


def test_proxy_variables_never_reroute_model_traffic(fake: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> None:
    # Prompts carry the user's memories: they must go to the configured host and nowhere else.
    with running_fake_ollama() as proxy:
        for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, proxy.url)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        ollama = client(fake)
        assert ollama.probe().reachable
        assert ask(ollama) == {"facts": []}
        assert len(ollama.embed("nomic-embed-text", ["x"])) == 1
        assert proxy.requests == []
    assert {r.path for r in fake.requests} == {
        "/api/version",
        "/api/tags",
        "/api/chat",
        "/api/embed",
    }


# -- embeddings -----------------------------------------------------------------------------------
def test_client_embed_returns_one_vector_per_text(fake: FakeOllama) -> None:
    vectors = client(fake).embed("nomic-embed-text", ["a cat", "a dog", "a cat"])
    assert [len(v) for v in vectors] == [768, 768, 768]
    assert vectors[0] == vectors[2] != vectors[1]
    assert vectors[0] == fake.embedding("a cat")


def test_ollama_embedder_gives_unit_rows_of_the_model_dimension(fake: FakeOllama) -> None:
    embedder = OllamaEmbedder(client(fake), "nomic-embed-text", batch_size=2)
    assert embedder.dim == 768 and embedder.model_id == "ollama:nomic-embed-text"
    texts = ["I adopted a cat", "my cat Miso", "", "quarterly taxes", "   ", "the cat"]
    matrix = embedder.embed(texts)
    assert matrix.shape == (6, 768) and matrix.dtype == np.float32
    norms = np.linalg.norm(matrix, axis=1)
    np.testing.assert_allclose(norms[[0, 1, 3, 5]], 1.0, rtol=1e-5)
    assert norms[2] == 0 and norms[4] == 0  # blank texts: zero rows, like every embedder
    np.testing.assert_allclose(matrix[1], fake.embedding("my cat Miso"), rtol=1e-5, atol=1e-6)
    assert float(matrix[0] @ matrix[1]) > float(matrix[0] @ matrix[3])
    embeds = fake.requests_to("/api/embed")
    assert [r.body["input"] for r in embeds] == [
        ["probe"],
        ["I adopted a cat", "my cat Miso"],
        ["quarterly taxes", "the cat"],
    ]
    assert embedder.embed([]).shape == (0, 768)


def test_ollama_embedder_dimension_comes_from_the_model() -> None:
    with running_fake_ollama(models=[FakeModel("nomic-embed-text", embedding_dim=64)]) as fake:
        embedder = OllamaEmbedder(client(fake), "nomic-embed-text")
        assert embedder.dim == 64
        assert embedder.embed(["hello"]).shape == (1, 64)


def test_ollama_embedder_refuses_vectors_of_a_new_length(fake: FakeOllama) -> None:
    embedder = OllamaEmbedder(client(fake), "nomic-embed-text")
    fake.on_embed(lambda text, model: [1.0, 0.0, 0.0, 0.0])
    with pytest.raises(ModelUnavailable, match="different length than 768"):
        embedder.embed(["hello"])


# -- provider resolution --------------------------------------------------------------------------
def resolve(settings: Settings, fake: FakeOllama, models: Path) -> Any:
    ollama = OllamaClient(
        settings.llm.ollama_host,
        timeout_s=settings.llm.timeout_s,
        connect_timeout_s=settings.llm.connect_timeout_s,
    )
    status = ollama.probe()
    return resolve_llm(settings, ollama, status), resolve_embedder(settings, models, ollama=ollama, status=status)


def test_auto_uses_ollama_when_the_models_are_installed(fake: FakeOllama, tmp_path: Path) -> None:
    settings = Settings().updated({"llm.ollama_host": fake.url, "llm.connect_timeout_s": 0.5})
    llm_choice, embedder_choice = resolve(settings, fake, tmp_path)
    assert isinstance(llm_choice.llm, OllamaLLM)
    assert llm_choice.engine == "ollama:llama3.2"
    assert llm_choice.reason == f"Ollama 0.12.0 at {fake.url}"
    fake.queue_chat({"facts": ["x"]})
    assert llm_choice.llm.complete_json("s", "u", SCHEMA, timeout_s=1.0) == {"facts": ["x"]}

    assert isinstance(embedder_choice.embedder, OllamaEmbedder)
    assert embedder_choice.embedder.model_id == "ollama:nomic-embed-text"
    assert embedder_choice.embedder.dim == 768
    assert embedder_choice.reason == "Ollama model nomic-embed-text"
    assert embedder_choice.warnings == ()


def test_auto_without_the_models_falls_back_with_reasons(tmp_path: Path) -> None:
    with running_fake_ollama(models=["qwen3:latest"]) as fake:
        llm_choice, embedder_choice = resolve(fake.settings(), fake, tmp_path)
    assert llm_choice.llm is None and llm_choice.engine == "simple"
    assert llm_choice.reason == "Ollama not used: model llama3.2 is not installed"
    assert isinstance(embedder_choice.embedder, HashingEmbedder)
    assert embedder_choice.reason == "built-in hashing embedder"
    assert embedder_choice.warnings[0] == "Ollama embedder skipped: model nomic-embed-text missing"
    assert embedder_choice.warnings[1].startswith("ONNX embedder skipped: no model files")


def test_auto_with_ollama_down_falls_back(fake: FakeOllama, tmp_path: Path) -> None:
    settings = fake.settings()
    fake.stop()
    llm_choice, embedder_choice = resolve(settings, fake, tmp_path)
    assert llm_choice.llm is None
    assert llm_choice.reason == "Ollama not used: connection refused"
    assert isinstance(embedder_choice.embedder, HashingEmbedder)
    assert embedder_choice.warnings[0] == "Ollama embedder skipped: connection refused"


def test_auto_falls_back_when_the_embedding_model_fails(fake: FakeOllama, tmp_path: Path) -> None:
    fake.fail_next(500, "out of memory", path="/api/embed")
    _, embedder_choice = resolve(fake.settings(), fake, tmp_path)
    assert isinstance(embedder_choice.embedder, HashingEmbedder)
    assert embedder_choice.warnings[0].startswith("Ollama embedder skipped: Ollama at")
    assert "out of memory" in embedder_choice.warnings[0]


def test_explicit_ollama_embedder_with_the_model_missing_is_an_error(tmp_path: Path) -> None:
    with running_fake_ollama(models=["llama3.2"]) as fake:
        settings = fake.settings({"embedder.provider": "ollama"})
        with pytest.raises(ModelUnavailable) as info:
            resolve(settings, fake, tmp_path)
    assert "nomic-embed-text is not available" in info.value.message
    assert "model not installed" in info.value.message
    assert "ollama pull nomic-embed-text" in info.value.fix


def test_explicit_ollama_embedder_without_a_client_is_an_error(tmp_path: Path) -> None:
    settings = Settings().updated({"embedder.provider": "ollama"})
    with pytest.raises(ModelUnavailable, match="no Ollama client"):
        resolve_embedder(settings, tmp_path, ollama=None)


def test_explicit_ollama_llm_with_the_model_missing_keeps_trying_per_job(tmp_path: Path) -> None:
    with running_fake_ollama(models=["nomic-embed-text"]) as fake:
        settings = fake.settings({"llm.provider": "ollama"})
        llm_choice, _ = resolve(settings, fake, tmp_path)
        assert isinstance(llm_choice.llm, OllamaLLM)
        assert llm_choice.reason == "Ollama unavailable now (model llama3.2 is not installed)"
        with pytest.raises(ModelUnavailable, match=r"ollama pull llama3\.2"):
            llm_choice.llm.complete_json("s", "u", SCHEMA)
        fake.add_model("llama3.2")  # pulled later: the next job uses it
        assert llm_choice.llm.complete_json("s", "u", SCHEMA) == {"facts": []}


def test_simple_provider_never_touches_ollama(fake: FakeOllama, tmp_path: Path) -> None:
    settings = fake.settings({"llm.provider": "simple", "embedder.provider": "hashing"})
    llm_choice, embedder_choice = resolve(settings, fake, tmp_path)
    assert llm_choice.llm is None and llm_choice.reason == "llm.provider is 'simple'"
    assert isinstance(embedder_choice.embedder, HashingEmbedder)
    assert fake.requests_to("/api/chat") == [] and fake.requests_to("/api/embed") == []
