"""Episodes (DESIGN §3): a conversation segment closes after an idle gap of event time, after N turns, or on
demand, and gets a summary scoped to its conversation — extractive without a model, the model's with Ollama, and
extractive again (with a warning on the job) when Ollama is down."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from engine import Vault
from engine.episodes import Episode
from engine.events import EventIn
from tests.engine.memory.support import ChangeLog, offline, open_vault
from tests.fakes.ollama import FakeOllama

START = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def turn(conversation: str, minutes: float, content: str, role: str = "user", **kw: Any) -> EventIn:
    return EventIn(
        conversation_id=conversation, content=content, role=role, occurred_at=START + timedelta(minutes=minutes), **kw
    )


def oldest_first(vault: Vault, conversation: str) -> list[Episode]:
    return list(reversed(vault.conversations.episodes(conversation)))


def test_an_idle_gap_of_event_time_closes_a_segment(vault: Vault) -> None:
    feed = ChangeLog(vault)
    vault.events.ingest(
        [
            turn("trip", 0, "I'm planning a trip to Kyoto with my sister Mai in October."),
            turn("trip", 20, "We booked a ryokan near Gion for five nights.", role="assistant"),
            turn("trip", 65, "Unrelated: my laptop keeps crashing since the update."),  # 45 minutes after the last
        ]
    )
    assert vault.jobs.wait_idle(120)
    first, second = oldest_first(vault, "trip")
    assert (first.turn_count, second.turn_count) == (2, 1)
    assert first.status == "summarized" and first.summarizer == "extractive" and second.status == "open"
    assert first.started_at == START and first.ended_at == START + timedelta(minutes=20)
    assert first.summary.startswith("2024-05-01") and "Kyoto" in first.summary and "ryokan" in first.summary
    assert "laptop" not in first.summary
    assert [c.object_id for c in feed.of("episode.created")] == [first.id]


def test_turns_closer_than_the_gap_stay_in_one_segment(vault: Vault) -> None:
    vault.events.ingest([turn("chat", m, f"Note number {m} about the garden plan.") for m in (0, 25, 50, 75)])
    assert vault.jobs.wait_idle(120)
    (episode,) = vault.conversations.episodes("chat")
    assert episode.turn_count == 4 and episode.status == "open"


def test_a_segment_closes_after_max_turns(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v", offline(**{"episodes.max_turns": 3})) as vault:
        vault.events.ingest(
            [turn("long", i, f"Step {i}: we discussed the quarterly budget for Acme.") for i in range(7)]
        )
        assert vault.jobs.wait_idle(120)
        episodes = oldest_first(vault, "long")
        assert [e.turn_count for e in episodes] == [3, 3, 1]
        assert [e.status for e in episodes] == ["summarized", "summarized", "open"]
        assert "Step 0" in episodes[0].summary and "Step 3" in episodes[1].summary


def test_closing_on_demand_and_summaries_stay_in_their_conversation(vault: Vault) -> None:
    # two conversations interleaved in time: each episode only ever sees its own turns
    vault.events.ingest(
        [
            turn("work", 0, "The Falcon release moves to Thursday because QA found a blocker."),
            turn("home", 1, "Grandma Rosa arrives Saturday, so I need to clean the guest room."),
            turn("work", 2, "Priya owns the Falcon hotfix and reviews the migration scripts."),
            turn("home", 3, "I ordered tulips and a birthday cake for Rosa."),
        ]
    )
    assert vault.jobs.wait_idle(120)
    assert vault.conversations.close_episodes("work") == 1
    assert vault.jobs.wait_idle(120)
    (work,) = vault.conversations.episodes("work")
    (home,) = vault.conversations.episodes("home")
    assert work.status == "summarized" and home.status == "open"
    assert "Falcon" in work.summary and "Priya" in work.summary
    assert "Rosa" not in work.summary and "tulips" not in work.summary
    assert vault.conversations.close_episodes("work") == 0  # nothing open any more
    assert vault.conversations.close_episodes("home") == 1
    assert vault.jobs.wait_idle(120)
    (home,) = vault.conversations.episodes("home")
    assert home.status == "summarized" and "Rosa" in home.summary and "Falcon" not in home.summary
    assert {e.conversation_id for e in vault.conversations.episodes()} == {"work", "home"}


def _responder(summary: str) -> Any:
    def answer(request: dict[str, Any]) -> Any:
        system = request["messages"][0]["content"]
        if system.startswith("You summarise one segment"):
            return {"summary": summary}
        return {"facts": []}

    return answer


def test_with_a_model_the_summary_comes_from_the_model(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.on_chat(_responder("Linh and the assistant planned a Kyoto trip for October 2024."))
    settings = fake_ollama.settings({"llm.provider": "ollama", "embedder.provider": "hashing"})
    with open_vault(tmp_path / "v", settings) as vault:
        vault.events.ingest(
            [
                turn("trip", 0, "I'm planning a trip to Kyoto in October."),
                turn("trip", 5, "Great, Kyoto is lovely in autumn.", role="assistant"),
            ]
        )
        assert vault.jobs.wait_idle(120)
        before = datetime.now(UTC)
        vault.conversations.close_episodes("trip")
        assert vault.jobs.wait_idle(120)
        after = datetime.now(UTC)
        (episode,) = vault.conversations.episodes("trip")
        assert episode.summary == "Linh and the assistant planned a Kyoto trip for October 2024."
        assert episode.summarizer is not None and episode.summarizer.startswith("ollama:llama3.2@")
        prompts = [r.body["messages"][0]["content"] for r in fake_ollama.requests_to("/api/chat")]
        (prompt,) = [p for p in prompts if p.startswith("You summarise one segment")]
        assert "2024-05-01 09:00" in prompt and "2024-05-01 09:05" in prompt
        assert "user: I'm planning a trip to Kyoto in October." in prompt
        assert any(f"Today is {day:%Y-%m-%d}." in prompt for day in (before, after))  # rendered at call time


def test_with_ollama_down_the_summary_is_extractive_and_the_job_warns(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.on_chat(_responder("never used"))
    settings = fake_ollama.settings({"llm.provider": "ollama", "embedder.provider": "hashing"})
    with open_vault(tmp_path / "v", settings) as vault:
        vault.events.ingest(
            [
                turn("trip", 0, "I'm planning a trip to Kyoto with my sister Mai in October."),
                turn("trip", 5, "We booked a ryokan near Gion for five nights."),
            ]
        )
        assert vault.jobs.wait_idle(120)
        fake_ollama.stop()
        feed = ChangeLog(vault)
        vault.conversations.close_episodes("trip")
        assert vault.jobs.wait_idle(120)
        (episode,) = vault.conversations.episodes("trip")
        assert episode.status == "summarized" and episode.summarizer == "extractive"
        assert "Kyoto" in episode.summary and episode.summary != "never used"
        warnings = [c for c in feed.of("job.warning") if c.data["kind"] == "summarize_episode"]
        assert len(warnings) == 1
        assert "model unavailable, used an extractive summary" in warnings[0].data["warnings"][0]
        assert vault.jobs.stats().parked == 0


def test_an_empty_or_misshapen_model_summary_falls_back_to_the_extractive_one(
    tmp_path: Path, fake_ollama: FakeOllama
) -> None:
    settings = fake_ollama.settings({"llm.provider": "ollama", "embedder.provider": "hashing", "jobs.backoff_s": 0.02})
    with open_vault(tmp_path / "v", settings) as vault:
        for n, answer in enumerate(({"summary": "   "}, {"gist": "Kyoto"}, ["Kyoto"])):
            fake_ollama.on_chat(lambda request, answer=answer: answer)
            conversation = f"trip{n}"
            vault.events.ingest(turn(conversation, 0, "I'm planning a trip to Kyoto in October."))
            assert vault.jobs.wait_idle(120)
            feed = ChangeLog(vault)
            vault.conversations.close_episodes(conversation)
            assert vault.jobs.wait_idle(120)
            (episode,) = vault.conversations.episodes(conversation)
            assert episode.status == "summarized" and episode.summarizer == "extractive"
            assert "Kyoto" in episode.summary  # never silently an empty summary, never a retried job
            (warning,) = [c for c in feed.of("job.warning") if c.data["kind"] == "summarize_episode"]
            assert "not usable" in warning.data["warnings"][0]
        assert vault.jobs.stats().parked == 0
