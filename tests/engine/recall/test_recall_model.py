"""Recall's query analysis with a model: used when it answers in time, the rule result when it does not."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.events import EventIn
from engine.recall.types import RecallRequest
from engine.vault import Vault
from tests.fakes.ollama import FakeOllama


def _vault(tmp_path: Path, fake: FakeOllama) -> Vault:
    settings = fake.settings({"llm.provider": "ollama", "embedder.provider": "hashing", "llm.query_timeout_s": 0.6})
    return Vault.open(tmp_path / "v", settings=settings, start_workers=False)


def analysis_reply(request: dict[str, Any]) -> dict[str, Any] | str:
    system = request["messages"][0]["content"]
    if "understand a question" in system:
        return {"mode": "indirect", "keywords": ["violin", "lessons"], "rewrites": ["I take violin lessons"]}
    return {"facts": []}


def test_model_refines_the_query_when_it_answers_in_time(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.on_chat(analysis_reply)
    vault = _vault(tmp_path, fake_ollama)
    try:
        vault.events.ingest(EventIn(conversation_id="c", content="I take violin lessons on Mondays."))
        result = vault.recall(RecallRequest(conversation_id="c", query="what could I practise this week?"))
        assert result.routing.engine == "ollama:llama3.2"
        assert result.routing.mode == "indirect"
        assert "I take violin lessons" in result.routing.used_queries
        assert not result.routing.degraded
        sent = [r for r in fake_ollama.requests if r.path == "/api/chat"]
        assert sent and "what could I practise this week?" in sent[-1].body["messages"][0]["content"]
    finally:
        vault.close()


def test_a_slow_model_falls_back_to_the_rules_within_the_budget(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.on_chat(analysis_reply)
    fake_ollama.delay(120.0, path="/api/chat")  # answers long after the budget: waiting for it would be the bug
    vault = _vault(tmp_path, fake_ollama)
    try:
        result = vault.recall(RecallRequest(conversation_id="c", query="Where do I live?"))
        assert result.routing.engine == "rules" and result.routing.degraded  # the query budget bounded the wait
        assert any("model analysis skipped" in note for note in result.routing.notes)
        assert result.routing.mode == "direct"
    finally:
        fake_ollama.delay(0)
        vault.close()


def test_ollama_down_means_rules_and_a_visible_note(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    vault = _vault(tmp_path, fake_ollama)
    fake_ollama.stop()
    try:
        result = vault.recall(RecallRequest(conversation_id="c", query="What do you know about me?"))
        assert result.routing.engine == "rules" and result.routing.mode == "broad"
        assert result.routing.degraded
    finally:
        vault.close()


def rewrite_reply(rewrites: list[str]) -> Callable[[dict[str, Any]], dict[str, Any] | str]:
    """A model that keeps the question direct, adds no keywords, and rewrites it as ``rewrites``."""

    def reply(request: dict[str, Any]) -> dict[str, Any] | str:
        if "understand a question" in request["messages"][0]["content"]:
            return {"mode": "direct", "keywords": [], "rewrites": rewrites}
        return {"facts": []}

    return reply


def _brahms_vault(tmp_path: Path, fake: FakeOllama) -> tuple[Vault, int]:
    """Turns the question "what am I working on?" shares no word with, one of them the answer."""
    settings = fake.settings({"llm.provider": "ollama", "embedder.provider": "hashing", "llm.query_timeout_s": 2.0})
    vault = Vault.open(tmp_path / "v", settings=settings, start_workers=True)
    results = vault.events.ingest(
        [
            EventIn(conversation_id="c", content=text, occurred_at=f"2024-05-01T10:0{minute}:00Z")
            for minute, text in enumerate(
                (
                    "I am rehearsing a Brahms sonata for the spring recital.",
                    "I bought new running shoes at the mall.",
                    "The party music was far too loud.",
                    "My cousin visits from Da Nang next week.",
                ),
                start=1,
            )
        ]
    )
    assert vault.jobs.wait_idle(120)
    return vault, results[0].event_id


def test_the_model_rewrites_are_searched_by_the_keyword_and_vector_channels(
    tmp_path: Path, fake_ollama: FakeOllama
) -> None:
    fake_ollama.on_chat(rewrite_reply(["I am rehearsing a Brahms sonata"]))
    vault, brahms = _brahms_vault(tmp_path, fake_ollama)
    try:
        result = vault.recall(RecallRequest(conversation_id="c", query="what am I working on?"))
        assert result.routing.used_queries == ("what am I working on?", "I am rehearsing a Brahms sonata")
        top = result.blocks[0]
        assert top.meta.get("turn_id", top.id) == brahms
        assert {"keyword", "vector"} <= set(top.channels), "both text channels searched the rewrite"
        # without a rewrite the question's own words do not reach the turn by keyword
        fake_ollama.on_chat(rewrite_reply([]))
        plain = vault.recall(RecallRequest(conversation_id="c", query="what am I working on?"))
        assert plain.routing.used_queries == ("what am I working on?",)
        found = [b for b in plain.blocks if b.meta.get("turn_id", b.id) == brahms]
        assert not found or "keyword" not in found[0].channels
    finally:
        vault.close()


def test_a_rewrite_with_nothing_to_search_is_not_listed(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.on_chat(rewrite_reply(["what is it", "What am I working on?"]))
    vault, _brahms = _brahms_vault(tmp_path, fake_ollama)
    try:
        result = vault.recall(RecallRequest(conversation_id="c", query="what am I working on?"))
        # all stop words, or the question itself again: nothing new to search, so not claimed as searched
        assert result.routing.used_queries == ("what am I working on?",)
        fake_ollama.on_chat(rewrite_reply(["Brahms", "what is it"]))
        again = vault.recall(RecallRequest(conversation_id="c", query="what am I working on?"))
        assert again.routing.used_queries == ("what am I working on?", "Brahms")
    finally:
        vault.close()


def test_the_model_turning_a_question_indirect_expands_it(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.on_chat(analysis_reply)  # answers "indirect" with a rewrite
    settings = fake_ollama.settings({"llm.provider": "ollama", "embedder.provider": "hashing"})
    vault = Vault.open(tmp_path / "v", settings=settings, start_workers=False)
    try:
        vault.facts.add("user", "plays_instrument", "violin")
        vault.facts.add("user", "likes", "baroque music")
        result = vault.recall(RecallRequest(conversation_id="c", query="what could I practise this week?"))
        assert result.routing.mode == "indirect"
        profile = result.routing.channels["profile"]
        assert profile.ran and profile.hits == 2, "the owner's preferences and habits join the pool"
    finally:
        vault.close()


def test_recalls_waiting_on_the_model_do_not_hold_up_each_other(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    """Only the ranking after the analysis runs a few recalls at a time (engine/recall/gate.py): six recalls are with
    the model at once.  The model answers only when all six questions have reached it (a barrier): recalls that
    waited for each other's model calls would never get there, and would fall back to the rules."""
    import threading

    barrier = threading.Barrier(6, timeout=60)

    def together(request: dict[str, Any]) -> dict[str, Any] | str:
        if "understand a question" in request["messages"][0]["content"]:
            barrier.wait()
        return analysis_reply(request)

    fake_ollama.on_chat(together)
    settings = fake_ollama.settings(
        {"llm.provider": "ollama", "embedder.provider": "hashing", "llm.query_timeout_s": 90.0}
    )
    vault = Vault.open(tmp_path / "v", settings=settings, start_workers=False)
    try:
        vault.events.ingest(EventIn(conversation_id="c", content="I take violin lessons on Mondays."))
        results: list[Any] = []

        def ask(n: int) -> None:
            results.append(vault.recall(RecallRequest(conversation_id="c", query=f"what could I practise {n}?")))

        threads = [threading.Thread(target=ask, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(results) == 6
        assert all(r.routing.engine == "ollama:llama3.2" for r in results)  # all six were with the model at once
        assert not barrier.broken
    finally:
        vault.close()
