"""Export and restore: a vault written to one archive and rebuilt in a new folder holds the same rows, answers recall
the same, keeps documents' original files, leaves secrets out, and never overwrites anything."""

from __future__ import annotations

import json
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.plugins import build_plugin_manager
from engine import Settings, Vault
from engine.archive import KINDS, MANIFEST, SETTINGS
from engine.conversations import set_title
from engine.errors import Conflict, ValidationError, VaultTooNew
from engine.events import EventIn
from engine.forget import ForgetScope
from engine.recall.types import RecallRequest
from engine.restore import restore_vault

SECRET = "sk-live-archive-9f8e7d"
QUESTIONS = (
    "Where do I live?",
    "What is my job?",
    "What does Mira teach?",
    "When is the climbing trip?",
    "What milk do I prefer?",
    "quarry climbing group",
)


def offline(**changes: Any) -> Settings:
    return Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing", **changes})


def turns() -> list[EventIn]:
    said = [
        ("c1", "default", "I live in Berlin.", "2024-01-05T09:00:00Z"),
        ("c1", "default", "I work as a nurse at the Charité.", "2024-01-05T09:01:00Z"),
        ("c1", "default", "I prefer oat milk in my coffee.", "2024-01-05T09:02:00Z"),
        ("c2", "default", "My friend Mira teaches chess on Tuesdays.", "2024-02-10T18:00:00Z"),
        ("c2", "default", "We are planning a climbing trip in October.", "2024-02-10T18:01:00Z"),
        ("c3", "default", "I moved from Berlin to Lisbon.", "2024-06-01T08:00:00Z"),
        ("c3", "default", "Actually I don't like oat milk anymore, I prefer almond milk.", "2024-06-01T08:02:00Z"),
        ("t1", "other", "I like green tea and I live in Hanoi.", "2024-03-03T12:00:00Z"),
    ]
    return [EventIn(conversation_id=c, user_id=u, content=t, occurred_at=at) for c, u, t, at in said]


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[Vault]:
    """A vault holding turns of two users, their facts (one changed, one contested), a titled conversation, a
    document read from a file (so its original can travel), a collection, a fact edited by hand and a forget."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "climbing.md").write_text(
        "# Climbing\n\n## Quarry\n\nMira leads the Tuesday climbing group at the old quarry.\n"
        "\n## Gear\n\nBring a harness, chalk and two locking carabiners.\n",
        encoding="utf-8",
    )
    settings = offline(**{"documents.allowed_roots": [str(notes)], "llm.openai_api_key": SECRET})
    v = Vault.open(tmp_path / "vault", settings=settings, plugins=build_plugin_manager(load_entry_points=False))
    v.update_settings({"llm.openai_api_key": SECRET, "recall.token_budget": 1200})
    v.events.ingest(turns())
    v.store.write(lambda tx: set_title(tx, "default", "c1", "Moving to Lisbon", "test"))
    doc = v.documents.upload(path=notes / "climbing.md")
    v.documents.upload(name="pasted.md", text="# Pasted\n\nThe wifi password hint is the cat's name.\n")
    shelf = v.collections.create("Hobbies", description="things I do")
    v.collections.add(shelf.id, [doc.document_id])
    assert v.jobs.wait_idle(120)
    v.forget(ForgetScope(conversation_id="nothing-here", purge_backups=False))  # a receipt to carry
    try:
        yield v
    finally:
        v.close()


def table_rows(vault: Vault) -> dict[str, list[tuple[Any, ...]]]:
    """Every exported table's rows (with their link tables), in a stable order."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for kind in KINDS:
        where = f" WHERE {kind.where}" if kind.where else ""
        out[kind.name] = sorted(map(tuple, vault.store.query(f"SELECT * FROM {kind.table}{where}")), key=repr)
        for link in kind.links:
            out[link.table] = sorted(map(tuple, vault.store.query(f"SELECT * FROM {link.table}")), key=repr)
    out["jobs"] = sorted(((r[0], r[1], r[2]) for r in out["jobs"]), key=repr)  # status and timing move on
    out["activity"] = [r for r in out["activity"] if r[2] != "export"]  # the export itself is noted after it
    return out


def answers(vault: Vault) -> list[tuple[str, list[tuple[str, int]]]]:
    got = []
    for question in QUESTIONS:
        result = vault.recall(RecallRequest(conversation_id="asker", query=question, user_id="default"))
        got.append((result.llm_context.text, [(b.kind, b.id) for b in result.blocks]))
    return got


def test_a_vault_restored_from_its_export_holds_the_same_and_answers_the_same(filled: Vault, tmp_path: Path) -> None:
    archive = tmp_path / "out" / "cairn.zip"
    archive.parent.mkdir()
    stages: list[str] = []
    report = filled.export(archive, progress=lambda stage, done, total: stages.append(stage))
    assert report.counts["events"] == 8 and report.counts["documents"] == 2 and report.counts["collections"] == 1
    assert report.originals == 1 and report.originals_missing == 1  # the pasted text had no file
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    assert not list(archive.parent.glob("*.part"))
    assert {"export", "originals"} <= set(stages)

    raw = archive.read_bytes()
    with zipfile.ZipFile(archive) as zf:
        blob = b"".join(zf.read(n) for n in zf.namelist())
        manifest = json.loads(zf.read(MANIFEST))
        carried = json.loads(zf.read(SETTINGS))
        first_fact = json.loads(zf.read("facts.jsonl").splitlines()[0])
    assert SECRET.encode() not in raw and SECRET.encode() not in blob
    assert filled.endpoint_token().encode() not in blob
    assert manifest["settings"]["left_out"] == ["llm.openai_api_key"]
    assert carried["recall"]["token_budget"] == 1200
    assert manifest["kinds"]["facts"]["count"] == report.counts["facts"] > 0
    assert isinstance(first_fact["metadata"], dict) and isinstance(first_fact["subject_ids"], list)
    history = [json.loads(line)["status"] for line in zf_lines(archive, "facts.jsonl")]
    assert "superseded" in history  # facts travel with their history

    filled.activity.flush()
    before_rows, before_answers, before_counts = table_rows(filled), answers(filled), filled.counts()
    assert [r[2] for r in before_rows["activity"]] == ["forget"]  # the forget's note travelled with the archive
    restored_root = tmp_path / "restored"
    restored = restore_vault(archive, restored_root, settings=offline(), progress=lambda *a: stages.append(a[0]))
    assert restored.source_kind == "archive" and restored.vectors_pending == 0
    assert {"restore", "vectors"} <= set(stages)
    with Vault.open(restored_root, settings=offline()) as again:
        assert again.counts() == before_counts
        assert table_rows(again) == before_rows
        assert answers(again) == before_answers
        assert again.vault_id() != filled.vault_id()
        status = again.vector_status()
        assert status.queued == 0 and status.remaining == 0
        embedded = again.store.scalar("SELECT COUNT(*) FROM embeddings")
        assert embedded == filled.store.scalar("SELECT COUNT(*) FROM embeddings")
        (doc_id,) = [r[0] for r in again.store.query("SELECT id FROM documents WHERE name = 'climbing.md'")]
        original = again.paths.originals / str(doc_id) / "climbing.md"
        assert original.read_text(encoding="utf-8").startswith("# Climbing")
        assert stat.S_IMODE(original.stat().st_mode) == 0o600
        again.documents.delete(doc_id)
        assert not (again.paths.originals / str(doc_id)).exists()  # a deleted document's original goes with it


def zf_lines(archive: Path, name: str) -> list[bytes]:
    with zipfile.ZipFile(archive) as zf:
        return [line for line in zf.read(name).splitlines() if line.strip()]


def test_the_archive_settings_are_used_when_none_are_given(filled: Vault, tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    filled.export(archive)
    restore_vault(archive, tmp_path / "r", env={})
    written = (tmp_path / "r" / "settings.toml").read_text(encoding="utf-8")
    assert "token_budget = 1200" in written and SECRET not in written
    assert stat.S_IMODE((tmp_path / "r" / "settings.toml").stat().st_mode) == 0o600


def test_forgetting_a_restored_document_removes_its_original(filled: Vault, tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    filled.export(archive)
    restore_vault(archive, tmp_path / "r", settings=offline())
    with Vault.open(tmp_path / "r", settings=offline()) as again:
        assert len(list(again.paths.originals.iterdir())) == 1
        again.forget(ForgetScope(user_id="default"))
        assert list(again.paths.originals.iterdir()) == []


def test_a_backup_restores_into_a_new_vault_of_its_own(filled: Vault, tmp_path: Path) -> None:
    backup = filled.backups.now()
    report = restore_vault(backup.path, tmp_path / "from-backup", settings=offline())
    assert report.source_kind == "backup"
    with Vault.open(tmp_path / "from-backup", settings=offline()) as again:
        assert again.counts() == filled.counts()
        assert again.vault_id() != filled.vault_id()
        assert answers(again) == answers(filled)


def test_a_restore_never_overwrites(filled: Vault, tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    filled.export(archive)
    with pytest.raises(Conflict, match="already holds a vault"):
        restore_vault(archive, filled.paths.root, settings=offline())
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    with pytest.raises(Conflict, match="other files"):
        restore_vault(archive, busy, settings=offline())
    assert [p.name for p in busy.iterdir()] == ["keep.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    restore_vault(archive, empty, settings=offline())
    assert (empty / "vault.db").exists()


def rewritten(archive: Path, target: Path, change: dict[str, bytes | None]) -> Path:
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(target, "w") as dst:
        for name in src.namelist():
            if name in change:
                if change[name] is not None:
                    dst.writestr(name, change[name])
            else:
                dst.writestr(name, src.read(name))
    return target


def test_a_damaged_or_foreign_archive_is_refused_and_leaves_no_folder(filled: Vault, tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    filled.export(archive)
    events = zf_lines(archive, "events.jsonl")
    cases = {
        "not JSON": rewritten(archive, tmp_path / "b1.zip", {"events.jsonl": b"\n".join(events)[:-9]}),
        "lacks events.jsonl": rewritten(archive, tmp_path / "b2.zip", {"events.jsonl": None}),
        "no manifest": rewritten(archive, tmp_path / "b3.zip", {MANIFEST: None}),
        "names a missing": rewritten(archive, tmp_path / "b4.zip", {"subjects.jsonl": b""}),
    }
    for expected, bad in cases.items():
        target = tmp_path / f"r-{bad.stem}"
        with pytest.raises(ValidationError, match=expected):
            restore_vault(bad, target, settings=offline())
        assert not target.exists()
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ValidationError, match="neither a Cairn export nor a vault backup"):
        restore_vault(text, tmp_path / "r-text", settings=offline())
    manifest = json.loads(zipfile.ZipFile(archive).read(MANIFEST))
    newer = rewritten(
        archive, tmp_path / "newer.zip", {MANIFEST: json.dumps({**manifest, "schema_version": 999}).encode()}
    )
    with pytest.raises(VaultTooNew, match="newer Cairn"):
        restore_vault(newer, tmp_path / "r-newer", settings=offline())
    assert not (tmp_path / "r-newer").exists()


def test_export_names_a_bad_target(filled: Vault, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="is a folder"):
        filled.export(tmp_path)
    with pytest.raises(ValidationError, match="does not exist"):
        filled.export(tmp_path / "no" / "such" / "a.zip")
