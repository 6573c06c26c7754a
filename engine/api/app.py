"""The endpoint's ASGI app: FastAPI with the area routers, MCP at ``/mcp``, the change stream, the
JSON error handlers, the memory proxy's Ollama and OpenAI routes (:mod:`engine.api.proxy`), and the
guard outermost.

:func:`create_app` is what ``cairn serve`` and the GUI hand to
:class:`~engine.api.server.EndpointServer`.  The guard is installed *outside* everything Starlette
builds (see :meth:`CairnAPI.build_middleware_stack`), so it runs before routing, before Starlette's
own error middleware, and around MCP.

MCP: the SDK's streamable HTTP transport is served by the one route its app consists of, added to
this app's router at ``/mcp``.  Mounting the SDK's whole app at ``/`` (as its docs suggest) would
make it the match of last resort for every path, so an unknown path would get the SDK's plain-text
404 and a known path with the wrong method a 404 instead of our JSON 405.  The session manager runs
in this app's lifespan.

The interactive docs pages are off: they load scripts from a CDN (an outbound connection Cairn never
makes) and cannot send the token anyway.  The OpenAPI schema stays at ``/openapi.json`` behind the
token.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from engine.api.auth import TokenFile
from engine.api.errors import install_error_handlers
from engine.api.fast_ingest import FastIngest
from engine.api.fast_recall import FastRecall
from engine.api.guard import BODY_TIMEOUT_S, Guard, GuardConfig
from engine.api.mcp import MCP_PATH, McpSessions, build_mcp_server
from engine.api.mcp_sessions import SessionLru
from engine.api.openapi import app_metadata, finish
from engine.api.proxy.forward import MemoryProxy, is_ollama_route
from engine.api.routes import routers
from engine.api.routes.stream import STREAM_PATH
from engine.api.routes.system import HEALTH_PATH
from engine.api.sse import StreamHub, StreamSettings
from engine.config import EndpointSettings
from engine.errors import ValidationError
from engine.vault import Vault

#: Served without a token (Host and Origin are still checked).
PUBLIC_ROUTES = frozenset({("GET", HEALTH_PATH)})
#: Long-lived streams; they draw on their own small pool of slots.
STREAM_PATHS = frozenset({STREAM_PATH})
#: MCP sessions kept open at once (each is a client like a chat app; idle ones expire after 30 min).  A new
#: session past it ends the least recently used one (:mod:`engine.api.mcp_sessions`) rather than being refused.
MAX_MCP_SESSIONS = 64


class CairnAPI(FastAPI):
    """FastAPI whose middleware stack is wrapped, outermost, in the guard."""

    def __init__(self, *, guard: GuardConfig, **kwargs: Any) -> None:
        self.guard_config = guard
        super().__init__(**kwargs)

    def build_middleware_stack(self) -> ASGIApp:
        """Starlette's stack (error handling, exception handlers, routing) inside the guard, with the fast paths
        for single-event ingests (:mod:`engine.api.fast_ingest`) and recalls (:mod:`engine.api.fast_recall`)
        and the memory proxy's routes (:mod:`engine.api.proxy`) between them."""
        self.fast_recall = FastRecall(super().build_middleware_stack(), lambda: self.state.vault)
        self.fast_ingest = FastIngest(self.fast_recall, lambda: self.state.vault)
        self.proxy = MemoryProxy(self.fast_ingest, lambda: self.state.vault)
        return Guard(self.proxy, self.guard_config)

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI document (see :mod:`engine.api.openapi`), built once."""
        if self.openapi_schema is None:
            self.openapi_schema = finish(super().openapi())
        return self.openapi_schema

    def begin_shutdown(self) -> None:
        """The server is about to stop: end the change streams and MCP sessions so that it need
        not wait on them.

        Called by :class:`~engine.api.server.EndpointServer` before uvicorn waits for open
        connections, and again (harmlessly) when the lifespan ends.
        """
        streams: StreamHub | None = getattr(self.state, "streams", None)
        if streams is not None:
            streams.begin_shutdown()
        sessions: McpSessions | None = getattr(self.state, "mcp_sessions", None)
        if sessions is not None:
            sessions.stop()


def create_app(
    vault: Vault,
    *,
    token: str,
    port: int,
    settings: EndpointSettings | None = None,
    streams: StreamSettings | None = None,
    body_timeout_s: float = BODY_TIMEOUT_S,
) -> CairnAPI:
    """The endpoint app for ``vault``.

    Args:
        vault: the open vault every route calls.
        token: the bearer token in force at start; afterwards the vault's token file is
            followed, so a rotation takes effect without a restart.
        port: the port the server listens on (part of every accepted ``Host``).
        settings: endpoint limits and allowed origins (default: the vault's settings).
        streams: heartbeat and buffering of the change streams (default: 15 s heartbeat).
        body_timeout_s: seconds a request's body may take to arrive (the guard answers 408 and closes
            the connection after that; tests shorten it).

    Raises:
        ValidationError: the token is empty (the endpoint would be unprotected) or the port is
            out of range.
    """
    if not token.strip():
        raise ValidationError("token", "the endpoint token is empty", fix="Run `cairn token --rotate`.")
    if not 0 < port < 65536:
        raise ValidationError("port", f"{port} is not a TCP port", fix="Use a port between 1 and 65535.")
    endpoint = settings if settings is not None else vault.settings.endpoint
    guard = GuardConfig(
        port=port,
        token=TokenFile(vault.paths.token, token.strip()),
        allowed_origins=frozenset(endpoint.allowed_origins),
        max_body_bytes=endpoint.max_body_bytes,
        max_concurrency=endpoint.max_concurrency,
        max_streams=endpoint.max_streams,
        public_routes=PUBLIC_ROUTES,
        stream_paths=STREAM_PATHS,
        unavailable=lambda: vault.closed,
        body_timeout_s=body_timeout_s,
        # Read at each request (the proxy section applies live): Ollama clients that cannot send a token, on the
        # Ollama proxy routes only, and only while the user has said so.
        tokenless=lambda method, path: is_ollama_route(method, path) and vault.settings.proxy.ollama_without_token,
    )
    mcp_server = build_mcp_server(vault)
    mcp_routes = _mcp_routes(
        mcp_server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            # The guard in front enforces a stricter Host/Origin policy (exact port, before
            # routing); the SDK's own check would only disagree with it on letter case.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=endpoint.max_body_bytes,
            # Only a backstop: SessionLru keeps MAX_MCP_SESSIONS and makes room for each new one, and the
            # SDK also counts the sessions still being opened, at most one per request slot of the guard.
            max_sessions=MAX_MCP_SESSIONS + endpoint.max_concurrency + endpoint.max_streams,
        ).routes
    )

    sessions = McpSessions(mcp_server)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with sessions.running():
            yield
        hub.begin_shutdown()
        proxy: MemoryProxy | None = getattr(app, "proxy", None)
        if proxy is not None:
            await proxy.aclose()

    app = CairnAPI(
        guard=guard,
        **_no_telemetry(),
        **app_metadata(),
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
        lifespan=lifespan,
    )
    hub = StreamHub(vault.changes, streams)
    app.state.vault = vault
    app.state.streams = hub
    app.state.mcp = mcp_server
    app.state.mcp_sessions = sessions
    install_error_handlers(app)
    for router in routers():
        app.include_router(router)
    app.router.routes.extend(mcp_routes)
    return app


def _no_telemetry() -> dict[str, Any]:
    """FastAPI's native OpenTelemetry instrumentation, off, where this FastAPI has it.

    Cairn sends nothing anywhere: instrumentation would at best measure into the void, and with
    ``FASTAPI_OTEL_AUTO_CONFIGURE`` set in the environment it would configure an exporter.  Off, it
    also stops costing every request a look at the global providers.
    """
    if "telemetry" not in inspect.signature(FastAPI.__init__).parameters:
        return {}
    return {"telemetry": {"tracing": False, "metrics": False, "logs": False, "auto_configure": False}}


def _mcp_routes(routes: list[BaseRoute]) -> list[BaseRoute]:
    """The SDK app's route at ``/mcp`` (checked, so an SDK change fails loudly, not silently), its handler behind
    the least-recently-used session limit."""
    found = [r for r in routes if isinstance(r, Route) and r.path == MCP_PATH]
    if len(found) != 1:
        raise RuntimeError(f"the MCP SDK's app no longer serves exactly one route at {MCP_PATH}")
    return [Route(MCP_PATH, endpoint=SessionLru(found[0].endpoint, MAX_MCP_SESSIONS), methods=found[0].methods)]
