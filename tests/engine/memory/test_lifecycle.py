"""The fact lifecycle at engine level (DESIGN §3, §9 Memories): list and filter, edit, soft delete and restore,
superseded listing, slot truth, retract, approve, pin and demote, utility marks — each published on the feed."""

from __future__ import annotations

import pytest

from engine import Vault
from engine.errors import Conflict, ValidationError
from engine.facts.api import FactFilter
from engine.facts.model import Fact, standing_for
from tests.engine.memory.support import ChangeLog, check_invariants, every_fact, metadata, one


def seed(vault: Vault) -> dict[str, Fact]:
    vault.events.extract(
        "My name is Linh. I work as a nurse at the city hospital. I like jazz. I like chess.", learn=True
    )
    vault.events.extract("Anna lives in Oslo.", learn=True)
    vault.events.extract("Marco moved to Pisa.", role="assistant", learn=True)
    vault.events.extract("I live in Hanoi.", learn=True)
    vault.events.extract("I moved to Lisbon.", learn=True)
    facts = every_fact(vault)
    return {
        "name": one(facts, "is_named", "Linh"),
        "job": one(facts, "works_as", "nurse"),
        "jazz": one(facts, "likes", "jazz"),
        "chess": one(facts, "likes", "chess"),
        "anna": one(facts, "lives_in", "Oslo", subject="Anna"),
        "marco_moved": one(facts, "moved_to", "Pisa", subject="Marco"),
        "marco_lives": one(facts, "lives_in", "Pisa", subject="Marco"),
        "hanoi": one(facts, "lives_in", "Hanoi"),
        "lisbon": one(facts, "lives_in", "Lisbon"),
    }


def ids(facts: list[Fact]) -> set[int]:
    return {f.id for f in facts}


def test_listing_and_filtering(vault: Vault) -> None:
    f = seed(vault)
    live = ids(vault.facts())
    assert f["hanoi"].id not in live and f["lisbon"].id in live  # superseded facts are not current
    assert ids(vault.facts(subject="anna")) == {f["anna"].id}
    assert ids(vault.facts(subject="Marco")) == {f["marco_moved"].id, f["marco_lives"].id}
    assert ids(vault.facts(predicate="likes")) == {f["jazz"].id, f["chess"].id}
    assert ids(vault.facts(standing="quarantine")) == {f["marco_moved"].id}
    assert ids(vault.facts(standing="candidate")) == {f["marco_lives"].id}
    hot = vault.facts(tier="hot")
    assert {f["name"].id, f["job"].id, f["lisbon"].id} <= ids(hot) and all(x.tier == "hot" for x in hot)
    assert ids(vault.facts(status="superseded")) == {f["hanoi"].id}
    assert ids(vault.facts(q="jazz")) == {f["jazz"].id}
    assert ids(vault.facts(q="jazz chess")) == {f["jazz"].id, f["chess"].id}
    assert ids(vault.facts(q="jazz chess", q_mode="all")) == set()
    assert ids(vault.facts(q="nurse", q_mode="all")) == {f["job"].id}
    assert ids(vault.facts(predicate="lives_in", subject="user", status=("active", "superseded"))) == {
        f["hanoi"].id,
        f["lisbon"].id,
    }
    for bad in (
        {"tier": "lukewarm"},
        {"standing": "famous"},
        {"status": "lost"},
        {"q": "jazz", "q_mode": "some"},
        {"q": "!!!"},
    ):
        with pytest.raises(ValidationError):
            vault.facts(**bad)

    # pages: keyset pagination covers everything once, in the same order as one big list
    everything = vault.facts(limit=1000, status=("active", "contested", "superseded"))
    seen: list[int] = []
    cursor = None
    while True:
        page = vault.facts.page(FactFilter(status=("active", "contested", "superseded")), limit=3, cursor=cursor)
        seen += [x.id for x in page.facts]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == [x.id for x in everything]
    assert vault.facts.ids(FactFilter(subject="user"), order="predicate") == [
        x.id for x in sorted(vault.facts(subject="user"), key=lambda x: (x.predicate, x.id))
    ]


def test_edit_makes_a_new_version_and_keeps_the_old(vault: Vault) -> None:
    f = seed(vault)
    feed = ChangeLog(vault)
    edited = vault.facts.edit(f["job"].id, object_text="midwife")
    old = vault.facts.get(f["job"].id)

    assert edited.id != old.id and edited.object_text == "midwife" and edited.status == "active"
    assert edited.previous_id == old.id and edited.source_role == "manual" and edited.extractor == "manual"
    assert edited.source_text == old.source_text and edited.event_id == old.event_id  # the quote stays
    assert old.status == "superseded" and old.superseded_by == edited.id and old.tier == "cold"
    assert [x.id for x in vault.facts.history(edited.id)] == [old.id, edited.id]
    assert [x.id for x in vault.facts(predicate="works_as")] == [edited.id]
    assert feed.types(edited.id) == ["memory.created"] and feed.types(old.id) == ["memory.superseded"]
    with pytest.raises(Conflict):
        vault.facts.edit(old.id, object_text="surgeon")
    with pytest.raises(ValidationError):
        vault.facts.edit(edited.id, object_text="  ")
    check_invariants(vault)


def test_soft_delete_and_restore(vault: Vault) -> None:
    f = seed(vault)
    feed = ChangeLog(vault)
    deleted = vault.facts.delete(f["jazz"].id)
    assert deleted.status == "deleted" and deleted.tier == "cold"
    assert f["jazz"].id not in ids(vault.facts()) and f["jazz"].id in ids(vault.facts(status="deleted"))
    assert f["jazz"].id not in {t.fact.id for t in vault.facts.truth(subject="user")}
    assert vault.facts.get(f["jazz"].id).status == "deleted"  # still there, only hidden
    restored = vault.facts.restore(f["jazz"].id)
    assert restored.status == "active" and restored.tier == f["jazz"].tier
    assert feed.types(f["jazz"].id) == ["memory.deleted", "memory.restored"]
    with pytest.raises(Conflict):
        vault.facts.restore(f["jazz"].id)
    check_invariants(vault)


def test_superseded_listing_and_slot_truth(vault: Vault) -> None:
    f = seed(vault)
    assert [x.id for x in vault.facts.superseded()] == [f["hanoi"].id]
    truth = {(t.subject, t.predicate): t for t in vault.facts.truth()}
    assert truth[("user", "lives_in")].fact.id == f["lisbon"].id
    assert truth[("user", "is_named")].fact.id == f["name"].id
    assert truth[("Anna", "lives_in")].fact.id == f["anna"].id
    likes = [t for t in vault.facts.truth(subject="user") if t.predicate == "likes"]
    assert {t.fact.id for t in likes} == {f["jazz"].id, f["chess"].id} and {t.cardinality for t in likes} == {"multi"}
    assert {t.subject for t in vault.facts.truth(subject="Anna")} == {"Anna"}


def test_retracting_a_winner_restores_the_previous_one(vault: Vault) -> None:
    f = seed(vault)
    feed = ChangeLog(vault)
    retracted = vault.facts.retract(f["lisbon"].id)
    assert retracted.status == "retracted" and retracted.tier == "cold" and retracted.valid_to is not None
    back = vault.facts.get(f["hanoi"].id)
    assert back.status == "active" and back.superseded_by is None and back.superseded_at is None
    assert back.tier == "hot" and back.standing == standing_for(back.confidence)
    truth = {(t.subject, t.predicate): t.fact.id for t in vault.facts.truth()}
    assert truth[("user", "lives_in")] == f["hanoi"].id
    assert "memory.restored" in feed.types(f["hanoi"].id) and "memory.updated" in feed.types(f["lisbon"].id)
    with pytest.raises(Conflict):
        vault.facts.retract(f["lisbon"].id)
    check_invariants(vault)


def test_approving_a_quarantined_or_candidate_fact_makes_it_injectable(vault: Vault) -> None:
    f = seed(vault)
    quarantined, candidate = f["marco_moved"], f["marco_lives"]
    assert not quarantined.injectable and not candidate.injectable
    assert vault.store.scalar("SELECT COUNT(*) FROM embeddings WHERE object_id = ?", (quarantined.id,)) == 0
    feed = ChangeLog(vault)
    for fact in (quarantined, candidate):
        approved = vault.facts.approve(fact.id)
        assert approved.injectable and approved.standing in ("working", "fact")
        assert approved.confidence > fact.confidence and approved.standing == standing_for(approved.confidence)
        assert metadata(vault, fact.id)["source_class"] == "manual"
        assert metadata(vault, fact.id)["approved_from"] == "assistant"
        assert vault.store.scalar("SELECT COUNT(*) FROM embeddings WHERE object_id = ?", (fact.id,)) == 1
        assert [c.data.get("reason") for c in feed.of("memory.updated", fact.id)] == ["approved"]
    check_invariants(vault)


def test_pinning_to_hot_and_demoting(vault: Vault) -> None:
    f = seed(vault)
    feed = ChangeLog(vault)
    pinned = vault.facts.set_tier(f["chess"].id, "hot")
    assert pinned.tier == "hot" and pinned.tier_pinned
    demoted = vault.facts.set_tier(f["name"].id, "cold")
    assert demoted.tier == "cold" and demoted.tier_pinned
    unpinned = vault.facts.set_tier(f["chess"].id, "hot", pinned=False)
    assert unpinned.tier == "warm" and not unpinned.tier_pinned  # back to what the rules say
    assert [c.data["reason"] for c in feed.of("memory.updated")] == ["tier", "tier", "tier"]
    with pytest.raises(ValidationError):
        vault.facts.set_tier(f["chess"].id, "lukewarm")


def test_useful_and_questionable_marks_move_importance_and_confidence(vault: Vault) -> None:
    f = seed(vault)
    jazz = f["jazz"]
    feed = ChangeLog(vault)
    up = vault.facts.mark(jazz.id, "useful")
    assert up.useful_count == 1 and up.importance == pytest.approx(jazz.importance + 0.1)
    assert up.confidence > jazz.confidence
    down = vault.facts.mark(jazz.id, "questionable")
    down = vault.facts.mark(jazz.id, "questionable")
    assert down.questionable_count == 2 and down.importance == pytest.approx(jazz.importance - 0.1)
    assert down.confidence < jazz.confidence and down.standing == standing_for(down.confidence)
    assert [c.data["reason"] for c in feed.of("memory.updated", jazz.id)] == ["useful", "questionable", "questionable"]
    with pytest.raises(ValidationError):
        vault.facts.mark(jazz.id, "brilliant")
    check_invariants(vault)


def test_adding_by_hand_goes_through_map_match_and_decide(vault: Vault) -> None:
    f = seed(vault)
    feed = ChangeLog(vault)
    added = vault.facts.add("user", "favourite food", "pho")
    assert (added.predicate, added.source_role, added.event_id) == ("favorite_food", "manual", None)
    assert added.injectable and feed.types(added.id) == ["memory.created"]
    again = vault.facts.add("user", "likes", "Jazz")
    assert again.id == f["jazz"].id and again.corroboration == 1  # MERGE: one row remains
    custom = vault.facts.add("user", "zorbulates with", "Quentin")
    assert custom.predicate == "custom:zorbulates_with" and custom.importance == pytest.approx(0.3)
    check_invariants(vault)
