"""Nothing acknowledged is lost: ``cairn serve`` killed with SIGKILL in the middle of concurrent ingests and
document uploads, 6 times in a row (HARDENING.md, "SQLite durability"; ``make bench-durability`` does 100).

The rounds and the checks live in :mod:`bench.durability` (the benchmark runs the same thing for more rounds):
each restart gives back over HTTP everything the previous round acknowledged, and at the end every acknowledged
event and document is in the vault exactly once with its content, ``integrity_check`` is ``ok``, the full-text
indexes match their tables and the vec0 tables match their embeddings rows.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench import durability
from engine import Settings, Vault
from engine.events import EventIn

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX signals")

ROUNDS = 6  # each round starts a server process: the benchmark, not the suite, does many


def test_acknowledged_events_and_documents_survive_sigkill(tmp_path: Path) -> None:
    report = durability.run(tmp_path / "vault", tmp_path / "home", rounds=ROUNDS)
    assert report.problems == []
    assert report.kills_under_load == ROUNDS  # every kill landed while acknowledgements were flowing
    assert report.events_acknowledged > ROUNDS * durability.THREADS  # a real load, not a trickle
    assert report.documents_acknowledged >= ROUNDS  # uploads were acknowledged throughout
    assert report.integrity == "ok"
    assert report.embeddings > 0  # enrichment ran between kills


def test_a_lost_acknowledgement_is_reported(tmp_path: Path) -> None:
    # The checker itself: an event acknowledged but not in the vault, and one stored twice, are both found.
    report = durability.Report()
    acks, docs = durability.Acks(), durability.DocAcks()
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    with Vault.open(tmp_path / "vault", settings=settings, start_workers=False) as vault:
        kept = vault.events.ingest(EventIn(conversation_id="c", content="Turn kept: I like tea.")).event_id
    acks.add(kept, "Turn kept: I like tea.")
    acks.add(kept + 1000, "Turn never stored.")
    acks.add(kept, "Turn kept: I like tea.")  # the same id acknowledged twice
    durability.check_vault(tmp_path / "vault", acks, docs, report)
    assert report.problems == [f"event {kept + 1000} is not stored as acknowledged"]
    assert acks.duplicates == [kept]
    assert report.integrity == "ok"
