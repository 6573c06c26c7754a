"""The assembled context (DESIGN §5 step 4): the episode around a hit, conversation scoping of episodes, every line
of ``llm_context.text`` citing an id and a date, the token budget holding everything (the document status marker
too), the DOCUMENT strategy returning the whole outline of a long document, and what the text carries (issue 24):
ended turns as earlier states, no other person's hot facts, no document passage below the floor, a fact's own turn
as its evidence, the slot over a word match."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.plugins import build_plugin_manager
from engine import Settings, Vault
from engine.recall.assemble import DEGRADED_MARKER, tokens
from engine.recall.types import RecallRequest, RecallResult
from tests.engine.recall.support import ingest

REF = datetime(2024, 6, 10, 12, 0, tzinfo=UTC)
#: How every item line of the text begins: ``[#id date]``, ``[episode #id date]``, ``[conflict #id date]``,
#: ``[understanding #id date]``, or
#: for document items ``[#id where] (date)``.
CITATION = re.compile(
    r"^- \[(?:(?:episode|conflict|understanding) )?#(?P<id>\d+) "
    r"(?:(?P<date>\d{4}-\d{2}-\d{2})\]|[^\]]+\] \((?P<doc_date>\d{4}-\d{2}-\d{2})\))"
)


def recall(vault: Vault, query: str, conversation: str = "asking", **kw: Any) -> RecallResult:
    return vault.recall(RecallRequest(conversation_id=conversation, query=query, reference_time=REF, **kw))


def upload(vault: Vault, name: str, text: str) -> int:
    document_id = vault.documents.upload(name=name, text=text).document_id
    assert document_id is not None
    return document_id


def citations(text: str) -> dict[int, str]:
    """Item id → cited date for every item line; fails on an item line without both."""
    found: dict[int, str] = {}
    for line in text.splitlines():
        if not line.startswith("- "):
            continue
        match = CITATION.match(line)
        assert match, f"item line without an id and a date: {line!r}"
        found[int(match["id"])] = match["date"] or match["doc_date"]
    return found


# -- episodes -----------------------------------------------------------------------------------------------------
#: One episode: rich sentences the extractive summary keeps, and a plain one (the teapot) it leaves out — so the
#: summary holds "Kyoto" while the teapot turn does not, and the turn outranks the summary for the teapot.
TRIP = (
    "In April 2023 we rented a wooden house in Kyoto near the Kamo River for three weeks.",
    "Our neighbours Haruto and Emi Tanaka invited us to their Hanami picnic at Maruyama Park.",
    "Haruto showed us his 1970s Nikon F2 camera and the Fujifilm slides of Arashiyama.",
    "i found a blue teapot at the market.",
    "Emi taught us Kaiseki dishes: Dashi broth, Tamagoyaki rolls and Matcha Warabimochi.",
    "We took the Shinkansen to Hiroshima on May 2 and visited Miyajima Island with Emi.",
    "Back home in Lyon, Marie framed the Arashiyama photos from Haruto for the Hallway.",
)


@pytest.fixture
def trip(vault: Vault) -> tuple[Vault, int, int]:
    """The trip told in conversation ``trip``, its episode closed and summarised: (vault, teapot turn, episode)."""
    ids = ingest(vault, "trip", *((f"2024-05-01T10:{i:02d}:00Z", text) for i, text in enumerate(TRIP)))
    vault.conversations.close_episodes("trip")
    assert vault.jobs.wait_idle(120)
    (episode,) = vault.conversations.episodes("trip")
    summary = vault.conversations.episode(episode.id).summary
    assert "Kyoto" in summary and "teapot" not in summary, summary
    return vault, ids[3], episode.id


def test_the_episode_around_a_hit_is_added_when_it_adds_evidence(trip: tuple[Vault, int, int]) -> None:
    vault, teapot, episode_id = trip
    result = recall(vault, "Where did I find the blue teapot in Kyoto?", conversation="trip", limit=1)
    hit = result.blocks[0]
    assert hit.meta.get("turn_id", hit.id) == teapot
    episodes = [b for b in result.blocks if b.kind == "episode"]
    assert [b.id for b in episodes] == [episode_id]
    around = episodes[0]
    assert around.meta["around"] == hit.id and around.meta["conversation_id"] == "trip"
    assert around.content == vault.conversations.episode(episode_id).summary
    assert result.blocks.index(around) > result.blocks.index(hit), "context follows the ranked blocks"
    assert around.score < hit.score
    assert f"[episode #{episode_id} " in result.llm_context.text


def test_an_episode_that_repeats_the_hit_is_not_added(trip: tuple[Vault, int, int]) -> None:
    vault, teapot, _episode_id = trip
    # every word of this question the summary holds, the hit shows already ("teapot" and "blue" are not in it)
    result = recall(vault, "Where did I find the blue teapot?", conversation="trip", limit=1)
    assert result.blocks[0].meta.get("turn_id", result.blocks[0].id) == teapot
    assert not [b for b in result.blocks if b.kind == "episode"]


def test_an_episode_of_one_conversation_never_appears_in_another(trip: tuple[Vault, int, int]) -> None:
    vault, teapot, episode_id = trip
    for query in ("Where did I find the blue teapot in Kyoto?", "Hanami picnic Maruyama Park Kyoto"):
        home = recall(vault, query, conversation="trip")
        assert episode_id in {b.id for b in home.blocks if b.kind == "episode"}
        away = recall(vault, query, conversation="elsewhere")
        # the turns are the user's in every conversation; the episode stays in its own
        assert teapot in {b.meta.get("turn_id", b.id) for b in away.blocks} or query.startswith("Hanami")
        assert not [b for b in away.blocks if b.kind == "episode"]
        assert "[episode #" not in away.llm_context.text


# -- dates on every line ------------------------------------------------------------------------------------------
@pytest.fixture
def docs_vault(tmp_path: Path, offline_settings: Settings) -> Iterator[Vault]:
    """A vault with the built-in parsers and its workers running."""
    vault = Vault.open(tmp_path / "v", settings=offline_settings, plugins=build_plugin_manager(load_entry_points=False))
    try:
        yield vault
    finally:
        vault.close()


@pytest.fixture
def pending_vault(tmp_path: Path, offline_settings: Settings) -> Iterator[Vault]:
    """A vault with the built-in parsers and no workers: documents stay undistilled."""
    vault = Vault.open(
        tmp_path / "v",
        settings=offline_settings,
        plugins=build_plugin_manager(load_entry_points=False),
        start_workers=False,
    )
    try:
        yield vault
    finally:
        vault.close()


HANDBOOK = """# Orchard handbook

The orchard grows quince, medlar and espalier pears along the south wall.

## Pruning

Prune the espalier pears in late winter, before the sap rises, and tie new shoots to the wires.

## Harvest

Medlars are picked in November and left to blet on straw until soft.
"""


def test_every_line_cites_an_id_and_a_date_documents_and_conflicts_included(docs_vault: Vault) -> None:
    vault = docs_vault
    ingest(vault, "c", ("2024-05-01T10:00:00Z", "I live in Hanoi."), ("2024-05-03T10:00:00Z", "I live in Paris."))
    (conflict,) = vault.conflicts()
    asked = recall(vault, "Where do I live?")
    cited = citations(asked.llm_context.text)
    assert cited[conflict.id] == f"{conflict.created_at:%Y-%m-%d}", "the conflict is dated by when it was raised"

    doc = upload(vault, "orchard.md", HANDBOOK)
    assert vault.jobs.wait_idle(120)
    updated = vault.documents.get(doc).info.updated_at
    for result in (
        recall(vault, "espalier pears medlar"),  # LOCAL spans
        recall(vault, "pears", document_id=doc),  # DOCUMENT: distillations and spans
    ):
        shown = [b for b in result.documents if f"#{b.id} " in result.llm_context.text]
        assert shown, "some document lines are in the text"
        cited = citations(result.llm_context.text)
        for block in shown:
            assert block.at is not None and cited[block.id] == f"{updated:%Y-%m-%d}", block.kind
    assert {b.kind for b in result.documents} >= {"document", "section", "span"}


def test_the_degraded_marker_counts_inside_the_budget(pending_vault: Vault) -> None:
    vault = pending_vault
    long_text = "# Notes\n\n" + "\n\n".join(
        f"Paragraph {i} about the quince harvest, the medlar trees and the espalier pears on the south wall."
        for i in range(30)
    )
    doc = upload(vault, "notes.md", long_text)
    # every budget across a few span lines' worth: whichever line is the last to fit, the marker is paid for
    for budget in range(100, 700, 7):
        result = recall(vault, "quince medlar pears", document_id=doc, token_budget=budget)
        assert result.routing.degraded and DEGRADED_MARKER in result.llm_context.text
        assert result.llm_context.tokens == tokens(result.llm_context.text) <= budget, budget
    assert "Documents:" in result.llm_context.text, "the largest budget holds passages"


# -- DOCUMENT: the whole outline ----------------------------------------------------------------------------------
LONG_DOCUMENT = "# Field manual\n\nA manual of twenty-five short chapters about a river barge.\n\n" + "\n\n".join(
    f"## Chapter {n}: part {n} of the barge\n\nChapter {n} explains how part {n} of the river barge is kept: "
    f"oil it every {n} days, check its bolts, and log the work in the ledger."
    for n in range(1, 26)
)


def test_document_strategy_returns_every_section_distillation_then_spans(docs_vault: Vault) -> None:
    vault = docs_vault
    doc = upload(vault, "manual.md", LONG_DOCUMENT)
    assert vault.jobs.wait_idle(120)
    tree = vault.documents.get(doc)
    sections = [s for s in tree.sections if s.distillation]
    assert len(sections) >= 25
    result = recall(vault, "how often is the barge oiled", document_id=doc, limit=5, token_budget=8000)
    assert result.routing.strategy == "DOCUMENT" and not result.routing.degraded
    kinds = [b.kind for b in result.documents]
    assert kinds[0] == "document"
    assert [b.id for b in result.documents if b.kind == "section"] == [s.id for s in sections], "all, in order"
    assert "span" in kinds and kinds.index("span") > max(i for i, k in enumerate(kinds) if k == "section")
    text = result.llm_context.text
    assert all(f"#{s.id} " in text for s in sections) and "left out" not in text


def test_a_small_budget_trims_the_outline_and_says_so(docs_vault: Vault) -> None:
    vault = docs_vault
    doc = upload(vault, "manual.md", LONG_DOCUMENT)
    assert vault.jobs.wait_idle(120)
    sections = [s for s in vault.documents.get(doc).sections if s.distillation]
    result = recall(vault, "", document_id=doc, limit=5, token_budget=400)  # no question: the outline is asked for
    text = result.llm_context.text
    assert result.llm_context.tokens <= 400
    shown = [s.id for s in sections if f"#{s.id} " in text]
    assert shown and len(shown) < len(sections)
    assert shown == [s.id for s in sections[: len(shown)]], "trimmed from the end, in document order"
    note = re.search(r"\((\d+) of (\d+) distillations of this document left out to fit the token budget\.\)", text)
    assert note and int(note[2]) == len(sections) + 1 and int(note[1]) == len(sections) + 1 - (len(shown) + 1)
    # the response itself keeps the whole outline; only the text is trimmed
    assert [b.id for b in result.documents if b.kind == "section"] == [s.id for s in sections]


def test_a_question_keeps_room_for_its_passages_beside_the_outline(docs_vault: Vault) -> None:
    vault = docs_vault
    doc = upload(vault, "manual.md", LONG_DOCUMENT)
    assert vault.jobs.wait_idle(120)
    result = recall(vault, "how often is the barge oiled", document_id=doc, limit=5, token_budget=500)
    text = result.llm_context.text
    assert result.llm_context.tokens <= 500
    # the passages the question found are all in the text; the outline, pinned ahead of them, is what gets trimmed
    # (it took the whole budget before, leaving no passage), and the text says so
    passages = [("span", b.id) for b in result.documents if b.kind == "span"]
    assert len(passages) == 5 and set(passages) <= set(result.llm_context.items)
    assert "distillations of this document left out to fit the token budget" in text
    assert result.llm_context.items[0][0] == "document"  # the document's own distillation still leads


# -- what the text carries: every line should help answer, none should mislead -----------------------------------
@pytest.fixture
def household(docs_vault: Vault) -> Vault:
    """The user moved from Paris to Lyon, has a partner who loves *living* by the river, a brother Robert (hot fact:
    where he works, followed by a short tool turn), a sister Anna (hot fact: her allergy), and an orchard handbook
    whose pruning passage says *live*."""
    vault = docs_vault
    ingest(vault, "c", ("2024-01-01T10:00:00Z", "I live in Paris."))
    ingest(vault, "c", ("2024-03-01T10:00:00Z", "I moved to Lyon last week, I live in Lyon now."))
    ingest(vault, "c", ("2024-03-05T10:00:00Z", "My partner Sam loves living near the river."))
    ingest(vault, "c", ("2024-03-06T10:00:00Z", "Robert works at Globex in Berlin."))
    ingest(vault, "c", ("2024-03-06T10:01:00Z", "ok"), role="tool")
    ingest(vault, "c", ("2024-03-07T10:00:00Z", "Robert is my brother."))
    ingest(vault, "c", ("2024-03-08T10:00:00Z", "My sister Anna is allergic to peanuts."))
    upload(vault, "orchard.md", HANDBOOK + "\nThe pickers live in the village and walk up at dawn.\n")
    assert vault.jobs.wait_idle(120)
    return vault


def _orchard(vault: Vault) -> int:
    return int(vault.store.scalar("SELECT id FROM documents WHERE name = 'orchard.md'"))


def _lines(result: RecallResult) -> list[str]:
    return [line for line in result.llm_context.text.splitlines() if line.startswith("- ")]


def _fact_id(vault: Vault, predicate: str, obj: str) -> int:
    return int(vault.store.scalar("SELECT id FROM facts WHERE predicate = ? AND object_text = ?", (predicate, obj)))


def test_the_text_names_each_item_it_carries(household: Vault) -> None:
    asked = recall(household, "Where does Robert work?")
    assert len(asked.llm_context.items) == len(_lines(asked))
    known = {(b.kind, b.id) for b in (*asked.background_context, *asked.blocks, *asked.documents)}
    assert set(asked.llm_context.items) <= known


def test_a_superseded_residence_shows_only_as_an_earlier_state(household: Vault) -> None:
    lyon = _fact_id(household, "lives_in", "Lyon")
    assert ("fact", lyon) in recall(household, "Where do I live?").llm_context.items, "the current residence answers"
    shown = []
    for query in ("Where do I live?", "Where did I live before?"):
        asked = recall(household, query)
        stated = [b for b in asked.blocks if b.kind == "event" and "Paris" in b.content]
        assert stated and all(b.meta.get("earlier") == "2024-03-01" for b in stated), "labelled with when it ended"
        paris = [line for line in _lines(asked) if "Paris" in line]
        for line in paris:  # left out, or shown as what it was
            assert "(earlier, until 2024-03-01)" in line, line
        shown += paris
    assert shown, "the residence's history is worth showing, labelled"
    elsewhere = recall(household, "Where does Robert work?")
    assert not [line for line in _lines(elsewhere) if "Paris" in line], "another slot's history is padding"


def test_another_persons_hot_fact_is_left_out_unless_the_question_names_them(household: Vault) -> None:
    anna = _fact_id(household, "has_allergy", "peanuts")
    robert = _fact_id(household, "works_at", "Globex")
    about_me = recall(household, "Where do I live?")
    assert {b.id for b in about_me.background_context} >= {anna, robert}, "the hot facts are still background"
    assert ("fact", anna) not in about_me.llm_context.items and ("fact", robert) not in about_me.llm_context.items
    about_robert = recall(household, "Where does Robert work?")
    assert ("fact", robert) in about_robert.llm_context.items
    assert ("fact", anna) not in about_robert.llm_context.items
    assert not [item for item in about_robert.llm_context.items if item[0] == "fact" and item[1] != robert], (
        "the user's own hot facts do not answer a question about Robert"
    )
    assert ("fact", anna) in recall(household, "What is Anna allergic to?").llm_context.items


def test_a_document_passage_below_the_floor_is_left_out(household: Vault) -> None:
    for query in ("Where does Robert work?", "Where do I live?"):
        asked = recall(household, query)
        assert asked.documents, "the documents channel still ranks passages"
        assert "Documents:" not in asked.llm_context.text, query
        assert all(b.meta.get("left_out") for b in asked.documents)
    relevant = recall(household, "When are the espalier pears pruned?")
    assert any(kind == "span" for kind, _id in relevant.llm_context.items)
    named = recall(household, "Where does Robert work?", document_id=_orchard(household))
    assert "Documents:" in named.llm_context.text, "a named document is shown whatever the words"


def test_a_facts_evidence_is_the_turn_it_was_extracted_from(household: Vault) -> None:
    asked = recall(household, "Where does Robert work?")
    facts = [b for b in asked.blocks if b.kind == "fact"]
    assert facts
    for block in facts:
        own = household.store.scalar("SELECT event_id FROM facts WHERE id = ?", (block.id,))
        assert [e.source_id for e in block.evidence] == [own], block.content


def test_the_slot_answers_a_direct_question_not_a_word_match(household: Vault) -> None:
    asked = recall(household, "Where do I live?")
    partner = _fact_id(household, "has_partner", "Sam")
    assert any(b.id == partner for b in asked.blocks), "the keyword channel still finds it"
    assert ("fact", partner) not in asked.llm_context.items
    assert "partner" not in asked.llm_context.text
