"""MCP sessions past the limit end the least recently used one: a new client is never locked out.

Opening ``MAX_MCP_SESSIONS`` sessions (``initialize`` calls over raw HTTP, as a looping client or a script would)
used to make the SDK refuse every further client with 503 until a session idled out, 30 minutes later.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from mcp import Client

from engine.api.app import MAX_MCP_SESSIONS
from tests.engine.api.conftest import Served
from tests.engine.api.test_mcp import INITIALIZE, connect

ACCEPT = {"Accept": "application/json, text/event-stream"}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


def initialize(http: httpx.Client) -> str:
    """Open a session; its id."""
    response = http.post("/mcp", json=INITIALIZE)
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert http.post("/mcp", json=initialized, headers={"mcp-session-id": session}).status_code == 202
    return str(session)


def ping(http: httpx.Client, session: str) -> int:
    """Use the session: the status of a ping sent in it (200 alive, 404 ended)."""
    response = http.post("/mcp", json=PING, headers={"mcp-session-id": session})
    if response.status_code == 200:
        assert '"result"' in response.text
    return response.status_code


def test_sessions_past_the_limit_end_the_least_recently_used_and_a_new_client_gets_in(served: Served) -> None:
    with httpx.Client(base_url=served.url, headers={**served.auth(), **ACCEPT}, trust_env=False, timeout=30) as http:
        sessions = [initialize(http) for _ in range(MAX_MCP_SESSIONS)]
        assert ping(http, sessions[0]) == 200  # the oldest is used again: now the second is the least recent
        newer = [initialize(http) for _ in range(2)]  # past the limit, and accepted
        assert [ping(http, s) for s in sessions[1:3]] == [404, 404]  # the two least recently used were ended
        assert ping(http, sessions[0]) == 200  # used lately, so kept
        assert all(ping(http, s) == 200 for s in sessions[3:] + newer)  # every other one kept

    async def a_new_client(client: Client) -> Any:
        return (await client.list_tools()).tools

    async def go() -> Any:
        async with connect(served) as client:  # the SDK's own client, over streamable HTTP
            return await a_new_client(client)

    assert {tool.name for tool in asyncio.run(go())} >= {"ingest_event", "recall_context"}


def test_a_session_its_client_ended_is_not_counted(served: Served) -> None:
    """A client that ends its own session (DELETE) frees its place: only a session opened past the limit after
    that ends the least recently used one, and only that one."""
    with httpx.Client(base_url=served.url, headers={**served.auth(), **ACCEPT}, trust_env=False, timeout=30) as http:
        sessions = [initialize(http) for _ in range(MAX_MCP_SESSIONS)]
        assert http.delete("/mcp", headers={"mcp-session-id": sessions[-1]}).status_code == 200
        initialize(http)  # takes the freed place
        initialize(http)  # past the limit: the least recently used goes
        assert ping(http, sessions[0]) == 404
        assert all(ping(http, s) == 200 for s in sessions[1:-1])
