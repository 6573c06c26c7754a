"""Recall: routing, channels, fusion, injection rules, budgets, time, scoping (DESIGN §5)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from engine import Vault
from engine.errors import ValidationError
from engine.events import EventIn
from engine.recall.analyze import each_subject
from engine.recall.types import RecallRequest

REF = datetime(2024, 6, 10, 12, 0, tzinfo=UTC)


def ingest(
    vault: Vault, conversation: str, *turns: tuple[str, str], author: str | None = None, user_id: str = "default"
) -> list[int]:
    results = vault.events.ingest(
        [
            EventIn(conversation_id=conversation, content=text, occurred_at=when, author=author, user_id=user_id)
            for when, text in turns
        ]
    )
    assert vault.jobs.wait_idle(120)
    return [r.event_id for r in results]


def recall(vault: Vault, query: str, conversation: str = "asking", **kw: object) -> object:
    return vault.recall(RecallRequest(conversation_id=conversation, query=query, reference_time=REF, **kw))


@pytest.fixture
def seeded(vault: Vault) -> Vault:
    ingest(
        vault,
        "c1",
        ("2024-05-01T09:00:00Z", "I work as a nurse at the city hospital."),
        ("2024-05-01T09:01:00Z", "My favorite food is pho."),
        ("2024-05-02T10:00:00Z", "I adopted a dog named Biscuit last week."),
        ("2024-06-08T18:00:00Z", "I went to a pottery workshop in Hanoi today."),
        ("2024-06-08T18:02:00Z", "I am allergic to peanuts."),
    )
    return vault


def test_result_has_the_documented_shape(seeded: Vault) -> None:
    r = recall(seeded, "what is my job?")
    assert r.llm_context.text and r.llm_context.tokens > 0
    assert set(r.routing.channels) >= {"predicate", "vector", "keyword", "temporal", "documents", "neighbours"}
    for report in r.routing.channels.values():
        assert report.ms >= 0 and report.hits >= 0
    assert r.routing.strategy == "LOCAL" and r.routing.engine == "rules"
    assert {"embed", "analyse", "queued", "channels", "fuse", "assemble", "total"} <= set(r.timings_ms)
    stages = sum(r.timings_ms[k] for k in ("embed", "analyse", "queued", "channels", "fuse", "assemble"))
    assert r.timings_ms["total"] >= stages - 0.01


@pytest.mark.parametrize(
    ("query", "mode"),
    [
        ("What do you know about me?", "broad"),
        ("Tell me about my life so far", "broad"),
        ("Where do I work?", "direct"),
        ("What is my dog called?", "direct"),
        ("What should I cook for dinner tonight?", "indirect"),
        ("Any ideas for a weekend plan with my dog?", "indirect"),
    ],
)
def test_routing_mode(seeded: Vault, query: str, mode: str) -> None:
    assert recall(seeded, query).routing.mode == mode


def test_direct_question_finds_the_slot_truth_first(seeded: Vault) -> None:
    r = recall(seeded, "What do I work as?")
    assert "works_as" in r.routing.predicates
    assert r.answer_facts and "nurse" in r.answer_facts[0].content
    assert r.answer_facts[0].meta["predicate"] == "works_as"
    assert r.routing.channels["predicate"].hits >= 1
    # the fact cites its evidence: the verbatim turn
    evidence = r.answer_facts[0].evidence[0]
    assert "I work as a nurse" in evidence.text and evidence.source_kind == "event"


def test_keyword_channel_finds_rare_words(seeded: Vault) -> None:
    r = recall(seeded, "Biscuit")
    assert r.routing.channels["keyword"].hits >= 1
    assert any("Biscuit" in b.content or any("Biscuit" in e.text for e in b.evidence) for b in r.blocks[:3])


def test_temporal_range_resolved_against_reference_time(seeded: Vault) -> None:
    r = recall(seeded, "What did I do last weekend?")
    window = r.routing.temporal_range
    assert window is not None
    assert window.start == datetime(2024, 6, 8, tzinfo=UTC) and window.end == datetime(2024, 6, 10, tzinfo=UTC)
    assert r.routing.channels["temporal"].hits >= 1
    assert "pottery" in r.blocks[0].content or "pottery" in r.blocks[0].evidence[0].text


@pytest.fixture
def diary(vault: Vault) -> Vault:
    """One dated turn in each range the queries below name (REF is Monday 2024-06-10)."""
    ingest(
        vault,
        "diary",
        ("2024-03-14T18:00:00Z", "I ran the spring half marathon along the river."),
        ("2024-05-29T18:00:00Z", "I repainted the garden shed a dark green."),
        ("2024-06-05T18:00:00Z", "I started a course on Khmer cooking."),
        ("2024-06-09T18:00:00Z", "I fixed the squeaky bicycle brake."),
    )
    return vault


@pytest.mark.parametrize(
    ("query", "start", "end", "expected"),
    [
        ("What did I do yesterday?", datetime(2024, 6, 9), datetime(2024, 6, 10), "bicycle"),
        ("What did I do last week?", datetime(2024, 6, 3), datetime(2024, 6, 10), "Khmer"),
        ("What did I do two weeks ago?", datetime(2024, 5, 27), datetime(2024, 6, 3), "shed"),
        ("What did I do 2 weeks ago?", datetime(2024, 5, 27), datetime(2024, 6, 3), "shed"),
        ("What did I do in March?", datetime(2024, 3, 1), datetime(2024, 4, 1), "marathon"),
        ("What did I do last month?", datetime(2024, 5, 1), datetime(2024, 6, 1), "shed"),
    ],
)
def test_temporal_ranges_route_recall(diary: Vault, query: str, start: datetime, end: datetime, expected: str) -> None:
    r = recall(diary, query)
    window = r.routing.temporal_range
    assert window is not None
    assert (window.start, window.end) == (start.replace(tzinfo=UTC), end.replace(tzinfo=UTC))
    assert r.routing.channels["temporal"].ran and r.routing.channels["temporal"].hits >= 1
    top = r.blocks[0]
    assert expected in top.content or expected in top.evidence[0].text
    assert top.at is not None and window.start <= top.at < window.end


def test_a_subject_learnt_after_a_recall_is_named_once_the_cache_is_rechecked(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.recall import service
    from engine.subjects import ensure_subject

    monkeypatch.setattr(service, "SUBJECTS_RECHECK_S", 0.2)
    assert "quintessa" not in recall(vault, "What does Quintessa like?").routing.subjects
    vault.store.write(lambda tx: ensure_subject(tx, "default", "Quintessa", "person"))
    time.sleep(0.25)
    assert "quintessa" in recall(vault, "What does Quintessa like?").routing.subjects


def test_a_window_with_nothing_in_it_finds_nothing_by_time(diary: Vault) -> None:
    r = recall(diary, "What did I do in January?")
    assert r.routing.temporal_range is not None and r.routing.channels["temporal"].hits == 0


def test_subjects_named_in_the_query(vault: Vault) -> None:
    ingest(vault, "group", ("2024-05-01T10:00:00Z", "I adopted a cat named Miso."), author="Caroline")
    ingest(vault, "group", ("2024-05-01T10:01:00Z", "I adopted a cat named Pepper."), author="Melanie")
    r = recall(vault, "What is the name of Caroline's cat?")
    assert "caroline" in r.routing.subjects
    top = r.blocks[0]
    assert "Miso" in top.content or "Miso" in top.evidence[0].text


def test_a_question_about_what_two_people_share_is_asked_of_each(vault: Vault) -> None:
    ingest(vault, "group", ("2024-05-01T10:00:00Z", "I watched Inception last night, what a film."), author="Joanna")
    ingest(vault, "group", ("2024-05-02T10:00:00Z", "Saw The Matrix again yesterday!"), author="Nate")
    ingest(vault, "group", ("2024-05-03T10:00:00Z", "I adopted a puppy called Max."), author="Nate")

    r = recall(vault, "What movies have both Joanna and Nate seen?")
    assert r.routing.used_queries == (
        "What movies have both Joanna and Nate seen?",
        "What movies have Joanna seen?",
        "What movies have Nate seen?",
    )
    top = " ".join(b.content for b in r.blocks[:4])
    assert "Inception" in top and "Matrix" in top

    # one person, or two without asking what they share: the question as it is
    assert recall(vault, "What movies has Nate seen?").routing.used_queries == ("What movies has Nate seen?",)
    assert recall(vault, "When did Joanna and Nate meet?").routing.used_queries == ("When did Joanna and Nate meet?",)


def test_the_answer_to_a_question_in_the_chat_ranks_with_the_question(vault: Vault) -> None:
    """Asked "Do you take your kid to the park often?", John's reply shares no word with a later question about it:
    it ranks at least as high as the question it answers."""
    ingest(
        vault,
        "group",
        ("2024-05-01T10:00:00Z", "Parenting can be tough but rewarding. Do you take your kid to the park often?"),
        author="Maria",
    )
    ingest(
        vault,
        "group",
        ("2024-05-01T10:01:00Z", "Yeah, we go a few times a week. It's great for family bonding and running around."),
        ("2024-05-02T10:00:00Z", "The kids loved the aquarium, especially the sharks."),
        ("2024-05-03T10:00:00Z", "I take the early train to work most days."),
        ("2024-05-04T10:00:00Z", "We had a picnic at the park near the river last summer."),
        ("2024-05-05T10:00:00Z", "My kids are learning to swim this spring."),
        ("2024-05-06T10:00:00Z", "How often should I water a cactus?"),
        author="John",
    )
    ingest(
        vault,
        "group",
        ("2024-05-06T10:01:00Z", "Hardly ever, once a month is plenty for a cactus."),
        ("2024-05-07T10:00:00Z", "The park ranger told us about the owls."),
        ("2024-05-08T10:00:00Z", "Kids grow up so fast, take lots of photos!"),
        author="Maria",
    )
    # a busy chat: many more of John's turns about his kids, none saying how often they go to the park
    topics = ("guitar", "tomatoes", "chess", "a podcast", "the weather", "soup", "a novel", "taxes", "a bike", "jazz")
    ingest(
        vault,
        "group",
        *[
            (f"2024-05-{10 + n:02d}T10:00:00Z", f"The kids and I talked about {topic} today.")
            for n, topic in enumerate(topics)
        ],
        author="John",
    )
    r = recall(vault, "How often does John take his kids to the park?")
    shown = [b.content for b in r.blocks]
    reply = next(i for i, c in enumerate(shown) if "a few times a week" in c)
    asked = next(i for i, c in enumerate(shown) if "park often" in c)
    assert reply <= asked + 1, shown
    assert "replies" in r.blocks[reply].channels  # lifted as the answer, not found as a neighbour only
    # a reply is lifted only from a question someone else asked: Maria's answer about the cactus is John's question's
    cactus = next(b for b in r.blocks if "cactus" in b.content and b.content.startswith("Maria"))
    assert "replies" in cactus.channels


def test_the_answer_to_a_follow_up_question_ranks_with_the_turn_it_continues(vault: Vault) -> None:
    """Maria's "a picnic with friends from church" answers the words of a question about the picnic; her answer to
    John's follow-up, "charades and a scavenger hunt", holds what was asked and shares none of its words."""
    ingest(
        vault, "g", ("2024-06-01T10:00:00Z", "Last weekend I had a picnic with friends from church."), author="Maria"
    )
    ingest(vault, "g", ("2024-06-01T10:01:00Z", "Sounds lovely! What did you all get up to?"), author="John")
    ingest(vault, "g", ("2024-06-01T10:02:00Z", "Charades and a scavenger hunt, we laughed a lot."), author="Maria")
    fillers = ("pottery", "a new recipe", "my garden", "the shelter", "a yoga class", "my car", "a long walk")
    ingest(
        vault,
        "g",
        *[(f"2024-06-{3 + n:02d}T10:00:00Z", f"Church friends and I talked about {t}.") for n, t in enumerate(fillers)],
        author="Maria",
    )
    r = recall(vault, "What did Maria do at the picnic with her church friends?")
    shown = [b.content for b in r.blocks]
    answer = next(i for i, c in enumerate(shown) if "scavenger hunt" in c)
    assert answer <= 2, shown
    assert "replies" in r.blocks[answer].channels


def test_each_subject_splits_only_joint_questions() -> None:
    assert each_subject("Which city have both Jean and John visited?", ("Jean", "John")) == [
        "Which city have Jean visited?",
        "Which city have John visited?",
    ]
    assert each_subject("What do Jon, Gina and Ann all share?", ("Jon", "Gina", "Ann")) == [
        "What do Jon all share?",
        "What do Gina all share?",
        "What do Ann all share?",
    ]
    assert each_subject("What did Anna and Tom do together?", ("Anna", "Tom")) == []
    assert each_subject("What do I share with Tom?", ("user", "Tom")) == []


def test_injection_rules_candidate_quarantine_challenged(vault: Vault) -> None:
    ingest(vault, "c", ("2024-05-01T10:00:00Z", "I live in Hanoi."), ("2024-05-03T10:00:00Z", "I live in Paris."))
    # a conflict: both contested → challenged; recall asks instead of asserting
    assert vault.conflicts()
    r = recall(vault, "Where do I live?")
    conflict_blocks = [b for b in r.blocks if b.kind == "conflict"]
    assert conflict_blocks and "Ask the user" in conflict_blocks[0].content
    assert "Ask the user:" in r.llm_context.text
    assert not any(
        b.kind == "fact" and b.meta.get("standing") == "challenged" and b in r.answer_facts for b in r.blocks
    )
    # a candidate (assistant-inferred) fact is searchable but never injected
    ingest(vault, "c2", ("2024-05-04T10:00:00Z", "Your sister Linh is a teacher."))
    vault.events.ingest(
        EventIn(
            conversation_id="c2", role="assistant", content="Linh works as a pilot.", occurred_at="2024-05-05T10:00:00Z"
        )
    )
    assert vault.jobs.wait_idle(120)
    candidates = vault.facts(standing="candidate")
    assert candidates, "the assistant's claim is kept as a candidate"
    for fact in candidates:
        r = recall(vault, fact.object_text)
        assert fact.id in {b.id for b in r.blocks}, "searchable"
        assert f"#{fact.id} " not in r.llm_context.text, "never injected"
        assert fact.id not in {b.id for b in r.answer_facts}
    # quarantined facts never appear anywhere
    fact = vault.facts.add("user", "likes", "durian")
    vault.store.write(
        lambda tx: tx.execute("UPDATE facts SET standing = 'quarantine', confidence = 0.2 WHERE id = ?", (fact.id,))
    )
    r = recall(vault, "durian")
    assert all(b.id != fact.id for b in r.blocks) and "durian" not in r.llm_context.text.casefold()


def test_hot_facts_are_always_in_background(seeded: Vault) -> None:
    fact = seeded.facts(predicate="works_as")[0]
    seeded.facts.set_tier(fact.id, "hot")
    r = recall(seeded, "completely unrelated question about the weather")
    assert any(b.id == fact.id for b in r.background_context)
    assert f"#{fact.id} " in r.llm_context.text and "Background:" in r.llm_context.text


def test_budget_is_respected_and_text_is_deterministic(seeded: Vault) -> None:
    for i in range(40):
        seeded.facts.add("user", "likes", f"hobby number {i} with a fairly long description attached to it")
    big = recall(seeded, "what do I like?", token_budget=2000)
    small = recall(seeded, "what do I like?", token_budget=120)
    assert small.llm_context.tokens <= 120 < big.llm_context.tokens
    again = recall(seeded, "what do I like?", token_budget=120)
    assert again.llm_context.text == small.llm_context.text
    for line in small.llm_context.text.splitlines()[1:]:
        if line.startswith("- "):
            assert "#" in line  # every item cites its id


def test_history_and_working_memory_are_per_conversation(vault: Vault) -> None:
    ingest(vault, "chat-a", ("2024-05-01T10:00:00Z", "I play the violin."))
    ingest(vault, "chat-b", ("2024-05-02T10:00:00Z", "I speak Vietnamese."))
    vault.events.ingest(EventIn(conversation_id="chat-a", content="Just saying hi", occurred_at="2024-05-03"))
    r = recall(vault, "what instruments do I play", conversation="chat-a")
    assert [t.content for t in r.conversation_history] == ["I play the violin.", "Just saying hi"]
    assert all("Vietnamese" not in b.content for b in r.working_memory)
    # facts are user-wide: chat-b's fact is recalled from chat-a
    r2 = recall(vault, "what languages do I speak", conversation="chat-a")
    assert any("Vietnamese" in b.content for b in r2.blocks)


def test_users_never_see_each_other(vault: Vault) -> None:
    ingest(vault, "c", ("2024-05-01T10:00:00Z", "I live in Oslo."), user_id="alice")
    ingest(vault, "c", ("2024-05-01T10:00:00Z", "I live in Lima."), user_id="bob")
    r = vault.recall(RecallRequest(conversation_id="c", query="Where do I live?", user_id="alice"))
    text = " ".join([b.content for b in r.blocks] + [t.content for t in r.conversation_history])
    assert "Oslo" in text and "Lima" not in text


def test_usage_is_recorded_and_frequent_use_promotes_to_hot(seeded: Vault) -> None:
    fact = next(f for f in seeded.facts() if f.tier == "warm" and f.standing in ("working", "fact"))
    for _ in range(6):
        recall(seeded, fact.object_text)
    assert seeded.jobs.wait_idle()  # usage is gathered and written in batches after the answer: record it now
    updated = seeded.facts.get(fact.id)
    assert updated.access_count >= 5 and updated.tier == "hot"


def test_fusion_prefers_items_found_by_several_channels(seeded: Vault) -> None:
    r = recall(seeded, "pottery workshop in Hanoi")
    assert len(r.blocks[0].channels) >= 2
    scores = [b.score for b in r.blocks if b.kind != "conflict"]
    assert scores == sorted(scores, reverse=True)


def test_bad_requests_name_the_field(vault: Vault) -> None:
    with pytest.raises(ValidationError) as info:
        vault.recall(RecallRequest(conversation_id="", query="x"))
    assert info.value.field == "conversation_id"
    with pytest.raises(ValidationError) as info:
        vault.recall(RecallRequest(conversation_id="c", query="x", limit=0))
    assert info.value.field == "limit"
    with pytest.raises(ValidationError):
        vault.recall(RecallRequest(conversation_id="c", query="x", reference_time="not a time"))


def test_recent_unenriched_turns_are_in_history(vault: Vault) -> None:
    vault_events = vault.events.ingest([EventIn(conversation_id="live", content=f"turn {i}") for i in range(3)])
    r = recall(vault, "anything", conversation="live")
    assert {t.event_id for t in r.conversation_history} == {e.event_id for e in vault_events}


def test_concurrent_recalls_answer_as_a_lone_one_does(seeded: Vault) -> None:
    """Alone, a recall runs its channels side by side; with others under way, one after another on its own
    thread (engine/recall/gate.py).  Either way the answer is the same."""
    import threading

    from engine.recall.gate import default_slots

    queries = ["what is my job?", "do I have a pet?", "what happened in Hanoi?", "any allergies?"]

    def shape(r: object) -> list[tuple[str, int]]:
        return [(b.kind, b.id) for b in r.blocks]  # type: ignore[attr-defined]

    alone = {q: shape(recall(seeded, q)) for q in queries}
    seen: dict[str, list[list[tuple[str, int]]]] = {q: [] for q in queries}
    errors: list[BaseException] = []
    most_inside = 0
    gate = seeded._recall._gate  # type: ignore[attr-defined]

    def ask(q: str) -> None:
        nonlocal most_inside
        try:
            for _ in range(5):
                seen[q].append(shape(recall(seeded, q)))
                most_inside = max(most_inside, gate.inside)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(q,)) for q in queries * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for q in queries:
        assert len(seen[q]) == 10
        assert all(s == alone[q] for s in seen[q]), q
    assert most_inside <= default_slots()
