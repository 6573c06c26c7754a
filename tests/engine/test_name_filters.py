"""Listing conversations and documents by part of their name (``q``), as search everywhere (Ctrl+K) asks: filtered in
SQL, so an old conversation past the newest few hundred is found too, and case-blind beyond ASCII."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.plugins import build_plugin_manager
from engine.config import Settings
from engine.events import EventIn
from engine.vault import Vault


@pytest.fixture
def vault(tmp_path: Path, offline_settings: Settings) -> Iterator[Vault]:
    """A vault with the shipped parsers and importers."""
    v = Vault.open(tmp_path / "vault", settings=offline_settings, plugins=build_plugin_manager(load_entry_points=False))
    try:
        yield v
    finally:
        v.close()


def _import_titled(vault: Vault, tmp_path: Path, titles: dict[str, str]) -> None:
    lines = [
        {
            "conversation_id": cid,
            "title": title,
            "role": "user",
            "content": f"Notes for {title}.",
            "occurred_at": f"2026-03-{i + 1:02d}T10:00:00Z",
        }
        for i, (cid, title) in enumerate(titles.items())
    ]
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    summary = vault.conversations.import_summary(path)
    assert not summary.errors


def test_conversations_by_title_or_id_in_any_case(vault: Vault, tmp_path: Path) -> None:
    _import_titled(vault, tmp_path, {"c1": "Trip to the CAFÉ Central", "c2": "Tax return", "ÉTÉ-plans": "Holidays"})

    assert [c.conversation_id for c in vault.conversations(q="café")] == ["c1"]  # É folds to é
    assert [c.conversation_id for c in vault.conversations(q="été")] == ["ÉTÉ-plans"]  # by its id
    assert [c.title for c in vault.conversations(q="RETURN")] == ["Tax return"]
    assert vault.conversations(q="nowhere") == []
    assert {c.conversation_id for c in vault.conversations()} == {"c1", "c2", "ÉTÉ-plans"}  # no q: all


def test_an_old_conversation_is_found_however_many_came_after(vault: Vault, tmp_path: Path) -> None:
    _import_titled(vault, tmp_path, {"oldest": "Zebra crossing"})
    vault.events.ingest(
        [
            EventIn(conversation_id=f"newer-{n}", content=f"turn {n}", occurred_at=f"2026-05-01T10:{n % 60:02d}:00Z")
            for n in range(30)
        ]
    )
    assert "oldest" not in {c.conversation_id for c in vault.conversations(limit=10)}
    assert [c.conversation_id for c in vault.conversations(q="zebra", limit=10)] == ["oldest"]


def test_documents_by_name_in_any_case(vault: Vault) -> None:
    for name in ("Résumé ÉLAN.md", "notes.md", "Recipes.md"):
        vault.documents.upload(name=name, text=f"# {name}\n\nSome text.")
    assert [d.name for d in vault.documents(q="élan")] == ["Résumé ÉLAN.md"]
    assert sorted(d.name for d in vault.documents(q=".MD")) == ["Recipes.md", "Résumé ÉLAN.md", "notes.md"]
    assert vault.documents(q="missing") == []
