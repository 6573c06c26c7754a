"""Recall's document strategies through ``vault.recall`` (DESIGN §5 "Document strategies").

LOCAL (default: spans across the user's documents, ``project_id`` restricting), SECTION (a named section of a
named document), DOCUMENT (``document_id``: distillations first, degraded while they are being made) and
COLLECTION (``collection_id``: only that collection's documents).  The corpus is three small Markdown files that
share one word ("sundial") so that every strategy has something to leave out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.errors import NotFound
from engine.recall.types import Block, RecallResult
from engine.vault import Vault
from tests.engine.documents.support import ids_of, open_vault, recall, span_blocks

pytestmark = pytest.mark.timeout(120)

DEGRADED = "[DOCUMENT UNDERSTANDING STATUS: DEGRADED]"

README = """# Widget Handbook

The widget keeps a ledger of marmalade shipments. Every sundial in the shop is calibrated by the widget.

## Installation

Unpack the quokkaberry archive into a fresh folder. Run the installer and answer the three questions it asks.
Restart the sundial service when the installer finishes its work.

## Usage

Open the dashboard each morning; the lighthouse view shows which shipments are late.
"""

GUIDE = """# Field Guide

This guide covers the ballast pumps of the river barge and the sundial on its deck.

## Installation

Bolt the ballast pump to the hull with four brass screws, then prime it with river water.

## Troubleshooting

A rattling pump usually means the gravel filter needs cleaning.
"""

NOTES = """# Loose notes

Remember to oil the sundial hinge and to order more twine for the espalier pears.
"""


@dataclass(frozen=True, slots=True)
class Corpus:
    vault: Vault
    readme: int
    guide: int
    notes: int
    shelf: int  # a collection of README and notes


def _load(vault: Vault) -> Corpus:
    readme = vault.documents.upload(name="README.md", text=README, project_id="alpha").document_id
    guide = vault.documents.upload(name="GUIDE.md", text=GUIDE, project_id="beta").document_id
    notes = vault.documents.upload(name="notes.md", text=NOTES).document_id
    shelf = vault.collections.create("Shelf").id
    vault.collections.add(shelf, [readme, notes])
    return Corpus(vault, readme, guide, notes, shelf)


@pytest.fixture
def ready(tmp_path: Path) -> Iterator[Corpus]:
    """The corpus with every distillation made."""
    with open_vault(tmp_path / "v", start_workers=True) as vault:
        corpus = _load(vault)
        assert vault.jobs.wait_idle(120)
        assert {d.status for d in vault.documents()} == {"ready"}
        yield corpus


@pytest.fixture
def pending(tmp_path: Path) -> Iterator[Corpus]:
    """The corpus right after upload: spans searchable, distillations still queued."""
    with open_vault(tmp_path / "v", start_workers=False) as vault:
        corpus = _load(vault)
        assert {d.status for d in vault.documents()} == {"processing"}
        yield corpus


def documents_of(blocks: list[Block]) -> set[int]:
    return {int(b.meta["document_id"]) for b in blocks}


def kinds(result: RecallResult) -> list[str]:
    return [b.kind for b in result.documents]


# -- LOCAL --------------------------------------------------------------------------------------------------------
def test_local_is_the_default_and_finds_spans_across_documents(ready: Corpus) -> None:
    result = recall(ready.vault, "sundial")
    assert result.routing.strategy == "LOCAL" and not result.routing.degraded
    assert DEGRADED not in result.llm_context.text
    assert set(kinds(result)) == {"span"}
    assert documents_of(span_blocks(result)) == {ready.readme, ready.guide, ready.notes}
    assert "sundial" in result.llm_context.text and "Documents:" in result.llm_context.text
    ballast = span_blocks(recall(ready.vault, "ballast"))
    assert ballast[0].meta["document"] == "GUIDE.md" and "ballast" in ballast[0].content


def test_local_with_a_project_leaves_other_projects_out(ready: Corpus) -> None:
    alpha = span_blocks(recall(ready.vault, "sundial", project_id="alpha"))
    beta = span_blocks(recall(ready.vault, "sundial", project_id="beta"))
    # documents filed under no project are everyone's; a project's documents are only its own
    assert documents_of(alpha) == {ready.readme, ready.notes}
    assert documents_of(beta) == {ready.guide, ready.notes}
    ballast = span_blocks(recall(ready.vault, "ballast", project_id="alpha"))
    assert documents_of(ballast) <= {ready.readme, ready.notes}
    assert not any("ballast" in b.content for b in ballast)
    assert documents_of(span_blocks(recall(ready.vault, "sundial", project_id="gamma"))) == {ready.notes}


def test_local_never_shows_another_users_documents(ready: Corpus) -> None:
    ready.vault.documents.upload(name="bob.md", text="# Bob\n\nBob's sundial is made of slate.", user_id="bob")
    mine = span_blocks(recall(ready.vault, "slate"))
    assert all(b.meta["document"] != "bob.md" for b in mine)
    bobs = span_blocks(recall(ready.vault, "slate", user_id="bob"))
    assert [b.meta["document"] for b in bobs] == ["bob.md"]


# -- SECTION ------------------------------------------------------------------------------------------------------
def test_a_named_section_returns_its_distillation_and_its_spans(ready: Corpus) -> None:
    install = ready.vault.documents.get(ready.readme).sections[1]
    assert install.title == "Installation"
    result = recall(ready.vault, "show me the Installation section of the README")
    assert result.routing.strategy == "SECTION" and not result.routing.degraded
    section = [b for b in result.documents if b.kind == "section"]
    assert [(b.id, b.content) for b in section] == [(install.id, install.distillation)]
    assert "quokkaberry" in section[0].content
    spans = span_blocks(result)
    assert {b.id for b in spans} == {s.id for s in install.spans}
    assert {b.meta["section"] for b in spans} == {"Installation"}
    assert documents_of(result.documents) == {ready.readme}
    guide = recall(ready.vault, "the Installation section of the guide")
    assert guide.routing.strategy == "SECTION" and documents_of(guide.documents) == {ready.guide}
    assert "ballast" in guide.llm_context.text and "quokkaberry" not in guide.llm_context.text


def test_a_named_section_is_the_one_called_so_not_one_containing_the_words(ready: Corpus) -> None:
    manual = ready.vault.documents.upload(
        name="MANUAL.md",
        text=(
            "# Manual\n\nOverview of the kiln.\n\n## Pre-installation checks\n\nMeasure the chimney draught.\n\n"
            "## Installation\n\nLevel the kiln on its firebrick feet.\n\n## Installation on a boat\n\nDo not.\n"
        ),
    )
    wanted = ready.vault.documents.get(manual.document_id).sections[2]
    assert wanted.title == "Installation"
    result = recall(ready.vault, "show me the installation section of the manual")
    assert result.routing.strategy == "SECTION"
    assert {b.id for b in span_blocks(result)} == {s.id for s in wanted.spans}
    assert "firebrick" in result.llm_context.text and "chimney" not in result.llm_context.text


def test_a_named_section_is_looked_for_only_in_the_requested_project(ready: Corpus) -> None:
    asked = recall(ready.vault, "show me the Installation section of the guide", project_id="alpha")
    assert asked.routing.strategy == "SECTION"
    assert ready.guide not in documents_of(asked.documents), "GUIDE.md belongs to project beta"
    assert "ballast" not in asked.llm_context.text
    beta = recall(ready.vault, "show me the Installation section of the guide", project_id="beta")
    assert documents_of(beta.documents) == {ready.guide}


def test_a_named_section_while_distilling_is_degraded_spans(pending: Corpus) -> None:
    install = pending.vault.documents.get(pending.readme).sections[1]
    result = recall(pending.vault, "show me the Installation section of the README")
    assert result.routing.strategy == "SECTION" and result.routing.degraded
    assert kinds(result) == ["span"] * len(install.spans)
    assert {b.id for b in result.documents} == {s.id for s in install.spans}


def test_a_section_name_that_matches_nothing_falls_back_to_local(ready: Corpus) -> None:
    result = recall(ready.vault, "show me the Appendix section of the README about the sundial")
    assert result.routing.strategy == "LOCAL"


# -- DOCUMENT -----------------------------------------------------------------------------------------------------
def test_document_strategy_is_degraded_while_distillations_are_pending(pending: Corpus) -> None:
    result = recall(pending.vault, "sundial", document_id=pending.readme)
    assert result.routing.strategy == "DOCUMENT" and result.routing.degraded
    assert DEGRADED in result.llm_context.text
    assert set(kinds(result)) == {"span"}
    assert documents_of(result.documents) == {pending.readme}


def test_document_strategy_gives_distillations_first_then_spans_once_ready(ready: Corpus) -> None:
    tree = ready.vault.documents.get(ready.readme)
    result = recall(ready.vault, "sundial", document_id=ready.readme)
    assert result.routing.strategy == "DOCUMENT" and not result.routing.degraded
    assert DEGRADED not in result.llm_context.text
    first = result.documents[0]
    assert (first.kind, first.id, first.content) == ("document", ready.readme, tree.info.distillation)
    sections = [b for b in result.documents if b.kind == "section"]
    assert {b.id: b.content for b in sections} == {s.id: s.distillation for s in tree.sections}
    order = kinds(result)
    assert order.index("span") > max(i for i, k in enumerate(order) if k == "section")
    assert set(ids_of(ready.vault, "spans", ready.readme)) >= {b.id for b in span_blocks(result)}
    assert span_blocks(result) and documents_of(result.documents) == {ready.readme}
    assert f"#{ready.readme} README.md]" in result.llm_context.text


def test_document_strategy_becomes_ready_when_the_distillation_arrives(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v", start_workers=False) as vault:
        doc = vault.documents.upload(name="GUIDE.md", text=GUIDE).document_id
        assert recall(vault, "pump", document_id=doc).routing.degraded
    with open_vault(tmp_path / "v", start_workers=True) as vault:
        assert vault.jobs.wait_idle(120)
        result = recall(vault, "pump", document_id=doc)
        assert not result.routing.degraded and DEGRADED not in result.llm_context.text
        assert kinds(result)[0] == "document"


def test_document_and_collection_ids_must_exist_for_the_user(ready: Corpus) -> None:
    with pytest.raises(NotFound):
        recall(ready.vault, "sundial", document_id=999_999)
    with pytest.raises(NotFound):
        recall(ready.vault, "sundial", document_id=ready.readme, user_id="bob")
    with pytest.raises(NotFound):
        recall(ready.vault, "sundial", collection_id=999_999)
    with pytest.raises(NotFound):
        recall(ready.vault, "sundial", collection_id=ready.shelf, user_id="bob")


# -- COLLECTION ---------------------------------------------------------------------------------------------------
def test_collection_strategy_stays_inside_the_collection(ready: Corpus) -> None:
    result = recall(ready.vault, "sundial", collection_id=ready.shelf)
    assert result.routing.strategy == "COLLECTION" and not result.routing.degraded
    distilled = {b.id: b.content for b in result.documents if b.kind == "document"}
    assert distilled == {d: ready.vault.documents.get(d).info.distillation for d in (ready.readme, ready.notes)}
    assert documents_of(span_blocks(result)) == {ready.readme, ready.notes}
    assert documents_of(result.documents) == {ready.readme, ready.notes}
    assert "GUIDE.md" not in result.llm_context.text
    ballast = recall(ready.vault, "ballast", collection_id=ready.shelf)
    assert documents_of(ballast.documents) <= {ready.readme, ready.notes}
    assert "ballast" not in ballast.llm_context.text


def test_collection_strategy_is_degraded_while_a_member_is_distilling(pending: Corpus) -> None:
    result = recall(pending.vault, "sundial", collection_id=pending.shelf)
    assert result.routing.strategy == "COLLECTION" and result.routing.degraded
    assert DEGRADED in result.llm_context.text
    assert set(kinds(result)) == {"span"}
    assert documents_of(result.documents) == {pending.readme, pending.notes}


def test_an_empty_collection_returns_no_documents(ready: Corpus) -> None:
    empty = ready.vault.collections.create("Empty").id
    result = recall(ready.vault, "sundial", collection_id=empty)
    assert result.routing.strategy == "COLLECTION" and result.documents == ()
