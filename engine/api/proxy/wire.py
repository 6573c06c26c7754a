"""What both halves of the memory proxy speak: its routes with a conversation, the upstream's request headers, and
the proxy's own JSON answers and errors in each client protocol.

:mod:`engine.api.proxy.forward` (pass-through) and :mod:`engine.api.proxy.translate` (an Ollama client before an
OpenAI-compatible server) both use these; they live here so that neither imports the other.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Literal

from starlette.types import Send

from engine.api.proxy.dialects import ChatKind
from engine.config import ProxySettings

Protocol = Literal["ollama", "openai"]

#: Routes whose requests carry a conversation, and the shape of each.
CHAT_ROUTES: dict[str, ChatKind] = {
    "/api/chat": "ollama_chat",
    "/api/generate": "ollama_generate",
    "/v1/chat/completions": "openai_chat",
}

#: Seconds to wait for the upstream to accept a connection: it is on this machine or the LAN.
CONNECT_TIMEOUT_S = 5.0


def upstream_headers(settings: ProxySettings) -> dict[str, str]:
    """What the upstream is sent besides the body: its type, no compression (the proxy reads the answer), and the
    upstream's own key when one is set — never anything the client sent."""
    headers = {"content-type": "application/json", "accept-encoding": "identity"}
    if settings.upstream_api_key:
        headers["authorization"] = f"Bearer {settings.upstream_api_key}"
    return headers


async def send_json(send: Send, status: int, payload: Any) -> None:
    """A JSON answer made by the proxy itself."""
    data = json.dumps(payload).encode("utf-8")
    with contextlib.suppress(OSError):
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": data, "more_body": False})


async def send_error(send: Send, protocol: Protocol, status: int, message: str) -> None:
    """An error of the proxy itself, in the shape the client's protocol uses (Ollama's ``{"error": text}``,
    OpenAI's ``{"error": {"message", "type", ...}}``), so the client's library shows the message."""
    payload: dict[str, Any]
    if protocol == "ollama":
        payload = {"error": message}
    else:
        payload = {"error": {"message": message, "type": "cairn_proxy_error", "param": None, "code": None}}
    await send_json(send, status, payload)
