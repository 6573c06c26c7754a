"""Tables kept whole (issue 27): a PDF statement is stored as one table beside its spans, and recall shows a span
inside it as the whole table — caption, column years and every row — while the searched units stay the spans.

Real vaults in temp folders, real PDFs through the real parser in its sandbox.
"""

from __future__ import annotations

from pathlib import Path

from engine.forget import ForgetScope
from engine.plugin_api import ParseLimits
from engine.privacy import apply as firewall_apply
from engine.restore import restore_vault
from engine.vault import Vault
from plugins.parsers.pdf import PdfParser
from tests.engine.documents.support import open_vault, recall, settings_with, span_blocks
from tests.plugins import parser_pdf as pdfs

CAPTION = "Consolidated Statement of Cash Flows\nYears ended December 31"
YEARS = "(Millions) 2018 2017 2016"


def tables_of(vault: Vault, document_id: int) -> list[tuple[int, int, int, str]]:
    return [
        (int(r[0]), int(r[1]), int(r[2]), str(r[3]))
        for r in vault.store.query(
            "SELECT start_char, end_char, header_chars, text FROM document_tables WHERE document_id = ? "
            "ORDER BY start_char",
            (document_id,),
        )
    ]


def test_a_span_inside_a_statement_shows_the_whole_statement_with_its_caption_and_column_years(
    tmp_path: Path,
) -> None:
    data = pdfs.statement_pdf()
    parsed = PdfParser().parse(data, name="harbor.pdf", limits=ParseLimits())
    with open_vault(tmp_path / "v") as vault:
        doc = vault.documents.upload(name="harbor.pdf", data=data).document_id
        assert doc is not None
        [(start, end, header, text)] = tables_of(vault, doc)
        assert text == parsed.text[start:end] and text[:header].rstrip().endswith(CAPTION)
        assert text.endswith("Zephyrine rebates received 1,999 (497) 3,189")

        result = recall(vault, "zephyrine rebates", document_id=doc)
        hit = next(b for b in span_blocks(result) if "Zephyrine" in b.content)
        # the ranked unit is still the span: a few rows, without the caption or the first rows
        assert CAPTION not in hit.content and "Quillwort" not in hit.content
        assert hit.meta["table"]["whole"] is True
        shown = result.llm_context.text
        # what the model reads is the statement: caption, column years, the first row and the asked one together
        for part in (CAPTION, YEARS, "Quillwort harvest receipts 1,000 (200) 3,000", "Zephyrine rebates received"):
            assert part in shown, part
        assert "integral part" not in text  # the closing sentence is no row


def test_two_spans_of_one_table_show_it_once(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v") as vault:
        doc = vault.documents.upload(name="harbor.pdf", data=pdfs.statement_pdf()).document_id
        result = recall(vault, "quillwort harvest receipts and zephyrine rebates", document_id=doc)
        in_table = [b for b in span_blocks(result) if b.meta.get("table")]
        assert len(in_table) >= 2 and len({b.meta["table"]["id"] for b in in_table}) == 1
        assert result.llm_context.text.count(YEARS) == 1


def test_a_table_too_long_for_what_is_left_of_the_budget_leaves_its_span(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v") as vault:
        doc = vault.documents.upload(name="harbor.pdf", data=pdfs.statement_pdf()).document_id
        result = recall(vault, "zephyrine rebates", document_id=doc, token_budget=330)
        assert result.llm_context.tokens <= 330
        assert YEARS not in result.llm_context.text  # the table would not fit …
        hit = next(b for b in span_blocks(result) if "Zephyrine" in b.content)
        assert ("span", hit.id) in result.llm_context.items  # … so the span stands alone


def test_table_text_passes_the_firewall(tmp_path: Path) -> None:
    rows = (*pdfs.STATEMENT_ROWS[:-1], "Refunds to quill@example.com")
    data = pdfs.statement_pdf(rows)
    with open_vault(tmp_path / "v") as vault:
        doc = vault.documents.upload(name="harbor.pdf", data=data).document_id
        [(_start, _end, _header, text)] = tables_of(vault, doc)
        assert "quill@example.com" not in text and "[EMAIL]" in text
        assert text == firewall_apply(text, vault.settings.privacy).text
        shown = recall(vault, "refunds", document_id=doc).llm_context.text
        assert "[EMAIL]" in shown and "example.com" not in shown


def test_tables_go_with_their_version_and_with_their_document(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v") as vault:
        doc = vault.documents.upload(name="harbor.pdf", data=pdfs.statement_pdf()).document_id
        assert doc is not None and len(tables_of(vault, doc)) == 1
        renamed = tuple(label.replace("Zephyrine", "Marigold") for label in pdfs.STATEMENT_ROWS)
        vault.documents.upload(name="harbor.pdf", data=pdfs.statement_pdf(renamed), document_id=doc)
        [(_s, _e, _h, text)] = tables_of(vault, doc)
        assert "Marigold" in text and "Zephyrine" not in text
        assert "Marigold" in recall(vault, "marigold rebates", document_id=doc).llm_context.text

        plain = vault.documents.upload(name="notes.md", text="# Notes\n\nNo table here.").document_id
        assert plain is not None and tables_of(vault, plain) == []
        small = "# Notes\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
        held = vault.documents.upload(name="small.md", text=small).document_id
        assert held is not None and tables_of(vault, held) == []  # one span holds it whole: its text says it all
        vault.documents.delete(doc)
        assert vault.store.scalar("SELECT COUNT(*) FROM document_tables") == 0

        again = vault.documents.upload(name="harbor.pdf", data=pdfs.statement_pdf()).document_id
        vault.forget(ForgetScope(document_id=again))
        assert vault.store.scalar("SELECT COUNT(*) FROM document_tables") == 0


def test_a_restored_vault_keeps_its_tables_and_shows_them(tmp_path: Path) -> None:
    settings = settings_with()
    with open_vault(tmp_path / "v", settings=settings) as vault:
        doc = vault.documents.upload(name="harbor.pdf", data=pdfs.statement_pdf()).document_id
        before = tables_of(vault, doc)
        vault.export(tmp_path / "cairn.zip")
    restore_vault(tmp_path / "cairn.zip", tmp_path / "r", settings=settings)
    with open_vault(tmp_path / "r", settings=settings) as restored:
        assert tables_of(restored, doc) == before
        shown = recall(restored, "zephyrine rebates", document_id=doc).llm_context.text
        assert CAPTION in shown and YEARS in shown and "Quillwort harvest receipts" in shown


def test_a_markdown_table_reaches_the_model_whole_with_its_header_row(tmp_path: Path) -> None:
    rows = "\n".join(
        f"| {label} | {1000 + 37 * k:,} | {3000 + 7 * k:,} |" for k, label in enumerate(pdfs.STATEMENT_ROWS)
    )
    text = f"# Harbor\n\nCash flows by line, in millions:\n\n| Line | 2018 | 2017 |\n|---|---|---|\n{rows}\n"
    with open_vault(tmp_path / "v") as vault:
        doc = vault.documents.upload(name="harbor.md", text=text).document_id
        assert doc is not None and len(tables_of(vault, doc)) == 1
        shown = recall(vault, "zephyrine rebates", document_id=doc).llm_context.text
        assert "Cash flows by line, in millions:" in shown and "Line | 2018 | 2017" in shown
        assert "Quillwort harvest receipts | 1,000" in shown and "Zephyrine rebates received" in shown


def test_a_recall_helper_process_shows_the_table_as_this_process_does(tmp_path: Path) -> None:
    from engine.recall.ranker import INLINE
    from engine.recall.types import RecallRequest

    with open_vault(tmp_path / "v", settings=settings_with(recall__processes=1)) as vault:
        doc = vault.documents.upload(name="harbor.pdf", data=pdfs.statement_pdf()).document_id
        processes = vault.start_recall_processes()
        assert processes is not None and processes.wait_ready(120), "the helper did not start"
        question = vault._recall._understand(  # type: ignore[attr-defined]
            RecallRequest(conversation_id="c", query="zephyrine rebates", document_id=doc)
        )
        remote = processes.rank(question)
        local = vault._recall.ranker.rank(question, INLINE)  # type: ignore[attr-defined]
        assert remote is not None and remote.llm_context.text == local.llm_context.text
        assert YEARS in remote.llm_context.text
