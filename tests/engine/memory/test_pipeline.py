"""The pipeline trace of ``vault.events.extract``: every stage reported, dry runs store nothing, ``learn`` stores and
returns ids, evidence is verbatim, unknown predicates become ``custom:<slug>``, the gate says why it drops."""

from __future__ import annotations

from pathlib import Path

from engine import Vault
from engine.facts import params
from engine.facts.model import tier_for
from engine.facts.pipeline import STAGES as PIPELINE_STAGES
from engine.facts.types import StageTrace
from tests.engine.memory.support import ChangeLog, counts, every_fact, one, open_vault
from tests.fakes.ollama import FakeOllama

#: DESIGN §4's stages in its order (Embed's vectors are computed before Match, but what is stored follows Decide).
STAGES = ["firewall", "classify", "context", "extract", "map", "gate", "score", "match", "decide", "embed", "tier"]
TEXT = "Hi there! I live in Hanoi. I work as a nurse. Do you like jazz?"


def stage(stages: tuple[StageTrace, ...], name: str) -> StageTrace:
    found = [s for s in stages if s.stage == name]
    assert len(found) == 1, [s.stage for s in stages]
    return found[0]


def test_a_dry_run_reports_every_stage_and_stores_nothing(vault: Vault) -> None:
    before = counts(vault, ("events", "facts", "jobs", "objects", "embeddings", "subjects", "episodes"))
    feed = ChangeLog(vault)

    report = vault.events.extract(TEXT, occurred_at="2024-05-01T09:00:00Z")

    assert [s.stage for s in report.stages] == STAGES
    assert not report.learned and report.event_id is None and report.fact_ids == ()
    labels = {seg["text"]: (seg["label"], seg["keep"]) for seg in stage(report.stages, "classify").details["segments"]}
    assert labels["Hi there!"] == ("greeting", False)
    assert labels["Do you like jazz?"] == ("question", False)
    assert labels["I live in Hanoi."] == ("statement", True)
    extracted = {(p["predicate"], p["object"]) for p in stage(report.stages, "extract").details["propositions"]}
    assert extracted == {("lives_in", "Hanoi"), ("works_as", "nurse")}  # nothing from the greeting or question
    mapping = stage(report.stages, "map").details["mapping"]
    assert {(m["predicate"], m["method"]) for m in mapping} == {("lives_in", "exact"), ("works_as", "exact")}
    assert all(d["pass"] for d in stage(report.stages, "gate").details["decisions"])
    scores = stage(report.stages, "score").details["scores"]
    assert {s["standing"] for s in scores} == {"fact"} and {s["source"] for s in scores} == {"user"}
    assert [(d["decision"], d["predicate"], d["object"]) for d in report.decisions] == [
        ("CREATE", "lives_in", "Hanoi"),
        ("CREATE", "works_as", "nurse"),
    ]
    assert stage(report.stages, "decide").details["decisions"] == list(report.decisions)

    assert counts(vault, before) == before
    assert feed.all() == []


def test_a_dry_run_plans_against_stored_facts_without_changing_them(vault: Vault) -> None:
    learned = vault.events.extract("I live in Hanoi.", learn=True)
    (hanoi_id,) = learned.fact_ids
    before = counts(vault)
    feed = ChangeLog(vault)

    move = vault.events.extract("I moved to Paris.")
    assert ("UPDATE", "lives_in", [hanoi_id], "change cue") in [
        (d["decision"], d["predicate"], d["targets"], d["reason"]) for d in move.decisions
    ]
    contradiction = vault.events.extract("I live in Rome.")
    assert [(d["decision"], d["targets"]) for d in contradiction.decisions] == [("CONFLICT", [hanoi_id])]
    again = vault.events.extract("I live in Hanoi!")
    assert [d["decision"] for d in again.decisions] == ["MERGE"]

    assert counts(vault) == before and feed.all() == []
    hanoi = vault.facts.get(hanoi_id)
    assert hanoi.status == "active" and hanoi.corroboration == 0


def test_learn_stores_the_event_and_its_facts_and_returns_their_ids(vault: Vault) -> None:
    report = vault.events.extract(TEXT, learn=True, conversation_id="c-learn", occurred_at="2024-05-01T09:00:00Z")

    assert report.learned and report.event_id is not None
    assert [s.stage for s in report.stages] == STAGES
    event = vault.conversations.event(report.event_id)
    assert event.content == TEXT and event.status == "enriched" and event.source == "extract"
    assert event.conversation_id == "c-learn"
    assert len(report.fact_ids) == 2
    assert [d["fact_id"] for d in report.decisions] == list(report.fact_ids)
    stored = vault.facts.get_many(list(report.fact_ids))
    assert {(f.predicate, f.object_text) for f in stored} == {("lives_in", "Hanoi"), ("works_as", "nurse")}
    assert all(f.event_id == report.event_id and f.conversation_id == "c-learn" for f in stored)
    # the enrichment job was done here: no worker applies the same analysis again
    assert vault.jobs.wait_idle(120)
    assert vault.store.scalar("SELECT COUNT(*) FROM jobs WHERE kind = 'enrich'") == 0
    assert [f.id for f in vault.facts(event_id=report.event_id)] == sorted(report.fact_ids, reverse=True)
    assert all(f.corroboration == 0 for f in vault.facts.get_many(list(report.fact_ids)))


def test_a_learned_report_shows_what_the_firewall_did_at_ingest(vault: Vault) -> None:
    redacted = vault.events.extract("Mail me at ann.lee@example.org. I live in Hanoi.", learn=True)
    firewall = stage(redacted.stages, "firewall")
    assert firewall.details["findings"] == ["email:redact"] and not firewall.details["blocked"]
    assert "[EMAIL]" in firewall.details["text"] and "ann.lee" not in firewall.details["text"]
    assert len(redacted.fact_ids) == 1

    # national ids and IBANs are redacted by default, not blocked: the rest of the turn is still learned
    ids = vault.events.extract(
        "My SSN is 078-05-1120 and my IBAN is GB82 WEST 1234 5698 7654 32. I work as a nurse.", learn=True
    )
    firewall = stage(ids.stages, "firewall")
    assert firewall.details["findings"] == ["iban:redact", "national_id:redact"] and not firewall.details["blocked"]
    assert "078-05-1120" not in firewall.details["text"] and "GB82" not in firewall.details["text"]
    assert [f.object_text for f in vault.facts.get_many(list(ids.fact_ids))] == ["nurse"]

    blocked = vault.events.extract("My card is 4111 1111 1111 1111 and I live in Paris.", learn=True)
    assert [s.stage for s in blocked.stages] == ["firewall"]
    assert stage(blocked.stages, "firewall").details["blocked"] is True
    assert blocked.fact_ids == () and any("blocked" in w for w in blocked.warnings)
    assert sorted(f.object_text for f in every_fact(vault)) == ["Hanoi", "nurse"]


def test_learning_a_duplicate_event_learns_nothing_new(vault: Vault) -> None:
    first = vault.events.extract("I live in Hanoi.", learn=True, occurred_at="2024-05-01T09:00:00Z")
    again = vault.events.extract("I live in Hanoi.", learn=True, occurred_at="2024-05-01T09:00:00Z")
    assert again.event_id == first.event_id and again.fact_ids == ()
    assert any("nothing to learn" in w for w in again.warnings)
    assert len(every_fact(vault)) == 1


def test_learn_is_never_applied_twice_by_the_background_worker(vault: Vault) -> None:
    # Long texts keep the analysis busy long enough for a worker to pick up the same event if it could.
    for i in range(12):
        text = " ".join(f"I like flavour{i}x{j} ice cream." for j in range(30))
        report = vault.events.extract(text, learn=True)
        assert [d["decision"] for d in report.decisions] == ["CREATE"] * 30, i
        assert len(report.fact_ids) == 30
    assert vault.jobs.wait_idle(120)
    facts = every_fact(vault)
    assert len(facts) == 12 * 30
    assert all(f.corroboration == 0 and f.status == "active" for f in facts)


def test_every_fact_quotes_its_event_verbatim_at_its_offsets(vault: Vault) -> None:
    texts = [
        "  Mail me at ann.lee@example.org any time.\nI live in Hanoi, and honestly I love it here. "
        "My sister Anna lives in Da Nang.",
        "Tôi thích phở. I'm allergic to peanuts, btw.",
        "I moved to Lisbon last year.\n\nI work as a nurse.",
    ]
    for text in texts:
        vault.events.extract(text, learn=True, conversation_id="quotes")
    facts = every_fact(vault)
    assert len(facts) >= 7
    for fact in facts:
        content = vault.conversations.event(fact.event_id).content
        assert content[fact.source_start : fact.source_end] == fact.source_text
        assert fact.source_text.strip() and fact.object_text.casefold() in fact.source_text.casefold()
    hanoi = one(facts, "lives_in", "Hanoi")
    stored = vault.conversations.event(hanoi.event_id).content
    assert "[EMAIL]" in stored and "ann.lee" not in stored  # offsets index the firewalled content that is stored


def test_system_messages_produce_no_proposals(vault: Vault) -> None:
    report = vault.events.extract("I live in Hanoi.", role="system")
    assert report.decisions == () and "system" in stage(report.stages, "classify").summary
    learned = vault.events.extract("I live in Hanoi.", role="system", learn=True)
    assert learned.fact_ids == () and every_fact(vault) == []
    assert vault.conversations.event(learned.event_id).status == "skipped"


def test_unknown_predicates_become_custom_with_low_importance(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_chat(
        {
            "facts": [
                {
                    "subject": "user",
                    "predicate": "zorbulates with",
                    "object": "Quentin",
                    "evidence": "Every Sunday I zorbulate with Quentin.",
                }
            ]
        }
    )
    settings = fake_ollama.settings({"llm.provider": "ollama", "embedder.provider": "hashing"})
    with open_vault(tmp_path / "v", settings) as vault:
        report = vault.events.extract("Every Sunday I zorbulate with Quentin.", learn=True)
        mapping = stage(report.stages, "map").details["mapping"]
        assert mapping == [{"raw": "zorbulates with", "predicate": "custom:zorbulates_with", "method": "custom"}]
        (fact_id,) = report.fact_ids
        fact = vault.facts.get(fact_id)
        assert fact.predicate == "custom:zorbulates_with" and fact.object_text == "Quentin"
        assert fact.importance == params.CUSTOM_IMPORTANCE < 0.5
        assert fact.extractor == "ollama:llama3.2" and fact.tier == "warm"
        assert "custom:zorbulates_with" in {p.name for p in vault.facts.predicates()}


def test_the_gate_drops_empty_and_pronoun_objects_and_says_why(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    text = "I like it. Honestly I love them. I adore sailing."
    fake_ollama.queue_chat(
        {
            "facts": [
                {"subject": "user", "predicate": "likes", "object": "it", "evidence": "I like it."},
                {"subject": "user", "predicate": "loves", "object": "them", "evidence": "Honestly I love them."},
                {"subject": "user", "predicate": "likes", "object": "   ", "evidence": "I like it."},
                {"subject": "user", "predicate": "loves", "object": "sailing", "evidence": "I adore sailing."},
            ]
        }
    )
    settings = fake_ollama.settings({"llm.provider": "ollama", "embedder.provider": "hashing"})
    with open_vault(tmp_path / "v", settings) as vault:
        report = vault.events.extract(text, learn=True)
        gate = stage(report.stages, "gate").details["decisions"]
        dropped = {d["object"]: d["why"] for d in gate if not d["pass"]}
        assert dropped == {"it": "the object says nothing on its own", "them": "the object says nothing on its own"}
        assert [d["object"] for d in gate if d["pass"]] == ["sailing"]
        rejected = stage(report.stages, "extract").details["model"]["rejected"]
        assert [r["reason"] for r in rejected] == ["empty predicate or object"]
        assert [(f.predicate, f.object_text) for f in every_fact(vault)] == [("loves", "sailing")]


def test_the_stage_list_is_designs() -> None:
    assert list(PIPELINE_STAGES) == STAGES


def test_match_ranks_the_slot_and_tier_says_why_in_a_dry_run(vault: Vault) -> None:
    (hanoi,) = vault.events.extract("I live in Hanoi.", learn=True, occurred_at="2024-05-01T09:00:00Z").fact_ids
    jazz = vault.events.extract("I like jazz.", learn=True, occurred_at="2024-05-01T09:01:00Z").fact_ids[0]
    chess = vault.events.extract("I like chess.", learn=True, occurred_at="2024-05-01T09:02:00Z").fact_ids[0]

    move = vault.events.extract("I moved to Paris.", occurred_at="2024-06-01T09:00:00Z")
    assert [s.stage for s in move.stages] == STAGES
    matches = {m["slot"]["predicate"]: m for m in stage(move.stages, "match").details["matches"]}
    assert matches["lives_in"]["slot"] == {"subject": "user", "predicate": "lives_in", "cardinality": "single"}
    (candidate,) = matches["lives_in"]["candidates"]
    assert (candidate["fact_id"], candidate["object"], candidate["similarity"]) == (hanoi, "Hanoi", 0.0)
    update = next(d for d in move.decisions if d["predicate"] == "lives_in")
    assert (update["decision"], update["targets"]) == ("UPDATE", [hanoi])
    tiers = [t for t in stage(move.stages, "tier").details["tiers"] if t["statement"] == update["statement"]]
    lives_in = vault.pipeline.catalog.get("lives_in")
    expected_tier = tier_for(lives_in.importance, "fact", lives_in.tier_hint, "active")
    assert [(t["fact_id"], t["tier"]) for t in tiers] == [(None, expected_tier), (hanoi, "cold")]
    assert tiers[0]["reason"] and tiers[1]["reason"] == "superseded: archived"
    embed = stage(move.stages, "embed")
    assert update["statement"] in [s["statement"] for s in embed.details["stored"]]
    assert "would be stored" in embed.summary

    # a value with more detail ranks the fact it repeats first; a value of a multi-valued slot that shares no word
    # with it ("chess") cannot be the same fact and is not weighed at all
    more = vault.events.extract("I like modal jazz.", occurred_at="2024-06-01T09:00:00Z")
    (matched,) = stage(more.stages, "match").details["matches"]
    ranked = [(c["fact_id"], c["similarity"]) for c in matched["candidates"]]
    assert ranked[0] == (jazz, 0.8) and chess not in [fact_id for fact_id, _ in ranked]
    assert matched["candidates"][0]["score"] > 0
    assert [(d["decision"], d["targets"]) for d in more.decisions] == [("MERGE", [jazz])]
    assert stage(more.stages, "tier").details["tiers"] == []
    assert stage(more.stages, "embed").details["not_stored"][0]["why"] == "MERGE: no new fact"


def test_a_learned_trace_reports_the_tiers_and_vectors_that_were_stored(vault: Vault) -> None:
    (hanoi,) = vault.events.extract("I live in Hanoi.", learn=True).fact_ids
    report = vault.events.extract("I moved to Paris. Maybe I like sushi, my assistant thinks.", learn=True)
    assert [s.stage for s in report.stages] == STAGES
    created = list(report.fact_ids)
    tiers = {t["fact_id"]: (t["tier"], t["reason"]) for t in stage(report.stages, "tier").details["tiers"]}
    for fact in vault.facts.get_many([*created, hanoi]):
        assert tiers[fact.id][0] == fact.tier, fact  # what the trace says is what was stored
    assert tiers[hanoi] == ("cold", "superseded: archived")
    stored = [s["fact_id"] for s in stage(report.stages, "embed").details["stored"]]
    assert sorted(stored) == sorted(created)
    with_vectors = {int(r[0]) for r in vault.store.query("SELECT object_id FROM embeddings")}
    assert set(created) <= with_vectors
    matches = {m["slot"]["predicate"]: m for m in stage(report.stages, "match").details["matches"]}
    assert [c["fact_id"] for c in matches["lives_in"]["candidates"]] == [hanoi]
    assert stage(report.stages, "match").ms >= 0 and stage(report.stages, "tier").ms >= 0
