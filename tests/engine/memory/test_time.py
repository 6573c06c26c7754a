"""Time (DESIGN §3–§4): relative dates resolve against the event's time, ``valid_time`` dates a fact, ephemeral
facts expire, ``facts(as_of=t)`` is what the vault believed and what was true at ``t``, and the decay sweep
retires expired ephemeral facts to cold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from engine import Vault
from engine.events import EventIn
from engine.facts import params
from engine.recall.usage import decay_sweep
from tests.engine.memory.support import ChangeLog, every_fact, metadata, one

SAID = "2023-05-08T12:00:00Z"


def _ids(vault: Vault, **filters: object) -> set[int]:
    return {f.id for f in vault.facts(limit=1000, **filters)}


def test_relative_dates_resolve_against_the_event_time_not_now(vault: Vault) -> None:
    report = vault.events.extract("Yesterday I adopted a dog.", learn=True, occurred_at=SAID)
    dog = vault.facts.get(report.fact_ids[0])
    assert (dog.predicate, dog.object_text) == ("has_pet", "dog")
    assert dog.valid_from == datetime(2023, 5, 7, tzinfo=UTC)
    assert metadata(vault, dog.id)["when"]["expression"].casefold() == "yesterday"
    assert dog.statement.endswith("(2023-05-07)")

    # the same through the background worker, and a dry run plans with the same dates
    vault.events.ingest(
        EventIn(conversation_id="c", content="I went to a support group last Friday.", occurred_at=SAID)
    )
    assert vault.jobs.wait_idle(120)
    group = one(every_fact(vault), "attended", "support group")
    assert group.valid_from == datetime(2023, 5, 5, tzinfo=UTC)  # 2023-05-08 was a Monday
    dry = vault.events.extract("Two days ago I adopted a kitten.", occurred_at=SAID)
    score = next(s for s in dry.stages if s.stage == "score")
    assert score.details["scores"][0]["statement"].endswith("(2023-05-06)")


def test_valid_time_dates_a_fact_that_says_no_date_itself(vault: Vault) -> None:
    vault.events.ingest(
        [
            EventIn(
                conversation_id="c",
                content="I live in Berlin.",
                occurred_at="2024-05-01T10:00:00Z",
                valid_time="2024-03-01T00:00:00Z",
            ),
            EventIn(
                conversation_id="c",
                content="Yesterday I adopted a cat.",
                occurred_at="2024-05-01T10:00:00Z",
                valid_time="2024-03-01T00:00:00Z",
            ),
        ]
    )
    assert vault.jobs.wait_idle(120)
    facts = every_fact(vault)
    assert one(facts, "lives_in", "Berlin").valid_from == datetime(2024, 3, 1, tzinfo=UTC)
    # a date in the text is still read against when it was said
    assert one(facts, "has_pet", "cat").valid_from == datetime(2024, 4, 30, tzinfo=UTC)


def test_ephemeral_facts_get_a_valid_to_and_drop_out_of_as_of_after_it(vault: Vault) -> None:
    said = datetime.now(UTC) - timedelta(days=1)
    overwhelmed = "I'm overwhelmed with work and the kids."
    feeling_id = vault.events.extract(overwhelmed, learn=True, occurred_at=said).fact_ids[0]
    home_id = vault.events.extract("I live in Hanoi.", learn=True, occurred_at=said).fact_ids[0]
    feeling, home = vault.facts.get(feeling_id), vault.facts.get(home_id)
    assert feeling.decay == "ephemeral" and home.decay != "ephemeral" and home.valid_to is None
    assert feeling.valid_to is not None
    assert abs((feeling.valid_to - said) - timedelta(days=params.EPHEMERAL_VALID_DAYS)) < timedelta(seconds=1)

    now = datetime.now(UTC)
    assert {feeling_id, home_id} <= _ids(vault, as_of=now)
    assert {feeling_id, home_id} <= _ids(vault, as_of=feeling.valid_to - timedelta(seconds=1))
    later = _ids(vault, as_of=feeling.valid_to + timedelta(seconds=1))
    assert feeling_id not in later and home_id in later


def test_as_of_is_what_was_believed_and_true_at_that_time(vault: Vault) -> None:
    t0 = datetime.now(UTC)
    hanoi = vault.events.extract("I live in Hanoi.", learn=True).fact_ids[0]
    t1 = datetime.now(UTC)
    paris = next(
        d["fact_id"]
        for d in vault.events.extract("I moved to Paris.", learn=True).decisions
        if d["predicate"] == "lives_in"
    )
    t2 = datetime.now(UTC)
    vault.events.extract("I don't live in Paris anymore.", learn=True)
    t3 = datetime.now(UTC)

    def lives_in(at: datetime) -> list[str]:
        return [f.object_text for f in vault.facts(as_of=at, predicate="lives_in")]

    assert lives_in(t0) == []
    assert lives_in(t1) == ["Hanoi"]  # before the update: the old value
    assert lives_in(t2) == ["Paris"]  # after it: the new one
    assert lives_in(t3) == []  # retracted: no longer true
    assert vault.facts.get(hanoi).status == "superseded" and vault.facts.get(paris).status == "retracted"
    assert vault.facts(predicate="lives_in") == []

    # a fact about 2023 learned today was not believed in 2023: as-of is both belief and validity
    dog = vault.events.extract("Yesterday I adopted a dog.", learn=True, occurred_at=SAID).fact_ids[0]
    assert dog not in _ids(vault, as_of="2023-06-01T00:00:00Z")
    assert dog in _ids(vault, as_of=datetime.now(UTC))
    # deleted facts are in no as-of view
    vault.facts.delete(dog)
    assert dog not in _ids(vault, as_of=datetime.now(UTC))


def test_the_decay_sweep_retires_expired_ephemeral_facts_to_cold(vault: Vault) -> None:
    old_feeling = vault.events.extract("I'm so tired today.", learn=True, occurred_at=SAID).fact_ids[0]
    pinned_feeling = vault.events.extract("I feel exhausted.", learn=True, occurred_at=SAID).fact_ids[0]
    fresh_feeling = vault.events.extract("I'm feeling anxious about the exam.", learn=True).fact_ids[0]
    stable = vault.events.extract("I work as a nurse.", learn=True, occurred_at=SAID).fact_ids[0]
    vault.facts.set_tier(pinned_feeling, "warm", pinned=True)
    before = {f.id: f for f in vault.facts.get_many([old_feeling, pinned_feeling, fresh_feeling, stable])}
    assert before[old_feeling].tier == "warm" and before[old_feeling].valid_to is not None
    feed = ChangeLog(vault)

    assert vault.store.write(decay_sweep) >= 1

    after = {f.id: f for f in vault.facts.get_many([old_feeling, pinned_feeling, fresh_feeling, stable])}
    assert after[old_feeling].tier == "cold" and after[old_feeling].status == "active"
    assert [c.data["reason"] for c in feed.of("memory.updated", old_feeling)] == ["expired"]
    assert after[pinned_feeling].tier == "warm"  # pinned by the person: left alone
    assert after[fresh_feeling].tier == before[fresh_feeling].tier == "warm"  # not expired yet
    assert after[stable].tier == before[stable].tier
    assert vault.store.write(decay_sweep) == 0  # nothing left to do
