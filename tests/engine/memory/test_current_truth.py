"""The current truth from real conversations: changes of mind, negations and corrections, plans, attribution,
cross-slot contradictions, dates resolved by tense, statements true to their slots, and which extractor found what.

Every test runs the real path — events stored in a real vault, enriched by the job runner on the rule path — and
reads the outcome through the facade, as the app and the endpoint do.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import numpy as np

from engine import Vault
from engine.events import EventIn
from engine.facts.model import Fact
from engine.recall.types import RecallRequest
from tests.engine.memory.support import ALL_STATUSES, check_invariants


def say(vault: Vault, *turns: tuple[str, str], conversation: str = "c1") -> None:
    """Ingest user turns ``(ISO time, text)`` and wait until they are enriched."""
    vault.events.ingest(
        [
            EventIn(conversation_id=conversation, role="user", content=text, occurred_at=when, external_id=f"{i}")
            for i, (when, text) in enumerate(turns)
        ]
    )
    assert vault.jobs.wait_idle(120)


def live(vault: Vault, predicate: str | None = None, subject: str | None = None) -> list[Fact]:
    return [
        f
        for f in vault.facts(limit=1000, status=("active",))
        if (predicate is None or f.predicate == predicate) and (subject is None or f.subject == subject)
    ]


def values(facts: Sequence[Fact]) -> set[str]:
    return {f.object_text for f in facts}


def statuses(vault: Vault, predicate: str) -> dict[str, str]:
    return {f.object_text: f.status for f in vault.facts(limit=1000, status=ALL_STATUSES, predicate=predicate)}


def best_answer(vault: Vault, query: str, when: str) -> str:
    result = vault.recall(RecallRequest(conversation_id="asker", query=query, reference_time=when))
    blocks = [*result.answer_facts, *result.supporting_facts]
    assert blocks, f"no fact answers {query!r}"
    return blocks[0].content


# -- changes of mind -------------------------------------------------------------------------------------------------
def test_a_move_from_a_to_b_makes_b_current_and_keeps_a_as_history(vault: Vault) -> None:
    say(
        vault,
        ("2025-09-03T08:00:00Z", "I live in Berlin, in Neukölln."),
        ("2025-10-22T17:00:00Z", "We moved from Berlin to Lisbon last week!"),
    )
    assert values(live(vault, "lives_in")) == {"Lisbon"}
    assert statuses(vault, "lives_in")["Berlin"] == "superseded"
    moved = live(vault, "lives_in")[0]
    assert moved.valid_from is not None and moved.valid_from.date() == date(2025, 10, 13)  # "last week"
    assert "Lisbon" in best_answer(vault, "Where do I live now?", "2025-11-01T00:00:00Z")
    check_invariants(vault)


def test_a_move_said_once_files_the_old_home_as_past_and_the_new_one_as_current(vault: Vault) -> None:
    say(vault, ("2024-06-01T08:00:00Z", "I moved from Berlin to Lisbon."))
    assert values(live(vault, "lives_in")) == {"Lisbon"}
    assert values(live(vault, "lived_in")) == {"Berlin"}  # never "used to live in Lisbon"
    # every fact's vector is made from the words it now has (a fact re-filed by the switch is embedded anew)
    for fact in live(vault):
        stored = vault.store.scalar(f"SELECT embedding FROM {vault.vectors.table} WHERE rowid = ?", (fact.id,))
        if stored is not None:
            expected = vault.embedder.embed([fact.statement])[0]
            assert np.allclose(np.frombuffer(stored, dtype=np.float32), expected, atol=1e-6), fact.statement
    check_invariants(vault)


def test_a_plan_said_in_the_present_tense_points_ahead_and_is_no_visit(vault: Vault) -> None:
    say(
        vault,
        ("2024-02-10T18:00:00Z", "We are planning a climbing trip in October."),
        ("2024-05-20T18:00:00Z", "I can't wait for our trip to Rome in September."),
    )
    climbing = [f for f in live(vault) if "climbing trip" in f.object_text]
    assert climbing and all(f.valid_from is not None and f.valid_from.strftime("%Y-%m") == "2024-10" for f in climbing)
    assert live(vault, "visited") == []
    assert values(live(vault, "plans_to_visit")) == {"Rome"}
    check_invariants(vault)


def test_a_job_change_supersedes_the_employer_and_ends_the_role_said_with_it(vault: Vault) -> None:
    say(
        vault,
        ("2025-09-03T08:00:00Z", "I'm a UX designer at Zalando and they let me work remotely."),
        ("2026-01-14T12:00:00Z", "I quit Zalando! I started Jan 5 at a small studio here in Lisbon called Tidewater."),
    )
    assert values(live(vault, "works_at")) == {"Tidewater"}
    assert statuses(vault, "works_at")["Zalando"] == "retracted"
    assert statuses(vault, "works_as")["UX designer"] == "retracted"
    (job,) = live(vault, "works_at")
    assert job.valid_from is not None and job.valid_from.date() == date(2026, 1, 5)
    assert "Tidewater" in best_answer(vault, "Where do I work these days?", "2026-02-01T00:00:00Z")


def test_a_new_manager_supersedes_the_last_and_answers_who_the_manager_is(vault: Vault) -> None:
    say(
        vault,
        ("2025-08-12T07:10:00Z", "been a ranger with DOC for 5 yrs, my boss Dave said he'll be a referee"),
        ("2025-11-20T05:45:00Z", "new manager Clare is lovely, very different vibe to Dave haha"),
    )
    assert values(live(vault, "has_manager")) == {"Clare"}
    assert statuses(vault, "has_manager")["Dave"] == "superseded"
    assert values(live(vault, "works_as")) == {"ranger"}  # present perfect with a duration: still a ranger
    answer = best_answer(vault, "Who is my manager now?", "2026-01-01T00:00:00Z")
    assert "Clare" in answer and "Dave" not in answer


def test_a_date_without_a_year_in_the_present_tense_is_the_nearer_one(vault: Vault) -> None:
    # said in October: the coming 1st of November, not last year's
    say(vault, ("2025-10-09T06:30:00Z", "we're renovating the kitchen on the 1st of November"))
    (doing,) = live(vault, "currently_doing")
    assert doing.valid_from is not None and doing.valid_from.date() == date(2025, 11, 1)


def test_preferences_are_slots_one_current_milk_and_one_favourite_coffee(vault: Vault) -> None:
    say(
        vault,
        ("2026-01-01T10:00:00Z", "My favourite coffee is a flat white."),
        ("2026-02-01T10:00:00Z", "My favourite coffee is now a cortado."),
        ("2026-03-01T10:00:00Z", "I prefer oat milk in my coffee."),
        ("2026-03-02T10:00:00Z", "I don't like oat milk anymore."),
        ("2026-03-03T10:00:00Z", "I prefer almond milk now."),
    )
    assert values(live(vault, "has_favorite")) == {"coffee: cortado"}
    assert values(live(vault, "prefers")) == {"almond milk"}
    assert values(live(vault, "dislikes")) == {"oat milk"}


def test_two_values_without_a_change_cue_are_a_conflict_never_two_current_values(vault: Vault) -> None:
    say(
        vault,
        ("2025-09-13T02:00:00Z", "I swim 3x a week at the club near home in Bukit Timah."),
        ("2026-02-14T04:00:00Z", "My daughter walks to school from our flat in Tiong Bahru."),
    )
    (conflict,) = vault.conflicts()
    assert {conflict.fact_a.object_text, conflict.fact_b.object_text} == {"Bukit Timah", "Tiong Bahru"}
    assert live(vault, "lives_in") == []


def test_a_diet_against_a_dish_and_abstaining_against_a_drink_are_conflicts(vault: Vault) -> None:
    say(
        vault,
        ("2025-09-09T13:00:00Z", "I'm vegetarian — for ten years already."),
        ("2026-03-02T23:00:00Z", "Yesterday I ate way too much picanha, my favourite."),
        ("2025-06-17T16:00:00Z", "I don't drink alcohol at all."),
        ("2025-12-02T17:00:00Z", "Also Friday wine o'clock with the girls is sacred."),
    )
    sides = {frozenset((c.fact_a.predicate, c.fact_b.predicate)): c for c in vault.conflicts()}
    assert frozenset(("diet", "consumes")) in sides
    assert frozenset(("avoids", "consumes")) in sides


# -- negations, corrections, attribution -----------------------------------------------------------------------------
def test_a_denied_allergy_is_retracted_and_filed_under_whom_the_sentence_names(vault: Vault) -> None:
    say(
        vault,
        ("2026-01-01T10:00:00Z", "I'm allergic to peanuts."),
        ("2026-01-02T10:00:00Z", "I'm not allergic to peanuts, that was my brother."),
    )
    assert live(vault, "has_allergy", subject="user") == []
    assert values(live(vault, "has_allergy", subject="user's brother")) == {"peanuts"}


def test_a_negation_never_becomes_a_positive_fact(vault: Vault) -> None:
    say(vault, ("2026-01-01T10:00:00Z", "No no, I don't have diabetes. It is my wife Shirin who has diabetes."))
    assert live(vault, "has_condition", subject="user") == []
    assert values(live(vault, "has_condition", subject="Shirin")) == {"diabetes"}


def test_a_corrected_date_moves_the_event_and_keeps_its_words(vault: Vault) -> None:
    say(
        vault,
        ("2025-07-12T03:00:00Z", "I need help with IELTS writing. My test is on 16 August."),
        ("2025-07-12T03:03:00Z", "One correction: the test is on 23 August, not 16."),
        ("2026-03-20T10:00:00Z", "My knee surgery is on the 8th of April."),
        ("2026-03-20T10:01:00Z", "Actually it's the 18th, not the 8th."),
    )
    dated = {f.object_text: f.valid_from.date() for f in live(vault, "has_event") if f.valid_from}
    assert dated == {"IELTS test": date(2025, 8, 23), "knee surgery": date(2026, 4, 18)}


def test_third_parties_stay_third_parties(vault: Vault) -> None:
    say(
        vault,
        ("2025-09-03T08:00:00Z", "My sister Marta lives in Porto. My boyfriend Jonas is a freelance sound engineer."),
    )
    assert live(vault, "lives_in", subject="user") == []
    assert values(live(vault, "lives_in", subject="Marta")) == {"Porto"}
    assert values(live(vault, "works_as", subject="Jonas")) == {"freelance sound engineer"}
    assert values(live(vault, "has_sibling")) == {"Marta"} and values(live(vault, "has_partner")) == {"Jonas"}


def test_hypotheticals_questions_and_assistant_suggestions_are_no_user_facts(vault: Vault) -> None:
    vault.events.ingest(
        [
            EventIn(
                conversation_id="c1",
                role="user",
                content="Purely hypothetical, but if I took a job in Norway, how much tax would I pay?",
                occurred_at="2026-01-01T10:00:00Z",
            ),
            EventIn(
                conversation_id="c1",
                role="assistant",
                content="You might also enjoy a day trip to Cascais by train.",
                occurred_at="2026-01-01T10:00:10Z",
            ),
        ]
    )
    assert vault.jobs.wait_idle(120)
    statements = " ".join(f.statement for f in live(vault))
    assert "Norway" not in statements and "Cascais" not in statements


# -- plans and dates -------------------------------------------------------------------------------------------------
def test_a_plan_is_not_a_visit_and_dates_point_the_way_the_tense_does(vault: Vault) -> None:
    say(
        vault,
        ("2025-06-10T10:00:00Z", "I'm flying to Japan in October for two weeks."),
        ("2025-02-03T10:00:00Z", "I'm switching to the night team, starting in May."),
        ("2026-03-02T10:00:00Z", "My dentist appointment is tomorrow at 2pm."),
        ("2025-11-12T03:00:00Z", "WE GOT MARRIED LAST SATURDAY"),
    )
    assert live(vault, "visited") == []
    (trip,) = [f for f in live(vault, "plans_to") if "Japan" in f.object_text]
    assert trip.valid_from is not None and trip.valid_from.strftime("%Y-%m") == "2025-10"  # forward, same year
    (dentist,) = [f for f in live(vault, "has_event") if "dentist" in f.object_text]
    assert dentist.valid_from is not None and dentist.valid_from.date() == date(2026, 3, 3)
    (married,) = live(vault, "relationship_status")
    assert married.valid_from is not None and married.valid_from.date() == date(2025, 11, 8)  # backward


def test_life_facts_people_volunteer_are_extracted(vault: Vault) -> None:
    say(
        vault,
        (
            "2026-01-01T10:00:00Z",
            "I work as a data engineer at Siemens. My manager Paul is great. We have a cat called Pixel. "
            "My kids Omar (10) and Salma (7) love him. I speak Arabic, French and a little Spanish. "
            "I drive a Skoda Octavia. I have asthma and I'm on ventolin.",
        ),
    )
    assert values(live(vault, "works_as")) == {"data engineer"}
    assert values(live(vault, "works_at")) == {"Siemens"}
    assert values(live(vault, "has_manager")) == {"Paul"}
    assert "Pixel" in values(live(vault, "has_pet"))
    assert values(live(vault, "has_child")) >= {"Omar", "Salma"}
    assert values(live(vault, "has_age", subject="Omar")) == {"10"}
    assert values(live(vault, "speaks_language")) >= {"Arabic", "French", "a little Spanish"}
    assert values(live(vault, "drives")) == {"Skoda Octavia"}
    assert "asthma" in values(live(vault, "has_condition")) and "ventolin" in values(live(vault, "takes_medication"))


# -- statements true to their slots ----------------------------------------------------------------------------------
def test_an_edit_rewrites_the_statement_and_keeps_the_evidence(vault: Vault) -> None:
    say(vault, ("2026-01-01T10:00:00Z", "I moved to Lisbon."))
    (fact,) = live(vault, "lives_in")
    edited = vault.facts.edit(fact.id, object_text="Porto")
    assert edited.statement == "User lives in Porto"
    assert edited.source_text == fact.source_text == "I moved to Lisbon."


def test_a_merge_with_more_detail_rewrites_the_statement(vault: Vault) -> None:
    say(vault, ("2026-01-01T10:00:00Z", "I work as a nurse."), ("2026-01-05T10:00:00Z", "I work as a senior nurse."))
    (fact,) = live(vault, "works_as")
    assert fact.object_text == "senior nurse" and fact.statement == "User works as senior nurse"


def test_renaming_or_merging_a_subject_rewrites_its_statements(vault: Vault) -> None:
    say(vault, ("2026-01-01T10:00:00Z", "My friend Bob works at Initech. My friend Rob lives in Leeds."))
    bob = next(s for s in vault.subjects() if s.name == "Bob")
    vault.subjects.rename(bob.id, "Robert")
    (job,) = live(vault, "works_at")
    assert job.statement == "Robert works at Initech"
    rob = next(s for s in vault.subjects() if s.name == "Rob")
    vault.subjects.merge(bob.id, [rob.id])
    (home,) = live(vault, "lives_in")
    assert home.subject == "Robert" and home.statement == "Robert lives in Leeds"
    hits = vault.facts(q="Robert", limit=10)
    assert {f.id for f in hits} >= {job.id, home.id}  # searchable by the new name


# -- imports keep their times ----------------------------------------------------------------------------------------
def test_relative_dates_of_an_import_resolve_against_each_turn_time(vault: Vault, tmp_path: object) -> None:
    from pathlib import Path

    from app.plugins import build_plugin_manager

    assert isinstance(tmp_path, Path)
    path = tmp_path / "chat.jsonl"
    path.write_text(
        '{"conversation_id": "c9", "title": "Moving", "role": "user", "content": "We moved to Geelong yesterday.", '
        '"occurred_at": "2026-01-11T02:00:00Z"}\n',
        encoding="utf-8",
    )
    plugged = Vault.open(
        tmp_path / "pv", settings=vault.settings, plugins=build_plugin_manager(load_entry_points=False)
    )
    try:
        plugged.conversations.import_summary(path)
        assert plugged.jobs.wait_idle(120)
        (home,) = [f for f in plugged.facts(limit=100) if f.predicate == "lives_in"]
        assert home.valid_from is not None and home.valid_from.date() == date(2026, 1, 10)
        assert [c.title for c in plugged.conversations()] == ["Moving"]
    finally:
        plugged.close()


# -- pronouns across messages ----------------------------------------------------------------------------------------
def test_a_pronoun_with_nobody_in_its_message_points_into_the_speakers_message_before(vault: Vault) -> None:
    say(
        vault,
        ("2025-07-08T17:00:00Z", "Party planning time! Lwazi's birthday is 27 July and he wants a dinosaur party."),
        ("2025-07-08T17:02:45Z", "wait no 😂 his birthday is the 22nd! 27 July is my mom's birthday"),
        ("2025-07-08T17:10:00Z", "My sister Marta lives in Porto."),
        ("2025-07-08T17:11:00Z", "She works as a nurse."),
        # a day later the same pronoun has nobody to point to: nothing is filed under a guess
        ("2025-07-09T18:00:00Z", "He works as a pilot."),
    )
    lwazi = {
        f.object_text: f.status
        for f in vault.facts(limit=100, status=ALL_STATUSES, predicate="has_birthday")
        if f.subject == "Lwazi"
    }
    assert lwazi == {"27 July": "superseded", "the 22nd": "active"}
    assert [(f.subject, f.object_text) for f in live(vault, "works_as")] == [("Marta", "nurse")]
    check_invariants(vault)


def test_traits_that_rule_each_other_out_are_a_conflict(vault: Vault) -> None:
    say(
        vault,
        ("2025-04-08T08:24:00Z", "I am left-handed and I use the mouse with the left hand."),
        ("2025-05-18T08:58:00Z", "My parents keep hinting that, as an only child, I should live close to them."),
        ("2025-11-04T09:33:00Z", "I am right-handed, so the prep worktop goes on the right."),
        ("2025-12-11T18:19:00Z", "My sister Rania is coming from Muscat for the holidays."),
    )
    open_conflicts = vault.conflicts()
    pairs = [{c.fact_a.object_text, c.fact_b.object_text} for c in open_conflicts]
    assert {"left-handed", "right-handed"} in pairs
    assert {"only child", "Rania"} in pairs


def test_a_start_in_a_clause_of_its_own_is_dated_by_its_own_date(vault: Vault) -> None:
    say(
        vault,
        ("2025-05-18T08:30:00Z", "I'm a QA engineer at Fintrack in Amman."),
        (
            "2025-09-28T15:20:00Z",
            "Separately, I accepted Souqly: my last day at Fintrack is Tuesday and I start at Souqly on 5 October.",
        ),
    )
    (job,) = live(vault, "works_at")
    assert job.object_text == "Souqly"
    assert job.valid_from is not None and job.valid_from.date() == date(2025, 10, 5)


def test_a_bare_mention_and_a_name_of_one_relation_are_one_person(vault: Vault) -> None:
    say(
        vault,
        ("2025-09-04T13:47:00Z", "my wife Dolores says it looks very professional"),
        ("2025-10-11T18:18:00Z", "no no not for me. it's for Dolores my wife, she is 71"),
        ("2025-11-01T10:00:00Z", "My wife says the van is ugly."),
    )
    assert values(live(vault, "has_spouse")) == {"Dolores"}
    assert not vault.conflicts()


def test_a_bare_mention_after_a_divorce_is_still_a_conflict(vault: Vault) -> None:
    say(
        vault,
        ("2025-10-01T10:00:00Z", "Divorced since 2015, live alone, house is very quiet."),
        ("2026-01-10T10:00:00Z", "My wife says the van is ugly."),
    )
    assert vault.conflicts()


def test_a_start_said_a_sentence_or_two_later_dates_the_job_and_the_diet(vault: Vault) -> None:
    say(
        vault,
        (
            "2025-09-20T08:15:00Z",
            "GUESS WHAAAT I got the Qatar job!!! did the assessment in Doha last week and the contract landed "
            "yesterday. I join on the 3rd of November, they're putting me on the A320.",
        ),
        ("2025-11-15T18:00:00Z", "My GP wants me to try low FODMAP for 6 weeks. I start on Monday."),
    )
    (job,) = live(vault, "works_at")
    assert job.object_text == "Qatar" and job.valid_from is not None and job.valid_from.date() == date(2025, 11, 3)
    (diet,) = live(vault, "diet")
    assert diet.valid_from is not None and diet.valid_from.date() == date(2025, 11, 17)
