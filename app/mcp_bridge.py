"""``cairn mcp`` while another Cairn process holds the vault: stdio bridged to that process's ``/mcp``.

A chat app that starts ``cairn mcp`` itself (Claude Desktop, editors) would otherwise fail whenever the desktop app
is open, since a vault has one owner.  When the vault is locked and the Cairn that owns it answers on the vault's
endpoint port (its health answer names this vault's id, so another vault's Cairn on that port is never used), each
JSON-RPC message read from stdin is posted to that endpoint's streamable HTTP MCP route with the vault's token, and
every message of the answer (plain JSON or server-sent events) is written to stdout, one per line, as the stdio
transport wants.  The tools are the endpoint's own, so the chat app sees the same tools either way.

Requests run side by side (a long tool call does not hold up a ping), and answers may come in any order: JSON-RPC
pairs them by id.  When the endpoint ends the session (it restarted, or evicted the least recently used session),
the bridge opens a new one by replaying the client's ``initialize`` and goes on.  If the endpoint goes away, each
request still waiting is answered with a JSON-RPC error that says so, and the bridge ends.

What it does not carry: messages the server starts on its own stream (Cairn's tools send none).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx

from engine import paths
from engine.config import Settings
from engine.doctor import probe_port, recorded_vault_id
from engine.errors import VaultError

log = logging.getLogger(__name__)

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
#: Requests handled at once (a chat client rarely has more than one or two in flight).
WORKERS = 8


@dataclass(frozen=True, slots=True)
class RunningEndpoint:
    """The endpoint of the Cairn that holds a vault: its MCP address and the vault's token."""

    url: str
    token: str


def running_endpoint(root: Path) -> RunningEndpoint | None:
    """The endpoint serving the vault in ``root`` right now, or None (nobody serves it, or the port answers for
    another vault or another program)."""
    vault_paths = paths.VaultPaths(root)
    own = recorded_vault_id(vault_paths.db)
    if own is None:
        return None
    try:
        port = Settings.load(vault_paths.settings).endpoint.port
        token = vault_paths.token.read_text(encoding="utf-8").strip()
    except (VaultError, OSError):
        return None
    if not token or not probe_port(port).serves(own):
        return None
    return RunningEndpoint(f"http://127.0.0.1:{port}/mcp", token)


class Bridge:
    """Carries JSON-RPC messages between a stdio client and an endpoint's streamable HTTP MCP route."""

    def __init__(self, endpoint: RunningEndpoint, out: IO[bytes], client: httpx.Client | None = None) -> None:
        self._endpoint = endpoint
        self._out = out
        self._write_lock = threading.Lock()
        self._session_lock = threading.Lock()
        self._session: str | None = None
        self._version: str | None = None
        self._initialize: bytes | None = None  # the client's own initialize, replayed when a session ends
        self._initialized: bytes | None = None
        self._client = client or httpx.Client(timeout=httpx.Timeout(10.0, read=None))
        self._gone = threading.Event()

    # -- the loop ----------------------------------------------------------------------------------------------------
    def run(self, source: IO[bytes]) -> int:
        """Bridge until stdin ends (0) or the endpoint goes away (1)."""
        with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="mcp-bridge") as pool:
            for line in source:
                if self._gone.is_set():
                    break
                raw = line.strip()
                if not raw:
                    continue
                message = self._parse(raw)
                if message is None:
                    continue
                if message.get("method") == "initialize":
                    self._initialize = raw
                    self._forward(raw, message)  # first, alone: every later request needs its session id
                elif message.get("method") == "notifications/initialized":
                    self._initialized = raw
                    self._forward(raw, message)
                else:
                    pool.submit(self._forward, raw, message)
        self._end_session()
        return 1 if self._gone.is_set() else 0

    def _parse(self, raw: bytes) -> dict[str, Any] | None:
        try:
            message = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            return None
        if not isinstance(message, dict):
            self._write({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}})
            return None
        return message

    # -- one message -------------------------------------------------------------------------------------------------
    def _forward(self, raw: bytes, message: dict[str, Any], *, retry: bool = True) -> None:
        request_id = message.get("id")
        try:
            with self._client.stream("POST", self._endpoint.url, content=raw, headers=self._headers()) as answer:
                if answer.status_code == 404 and retry and self._session is not None and self._reopen():
                    answer.close()
                    self._forward(raw, message, retry=False)
                    return
                self._note_session(answer, message)
                if answer.status_code == 202:
                    return  # a notification or a response, accepted
                kind = answer.headers.get("content-type", "")
                if answer.status_code >= 400 and "json" not in kind and "event-stream" not in kind:
                    answer.read()
                    self._fail(request_id, f"Cairn's endpoint answered {answer.status_code}: {answer.text[:200]}")
                    return
                for item in _messages(answer, kind):
                    self._write(item)
        except httpx.HTTPError as exc:
            log.warning("the endpoint could not be reached: %s", exc)
            self._gone.set()
            self._fail(
                request_id,
                "The Cairn app serving this vault stopped answering. Start it again, or quit it so that "
                "`cairn mcp` can open the vault itself.",
            )

    def _headers(self) -> dict[str, str]:
        headers = {
            "authorization": f"Bearer {self._endpoint.token}",
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        if self._session is not None:
            headers[SESSION_HEADER] = self._session
        if self._version is not None:
            headers[VERSION_HEADER] = self._version
        return headers

    def _note_session(self, answer: httpx.Response, message: dict[str, Any]) -> None:
        session = answer.headers.get(SESSION_HEADER)
        if session:
            self._session = session
        if message.get("method") == "initialize":
            version = (
                message.get("params", {}).get("protocolVersion") if isinstance(message.get("params"), dict) else None
            )
            self._version = version if isinstance(version, str) else None

    def _reopen(self) -> bool:
        """Open a new session by replaying the client's initialize (its answer is the endpoint's business, not the
        client's: the client already has one)."""
        if self._initialize is None:
            return False
        with self._session_lock:
            self._session = None
            try:
                answer = self._client.post(self._endpoint.url, content=self._initialize, headers=self._headers())
                answer.read()
                if answer.status_code >= 400 or not answer.headers.get(SESSION_HEADER):
                    return False
                self._session = answer.headers[SESSION_HEADER]
                if self._initialized is not None:
                    self._client.post(self._endpoint.url, content=self._initialized, headers=self._headers())
            except httpx.HTTPError:
                return False
        log.info("the endpoint ended the MCP session; a new one was opened")
        return True

    def _end_session(self) -> None:
        if self._session is None or self._gone.is_set():
            return
        try:
            self._client.delete(self._endpoint.url, headers=self._headers(), timeout=2.0)
        except httpx.HTTPError:
            pass

    # -- output ------------------------------------------------------------------------------------------------------
    def _fail(self, request_id: Any, text: str) -> None:
        if request_id is not None:
            self._write({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": text}})

    def _write(self, message: Any) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        with self._write_lock:
            self._out.write(data)
            self._out.flush()


def _messages(answer: httpx.Response, kind: str) -> Iterator[Any]:
    """The JSON-RPC messages of one answer: its JSON body, or each ``data:`` event of its event stream."""
    if "event-stream" in kind:
        data: list[str] = []
        for line in answer.iter_lines():
            if line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif not line and data:
                yield from _decoded("\n".join(data))
                data = []
        if data:
            yield from _decoded("\n".join(data))
        return
    body = answer.read()
    if body.strip():
        yield from _decoded(body.decode("utf-8", errors="replace"))


def _decoded(text: str) -> Iterator[Any]:
    try:
        yield json.loads(text)
    except json.JSONDecodeError:
        log.warning("the endpoint sent a message that is not JSON (%d characters); it was dropped", len(text))


def bridge_stdio(endpoint: RunningEndpoint) -> int:
    """Bridge this process's stdin/stdout to ``endpoint``; returns the exit status."""
    return Bridge(endpoint, sys.stdout.buffer).run(sys.stdin.buffer)
