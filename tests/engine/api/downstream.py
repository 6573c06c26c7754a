"""A stand-in app for guard tests: the guard in front of a minimal ASGI app that reads bodies.

Body streaming and concurrency need a request that stays open inside the app.  No route of the
endpoint reads a body yet, so those tests put the guard in front of :class:`Downstream`, which reads
the whole body (slowly, if the client sends it slowly) and can be told to hold a response open.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

from engine.api.guard import Guard, GuardConfig
from tests.engine.api.conftest import PORT

TOKEN = "t0ken-for-guard-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Downstream:
    """A minimal app behind the guard: reads the whole body and answers its size.

    ``/hold/...`` answers only once ``release`` is set; ``/boom`` raises before answering.  Every
    answer carries CORS headers, which the guard must strip.
    """

    def __init__(self) -> None:
        self.release = threading.Event()
        self.largest_body = 0

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] == "websocket":
            await send({"type": "websocket.accept"})
            return
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            size += len(message.get("body", b""))
            self.largest_body = max(self.largest_body, size)
            if not message.get("more_body"):
                break
        if scope["path"].startswith("/hold"):
            while not self.release.is_set():
                await asyncio.sleep(0.005)
        if scope["path"] == "/boom":
            raise RuntimeError("CANARY-BOOM private words")
        payload = json.dumps({"received": size}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
            (b"access-control-allow-origin", b"*"),
            (b"Access-Control-Allow-Credentials", b"true"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


def guarded(downstream: Downstream, port: int = PORT, **overrides: Any) -> Guard:
    config: dict[str, Any] = {
        "port": port,
        "token": lambda: TOKEN,
        "max_body_bytes": 1024,
        "max_concurrency": 1,
        "max_streams": 1,
        "stream_paths": frozenset({"/hold/stream"}),
    }
    config.update(overrides)
    return Guard(downstream, GuardConfig(**config))
