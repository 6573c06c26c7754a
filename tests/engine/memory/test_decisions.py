"""Decisions and their invariants under random sequences of statements (DESIGN §3 and §4 stage 7).

Each example opens a fresh vault and applies a random sequence of user, assistant and tool statements, half
through ``extract(learn=True)`` (which reports its decisions) and half through ingest + ``wait_idle`` (the
background worker).  After every step the invariants of :func:`check_invariants` hold, and each reported
decision did what it says: UPDATE keeps the old version reachable by an as-of query, MERGE adds no row, NOOP
changes nothing, LINK (a known relationship mentioned again) adds no row and tags the new turn with the
relationship's people, RETRACT ends the fact, CONFLICT opens a conflict, RESOLVE settles it, and an assistant or tool
never overrules the user.  At the end every event is enriched again, which must change no row.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings, strategies as st

from engine import Vault
from engine.events import EventIn
from engine.facts.model import Fact
from engine.jobs import enqueue
from tests.engine.memory.support import (
    AUTHORITATIVE,
    ChangeLog,
    check_invariants,
    every_fact,
    open_vault,
    rows,
)

CITIES = ("Hanoi", "Paris", "Lisbon", "Oslo")
THINGS = ("jazz", "chess", "sushi")
NAMES = ("Anna", "Marco")
TEMPLATES = (
    ("user", "I live in {city}."),
    ("user", "I moved to {city}."),
    ("user", "I now live in {city}."),
    ("user", "Actually I live in {city}."),
    ("user", "I don't live in {city} anymore."),
    ("user", "I like {thing}."),
    ("user", "I no longer like {thing}."),
    ("user", "I don't like {thing}."),
    ("user", "{name} lives in {city}."),
    ("user", "My friend {name} lives in {city}."),
    ("user", "{name} is my friend."),
    ("user", "My wife is {name}."),
    ("user", "{name} is my wife."),
    ("assistant", "You live in {city}."),
    ("assistant", "{name} lives in {city}."),
    ("tool", "{name} lives in {city}."),
)

step_strategy = st.tuples(
    st.sampled_from(TEMPLATES),
    st.sampled_from(CITIES),
    st.sampled_from(THINGS),
    st.sampled_from(NAMES),
    st.booleans(),
)


def _ids(facts: list[Fact]) -> set[int]:
    return {f.id for f in facts}


def _event_subjects(vault: Vault, event_id: int) -> set[int]:
    return {
        int(r[0]) for r in vault.store.query("SELECT subject_id FROM event_subjects WHERE event_id = ?", (event_id,))
    }


def _fact_subjects(vault: Vault, fact_id: int) -> set[int]:
    return {int(r[0]) for r in vault.store.query("SELECT subject_id FROM fact_subjects WHERE fact_id = ?", (fact_id,))}


def _check_decisions(  # noqa: C901 — one check per decision kind
    vault: Vault,
    decisions: tuple[dict[str, Any], ...],
    before: dict[int, Fact],
    at_before: datetime,
    feed: ChangeLog,
    event_id: int | None = None,
) -> None:
    after = {f.id: f for f in every_fact(vault)}
    new_ids = set(after) - set(before)
    created = [d["fact_id"] for d in decisions if d["fact_id"] is not None]
    assert new_ids == set(created), (decisions, new_ids)  # only CREATE/UPDATE/CONFLICT add rows
    touched = {t for d in decisions if d["decision"] != "NOOP" for t in d["targets"]}
    now = datetime.now(UTC)
    believed_before = _ids(vault.facts(as_of=at_before, limit=1000))
    believed_now = _ids(vault.facts(as_of=now, limit=1000))
    for d in decisions:
        kind, targets, fact_id = d["decision"], d["targets"], d["fact_id"]
        if kind == "UPDATE":  # (b) the old version stays reachable
            new = after[fact_id]
            assert new.previous_id == targets[-1] and new.status == "active" and fact_id in believed_now
            assert targets[-1] in {f.id for f in vault.facts.history(fact_id)}
            for old_id in targets:
                old = after[old_id]
                assert old.status == "superseded" and old.superseded_by == fact_id and old.tier == "cold"
                assert old.superseded_at is not None and old.superseded_at > at_before
                assert old_id in believed_before and old_id not in believed_now
                if old.source_role in AUTHORITATIVE:
                    assert new.source_role in AUTHORITATIVE  # (f)
        elif kind in ("MERGE", "LINK"):  # (c) one row remains, corroborated
            (target,) = targets
            assert fact_id is None
            assert after[target].corroboration == before[target].corroboration + 1
            if kind == "LINK":  # relationships only; the relationship is as it was, the new turn tagged with it
                old, new = before[target], after[target]
                assert new.kind == "relational" and d["predicate"] == new.predicate
                assert (new.status, new.object_text, new.subject) == (old.status, old.object_text, old.subject)
                assert event_id is not None and event_id in new.metadata["corroborated_by"]
                assert _fact_subjects(vault, target) <= _event_subjects(vault, event_id)
            else:
                assert after[target].kind != "relational", "a relationship said again is a LINK, not a MERGE"
        elif kind == "NOOP":  # (d)
            for target in targets:
                if target not in touched and target in before:
                    assert after[target] == before[target]
        elif kind == "RETRACT":
            for target in targets:
                fact = after[target]
                assert fact.status == "retracted" and fact.tier == "cold"
                assert fact.valid_to is not None and fact.valid_to <= now
                assert target in believed_before and target not in believed_now
        elif kind == "CONFLICT":
            new = after[fact_id]
            assert new.status == "contested" and new.standing == "challenged"
            for target in targets:
                assert after[target].status == "contested" and after[target].standing == "challenged"
                assert any({c.fact_a.id, c.fact_b.id} == {target, fact_id} for c in vault.conflicts())
            assert feed.of("conflict.created")
        elif kind == "RESOLVE":
            (winner,) = targets
            assert after[winner].status == "active"
            assert all(winner not in (c.fact_a.id, c.fact_b.id) for c in vault.conflicts())
            for fact in after.values():
                if fact.superseded_by == winner and before.get(fact.id) and before[fact.id].status == "contested":
                    assert fact.status == "superseded"
        elif kind == "CREATE":
            new = after[fact_id]
            assert new.status == "active"
            if targets:  # an assistant/tool value kept beside the user's, never overruling it
                assert new.source_role not in AUTHORITATIVE and new.standing in ("candidate", "quarantine")
                assert all(after[t].status == before[t].status for t in targets)


def _enrich_everything_again(vault: Vault) -> None:
    """(d) Re-running enrichment of every already enriched event changes no row of memory."""
    tables = ("facts", "conflicts", "fact_subjects", "subjects")
    snapshot = {t: rows(vault, t) for t in tables}

    def requeue(tx: Any) -> int:
        ids = [int(r[0]) for r in tx.execute("SELECT id FROM events WHERE status = 'enriched'").fetchall()]
        tx.execute("UPDATE events SET status = 'queued' WHERE status = 'enriched'")
        for event_id in ids:
            enqueue(tx, "enrich", {"event_id": event_id})
        return len(ids)

    requeued = vault.store.write(requeue)
    vault.jobs.retry()  # wakes the workers
    assert vault.jobs.wait_idle(120)
    assert vault.store.scalar("SELECT COUNT(*) FROM events WHERE status = 'queued'") == 0
    assert requeued > 0
    for t in tables:
        assert rows(vault, t) == snapshot[t], t


def _check_as_of_reaches_every_old_version(vault: Vault) -> None:
    """(b) for the ingest path too: just before its supersession, a replaced fact was what the vault believed."""
    for fact in every_fact(vault):
        if fact.status != "superseded" or fact.superseded_at == fact.recorded_at:
            continue
        assert fact.superseded_at is not None
        just_before = fact.superseded_at - timedelta(microseconds=5)
        assert fact.id in _ids(vault.facts(as_of=just_before, subject=fact.subject, predicate=fact.predicate))
        assert fact.id not in _ids(
            vault.facts(
                as_of=fact.superseded_at + timedelta(microseconds=5), subject=fact.subject, predicate=fact.predicate
            )
        )


LINKING = [  # a relationship said twice: LINK is reached in every run, whatever hypothesis draws
    (("user", "My friend {name} lives in {city}."), "Paris", "jazz", "Anna", True),
    (("user", "{name} is my friend."), "Paris", "jazz", "Anna", True),
    (("user", "My wife is {name}."), "Oslo", "chess", "Marco", False),
    (("user", "{name} is my wife."), "Oslo", "chess", "Marco", True),
]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step_strategy, min_size=1, max_size=9))
@example(steps=LINKING)
def test_random_statement_sequences_keep_every_invariant(steps: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp, open_vault(Path(tmp) / "v") as vault:
        for (role, template), city, thing, name, learn in steps:
            text = template.format(city=city, thing=thing, name=name)
            before = {f.id: f for f in every_fact(vault)}
            at_before = datetime.now(UTC)
            feed = ChangeLog(vault)
            if learn:
                report = vault.events.extract(text, role=role, learn=True, conversation_id="prop")
                _check_decisions(vault, report.decisions, before, at_before, feed, report.event_id)
            else:
                vault.events.ingest(EventIn(conversation_id="prop", content=text, role=role))
                assert vault.jobs.wait_idle(120)
            check_invariants(vault)
        _check_as_of_reaches_every_old_version(vault)
        _enrich_everything_again(vault)
        check_invariants(vault)


def test_a_change_cue_updates_and_a_repetition_merges(vault: Vault) -> None:
    hanoi = vault.events.extract("I live in Hanoi.", learn=True).fact_ids[0]
    at = datetime.now(UTC)
    move = vault.events.extract("I moved to Paris.", learn=True)
    update = next(d for d in move.decisions if d["predicate"] == "lives_in")
    assert update["decision"] == "UPDATE" and update["targets"] == [hanoi]
    paris = update["fact_id"]
    assert [f.id for f in vault.facts.history(paris)] == [hanoi, paris]
    assert [f.object_text for f in vault.facts(as_of=at, predicate="lives_in")] == ["Hanoi"]
    assert [f.object_text for f in vault.facts(predicate="lives_in")] == ["Paris"]

    again = vault.events.extract("I live in Paris!", learn=True)
    assert [d["decision"] for d in again.decisions] == ["MERGE"] and again.fact_ids == ()
    assert len(vault.facts(predicate="lives_in", status=("active", "superseded"))) == 2
    assert vault.facts.get(paris).corroboration == 1
    check_invariants(vault)


def test_no_longer_liking_something_supersedes_the_like(vault: Vault) -> None:
    likes = vault.events.extract("I like jazz.", learn=True).fact_ids[0]
    report = vault.events.extract("I no longer like jazz.", learn=True)
    assert [(d["decision"], d["predicate"], d["targets"]) for d in report.decisions] == [
        ("UPDATE", "dislikes", [likes])
    ]
    old = vault.facts.get(likes)
    assert old.status == "superseded" and old.superseded_by == report.fact_ids[0] and old.tier == "cold"
    assert [(f.predicate, f.object_text) for f in vault.facts()] == [("dislikes", "jazz")]
    # without a change cue, liking and disliking the same thing is a contradiction for the user to settle
    vault.events.extract("I like chess.", learn=True)
    clash = vault.events.extract("I don't like chess.", learn=True)
    assert [d["decision"] for d in clash.decisions] == ["CONFLICT"]
    assert vault.conflicts.count() == 1
    check_invariants(vault)


def test_re_enriching_an_event_that_corroborated_a_fact_changes_nothing(vault: Vault) -> None:
    vault.events.extract("I live in Hanoi.", learn=True)
    second = vault.events.extract("I really live in Hanoi.", learn=True)
    assert [d["decision"] for d in second.decisions] == ["MERGE"]
    vault.events.extract("I moved to Oslo.", learn=True)  # the slot moves on; re-running old events must not re-assert
    vault.events.extract("I don't live in Oslo anymore.", learn=True)
    vault.events.extract("I live in Oslo.", learn=True)  # said again later: re-running the retraction must not end it
    _enrich_everything_again(vault)
    assert [f.object_text for f in vault.facts(predicate="lives_in")] == ["Oslo"]
    check_invariants(vault)


def test_a_relationship_mentioned_again_is_linked_not_stored_twice(vault: Vault) -> None:
    first = vault.events.extract("My friend Anna lives in Paris.", learn=True, conversation_id="monday")
    friend = next(d["fact_id"] for d in first.decisions if d["predicate"] == "has_friend")
    anna = vault.subjects.find("Anna")
    before = vault.facts.get(friend)
    facts_before = len(every_fact(vault))

    planned = vault.events.extract("Anna is my friend.")  # the dry run plans it, and stores nothing
    assert [(d["decision"], d["targets"]) for d in planned.decisions] == [("LINK", [friend])]
    assert vault.facts.get(friend) == before

    again = vault.events.extract("Anna is my friend.", learn=True, conversation_id="friday")
    assert [(d["decision"], d["predicate"], d["targets"], d["fact_id"]) for d in again.decisions] == [
        ("LINK", "has_friend", [friend], None)
    ]
    assert again.fact_ids == () and len(every_fact(vault)) == facts_before
    after = vault.facts.get(friend)
    assert (after.status, after.object_text, after.subject) == (before.status, before.object_text, before.subject)
    assert after.corroboration == before.corroboration + 1 and after.confidence > before.confidence
    assert after.metadata["corroborated_by"] == [again.event_id]
    # the new turn is tagged with both people of the relationship, so it is found through either
    assert again.event_id is not None
    assert _event_subjects(vault, again.event_id) >= {before.subject_id, anna.id}
    check_invariants(vault)


def test_a_single_valued_relationship_said_again_links_too(vault: Vault) -> None:
    (wife,) = vault.events.extract("My wife is Anna.", learn=True).fact_ids
    again = vault.events.extract("Anna is my wife.", learn=True)
    assert [(d["decision"], d["targets"]) for d in again.decisions] == [("LINK", [wife])]
    assert [f.object_text for f in vault.facts(predicate="has_spouse")] == ["Anna"]
    assert vault.conflicts.count() == 0
    check_invariants(vault)
