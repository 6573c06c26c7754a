"""``POST /v6/recall`` against a real vault: the answer's shape and content, ISO-8601 times, the
document strategies, and validation errors that name the field."""

from __future__ import annotations

import typing
from datetime import datetime
from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from engine import Vault
from engine.api.fast_recall import encode_result
from engine.api.models.recall import RecallOut
from engine.events import EventIn
from engine.recall.types import RecallRequest
from tests.engine.api.conftest import assert_error, table_counts

RESULT_FIELDS = {
    "llm_context",
    "answer_facts",
    "supporting_facts",
    "background_context",
    "blocks",
    "conversation_history",
    "working_memory",
    "documents",
    "routing",
    "timings_ms",
}


def recall(client: httpx.Client, auth: dict[str, str], **body: Any) -> httpx.Response:
    return client.post("/v6/recall", json={"conversation_id": "chat-r", **body}, headers=auth)


def test_recall_answers_the_learned_fact_with_its_evidence(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    report = vault.events.extract("I live in Lisbon and I work as a nurse.", learn=True, conversation_id="chat-r")
    vault.events.ingest(EventIn(conversation_id="chat-r", content="Any tips for the weekend?"))
    response = recall(client, auth, query="Where do I live?")
    assert response.status_code == 200
    out = response.json()
    assert set(out) == RESULT_FIELDS
    assert "Lisbon" in out["llm_context"]["text"] and out["llm_context"]["tokens"] > 0
    [answer] = [b for b in out["answer_facts"] if "Lisbon" in b["content"]]
    assert answer["kind"] == "fact" and answer["id"] in report.fact_ids
    assert answer["meta"]["predicate"] == "lives_in" and answer["meta"]["injected"] is True
    evidence = answer["evidence"][0]  # the quote itself (neighbouring turns may follow)
    assert evidence["text"].startswith("I live in Lisbon") and evidence["source_kind"] == "event"
    assert evidence["source_id"] == report.event_id
    # every time is ISO-8601 UTC
    assert answer["at"].endswith("Z") and evidence["at"].endswith("Z")
    assert [t["content"] for t in out["conversation_history"]][-1] == "Any tips for the weekend?"
    assert all(t["at"].endswith("Z") for t in out["conversation_history"])
    assert {b["content"] for b in out["working_memory"]} >= {"User lives in Lisbon"}
    assert out["routing"]["strategy"] == "LOCAL" and out["routing"]["degraded"] is False
    assert out["routing"]["subjects"] == ["user (vault owner)"]
    assert set(out["routing"]["channels"]["keyword"]) == {"ran", "hits", "ms", "note"}
    assert out["timings_ms"]["total"] > 0


def test_reference_time_anchors_relative_dates(client: httpx.Client, auth: dict[str, str]) -> None:
    iso = recall(client, auth, query="What did I do last week?", reference_time="2026-03-10T12:00:00")
    epoch = recall(client, auth, query="What did I do last week?", reference_time=1773144000)
    for response in (iso, epoch):
        assert response.status_code == 200, response.text
        window = response.json()["routing"]["temporal_range"]
        assert window["expression"] == "last week"
        start, end = (datetime.fromisoformat(window[k]) for k in ("start", "end"))
        assert window["start"].endswith("Z") and start.utcoffset() is not None
        assert (start.isoformat(), end.isoformat()) == (
            "2026-03-02T00:00:00+00:00",
            "2026-03-09T00:00:00+00:00",
        )


def test_token_budget_and_limit_are_honoured(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    for n in range(30):
        vault.facts.add("user", "likes", f"board game number {n} with long rules")
    out = recall(client, auth, query="What games do I like?", limit=5, token_budget=120).json()
    assert len(out["blocks"]) <= 5
    assert out["llm_context"]["tokens"] <= 120


def test_a_document_question_uses_the_document_strategy(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    uploaded = client.post(
        "/v6/documents",
        json={
            "name": "lighthouse.md",
            "content": "# Lamp\n\nThe lamp is lit at dusk by the keeper.\n\n"
            "# Oil\n\nOil is delivered every Tuesday by boat.",
        },
        headers=auth,
    ).json()
    assert vault.jobs.wait_idle(120)  # distilled: the DOCUMENT strategy runs undegraded
    out = recall(client, auth, query="When is the oil delivered?", document_id=uploaded["document_id"]).json()
    assert out["routing"]["strategy"] == "DOCUMENT" and out["routing"]["degraded"] is False
    assert out["documents"] and all(b["meta"]["document_id"] == uploaded["document_id"] for b in out["documents"])
    assert "every Tuesday" in out["llm_context"]["text"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"conversation_id": None}, "conversation_id"),
        ({"conversation_id": ""}, "conversation_id"),
        ({"query": "x" * 8001}, "query"),
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
        ({"token_budget": 99}, "token_budget"),
        ({"token_budget": 32_001}, "token_budget"),
        ({"reference_time": "the day after"}, "reference_time"),
        ({"document_id": "seven"}, "document_id"),
        ({"user_id": ""}, "user_id"),
        ({"querry": "typo"}, "querry"),
    ],
)
def test_a_bad_field_is_a_400_naming_it(
    client: httpx.Client, auth: dict[str, str], vault: Vault, body: dict[str, Any], field: str
) -> None:
    before = table_counts(vault)
    error = assert_error(recall(client, auth, **{"query": "Where do I live?", **body}), 400)
    assert error["details"]["field"] == field  # type: ignore[index]
    assert error["message"].startswith(f"{field}: ")  # type: ignore[union-attr]
    assert table_counts(vault) == before


def test_a_missing_conversation_id_is_named(client: httpx.Client, auth: dict[str, str]) -> None:
    error = assert_error(client.post("/v6/recall", json={"query": "x"}, headers=auth), 400)
    assert error["details"]["field"] == "conversation_id"  # type: ignore[index]


@pytest.mark.parametrize("scope", ["document_id", "collection_id"])
def test_an_unknown_document_or_collection_is_a_404(client: httpx.Client, auth: dict[str, str], scope: str) -> None:
    error = assert_error(recall(client, auth, query="x", **{scope: 987_654}), 404, "not_found")
    assert error["details"]["id"] == 987_654  # type: ignore[index]


def _fast_path_count(client: httpx.Client) -> int:
    app = typing.cast(Any, client).app
    app.middleware_stack = app.middleware_stack or app.build_middleware_stack()
    return int(app.fast_recall.answered)


def test_valid_recalls_take_the_fast_path(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    vault.events.extract("I live in Lisbon.", learn=True, conversation_id="chat-r")
    recall(client, auth, query="warm-up")  # the middleware stack is built on the first request
    before = _fast_path_count(client)
    response = recall(client, auth, query="Where do I live?")
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert _fast_path_count(client) == before + 1
    assert "Lisbon" in response.json()["llm_context"]["text"]
    # a refusal is the lean handler's too, in the endpoint's error shape (only answers are counted)
    error = assert_error(recall(client, auth, query="x", limit=0), 400, "validation_error")
    assert error["details"]["field"] == "limit"  # type: ignore[index]
    assert _fast_path_count(client) == before + 1
    # an engine error is answered in the same shape as on every route
    error = assert_error(recall(client, auth, query="x", document_id=987_654), 404, "not_found")
    assert error["details"]["id"] == 987_654  # type: ignore[index]


def test_the_fast_paths_json_is_the_response_models_json(vault: Vault) -> None:
    """The fast path encodes the engine's result directly; byte for byte what ``RecallOut`` (the answer the OpenAPI
    document describes) writes,
    for an answer with facts, evidence, a time window, history, working memory and document blocks."""
    vault.events.extract("I live in Lisbon and I work as a nurse.", learn=True, conversation_id="chat-r")
    vault.events.ingest(EventIn(conversation_id="chat-r", content="Last week I went sailing with Ana."))
    vault.documents.upload(name="harbour.md", text="# Boats\n\nThe ferry leaves at nine.\n\n# Fees\n\nMooring is free.")
    assert vault.jobs.wait_idle(120)
    adapter = TypeAdapter(RecallOut)
    seen: set[str] = set()
    for query in ("Where do I live?", "What did I do last week?", "When does the ferry leave?"):
        result = vault.recall(
            RecallRequest(conversation_id="chat-r", query=query, reference_time="2026-03-10T12:00:00Z")
        )
        assert encode_result(result) == adapter.dump_json(RecallOut.of(result))
        seen.update(b.kind for b in result.blocks)
        present = {
            "evidence": any(b.evidence for b in result.blocks),
            "window": result.routing.temporal_range is not None,
            "history": bool(result.conversation_history),
            "working": bool(result.working_memory),
        }
        seen.update(name for name, there in present.items() if there)
    assert {"fact", "span", "evidence", "window", "history", "working"} <= seen, seen
