"""Keyword search over document spans weighs the question's words within the scope searched (DESIGN §5).

The corpus is a company's annual report, whose every part names the company (as a 10-K's running header does), and a
larger unrelated handbook.  Over the whole vault the company's name is what tells its report apart; within the report
it says nothing, and the words that do ("capital", "expenditure") must be the ones searched.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.recall import span_keywords
from engine.recall.span_keywords import MAX_SCOPE_DOCUMENTS, SpanScope
from engine.vault import Vault
from tests.engine.documents.support import open_vault, recall, span_blocks

pytestmark = pytest.mark.timeout(120)

TOPICS = [
    "revenue grew in every region",
    "the board met four times",
    "employees received training on safety",
    "the audit committee reviewed controls",
    "inventories were counted at year end",
    "legal proceedings remained immaterial",
    "the pension plan was frozen",
    "research spending rose modestly",
    "share repurchases continued",
    "the dividend was raised",
    "goodwill was tested for impairment",
]
CAPEX = "Zephyr Corporation spent 1,577 million dollars of capital expenditure on plants and equipment in fiscal 2018."


def _report() -> str:
    parts = [f"## Part {n}\n\nZephyr Corporation annual report: {topic}." for n, topic in enumerate(TOPICS, 1)]
    parts.insert(6, f"## Investing\n\n{CAPEX}")
    return "# Zephyr Corporation annual report\n\n" + "\n\n".join(parts) + "\n"


def _handbook() -> str:
    parts = [
        f"## Chapter {n}\n\nThe workshop handbook, chapter {n}: sharpen tool number {n} before lunch; "
        f"oil hinge {n} weekly."
        for n in range(1, 61)
    ]
    parts.append("## Budget\n\nThe workshop's capital plan lists every expenditure above fifty dollars.")
    return "# Workshop handbook\n\n" + "\n\n".join(parts) + "\n"


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with open_vault(tmp_path / "v") as vault:
        vault.documents.upload(name="zephyr-10k.md", text=_report())
        vault.documents.upload(name="handbook.md", text=_handbook())
        yield vault


def _document(vault: Vault, name: str) -> int:
    return next(d.id for d in vault.documents() if d.name == name)


def _text(vault: Vault, span_id: int) -> str:
    return str(vault.store.query("SELECT text FROM spans WHERE id = ?", (span_id,))[0][0])


def test_a_word_in_most_of_the_scope_is_not_searched_there_but_is_over_the_vault(vault: Vault) -> None:
    report = SpanScope.of_documents(vault.store, "default", [_document(vault, "zephyr-10k.md")])
    assert report.narrow and len(report.ids) >= 12
    words = ["Zephyr", "capital", "expenditure", "2018"]
    within = span_keywords.scope_terms(vault.store, words, report)
    assert "zephyr" not in within  # on every part of its own report
    assert set(within) == {"capital", "expenditure", "2018"}
    # over the vault, where most spans are the handbook's, the report's name tells its spans apart: searched
    assert set(span_keywords.vault_terms(vault.store, words)) == {"zephyr", "capital", "expenditure", "2018"}


def test_a_word_in_over_a_quarter_of_the_vault_is_not_searched_over_it(vault: Vault) -> None:
    # "workshop" is in every one of the handbook's 60-odd spans: it cannot tell spans apart
    assert span_keywords.vault_terms(vault.store, ["workshop", "capital"]) == ["capital"]
    # a question of common words alone still searches its rarest
    assert span_keywords.vault_terms(vault.store, ["workshop"]) == ["workshop"]


def test_a_document_scoped_search_finds_the_answer_by_the_words_that_tell_its_spans_apart(vault: Vault) -> None:
    report = _document(vault, "zephyr-10k.md")
    scope = SpanScope.of_documents(vault.store, "default", [report])
    found = span_keywords.search(
        vault.store, ["Zephyr", "Corporation", "capital", "expenditure"], "default", 10, scope=scope
    )
    assert found and set(found) <= scope.ids
    assert CAPEX in _text(vault, found[0])
    # through recall, the same span leads the document's spans
    result = recall(vault, "What was Zephyr Corporation's capital expenditure?", document_id=report)
    spans = span_blocks(result)
    assert spans and CAPEX in spans[0].content
    assert {b.meta["document"] for b in spans} == {"zephyr-10k.md"}


def test_a_wide_scope_is_searched_as_the_vault_then_kept_to_its_documents(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v") as vault:
        memos = [f"# Memo {n}\n\nThe quarterly memo number {n}." for n in range(MAX_SCOPE_DOCUMENTS + 2)]
        ids = [vault.documents.upload(name=f"memo-{n}.md", text=text).document_id for n, text in enumerate(memos)]
        other = vault.documents.upload(name="other.md", text="# Other\n\nA quarterly memo kept elsewhere.")
        scope = SpanScope.of_documents(vault.store, "default", ids)
        assert not scope.narrow
        found = span_keywords.search(vault.store, ["quarterly", "memo"], "default", 50, scope=scope)
        assert found and set(found) <= scope.ids
        everywhere = span_keywords.search(vault.store, ["quarterly", "memo"], "default", 50)
        documents = {
            int(r[0])
            for r in vault.store.query(f"SELECT document_id FROM spans WHERE id IN ({','.join(map(str, everywhere))})")
        }
        assert other.document_id in documents


def test_another_users_documents_are_no_scope(vault: Vault) -> None:
    theirs = vault.documents.upload(name="bob.md", text="# Bob\n\nBob's capital expenditure.", user_id="bob")
    scope = SpanScope.of_documents(vault.store, "default", [theirs.document_id])
    assert not scope.ids and not scope.narrow


# -- a question that names a document --------------------------------------------------------------------------------
def test_the_documents_a_question_names_are_those_sharing_its_most_telling_name_words() -> None:
    from engine.recall.documents import name_tokens, named_documents

    assert {"fy2018", "fy", "2018", "3m"} <= name_tokens("3M's FY2018 capital")
    filings = [(1, "3M_2018_10K.pdf"), (2, "3M_2022_10K.pdf"), (3, "ADOBE_2018_10K.pdf"), (4, "ADOBE_2022_10K.pdf")]
    assert named_documents(["FY2018", "capital", "expenditure", "3M"], filings) == [1]
    assert named_documents(["3M", "revenue"], filings) == [1, 2]  # the company's, either year
    assert named_documents(["10K", "revenue"], filings) == []  # a word every name holds tells nothing
    assert named_documents(["revenue"], filings) == []
    assert named_documents(["notes"], [(7, "notes.md")]) == []  # one document: nothing to tell apart


def test_a_passage_of_the_named_document_outranks_a_like_passage_elsewhere(tmp_path: Path) -> None:
    text = "# Annual report\n\n## Investing\n\nCapital expenditure was {} million dollars in fiscal 2018.\n"
    with open_vault(tmp_path / "v") as vault:
        for company, amount in (("Zephyr", 120), ("Quokka", 340), ("Marlin", 560)):
            vault.documents.upload(name=f"{company}_2018_annual.md", text=text.format(amount))
        for question, amount in (
            ("What was Quokka's capital expenditure in fiscal 2018?", 340),
            ("Marlin capital expenditure 2018", 560),
        ):
            spans = span_blocks(recall(vault, question))
            assert spans and f"{amount} million" in spans[0].content, (question, [b.content for b in spans])


def test_within_a_document_the_section_a_question_names_by_its_title_leads(tmp_path: Path) -> None:
    figures = "Accounts payable 302,578 255,028. Construction payable 311,793 474,807."
    # the statement's heading leads its first span only: the figures come in a later one
    preamble = "Amounts are stated in thousands of dollars as of December 31 of each year shown. " * 14 + "\n\n"
    report = (
        "# Annual report\n\n## Liquidity\n\nWe review the balance of accounts payable and the balance sheet every "
        "quarter, with the board.\n\n## Consolidated Balance Sheets\n\n"
        + preamble
        + figures
        + "\n\n## Risk factors\n\n"
        "Suppliers may shorten their payment terms.\n"
    )
    with open_vault(tmp_path / "v") as vault:
        document = vault.documents.upload(name="report.md", text=report).document_id
        scope = SpanScope.of_documents(vault.store, "default", [document])
        words = ["accounts", "payable", "balance", "sheet"]
        keyword = span_keywords.search(vault.store, words, "default", 10, scope=scope)
        assert "review the balance" in _text(vault, keyword[0])  # the prose holds more of the words
        titled = span_keywords.by_section_title(vault.store, words, scope, keyword, 10)
        assert titled and figures in _text(vault, titled[0])  # the statement is named by its title
        spans = span_blocks(recall(vault, "What were accounts payable on the balance sheet?", document_id=document))
        assert spans and figures in spans[0].content
