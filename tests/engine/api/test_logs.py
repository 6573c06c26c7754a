"""Nothing the endpoint logs, at any level, holds the token or memory content.

A canary word goes in through every REST route that takes content and through MCP, over real HTTP,
in valid requests and in requests that fail; every log record of the server side (every logger at
DEBUG) is then searched for it and for the token.  The ``cairn serve`` / ``cairn mcp`` child
process tests check the vault's ``logs/`` files the same way.
"""

from __future__ import annotations

import asyncio
import logging

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.engine.api.conftest import Served

CANARY = "Quokkaburgh"  # a town name: stored as content, learned as a fact, searched for
CLIENT_LOGGERS = ("httpx", "httpcore", "mcp.client")


def rest_traffic(served: Served) -> list[int]:
    auth = served.auth()
    url = served.url
    with httpx.Client(trust_env=False, timeout=30) as http:
        ingest = http.post(
            f"{url}/v6/ingest",
            json={"conversation_id": f"chat-{CANARY}", "content": f"I live in {CANARY}."},
            headers=auth,
        )
        statuses = [
            ingest.status_code,
            http.post(
                f"{url}/v6/ingest/batch",
                json={"events": [{"conversation_id": "c", "content": f"My cat is {CANARY}."}]},
                headers=auth,
            ).status_code,
            http.post(f"{url}/v6/extract", json={"text": f"I work at {CANARY}."}, headers=auth).status_code,
            http.post(
                f"{url}/v6/facts",
                json={"subject": CANARY, "predicate": "likes", "object_text": CANARY},
                headers=auth,
            ).status_code,
            http.get(f"{url}/v6/facts", params={"q": CANARY}, headers=auth).status_code,
            http.get(f"{url}/v6/conversations/chat-{CANARY}/events", headers=auth).status_code,
            # failures carrying the canary: a bad field value, an unknown field, a bad path
            http.post(
                f"{url}/v6/ingest",
                json={"conversation_id": "c", "content": CANARY, "role": CANARY},
                headers=auth,
            ).status_code,
            http.post(
                f"{url}/v6/ingest",
                json={"conversation_id": "c", "content": "x", CANARY: CANARY},
                headers=auth,
            ).status_code,
            http.get(f"{url}/v6/facts/{CANARY}", headers=auth).status_code,
            http.get(f"{url}/v6/facts", params={"as_of": CANARY}, headers=auth).status_code,
        ]
    assert served.vault.jobs.wait_idle(120)
    fact_id = served.vault.facts(q=CANARY)[0].id
    with httpx.Client(trust_env=False, timeout=30) as http:
        statuses.append(
            http.patch(
                f"{url}/v6/facts/{fact_id}",
                json={"object_text": f"{CANARY} Heights"},
                headers=auth,
            ).status_code
        )
    return statuses


async def mcp_traffic(served: Served) -> list[bool]:
    async with (
        httpx2.AsyncClient(headers=served.auth(), trust_env=False, timeout=30) as http,
        Client(streamable_http_client(f"{served.url}/mcp", http_client=http)) as client,  # type: ignore[arg-type]
    ):
        calls = [
            ("ingest_event", {"conversation_id": "m", "content": f"I live near {CANARY}."}),
            ("search_facts", {"query": CANARY}),
            ("ingest_event", {"conversation_id": "m", "content": CANARY, "role": CANARY}),
            ("correct_fact", {"fact_id": 999999, "object_text": CANARY}),
            ("forget", {"conversation_id": CANARY, "dry_run": True}),
        ]
        return [bool((await client.call_tool(name, args)).is_error) for name, args in calls]


def test_server_logs_hold_neither_the_token_nor_memory_content(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, every level
    statuses = rest_traffic(served)
    assert statuses == [202, 202, 200, 201, 200, 200, 400, 400, 400, 400, 200]
    errors = asyncio.run(mcp_traffic(served))
    assert errors == [False, False, True, True, False]
    assert served.vault.facts(q=CANARY)  # the canary really went in and was learned

    server_side = [r for r in caplog.records if not r.name.startswith(CLIENT_LOGGERS)]
    logged = "\n".join(
        f"{r.name} {r.levelname} {r.getMessage()} {r.exc_text or ''} {r.stack_info or ''}" for r in server_side
    )
    assert "refused" in logged or "answered 400" in logged  # the endpoint did log
    assert "MCP tool correct_fact answered not_found" in logged
    for secret in (CANARY, served.token, "Bearer "):
        assert secret not in logged, secret
