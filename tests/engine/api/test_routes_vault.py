"""Conversations, episodes, subjects, objects by id, jobs and forgetting, over REST."""

from __future__ import annotations

import httpx
import pytest

from engine import Vault
from engine.events import EventIn
from engine.forget import ForgetScope
from engine.jobs import enqueue
from tests.engine.api.conftest import assert_error, table_counts


def ingest(vault: Vault, conversation: str, *texts: str, user: str = "default") -> list[int]:
    results = vault.events.ingest(
        [
            EventIn(conversation_id=conversation, content=t, user_id=user, occurred_at=1_770_000_000 + i)
            for i, t in enumerate(texts)
        ]
    )
    return [r.event_id for r in results]


def test_conversations_and_their_events(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    ids = ingest(vault, "team/standup", "One.", "Two.", "Three.", "Four.", "Five.")
    ingest(vault, "other", "Elsewhere.")
    listed = client.get("/v6/conversations", headers=auth).json()["conversations"]
    by_id = {c["conversation_id"]: c for c in listed}
    assert by_id["team/standup"]["events"] == 5 and by_id["other"]["events"] == 1
    assert by_id["team/standup"]["first_at"] == "2026-02-02T02:40:00Z"

    # ids with a slash work as they are, and the window pages backwards
    page = client.get("/v6/conversations/team/standup/events", params={"limit": 2}, headers=auth).json()
    assert [e["id"] for e in page["events"]] == ids[3:]
    assert page["next_before_id"] == ids[3]
    older = client.get(
        "/v6/conversations/team/standup/events",
        params={"limit": 2, "before_id": page["next_before_id"]},
        headers=auth,
    ).json()
    assert [e["content"] for e in older["events"]] == ["Two.", "Three."]
    rest = client.get(
        "/v6/conversations/team/standup/events",
        params={"limit": 10, "before_id": ids[1]},
        headers=auth,
    ).json()
    assert [e["id"] for e in rest["events"]] == ids[:1] and rest["next_before_id"] is None
    assert_error(client.get("/v6/conversations/nobody/events", headers=auth), 404, "not_found")


def test_closing_a_conversation_closes_its_open_episode(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    ingest(vault, "chat-close", "Hello there, I am Ana.", "I work as a nurse in Porto.")
    closed = client.post("/v6/conversations/chat-close/close", headers=auth)
    assert closed.status_code == 200
    assert closed.json() == {"conversation_id": "chat-close", "closed": 1}
    assert client.post("/v6/conversations/chat-close/close", headers=auth).json()["closed"] == 0
    episodes = client.get("/v6/episodes", params={"conversation_id": "chat-close"}, headers=auth).json()["episodes"]
    assert len(episodes) == 1
    assert episodes[0]["status"] in ("closed", "summarized") and episodes[0]["turn_count"] == 2
    assert vault.jobs.wait_idle(120)
    summarized = client.get(f"/v6/objects/{episodes[0]['id']}", headers=auth).json()
    assert summarized["kind"] == "episode" and summarized["value"]["status"] == "summarized"
    assert "nurse" in summarized["value"]["summary"]


def test_subjects_list_get_rename_merge(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    melanie = vault.facts.add("Melanie", "likes", "painting")
    mel = vault.facts.add("Mel", "likes", "pottery")
    listed = client.get("/v6/subjects", params={"q": "Mel"}, headers=auth).json()["subjects"]
    assert {s["name"] for s in listed} == {"Melanie", "Mel"}

    one = client.get(f"/v6/subjects/{melanie.subject_id}", headers=auth).json()
    assert (one["name"], one["fact_count"]) == ("Melanie", 1)
    assert_error(client.get("/v6/subjects/987654", headers=auth), 404)

    renamed = client.post(
        f"/v6/subjects/{melanie.subject_id}/rename", json={"name": "Melanie Chen"}, headers=auth
    ).json()
    assert renamed["name"] == "Melanie Chen" and "Melanie" in renamed["aliases"]
    taken = client.post(f"/v6/subjects/{mel.subject_id}/rename", json={"name": "melanie chen"}, headers=auth)
    assert_error(taken, 409, "conflict")

    merged = client.post(
        f"/v6/subjects/{melanie.subject_id}/merge",
        json={"merge_ids": [mel.subject_id]},
        headers=auth,
    ).json()
    assert merged["fact_count"] == 2 and "Mel" in merged["aliases"]
    assert vault.facts.get(mel.id).subject_id == melanie.subject_id
    empty = client.post(f"/v6/subjects/{melanie.subject_id}/merge", json={"merge_ids": []}, headers=auth)
    assert assert_error(empty, 400)["details"]["field"] == "merge_ids"  # type: ignore[index]


def test_the_owner_cannot_be_renamed(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    owner = vault.facts.add("user", "likes", "tea")
    response = client.post(f"/v6/subjects/{owner.subject_id}/rename", json={"name": "Someone"}, headers=auth)
    assert_error(response, 409, "conflict")


def test_objects_by_global_id_answer_every_kind(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    report = vault.events.extract("I live in Paris.", learn=True, conversation_id="objects")
    vault.events.extract("I live in Berlin.", learn=True, conversation_id="objects")
    fact = vault.facts.get(report.fact_ids[0])
    conflict = vault.conflicts()[0]
    episode = vault.conversations.episodes("objects")[0]
    made = vault.forget(ForgetScope(user_id="nobody", dry_run=True))
    expected = {
        report.event_id: ("event", "content", "I live in Paris."),
        fact.id: ("fact", "object_text", "Paris"),
        fact.subject_id: ("subject", "name", "user"),
        conflict.id: ("conflict", "predicate", "lives_in"),
        episode.id: ("episode", "conversation_id", "objects"),
        made.receipt_id: ("receipt", "dry_run", True),
    }
    for object_id, (kind, key, value) in expected.items():
        answer = client.get(f"/v6/objects/{object_id}", headers=auth).json()
        assert (answer["id"], answer["kind"]) == (object_id, kind)
        assert answer["value"][key] == value


def test_objects_of_kinds_without_a_view_and_unknown_ids(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    job_id = vault.store.write(lambda tx: enqueue(tx, "nothing_to_do", {}))
    answer = client.get(f"/v6/objects/{job_id}", headers=auth).json()
    assert answer == {"id": job_id, "kind": "job", "value": None}
    assert_error(client.get("/v6/objects/55555555", headers=auth), 404, "not_found")


def park_a_job(vault: Vault) -> int:
    """A job that failed all its attempts (seeded directly: no handler fails on purpose)."""

    def op(tx):  # type: ignore[no-untyped-def]
        job_id = enqueue(tx, "summarize_episode", {"episode_id": 424242})
        tx.execute(
            "UPDATE jobs SET status = 'parked', attempts = max_attempts, "
            "last_error = 'ModelUnavailable: gone' WHERE id = ?",
            (job_id,),
        )
        return job_id

    return int(vault.store.write(op))


def test_jobs_show_the_queue_and_retry_parked_failures(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    job_id = park_a_job(vault)
    jobs = client.get("/v6/jobs", headers=auth).json()
    assert jobs["parked"] == 1 and jobs["queue_depth"] == jobs["queued"] + jobs["running"]
    [failure] = jobs["failures"]
    assert (failure["id"], failure["kind"], failure["status"]) == (
        job_id,
        "summarize_episode",
        "parked",
    )
    assert failure["last_error"] == "ModelUnavailable: gone"
    assert failure["created_at"].endswith("Z") and failure["payload"] == {"episode_id": 424242}

    assert client.post("/v6/jobs/retry", json={"job_ids": [job_id + 1000]}, headers=auth).json() == {"requeued": 0}
    retried = client.post("/v6/jobs/retry", json={"job_ids": [job_id]}, headers=auth)
    assert retried.json() == {"requeued": 1}
    assert job_id not in [f["id"] for f in client.get("/v6/jobs", headers=auth).json()["failures"]]
    park_a_job(vault)
    assert client.post("/v6/jobs/retry", headers=auth).json() == {"requeued": 1}  # no body: all


def test_forget_dry_run_counts_and_keeps_everything(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    ids = ingest(vault, "forget-me", "I live in Lisbon.", "My sister is Ana.")
    assert vault.jobs.wait_idle(120)
    before = table_counts(vault)
    response = client.post(
        "/v6/forget",
        json={"user_id": "default", "conversation_id": "forget-me", "dry_run": True},
        headers=auth,
    )
    assert response.status_code == 200
    receipt = response.json()
    assert receipt["dry_run"] is True and receipt["deleted_counts"]["events"] == 2
    assert receipt["deleted_counts"]["facts"] >= 2
    after = table_counts(vault)
    assert after["events"] == before["events"] and after["facts"] == before["facts"]
    assert client.get(f"/v6/objects/{ids[0]}", headers=auth).status_code == 200


def test_forget_removes_the_scope_and_leaves_a_receipt(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    gone = ingest(vault, "forget-me", "I live in Lisbon.")
    kept = ingest(vault, "keep-me", "I work as a nurse.")
    assert vault.jobs.wait_idle(120)
    response = client.post("/v6/forget", json={"user_id": "default", "conversation_id": "forget-me"}, headers=auth)
    receipt = response.json()
    assert receipt["dry_run"] is False and receipt["deleted_counts"]["events"] == 1
    assert receipt["scope"]["conversation_id"] == "forget-me"
    assert len(receipt["notes"]) == 1 and "backup" in receipt["notes"][0]  # the backup policy, stated
    assert_error(client.get(f"/v6/objects/{gone[0]}", headers=auth), 404)
    assert client.get(f"/v6/objects/{kept[0]}", headers=auth).json()["kind"] == "event"
    stored = client.get(f"/v6/forget/receipts/{receipt['receipt_id']}", headers=auth).json()
    assert stored == receipt
    assert_error(client.get("/v6/forget/receipts/31337", headers=auth), 404)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "user_id"),  # an empty body must never mean "everything"
        ({"conversation_id": "x"}, "user_id"),
        ({"user_id": "default", "since": "2026-02-01", "until": "2026-01-01"}, "until"),
        ({"user_id": "default", "everything": True}, "everything"),
    ],
)
def test_forget_refuses_an_unclear_scope(
    client: httpx.Client,
    auth: dict[str, str],
    vault: Vault,
    body: dict[str, object],
    field: str,
) -> None:
    ingest(vault, "safe", "I live in Lisbon.")
    before = table_counts(vault)
    error = assert_error(client.post("/v6/forget", json=body, headers=auth), 400)
    assert error["details"]["field"] == field  # type: ignore[index]
    assert table_counts(vault)["events"] == before["events"]
