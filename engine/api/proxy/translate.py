"""Ollama-protocol clients in front of an OpenAI-compatible upstream.

Not translated (yet): such a request is answered with a clear error in Ollama's shape, naming the two ways out —
point the client at Cairn's OpenAI routes (``/v1``), or point ``proxy.upstream`` at an Ollama server, which speaks
both protocols itself.
"""

from __future__ import annotations

from starlette.types import Scope, Send

from engine.api.proxy.forward import MemoryProxy, send_error
from engine.config import ProxySettings

#: The status of the refusal: the proxy does not implement this combination.
NOT_TRANSLATED = 501


async def forward_translated(
    proxy: MemoryProxy, scope: Scope, body: bytes, send: Send, settings: ProxySettings
) -> None:
    """Answer an Ollama request whose upstream speaks only OpenAI's protocol."""
    await send_error(
        send,
        "ollama",
        NOT_TRANSLATED,
        f"Cairn's memory proxy forwards to an OpenAI-compatible server ({settings.upstream}), which does not speak "
        f"Ollama's {scope['path']}. Use Cairn's OpenAI address (…/v1) in this app, or set proxy.upstream to an "
        "Ollama server.",
    )
