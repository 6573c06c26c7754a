"""A demo vault to look at: two LoCoMo conversations, the owner's own chat with a contradiction, documents.

    python -m bench.demo_vault [--out DIR] [--data DIR] [--conversations 2] [--force]

Builds ``DIR/vault`` (default ``bench/out/demo/vault``) with the rule path and the hashing embedder, so it works
offline and looks the same on every machine:

* one or two LoCoMo development conversations (``--data``, default ``../shared/bench-data/locomo-dev``), imported
  through ``vault.conversations.import_summary`` as a person would import a transcript;
* a short chat of the vault's owner in two conversations that contradict each other (Lisbon, then Porto), which
  leaves an open conflict;
* two Markdown notes and a paged PDF from :mod:`bench.doc_corpus` in ``DIR/documents`` (ingested, then watched),
  a "Reports" collection, and a damaged PDF that ends up in quarantine;

then waits until enrichment and document summaries are done.  An existing demo vault is reused unless ``--force``.
Open it with ``cairn --vault DIR/vault``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from app.plugins import build_plugin_manager
from bench.common import DEFAULT_LOCOMO, ROOT, locomo_files
from bench.doc_corpus import generate
from engine.config import Settings
from engine.events import EventIn
from engine.vault import Vault

DEFAULT_OUT = ROOT / "bench" / "out" / "demo"
MANIFEST = "demo.json"
SETTINGS = {"llm.provider": "simple", "embedder.provider": "hashing"}
IDLE_TIMEOUT_S = 900.0
OWNER_CHAT = (
    ("desk", "user", "Hi! I'm setting up my notes for the new job.", "2026-03-02T09:00:00Z"),
    ("desk", "user", "I work as a nurse at St Mary's hospital.", "2026-03-02T09:01:00Z"),
    ("desk", "assistant", "Congratulations on the new position!", "2026-03-02T09:01:30Z"),
    ("desk", "user", "I live in Lisbon.", "2026-03-02T09:02:00Z"),
    ("desk", "user", "My sister Anna loves React.", "2026-03-02T09:03:00Z"),
    ("desk", "user", "My favourite framework is Django.", "2026-03-02T09:04:00Z"),
    ("phone", "user", "I live in Porto.", "2026-03-09T18:30:00Z"),
    ("phone", "user", "I prefer trains over planes for trips under 600 km.", "2026-03-09T18:31:00Z"),
)
"""The owner's own turns: a job, a sister, preferences, and two places to live (the conflict)."""
BROKEN_PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n% the scanner stopped writing here\n"


@dataclass(frozen=True, slots=True)
class DemoVault:
    """Where the demo is and what it holds (written to ``DIR/demo.json``)."""

    vault: str
    documents: str
    data: str
    conversations: list[str]
    events: int
    facts: int
    open_conflicts: int
    document_ids: list[int]
    collection_id: int
    quarantine_ids: list[int]
    build_s: float


def _write_documents(folder: Path) -> list[Path]:
    """Two Markdown notes and a PDF from the benchmark corpus, plus a damaged PDF."""
    generate(folder, markdown=2, pdf=1, pages=4, seed=11)
    (folder / "manifest.json").unlink(missing_ok=True)  # the corpus's own index is not a document
    (folder / "pdf" / "scan-damaged.pdf").write_bytes(BROKEN_PDF)
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _owner_chat(vault: Vault) -> None:
    events = [
        EventIn(conversation_id=conv, role=role, content=text, occurred_at=when)
        for conv, role, text, when in OWNER_CHAT
    ]
    vault.ingest_events(events)


def build(out: Path, data: Path, conversations: int) -> DemoVault:
    """Build the demo vault under ``out`` (an existing one is replaced)."""
    started = time.monotonic()
    vault_dir, documents = out / "vault", out / "documents"
    for folder in (vault_dir, documents):
        if folder.exists():
            shutil.rmtree(folder)
    files = locomo_files(data)[:conversations]
    if not files:
        raise SystemExit(f"no LoCoMo conversations in {data} (set --data)")
    vault = Vault.open(vault_dir, settings=Settings().updated(SETTINGS), plugins=build_plugin_manager())
    try:
        vault.update_settings(SETTINGS)  # saved, so the app opens the demo the same way
        imported = []
        for path in files:
            summary = vault.conversations.import_summary(path)
            print(f"imported {path.name}: {summary.events_added} turns", file=sys.stderr)
            imported.append(path.name)
        _owner_chat(vault)
        _write_documents(documents)
        progress = list(vault.ingest_paths([documents]))[-1]
        print(f"documents: {progress.ok} read, {progress.quarantined} quarantined", file=sys.stderr)
        by_name = {d.name: d.id for d in vault.documents()}
        reports = vault.collections.create("Reports", description="Quarterly reports and the notes about them")
        pdfs = [i for name, i in by_name.items() if name.endswith(".pdf")]
        vault.collections.add(reports.id, [*pdfs, by_name.get("note-000.md", pdfs[0])])
        vault.watch(documents)
        vault.rescan(documents)
        print("waiting for enrichment and summaries…", file=sys.stderr)
        if not vault.wait_idle(IDLE_TIMEOUT_S):
            raise SystemExit(f"background work did not finish within {IDLE_TIMEOUT_S:.0f} s")
        counts = vault.counts()
        demo = DemoVault(
            vault=str(vault_dir),
            documents=str(documents),
            data=str(data.resolve()),
            conversations=imported,
            events=counts.events,
            facts=counts.facts,
            open_conflicts=counts.open_conflicts,
            document_ids=sorted(by_name.values()),
            collection_id=reports.id,
            quarantine_ids=[q.id for q in vault.documents.quarantine()],
            build_s=round(time.monotonic() - started, 1),
        )
    finally:
        vault.close()
    (out / MANIFEST).write_text(json.dumps(asdict(demo), indent=1), encoding="utf-8")
    return demo


def load(out: Path) -> DemoVault | None:
    """The demo described in ``out``, if it was built completely."""
    manifest = out / MANIFEST
    if not manifest.is_file() or not (out / "vault" / "vault.db").is_file():
        return None
    try:
        return DemoVault(**json.loads(manifest.read_text(encoding="utf-8")))
    except (TypeError, ValueError):
        return None


def ensure(out: Path, data: Path = DEFAULT_LOCOMO, conversations: int = 2, *, force: bool = False) -> DemoVault:
    """The demo vault under ``out``: reused when complete, built otherwise."""
    existing = None if force else load(out)
    if existing is not None:
        return existing
    (out / MANIFEST).unlink(missing_ok=True)  # a half-built demo is never mistaken for a finished one
    return build(out, data, conversations)


def main(argv: Sequence[str] | None = None) -> int:
    """Build (or reuse) the demo vault and say where it is."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for vault/ and documents/")
    parser.add_argument("--data", type=Path, default=DEFAULT_LOCOMO, help="LoCoMo development data")
    parser.add_argument("--conversations", type=int, default=2, choices=(1, 2), help="LoCoMo conversations")
    parser.add_argument("--force", action="store_true", help="rebuild even if a demo vault exists")
    args = parser.parse_args(argv)
    demo = ensure(args.out.resolve(), args.data, args.conversations, force=args.force)
    print(
        f"Demo vault: {demo.vault}\n  {demo.events:,} events, {demo.facts:,} facts, {demo.open_conflicts} open "
        f"conflict(s), {len(demo.document_ids)} documents, {len(demo.quarantine_ids)} quarantined "
        f"(built in {demo.build_s:.0f} s)\nOpen it with: cairn --vault {demo.vault}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
