"""A demo vault to look at: two LoCoMo conversations, the owner's own chat with a contradiction, documents.

    python -m bench.demo_vault [--out DIR] [--data DIR] [--conversations 2] [--force]

Builds ``DIR/vault`` (default ``bench/out/demo/vault``) with the rule path and the hashing embedder, so it works
offline and looks the same on every machine:

* one or two LoCoMo development conversations (``--data``, default ``../shared/bench-data/locomo-dev``), imported
  through ``vault.conversations.import_summary`` as a person would import a transcript;
* a short chat of the vault's owner in two conversations that contradict each other (Lisbon, then Porto), which
  leaves an open conflict;
* the owner's documents in ``DIR/documents`` (ingested, then watched): two Markdown notes (the ward's handover
  routine, a moving checklist) and the ward's quarterly report, a paged PDF with numbered headings (written with
  :func:`bench.doc_corpus.pdf_bytes`); a "Reports" collection; and a damaged PDF that ends up in quarantine;

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
from bench.doc_corpus import pdf_bytes
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


def _note(*blocks: str | tuple[str, ...]) -> str:
    """A Markdown note: blocks apart by a blank line; a tuple is one block of lines (a list, a table)."""
    return "\n\n".join(b if isinstance(b, str) else "\n".join(b) for b in blocks) + "\n"


# Paragraphs on one line each, as an editor that wraps softly saves them.
HANDOVER_NOTE = _note(
    ("---", 'title: "Ward 4B handover routine"', "date: 2026-03-04", "tags: [work, nursing, handover]", "---"),
    "# Ward 4B handover routine",
    "Handover on Ward 4B happens at 07:30, 14:30 and 21:30 at the nurses' station, never at the bedside unless a "
    "patient asks to take part. It takes fifteen minutes for the whole ward: two minutes a bay, then anything that "
    "cannot wait. Sister Okafor runs the day handovers; the nurse in charge runs the night one.",
    "## Before handover",
    (
        "- Print the bay list from the e-record at least ten minutes before, so the night's changes are on it.",
        "- Check the drug round is signed off and the controlled drugs book balances.",
        "- Note every patient who is nil by mouth, on fluid balance or due for theatre.",
        "- Look at the falls and pressure-area scores that changed since the last shift.",
    ),
    "## The order we go in",
    "We use SBAR for every patient: situation, background, assessment, recommendation. New admissions come first, "
    "then anyone whose early warning score rose, then discharges planned for the shift, then everyone else bay by "
    "bay. Anything said about a patient stays at the station.",
    (
        "| Item | Who checks | When |",
        "|------|------------|------|",
        "| Controlled drugs count | Two registered nurses | Every handover |",
        "| Resuscitation trolley | Nurse in charge | Start of the day shift |",
        "| Fridge temperatures | Health care assistant | 07:30 and 21:30 |",
        "| Bed board | Ward clerk | Before each handover |",
    ),
    "## After handover",
    "Each nurse reads the notes of their own patients before the first round and introduces themselves at every bed "
    "within the first hour. Questions go to the nurse in charge, not to the colleague who has just gone home; the "
    "bleep for the site manager is 4410.",
    "### Things I keep forgetting",
    "Sign the handover sheet, put it in the blue folder, and update the whiteboard with the new names. The discharge "
    "lounge closes at 20:00 on weekdays and at 16:00 at weekends, so transport has to be booked before lunch.",
)
MOVING_NOTE = _note(
    ("---", 'title: "Moving to Porto"', "date: 2026-03-09", "tags: [personal, move, checklist]", "---"),
    "# Moving to Porto",
    "The flat in Bonfim is ours from the first of April. The contract is signed for two years, with the deposit of "
    "two months' rent paid on the ninth of March. The removal van is booked for Saturday the 28th, leaving Lisbon at "
    "eight in the morning.",
    "## Paperwork",
    (
        "- Change the address on the citizen card at the Loja do Cidadão (book online, takes about three weeks).",
        "- Register with the health centre in Bonfim and ask for the records to be moved from Arroios.",
        "- Tell the bank, the tax office (Finanças portal) and the car insurance about the new address.",
        "- Cancel the Lisbon internet contract: thirty days' notice, so the letter goes out this week.",
    ),
    "## Getting to work",
    "The Alfa Pendular from Porto Campanhã to Lisbon takes just under three hours, so the weekly commute for the two "
    "remaining shifts at St Mary's is by train. The monthly pass is cheaper than flying, and the station is a "
    "ten-minute walk from the flat.",
    (
        "| Option | Door to door | Cost a month |",
        "|--------|--------------|--------------|",
        "| Train (Alfa Pendular) | 3 h 20 min | 180 € |",
        "| Plane (Porto–Lisbon) | 3 h 40 min | 260 € |",
        "| Car | 3 h 30 min | 310 € |",
    ),
    "## Still to decide",
    "Whether to keep the bicycle or sell it before the move, which boxes of books go into storage, and whether Anna "
    "wants the old sofa. The plants travel in the car with us, not in the van.",
)

REPORT_TITLE = "Ward 4B Quarterly Report, Q1 2026"
REPORT: tuple[tuple[int, str] | str, ...] = (
    (1, "1 Summary"),
    "Ward 4B is a 28-bed acute medical ward at St Mary's Hospital. In the first quarter of 2026 it admitted 412 "
    "patients, three per cent more than in the last quarter of 2025, with an average stay of 5.8 days. Bed "
    "occupancy stayed above 95 per cent for ten of the thirteen weeks, which left little room for the winter peak "
    "in January.",
    "Two things went well: falls with harm halved after the new bay-nursing pattern started in February, and every "
    "new starter finished their induction within four weeks. Two things need work: delayed discharges are rising, "
    "and night shifts still depend on agency staff.",
    (1, "2 Staffing"),
    "The ward is funded for 31.4 whole-time equivalent registered nurses and 14.2 health care assistants. At the "
    "end of March 27.0 registered nurse posts were filled. Sickness absence was 4.1 per cent, down from 5.6 per "
    "cent in the previous quarter, mostly because the norovirus outbreak of December did not return.",
    (2, "2.1 Night shifts"),
    "Nights remain the hardest shifts to fill. Agency nurses covered 212 of the 1,183 night shifts this quarter, "
    "eighteen per cent, against a target of ten per cent. Most gaps fell on Fridays and Sundays. The rota now "
    "publishes eight weeks ahead instead of four, and bank staff who book three nights in a month are paid an "
    "enhanced rate.",
    "Each night shift has at least one nurse who has worked on the ward for more than a year. Where that was not "
    "possible, the site manager was told before 18:00 and an experienced nurse was moved from Ward 6A.",
    (2, "2.2 New starters"),
    "Five registered nurses and two health care assistants joined in the quarter. Each was paired with a "
    "preceptor for the first twelve weeks, worked four supernumerary shifts and completed the medicines "
    "management module before taking a bay of their own. All seven are still on the ward.",
    (1, "3 Patient flow"),
    "Most admissions come through the acute medical unit between 14:00 and 22:00, while most discharges happen "
    "after 16:00. That gap is where beds are lost. The board round moved from 11:00 to 09:00 in February so that "
    "medicines to take home can be ordered in the morning.",
    (2, "3.1 Admissions and discharges"),
    "Sixty-one per cent of discharges happened before 17:00 in March, up from forty-four per cent in January. "
    "Delayed transfers of care rose to an average of 4.2 patients a day, mainly people waiting for a care home "
    "place or a package of care at home. The discharge coordinator now joins the Tuesday and Thursday huddles "
    "with social services.",
    (2, "3.2 Falls and pressure care"),
    "There were 19 falls, of which two caused moderate harm, compared with 27 falls and four with harm in the "
    "previous quarter. The difference came from bay nursing: one nurse stays in each six-bed bay during the "
    "evening, when confused patients are most at risk. Two category 2 pressure ulcers developed on the ward; "
    "both were found early at the daily skin check and healed before discharge.",
    (1, "4 Training"),
    "Ninety-three per cent of staff are up to date with mandatory training. Eleven nurses completed the "
    "intravenous therapy course and four the sepsis recognition update. Two health care assistants began the "
    "nursing associate apprenticeship in March and spend one day a week at the university.",
    (1, "5 Plans for the second quarter"),
    "Recruit three registered nurses for nights and bring agency use below twelve per cent by the end of June. "
    "Keep the 09:00 board round and aim for two thirds of discharges before 17:00. Start a discharge lounge "
    "pilot with Ward 6A, so that patients waiting for transport free their bed earlier in the day.",
    "Repeat the staff survey in May. The last one asked for better rest breaks on nights; the new rest room "
    "opens in April next to the ward kitchen.",
)
REPORT_LINE_CHARS = 92
REPORT_LINES_PER_PAGE = 32
REPORT_SIZES = {0: 20.0, 1: 15.0, 2: 12.5}
BODY_SIZE = 10.0
HANDOVER_NAME = "ward-4b-handover.md"
REPORT_NAME = "ward-4b-q1-2026.pdf"
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


def _wrap(paragraph: str, width: int = REPORT_LINE_CHARS) -> list[str]:
    rows: list[str] = []
    for word in paragraph.split():
        if rows and len(rows[-1]) + 1 + len(word) <= width:
            rows[-1] += f" {word}"
        else:
            rows.append(word)
    return rows


def report_pdf() -> bytes:
    """The ward's quarterly report: numbered headings in larger type, wrapped body text and a footer on each page."""
    lines: list[tuple[float, str]] = [(REPORT_SIZES[0], REPORT_TITLE), (BODY_SIZE, "")]
    for part in REPORT:
        if isinstance(part, tuple):
            level, heading = part
            lines += [(REPORT_SIZES[level], heading)]
        else:
            lines += [(BODY_SIZE, row) for row in _wrap(part)] + [(BODY_SIZE, "")]
    pages: list[list[tuple[float, str]]] = []
    for number, start in enumerate(range(0, len(lines), REPORT_LINES_PER_PAGE)):
        chunk = lines[start : start + REPORT_LINES_PER_PAGE]
        while chunk and not chunk[0][1]:
            chunk = chunk[1:]
        pages.append([*chunk, (8.0, f"{REPORT_TITLE} · page {number + 1}")])
    return pdf_bytes(pages, title=REPORT_TITLE, outline=None)


def _write_documents(folder: Path) -> list[Path]:
    """Two Markdown notes and a PDF report of the vault's owner, plus a damaged PDF."""
    (folder / "notes").mkdir(parents=True, exist_ok=True)
    (folder / "reports").mkdir(parents=True, exist_ok=True)
    (folder / "notes" / HANDOVER_NAME).write_text(HANDOVER_NOTE, encoding="utf-8")
    (folder / "notes" / "moving-to-porto.md").write_text(MOVING_NOTE, encoding="utf-8")
    (folder / "reports" / REPORT_NAME).write_bytes(report_pdf())
    (folder / "reports" / "scan-damaged.pdf").write_bytes(BROKEN_PDF)
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _owner_chat(vault: Vault) -> None:
    events = [
        EventIn(conversation_id=conv, role=role, content=text, occurred_at=when)
        for conv, role, text, when in OWNER_CHAT
    ]
    vault.events.ingest(events)


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
        progress = list(vault.watcher.ingest_paths([documents]))[-1]
        print(f"documents: {progress.ok} read, {progress.quarantined} quarantined", file=sys.stderr)
        by_name = {d.name: d.id for d in vault.documents()}
        reports = vault.collections.create(
            "Reports", description="The ward's quarterly reports and the routines they refer to"
        )
        pdfs = [i for name, i in by_name.items() if name.endswith(".pdf")]
        vault.collections.add(reports.id, [*pdfs, by_name.get(HANDOVER_NAME, pdfs[0])])
        vault.watcher.watch(documents)
        vault.watcher.rescan(documents)
        print("waiting for enrichment and summaries…", file=sys.stderr)
        if not vault.jobs.wait_idle(IDLE_TIMEOUT_S):
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
