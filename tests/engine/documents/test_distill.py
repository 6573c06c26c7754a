"""Document distillations with a model: the document's own summary comes from the model, from its sections.

Against the fake Ollama server (real client, real HTTP on loopback): with a model, each section is summarised from
its text and the document from its sections' titles and summaries with the ``distill_document`` prompt, rendered at
call time and answered as JSON against a schema.  A bad answer or a model that stops answering falls back to the
extractive summary with a warning, and the ``distiller`` column always names what wrote each distillation.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from engine.changes import Change
from engine.documents.distill import DOCUMENT_CHARS, extractive
from engine.vault import Vault
from tests.engine.documents.support import open_vault
from tests.fakes.ollama import FakeOllama, Reply

pytestmark = pytest.mark.timeout(120)

HANDBOOK = """# Widget Handbook

The widget keeps a ledger of every marmalade shipment and warns before a cellar runs low.

## Installation

Unpack the archive into a fresh folder and check that the quokkaberry tool answers its version probe.

## Usage

Open the dashboard each morning; the lighthouse view shows the shipments that are late.
"""
DOCUMENT_ANSWER = "A handbook for the widget: installing the quokkaberry tool and reading the lighthouse view."


def is_document_prompt(request: dict[str, Any]) -> bool:
    return "summarise a whole document" in request["messages"][0]["content"]


def section_answer(request: dict[str, Any]) -> dict[str, str]:
    """A section summary naming its section, so the document prompt can be checked for it."""
    system = request["messages"][0]["content"]
    title = system.split("Section: ", 1)[1].split(".\n", 1)[0]
    return {"summary": f"The {title} part, summarised by the model."}


def model_settings(fake: FakeOllama) -> Any:
    return fake.settings({"llm.provider": "ollama", "embedder.provider": "hashing"})


def distillers(vault: Vault, document_id: int) -> tuple[str, list[str]]:
    document = vault.store.scalar("SELECT distiller FROM documents WHERE id = ?", (document_id,))
    sections = [
        str(r[0])
        for r in vault.store.query(
            "SELECT distiller FROM sections WHERE document_id = ? ORDER BY ordinal", (document_id,)
        )
    ]
    return str(document), sections


def warnings_of(changes: list[Change]) -> list[str]:
    return [w for c in changes if c.type == "job.warning" for w in c.data["warnings"]]


def upload(vault: Vault) -> tuple[int, list[Change]]:
    seq = vault.changes.last_seq
    document_id = vault.documents.upload(name="handbook.md", text=HANDBOOK).document_id
    assert vault.jobs.wait_idle(120)
    changes, complete = vault.changes.since(seq)
    assert complete
    return document_id, list(changes)


def test_with_a_model_the_document_distillation_is_the_models(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.on_chat(lambda r: {"summary": DOCUMENT_ANSWER} if is_document_prompt(r) else section_answer(r))
    with open_vault(tmp_path / "v", start_workers=True, settings=model_settings(fake_ollama)) as vault:
        assert vault.llm is not None
        model = vault.llm.name
        document_id, changes = upload(vault)
        tree = vault.documents.get(document_id)
        labels = distillers(vault, document_id)

    assert tree.info.status == "ready" and tree.info.distillation == DOCUMENT_ANSWER
    assert [s.distillation for s in tree.sections] == [
        f"The {s.title} part, summarised by the model." for s in tree.sections
    ]
    assert labels == (model, [model] * len(tree.sections))
    assert warnings_of(changes) == []

    chats = fake_ollama.requests_to("/api/chat")
    document_requests = [r for r in chats if is_document_prompt(r.body)]
    assert len(document_requests) == 1 and chats[-1] is document_requests[-1], "sections first, then the document"
    prompt = document_requests[0].body["messages"][0]["content"]
    # rendered at call time from the sections' titles and the model's own section summaries
    today = {f"{datetime.now(UTC) - timedelta(days=d):%Y-%m-%d}" for d in (0, 1)}
    assert any(f"Today is {day}." in prompt for day in today)
    assert "Document: handbook.md. It has 3 sections" in prompt
    for section in tree.sections:
        assert f"## {section.title}\n{section.distillation}" in prompt
    assert "{sections}" not in prompt and "{today}" not in prompt
    schema = document_requests[0].body["format"]
    assert schema["required"] == ["summary"] and schema["properties"]["summary"]["type"] == "string"


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("this is not JSON", ""),
        ({"summary": "   "}, "missing or empty"),
        ({"summary": "word " * 600}, "more than 2000"),
        ({"title": "no summary key"}, "missing or empty"),
    ],
)
def test_a_bad_document_answer_falls_back_to_extractive_and_says_so(
    tmp_path: Path, fake_ollama: FakeOllama, answer: Reply, why: str
) -> None:
    fake_ollama.on_chat(lambda r: answer if is_document_prompt(r) else section_answer(r))
    with open_vault(tmp_path / "v", start_workers=True, settings=model_settings(fake_ollama)) as vault:
        assert vault.llm is not None
        model = vault.llm.name
        document_id, changes = upload(vault)
        tree = vault.documents.get(document_id)
        labels = distillers(vault, document_id)

    sections_text = " ".join(s.distillation or "" for s in tree.sections)
    assert tree.info.status == "ready"
    assert tree.info.distillation == extractive(sections_text, DOCUMENT_CHARS)
    assert labels == ("extractive", [model] * len(tree.sections)), "the label says the model did not write it"
    (warning,) = warnings_of(changes)
    assert warning.startswith("document: extractive summary (") and why in warning


def test_a_model_that_stops_answering_is_asked_once_per_job(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.on_chat(section_answer)
    fake_ollama.fail_next(500, "model runner crashed", path="/api/chat", times=1000)
    with open_vault(tmp_path / "v", start_workers=True, settings=model_settings(fake_ollama)) as vault:
        document_id, changes = upload(vault)
        tree = vault.documents.get(document_id)
        labels = distillers(vault, document_id)

    assert tree.info.status == "ready" and tree.info.distillation
    assert labels == ("extractive", ["extractive"] * len(tree.sections))
    assert "marmalade" in " ".join(s.distillation or "" for s in tree.sections)
    attempts = fake_ollama.requests_to("/api/chat")
    assert attempts and all(not is_document_prompt(r.body) for r in attempts), "no document call after the failure"
    assert len({json.dumps(r.body, sort_keys=True) for r in attempts}) == 1, "one section tried, the rest skipped"
    (warning,) = warnings_of(changes)
    assert warning.startswith("section ") and "extractive summary" in warning


def test_a_section_answer_that_is_not_json_does_not_stop_the_model(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_chat("Sure! Here is a summary: the widget.")  # the first section's answer: not JSON
    fake_ollama.on_chat(lambda r: {"summary": DOCUMENT_ANSWER} if is_document_prompt(r) else section_answer(r))
    with open_vault(tmp_path / "v", start_workers=True, settings=model_settings(fake_ollama)) as vault:
        assert vault.llm is not None
        model = vault.llm.name
        document_id, changes = upload(vault)
        tree = vault.documents.get(document_id)
        labels = distillers(vault, document_id)

    assert labels == (model, ["extractive", model, model])
    assert tree.info.distillation == DOCUMENT_ANSWER
    (warning,) = warnings_of(changes)
    assert warning.startswith("section Widget Handbook: extractive summary") and "not JSON" in warning
