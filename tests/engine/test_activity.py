"""The activity history: the changes worth reading later are kept across restarts, in words without content, the
newest ``KEEP`` of them, and an export carries them."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Settings, Vault, activity as activity_module
from engine.events import EventIn
from engine.forget import ForgetScope

SETTINGS = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})


def test_what_happened_is_listed_newest_first_after_a_restart(tmp_path: Path) -> None:
    with Vault.open(tmp_path / "v", settings=SETTINGS) as vault:
        vault.events.ingest([EventIn(conversation_id="c", content="My locker code is Quillfeather.")])
        assert vault.jobs.wait_idle(60)
        vault.backups.now()
        vault.changes.emit("job.failed", kind="distill_document", attempts=5, error="ModelUnavailable: down")
        vault.changes.emit("memory.updated")  # not history: never kept
        receipt = vault.forget(ForgetScope(conversation_id="c"))
        vault.export(tmp_path / "out.zip")
    with Vault.open(tmp_path / "v", settings=SETTINGS) as vault:
        entries = vault.activity()
        assert [e.kind for e in entries] == ["export", "forget", "distill_document", "backup"]
        assert [e.level for e in entries] == ["info", "info", "failed", "info"]
        assert entries[1].object_id == receipt.receipt_id and f"receipt {receipt.receipt_id}" in entries[1].text
        assert entries[2].text == "parked after 5 attempts: ModelUnavailable: down"
        assert entries[0].seq > entries[1].seq > entries[2].seq
        assert [e.kind for e in vault.activity(kind="forget")] == ["forget"]
        assert all("Quillfeather" not in e.text for e in entries)


def test_only_the_newest_entries_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(activity_module, "KEEP", 5)
    with Vault.open(tmp_path / "v", settings=SETTINGS) as vault:
        for n in range(12):
            vault.changes.emit("job.warning", kind="enrich", warnings=[f"warning {n}"])
        assert vault.activity.flush()
        assert [e.text for e in vault.activity()] == [f"warning {n}" for n in range(11, 6, -1)]
