"""``POST /v6/ingest``, ``/v6/ingest/batch`` and ``/v6/extract`` against a real vault."""

from __future__ import annotations

import typing

import httpx
import pytest

from engine import Vault
from engine.api.models.events import MAX_BATCH_EVENTS, EventBody, EventType, Role
from engine.events import EVENT_TYPES, MAX_CONTENT_CHARS, ROLES
from tests.engine.api.conftest import assert_error, table_counts


def event(**fields: object) -> dict[str, object]:
    return {"conversation_id": "chat-1", "content": "I live in Lisbon.", **fields}


def test_ingest_acknowledges_a_committed_event(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    response = client.post(
        "/v6/ingest",
        json=event(occurred_at="2026-03-01T09:30:00", author="Ana", metadata={"app": "x"}),
        headers=auth,
    )
    assert response.status_code == 202
    ack = response.json()
    assert set(ack) == {"event_id", "status"} and ack["status"] == "queued"
    stored = vault.conversations.event(ack["event_id"])  # committed before the answer
    assert stored.content == "I live in Lisbon." and stored.source == "api"
    assert stored.author == "Ana" and dict(stored.metadata) == {"app": "x"}
    # a time without a zone is UTC, and every time the endpoint writes is ISO-8601 UTC
    assert stored.occurred_at.isoformat() == "2026-03-01T09:30:00+00:00"
    value = client.get(f"/v6/objects/{ack['event_id']}", headers=auth).json()["value"]
    assert value["occurred_at"] == "2026-03-01T09:30:00Z"
    assert value["ingested_at"].endswith("Z")


def test_resending_an_event_is_a_duplicate_with_the_same_id(client: httpx.Client, auth: dict[str, str]) -> None:
    body = event(external_id="turn-7")
    first = client.post("/v6/ingest", json=body, headers=auth).json()
    again = client.post("/v6/ingest", json=body, headers=auth)
    assert again.status_code == 202
    assert again.json() == {"event_id": first["event_id"], "status": "duplicate"}


@pytest.mark.parametrize(
    ("fields", "status"),
    [
        ({"role": "system", "content": "You are a helpful assistant."}, "skipped"),
        ({"content": "my card is 4111 1111 1111 1111"}, "blocked"),
    ],
)
def test_system_turns_and_blocked_content_are_stored_but_not_learned(
    client: httpx.Client, auth: dict[str, str], fields: dict[str, str], status: str
) -> None:
    ack = client.post("/v6/ingest", json=event(**fields), headers=auth).json()
    assert ack["status"] == status


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": "no conversation"}, "conversation_id"),
        (event(content=""), "content"),
        (event(content="   "), "content"),
        (event(content="x" * (MAX_CONTENT_CHARS + 1)), "content"),
        (event(role="robot"), "role"),
        (event(type="email"), "type"),
        (event(occurred_at="next tuesday-ish"), "occurred_at"),
        (event(metadata=["not", "an", "object"]), "metadata"),
        (event(conversationId="typo"), "conversationId"),
        (event(source="gui"), "source"),  # where an event came from is stamped, not claimed
        (event(user_id=""), "user_id"),
    ],
)
def test_invalid_events_name_the_field_and_store_nothing(
    client: httpx.Client, auth: dict[str, str], vault: Vault, body: dict[str, object], field: str
) -> None:
    before = table_counts(vault)
    error = assert_error(client.post("/v6/ingest", json=body, headers=auth), 400)
    assert error["details"]["field"] == field  # type: ignore[index]
    assert table_counts(vault) == before


def test_a_batch_is_stored_in_order_in_one_transaction(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    events = [
        event(content="My name is Ana."),
        event(content="Hi Ana!", role="assistant"),
        event(content="My name is Ana."),  # same content, same time: a duplicate of the first
    ]
    response = client.post(
        "/v6/ingest/batch",
        json={"events": [{**e, "occurred_at": "2026-03-01T10:00:00Z"} for e in events]},
        headers=auth,
    )
    assert response.status_code == 202
    ack = response.json()
    assert ack["statuses"] == ["queued", "queued", "duplicate"]
    assert ack["event_ids"][2] == ack["event_ids"][0]
    stored = [vault.conversations.event(i) for i in ack["event_ids"][:2]]
    assert [e.content for e in stored] == ["My name is Ana.", "Hi Ana!"]
    assert [e.role for e in stored] == ["user", "assistant"]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"content": ""}, "events[2].content"),  # refused by the request model
        ({"content": "   "}, "events[2].content"),  # refused by the engine
        ({"role": "robot"}, "events[2].role"),
        ({"conversation_id": None}, "events[2].conversation_id"),
    ],
)
def test_one_bad_event_refuses_the_whole_batch(
    client: httpx.Client,
    auth: dict[str, str],
    vault: Vault,
    bad: dict[str, object],
    field: str,
) -> None:
    before = table_counts(vault)
    events = [event(content="First."), event(content="Second."), event(**bad)]
    error = assert_error(client.post("/v6/ingest/batch", json={"events": events}, headers=auth), 400)
    assert error["details"]["field"] == field  # type: ignore[index]
    assert error["message"].startswith(f"{field}: ")  # type: ignore[union-attr]
    assert table_counts(vault) == before


def test_batch_size_limits(client: httpx.Client, auth: dict[str, str]) -> None:
    empty = assert_error(client.post("/v6/ingest/batch", json={"events": []}, headers=auth), 400)
    assert empty["details"]["field"] == "events"  # type: ignore[index]
    many = {"events": [event(content=f"n {i}") for i in range(MAX_BATCH_EVENTS + 1)]}
    assert_error(client.post("/v6/ingest/batch", json=many, headers=auth), 400)


def test_extract_is_a_dry_run_by_default(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    before = table_counts(vault)
    response = client.post("/v6/extract", json={"text": "I live in Lisbon and I work as a nurse."}, headers=auth)
    assert response.status_code == 200
    trace = response.json()
    stages = [s["stage"] for s in trace["stages"]]
    assert stages[0] == "firewall" and stages[-1] == "tier"
    assert {"classify", "extract", "match", "decide", "embed"} <= set(stages)
    assert all(isinstance(s["ms"], float) and s["summary"] for s in trace["stages"])
    predicates = {d["predicate"] for d in trace["decisions"]}
    assert {"lives_in", "works_as"} <= predicates
    assert trace["learned"] is False and trace["event_id"] is None and trace["fact_ids"] == []
    assert table_counts(vault) == before


def test_extract_with_learn_stores_the_text_and_its_facts(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    response = client.post(
        "/v6/extract",
        json={"text": "I work as a nurse.", "learn": True, "conversation_id": "extract-test"},
        headers=auth,
    )
    trace = response.json()
    assert trace["learned"] is True and trace["event_id"] is not None
    assert trace["fact_ids"]
    fact = vault.facts.get(trace["fact_ids"][0])
    assert (fact.predicate, fact.object_text) == ("works_as", "nurse")
    assert vault.conversations.event(trace["event_id"]).source == "extract"


def test_extract_refuses_empty_text(client: httpx.Client, auth: dict[str, str]) -> None:
    error = assert_error(client.post("/v6/extract", json={"text": ""}, headers=auth), 400)
    assert error["details"]["field"] == "text"  # type: ignore[index]


def test_request_models_repeat_the_engines_limits() -> None:
    assert typing.get_args(Role) == ROLES
    assert typing.get_args(EventType) == EVENT_TYPES
    limits = {m.__class__.__name__: m for m in EventBody.model_fields["content"].metadata}
    assert limits["MaxLen"].max_length == MAX_CONTENT_CHARS


def _fast_path_count(client: httpx.Client) -> int:
    app = typing.cast(typing.Any, client).app
    app.middleware_stack = app.middleware_stack or app.build_middleware_stack()
    return int(app.fast_ingest.answered)


def test_valid_single_events_take_the_fast_path_and_answer_as_the_route_does(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    first = client.post("/v6/ingest", json=event(external_id="fast-1"), headers=auth)
    before = _fast_path_count(client)
    assert before >= 1  # the stack is built on the first request; that one was answered on the fast path
    again = client.post("/v6/ingest", json=event(external_id="fast-1"), headers=auth)
    assert _fast_path_count(client) == before + 1
    assert first.status_code == again.status_code == 202
    assert first.headers["content-type"] == "application/json"
    assert again.json() == {"event_id": first.json()["event_id"], "status": "duplicate"}
    assert "access-control-allow-origin" not in first.headers  # the guard's header filter still applies


def test_what_the_fast_path_does_not_accept_goes_to_the_route(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    client.post("/v6/ingest", json=event(), headers=auth)
    assert vault.jobs.wait_idle(120)  # its enrichment is done: the counts below change only if a refusal stored
    before = _fast_path_count(client)
    counts = table_counts(vault)
    missing = client.post("/v6/ingest", json={"content": "no conversation"}, headers=auth)
    assert_error(missing, 400, "validation_error")
    assert missing.json()["error"]["details"]["field"] == "conversation_id"  # FastAPI's own answer, field named
    garbled = client.post(
        "/v6/ingest", content=b'{"conversation_id": "c", ', headers={**auth, "content-type": "application/json"}
    )
    assert_error(garbled, 400)
    assert _fast_path_count(client) == before
    assert table_counts(vault) == counts  # nothing stored by either refusal


def test_an_engine_refusal_on_the_fast_path_has_the_endpoints_error_shape(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    assert vault.jobs.wait_idle(120)
    before = _fast_path_count(client)
    counts = table_counts(vault)
    # blank content passes the body model (one character or more) and is refused by the vault itself
    response = client.post("/v6/ingest", json=event(content="   "), headers=auth)
    assert_error(response, 400, "validation_error")
    body = response.json()["error"]
    assert "content" in body["message"] and body["details"]["fix"] is not None
    assert _fast_path_count(client) == before  # refused, so not counted as answered
    assert table_counts(vault) == counts
