"""What the memory proxy reads from and changes in each protocol's requests and answers (no server needed)."""

from __future__ import annotations

import json

import pytest

from engine.api.proxy.dialects import (
    MEMORY_PREAMBLE,
    ReplyReader,
    UserTurn,
    derived_conversation_id,
    user_turn,
    with_memory,
)
from engine.api.proxy.forward import resolve
from engine.config import ProxySettings, Settings
from engine.errors import ValidationError


def ndjson(*objects: dict[str, object]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objects)


def in_pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_an_ollama_stream_is_read_whatever_its_chunking(size: int) -> None:
    stream = ndjson(
        {"message": {"role": "assistant", "content": "Lis"}, "done": False},
        {"message": {"role": "assistant", "content": "bon"}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
    )
    reader = ReplyReader("ollama_chat", "ndjson")
    for piece in in_pieces(stream, size):
        reader.feed(piece)
    reader.finish()
    assert (reader.text, reader.complete) == ("Lisbon", True)


def test_an_ollama_stream_cut_off_is_not_complete() -> None:
    reader = ReplyReader("ollama_generate", "ndjson")
    reader.feed(ndjson({"response": "Half a", "done": False}))
    reader.finish()
    assert (reader.text, reader.complete) == ("Half a", False)


@pytest.mark.parametrize("size", [1, 5, 4096])
def test_an_openai_event_stream_is_read_whatever_its_chunking(size: int) -> None:
    events = [
        ": keep-alive comment",
        'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Ann "}}]}',
        'data: {"choices":[{"index":0,"delta":{"content":"sails."},"finish_reason":null}]}',
        'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
        "data: [DONE]",
    ]
    stream = "".join(f"{event}\r\n\r\n" for event in events).encode()
    reader = ReplyReader("openai_chat", "sse")
    for piece in in_pieces(stream, size):
        reader.feed(piece)
    reader.finish()
    assert (reader.text, reader.complete) == ("Ann sails.", True)


def test_whole_answers_of_both_protocols() -> None:
    ollama = ReplyReader("ollama_chat", "json")
    ollama.feed(b'{"message": {"role": "assistant", "content": "Hi"}, "done": true}')
    ollama.finish()
    openai = ReplyReader("openai_chat", "json")
    openai.feed(b'{"choices": [{"message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}]}')
    openai.finish()
    broken = ReplyReader("openai_chat", "json")
    broken.feed(b"<html>bad gateway</html>")
    broken.finish()
    assert [(r.text, r.complete) for r in (ollama, openai, broken)] == [("Hi", True), ("Hello", True), ("", False)]


def test_the_user_turn_is_the_last_message_when_it_is_the_users() -> None:
    parts = [{"type": "text", "text": "Look:"}, {"type": "image_url", "image_url": {"url": "data:,"}}]
    assert user_turn("openai_chat", {"messages": [{"role": "user", "content": parts}]}) == UserTurn(0, "Look:")
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": []}]
    assert user_turn("ollama_chat", {"messages": history}) is None  # a tool round, not a new turn
    assert user_turn("ollama_chat", {"messages": []}) is None  # loading the model
    assert user_turn("ollama_generate", {"prompt": "Why?"}) == UserTurn(0, "Why?")


def test_a_derived_conversation_id_follows_the_opening_only() -> None:
    opening = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}]
    later = [*opening, {"role": "assistant", "content": "Hi"}, {"role": "user", "content": "More"}]
    other = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Goodbye"}]
    first = derived_conversation_id("ollama_chat", {"messages": opening})
    assert first == derived_conversation_id("openai_chat", {"messages": later})
    assert first != derived_conversation_id("ollama_chat", {"messages": other})
    assert first.startswith("chat-") and len(first) == len("chat-") + 20


def test_memory_goes_after_the_apps_own_system_messages() -> None:
    body = {"model": "m", "messages": [{"role": "system", "content": "Rules."}, {"role": "user", "content": "Q"}]}
    changed = with_memory("ollama_chat", body, "Ann lives in Lisbon.")
    assert [m["role"] for m in changed["messages"]] == ["system", "system", "user"]
    assert changed["messages"][1]["content"] == MEMORY_PREAMBLE + "Ann lives in Lisbon."
    assert len(body["messages"]) == 2  # the request as received is left alone
    generate = with_memory("ollama_generate", {"prompt": "Q"}, "M")
    assert generate["system"] == MEMORY_PREAMBLE + "M"


@pytest.mark.parametrize(
    ("upstream", "path", "url", "translate"),
    [
        ("http://127.0.0.1:11434", "/api/chat", "http://127.0.0.1:11434/api/chat", False),
        ("http://127.0.0.1:11434/", "/v1/models", "http://127.0.0.1:11434/v1/models", False),
        ("http://127.0.0.1:1234/v1", "/v1/chat/completions", "http://127.0.0.1:1234/v1/chat/completions", False),
        ("http://box.lan:8080/v1", "/v1/embeddings", "http://box.lan:8080/v1/embeddings", False),
        ("http://127.0.0.1:1234/v1", "/api/chat", "http://127.0.0.1:1234/v1", True),
    ],
)
def test_where_each_route_goes(upstream: str, path: str, url: str, translate: bool) -> None:
    target = resolve(ProxySettings(upstream=upstream), path)
    assert (target.url, target.translate) == (url, translate)


@pytest.mark.parametrize("bad", ["127.0.0.1:11434", "ftp://host", "http://host:port", "http://host/?q=1"])
def test_an_upstream_that_is_not_an_http_url_is_refused_where_it_is_set(bad: str) -> None:
    with pytest.raises(ValidationError, match=r"proxy\.upstream"):
        Settings().updated({"proxy.upstream": bad})


def test_the_proxy_is_off_limits_to_tokenless_clients_by_default() -> None:
    assert ProxySettings().ollama_without_token is False
    assert "Risk" in (ProxySettings.model_fields["ollama_without_token"].description or "")
