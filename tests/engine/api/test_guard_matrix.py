"""The HARDENING.md matrix: Host × Origin × token × content type against every route (REST, the
change stream and MCP).

A request gets its route's success status only when every check holds; otherwise it gets the exact
status of the first check that fails (Host 421 → Origin 403 → token 401 → content type 415), in the
endpoint's JSON error shape, and nothing in the vault changes.  That is checked after every refused
request: the change feed published nothing, and SQLite's ``data_version`` shows whether anything
committed at all; only when something did (background upkeep may) are the row counts of every table
compared, so the check stays per request and cheap.

Content type: every state-changing request of the matrix declares its type, so a body-less one
(DELETE a fact, POST a restore) is refused as well when the type is not JSON — a cross-site form
needs no body to reach such a route.

``ROUTES`` is the one table of what the endpoint serves.  Work that adds a route adds a line here
(method, path, an example body, the status it answers when everything holds, and what it acts on);
``test_every_app_route_is_in_the_table`` fails until it does.  Every route runs the full matrix
with the default (empty) origin allow-list; the ``representative`` ones run it again with an
allowed origin.  The ``/v6/no-such-route`` lines show the guard working before routing.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import iter_route_contexts

from engine import Vault
from engine.api.app import create_app
from engine.api.guard import STATE_CHANGING_METHODS
from engine.api.proxy.forward import OLLAMA_ROUTES, OPENAI_ROUTES
from engine.changes import Change
from engine.config import EndpointSettings
from tests.engine.api import targets
from tests.engine.api.asgi import LiveApp, live
from tests.engine.api.conftest import (
    HARDENING_HOSTS,
    PORT,
    CommitWatch,
    assert_error,
    host_is_allowed,
    open_vault,
    seed,
    table_counts,
)

Body = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]] | None
MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "matrix", "version": "1"},
    },
}
MCP_ACCEPT = {"accept": "application/json, text/event-stream"}


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # ``{name}`` parts are filled from ``targets``
    body: Body = None
    ok: int = 200  # the status when every check passes
    public: bool = False  # served without a token
    targets: Callable[[Vault], dict[str, Any]] | None = None  # made afresh per accepted request
    headers: dict[str, str] = field(default_factory=dict)
    stream: bool = False  # an endless answer: only its status is read
    foreign_shape: bool = False  # the ok status is answered by MCP in its own (JSON-RPC) shape
    representative: bool = False

    @property
    def id(self) -> str:
        return f"{self.method} {self.path}"

    def resolve(self, values: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        path = self.path.format(**values)
        body = self.body(values) if callable(self.body) else self.body
        return path, body


ROUTES: list[Route] = [
    Route("GET", "/v6/health", public=True, representative=True),
    Route("GET", "/openapi.json"),
    Route("GET", "/v6/jobs", representative=True),
    Route("POST", "/v6/jobs/retry", {"job_ids": []}),
    Route(
        "POST",
        "/v6/ingest",
        {"conversation_id": "matrix-chat", "content": "I enjoy long walks on the beach."},
        ok=202,
        representative=True,
    ),
    Route(
        "POST",
        "/v6/ingest/batch",
        {"events": [{"conversation_id": "matrix-chat", "content": "My cat is called Tom."}]},
        ok=202,
    ),
    Route("POST", "/v6/extract", {"text": "I prefer Vue over React."}),
    Route(
        "POST",
        "/v6/recall",
        {"conversation_id": "matrix-chat", "query": "Where do I live?"},
        representative=True,
    ),
    Route(
        "POST",
        "/v6/documents",
        lambda t: {"name": f"upload-{t['n']}.md", "content": f"# Upload {t['n']}\n\nText."},
        ok=201,
        targets=targets.unique,
        representative=True,
    ),
    Route("GET", "/v6/documents"),
    Route("GET", "/v6/documents/quarantine"),
    Route(
        "POST",
        "/v6/documents/quarantine/{quarantine_id}/retry",
        ok=201,
        targets=targets.repaired_quarantine,
    ),
    Route("GET", "/v6/documents/{document_id}", targets=targets.document),
    Route("DELETE", "/v6/documents/{document_id}", targets=targets.document),
    Route(
        "POST",
        "/v6/collections",
        lambda t: {"name": f"Matrix collection {t['n']}"},
        ok=201,
        targets=targets.unique,
    ),
    Route("GET", "/v6/collections"),
    Route("GET", "/v6/collections/{collection_id}", targets=targets.collection),
    Route(
        "PATCH",
        "/v6/collections/{collection_id}",
        lambda t: {"name": f"Renamed shelf {t['n']}"},
        targets=targets.collection,
    ),
    Route("DELETE", "/v6/collections/{collection_id}", targets=targets.collection),
    Route(
        "POST",
        "/v6/collections/{collection_id}/documents",
        lambda t: {"document_ids": [t["document_id"]]},
        targets=targets.collection_and_document,
    ),
    Route(
        "DELETE",
        "/v6/collections/{collection_id}/documents/{document_id}",
        targets=targets.collection_member,
    ),
    Route("GET", "/v6/watch"),
    Route("POST", "/v6/watch", lambda t: {"path": t["folder"]}, targets=targets.folder),
    Route("DELETE", "/v6/watch", lambda t: {"path": t["folder"]}, targets=targets.watched_folder),
    Route("POST", "/v6/watch/rescan", {"wait_s": 10}),
    Route("POST", "/v6/forget", {"user_id": "matrix-nobody", "dry_run": True}),
    Route("GET", "/v6/forget/receipts/{receipt_id}", targets=targets.receipt),
    Route("GET", "/v6/facts?subject=user&limit=5", representative=True),
    Route(
        "POST",
        "/v6/facts",
        lambda t: {"subject": "user", "predicate": "likes", "object_text": f"dish {t['n']}"},
        ok=201,
        targets=targets.unique,
    ),
    Route("GET", "/v6/facts/superseded"),
    Route("GET", "/v6/facts/{fact_id}", targets=targets.fact),
    Route(
        "PATCH",
        "/v6/facts/{fact_id}",
        {"object_text": "a corrected thing"},
        targets=targets.fact,
        representative=True,
    ),
    Route("DELETE", "/v6/facts/{fact_id}", targets=targets.fact, representative=True),
    Route("POST", "/v6/facts/{fact_id}/restore", targets=targets.deleted_fact),
    Route("POST", "/v6/facts/{fact_id}/retract", targets=targets.fact),
    Route("POST", "/v6/facts/{fact_id}/approve", targets=targets.fact),
    Route("POST", "/v6/facts/{fact_id}/tier", {"tier": "hot", "pinned": True}, targets=targets.fact),
    Route("POST", "/v6/facts/{fact_id}/signal", {"signal": "useful"}, targets=targets.fact),
    Route("GET", "/v6/facts/{fact_id}/history", targets=targets.fact),
    Route("GET", "/v6/truth?subject=user"),
    Route("GET", "/v6/conflicts?status=all"),
    Route(
        "POST",
        "/v6/conflicts/{conflict_id}/resolve",
        {"winner_id": None},
        targets=targets.conflict,
    ),
    Route("GET", "/v6/conversations"),
    Route("GET", "/v6/conversations/{conversation_id}/events", targets=targets.conversation),
    Route("POST", "/v6/conversations/{conversation_id}/close", targets=targets.conversation),
    Route("GET", "/v6/episodes"),
    Route("GET", "/v6/subjects?q=Person"),
    Route("GET", "/v6/subjects/{subject_id}", targets=targets.subject),
    Route(
        "POST",
        "/v6/subjects/{subject_id}/rename",
        lambda t: {"name": f"Renamed Person{t['n']}"},
        targets=targets.subject,
    ),
    Route(
        "POST",
        "/v6/subjects/{subject_id}/merge",
        lambda t: {"merge_ids": [t["other_id"]]},
        targets=targets.subject_pair,
    ),
    Route(
        "POST", "/v6/workspace/create_subjects", lambda t: {"names": [f"Matrix Dora{t['n']}"]}, targets=targets.unique
    ),
    Route("POST", "/v6/workspace/get_subjects", {"names": ["user", "Nobody"]}),
    Route(
        "POST",
        "/v6/workspace/update_subject_summary",
        lambda t: {"subject_name": t["a"], "summary": f"Summary {t['n']}."},
        targets=targets.observation,
    ),
    Route(
        "POST",
        "/v6/workspace/remember",
        lambda t: {"content": f"Matrix note {t['n']}.", "subject_names": ["Matrix Ed"]},
        targets=targets.unique,
        headers={"x-session-id": targets.WORKSPACE_SESSION},
    ),
    Route(
        "POST",
        "/v6/workspace/add_observations",
        lambda t: {"observations": [{"content": f"Matrix batch {t['n']}.", "subject_names": ["Matrix Ed"]}]},
        targets=targets.unique,
    ),
    Route(
        "POST",
        "/v6/workspace/delete_observations",
        lambda t: {"ids": [t["observation_id"]], "session_id": t["session_id"]},
        targets=targets.observation,
    ),
    Route("POST", "/v6/workspace/search_observations", {"query": "flat"}),
    Route("POST", "/v6/workspace/search", {"query": "who shares a flat"}),
    Route("POST", "/v6/workspace/list_perspectives", {}),
    Route("POST", "/v6/workspace/add_perspective", {"name": "matrix", "instruction": "Represent the matrix:"}),
    Route(
        "POST",
        "/v6/workspace/remove_perspective",
        lambda t: {"name": t["perspective"]},
        targets=targets.perspective,
    ),
    Route(
        "POST",
        "/v6/workspace/create_understanding",
        lambda t: {"content": f"Matrix picture {t['n']}.", "summary": "picture", "subject_names": ["Matrix Ed"]},
        targets=targets.unique,
    ),
    Route(
        "POST",
        "/v6/workspace/update_understanding",
        lambda t: {"understanding_id": t["understanding_id"], "new_content": "Revised.", "new_summary": "revised"},
        targets=targets.understanding,
    ),
    Route("POST", "/v6/workspace/get_understandings", {}),
    Route(
        "POST",
        "/v6/workspace/understanding_history",
        lambda t: {"understanding_id": t["understanding_id"]},
        targets=targets.understanding,
    ),
    Route(
        "POST",
        "/v6/workspace/set_structural_understanding",
        lambda t: {"subject_name": t["a"], "content": f"{t['a']} is also called A{t['n']}."},
        targets=targets.observation,
    ),
    Route("POST", "/v6/workspace/mark_useful", lambda t: {"ids": [t["observation_id"]]}, targets=targets.observation),
    Route(
        "POST", "/v6/workspace/mark_questionable", lambda t: {"ids": [t["observation_id"]]}, targets=targets.observation
    ),
    Route(
        "POST",
        "/v6/workspace/open_intersection",
        lambda t: {"subject_a": t["a"], "subject_b": t["b"]},
        targets=targets.observation,
    ),
    Route("POST", "/v6/workspace/open_around", lambda t: {"subject_name": t["a"]}, targets=targets.observation),
    Route("POST", "/v6/workspace/stats"),
    Route("POST", "/v6/workspace/orient", {"session_id": targets.WORKSPACE_SESSION}),
    Route(
        "POST",
        "/v6/workspace/bring_to_mind",
        {"topic_or_context": "Who shares a flat?", "session_id": targets.WORKSPACE_SESSION},
    ),
    Route("POST", "/v6/workspace/reset_seen", headers={"x-session-id": targets.WORKSPACE_SESSION}),
    Route("POST", "/v6/workspace/recall", lambda t: {"query": t["a"]}, targets=targets.observation),
    Route("POST", "/v6/workspace/consolidate", {}),
    Route("POST", "/v6/workspace/consolidation_report", {"limit": 10}),
    Route("POST", "/v6/workspace/pending_consolidation"),
    Route(
        "POST", "/v6/workspace/find_similar_subjects", lambda t: {"subject_name": t["a"]}, targets=targets.observation
    ),
    Route(
        "POST",
        "/v6/workspace/merge_subjects",
        lambda t: {"subject_name": t["a"], "names": [t["b"]]},
        targets=targets.observation,
    ),
    Route("GET", "/v6/objects/{object_id}", targets=targets.fact),
    Route("GET", "/v6/events/stream", stream=True, representative=True),
    Route("POST", "/mcp", MCP_INITIALIZE, headers=MCP_ACCEPT, representative=True),
    Route("GET", "/mcp", headers={"accept": "text/event-stream"}, ok=400, foreign_shape=True),
    Route("DELETE", "/mcp", headers=MCP_ACCEPT, ok=400, foreign_shape=True),
    # The memory proxy (engine.api.proxy.forward): the matrix vault has no proxy.upstream, so a request the guard lets
    # through gets the proxy's own 503, in the error shape of the client's protocol (Ollama's or OpenAI's).
    *(
        Route(method, path, {"model": "m"} if method == "POST" else None, ok=503, foreign_shape=True)
        for method, path in sorted(OLLAMA_ROUTES | OPENAI_ROUTES)
        if path != "/api/chat"
    ),
    Route("POST", "/api/chat", {"model": "m"}, ok=503, foreign_shape=True, representative=True),
    Route("POST", "/v6/no-such-route", {"content": "a probe body"}, ok=404, representative=True),
    Route("DELETE", "/v6/no-such-route", {"ids": [1, 2]}, ok=404),
]

HOSTS = [
    *(host.format(port=PORT) for host in HARDENING_HOSTS),
    # beyond the HARDENING list: the plain good ones, a wrong port, no port, look-alikes
    f"127.0.0.1:{PORT}",
    f"localhost:{PORT}",
    f"127.0.0.1:{PORT + 1}",
    "127.0.0.1",
    "localhost",
    f"localhost.:{PORT}",
    f"127.0.0.1:{PORT}.evil.com",
    f"[::ffff:127.0.0.1]:{PORT}",
]

ORIGINS: list[str | None] = [None, "null", "http://evil.com", f"http://localhost:{PORT}"]
TOKENS = ["none", "wrong", "right"]
CONTENT_TYPES = ["json", "text/plain", "form"]
ALLOW_LISTS: dict[str, tuple[str, ...]] = {
    "default": (),
    "localhost-allowed": (f"http://localhost:{PORT}",),
}
MIME = {
    "json": "application/json",
    "text/plain": "text/plain",
    "form": "application/x-www-form-urlencoded",
}


def expected_status(route: Route, host: str, origin: str | None, token: str, ctype: str, allowed: set[str]) -> int:
    if not host_is_allowed(host, PORT):
        return 421
    if origin is not None and origin not in allowed:
        return 403
    if not route.public and token != "right":
        return 401
    if route.method in STATE_CHANGING_METHODS and ctype != "json":
        return 415  # with a body or without: the request declares a type that is not JSON
    return route.ok


def encode(body: dict[str, Any] | None, ctype: str) -> bytes:
    if body is None:
        return b""
    if ctype == "form":
        return urllib.parse.urlencode({k: json.dumps(v) for k, v in body.items()}).encode()
    return json.dumps(body).encode()


@pytest.fixture(scope="module")
def matrix_vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    vault = open_vault(Path(tmp_path_factory.mktemp("matrix")) / "vault")
    seed(vault)
    targets.conversation(vault)
    vault.events.extract("I live in Lisbon.", learn=True, conversation_id=targets.CONVERSATION)
    try:
        yield vault
    finally:
        vault.close()


@dataclass
class Outcome:
    failures: list[str] = field(default_factory=list)
    refused: int = 0
    accepted: int = 0


async def _send(
    app: LiveApp,
    route: Route,
    values: dict[str, Any],
    case: tuple[str, str | None, str, str],
    token: str,
) -> Any:
    host, origin, tok, ctype = case
    path, body = route.resolve(values)
    headers = [("host", host), ("content-type", MIME[ctype]), *route.headers.items()]
    if origin is not None:
        headers.append(("origin", origin))
    if tok != "none":
        headers.append(("authorization", f"Bearer {token if tok == 'right' else 'x' * len(token)}"))
    return await app.request(route.method, path, headers, encode(body, ctype), stream=route.stream)


async def _run_matrix(vault: Vault, route: Route, allowed: tuple[str, ...]) -> Outcome:
    token = vault.endpoint_token()
    app = create_app(vault, token=token, port=PORT, settings=EndpointSettings(allowed_origins=allowed))
    cases = [
        (host, origin, tok, ctype) for host in HOSTS for origin in ORIGINS for tok in TOKENS for ctype in CONTENT_TYPES
    ]
    expected = {case: expected_status(route, *case, set(allowed)) for case in cases}
    outcome = Outcome()
    watch = CommitWatch(vault)
    try:
        async with live(app) as running:
            # Refusals first, all against one target: nothing may change, checked after each one.
            values = route.targets(vault) if route.targets else {}
            assert vault.jobs.wait_idle(120)  # background enrichment must not move the counts meanwhile
            counts = _request_tables(vault)
            for case in (c for c in cases if expected[c] != route.ok):
                seq, version = vault.changes.last_seq, watch.version()
                answer = await _send(running, route, values, case, token)
                outcome.refused += 1
                _check(outcome, route, case, answer, expected[case])
                published = [c for c in vault.changes.since(seq)[0] if not _background(c)]
                if published:
                    what = ", ".join(f"{c.type} {c.object_id} {dict(c.data)}" for c in published)
                    outcome.failures.append(f"{route.id} {case}: a refused request published a change: {what}")
                if watch.version() != version:
                    # Something committed meanwhile: this request, or background upkeep.  The rows decide.
                    now = _request_tables(vault)
                    if now != counts:
                        moved = {t: (counts.get(t), n) for t, n in now.items() if counts.get(t) != n}
                        outcome.failures.append(f"{route.id} {case}: row counts moved: {moved}")
                        counts = now
            # Then everything that passes the guard, each on a fresh target.
            for case in (c for c in cases if expected[c] == route.ok):
                values = route.targets(vault) if route.targets else {}
                answer = await _send(running, route, values, case, token)
                outcome.accepted += 1
                _check(outcome, route, case, answer, route.ok)
    finally:
        watch.close()
    return outcome


def _request_tables(vault: Vault) -> dict[str, int]:
    """Row counts of every table a request could write.  The activity history is left out: it is written later, on
    its own thread, from changes already published — an entry for an earlier route's change, or for upkeep, can land
    in the middle of the refusals — and a refused request's changes are caught where they are published (above)."""
    counts = table_counts(vault)
    counts.pop("activity", None)
    return counts


#: Changes the vault's own upkeep publishes whenever it runs, whatever the requests: usage counted for an earlier
#: route's recalls flushed a second later, the decay sweep, idle segments closed and summarised by their jobs.
_BACKGROUND_REASONS = {"promoted to hot by use", "demoted: unused", "expired"}
#: Upkeep's and the watcher's own work.  The scheduled backup falls due as the vault opens, and on a busy machine it
#: was made in the middle of the matrix (a refused request cannot make one: only an accepted POST /v6/backups does);
#: the scan of a folder a route's target added runs in the background and reported itself during the refusals that
#: followed (a refused request starts no scan: only an accepted one does, and a scan's writes show in the row counts).
_BACKGROUND_TYPES = {
    "episode.created",
    "episode.closed",
    "job.warning",
    "job.failed",
    "backup.created",
    "watch.scanned",
    "watch.resumed",
    "watch.error",
    "watch.vanished",
}


def _background(change: Change) -> bool:
    """A change of the vault's upkeep, not of a request (see :data:`_BACKGROUND_REASONS`)."""
    if change.type in _BACKGROUND_TYPES:
        return True
    return change.type == "memory.updated" and change.data.get("reason") in _BACKGROUND_REASONS


def _check(outcome: Outcome, route: Route, case: Any, answer: Any, want: int) -> None:
    where = f"{route.id} host={case[0]!r} origin={case[1]!r} token={case[2]} {case[3]}"
    if answer.status != want:
        outcome.failures.append(f"{where}: got {answer.status}, expected {want}: {answer.body!r}")
        return
    if any(name.startswith("access-control-") for name in answer.header_names()):
        outcome.failures.append(f"{where}: CORS header in {answer.headers}")
    if not 200 <= want < 300 and not (route.foreign_shape and want == route.ok):
        try:
            assert_error(answer.response(), want)
        except AssertionError as exc:
            outcome.failures.append(f"{where}: bad error shape: {exc}")


def _assert_matrix(vault: Vault, route: Route, allow_list: str) -> None:
    outcome = asyncio.run(_run_matrix(vault, route, ALLOW_LISTS[allow_list]))
    total = len(HOSTS) * len(ORIGINS) * len(TOKENS) * len(CONTENT_TYPES)
    assert outcome.refused + outcome.accepted == total
    assert outcome.accepted >= 4  # every good Host spelling got through at least once
    assert not outcome.failures, "\n".join(outcome.failures[:40]) + (f"\n… {len(outcome.failures)} failures in all")


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.id)
def test_matrix(matrix_vault: Vault, route: Route) -> None:
    _assert_matrix(matrix_vault, route, "default")


@pytest.mark.parametrize("route", [r for r in ROUTES if r.representative], ids=lambda r: r.id)
def test_matrix_with_an_allowed_origin(matrix_vault: Vault, route: Route) -> None:
    _assert_matrix(matrix_vault, route, "localhost-allowed")


def test_every_app_route_is_in_the_table(matrix_vault: Vault) -> None:
    """A route added to the app without a line in ROUTES would escape the matrix."""
    app = create_app(matrix_vault, token=matrix_vault.endpoint_token(), port=PORT)
    missing = []
    served = 0
    for context in iter_route_contexts(app.routes):
        methods = context.methods
        if methods is None:  # an ASGI app answering every method (MCP): at least one line
            methods = {"POST"}
        for method in sorted(set(methods) - {"HEAD"}):
            served += 1
            if not any(r.method == method and context.path_regex.fullmatch(r.path.split("?")[0]) for r in ROUTES):
                missing.append(f"{method} {context.path}")
    assert not missing, f"add these to ROUTES: {missing}"
    assert served >= 53  # the walk saw the included routers, not just the app's own routes
    assert {"GET /v6/health", "GET /v6/jobs", "POST /mcp"} <= {r.id for r in ROUTES}


def test_refused_requests_never_reach_a_route(matrix_vault: Vault) -> None:
    """Sanity of the matrix itself: the all-good request of a state-changing route does change
    the vault, so 'nothing changed' after a refusal means something."""
    route = next(r for r in ROUTES if r.id == "POST /v6/ingest")

    async def go() -> tuple[int, int]:
        token = matrix_vault.endpoint_token()
        app = create_app(matrix_vault, token=token, port=PORT)
        async with live(app) as running:
            before = matrix_vault.changes.last_seq
            body = {"conversation_id": "matrix-chat", "content": f"Fresh {before}."}
            answer = await running.request(
                "POST",
                route.path,
                [
                    ("host", f"127.0.0.1:{PORT}"),
                    ("content-type", "application/json"),
                    ("authorization", f"Bearer {token}"),
                ],
                json.dumps(body).encode(),
            )
            return answer.status, matrix_vault.changes.last_seq - before

    watch = CommitWatch(matrix_vault)
    try:
        version = watch.version()
        status, published = asyncio.run(go())
        assert status == 202
        assert published >= 1
        assert watch.version() != version  # the commit watch sees the writer's commits
    finally:
        watch.close()
