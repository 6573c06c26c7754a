"""The Ollama extraction path against the fake server (DESIGN §4 stage 2, §7; HARDENING "Privacy").

The prompt is rendered at call time with today's and the event's date; the model's facts are validated (a quote
that is not verbatim is rejected, visibly, and never stored); output that is not the schema degrades that one item
to the rule path with a visible warning (never a silent empty list, never a parked job); a missing, slow or stopped
model does the same; and personal identifiers are redacted before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine import Vault
from engine.events import EventIn
from tests.engine.memory.support import ChangeLog, check_invariants, every_fact, one, open_vault
from tests.fakes.ollama import FakeOllama

EMAIL = "ann.lee@example.org"
CARD = "4111 1111 1111 1111"


def model_settings(fake: FakeOllama, **changes: Any) -> Any:
    return fake.settings({"llm.provider": "ollama", "embedder.provider": "hashing", "jobs.backoff_s": 0.02, **changes})


@pytest.fixture
def model_vault(tmp_path: Path, fake_ollama: FakeOllama) -> Iterator[Vault]:
    with open_vault(tmp_path / "v", model_settings(fake_ollama)) as vault:
        assert vault.llm_engine == "ollama:llama3.2"
        yield vault


def extraction_prompts(fake: FakeOllama) -> list[str]:
    return [
        r.body["messages"][0]["content"]
        for r in fake.requests_to("/api/chat")
        if r.body["messages"][0]["content"].startswith("You extract durable, personal facts")
    ]


def stage(report: Any, name: str) -> Any:
    return next(s for s in report.stages if s.stage == name)


def test_the_prompt_is_rendered_at_call_time_with_today_and_the_event_date(
    model_vault: Vault, fake_ollama: FakeOllama
) -> None:
    fake_ollama.queue_chat(
        {
            "facts": [
                {
                    "subject": "user",
                    "predicate": "plays_sport",
                    "object": "zorbball",
                    "evidence": "Every Sunday I play zorbball with Quentin.",
                }
            ]
        },
        {"facts": []},
    )
    before = datetime.now(UTC)
    report = model_vault.events.extract(
        "Every Sunday I play zorbball with Quentin.", learn=True, occurred_at="2023-05-08T10:30:00Z"
    )
    model_vault.events.extract("Yesterday was a long day.", occurred_at="2024-02-29T18:00:00Z")
    after = datetime.now(UTC)

    first, second = extraction_prompts(fake_ollama)
    assert "The message was written on 2023-05-08 10:30 (Monday) by user." in first
    assert "The message was written on 2024-02-29 18:00 (Thursday) by user." in second
    for prompt in (first, second):
        assert any(f"Today is {day:%Y-%m-%d (%A)}." in prompt for day in (before, after))
        assert "{today}" not in prompt and "{event_date}" not in prompt
    assert "<<<\nEvery Sunday I play zorbball with Quentin.\n>>>" in first

    fact = model_vault.facts.get(report.fact_ids[0])
    assert (fact.predicate, fact.object_text, fact.extractor) == ("plays_sport", "zorbball", "ollama:llama3.2")
    assert fact.prompt_hash is not None and fact.source_text == "Every Sunday I play zorbball with Quentin."
    chat = fake_ollama.requests_to("/api/chat")[0].body
    assert chat["format"]["required"] == ["facts"] and chat["model"] == "llama3.2"


def test_model_facts_whose_evidence_is_not_verbatim_are_rejected_and_never_stored(
    model_vault: Vault, fake_ollama: FakeOllama
) -> None:
    text = "Every Sunday I play zorbball with Quentin."
    answer = {
        "facts": [
            {"subject": "user", "predicate": "plays_sport", "object": "zorbball", "evidence": "I play zorbball"},
            {"subject": "user", "predicate": "lives_in", "object": "Atlantis", "evidence": "I live in Atlantis."},
            {"subject": "Quentin", "predicate": "is_from", "object": "Mars", "evidence": "quentin is from mars"},
        ]
    }
    fake_ollama.queue_chat(answer, answer)
    dry = model_vault.events.extract(text)
    model = stage(dry, "extract").details["model"]
    assert model["accepted"] == 1
    assert [(r["item"]["object"], r["reason"]) for r in model["rejected"]] == [
        ("Atlantis", "evidence is not a verbatim quote of the message"),
        ("Mars", "evidence is not a verbatim quote of the message"),
    ]
    assert [d["object"] for d in dry.decisions] == ["zorbball"]

    model_vault.events.ingest(EventIn(conversation_id="c", content=text))  # the worker's path
    assert model_vault.jobs.wait_idle(120)
    facts = every_fact(model_vault)
    assert [(f.predicate, f.object_text) for f in facts] == [("plays_sport", "zorbball")]
    assert facts[0].source_text == "I play zorbball" and text[facts[0].source_start : facts[0].source_end] == (
        "I play zorbball"
    )
    check_invariants(model_vault)


def test_output_that_is_not_the_schema_falls_back_to_the_rule_path_and_never_parks_the_job(
    model_vault: Vault, fake_ollama: FakeOllama
) -> None:
    fake_ollama.on_chat(lambda request: {"facts": [{"subject": "user", "predicate": 7}]})
    dry = model_vault.events.extract("I live in Hanoi.")  # a dry run says so too, instead of "nothing found"
    assert [d["object"] for d in dry.decisions] == ["Hanoi"]
    assert dry.warnings and "not usable" in dry.warnings[0] and "facts[0].predicate" in dry.warnings[0]
    assert stage(dry, "extract").details["model"]["fallback"] == "rules"

    feed = ChangeLog(model_vault)
    result = model_vault.events.ingest(EventIn(conversation_id="c", content="I live in Hanoi."))
    assert model_vault.jobs.wait_idle(120)
    fact = one(every_fact(model_vault), "lives_in", "Hanoi")
    assert fact.extractor == "rules" and fact.event_id == result.event_id
    (warning,) = [c for c in feed.of("job.warning") if c.data["kind"] == "enrich"]
    assert "not usable" in warning.data["warnings"][0]
    assert model_vault.jobs.stats().parked == 0 and feed.of("job.failed") == []
    assert model_vault.conversations.event(result.event_id).status == "enriched"

    # a wrong shape of the whole answer ({"facts": [{"subject": "user"}]}, a list, a string) is the same
    for answer in ({"facts": [{"subject": "user"}]}, ["not", "an", "object"], "no json at all"):
        fake_ollama.on_chat(lambda request, answer=answer: answer)
        model_vault.events.extract("I work as a nurse.", learn=True)
    assert model_vault.jobs.wait_idle(120)
    assert model_vault.jobs.stats().parked == 0
    assert {f.object_text for f in every_fact(model_vault)} == {"Hanoi", "nurse"}
    check_invariants(model_vault)


@pytest.mark.parametrize("fault", ["missing model", "timeout", "connection refused"])
def test_an_unavailable_model_falls_back_to_the_rule_path_with_a_warning(
    tmp_path: Path, fake_ollama: FakeOllama, fault: str
) -> None:
    settings = model_settings(fake_ollama, **{"llm.timeout_s": 0.4})
    with open_vault(tmp_path / "v", settings) as vault:
        assert vault.llm_engine == "ollama:llama3.2"
        if fault == "missing model":
            fake_ollama.remove_model("llama3.2")
        elif fault == "timeout":
            fake_ollama.delay(1.5, path="/api/chat")
        else:
            fake_ollama.stop()
        feed = ChangeLog(vault)
        result = vault.events.ingest(EventIn(conversation_id="c", content="I live in Hanoi."))
        assert vault.jobs.wait_idle(120)

        fact = one(every_fact(vault), "lives_in", "Hanoi")
        assert fact.extractor == "rules" and fact.event_id == result.event_id and fact.status == "active"
        (warning,) = [c for c in feed.of("job.warning") if c.data["kind"] == "enrich"]
        assert warning.data["warnings"][0].startswith("model unavailable, used the rule path")
        assert vault.jobs.stats().parked == 0 and vault.conversations.event(result.event_id).status == "enriched"
        if fault != "connection refused":
            assert fake_ollama.requests_to("/api/chat")  # it was asked, and did not answer usefully

        dry = vault.events.extract("I work as a nurse.")
        assert [d["object"] for d in dry.decisions] == ["nurse"]
        assert dry.warnings and dry.warnings[0].startswith("model unavailable, used the rule path")
        assert stage(dry, "extract").details["model"]["fallback"] == "rules"
        if fault == "timeout":
            fake_ollama.delay(0)


def test_redaction_happens_before_anything_is_sent(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    text = f"Mail me at {EMAIL}, my card is {CARD}. I live in Hanoi."
    settings = model_settings(fake_ollama, **{"privacy.card": "redact", "embedder.provider": "ollama"})
    with open_vault(tmp_path / "v", settings) as vault:
        assert vault.embedder.model_id.startswith("ollama:")
        vault.events.ingest(EventIn(conversation_id="c", content=text))
        assert vault.jobs.wait_idle(120)
        vault.events.extract(text)  # the dry run takes the same care
        vault.events.extract(f"I moved to Lisbon. Write to {EMAIL}.", learn=True)

    sent = fake_ollama.texts_sent()
    prompts = extraction_prompts(fake_ollama)
    assert len(prompts) == 3 and fake_ollama.requests_to("/api/embed")
    for request in fake_ollama.requests:
        raw = request.raw.decode("utf-8", "replace")
        assert EMAIL not in raw and "4111" not in raw and "ann.lee" not in raw
    assert not any(EMAIL in t or "4111" in t for t in sent)
    assert all("[EMAIL]" in p for p in prompts) and "[CARD]" in prompts[0] and "[CARD]" in prompts[1]
    assert any("[EMAIL]" in t for r in fake_ollama.requests_to("/api/embed") for t in r.texts())


def test_a_blocked_event_sends_nothing_at_all(model_vault: Vault, fake_ollama: FakeOllama) -> None:
    fake_ollama.clear_requests()
    result = model_vault.events.ingest(EventIn(conversation_id="c", content=f"My card is {CARD}. I live in Hanoi."))
    assert result.status == "blocked" and model_vault.jobs.wait_idle(120)
    report = model_vault.events.extract(f"My card is {CARD}. I live in Hanoi.")
    assert report.decisions == () and stage(report, "firewall").details["blocked"] is True
    assert fake_ollama.requests_to("/api/chat") == [] and every_fact(model_vault) == []


def test_first_person_in_an_assistant_turn_is_not_a_memory_even_from_the_model(
    model_vault: Vault, fake_ollama: FakeOllama
) -> None:
    fake_ollama.queue_chat({"facts": []})
    hanoi = model_vault.events.extract("I live in Hanoi.", learn=True).fact_ids[0]
    text = "I am an assistant made by Example Labs. You mentioned you live in Rome now."
    fake_ollama.queue_chat(
        {
            "facts": [
                {
                    "subject": "I",
                    "predicate": "works_at",
                    "object": "Example Labs",
                    "evidence": "I am an assistant made by Example Labs.",
                },
                {
                    "subject": "user",
                    "predicate": "lives_in",
                    "object": "Rome",
                    "change": True,
                    "evidence": "You mentioned you live in Rome now.",
                },
            ]
        }
    )
    report = model_vault.events.extract(text, role="assistant", learn=True)
    subjects = {f.subject for f in every_fact(model_vault)}
    assert subjects == {"user"}, subjects  # nothing about the assistant itself
    rome = one(every_fact(model_vault), "lives_in", "Rome")
    assert rome.source_role == "assistant" and rome.standing == "candidate" and rome.id in report.fact_ids
    assert model_vault.facts.get(hanoi).status == "active"  # a change cue from the assistant overrules nothing
    check_invariants(model_vault)


def test_a_model_predicate_no_name_can_be_made_from_is_dropped_not_fatal(
    model_vault: Vault, fake_ollama: FakeOllama
) -> None:
    fake_ollama.queue_chat(
        {
            "facts": [
                {
                    "subject": "user",
                    "predicate": "!!!",
                    "object": "Quentin",
                    "evidence": "I play zorbball with Quentin.",
                },
                {
                    "subject": "user",
                    "predicate": "喜欢",
                    "object": "Quentin",
                    "evidence": "I play zorbball with Quentin.",
                },
                {
                    "subject": "user",
                    "predicate": "plays_sport",
                    "object": "zorbball",
                    "evidence": "I play zorbball with Quentin.",
                },
            ]
        }
    )
    report = model_vault.events.extract("I play zorbball with Quentin.", learn=True)
    rejected = stage(report, "extract").details["model"]["rejected"]
    assert [(r["item"]["predicate"], r["reason"]) for r in rejected] == [
        ("!!!", "the predicate has no letters or digits")
    ]
    unmapped = stage(report, "map").details["unmapped"]
    assert [u["raw"] for u in unmapped] == ["喜欢"] and "cannot make a predicate name" in unmapped[0]["why"]
    assert [(f.predicate, f.object_text) for f in every_fact(model_vault)] == [("plays_sport", "zorbball")]


def test_model_proposals_pass_the_same_negation_tense_and_attribution_gates(
    model_vault: Vault, fake_ollama: FakeOllama
) -> None:
    text = (
        "I'm not allergic to peanuts. My sister Marta lives in Porto. I'm going to Japan in October. "
        "If I took a job in Norway, I would earn more."
    )
    answer = {
        "facts": [
            {
                "subject": "user",
                "predicate": "has_allergy",
                "object": "peanuts",
                "evidence": "I'm not allergic to peanuts.",
            },
            {
                "subject": "user",
                "predicate": "lives_in",
                "object": "Porto",
                "evidence": "My sister Marta lives in Porto.",
            },
            {
                "subject": "user",
                "predicate": "visited",
                "object": "Japan",
                "evidence": "I'm going to Japan in October.",
            },
            {
                "subject": "user",
                "predicate": "works_at",
                "object": "Norway",
                "evidence": "If I took a job in Norway, I would earn more.",
            },
        ]
    }
    fake_ollama.queue_chat(answer)
    report = model_vault.events.extract(text, occurred_at="2025-06-10T10:00:00Z")
    gates = {g["proposition"]["object"]: g["gates"] for g in stage(report, "extract").details["model"]["gates"]}
    assert gates["peanuts"] == ["negated: the sentence says it does not hold"]
    assert gates["Porto"] == ["attributed to Marta: the sentence is about them"]
    assert gates["Japan"] == ["a plan: the sentence speaks of what is ahead"]
    assert gates["Norway"] == ["dropped: hypothetical or wished, not a fact"]
    planned = {(d["predicate"], d["object"]) for d in report.decisions}
    assert ("visited", "Japan") not in planned and ("works_at", "Norway") not in planned
    assert not any(d["predicate"] == "has_allergy" and d["decision"] == "CREATE" for d in report.decisions)


def test_each_fact_records_the_extractor_that_found_it_not_the_run(model_vault: Vault, fake_ollama: FakeOllama) -> None:
    text = "I live in Hanoi. Every Sunday I play zorbball with Quentin."
    fake_ollama.queue_chat(
        {
            "facts": [
                {
                    "subject": "user",
                    "predicate": "plays_sport",
                    "object": "zorbball",
                    "evidence": "Every Sunday I play zorbball with Quentin.",
                }
            ]
        }
    )
    model_vault.events.ingest(EventIn(conversation_id="c", content=text))
    assert model_vault.jobs.wait_idle(120)
    facts = every_fact(model_vault)
    by_value = {f.object_text: f for f in facts}
    assert by_value["Hanoi"].extractor == "rules" and by_value["Hanoi"].prompt_hash is None
    assert by_value["zorbball"].extractor == "ollama:llama3.2" and by_value["zorbball"].prompt_hash is not None
