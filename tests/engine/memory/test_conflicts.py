"""Conflicts and supersession (DESIGN §3): change vs contradiction, clarification, explicit resolution, keep-both,
``facts.conflict_auto_resolve``, and the role rules (assistants never overrule the user; system says nothing)."""

from __future__ import annotations

import pytest

from engine import Vault
from engine.errors import Conflict, ValidationError
from engine.events import EventIn
from engine.facts.model import standing_for
from tests.engine.memory.support import ChangeLog, check_invariants, every_fact, metadata, one


def learn(vault: Vault, text: str, role: str = "user") -> dict[str, object]:
    report = vault.events.extract(text, role=role, learn=True)
    assert len(report.decisions) >= 1, text
    return dict(report.decisions[-1])


def test_a_change_cue_supersedes_and_keeps_the_history(vault: Vault) -> None:
    nurse = learn(vault, "I work as a nurse.")["fact_id"]
    feed = ChangeLog(vault)
    update = learn(vault, "I now work as a teacher.")
    assert update["decision"] == "UPDATE" and update["reason"] == "change cue"
    teacher = update["fact_id"]

    old = vault.facts.get(nurse)
    assert old.status == "superseded" and old.superseded_by == teacher and old.tier == "cold"
    assert old.superseded_at is not None and old.superseded_at >= old.recorded_at
    assert old.standing == standing_for(old.confidence)
    assert [f.id for f in vault.facts.history(nurse)] == [nurse, teacher]
    assert [f.id for f in vault.facts.history(teacher)] == [nurse, teacher]
    assert nurse in [f.id for f in vault.facts.superseded()]
    assert [f.object_text for f in vault.facts(predicate="works_as")] == ["teacher"]
    assert [c.data["superseded_by"] for c in feed.of("memory.superseded", nurse)] == [teacher]
    assert feed.of("memory.created", teacher) and vault.conflicts.count() == 0
    check_invariants(vault)


def test_a_contradiction_without_a_cue_opens_a_conflict(vault: Vault) -> None:
    hanoi = learn(vault, "I live in Hanoi.")["fact_id"]
    feed = ChangeLog(vault)
    clash = learn(vault, "I live in Paris.")
    assert clash["decision"] == "CONFLICT" and clash["targets"] == [hanoi]
    paris = clash["fact_id"]

    for fact in vault.facts.get_many([hanoi, paris]):
        assert fact.status == "contested" and fact.standing == "challenged" and not fact.injectable
    (conflict,) = vault.conflicts()
    assert {conflict.fact_a.id, conflict.fact_b.id} == {hanoi, paris}
    assert conflict.status == "open" and conflict.predicate == "lives_in" and conflict.subject == "user"
    assert vault.conflicts.count() == 1 and vault.conflicts.get(conflict.id) == conflict
    (created,) = feed.of("conflict.created")
    assert created.object_id == conflict.id and sorted(created.data["fact_ids"]) == sorted([hanoi, paris])
    (truth,) = [t for t in vault.facts.truth(subject="user") if t.predicate == "lives_in"]
    assert truth.alternatives == 1  # the slot shows both sides until someone decides
    check_invariants(vault)


def test_a_user_clarification_repeating_one_side_resolves_it(vault: Vault) -> None:
    hanoi = learn(vault, "I live in Hanoi.")["fact_id"]
    paris = learn(vault, "I live in Paris.")["fact_id"]
    contested_confidence = vault.facts.get(paris).confidence
    (conflict,) = vault.conflicts()
    feed = ChangeLog(vault)

    clarification = learn(vault, "Actually I live in Paris.")
    assert clarification["decision"] == "RESOLVE" and clarification["targets"] == [paris]

    winner, loser = vault.facts.get(paris), vault.facts.get(hanoi)
    assert winner.status == "active" and winner.standing == "fact" and winner.injectable
    assert winner.confidence > contested_confidence  # promoted
    assert loser.status == "superseded" and loser.superseded_by == paris and loser.tier == "cold"
    assert loser.superseded_at is not None and loser.standing == standing_for(loser.confidence)
    resolved = vault.conflicts.get(conflict.id)
    assert resolved.status == "resolved" and resolved.winner_id == paris and resolved.resolved_by == "clarification"
    assert vault.conflicts.count() == 0
    assert [c.object_id for c in feed.of("conflict.resolved")] == [conflict.id]
    check_invariants(vault)


def test_one_clarification_settles_a_three_way_contradiction(vault: Vault) -> None:
    hanoi = learn(vault, "I live in Hanoi.")["fact_id"]
    paris = learn(vault, "I live in Paris.")["fact_id"]
    rome = learn(vault, "I live in Rome.")["fact_id"]
    assert vault.conflicts.count() == 3
    learn(vault, "Actually I live in Rome.")
    assert vault.conflicts.count() == 0
    assert vault.facts.get(rome).status == "active"
    for loser in (hanoi, paris):
        fact = vault.facts.get(loser)
        assert fact.status == "superseded" and fact.superseded_by == rome and fact.tier == "cold"
    assert [f.object_text for f in vault.facts(predicate="lives_in")] == ["Rome"]
    check_invariants(vault)


def test_a_change_closes_the_conflicts_among_the_values_it_replaces(vault: Vault) -> None:
    hanoi = learn(vault, "I live in Hanoi.")["fact_id"]
    paris = learn(vault, "I live in Paris.")["fact_id"]
    (conflict,) = vault.conflicts()
    move = learn(vault, "I moved to Oslo.")
    assert move["decision"] == "UPDATE" and sorted(move["targets"]) == sorted([hanoi, paris])
    assert vault.conflicts.count() == 0
    closed = vault.conflicts.get(conflict.id)
    assert closed.status == "resolved" and closed.resolved_by == "superseded" and closed.winner_id is None
    for fact in vault.facts.get_many([hanoi, paris]):
        assert fact.status == "superseded" and fact.superseded_by == move["fact_id"]
        assert fact.standing == standing_for(fact.confidence) != "challenged"
    check_invariants(vault)


def test_resolving_explicitly_and_keeping_both(vault: Vault) -> None:
    hanoi = learn(vault, "I live in Hanoi.")["fact_id"]
    paris = learn(vault, "I live in Paris.")["fact_id"]
    (conflict,) = vault.conflicts()
    with pytest.raises(ValidationError):
        vault.conflicts.resolve(conflict.id, winner_id=12345678)
    view = vault.conflicts.resolve(conflict.id, hanoi)
    assert view.status == "resolved" and view.winner_id == hanoi and view.resolved_by == "user"
    assert view.resolution == ("keep_a" if conflict.fact_a.id == hanoi else "keep_b")
    assert vault.facts.get(hanoi).status == "active" and vault.facts.get(hanoi).standing == "fact"
    assert vault.facts.get(paris).status == "superseded"
    with pytest.raises(Conflict):
        vault.conflicts.resolve(conflict.id, paris)
    check_invariants(vault)

    rome = learn(vault, "Marco lives in Rome.")["fact_id"]
    turin = learn(vault, "Marco lives in Turin.")["fact_id"]
    (second,) = vault.conflicts()
    both = vault.conflicts.resolve(second.id, None)
    assert both.resolution == "keep_both" and both.winner_id is None
    for fact in vault.facts.get_many([rome, turin]):
        assert fact.status == "active" and fact.standing == standing_for(fact.confidence) == "working"


def test_auto_resolve_lets_the_higher_confidence_side_win_at_once(vault: Vault) -> None:
    vault.update_settings({"facts.conflict_auto_resolve": True})
    hanoi = learn(vault, "I live in Hanoi.")["fact_id"]
    assert learn(vault, "I really live in Hanoi.")["decision"] == "MERGE"  # corroborated: more confident
    feed = ChangeLog(vault)
    paris = learn(vault, "I live in Paris.")["fact_id"]

    assert vault.conflicts.count() == 0
    (conflict,) = vault.conflicts(status="resolved")  # still recorded
    assert conflict.resolved_by == "auto" and conflict.winner_id == hanoi
    assert vault.facts.get(hanoi).status == "active"
    assert vault.facts.get(paris).status == "superseded" and vault.facts.get(paris).superseded_by == hanoi
    assert [c.type for c in feed.all() if c.type.startswith("conflict.")] == ["conflict.created", "conflict.resolved"]
    check_invariants(vault)

    vault.update_settings({"facts.conflict_auto_resolve": False})
    learn(vault, "I live in Rome.")
    assert vault.conflicts.count() == 1


def test_assistant_and_tool_statements_never_overrule_the_user(vault: Vault) -> None:
    oslo = learn(vault, "Anna lives in Oslo.")["fact_id"]
    feed = ChangeLog(vault)
    rome = learn(vault, "Anna lives in Rome.", role="assistant")
    assert rome["decision"] == "CREATE" and rome["targets"] == [oslo] and "cannot overrule" in str(rome["reason"])
    candidate = vault.facts.get(rome["fact_id"])
    assert candidate.standing == "candidate" and not candidate.injectable and candidate.source_role == "assistant"
    assert metadata(vault, candidate.id)["contradicts"] == [oslo]

    milan = learn(vault, "Anna lives in Milan.", role="tool")
    assert vault.facts.get(rome["fact_id"]).superseded_by == milan["fact_id"]  # newer non-user value replaces it
    for _ in range(4):  # repeating it never makes it injectable
        assert learn(vault, "Anna lives in Milan!", role="assistant")["decision"] == "MERGE"
    assert vault.facts.get(milan["fact_id"]).standing == "candidate"
    assert learn(vault, "Anna doesn't live in Oslo anymore.", role="assistant")["decision"] == "NOOP"

    user_fact = vault.facts.get(oslo)
    assert user_fact.status == "active" and user_fact.standing == "working" and user_fact.superseded_by is None
    (truth,) = [t for t in vault.facts.truth(subject="Anna") if t.predicate == "lives_in"]
    assert truth.fact.id == oslo
    assert feed.of("conflict.created") == [] and vault.conflicts.count() == 0
    assert not [c for c in feed.of("memory.superseded") if c.object_id == oslo]
    check_invariants(vault)

    # "You live in …" from an assistant is not a statement by the user: nothing is learned from it
    before = len(every_fact(vault))
    vault.events.ingest(EventIn(conversation_id="c", role="assistant", content="You live in Rome."))
    assert vault.jobs.wait_idle(120) and len(every_fact(vault)) == before
    # and a user statement replaces a value only an assistant gave
    marco = learn(vault, "Marco lives in Rome.", role="assistant")["fact_id"]
    replaced = learn(vault, "Marco lives in Pisa.")
    assert replaced["decision"] == "UPDATE" and replaced["targets"] == [marco]
    check_invariants(vault)


def test_system_messages_change_nothing(vault: Vault) -> None:
    hanoi = learn(vault, "I live in Hanoi.")["fact_id"]
    feed = ChangeLog(vault)
    result = vault.events.ingest(EventIn(conversation_id="c", role="system", content="I moved to Paris. I love jazz."))
    assert result.status == "skipped" and vault.jobs.wait_idle(120)
    assert [f.id for f in every_fact(vault)] == [hanoi] and vault.facts.get(hanoi).status == "active"
    assert [c.type for c in feed.all()] == ["event.created"]
    one(every_fact(vault), "lives_in", "Hanoi")
