"""The workspace's ``search`` and perspectives on a real vault: both channels, the weighting (understandings before
the observations they cover, recency, marks), perspectives kept apart by an embedder that reads instructions (the
fake Ollama's embedding model) and collapsed by one that does not (the built-in hashing embedder), an embedder
outage, and forgetting."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from engine import Vault
from engine.errors import NotFound, ValidationError
from engine.forget import ForgetScope
from engine.workspace.perspectives import DEFAULTS, MAX_CUSTOM
from tests.fakes.ollama import FakeOllama, fake_embedding

COLOURS = "Represent only the colours named in this note:"
COLOUR_WORDS = {"crimson", "teal", "ochre"}
DIM = 64


def vectors_of(vault: Vault, user_id: str = "default") -> dict[str, int]:
    rows = vault.store.query(
        "SELECT perspective, COUNT(*) FROM workspace_vectors WHERE user_id = ? GROUP BY perspective", (user_id,)
    )
    return {str(r[0]): int(r[1]) for r in rows}


def reads_instructions(text: str, model: str) -> list[float]:
    """An embedding model that follows instructions: behind the colours instruction it represents only the colour
    words of the text; behind any other perspective's instruction, every word of what follows it."""
    body, keep = text, None
    for instruction in (COLOURS, *(p.instruction for p in DEFAULTS)):
        if text.startswith(instruction):
            body = text[len(instruction) :]
            keep = COLOUR_WORDS if instruction == COLOURS else None
    words = [w for w in re.findall(r"[a-z']+", body.lower()) if keep is None or w in keep]
    total = np.zeros(DIM)
    total[0] = 0.1  # never a zero vector
    for word in words:
        total += np.asarray(fake_embedding(word, DIM, model))
    return list(total)


@pytest.fixture
def instructed(tmp_path: Path, fake_ollama: FakeOllama) -> Iterator[Vault]:
    """A vault whose embedder is the fake Ollama's nomic-embed-text, answering as :func:`reads_instructions`."""
    fake_ollama.on_embed(reads_instructions)
    settings = fake_ollama.settings({"llm.provider": "simple", "embedder.provider": "ollama"})
    vault = Vault.open(tmp_path / "v", settings=settings)
    try:
        yield vault
    finally:
        vault.close()


def test_search_finds_by_words_and_meaning_and_says_the_perspectives_collapse(vault: Vault) -> None:
    ws = vault.workspace
    climbing = ws.remember("Ana started rock climbing at the boulder gym on Tuesdays.", ["Ana"]).observation
    ws.remember("Ana moved her Rust compiler project to a new repository.", ["Ana", "Compiler"])
    ws.remember("Bob and Ana are siblings; Bob is the older one.", ["Ana", "Bob"])
    found = ws.search("climbing gym")
    assert found.hits[0].id == climbing.id and found.hits[0].kind == "observation"
    assert found.hits[0].matched_perspective == "general"  # matched by its vector, under the one collapsed vector
    assert found.collapsed and found.embedder == "hashing-v1-384"
    assert found.perspectives == tuple(p.name for p in DEFAULTS)
    assert any("ignores instructions" in n for n in found.notes)
    assert vault.jobs.wait_idle(120)
    assert vectors_of(vault) == {"": 3}  # one vector per item, not five copies


def test_understandings_rank_before_the_observations_they_cover(vault: Vault) -> None:
    ws = vault.workspace
    covered = ws.remember("Ana runs the Lisbon marathon every October.", ["Ana"]).observation
    fresh = ws.remember("Ana trains for the Lisbon marathon with Bob on Sundays.", ["Ana", "Bob"]).observation
    made = ws.create_understanding(
        "Ana is a marathon runner: she runs the Lisbon marathon every October.",
        summary="Ana runs the Lisbon marathon",
        subject_names=["Ana"],
        sources=[covered.id],
    )
    found = ws.search("Lisbon marathon")
    assert found.hits[0].id == made.id and found.hits[0].kind == "understanding"
    by_id = {h.id: h for h in found.hits}
    assert by_id[covered.id].covered and not by_id[fresh.id].covered
    assert by_id[covered.id].score < by_id[made.id].score
    assert [h.kind for h in ws.search("Lisbon marathon", include_observations=False).hits] == ["understanding"]
    assert [h.id for h in ws.search("Lisbon marathon", subject_names=["Bob"]).hits] == [fresh.id]
    ws.update_understanding(made.id, new_content="Ana runs marathons.", new_summary="Ana runs")
    assert made.id not in {h.id for h in ws.search("Lisbon marathon").hits}  # superseded: no longer found


def test_recent_items_and_marks_weigh_in(vault: Vault) -> None:
    ws = vault.workspace
    old = ws.remember("Ana drinks genmaicha tea in the morning.", ["Ana"], observed_at="2023-01-05").observation
    new = ws.remember("Ana drinks genmaicha tea in the evening.", ["Ana"]).observation
    assert [h.id for h in ws.search("genmaicha tea").hits] == [new.id, old.id]
    for _ in range(3):
        ws.mark([new.id], useful=False)
    assert [h.id for h in ws.search("genmaicha tea").hits] == [old.id, new.id]


def test_an_embedder_that_reads_instructions_keeps_the_perspectives_apart(instructed: Vault) -> None:
    ws = instructed.workspace
    ws.searcher.add_perspective("colours", COLOURS, user_id="default")
    wall = ws.remember(
        "The wall in Ana's kitchen is crimson and the old fridge beside it hums loudly at night.", ["Ana"]
    ).observation
    ws.remember("Ana bought a loud old fridge for the kitchen last spring.", ["Ana"])
    ws.remember("Ana's sister visits her every other Sunday.", ["Ana"])
    assert instructed.jobs.wait_idle(120)
    assert vectors_of(instructed) == dict.fromkeys(("general", "technical", "relational", "temporal", "project"), 3) | {
        "colours": 3
    }
    found = ws.search("crimson")
    assert not found.collapsed and not found.notes
    assert found.perspectives == ("general", "technical", "relational", "temporal", "project", "colours")
    assert found.hits[0].id == wall.id and found.hits[0].matched_perspective == "colours"

    ws.searcher.remove_perspective("colours", user_id="default")
    assert "colours" not in vectors_of(instructed)
    again = ws.search("crimson")
    assert again.hits[0].id == wall.id and again.hits[0].matched_perspective in {p.name for p in DEFAULTS}

    ws.searcher.add_perspective("colours", "Represent the colours:", user_id="default")
    ws.searcher.add_perspective("colours", COLOURS, user_id="default")  # re-worded: the old vectors go
    assert instructed.jobs.wait_idle(120)
    assert vectors_of(instructed)["colours"] == 3


def test_the_search_answers_by_words_while_the_embedder_is_down(instructed: Vault, fake_ollama: FakeOllama) -> None:
    ws = instructed.workspace
    kept = ws.remember("Ana keeps bees on the roof of her building.", ["Ana"]).observation
    fake_ollama.stop()
    found = ws.search("bees roof")
    assert [h.id for h in found.hits] == [kept.id]
    assert found.hits[0].matched_perspective is None  # found by its words alone
    assert any("unavailable" in n for n in found.notes)


def test_perspectives_of_ones_own_are_checked(vault: Vault) -> None:
    searcher = vault.workspace.searcher
    with pytest.raises(ValidationError) as caught:
        searcher.add_perspective("Health Matters", "Represent health:", user_id="default")
    assert caught.value.field == "name"
    with pytest.raises(ValidationError):
        searcher.add_perspective("general", "Represent anything:", user_id="default")
    with pytest.raises(ValidationError) as caught:
        searcher.add_perspective("health", "  ", user_id="default")
    assert caught.value.field == "instruction"
    with pytest.raises(ValidationError):
        searcher.remove_perspective("temporal", user_id="default")
    with pytest.raises(NotFound):
        searcher.remove_perspective("nothing-here", user_id="default")
    for n in range(MAX_CUSTOM):
        searcher.add_perspective(f"p{n}", f"Represent topic {n}:", user_id="default")
    with pytest.raises(ValidationError):
        searcher.add_perspective("one-more", "Represent one more:", user_id="default")
    found, instructed, model_id = searcher.perspectives("default")
    assert len(found) == len(DEFAULTS) + MAX_CUSTOM and not instructed and model_id == "hashing-v1-384"
    assert searcher.perspectives("someone-else")[0] == list(DEFAULTS)  # per user


def test_forgetting_a_user_takes_their_perspectives_and_vectors(vault: Vault) -> None:
    ws = vault.workspace
    ws.searcher.add_perspective("health", "Represent the health matters:", user_id="other")
    ws.remember("Other person sees a physiotherapist weekly.", ["Other"], user_id="other")
    ws.remember("Ana sees a physiotherapist weekly.", ["Ana"])
    assert vault.jobs.wait_idle(120)
    assert ws.search("physiotherapist", user_id="other").hits
    assert vectors_of(vault, "other") == {"": 1}
    vault.forget(ForgetScope(user_id="other"))
    assert vectors_of(vault, "other") == {}
    assert vault.store.scalar("SELECT COUNT(*) FROM perspectives WHERE user_id = 'other'") == 0
    assert vault.store.scalar("SELECT COUNT(*) FROM workspace_vector_versions WHERE user_id = 'other'") == 0
    assert not ws.search("physiotherapist", user_id="other").hits
    assert [h.observation.content for h in ws.search("physiotherapist").hits if h.observation] == [
        "Ana sees a physiotherapist weekly."
    ]
