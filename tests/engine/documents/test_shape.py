"""The shape a document takes in the vault: heading-only sections fold, sections and spans are capped.

A 0.9 MB Markdown file of 100,000 one-line headings used to become 100,000 sections and spans (and ~850 MB of
resident memory, measured by ``python -m bench.shape``; memory is not asserted here).  Now a heading with no text of
its own joins the next section, and past ``documents.max_sections`` / ``documents.max_spans`` a document is merged
down to the caps — degraded, with a reason saying which cap and what was kept — but never failed, and no text lost.
"""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import pytest

from engine.documents.chunking import SpanCut, cap_sections, cap_spans, fold_heading_only
from engine.plugin_api import ParsedSection
from tests.engine.documents.support import finds, fts_hits, open_vault, settings_with

pytestmark = pytest.mark.timeout(600)


def test_a_file_of_100000_one_line_headings_stays_small(tmp_path: Path) -> None:
    source = tmp_path / "headings.md"
    source.write_text("".join(f"# H{i}\n" for i in range(100_000)), encoding="utf-8")
    assert 850_000 < source.stat().st_size < 950_000
    # parsing 100,000 headings takes a while on a busy machine; the default limit is not what is tested here
    settings = settings_with(documents__parse_timeout_s=300.0)
    with open_vault(tmp_path / "v", settings=settings, start_workers=True) as vault:
        result = vault.documents.upload(name=source.name, data=source.read_bytes())
        assert result.document_id is not None, result
        assert vault.jobs.wait_idle(300)
        info = vault.documents.get(result.document_id).info
        limits = settings.documents
        assert info.sections <= limits.max_sections and info.spans <= limits.max_spans
        assert info.sections == 1, "nothing but headings: one section, titled by the first"
        assert 1_000 < info.spans < 2_000, "the text cut as usual, ~700 characters a span"
        assert (info.status, info.status_reason) == ("ready", None), "folding is not a loss"
        tree = vault.documents.get(result.document_id)
        assert tree.sections[0].title == "H0" and tree.sections[0].distillation
        assert fts_hits(vault, "H99999") and fts_hits(vault, "H0")  # every heading's words are searchable


def chapters(count: int, parts: int) -> str:
    """``count`` chapters with a line of text each, ``parts`` parts under each with a marked sentence."""
    out = []
    for c in range(count):
        out.append(f"# Chapter {c}\n\nChapter {c} opens here.\n")
        for p in range(parts):
            out.append(f"## Part {c}.{p}\n\nThe ledger marks word{c}x{p} in its margin, with care and patience.\n")
    return "\n".join(out)


def test_past_the_caps_a_document_is_degraded_with_a_reason_and_keeps_its_text(tmp_path: Path) -> None:
    settings = settings_with(documents__max_sections=5, documents__max_spans=12)
    with open_vault(tmp_path / "v", settings=settings, start_workers=True) as vault:
        result = vault.documents.upload(name="book.md", text=chapters(10, 30))  # 310 sections
        assert result.status == "degraded" and result.document_id is not None
        assert vault.jobs.wait_idle(120)
        tree = vault.documents.get(result.document_id)
        info = tree.info
        assert info.status == "degraded", "distilled, and still says what the caps did"
        assert info.distillation and all(s.distillation for s in tree.sections)
        assert info.sections <= 5 and info.spans <= 12
        reason = info.status_reason or ""
        assert reason.startswith("section cap: 310 sections, more than documents.max_sections (5)")
        assert "headings below level 1 merged into the sections above them" in reason
        assert re.search(r"span cap: \d+ spans, more than documents.max_spans \(12\)", reason), reason
        assert [s.title for s in tree.sections][:1] == ["Chapter 0"]
        stored = " ".join(span.text for section in tree.sections for span in section.spans)
        missing = [f"word{c}x{p}" for c in range(10) for p in range(30) if f"word{c}x{p}" not in stored]
        assert missing == [], "all the text is kept"
        assert finds(vault, "word9x29")


def test_heading_only_sections_join_the_section_after_them(tmp_path: Path) -> None:
    text = (
        "# Book\n\n## Chapter 1\n\nThe first chapter is about orchards.\n\n## Empty\n\n"
        "## Chapter 2\n\nThe second chapter is about cellars.\n\n## Trailing\n"
    )
    with open_vault(tmp_path / "v") as vault:
        result = vault.documents.upload(name="book.md", text=text)
        tree = vault.documents.get(result.document_id)  # type: ignore[arg-type]
    assert (result.status, result.reason) == ("processing", "")
    assert [s.title for s in tree.sections] == ["Chapter 1", "Chapter 2"]
    first, second = (" ".join(span.text for span in s.spans) for s in tree.sections)
    assert first.startswith("Book") and "orchards" in first  # the heading's words lead the next section
    assert second.startswith("Empty") and second.rstrip().endswith("Trailing")  # the last joins the one before


# -- the shaping functions on their own --------------------------------------------------------------------------
def test_folding_keeps_sections_with_text_and_leaves_disordered_ones_alone() -> None:
    text = "Alpha\n\nBody of alpha.\n\nBeta\n\nGamma\n\nBody of gamma."
    sections = [
        ParsedSection("Alpha", 1, 0, 22),
        ParsedSection("Beta", 1, 22, 28),
        ParsedSection("Gamma", 1, 28, len(text)),
    ]
    assert fold_heading_only(text, sections) == [
        ParsedSection("Alpha", 1, 0, 22),
        ParsedSection("Gamma", 1, 22, len(text)),
    ]
    disordered = [sections[2], sections[0], sections[1]]
    assert fold_heading_only(text, disordered) == disordered
    long_line = "x" * 500  # a one-line section that is text, not its (shortened) title
    assert fold_heading_only(
        long_line + "\n\nEnd\n\nmore", [ParsedSection("xxx…", 1, 0, 502), ParsedSection("End", 1, 502, 513)]
    ) == [
        ParsedSection("xxx…", 1, 0, 502),
        ParsedSection("End", 1, 502, 513),
    ]


@pytest.mark.parametrize("seed", range(20))
def test_the_caps_hold_and_cover_the_same_text(seed: int) -> None:
    rng = random.Random(seed)
    sections, pos = [], 0
    for i in range(rng.randint(1, 400)):
        size = rng.randint(1, 50)
        sections.append(ParsedSection(f"S{i}", rng.randint(1, 4), pos, pos + size))
        pos += size
    limit = rng.randint(1, 60)
    capped, note = cap_sections(sections, limit)
    assert len(capped) <= limit and (note is None) == (len(sections) <= limit)
    assert capped[0].start_char == 0 and capped[-1].end_char == pos
    assert all(a.end_char == b.start_char for a, b in itertools.pairwise(capped)), "they still tile"
    spans = []
    for index, section in enumerate(capped):
        for start in range(section.start_char, section.end_char, 7):
            spans.append(SpanCut(index, start, min(start + 7, section.end_char), None, None))
    span_limit = len(capped) + rng.randint(1, 80)
    joined, span_note = cap_spans(spans, span_limit, len(capped))
    assert len(joined) <= span_limit and (span_note is None) == (len(spans) <= span_limit)
    covered = {(s.section, i) for s in joined for i in range(s.start, s.end)}
    assert covered == {(s.section, i) for s in spans for i in range(s.start, s.end)}, "no text lost"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_spans_start_and_end_between_words_even_where_no_sentence_ends(seed: int) -> None:
    """Table-like text (figures and labels, few full stops, few line breaks): the overlap falls where no sentence
    starts, and must still begin at a word, not inside one ("es of common stock")."""
    from engine.documents.chunking import cut
    from engine.plugin_api import ParsedDocument

    rng = random.Random(seed)
    words = ["Revenue", "2018", "million", "cash", "flow", "statement", "capital", "expenditure", "$1,234", "(56)"]
    rows = [" ".join(rng.choice(words) for _ in range(rng.randint(40, 400))) for _ in range(12)]
    text = "\n\n".join(rows) + " Total. " + " ".join(rng.choice(words) for _ in range(500))
    spans = cut(ParsedDocument(text=text, title="Figures"))
    assert len(spans) > 10
    for span in spans:
        assert span.start == 0 or text[span.start - 1].isspace(), text[span.start - 10 : span.start + 10]
        assert span.end == len(text) or text[span.end].isspace(), text[span.end - 10 : span.end + 10]
        assert not text[span.start].isspace() and not text[span.end - 1].isspace()
    covered = set().union(*(range(s.start, s.end) for s in spans))
    assert all(i in covered or text[i].isspace() for i in range(len(text)))  # every word is in a span
