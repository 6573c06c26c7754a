"""Workspace sessions (orient, bring_to_mind's seen log and compaction) and consolidation by generations."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from engine import Vault
from engine.events import EventIn
from engine.workspace.sessions import COMPACTION_GAP_S
from tests.fakes.ollama import FakeOllama


def test_bring_to_mind_shows_each_item_once_until_the_context_is_compacted(vault: Vault) -> None:
    ws = vault.workspace
    ws.remember("Ana is planning a trip to Japan in October.", ["Ana"])
    ws.create_understanding("Ana loves travel and plans long trips.", summary="Ana travels", subject_names=["Ana"])
    first = ws.bring_to_mind("What do we know about Ana's trip to Japan?", session_id="s1")
    assert len(first.understandings) == 1 and len(first.observations) == 1 and not first.compacted
    second = ws.bring_to_mind("Ana's trip to Japan", session_id="s1", last_token=first.heartbeat_token)
    assert (second.understandings, second.observations) == ((), ()) and second.already_seen == 2
    again = ws.bring_to_mind(
        "Ana's trip to Japan", session_id="s1", last_token=second.heartbeat_token, include_seen=True
    )
    assert len(again.understandings) == 1
    # a token that is not the last one issued: the client lost its context, so everything comes back
    lost = ws.bring_to_mind("Ana's trip to Japan", session_id="s1", last_token="stale")
    assert lost.compacted and len(lost.understandings) == 1 and len(lost.observations) == 1
    # so does a long silence
    vault.store.write(
        lambda tx: tx.execute(
            "UPDATE workspace_sessions SET last_seen_at = last_seen_at - ? WHERE session_id = 's1'",
            (COMPACTION_GAP_S + 5,),
        )
    )
    late = ws.bring_to_mind("Ana's trip to Japan", session_id="s1", last_token=lost.heartbeat_token)
    assert late.compacted and len(late.understandings) == 1
    # sessions are separate, and reset_seen starts one again
    assert len(ws.bring_to_mind("Japan trip", session_id="s2").observations) == 1
    assert ws.reset_seen(session_id="s1") == 2


def test_an_observation_covered_by_an_understanding_is_no_longer_fresh(vault: Vault) -> None:
    ws = vault.workspace
    note = ws.remember("Bob repairs vintage bicycles.", ["Bob"]).observation
    assert [o.id for o in ws.bring_to_mind("vintage bicycles", session_id="a").observations] == [note.id]
    ws.create_understanding("Bob restores old bikes.", summary="Bob", subject_names=["Bob"], sources=[note.id])
    shown = ws.bring_to_mind("vintage bicycles Bob", session_id="b")
    assert shown.observations == () and len(shown.understandings) == 1


def test_orient_returns_the_workspace_documents_and_starts_the_session_afresh(vault: Vault) -> None:
    ws = vault.workspace
    ws.create_understanding("Remember what matters to the person.", summary="purpose", kind="soul")
    ws.create_understanding("Cite evidence for every claim.", summary="rules", kind="protocol")
    ws.remember("Carla started a pottery class.", ["Carla"])
    shown = ws.bring_to_mind("pottery class", session_id="s")
    assert shown.observations
    oriented = ws.orient(session_id="s")
    assert oriented.soul is not None and oriented.soul.content == "Remember what matters to the person."
    assert oriented.protocol is not None and oriented.orientation is None
    assert oriented.pending_consolidation == 1
    assert [o.content for o in oriented.recent_observations] == ["Carla started a pottery class."]
    again = ws.bring_to_mind("pottery class", session_id="s", last_token=oriented.heartbeat_token)
    assert again.observations and not again.compacted  # orient emptied the seen log


def test_subject_mode_recall_gives_the_subject_its_understanding_and_newest_observations(vault: Vault) -> None:
    ws = vault.workspace
    ws.remember("Dmitri coaches chess in Tallinn.", ["Dmitri"])
    ws.create_understanding("Dmitri is a chess coach.", summary="coach", subject_names=["Dmitri"])
    found = ws.recall_subject("dmitri")
    assert found is not None and found.subject.name == "Dmitri"
    assert [u.content for u in found.understandings] == ["Dmitri is a chess coach."]
    assert [o.content for o in found.observations] == ["Dmitri coaches chess in Tallinn."]
    assert ws.recall_subject("Where does Dmitri live?") is None


def test_consolidation_writes_cited_extractive_understandings_and_touches_only_what_changed(vault: Vault) -> None:
    ws = vault.workspace
    vault.events.ingest(
        [
            EventIn(conversation_id="c", content="My sister Marta lives in Porto.", occurred_at="2024-03-01T10:00Z"),
            EventIn(conversation_id="c", content="Marta works as a nurse.", occurred_at="2024-03-01T10:01Z"),
        ]
    )
    assert vault.jobs.wait_idle(120)
    ws.remember("Marta and Ana run a book club.", ["Marta", "Ana"])
    ws.remember("Marta and Ana met at school.", ["Marta", "Ana"])
    ws.remember("Marta and Ana share a love of crime novels.", ["Marta", "Ana"])
    assert ws.pending_consolidation() >= 2
    first = ws.consolidate()
    assert first.generation == 1 and first.writer == "extractive"
    assert {"Marta", "Ana"} <= set(first.subjects_written)
    assert ("Ana", "Marta") in first.relationships_written or ("Marta", "Ana") in first.relationships_written
    (marta,) = ws.get_understandings(["Marta"], kind="single_subject")
    assert marta.source == "consolidation" and marta.generation == 1
    for line in marta.content.splitlines():  # every line cites what it came from
        cited = int(line.rsplit("[#", 1)[1].rstrip("]"))
        assert cited in marta.sources
        assert vault.get_object(cited).kind in ("fact", "observation")
    assert "Porto" in marta.content
    # nothing changed: the next pass writes nothing
    assert ws.pending_consolidation() == 0
    quiet = ws.consolidate()
    assert quiet.generation == 2 and quiet.subjects_written == [] and quiet.relationships_written == []
    # only the subject with new evidence is revised
    ws.remember("Ana took up climbing.", ["Ana"])
    third = ws.consolidate()
    assert third.subjects_written == ["Ana"] and third.relationships_written == []
    (ana,) = ws.get_understandings(["Ana"], kind="single_subject")
    assert ana.supersedes is not None and "climbing" in ana.content
    assert ws.get_understandings(["Marta"], kind="single_subject") == [marta]


def test_a_model_rewrites_the_draft_and_a_failing_model_leaves_the_draft(vault: Vault) -> None:
    ws = vault.workspace
    ws.remember("Erik builds boats in Bergen.", ["Erik"])
    seen: list[str] = []

    def model(kind: str, title: str, draft: str) -> str:
        seen.append(draft)
        return f"{title} is a boat builder in Bergen."

    done = ws.consolidate(rewriter=model, writer_name="tiny-model")
    assert done.writer == "tiny-model" and "Erik builds boats in Bergen." in seen[0]
    assert ws.get_understandings(["Erik"])[0].content == "Erik is a boat builder in Bergen."
    ws.remember("Erik sails on weekends.", ["Erik"])

    def broken(kind: str, title: str, draft: str) -> str:
        raise ConnectionError("model server down")

    fallback = ws.consolidate(rewriter=broken)
    assert fallback.subjects_written == ["Erik"] and fallback.warnings
    assert "Erik sails on weekends." in ws.get_understandings(["Erik"])[0].content


def test_the_report_names_what_consolidation_should_look_at(vault: Vault) -> None:
    ws = vault.workspace
    for text in ("Ana and Bob cook together.", "Ana and Bob hike.", "Ana and Bob run a podcast."):
        ws.remember(text, ["Ana", "Bob"])
    doubtful = ws.remember("Bob might be moving to Oslo.", ["Bob"]).observation
    ws.mark([doubtful.id], useful=False)
    ws.create_subjects(["Carla", "Dana"])
    ws.update_subject_summary("Carla", "Enjoys mountain hiking and cooking")
    ws.update_subject_summary("Dana", "Enjoys mountain hiking and baking")
    report = ws.consolidation_report()
    assert ("Ana", 3) in report.subjects_needing_understanding or ("Bob", 4) in report.subjects_needing_understanding
    assert report.intersections_needing_synthesis[0][:2] in (("Ana", "Bob"), ("Bob", "Ana"))
    assert report.intersections_needing_synthesis[0][2] == 3
    assert {frozenset(d[:2]) for d in report.dense_intersections} == {frozenset({"Carla", "Dana"})}
    assert doubtful.id in report.unlinked_observations
    assert (doubtful.id, "observation") in report.questionable
    ws.consolidate()
    after = ws.consolidation_report()
    assert after.intersections_needing_synthesis == () and after.unlinked_observations == ()


def test_similar_subjects_are_found_and_merged_with_the_merge_noted(vault: Vault) -> None:
    ws = vault.workspace
    ws.remember("Bob Smith teaches maths.", ["Bob Smith"])
    ws.remember("Bob plays the cello.", ["Bob"])
    ws.create_subjects(["Robert", "Ana"])
    similar = ws.find_similar_subjects("Bob")
    assert [s.name for s in similar][:1] == ["Bob Smith"]
    kept = ws.merge_subjects("Bob Smith", ["Bob"])
    assert "Bob" in kept.aliases
    notes = {o.content for o in ws.observations_of(["Bob Smith"])}
    assert notes == {"Bob Smith teaches maths.", "Bob plays the cello."}
    (structural,) = ws.get_understandings(["Bob Smith"], kind="structural")
    assert "Bob merged into Bob Smith" in structural.content
    with pytest.raises(Exception, match="itself"):
        ws.merge_subjects("Bob Smith", ["Bob Smith"])


def test_the_configured_model_writes_understandings_in_a_background_job(
    tmp_path: Path, fake_ollama: FakeOllama
) -> None:
    """With Ollama configured the job's pass is the model's prose (its prompt holds the cited draft); when the model
    goes down the next pass keeps the draft and says so, and nothing is parked."""
    fake_ollama.on_chat(lambda request: {"text": "Hamid is an accountant in Toronto [#1]."})
    settings = fake_ollama.settings(
        {"llm.provider": "ollama", "embedder.provider": "hashing", "workspace.consolidate_after_quiet_minutes": 0}
    )
    with Vault.open(tmp_path / "v", settings=settings) as vault:
        vault.workspace.remember("Hamid works as an accountant in Toronto.", ["Hamid"])
        assert vault.workspace.request_consolidation() is not None
        assert vault.workspace.request_consolidation() is None  # one queued pass at a time
        assert vault.jobs.wait_idle(120)
        (hamid,) = vault.workspace.get_understandings(["Hamid"])
        assert hamid.content == "Hamid is an accountant in Toronto [#1]."
        prompt = " ".join(fake_ollama.texts_sent())
        assert "Hamid works as an accountant in Toronto." in prompt and "[#" in prompt
        fake_ollama.stop()
        vault.workspace.remember("Hamid plays squash on Fridays.", ["Hamid"])
        vault.workspace.request_consolidation()
        assert vault.jobs.wait_idle(120)
        (after,) = vault.workspace.get_understandings(["Hamid"])
        assert "Hamid plays squash on Fridays." in after.content and after.supersedes == hamid.id
        assert vault.store.scalar("SELECT COUNT(*) FROM jobs WHERE status = 'parked'") == 0


def test_a_quiet_vault_is_due_for_consolidation_once(vault: Vault) -> None:
    ws = vault.workspace
    assert ws.due_for_consolidation(60, now=time.time()) == []
    ws.remember("Linh runs marketing in Hanoi.", ["Linh"])
    assert ws.due_for_consolidation(60, now=time.time()) == []  # not quiet yet
    assert ws.due_for_consolidation(60, now=time.time() + 120) == ["default"]
    ws.consolidate()
    assert ws.due_for_consolidation(60, now=time.time() + 120) == []


def test_upkeep_queues_a_pass_for_a_quiet_user_and_keeps_going_when_a_task_fails(vault: Vault) -> None:
    """One round of upkeep at the consolidation tick queues the pass the quiet user is due; a failing task is logged
    and the round goes on."""
    from engine.upkeep import Upkeep, UpkeepTasks

    vault.workspace.remember("Zanele audits mines in Johannesburg.", ["Zanele"])
    quiet = vault.settings.updated({"workspace.consolidate_after_quiet_minutes": 0.0001})
    failures: list[str] = []

    def broken() -> None:
        failures.append("vectors")
        raise RuntimeError("vectors unavailable")

    upkeep = Upkeep(
        UpkeepTasks(
            store=vault.store,
            settings=lambda: quiet,
            notify_jobs=lambda: None,
            maintain_vectors=broken,
            workspace=vault.workspace,
            backups_dir=vault.paths.backups,
            backup_now=lambda: None,
        )
    )
    time.sleep(0.05)  # the evidence must be older than the (tiny) quiet period
    for _ in range(3):
        upkeep.tick()
    assert vault.jobs.wait_idle(120)
    assert vault.workspace.get_understandings(["Zanele"])  # the third tick queued the pass, a worker ran it
    for _ in range(8):  # the tenth tick fits the vectors: that task fails, is logged, and upkeep goes on
        upkeep.tick()
    assert failures == ["vectors"]


def test_a_subject_with_many_facts_still_shows_its_new_observations(vault: Vault) -> None:
    """Facts have their own share of the draft's lines: a new observation about a subject rich in facts revises its
    understanding."""
    vault.events.ingest(
        [
            EventIn(
                conversation_id="c", content=f"My friend Omar likes {thing}.", occurred_at=f"2024-03-01T10:{i:02d}Z"
            )
            for i, thing in enumerate(
                "tea coffee chess jazz hiking cycling sushi pasta tennis poetry films opera sailing baking maps "
                "birds trains rugby".split()
            )
        ]
    )
    assert vault.jobs.wait_idle(120)
    ws = vault.workspace
    ws.consolidate()
    ws.remember("Omar moved to Rabat in May.", ["Omar"])
    again = ws.consolidate()
    assert again.subjects_written == ["Omar"]
    assert "Omar moved to Rabat in May." in ws.get_understandings(["Omar"], kind="single_subject")[0].content
