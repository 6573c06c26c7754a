"""Each recall channel on its own (DESIGN §5 step 2): what it finds, in which order, and what it must leave out."""

from __future__ import annotations

import pytest

from engine import Vault
from engine.events import EventIn
from engine.recall.channels import (
    fact_keyword_channel,
    keyword_channel,
    merge_rankings,
    profile_channel,
    vector_channel,
)
from engine.recall.hydrate import load_turns, neighbour_turns
from engine.recall.ranker import FOLLOW_UP_HITS, follow_ups, lift_replies, neighbours
from tests.engine.recall.support import analysis, channel_input, ingest


def _set(vault: Vault, fact_id: int, **columns: object) -> None:
    assignments = ", ".join(f"{name} = ?" for name in columns)
    vault.store.write(
        lambda tx: tx.execute(f"UPDATE facts SET {assignments} WHERE id = ?", (*columns.values(), fact_id))
    )


# -- vector -------------------------------------------------------------------------------------------------------
def test_vector_channel_ranks_by_similarity_and_skips_the_cold_archive(vault: Vault) -> None:
    warm = vault.facts.add("user", "likes", "sea kayaking in fjords")
    hot = vault.facts.add("user", "likes", "kayaking trips with friends")
    cold = vault.facts.add("user", "likes", "kayaking lessons for beginners")
    unrelated = vault.facts.add("user", "likes", "baking sourdough bread")
    vault.facts.set_tier(hot.id, "hot")
    _set(vault, cold.id, tier="cold")  # unpinned, like a fact the tiering retired
    a = analysis("kayaking")
    keys = vector_channel(vault.store, vault.vectors, channel_input(vault, a), ["fact"])
    ids = [i for _k, i in keys]
    assert warm.id in ids and hot.id in ids, "hot and warm facts are searched by similarity"
    assert cold.id not in ids, "the cold archive is not brought back by likeness"
    if unrelated.id in ids:
        assert ids.index(unrelated.id) > max(ids.index(warm.id), ids.index(hot.id))
    # the precise channels still reach the cold fact: a rare word names it
    precise = fact_keyword_channel(vault.store, channel_input(vault, analysis("beginners lessons")))
    assert ("fact", cold.id) in precise


def test_vector_channel_leaves_out_quarantine_other_users_and_other_conversations_episodes(vault: Vault) -> None:
    mine = vault.facts.add("user", "likes", "harpsichord concerts")
    hidden = vault.facts.add("user", "likes", "harpsichord tuning")
    _set(vault, hidden.id, standing="quarantine", confidence=0.2)
    bobs = vault.facts.add("user", "likes", "harpsichord recitals", user_id="bob")
    ingest(vault, "chat-a", ("2024-05-01T10:00:00Z", "We listened to a harpsichord concert in the old church hall."))
    vault.conversations.close_episodes("chat-a")
    assert vault.jobs.wait_idle(120)
    episode = vault.conversations.episodes("chat-a")[0]
    assert "harpsichord" in vault.conversations.episode(episode.id).summary
    a = analysis("harpsichord concert")
    kinds = ["fact", "episode"]
    in_a = vector_channel(vault.store, vault.vectors, channel_input(vault, a, conversation="chat-a"), kinds)
    in_b = vector_channel(vault.store, vault.vectors, channel_input(vault, a, conversation="chat-b"), kinds)
    assert ("episode", episode.id) in in_a and ("episode", episode.id) not in in_b
    for keys in (in_a, in_b):
        assert ("fact", mine.id) in keys
        assert ("fact", hidden.id) not in keys and ("fact", bobs.id) not in keys


def test_vector_channel_searches_the_rewrites_too(vault: Vault) -> None:
    target = vault.facts.add("user", "plays_instrument", "cello in a string quartet")
    for other in ("tomatoes in the garden", "old maps of Lisbon", "chess openings"):
        vault.facts.add("user", "likes", other)
    a = analysis("what keeps me busy on weekends", used_queries=("what keeps me busy on weekends", "cello quartet"))
    plain = vector_channel(vault.store, vault.vectors, channel_input(vault, a), ["fact"])
    with_rewrite = channel_input(vault, a, rewrites=["cello quartet"])
    rewritten = vector_channel(vault.store, vault.vectors, with_rewrite, ["fact"])
    assert rewritten[0] == ("fact", target.id)
    assert ("fact", target.id) not in plain[:1]


# -- keyword ------------------------------------------------------------------------------------------------------
def test_keyword_channel_searches_each_rewrite(vault: Vault) -> None:
    (brahms, *_others) = ingest(
        vault,
        "c",
        ("2024-05-01T10:00:00Z", "I am rehearsing a Brahms sonata for the spring recital."),
        ("2024-05-02T10:00:00Z", "I bought new running shoes at the mall."),
        ("2024-05-03T10:00:00Z", "The music at the party was too loud for me."),
    )
    question = analysis("what am I working on")
    assert ("event", brahms) not in keyword_channel(vault.store, channel_input(vault, question))
    rewritten = analysis(
        "what am I working on",
        used_queries=("what am I working on", "I am rehearsing a sonata"),
        rewrite_keywords=(("rehearsing", "sonata"),),
    )
    assert keyword_channel(vault.store, channel_input(vault, rewritten))[0] == ("event", brahms)


def test_a_word_that_just_arrived_is_searchable_at_once_and_counts_are_remembered(vault: Vault) -> None:
    """Document counts steer which words are searched; they are remembered, but never a word's absence."""
    from engine.recall.channels import frequencies, search_terms

    question = analysis("who is Zorblax", keywords=("Zorblax",))
    assert keyword_channel(vault.store, channel_input(vault, question)) == []  # not in the vault yet
    (turn,) = ingest(vault, "c", ("2024-05-01T10:00:00Z", "My new kitten is called Zorblax."))
    assert keyword_channel(vault.store, channel_input(vault, question))[0] == ("event", turn)
    remembered = frequencies(vault.store)._seen
    assert remembered[("events_fts_vocab", "zorblax")][1] == 1
    # a remembered count is used as it is, without reading the index again
    remembered[("events_fts_vocab", "zorblax")] = (remembered[("events_fts_vocab", "zorblax")][0], 10**6)
    assert search_terms(vault.store, "events_fts_vocab", ["Zorblax"]) == []  # "everywhere": not worth a search


def test_merge_rankings_prefers_agreement_and_keeps_the_question_first_on_ties() -> None:
    question = [("event", 1), ("event", 2), ("event", 3)]
    rewrite = [("event", 3), ("event", 4)]
    merged = merge_rankings([question, rewrite], depth=10)
    assert merged[0] == ("event", 3), "found by both texts"
    # 2 and 4 are both second in their ranking: the question's comes first
    assert merged[1:] == [("event", 1), ("event", 2), ("event", 4)]
    assert merge_rankings([question], depth=2) == question[:2]
    assert merge_rankings([[], rewrite], depth=10) == rewrite


# -- keyword_facts ------------------------------------------------------------------------------------------------
def test_fact_keyword_channel_finds_statements_by_rare_words_within_scope(vault: Vault) -> None:
    durian = vault.facts.add("user", "likes", "durian")
    mango = vault.facts.add("user", "likes", "mango sticky rice")
    quarantined = vault.facts.add("user", "dislikes", "durian candy")
    _set(vault, quarantined.id, standing="quarantine", confidence=0.2)
    alpha = vault.facts.add("Minh", "likes", "durian", project_id="alpha")
    old = vault.facts.add("user", "works_as", "durian farmer")
    vault.facts.edit(old.id, object_text="mango farmer")  # the old version is superseded

    assert len({durian.id, mango.id, quarantined.id, alpha.id, old.id}) == 5
    keys = fact_keyword_channel(vault.store, channel_input(vault, analysis("durian")))
    ids = [i for _k, i in keys]
    assert durian.id in ids and alpha.id in ids
    assert mango.id not in ids, "no shared word"
    assert quarantined.id not in ids and old.id not in ids, "quarantined and superseded facts never leave"
    beta = fact_keyword_channel(vault.store, channel_input(vault, analysis("durian"), project_id="beta"))
    assert ("fact", alpha.id) not in beta and ("fact", durian.id) in beta
    assert fact_keyword_channel(vault.store, channel_input(vault, analysis("durian"), user_id="bob")) == []


# -- profile ------------------------------------------------------------------------------------------------------
@pytest.fixture
def caroline(vault: Vault) -> dict[str, int]:
    facts = {
        "works_as": vault.facts.add("Caroline", "works_as", "nurse").id,
        "lives_in": vault.facts.add("Caroline", "lives_in", "Boston").id,
        "likes": vault.facts.add("Caroline", "likes", "watercolour painting").id,
        "plays_sport": vault.facts.add("Caroline", "plays_sport", "tennis").id,
        "candidate": vault.facts.add("Caroline", "loves", "jazz").id,
        "melanie": vault.facts.add("Melanie", "likes", "pottery").id,
    }
    _set(vault, facts["candidate"], standing="candidate", confidence=0.4)
    return facts


def _subject_id(vault: Vault, name: str) -> int:
    return int(vault.store.scalar("SELECT id FROM subjects WHERE name = ?", (name,)))


def test_profile_channel_lists_a_named_subject_for_broad_questions(vault: Vault, caroline: dict[str, int]) -> None:
    who = _subject_id(vault, "Caroline")
    a = analysis("what do you know about Caroline", mode="broad", subjects=("caroline",), subject_ids=(who,))
    ids = [i for _k, i in profile_channel(vault.store, channel_input(vault, a))]
    by_importance = [caroline[p] for p in ("works_as", "lives_in")]
    assert ids[:2] == by_importance, "most important first"
    assert {caroline["likes"], caroline["plays_sport"]} <= set(ids)
    assert caroline["candidate"] not in ids and caroline["melanie"] not in ids


def test_profile_channel_expands_an_indirect_question_to_preferences_and_habits(
    vault: Vault, caroline: dict[str, int]
) -> None:
    who = _subject_id(vault, "Caroline")
    a = analysis("what gift should I get Caroline", mode="indirect", subjects=("caroline",), subject_ids=(who,))
    ids = {i for _k, i in profile_channel(vault.store, channel_input(vault, a))}
    assert ids == {caroline["likes"], caroline["plays_sport"]}
    nobody = analysis("what should I cook tonight", mode="indirect")
    assert profile_channel(vault.store, channel_input(vault, nobody)) == []
    direct = analysis("where does Caroline live", subjects=("caroline",), subject_ids=(who,))
    assert profile_channel(vault.store, channel_input(vault, direct)) == []


# -- neighbours ---------------------------------------------------------------------------------------------------
def test_neighbours_are_the_turns_around_the_best_hits_in_hit_order(vault: Vault) -> None:
    t1, t2, t3, t4 = ingest(
        vault,
        "n",
        ("2024-05-01T10:00:00Z", "Guess where I am moving next month?"),
        ("2024-05-01T10:01:00Z", "I live in Hanoi."),
        ("2024-05-01T10:02:00Z", "Oh nice, the food there is great."),
        ("2024-05-01T10:03:00Z", "Yes, mostly for the street food."),
    )
    vault.events.ingest(
        EventIn(conversation_id="n", role="system", content="(system note)", occurred_at="2024-05-01T10:03:30Z")
    )
    (t5,) = ingest(vault, "n", ("2024-05-01T10:04:00Z", "We should cook together when I visit."))
    ingest(vault, "other", ("2024-05-01T10:02:30Z", "An unrelated chat at the same time."))

    around = neighbours(vault.store, {("event", t4): 0.9, ("event", t2): 0.5})
    assert around.turns == [
        ("event", t3),
        ("event", t5),  # the system turn in between is skipped
        ("event", t1),
    ]
    assert around.replies == []  # one speaker: nothing here answers anyone
    # a fact stands for the turn it was drawn from
    (fact,) = [f for f in vault.facts() if f.event_id == t2]
    assert neighbours(vault.store, {("fact", fact.id): 1.0}).turns == [("event", t1), ("event", t3)]
    # only the best `hits` turns get neighbours
    assert neighbours(vault.store, {("event", t4): 0.9, ("event", t2): 0.5}, hits=1).turns == [
        ("event", t3),
        ("event", t5),
    ]


def test_the_reply_to_a_question_by_someone_else_is_set_apart_with_the_questions_score(vault: Vault) -> None:
    (asked,) = ingest(
        vault, "r", ("2024-05-01T10:00:00Z", "What a lovely photo! How long have you been married?"), author="Caro"
    )
    (reply,) = ingest(vault, "r", ("2024-05-01T10:01:00Z", "Five years already, time flies!"), author="Mel")
    (aside,) = ingest(vault, "r", ("2024-05-01T10:02:00Z", "Wow. Congratulations to you both."), author="Caro")
    (again,) = ingest(vault, "r", ("2024-05-01T10:03:00Z", "Thanks! Any plans this weekend?"), author="Mel")
    (same,) = ingest(vault, "r", ("2024-05-01T10:04:00Z", "Hiking, I hope."), author="Mel")

    around = neighbours(vault.store, {("event", asked): 0.9})
    assert around.replies == [(("event", reply), 0.9)]
    assert ("event", reply) not in around.turns  # a reply is not also an ordinary neighbour
    # a turn without a question has no reply; a question followed by its own speaker's next turn has none either
    assert neighbours(vault.store, {("event", aside): 0.5}).replies == []
    assert neighbours(vault.store, {("event", again): 0.5}).replies == []
    assert neighbours(vault.store, {("event", again): 0.5}).turns == [("event", aside), ("event", same)]


def test_the_answer_to_a_follow_up_question_on_a_best_turn_takes_that_turns_score(vault: Vault) -> None:
    said = ingest(
        vault, "f", ("2024-05-01T10:00:00Z", "Last weekend I had a picnic with friends from church."), author="Mel"
    )
    ingest(vault, "f", ("2024-05-01T10:01:00Z", "Sounds fun! What games did you play?"), author="Jo")
    answer = ingest(vault, "f", ("2024-05-01T10:02:00Z", "Charades and a scavenger hunt."), author="Mel")
    other = ingest(vault, "f", ("2024-05-01T10:03:00Z", "Ha, I love charades. Anything else?"), author="Jo")
    late = ingest(vault, "f", ("2024-05-01T10:04:00Z", "Not really, we mostly ate."), author="Mel")
    ingest(vault, "f", ("2024-05-01T10:05:00Z", "Nice."), author="Jo")

    assert follow_ups(vault.store, {("event", said[0]): 0.8}) == [(("event", answer[0]), 0.8)]
    # the follow-up is asked of the first speaker: the one who answers it must be them
    assert follow_ups(vault.store, {("event", answer[0]): 0.8}) == [(("event", late[0]), 0.8)]
    assert follow_ups(vault.store, {("event", other[0]): 0.8}) == []  # no question after it, only an answer
    assert follow_ups(vault.store, {("event", late[0]): 0.8}) == []  # "Nice." asks nothing
    # only the very best turns: one ranked below FOLLOW_UP_HITS others gets nothing
    crowd = {("event", e): 1.0 for e in ingest(vault, "g", *[(f"2024-05-02T10:0{i}:00Z", "x") for i in range(3)])}
    assert FOLLOW_UP_HITS == 3
    assert follow_ups(vault.store, {**crowd, ("event", said[0]): 0.5}) == []


def test_an_assistants_answer_to_a_users_question_is_a_neighbour_not_a_lifted_reply(vault: Vault) -> None:
    (asked,) = ingest(vault, "a", ("2024-05-01T10:00:00Z", "Can you suggest a gift for my sister? She loves pottery."))
    (answer,) = ingest(
        vault, "a", ("2024-05-01T10:00:30Z", "Here are ten ideas: a glaze set, a class voucher..."), role="assistant"
    )
    (back,) = ingest(vault, "a", ("2024-05-01T10:01:00Z", "Which of these would you pick?"), role="assistant")
    (mine,) = ingest(vault, "a", ("2024-05-01T10:01:30Z", "The class voucher, she has every glaze already."))

    around = neighbours(vault.store, {("event", asked): 0.9})
    assert around.replies == []
    assert ("event", answer) in around.turns
    # the assistant asking and the user answering: the user's reply is lifted
    assert neighbours(vault.store, {("event", back): 0.7}).replies == [(("event", mine), 0.7)]


def test_neighbour_turns_of_several_turns_at_once(vault: Vault) -> None:
    t1, t2, t3 = ingest(
        vault,
        "m",
        ("2024-05-01T10:00:00Z", "Guess where I am moving next month?"),
        ("2024-05-01T10:01:00Z", "Hanoi?"),
        ("2024-05-01T10:02:00Z", "Yes, for the street food."),
    )
    (other,) = ingest(vault, "elsewhere", ("2024-05-01T10:01:30Z", "An unrelated chat at the same time."))
    turns = load_turns(vault.store, [t1, t2, t3, other])
    known = {t2: turns[t2]}  # turns already loaded are reused, the rest are read
    around = neighbour_turns(vault.store, [turns[t2], turns[t1], turns[other]], known)
    assert [t.id for t in around[t2]] == [t1, t3], "before, then after"
    assert [t.id for t in around[t1]] == [t2], "the first turn has nothing before it"
    assert around[other] == [], "alone in its conversation"
    assert around[t1][0] is known[t2]


def test_a_reply_is_lifted_to_its_questions_score_never_lowered() -> None:
    fused = {("event", 1): 0.9, ("event", 2): 0.1, ("event", 3): 0.95}
    channels: dict[tuple[str, int], set[str]] = {("event", 2): {"neighbours"}}
    lift_replies(fused, channels, [(("event", 2), 0.9), (("event", 3), 0.5), (("event", 4), 0.4)])
    assert fused == {("event", 1): 0.9, ("event", 2): 0.9, ("event", 3): 0.95, ("event", 4): 0.4}
    assert channels == {("event", 2): {"neighbours", "replies"}, ("event", 4): {"replies"}}
