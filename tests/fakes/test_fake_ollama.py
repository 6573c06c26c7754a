"""The fake Ollama server speaks the protocol the official ``ollama`` client expects.

These tests drive :class:`tests.fakes.ollama.FakeOllama` with ``ollama.Client`` (and raw ``httpx``
where the client hides the wire format), so that engine tests run against a faithful server.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import ollama
import pytest

from tests.fakes.ollama import (
    FakeModel,
    FakeOllama,
    canonical_name,
    example_for_schema,
    fake_embedding,
    fake_ollama_fixture,  # noqa: F401 - registers the `fake_ollama` fixture in this module
    running_fake_ollama,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {"type": "object", "properties": {"text": {"type": "string"}}},
            "minItems": 1,
        },
        "mood": {"enum": ["calm", "angry"]},
        "score": {"type": "number", "minimum": 0.5},
        "count": {"type": ["integer", "null"]},
        "ok": {"type": "boolean"},
        "note": {"$ref": "#/$defs/note"},
    },
    "required": ["facts"],
    "$defs": {"note": {"type": "string", "minLength": 2}},
}


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with running_fake_ollama() as server:
        yield server
    assert server.errors == []  # no responder or fake-internal failure went unnoticed


def client_for(fake: FakeOllama, timeout: float = 5.0) -> ollama.Client:
    # trust_env=False: a developer's proxy variables must not reroute loopback test traffic.
    return ollama.Client(host=fake.url, timeout=timeout, trust_env=False)


def raw(fake: FakeOllama) -> httpx.Client:
    return httpx.Client(base_url=fake.url, timeout=5.0, trust_env=False)


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (
        math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    )


# -- discovery ------------------------------------------------------------------------------------
def test_version_and_root_answer_like_ollama(fake: FakeOllama) -> None:
    with raw(fake) as h:
        assert h.get("/api/version").json() == {"version": "0.12.0"}
        root = h.get("/")
        assert (root.status_code, root.text) == (200, "Ollama is running")
        assert h.head("/").status_code == 200
    with running_fake_ollama(version="0.11.4") as other, raw(other) as h:
        assert h.get("/api/version").json() == {"version": "0.11.4"}


def test_tags_lists_installed_models_with_the_real_fields(fake: FakeOllama) -> None:
    with raw(fake) as h:
        models = h.get("/api/tags").json()["models"]
    assert [m["name"] for m in models] == ["llama3.2:latest", "nomic-embed-text:latest"]
    for entry in models:
        assert set(entry) == {"name", "model", "modified_at", "size", "digest", "details"}
        assert entry["model"] == entry["name"]
        assert len(entry["digest"]) == 64 and entry["size"] > 0
        assert {"format", "family", "parameter_size", "quantization_level"} <= set(entry["details"])

    listed = client_for(fake).list()
    assert [m.model for m in listed.models] == ["llama3.2:latest", "nomic-embed-text:latest"]
    llama = listed.models[0]
    assert llama.details is not None and llama.details.family == "llama"
    assert llama.details.parameter_size == "3.2B" and llama.modified_at is not None


def test_models_are_configurable_and_names_canonical() -> None:
    spec = FakeModel("my-embedder", capabilities=("embedding",), embedding_dim=16)
    with running_fake_ollama(models=["Qwen3", spec]) as fake:
        assert fake.models == ("qwen3:latest", "my-embedder:latest")
        fake.add_model("mistral:7b")
        fake.remove_model("qwen3")
        names = [m.model for m in client_for(fake).list().models]
    assert names == ["my-embedder:latest", "mistral:7b"]
    assert canonical_name("registry.local:5000/team/llama3") == "registry.local:5000/team/llama3:latest"


def test_show_describes_a_model_and_404s_for_a_missing_one(fake: FakeOllama) -> None:
    client = client_for(fake)
    shown = client.show("nomic-embed-text")
    assert shown.capabilities == ["embedding"]
    assert shown.details is not None and shown.details.family == "nomic-bert"
    assert shown.modelinfo is not None and shown.modelinfo["nomic-bert.embedding_length"] == 768
    assert "completion" in (client.show("llama3.2:latest").capabilities or [])

    with pytest.raises(ollama.ResponseError) as info:
        client.show("qwen3")
    assert info.value.status_code == 404
    assert info.value.error == "model 'qwen3' not found"


# -- chat -----------------------------------------------------------------------------------------
def test_chat_without_streaming_returns_one_complete_answer(fake: FakeOllama) -> None:
    response = client_for(fake).chat(model="llama3.2", messages=user("hello there"), stream=False)
    assert response.message.role == "assistant"
    assert response.message.content == "You said: hello there"
    assert response.done is True and response.done_reason == "stop"
    assert response.model == "llama3.2"  # echoed as asked, like Ollama
    assert response.total_duration and response.eval_count and response.prompt_eval_count == 2

    (request,) = fake.requests_to("/api/chat")
    assert request.method == "POST" and request.body["stream"] is False
    assert request.body["messages"] == user("hello there")


def test_chat_stream_sends_ndjson_chunks_that_end_with_done(fake: FakeOllama) -> None:
    fake.queue_chat("one two three")
    chunks = list(client_for(fake).chat(model="llama3.2", messages=user("count"), stream=True))
    assert len(chunks) == 4  # three pieces and the final chunk
    assert "".join(c.message.content or "" for c in chunks) == "one two three"
    assert [c.done for c in chunks] == [False, False, False, True]
    last = chunks[-1]
    assert last.done_reason == "stop" and last.eval_count == 3 and last.total_duration
    assert chunks[0].total_duration is None  # timings only on the last chunk

    with raw(fake) as h:
        body = {"model": "llama3.2", "messages": user("hi")}  # no "stream": Ollama streams
        response = h.post("/api/chat", json=body)
    assert response.headers["content-type"] == "application/x-ndjson"
    assert response.headers["transfer-encoding"] == "chunked"
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert lines[-1]["done"] is True and all(not line["done"] for line in lines[:-1])


def test_chat_with_a_schema_format_gets_a_matching_default(fake: FakeOllama) -> None:
    client = client_for(fake)
    response = client.chat(model="llama3.2", messages=user("x"), format=SCHEMA, stream=False)
    answer = json.loads(response.message.content or "")
    assert answer == {
        "facts": [{"text": ""}],
        "mood": "calm",
        "score": 0.5,
        "count": 0,
        "ok": False,
        "note": "xx",
    }
    assert fake.requests_to("/api/chat")[0].body["format"] == SCHEMA

    streamed = client.chat(model="llama3.2", messages=user("x"), format=SCHEMA, stream=True)
    assert json.loads("".join(c.message.content or "" for c in streamed)) == answer

    plain_json = client.chat(model="llama3.2", messages=user("x"), format="json", stream=False)
    assert plain_json.message.content == "{}"


def test_queued_replies_come_first_then_the_responder(fake: FakeOllama) -> None:
    seen: list[dict[str, Any]] = []

    def responder(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return {"echo": request["messages"][-1]["content"], "format": request.get("format")}

    fake.on_chat(responder)
    fake.queue_chat({"queued": 1}, "not json at all")
    client = client_for(fake)

    def ask(text: str) -> str:
        reply = client.chat(model="llama3.2", messages=user(text), format=SCHEMA, stream=False)
        return reply.message.content or ""

    assert json.loads(ask("a")) == {"queued": 1}
    assert ask("b") == "not json at all"
    assert json.loads(ask("c")) == {"echo": "c", "format": SCHEMA}
    assert len(seen) == 1 and seen[0]["model"] == "llama3.2"

    fake.on_chat(None)
    assert client.chat(model="llama3.2", messages=user("d")).message.content == "You said: d"


def test_a_failing_responder_answers_500_and_is_recorded() -> None:
    def broken(request: dict[str, Any]) -> str:
        raise RuntimeError("responder bug")

    with running_fake_ollama() as fake:
        fake.on_chat(broken)
        with pytest.raises(ollama.ResponseError) as info:
            client_for(fake).chat(model="llama3.2", messages=user("x"))
        assert info.value.status_code == 500 and "responder bug" in info.value.error
        assert [str(e) for e in fake.errors] == ["responder bug"]


def test_chat_errors_match_the_real_server(fake: FakeOllama) -> None:
    client = client_for(fake)
    with pytest.raises(ollama.ResponseError) as missing:
        client.chat(model="qwen3", messages=user("x"))
    assert missing.value.status_code == 404
    assert missing.value.error == 'model "qwen3" not found, try pulling it first'

    with pytest.raises(ollama.ResponseError) as embedding_only:
        client.chat(model="nomic-embed-text", messages=user("x"))
    assert embedding_only.value.status_code == 400
    assert embedding_only.value.error == '"nomic-embed-text" does not support chat'

    with pytest.raises(ollama.ResponseError) as thinking:
        client.chat(model="llama3.2", messages=user("x"), think=True)
    assert thinking.value.status_code == 400 and "does not support thinking" in thinking.value.error

    with raw(fake) as h:
        bad = h.post("/api/chat", content=b"{not json")
        empty = h.post("/api/chat", content=b"")
        no_model = h.post("/api/chat", json={"messages": user("x")})
        unknown = h.get("/api/nothing")
        wrong_method = h.get("/api/chat")
    assert bad.status_code == 400
    assert bad.json() == {"error": "invalid character 'n' looking for beginning of value"}
    assert (empty.status_code, empty.json()) == (400, {"error": "missing request body"})
    assert (no_model.status_code, no_model.json()) == (400, {"error": "model is required"})
    assert (unknown.status_code, unknown.text) == (404, "404 page not found")
    assert wrong_method.status_code == 405
    assert fake.requests_to("/api/chat", "POST")[-1].body == {"messages": user("x")}
    assert [r.body for r in fake.requests_to("/api/chat", "POST")][-3] is None  # bad JSON


def test_an_empty_chat_only_loads_the_model(fake: FakeOllama) -> None:
    response = client_for(fake).chat(model="llama3.2", messages=[], stream=False)
    assert response.done_reason == "load" and response.message.content == ""


def test_generate_streams_and_answers_whole(fake: FakeOllama) -> None:
    client = client_for(fake)
    whole = client.generate(model="llama3.2", prompt="ping", stream=False)
    assert whole.response == "You said: ping" and whole.done and whole.context
    fake.queue_chat("pong pong")
    parts = list(client.generate(model="llama3.2", prompt="ping", stream=True))
    assert "".join(p.response or "" for p in parts) == "pong pong" and parts[-1].done
    with pytest.raises(ollama.ResponseError) as info:
        client.generate(model="nomic-embed-text", prompt="x")
    assert info.value.error == '"nomic-embed-text" does not support generate'


# -- embeddings -----------------------------------------------------------------------------------
def test_embed_returns_deterministic_unit_vectors(fake: FakeOllama) -> None:
    client = client_for(fake)
    response = client.embed(model="nomic-embed-text", input=["the cat sat", "the cat sat", "tax"])
    first, again, other = (list(v) for v in response.embeddings)
    assert len(first) == 768
    assert math.isclose(math.fsum(x * x for x in first), 1.0, rel_tol=1e-9)
    assert first == again
    assert first != other
    assert response.model == "nomic-embed-text" and response.prompt_eval_count == 7

    single = client.embed(model="nomic-embed-text", input="the cat sat").embeddings
    assert [list(v) for v in single] == [first]
    assert first == fake.embedding("the cat sat")
    assert client.embed(model="nomic-embed-text", input=[]).embeddings == []


def test_embeddings_of_texts_sharing_words_are_similar() -> None:
    near = cosine(fake_embedding("I adopted a cat named Miso"), fake_embedding("my cat Miso"))
    far = cosine(fake_embedding("I adopted a cat named Miso"), fake_embedding("quarterly taxes"))
    assert near > 0.35
    assert abs(far) < 0.15


def test_embedding_dimensions_are_configurable() -> None:
    models = ["nomic-embed-text", FakeModel("mxbai-embed-large", embedding_dim=1024)]
    with running_fake_ollama(models=models, embedding_dim=32) as fake:
        client = client_for(fake)
        assert len(client.embed(model="nomic-embed-text", input="x").embeddings[0]) == 32
        assert len(client.embed(model="mxbai-embed-large", input="x").embeddings[0]) == 1024
        cut = list(client.embed(model="nomic-embed-text", input="x", dimensions=8).embeddings[0])
        assert len(cut) == 8 and math.isclose(math.fsum(x * x for x in cut), 1.0, rel_tol=1e-9)


def test_embed_errors_and_programmed_vectors(fake: FakeOllama) -> None:
    client = client_for(fake)
    with pytest.raises(ollama.ResponseError) as missing:
        client.embed(model="all-minilm", input="x")
    assert missing.value.status_code == 404 and "try pulling it first" in missing.value.error
    with raw(fake) as h:
        bad = h.post("/api/embed", json={"model": "nomic-embed-text", "input": [1, 2]})
    assert (bad.status_code, bad.json()) == (400, {"error": "invalid input type"})

    fake.on_embed(lambda text, model: [3.0, 4.0] if text == "a" else [0.0, 2.0])
    vectors = client.embed(model="nomic-embed-text", input=["a", "b"]).embeddings
    assert [list(v) for v in vectors] == [[0.6, 0.8], [0.0, 1.0]]  # normalised like Ollama


def test_legacy_embeddings_endpoint_returns_a_raw_vector(fake: FakeOllama) -> None:
    vector = list(client_for(fake).embeddings(model="nomic-embed-text", prompt="hello").embedding)
    assert len(vector) == 768
    assert math.fsum(x * x for x in vector) > 2.0  # not normalised, unlike /api/embed
    assert cosine(vector, fake.embedding("hello")) == pytest.approx(1.0)


def test_ps_lists_models_that_were_used(fake: FakeOllama) -> None:
    client = client_for(fake)
    assert client.ps().models == []
    client.embed(model="nomic-embed-text", input="x")
    assert [m.model for m in client.ps().models] == ["nomic-embed-text:latest"]


# -- recording ------------------------------------------------------------------------------------
def test_every_request_is_recorded_with_its_body(fake: FakeOllama) -> None:
    client = client_for(fake)
    client.chat(
        model="llama3.2",
        messages=[{"role": "system", "content": "be brief"}, *user("call me at [PHONE]")],
    )
    client.embed(model="nomic-embed-text", input=["[EMAIL] wrote"])
    client.list()
    assert [(r.method, r.path) for r in fake.requests] == [
        ("POST", "/api/chat"),
        ("POST", "/api/embed"),
        ("GET", "/api/tags"),
    ]
    assert fake.requests[0].model == "llama3.2"
    assert fake.requests[2].body is None
    assert fake.texts_sent() == ["be brief", "call me at [PHONE]", "[EMAIL] wrote"]
    assert fake.requests[0].headers["content-type"] == "application/json"
    fake.clear_requests()
    assert fake.requests == []


def test_recording_is_safe_under_concurrent_requests(fake: FakeOllama) -> None:
    failures: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            with raw(fake) as h:
                for i in range(5):
                    h.post("/api/embed", json={"model": "nomic-embed-text", "input": f"{n}-{i}"})
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert fake.connections_accepted == 8  # one kept-alive connection per client
    inputs = sorted(r.body["input"] for r in fake.requests_to("/api/embed"))
    assert inputs == sorted(f"{n}-{i}" for n in range(8) for i in range(5))


# -- faults ---------------------------------------------------------------------------------------
def test_fail_next_answers_an_error_once_and_can_target_a_path(fake: FakeOllama) -> None:
    client = client_for(fake)
    fake.fail_next(503, "server busy")
    with pytest.raises(ollama.ResponseError) as info:
        client.list()
    assert (info.value.status_code, info.value.error) == (503, "server busy")
    assert client.list().models  # only the next request failed

    fake.fail_next(500, "runner crashed", path="/api/chat", times=2)
    assert client.embed(model="nomic-embed-text", input="x").embeddings  # other paths unaffected
    for _ in range(2):
        with pytest.raises(ollama.ResponseError, match="runner crashed"):
            client.chat(model="llama3.2", messages=user("x"))
    assert client.chat(model="llama3.2", messages=user("x")).done


def test_drop_next_hangs_up_without_an_answer(fake: FakeOllama) -> None:
    fake.drop_next(path="/api/chat")
    with pytest.raises(httpx.RemoteProtocolError):
        client_for(fake).chat(model="llama3.2", messages=user("x"))
    assert len(fake.requests_to("/api/chat")) == 1


def test_delay_makes_a_short_client_timeout_fire(fake: FakeOllama) -> None:
    fake.delay(2.0, path="/api/chat")
    with pytest.raises(httpx.ReadTimeout):
        client_for(fake, timeout=0.2).chat(model="llama3.2", messages=user("x"))
    # a client that waited the 2 s out would have had its answer: the ReadTimeout is the short timeout firing
    assert len(fake.requests_to("/api/chat")) == 1  # recorded even though it never answered
    assert client_for(fake).list().models  # other paths answer at once
    fake.delay(0)
    assert client_for(fake, timeout=1.0).chat(model="llama3.2", messages=user("x")).done


def test_stop_refuses_connections_even_on_a_kept_alive_connection(fake: FakeOllama) -> None:
    client = client_for(fake)
    assert client.list().models  # leaves a pooled keep-alive connection behind
    url = fake.url
    fake.stop()
    assert not fake.running and fake.url == url
    with pytest.raises(ConnectionError):
        client.list()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/api/version", trust_env=False)

    fake.start()  # back on the same port
    assert fake.url == url and client.list().models
    fake.stop()
    fake.stop()  # idempotent


def test_stop_interrupts_a_delayed_request(fake: FakeOllama) -> None:
    fake.delay(30)
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            client_for(fake, timeout=10).list()
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    deadline = time.monotonic() + 5
    while not fake.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    fake.stop()
    thread.join(timeout=60)
    assert not thread.is_alive()  # stopping the fake ended the waiting call
    assert len(outcome) == 1 and isinstance(outcome[0], httpx.RemoteProtocolError | ConnectionError)


def test_running_fake_ollama_stops_on_exit_and_reset_clears_state() -> None:
    with running_fake_ollama() as fake:
        url = fake.url
        fake.queue_chat("queued")
        fake.fail_next(500, "x")
        fake.delay(5)
        fake.on_chat(lambda request: "programmed")
        fake.reset()
        reply = client_for(fake, timeout=2).chat(model="llama3.2", messages=user("hi"))
        assert reply.message.content == "You said: hi"
        assert len(fake.requests) == 1
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/api/version", trust_env=False)


def test_settings_point_the_engine_at_the_fake(fake: FakeOllama) -> None:
    settings = fake.settings({"llm.model": "qwen3"})
    assert settings.llm.ollama_host == fake.url
    assert settings.llm.model == "qwen3"
    assert settings.llm.connect_timeout_s < 1


def test_the_fixture_serves_the_default_models(fake_ollama: FakeOllama) -> None:
    assert fake_ollama.running
    assert [m.model for m in client_for(fake_ollama).list().models] == [
        "llama3.2:latest",
        "nomic-embed-text:latest",
    ]


def test_schema_examples_cover_refs_and_unions() -> None:
    assert example_for_schema({"anyOf": [{"type": "integer"}, {"type": "string"}]}) == 0
    assert example_for_schema({"type": "array", "items": {"const": 7}, "minItems": 2}) == [7, 7]
    assert example_for_schema(
        {
            "properties": {"a": {"$ref": "#/definitions/b"}},
            "definitions": {"b": {"type": "boolean"}},
        }
    ) == {"a": False}
