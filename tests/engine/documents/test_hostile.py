"""Hostile files through the vault: every one ends ok, degraded or quarantined with a typed reason, the engine
survives, and recall keeps answering while a parse hangs.

The files are made here (broken PDFs from :mod:`tests.plugins.parser_pdf`, pathological markup); the parsers
that hang, abort or hoard memory are plugins registered for test-only extensions on the vault's plugin manager
(:mod:`tests.engine.documents.plugin_parsers`).  Parsing runs in real worker processes with a 2 s timeout.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.documents.model import UploadResult
from engine.documents.service import PathNotAllowed
from engine.errors import NotFound, ValidationError
from tests.engine.documents.plugin_parsers import (
    AbortParser,
    FlagParser,
    FlagParserV2,
    HangingParser,
    HoardingParser,
    StrayOffsetsParser,
    StrayTableParser,
    TestParsers,
)
from tests.engine.documents.support import finds, open_vault, recall, settings_with
from tests.plugins import parser_pdf as pdfs

pytestmark = pytest.mark.timeout(120)

TIMEOUT_S = 2.0  # documents.parse_timeout_s of these vaults (support.OFFLINE)
HOSTILE_PLUGINS = TestParsers(
    HangingParser(), AbortParser(), HoardingParser(), StrayOffsetsParser(), StrayTableParser()
)
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux")


def good_pdf() -> bytes:
    return pdfs.text_pdf(
        [
            ["Ledger of the lighthouse keeper", "Oil was delivered on Tuesday."],
            ["The second page lists the spare lenses."],
        ]
    )


# name, file bytes, expected upload status, quarantine reason (or None), a word recall must find (or None)
CASES: dict[str, tuple[str, Callable[[], bytes], str, str | None, str | None]] = {
    "truncated-pdf": ("cut.pdf", lambda: pdfs.truncated(good_pdf()), "quarantined", "invalid", None),
    "garbage-after-pdf-header": ("noise.pdf", pdfs.garbage_with_header, "quarantined", "invalid", None),
    "circular-xref-chain": ("loop.pdf", lambda: pdfs.circular_xref(good_pdf()), "processing", None, "lenses"),
    "xref-loop-and-nothing-else": ("xref.pdf", pdfs.dangling_xref_loop, "quarantined", "invalid", None),
    "self-containing-page-tree": ("tree.pdf", pdfs.self_containing_page_tree, "quarantined", "invalid", None),
    "deeply-nested-pdf": ("deep.pdf", pdfs.deep_nesting, "processing", None, "After"),  # read past the nesting
    "decompression-bomb": ("bomb.pdf", pdfs.flate_bomb, "quarantined", "limit", None),
    "bomb-page-among-good-ones": ("mixed.pdf", lambda: pdfs.flate_bomb(text_pages=2), "processing", None, "fine"),
    "ten-thousand-nested-divs": (
        "divs.html",
        lambda: (
            "<html><body>" + "<div>" * 10_000 + "<p>The vellum survived.</p>" + "</div>" * 10_000 + "</body></html>"
        ).encode(),
        "processing",
        None,
        "vellum",
    ),
    "ten-thousand-nested-quotes": (
        "quotes.md",
        lambda: (">" * 10_000 + " buried words\n").encode(),
        "degraded",
        None,
        None,
    ),
    "blank-pdf-pages": ("blank.pdf", lambda: pdfs.text_pdf([[], [], []]), "degraded", None, None),
    "hanging-parser": ("stuck.hang", lambda: b"anything", "quarantined", "timeout", None),
    "aborting-parser": ("boom.abort", lambda: b"anything", "quarantined", "crash", None),
    "offsets-outside-the-text": ("odd.stray", lambda: b"a short text", "quarantined", "crash", None),
    "table-outside-the-text": ("odd.straytable", lambda: b"a short text", "quarantined", "crash", None),
    "memory-hoarding-parser": ("hog.hog", lambda: b"anything", "quarantined", "memory", None),
}


@pytest.mark.parametrize("case", [pytest.param(k, marks=linux_only) if k.startswith("memory") else k for k in CASES])
def test_each_hostile_file_ends_ok_degraded_or_quarantined_and_the_engine_survives(tmp_path: Path, case: str) -> None:
    name, build, status, reason, word = CASES[case]
    data = build()
    with open_vault(tmp_path / "v", plugins=[HOSTILE_PLUGINS]) as vault:
        result = vault.documents.upload(name=name, data=data)  # within the test's timeout: nothing hangs for ever
        assert result.status == status, result
        held = vault.documents.quarantine()
        if reason is None:
            assert held == [] and result.document_id is not None
            info = vault.documents.get(result.document_id).info
            assert info.status == status
        else:
            assert result.document_id is None and vault.documents() == []
            assert [(q.id, q.name, q.reason) for q in held] == [(result.quarantine_id, name, reason)]
            assert held[0].size_bytes == len(data) and held[0].detail
            assert result.reason.startswith(f"{reason}: ")
        if status == "degraded":
            info = vault.documents.get(result.document_id).info
            assert info.spans == 0 and info.status_reason == "no text could be extracted from a non-empty file"
        if word is not None:
            assert finds(vault, word)
        # the engine goes on: the next file parses and is recallable
        after = vault.documents.upload(name="after.md", text="# After\n\nThe heron returned to the marsh.")
        assert after.status == "processing" and finds(vault, "heron")


def test_a_hanging_parse_does_not_stop_recall(tmp_path: Path) -> None:
    hang_s = 8.0  # long enough for recalls on a machine that is busy with other work
    settings = settings_with(documents__parse_timeout_s=hang_s)
    with open_vault(tmp_path / "v", plugins=[HOSTILE_PLUGINS], settings=settings) as vault:
        vault.documents.upload(name="known.md", text="# Known\n\nThe archivist catalogued the quillwort samples.")
        outcome: list[UploadResult] = []
        parse = threading.Thread(
            target=lambda: outcome.append(vault.documents.upload(name="stuck.hang", data=b"forever"))
        )
        started = time.monotonic()
        parse.start()
        while not vault.documents.quarantine() and parse.is_alive() and not _parsing(vault):
            time.sleep(0.01)  # until the hanging parse has reached the sandbox
        answered_meanwhile = 0
        while parse.is_alive():
            result = recall(vault, "quillwort")
            assert any("quillwort" in b.content for b in result.documents)
            answered_meanwhile += parse.is_alive()  # this recall ended while the parse still hung
        parse.join(60)
        assert answered_meanwhile >= 1, "recall answered while the parse hung"
        assert time.monotonic() - started >= hang_s, "the parse really hung until the timeout"
        assert outcome[0].status == "quarantined" and outcome[0].reason.startswith("timeout: ")
        assert [q.reason for q in vault.documents.quarantine()] == ["timeout"]
        assert finds(vault, "quillwort")


def test_a_quarantined_file_is_not_parsed_again_on_re_upload(tmp_path: Path) -> None:
    stuck = tmp_path / "stuck.hang"
    stuck.write_bytes(b"the same bytes")
    with open_vault(tmp_path / "v", plugins=[HOSTILE_PLUGINS]) as vault:
        first = vault.documents.upload(path=stuck)
        assert first.status == "quarantined" and first.quarantine_id is not None
        parses: list[str] = []
        real_parse = vault.documents._parse

        def counted(parser: Any, payload: bytes, name: str, settings: Any) -> Any:
            parses.append(name)
            return real_parse(parser, payload, name, settings)

        vault.documents._parse = counted  # type: ignore[method-assign]
        for again in (
            lambda: vault.documents.upload(path=stuck),
            lambda: vault.documents.upload(name="renamed.hang", data=stuck.read_bytes()),
        ):
            result = again()
            assert parses == [], "answered from the quarantine, without a parse"
            assert (result.status, result.quarantine_id) == ("quarantined", first.quarantine_id)
            assert result.reason.startswith("timeout")
        assert len(vault.documents.quarantine()) == 1
        entry = vault.documents.quarantined(first.quarantine_id)
        assert (entry.path, entry.parser, entry.parser_version) == (str(stuck.resolve()), "hanging", "1")


def test_a_quarantined_file_is_parsed_again_when_it_or_its_parser_changes(tmp_path: Path) -> None:
    flag = tmp_path / "parser-breaks-while-this-exists"
    flag.touch()
    doc = tmp_path / "minutes.flag"
    doc.write_text(f"{flag}\nMinutes of the beekeepers' guild.", encoding="utf-8")
    with open_vault(tmp_path / "v", plugins=[TestParsers(FlagParser())]) as vault:
        first = vault.documents.upload(path=doc)
        assert first.status == "quarantined" and first.reason.startswith("crash: ")
        flag.unlink()  # a parse would succeed now, so a quarantined answer proves that none ran
        again = vault.documents.upload(path=doc)
        assert (again.status, again.quarantine_id) == ("quarantined", first.quarantine_id)
        doc.write_text(f"{flag}\nMinutes of the beekeepers' guild, corrected.", encoding="utf-8")
        changed = vault.documents.upload(path=doc)
        assert changed.status == "processing" and finds(vault, "corrected")
        other = tmp_path / "agenda.flag"
        flag.touch()
        other.write_text(f"{flag}\nAgenda: the swarm season.", encoding="utf-8")
        assert vault.documents.upload(path=other).status == "quarantined"
        flag.unlink()
    with open_vault(tmp_path / "v", plugins=[TestParsers(FlagParserV2())]) as vault:
        upgraded = vault.documents.upload(path=other)  # same bytes, newer parser: parsed again
        assert upgraded.status == "processing" and finds(vault, "swarm")
        assert vault.documents.get(upgraded.document_id).info.parser_version == "2"


def test_retry_parses_a_quarantined_file_again(tmp_path: Path) -> None:
    flag = tmp_path / "parser-breaks-while-this-exists"
    flag.touch()
    doc = tmp_path / "hives.flag"
    doc.write_text(f"{flag}\nInspection notes for the mossy hives.", encoding="utf-8")
    with open_vault(tmp_path / "v", plugins=[TestParsers(FlagParser())]) as vault:
        first = vault.documents.upload(path=doc)
        retried = vault.documents.retry(first.quarantine_id)  # still failing: quarantined again
        assert retried.status == "quarantined" and retried.reason.startswith("crash: ")
        assert [q.id for q in vault.documents.quarantine()] == [retried.quarantine_id]
        with pytest.raises(NotFound):
            vault.documents.quarantined(first.quarantine_id)
        flag.unlink()
        fixed = vault.documents.retry(retried.quarantine_id)
        assert fixed.status == "processing" and fixed.document_id is not None
        assert vault.documents.quarantine() == [] and finds(vault, "mossy")
        assert vault.documents.get(fixed.document_id).info.path == str(doc.resolve())
        with pytest.raises(NotFound):
            vault.documents.retry(retried.quarantine_id)
        flag.touch()
        held = vault.documents.upload(name="pasted.flag", data=f"{flag}\nNo path to go back to.".encode())
        with pytest.raises(ValidationError, match="no longer"):
            vault.documents.retry(held.quarantine_id)


def test_empty_extraction_from_a_non_empty_file_is_degraded_not_empty(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v") as vault:
        scripts = vault.documents.upload(
            name="app.html", text="<html><head><script>var x = 1;</script><style>p{}</style></head></html>"
        )
        spaces = vault.documents.upload(name="spaces.md", text="   \n\n\t\n")
        empty = vault.documents.upload(name="empty.md", data=b"")
        assert (scripts.status, spaces.status, empty.status) == ("degraded", "degraded", "degraded")
        assert empty.reason == "empty file: 0 bytes, nothing to index", "an empty file says so"
        degraded = vault.documents.get(scripts.document_id).info
        assert degraded.status == "degraded" and degraded.spans == 0 and degraded.status_reason
        assert vault.jobs.queue_depth() == 0, "nothing to distil in any of them"
        result = recall(vault, "anything at all", document_id=scripts.document_id)
        assert result.routing.strategy == "DOCUMENT" and result.routing.degraded
        assert "[DOCUMENT UNDERSTANDING STATUS: DEGRADED]" in result.llm_context.text
        assert (
            vault.documents.upload(name="spaces.md", text="   \n\n\t\n", document_id=spaces.document_id).status
            == "unchanged"
        )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux")
def test_an_unreadable_file_is_a_clear_error_and_an_ingest_run_goes_on(tmp_path: Path) -> None:
    unreadable = Path("/proc/self/mem")  # a regular file whose read would fail (EIO): refused before reading
    good = tmp_path / "good.md"
    good.write_text("# Good\n\nThe ferry leaves at dawn.", encoding="utf-8")
    with open_vault(tmp_path / "v", settings=settings_with()) as vault:
        with pytest.raises(PathNotAllowed, match="system folder"):
            vault.documents.upload(path=unreadable, name="mem.txt")
        last = list(vault.watcher.ingest_paths([unreadable, good]))[-1]
        assert (last.done, last.total, last.ok, last.failed) == (2, 2, 1, 1)
        assert any("system folder" in p for p in last.problems)
        assert finds(vault, "ferry")


def _parsing(vault: Any) -> bool:
    """Whether a sandbox worker is busy (the hanging parse has been handed over)."""
    sandbox = vault.documents._sandbox
    return sandbox is not None and bool(sandbox.worker_pids())
