"""The subject workspace on a real vault: observations, understandings by supersession, intersections, forget."""

from __future__ import annotations

import pytest

from engine import Vault
from engine.errors import NotFound, ValidationError
from engine.events import EventIn
from engine.forget import ForgetScope
from engine.store.migrations import SCHEMA_VERSION
from engine.workspace import next_generation


def test_remember_creates_missing_subjects_says_so_and_a_second_write_is_a_no_op(vault: Vault) -> None:
    vault.workspace.create_subjects(["Ana"])
    first = vault.workspace.remember(
        "Ana prefers short  morning meetings.", ["Ana", "Cairn project"], session_id="s1", confidence=0.9
    )
    assert not first.duplicate
    assert first.subjects_created == ("Cairn project",)
    assert first.observation.subjects == ("Ana", "Cairn project")
    assert first.observation.confidence == 0.9 and first.observation.session_id == "s1"
    again = vault.workspace.remember("Ana prefers short morning meetings.", ["Bob"], session_id="s2")
    assert again.duplicate and again.observation.id == first.observation.id
    assert again.observation.subjects == ("Ana", "Cairn project")  # the no-op adds no tag and no subject
    assert vault.workspace.get_subjects(["Bob"]) == ([], ["Bob"])
    assert vault.get_object(first.observation.id).kind == "observation"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"content": "  ", "subject_names": ["Ana"]}, "content"),
        ({"content": "x", "subject_names": []}, "subject_names"),
        ({"content": "x", "subject_names": ["Ana"], "confidence": 1.5}, "confidence"),
        ({"content": "x" * 20_001, "subject_names": ["Ana"]}, "content"),
        ({"content": "x", "subject_names": ["Ana"], "related_to": [-3]}, "related_to"),
    ],
)
def test_bad_observations_are_refused_with_the_field_named(vault: Vault, kwargs: dict, field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        vault.workspace.remember(**kwargs)
    assert caught.value.field == field
    assert vault.workspace.stats().observations == 0


def test_only_the_session_that_wrote_an_observation_may_delete_it(vault: Vault) -> None:
    mine = vault.workspace.remember("Planning the spring release.", ["Cairn"], session_id="s1").observation
    theirs = vault.workspace.remember("Bob reviews every pull request.", ["Bob"], session_id="s2").observation
    result = vault.workspace.delete_observations([mine.id, theirs.id, 999_999], session_id="s1")
    assert result.deleted == (mine.id,)
    assert "another session" in result.rejected[theirs.id]
    assert result.rejected[999_999] == "no such observation"
    with pytest.raises(NotFound):
        vault.workspace.observation(mine.id)
    assert vault.workspace.observation(theirs.id).content == "Bob reviews every pull request."
    assert vault.store.scalar("SELECT COUNT(*) FROM objects WHERE id = ?", (mine.id,)) == 0


def test_search_finds_observations_by_words_and_by_every_subject_named(vault: Vault) -> None:
    vault.workspace.remember("Ana is learning Portuguese for the move.", ["Ana"])
    vault.workspace.remember("Ana and Bob practise Portuguese together.", ["Ana", "Bob"])
    vault.workspace.remember("Bob plays chess on Sundays.", ["Bob"])
    found = vault.workspace.search_observations("portuguese")
    assert len(found) == 2
    both = vault.workspace.search_observations("Portuguese", subject_names=["Ana", "Bob"])
    assert [o.content for o in both] == ["Ana and Bob practise Portuguese together."]
    assert vault.workspace.search_observations("?!") == []
    newest = vault.workspace.observations_of(["Bob"])
    assert {o.content for o in newest} == {"Bob plays chess on Sundays.", "Ana and Bob practise Portuguese together."}


def test_understandings_are_revised_by_supersession_and_the_chain_can_be_walked(vault: Vault) -> None:
    note = vault.workspace.remember("Ana moved to Lisbon in March.", ["Ana"], session_id="s1").observation
    first = vault.workspace.create_understanding(
        "Ana lives in Lisbon since March.", summary="Ana, Lisbon", subject_names=["Ana"], sources=[note.id]
    )
    assert first.kind == "single_subject" and first.active and first.sources == (note.id,)
    second = vault.workspace.update_understanding(
        first.id, new_content="Ana lives in Lisbon and works remotely.", new_summary="Ana, Lisbon, remote"
    )
    assert second.supersedes == first.id and second.sources == (note.id,) and second.subjects == ("Ana",)
    old = vault.workspace.understanding(first.id)
    assert old.superseded_by == second.id and not old.active and old.content == "Ana lives in Lisbon since March."
    with pytest.raises(ValidationError, match="superseded"):
        vault.workspace.update_understanding(first.id, new_content="x", new_summary="y")
    # a fresh single-subject understanding of Ana is the next revision, not a second current picture
    third = vault.workspace.create_understanding("Ana is a designer in Lisbon.", summary="Ana", subject_names=["Ana"])
    assert third.supersedes == second.id
    history = vault.workspace.understanding_history(second.id)
    assert [u.id for u in history] == [first.id, second.id, third.id]
    assert [u.id for u in vault.workspace.get_understandings(["Ana"])] == [third.id]
    stats = vault.workspace.stats()
    assert (stats.understandings, stats.superseded_understandings) == (1, 2)


def test_kinds_follow_the_subjects_named(vault: Vault) -> None:
    pair = vault.workspace.create_understanding("They run the book club.", summary="club", subject_names=["A", "B"])
    assert pair.kind == "relationship"
    assert vault.workspace.get_understandings(["A", "B"]) == [pair]
    assert vault.workspace.get_understandings(["A"]) == [pair]  # tagged with A too
    with pytest.raises(ValidationError, match="which kind"):
        vault.workspace.create_understanding("Three friends.", summary="s", subject_names=["A", "B", "C"])
    with pytest.raises(ValidationError, match="workspace"):
        vault.workspace.create_understanding("Be kind.", summary="s", subject_names=["A"], kind="soul")
    with pytest.raises(ValidationError, match="source"):
        vault.workspace.create_understanding("x", summary="s", subject_names=["A"], sources=[987_654_321])
    soul = vault.workspace.create_understanding("Help the person remember.", summary="why", kind="soul")
    soul2 = vault.workspace.create_understanding("Help them remember, kindly.", summary="why", kind="soul")
    assert soul2.supersedes == soul.id
    assert [u.id for u in vault.workspace.get_understandings()] == [soul2.id]
    structural = vault.workspace.set_structural_understanding("A", "A is also called Annie.")
    assert structural.kind == "structural" and structural.subjects == ("A",)
    assert vault.get_object(structural.id).kind == "understanding"


def test_a_relationship_is_the_intersection_and_neighbours_rank_by_its_size(vault: Vault) -> None:
    ws = vault.workspace
    ws.remember("Ana and Bob met at university.", ["Ana", "Bob"])
    ws.remember("Ana and Bob share a flat.", ["Ana", "Bob"])
    ws.remember("Ana and Carla sing in a choir.", ["Ana", "Carla"])
    ws.remember("Bob alone.", ["Bob"])
    rel = ws.create_understanding("Old friends who live together.", summary="friends", subject_names=["Ana", "Bob"])
    between = ws.open_intersection("Ana", "bob")
    assert {o.content for o in between.observations} == {"Ana and Bob met at university.", "Ana and Bob share a flat."}
    assert [u.id for u in between.understandings] == [rel.id]
    assert between.size == 3
    around = ws.open_around("Ana")
    assert [(n.name, n.shared) for n in around] == [("Bob", 3), ("Carla", 1)]
    assert around[0].relationship is not None and around[0].relationship.id == rel.id
    with pytest.raises(NotFound):
        ws.open_intersection("Ana", "Nobody")
    with pytest.raises(ValidationError):
        ws.open_intersection("Ana", "ana")


def test_facts_and_turns_tagged_with_both_subjects_are_part_of_their_intersection(vault: Vault) -> None:
    vault.events.ingest(
        [EventIn(conversation_id="c", content="My sister Marta lives in Porto.", occurred_at="2024-03-01T10:00:00Z")]
    )
    assert vault.jobs.wait_idle(120)
    around = vault.workspace.open_around("Marta")
    assert around and around[0].name == "user"
    between = vault.workspace.open_intersection("user", "Marta")
    assert between.facts and between.events >= 0


def test_marks_count_uses_and_doubts(vault: Vault) -> None:
    note = vault.workspace.remember("Ana likes tea.", ["Ana"]).observation
    done = vault.workspace.mark([note.id, 123_456_789], useful=True)
    assert done[note.id] == "observation" and "not found" in done[123_456_789]
    vault.workspace.mark([note.id], useful=False)
    again = vault.workspace.observation(note.id)
    assert (again.useful_count, again.questionable_count) == (1, 1)


def test_generations_count_and_stamp_what_is_written(vault: Vault) -> None:
    assert vault.workspace.generation() == 0
    before = vault.workspace.remember("Before the first pass.", ["Ana"]).observation
    assert vault.store.write(lambda tx: next_generation(tx, "default")) == 1
    after = vault.workspace.remember("After the first pass.", ["Ana"]).observation
    assert (before.generation, after.generation, vault.workspace.generation()) == (0, 1, 1)
    assert vault.workspace.stats().unlinked_observations == 2


def test_forgetting_a_user_removes_their_workspace_and_a_time_range_its_notes_and_what_was_built_on_them(
    vault: Vault,
) -> None:
    ws = vault.workspace
    old = ws.remember("Ana lived in Berlin.", ["Ana"], observed_at="2023-01-10T10:00:00Z").observation
    new = ws.remember("Ana lives in Lisbon.", ["Ana"], observed_at="2024-06-01T10:00:00Z").observation
    built = ws.create_understanding("Ana left Berlin.", summary="Ana", subject_names=["Ana"], sources=[old.id])
    kept = ws.create_understanding("Ana is in Lisbon.", summary="Ana", subject_names=["Ana", "Lisbon"])
    receipt = vault.forget(ForgetScope(since="2023-01-01", until="2023-02-01"))
    assert receipt.deleted_counts["observations"] == 1 and receipt.deleted_counts["understandings"] == 1
    with pytest.raises(NotFound):
        ws.observation(old.id)
    with pytest.raises(NotFound):
        ws.understanding(built.id)
    assert ws.observation(new.id).content == "Ana lives in Lisbon."
    assert ws.understanding(kept.id).active
    # a whole user: every observation, understanding, session and the generation
    ws.remember("Theirs.", ["Zed"], session_id="z", user_id="other")
    ws.create_understanding("Zed's picture.", summary="Zed", subject_names=["Zed"], user_id="other")
    vault.store.write(lambda tx: next_generation(tx, "other"))
    vault.store.write(
        lambda tx: tx.execute(
            "INSERT INTO workspace_sessions(user_id, session_id, token, last_seen_at) VALUES ('other', 'z', 't', 0)"
        )
    )
    gone = vault.forget(ForgetScope(user_id="other"))
    assert gone.deleted_counts["observations"] == 1 and gone.deleted_counts["understandings"] == 1
    assert ws.stats(user_id="other").observations == 0 and ws.generation(user_id="other") == 0
    assert vault.store.scalar("SELECT COUNT(*) FROM workspace_sessions WHERE user_id = 'other'") == 0
    assert ws.stats().observations == 1  # the default user's note stands


def test_the_schema_has_the_workspace(vault: Vault) -> None:
    assert SCHEMA_VERSION >= 7
    assert vault.store.scalar("SELECT COUNT(*) FROM sqlite_master WHERE name = 'observations_release_id'") == 1
