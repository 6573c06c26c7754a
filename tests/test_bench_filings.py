"""The filings benchmark end to end on invented filings in FinanceBench's layout: a real ``cairn serve``, uploads over
HTTP, recall over the whole vault and within each filing, the page index beside it, and the report.

FinanceBench itself is evaluation data that stays out of this repository; two small PDFs written here stand in for
it, each with its answer on a page of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import filings
from tests.plugins import parser_pdf as pdfs

pytestmark = pytest.mark.timeout(300)


def _filing(company: str, amount: int) -> bytes:
    return pdfs.text_pdf(
        [
            [f"{company} Corporation", "Annual report for fiscal 2018.", "Our stores sell lamps and chairs."],
            ["Risk Factors", "Competition may reduce our margins.", "Suppliers may raise their prices."],
            ["Consolidated Statements of Cash Flows", f"Capital expenditures {amount} million in fiscal 2018."],
        ]
    )


def _data(folder: Path) -> Path:
    (folder / "pdfs").mkdir(parents=True)
    rows = []
    for n, (company, amount) in enumerate((("Zephyr", 120), ("Quokka", 340))):
        doc = f"{company.upper()}_2018_10K"
        (folder / "pdfs" / f"{doc}.pdf").write_bytes(_filing(company, amount))
        quote = f"Capital expenditures {amount} million in fiscal 2018."
        rows.append(
            {
                "financebench_id": f"q{n}",
                "doc_name": doc,
                "question": f"What were {company}'s FY2018 capital expenditures, per the cash flow statement?",
                "evidence": [{"doc_name": doc, "evidence_page_num": 2, "evidence_text": quote}],
            }
        )
    rows.append({"financebench_id": "gone", "doc_name": "ABSENT_2019_10K", "question": "?", "evidence": []})
    (folder / filings.QUESTIONS_FILE).write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return folder


def test_a_run_ingests_over_the_endpoint_asks_both_scopes_and_scores_beside_the_page_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filings, "CACHE", tmp_path / "pages")  # the page texts' cache stays out of the tree
    data = _data(tmp_path / "data")
    out = tmp_path / "filings.json"
    assert filings.main(["--data", str(data), "--split", "held", "--json", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["ingest"]["stored"] == report["ingest"]["filings"] == 2 and not report["ingest"]["refused"]
    assert report["ingest"]["pages"] == 6 and report["ingest"]["pages_per_s_median"] > 0
    scores = report["scores"]
    assert set(scores) == {f"{system}/held/{scope}" for system in ("cairn", "bm25") for scope in ("vault", "document")}
    for name, s in scores.items():
        assert s["questions"] == 2, name  # the question about a filing that is not there is left out
        assert 0.0 <= s["hit@1"] <= s["hit@5"] <= s["hit@10"] <= 1.0, name
    # each answer is on a page of its own, named by the company and the statement: both systems find it
    assert scores["cairn/held/document"]["hit@5"] == 1.0 and scores["bm25/held/document"]["hit@5"] == 1.0
    assert scores["cairn/held/vault"]["hit@5"] == 1.0
    assert scores["cairn/held/vault"]["quote_recall@10"] == 1.0
    assert set(report["questions"]) == {"q0", "q1"} and report["questions"]["q0"]["gold"] == [2]
    assert len(list((tmp_path / "pages").iterdir())) == 2


def test_hits_count_pages_of_the_first_k_results_and_quotes_count_words() -> None:
    ranked = filings.Ranked(
        pages=[frozenset({4}), frozenset(), frozenset({2, 3})], texts=["alpha", "", "capital 120 million"]
    )
    assert not filings.hit_at(ranked, frozenset({2}), 1)
    assert filings.hit_at(ranked, frozenset({2}), 5)
    assert filings.quote_recall(ranked, "Capital expenditures 120 million") == 0.75
