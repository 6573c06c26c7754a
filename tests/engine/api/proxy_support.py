"""Fixtures and helpers for the memory proxy's tests: a served endpoint whose ``proxy.upstream`` is the fake Ollama
or the fake OpenAI-compatible server, and the real ``ollama`` and ``openai`` clients pointed at it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import ollama
import openai
import pytest

from engine import Vault
from engine.events import Event, EventIn
from tests.engine.api.conftest import Served
from tests.fakes.ollama import FakeOllama
from tests.fakes.openai_server import FakeOpenAI

TIMEOUT = httpx.Timeout(60, connect=10)  # generous: a loaded machine is slow, and a wait ends when it can
REMEMBERED = "My sister Ann lives in Lisbon and she loves sailing."
QUESTION = "Where does my sister Ann live?"


def wait_until(condition: Callable[[], bool], timeout: float = 60.0) -> None:
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
