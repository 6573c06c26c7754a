"""Facts, truth and conflicts over REST: listing and paging, corrections, history, resolution."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import httpx
import pytest

from engine import Vault
from tests.engine.api.conftest import assert_error


def learn(vault: Vault, text: str, conversation: str = "facts-test") -> list[int]:
    return list(vault.events.extract(text, learn=True, conversation_id=conversation).fact_ids)


def add(client: httpx.Client, auth: dict[str, str], subject: str, obj: str) -> dict[str, object]:
    response = client.post(
        "/v6/facts",
        json={"subject": subject, "predicate": "likes", "object_text": obj},
        headers=auth,
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_listing_filters_and_searches(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    learn(vault, "I live in Lisbon.", conversation="c-one")
    learn(vault, "I work as a nurse.", conversation="c-one")
    learn(vault, "My sister Ana likes green tea.", conversation="c-two")

    def statements(**params: str) -> set[str]:
        response = client.get("/v6/facts", params=params, headers=auth)
        assert response.status_code == 200, response.text
        return {f["statement"] for f in response.json()["facts"]}

    assert statements(subject="user") >= {"User lives in Lisbon", "User works as nurse"}
    assert statements(subject="Ana") == {"Ana likes green tea"}
    assert statements(predicate="works_as") == {"User works as nurse"}
    assert statements(q="Lisbon") == {"User lives in Lisbon"}
    assert statements(conversation_id="c-two") >= {"Ana likes green tea"}
    assert "User works as nurse" not in statements(conversation_id="c-two")
    assert statements(status="deleted") == set()
    hot = client.get("/v6/facts", params={"tier": "hot"}, headers=auth).json()["facts"]
    assert all(f["tier"] == "hot" for f in hot)


def page_through(client: httpx.Client, auth: dict[str, str], limit: int, max_pages: int = 50) -> tuple[list[int], int]:
    seen: list[int] = []
    cursor = None
    pages = 0
    while pages < max_pages:  # a cursor that does not advance would page forever
        params: dict[str, str | int] = {"limit": limit, "predicate": "likes"}
        if cursor:
            params["cursor"] = cursor
        page = client.get("/v6/facts", params=params, headers=auth).json()
        pages += 1
        seen += [f["id"] for f in page["facts"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    return seen, pages


def test_pages_cover_every_fact_in_order(client: httpx.Client, auth: dict[str, str]) -> None:
    made = {add(client, auth, "user", f"fruit number {i}")["id"] for i in range(7)}
    seen, pages = page_through(client, auth, 3)
    assert pages == 3 and set(seen) == made
    updated = [client.get(f"/v6/facts/{i}", headers=auth).json()["updated_at"] for i in seen]
    assert updated == sorted(updated, reverse=True)  # most recently changed first


def test_pages_never_repeat_a_fact(client: httpx.Client, auth: dict[str, str]) -> None:
    made = {add(client, auth, "user", f"vegetable number {i}")["id"] for i in range(40)}
    # 39 page boundaries: the rounding goes up at one of them for sure
    seen, pages = page_through(client, auth, 1, max_pages=80)
    assert len(seen) == len(set(seen))
    assert set(seen) == made and pages == 40


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"status": "active,bogus"}, "status"),
        ({"tier": "lukewarm"}, "tier"),
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"as_of": "whenever"}, "as_of"),
    ],
)
def test_bad_list_parameters_name_the_field(
    client: httpx.Client, auth: dict[str, str], params: dict[str, object], field: str
) -> None:
    error = assert_error(client.get("/v6/facts", params=params, headers=auth), 400)
    assert error["details"]["field"] == field  # type: ignore[index]


def test_add_by_hand_goes_through_decide(client: httpx.Client, auth: dict[str, str]) -> None:
    fact = add(client, auth, "user", "oolong tea")
    assert fact["source_role"] == "manual" and fact["status"] == "active"
    assert fact["statement"] == "User likes oolong tea"
    # the same memory again is matched to the stored one (corroborated), not stored twice
    again = add(client, auth, "user", "oolong tea")
    assert again["id"] == fact["id"] and again["corroboration"] == fact["corroboration"] + 1
    missing = client.post("/v6/facts", json={"subject": "user", "predicate": "likes"}, headers=auth)
    assert assert_error(missing, 400)["details"]["field"] == "object_text"  # type: ignore[index]
    blank = client.post(
        "/v6/facts",
        json={"subject": " ", "predicate": "likes", "object_text": "x"},
        headers=auth,
    )
    assert assert_error(blank, 400)["details"]["field"] == "subject"  # type: ignore[index]


def test_get_unknown_or_malformed_ids(client: httpx.Client, auth: dict[str, str]) -> None:
    error = assert_error(client.get("/v6/facts/999999", headers=auth), 404, "not_found")
    assert error["details"]["kind"] == "fact"  # type: ignore[index]
    malformed = assert_error(client.get("/v6/facts/abc", headers=auth), 400)
    assert malformed["details"]["field"] == "fact_id"  # type: ignore[index]


def test_edit_writes_a_new_version_and_keeps_history(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    [old_id] = learn(vault, "I live in Lisbon.")
    before_edit = datetime.now(UTC)
    time.sleep(0.01)
    response = client.patch(f"/v6/facts/{old_id}", json={"object_text": "Porto"}, headers=auth)
    assert response.status_code == 200, response.text
    new = response.json()
    assert new["id"] != old_id and new["previous_id"] == old_id
    assert (new["object_text"], new["source_role"]) == ("Porto", "manual")
    old = client.get(f"/v6/facts/{old_id}", headers=auth).json()
    assert (old["status"], old["superseded_by"]) == ("superseded", new["id"])
    history = client.get(f"/v6/facts/{new['id']}/history", headers=auth).json()["facts"]
    assert [f["id"] for f in history] == [old_id, new["id"]]
    superseded = client.get("/v6/facts/superseded", headers=auth).json()["facts"]
    assert old_id in [f["id"] for f in superseded]
    # as of before the edit, Lisbon was the truth
    then = client.get(
        "/v6/facts",
        params={"predicate": "lives_in", "as_of": before_edit.isoformat()},
        headers=auth,
    ).json()["facts"]
    assert [f["object_text"] for f in then] == ["Lisbon"]
    # only current facts can be corrected; an empty correction is refused
    assert_error(client.patch(f"/v6/facts/{old_id}", json={"object_text": "Faro"}, headers=auth), 409)
    assert_error(client.patch(f"/v6/facts/{new['id']}", json={}, headers=auth), 400)


def test_delete_is_soft_and_restore_undoes_it(client: httpx.Client, auth: dict[str, str]) -> None:
    fact = add(client, auth, "user", "jasmine tea")
    deleted = client.delete(f"/v6/facts/{fact['id']}", headers=auth)
    assert deleted.status_code == 200 and deleted.json()["status"] == "deleted"
    listed = client.get("/v6/facts", params={"predicate": "likes"}, headers=auth).json()
    assert fact["id"] not in [f["id"] for f in listed["facts"]]
    restored = client.post(f"/v6/facts/{fact['id']}/restore", headers=auth)
    assert restored.status_code == 200 and restored.json()["status"] == "active"
    assert_error(client.post(f"/v6/facts/{fact['id']}/restore", headers=auth), 409, "conflict")
    assert_error(client.delete("/v6/facts/424242", headers=auth), 404)


def test_retract_brings_back_the_replaced_version(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    [first] = learn(vault, "I live in Lisbon.")
    second = client.patch(f"/v6/facts/{first}", json={"object_text": "Porto"}, headers=auth)
    retracted = client.post(f"/v6/facts/{second.json()['id']}/retract", headers=auth)
    assert retracted.status_code == 200 and retracted.json()["status"] == "retracted"
    assert client.get(f"/v6/facts/{first}", headers=auth).json()["status"] == "active"
    assert_error(client.post(f"/v6/facts/{second.json()['id']}/retract", headers=auth), 409)


def test_approve_tier_and_signal(client: httpx.Client, auth: dict[str, str]) -> None:
    fact = add(client, auth, "Bo", "hiking")
    approved = client.post(f"/v6/facts/{fact['id']}/approve", headers=auth).json()
    assert approved["metadata"]["source_class"] == "manual"
    pinned = client.post(f"/v6/facts/{fact['id']}/tier", json={"tier": "cold", "pinned": True}, headers=auth).json()
    assert (pinned["tier"], pinned["tier_pinned"]) == ("cold", True)
    unpinned = client.post(f"/v6/facts/{fact['id']}/tier", json={"tier": "cold", "pinned": False}, headers=auth).json()
    assert unpinned["tier_pinned"] is False
    marked = client.post(f"/v6/facts/{fact['id']}/signal", json={"signal": "useful"}, headers=auth).json()
    assert marked["useful_count"] == 1 and marked["importance"] > fact["importance"]
    bad = client.post(f"/v6/facts/{fact['id']}/signal", json={"signal": "meh"}, headers=auth)
    assert assert_error(bad, 400)["details"]["field"] == "signal"  # type: ignore[index]
    bad_tier = client.post(f"/v6/facts/{fact['id']}/tier", json={"tier": "x"}, headers=auth)
    assert assert_error(bad_tier, 400)["details"]["field"] == "tier"  # type: ignore[index]


def test_truth_answers_slot_winners(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    learn(vault, "I live in Lisbon. I like tea. I like coffee.")
    truth = client.get("/v6/truth", params={"subject": "user"}, headers=auth).json()["truth"]
    by_predicate: dict[str, list[str]] = {}
    for entry in truth:
        by_predicate.setdefault(entry["predicate"], []).append(entry["fact"]["object_text"])
    assert by_predicate["lives_in"] == ["Lisbon"]
    assert sorted(by_predicate["likes"]) == ["coffee", "tea"]
    assert {e["cardinality"] for e in truth if e["predicate"] == "lives_in"} == {"single"}


def test_conflicts_list_and_resolve(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    [paris] = learn(vault, "I live in Paris.")
    [berlin] = learn(vault, "I live in Berlin.")
    conflicts = client.get("/v6/conflicts", headers=auth).json()["conflicts"]
    assert len(conflicts) == 1
    conflict = conflicts[0]
    assert {conflict["fact_a"]["id"], conflict["fact_b"]["id"]} == {paris, berlin}
    assert conflict["status"] == "open" and conflict["predicate"] == "lives_in"

    not_a_side = client.post(f"/v6/conflicts/{conflict['id']}/resolve", json={"winner_id": 1}, headers=auth)
    assert assert_error(not_a_side, 400)["details"]["field"] == "winner_id"  # type: ignore[index]
    missing = client.post(f"/v6/conflicts/{conflict['id']}/resolve", json={}, headers=auth)
    assert assert_error(missing, 400)["details"]["field"] == "winner_id"  # type: ignore[index]

    resolved = client.post(f"/v6/conflicts/{conflict['id']}/resolve", json={"winner_id": berlin}, headers=auth)
    assert resolved.status_code == 200
    assert (resolved.json()["status"], resolved.json()["winner_id"]) == ("resolved", berlin)
    assert client.get(f"/v6/facts/{paris}", headers=auth).json()["status"] == "superseded"
    again = client.post(f"/v6/conflicts/{conflict['id']}/resolve", json={"winner_id": None}, headers=auth)
    assert_error(again, 409, "conflict")
    assert client.get("/v6/conflicts", headers=auth).json()["conflicts"] == []
    every = client.get("/v6/conflicts", params={"status": "all"}, headers=auth).json()
    assert [c["id"] for c in every["conflicts"]] == [conflict["id"]]
    assert_error(client.post("/v6/conflicts/99999/resolve", json={"winner_id": None}, headers=auth), 404)


def test_resolving_with_null_keeps_both(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    [rome] = learn(vault, "I live in Rome.")
    [oslo] = learn(vault, "I live in Oslo.")
    [conflict] = client.get("/v6/conflicts", headers=auth).json()["conflicts"]
    resolved = client.post(f"/v6/conflicts/{conflict['id']}/resolve", json={"winner_id": None}, headers=auth).json()
    assert resolved["winner_id"] is None and resolved["status"] == "resolved"
    statuses = {client.get(f"/v6/facts/{i}", headers=auth).json()["status"] for i in (rome, oslo)}
    assert statuses == {"active"}
