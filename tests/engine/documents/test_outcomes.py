"""Every document outcome says what happened: odd markup is read, binary content is refused, an empty file is
degraded with its reason, and a quarantined file uploaded again answers its reason and detail as the first time.

Real vaults, real sandboxed parses.
"""

from __future__ import annotations

import codecs
import random
from pathlib import Path

import pytest

from engine.documents.content import binary_content
from tests.engine.documents.support import finds, open_vault
from tests.plugins import parser_pdf as pdfs

pytestmark = pytest.mark.timeout(120)

HUGE_DECIMAL = "&#" + "9" * 100_000 + ";"
HUGE_ZEROS = "&#" + "0" * 100_000 + "65;"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("entity.html", f"<html><body><p>The heron {HUGE_DECIMAL} returned to the marsh.</p></body></html>"),
        ("zeros.html", f"<p>The heron returned {HUGE_ZEROS} to the marsh.</p>"),
        ("block.md", f"# Marsh\n\n<div>The heron {HUGE_DECIMAL} returned to the marsh.</div>\n"),
    ],
)
def test_a_numeric_entity_of_100000_digits_is_read_not_a_crash(tmp_path: Path, name: str, text: str) -> None:
    with open_vault(tmp_path / "v") as vault:
        result = vault.documents.upload(name=name, text=text)
        assert result.status == "processing", result
        assert vault.documents.quarantine() == []
        assert finds(vault, "heron")
        stored = " ".join(s.text for section in vault.documents.get(result.document_id).sections for s in section.spans)  # type: ignore[arg-type]
        if name == "zeros.html":
            assert "returned A to" in stored  # leading zeros are no reason to fail: &#000…065; is "A"


def binary_bytes(size: int = 8192, seed: int = 7) -> bytes:
    """Bytes like a compressed image or archive: uniformly random."""
    return random.Random(seed).randbytes(size)


@pytest.mark.parametrize("name", ["photo.md", "archive.txt", "page.html"])
def test_binary_content_under_a_text_name_is_refused_with_the_reason_and_text_is_not(tmp_path: Path, name: str) -> None:
    data = binary_bytes()
    with open_vault(tmp_path / "v") as vault:
        result = vault.documents.upload(name=name, data=data)
        assert result.status == "quarantined" and result.document_id is None
        assert result.reason.startswith("invalid: binary content, not ")
        assert "NUL bytes" in result.reason and "a binary file with a text file's name?" in result.reason
        assert vault.documents() == []
        [held] = vault.documents.quarantine()
        assert held.reason == "invalid" and held.detail.startswith("binary content") and held.size_bytes == len(data)
        # text stays text: a stray control byte on every line, UTF-16 with and without a byte-order mark, colours
        texts = {
            "log.txt": b"The ferry leaves at dawn.\x00\x07 It returns at dusk.\n" * 20,
            "wide.txt": "The lighthouse keeper logs the ships.".encode("utf-16-le"),
            "bom.md": codecs.BOM_UTF16_BE + "# Tide\n\nLow at noon.".encode("utf-16-be"),
            "build.log": b"\x1b[32mok\x1b[0m compiled the harbour module\n" * 50,
        }
        assert [vault.documents.upload(name=n, data=d).status for n, d in texts.items()] == ["processing"] * 4
        assert all(finds(vault, word) for word in ("ferry", "lighthouse", "noon", "harbour"))


def test_binary_content_detection() -> None:
    assert binary_content(b"") is None
    assert binary_content("plain words, naïve café ☃\n\ttabbed\r\n\x0c".encode() * 100) is None
    assert (
        binary_content(b"\x7fELF\x02\x01\x01" + bytes(200))
        == "200 NUL bytes and 3 other control bytes in its first 207 bytes"
    )
    assert binary_content(bytes(range(1, 32)) * 10) is not None  # no NUL at all, still binary
    assert binary_content(codecs.BOM_UTF32_LE + "text".encode("utf-32-le")) is None


def test_an_empty_file_is_degraded_and_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "empty.md"
    empty.write_bytes(b"")
    with open_vault(tmp_path / "v") as vault:
        result = vault.documents.upload(path=empty)
        assert (result.status, result.reason) == ("degraded", "empty file: 0 bytes, nothing to index")
        [listed] = vault.documents()
        assert (listed.status, listed.status_reason, listed.spans) == ("degraded", result.reason, 0)
        assert vault.jobs.queue_depth() == 0, "nothing to distil"
        again = vault.documents.upload(path=empty)
        assert (again.status, again.reason) == ("unchanged", result.reason)


def test_a_repeated_quarantine_keeps_and_answers_its_detail(tmp_path: Path) -> None:
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(pdfs.garbage_with_header(seed=3))
    with open_vault(tmp_path / "v") as vault:
        first = vault.documents.upload(path=scan)
        again = vault.documents.upload(path=scan)
        renamed = vault.documents.upload(name="copy.pdf", data=scan.read_bytes())
        assert first.status == again.status == renamed.status == "quarantined"
        reason, _, detail = again.reason.partition(": ")
        assert reason == "invalid" and detail, "the parser's words, as the first time"
        assert again.reason == first.reason == renamed.reason
        assert again.quarantine_id == first.quarantine_id == renamed.quarantine_id
        [held] = vault.documents.quarantine()
        assert f"{held.reason}: {held.detail}" == first.reason
