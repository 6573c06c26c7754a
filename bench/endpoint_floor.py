"""The floor of :mod:`bench.endpoint`: a bare ASGI app on the same server stack, answering every request at once.

uvicorn with the settings ``cairn serve`` uses (httptools, the plain asyncio loop, no access log, no server or date
header, the same keep-alive), and an app that reads the request's body and answers a fixed small JSON body —
``202`` for ``POST /v6/ingest``, ``200`` otherwise — with no memory, no guard and no writer behind it.  What the
same clients get from it at the same concurrency is what this machine's HTTP stack and loopback allow; Cairn's
figures are reported as ratios to it, which carry between machines where absolute figures do not.

Run as its own process (``python -m bench.endpoint_floor``), as ``cairn serve`` is: it prints its address on
stderr and serves until SIGTERM.
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any

import uvicorn

INGEST_REPLY = json.dumps({"event_id": 1, "status": "queued", "duplicate": False}).encode()
OTHER_REPLY = json.dumps({"ok": True}).encode()


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Read the whole body, answer at once."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False) and message["type"] == "http.request"
    ingest = scope["path"] == "/v6/ingest"
    body = INGEST_REPLY if ingest else OTHER_REPLY
    await send(
        {
            "type": "http.response.start",
            "status": 202 if ingest else 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def main() -> int:
    """Bind a free loopback port, say where, serve."""
    # IPPROTO_TCP as cairn serve does: asyncio turns Nagle off only on sockets that say they are TCP, and with it on
    # every keep-alive answer (headers and body are two writes) waits ~40 ms for the client's delayed ACK
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        server_header=False,
        date_header=False,
        proxy_headers=False,
        loop="asyncio",
        http="httptools",
        timeout_keep_alive=5,  # cairn serve's
    )
    print(f"floor listening on http://127.0.0.1:{port}", file=sys.stderr, flush=True)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
