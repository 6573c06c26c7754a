"""Documents at real scale: FinanceBench's SEC filings through the real endpoint, against a plain page index.

FinanceBench (Patronus AI, ``patronus-ai/financebench``, data licence CC-BY-NC-4.0: used for evaluation only and never
copied into this repository) asks questions about 10-Ks, 10-Qs, 8-Ks and earnings releases; each question names its
filing and carries the gold page (``evidence[].evidence_page_num``, 0-based) and a verbatim quote.  ``--data`` is a
folder holding ``financebench_open_source.jsonl`` and the filings' PDFs (anywhere below it, named ``<doc_name>.pdf``).

What one run does:

1. **Ingest.** ``cairn serve`` starts on a fresh vault with the shipped settings (rule path, hashing embedder) and
   every filing is uploaded over HTTP (multipart, as a client would).  The figure is pages per second from the upload
   until the document's spans are searchable, per filing (median) and overall; refused filings are listed with the
   vault's reason.
2. **Recall.** Each question is asked twice over ``POST /v6/recall``: over the whole vault, and scoped to its filing
   (``document_id``).  The first ten ranked blocks are mapped to 0-based pages through their spans (``page_start``
   … ``page_end``; a block with no page is a miss at its rank).  The distillations a document-scoped recall pins
   ahead of them (the document's outline, outside the limit) are not ranked results and are left out.
3. **Baseline.** In the same run, a plain BM25 index (SQLite FTS5, Porter stemming) holds one row per PDF page — the
   page text as PDFium extracts it, as Cairn's parser does — and is asked the same questions, whole and scoped.

Reported per split (the 30 development filings named in :data:`DEVELOPMENT`, and the others held out): page hit@1,
@5 and @10 — the share of questions whose gold page is among the pages of the first k results — and evidence-quote
recall@10, the share of the quote's distinct words found in the first ten results' texts (a baseline row is a whole
page, a Cairn block one span, so this one favours the baseline); and context quote recall, the same share in what a
model would read — Cairn's ``llm_context`` text at the default budget, the baseline's first pages cut to the same
6,000 characters.

Usage: ``python -m bench.filings --data DIR [--split dev|held|all] [--limit-filings N] [--vault DIR] [--json F]``
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.common import ROOT, machine, write_json
from bench.endpoint import Server

#: The development filings (named in the issue that introduced this benchmark); every other filing is held out.
DEVELOPMENT = frozenset(
    """ACTIVISIONBLIZZARD_2019_10K ADOBE_2017_10K AMAZON_2017_10K AMAZON_2019_10K AMCOR_2023Q2_10Q AMCOR_2023_10K
    AMD_2015_10K BESTBUY_2019_10K BESTBUY_2023_10K BLOCK_2020_10K BOEING_2022_10K COCACOLA_2017_10K CORNING_2020_10K
    COSTCO_2021_10K CVSHEALTH_2022_10K FOOTLOCKER_2022_8K_dated-2022-05-20 FOOTLOCKER_2022_8K_dated_2022-08-19
    GENERALMILLS_2019_10K GENERALMILLS_2020_10K JOHNSON_JOHNSON_2022Q4_EARNINGS JPMORGAN_2021Q1_10Q
    LOCKHEEDMARTIN_2022_10K MGMRESORTS_2018_10K NIKE_2021_10K PEPSICO_2022_10K PEPSICO_2023Q1_EARNINGS
    PEPSICO_2023_8K_dated-2023-05-30 ULTABEAUTY_2023Q4_EARNINGS VERIZON_2021_10K WALMART_2018_10K""".split()
)
QUESTIONS_FILE = "financebench_open_source.jsonl"
CACHE = ROOT / "bench" / "out" / "filings-pages"
KS = (1, 5, 10)
_WORD = re.compile(r"\w+")
#: What a model reads of the baseline's pages: the default recall budget of 1,500 tokens, at 4 characters a token.
CONTEXT_CHARS = 6000
#: One filing's upload, parse and indexing at most (the vault's own parse limit answers well before this).
UPLOAD_TIMEOUT_S = 900.0


@dataclass(frozen=True, slots=True)
class Question:
    """One FinanceBench question about one filing."""

    qid: str
    doc: str
    text: str
    pages: frozenset[int]  # 0-based gold pages
    quote: str


@dataclass(slots=True)
class Ranked:
    """One system's first results for one question: the pages of each result and their texts."""

    pages: list[frozenset[int]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    context: str = ""  # what a model would read: recall's llm_context, or the first pages within its budget


def load_questions(data: Path) -> tuple[list[Question], dict[str, Path]]:
    """The questions whose filing is present, and each present filing's PDF."""
    found = sorted(data.rglob(QUESTIONS_FILE))
    if not found:
        raise SystemExit(f"no {QUESTIONS_FILE} below {data}: point --data at the FinanceBench folder")
    pdfs = {p.stem: p for p in data.rglob("*.pdf") if p.is_file()}
    questions: list[Question] = []
    for line in found[0].read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        doc = str(row["doc_name"])
        if doc not in pdfs:
            continue
        evidence = [e for e in row.get("evidence", []) if str(e.get("doc_name", doc)) == doc]
        pages = frozenset(int(e["evidence_page_num"]) for e in evidence)
        quote = " ".join(str(e.get("evidence_text", "")) for e in evidence)
        if pages:
            questions.append(Question(str(row["financebench_id"]), doc, str(row["question"]), pages, quote))
    used = {q.doc for q in questions}
    if not used:
        raise SystemExit(f"none of the questions' filings is below {data} (expected <doc_name>.pdf files)")
    return questions, {d: p for d, p in pdfs.items() if d in used}


# -- the baseline: one BM25 row per page -------------------------------------------------------------------------------
def page_texts(pdf: Path, cache: Path = CACHE) -> list[str]:
    """Each page's text as PDFium extracts it, the engine Cairn's parser uses (so both sides read the same words),
    cached by the file's hash."""
    data = pdf.read_bytes()
    key = hashlib.sha256(data).hexdigest()[:24]
    cached = cache / f"pdfium-{key}.json"
    if cached.exists():
        return list(json.loads(cached.read_text(encoding="utf-8")))
    import pypdfium2

    texts = []
    document = pypdfium2.PdfDocument(data)
    try:
        for index in range(len(document)):
            page = document[index]
            try:
                textpage = page.get_textpage()
                texts.append(str(textpage.get_text_range()))
                textpage.close()
            except pypdfium2.PdfiumError:
                texts.append("")  # a page PDFium cannot read is an empty row, as a plain index would have it
            finally:
                page.close()
    finally:
        document.close()
    cache.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(texts), encoding="utf-8")
    return texts


class PageIndex:
    """SQLite FTS5 over whole pages: the plain baseline."""

    def __init__(self, pages: dict[str, list[str]]) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute("CREATE VIRTUAL TABLE pages USING fts5(text, doc UNINDEXED, page UNINDEXED, tokenize=porter)")
        self._db.executemany(
            "INSERT INTO pages (text, doc, page) VALUES (?, ?, ?)",
            ((text, doc, n) for doc, texts in pages.items() for n, text in enumerate(texts)),
        )
        self._texts = pages

    def search(self, question: str, doc: str | None, k: int) -> Ranked:
        """The k best pages for the question's words (any of them), over all filings or one."""
        words = list(dict.fromkeys(w.lower() for w in _WORD.findall(question)))
        out = Ranked()
        if not words:
            return out
        match = " OR ".join(f'"{w}"' for w in words)
        sql = "SELECT doc, page FROM pages WHERE pages MATCH ?"
        params: list[Any] = [match]
        if doc is not None:
            sql += " AND doc = ?"
            params.append(doc)
        for d, page in self._db.execute(sql + " ORDER BY bm25(pages) LIMIT ?", (*params, k)):
            out.pages.append(frozenset({int(page)}))
            out.texts.append(self._texts[str(d)][int(page)])
        out.context = "\n".join(out.texts)[:CONTEXT_CHARS]
        return out


# -- Cairn over its endpoint ---------------------------------------------------------------------------------------
def ingest(client: httpx.Client, pdfs: dict[str, Path]) -> tuple[dict[str, int], dict[str, Any]]:
    """Upload every filing not already in the vault; document ids of those stored, and the ingest figures."""
    listed = client.get("/v6/documents", params={"limit": 1000}).json()["documents"]
    ids: dict[str, int] = {Path(str(d["name"])).stem: int(d["id"]) for d in listed if d["status"] != "failed"}
    kept = {doc for doc in pdfs if doc in ids}
    if kept:
        print(f"  {len(kept)} filings already in the vault: not uploaded again", file=sys.stderr)
    rates: list[float] = []
    refused: dict[str, str] = {}
    pages_total = 0
    seconds_total = 0.0
    for n, (doc, pdf) in enumerate(sorted(pdfs.items()), start=1):
        if doc in kept:
            continue
        t0 = time.perf_counter()
        with pdf.open("rb") as fh:
            answer = client.post(
                "/v6/documents", files={"file": (pdf.name, fh, "application/pdf")}, timeout=UPLOAD_TIMEOUT_S
            )
        if answer.status_code not in (200, 201, 202):
            refused[doc] = _reason(answer)
            print(f"  [{n}/{len(pdfs)}] {doc}: refused ({refused[doc]})", file=sys.stderr)
            continue
        document_id = int(answer.json()["document_id"])
        info = _searchable(client, document_id)  # a large filing is answered 202 and read in the background
        seconds = time.perf_counter() - t0
        if info.get("status") == "failed":
            refused[doc] = str(info.get("status_reason"))
            print(f"  [{n}/{len(pdfs)}] {doc}: refused ({refused[doc]})", file=sys.stderr)
            continue
        pages = int(info.get("page_count") or 0)
        ids[doc] = document_id
        pages_total += pages
        seconds_total += seconds
        if pages:
            rates.append(pages / seconds)
        print(f"  [{n}/{len(pdfs)}] {doc}: {pages} pages in {seconds:.1f} s", file=sys.stderr)
    figures = {
        "filings": len(pdfs),
        "already_stored": len(kept),
        "stored": len(ids),
        "refused": refused,
        "pages": pages_total,
        "pages_per_s_median": round(statistics.median(rates), 1) if rates else 0.0,
        "pages_per_s_overall": round(pages_total / seconds_total, 1) if seconds_total else 0.0,
    }
    return ids, figures


def _reason(answer: httpx.Response) -> str:
    try:
        body = answer.json()
    except ValueError:
        return f"HTTP {answer.status_code}"
    details = body.get("details") or {}
    return f"HTTP {answer.status_code} {body.get('code', '')} {details.get('reason', '')} {details.get('detail', '')}"


def _searchable(client: httpx.Client, document_id: int) -> dict[str, Any]:
    """Wait until the document has been read (its spans stored, or it failed); its description."""
    deadline = time.monotonic() + UPLOAD_TIMEOUT_S
    while True:
        info: dict[str, Any] = client.get(f"/v6/documents/{document_id}").json()
        document = info.get("document", info)
        if document.get("reading") is None and (
            document.get("spans") or document.get("status") in ("ready", "degraded", "failed")
        ):
            return dict(document)
        if time.monotonic() > deadline:
            raise SystemExit(f"document {document_id} still not searchable after {UPLOAD_TIMEOUT_S:.0f} s")
        time.sleep(0.1)


def cairn_search(client: httpx.Client, question: str, document_id: int | None, k: int) -> Ranked:
    """Recall's first k blocks, each with its pages (0-based) and its text."""
    body: dict[str, Any] = {"conversation_id": "filings-bench", "query": question, "limit": k}
    if document_id is not None:
        body["document_id"] = document_id
    answer = client.post("/v6/recall", json=body, timeout=120.0)
    answer.raise_for_status()
    out = Ranked(context=str(answer.json()["llm_context"]["text"]))
    # A document-scoped recall pins the document's distillations (its outline) ahead of the ranked blocks, outside
    # the limit: they are not results, and are left out here.
    ranked = [b for b in answer.json()["blocks"] if b.get("kind") not in ("document", "section")]
    for block in ranked[:k]:
        meta = block.get("meta") or {}
        start, end = meta.get("page_start"), meta.get("page_end")
        if document_id is not None and meta.get("document_id") not in (None, document_id):
            start = end = None
        pages = frozenset(range(int(start) - 1, int(end or start))) if start else frozenset()
        out.pages.append(pages)
        texts = [str(block.get("content", ""))] + [str(e.get("text", "")) for e in block.get("evidence") or []]
        out.texts.append("\n".join(texts))
    return out


# -- scoring -----------------------------------------------------------------------------------------------------------
def hit_at(ranked: Ranked, gold: frozenset[int], k: int) -> bool:
    """Whether a gold page is among the pages of the first k results."""
    return any(pages & gold for pages in ranked.pages[:k])


def quote_recall(ranked: Ranked, quote: str, k: int = 10) -> float:
    """The share of the quote's distinct words found in the first k results' texts."""
    return _share_found(quote, ranked.texts[:k])


def context_quote_recall(ranked: Ranked, quote: str) -> float:
    """The share of the quote's distinct words in what a model reads (:attr:`Ranked.context`)."""
    return _share_found(quote, [ranked.context])


def _share_found(quote: str, texts: Iterable[str]) -> float:
    wanted = {w.lower() for w in _WORD.findall(quote)}
    if not wanted:
        return 1.0
    seen = {w.lower() for text in texts for w in _WORD.findall(text)}
    return len(wanted & seen) / len(wanted)


def score(results: Iterable[tuple[Question, Ranked]]) -> dict[str, float]:
    """Page hit@k and quote recall@10, averaged over questions."""
    rows = list(results)
    if not rows:
        return {}
    out = {f"hit@{k}": round(sum(hit_at(r, q.pages, k) for q, r in rows) / len(rows), 3) for k in KS}
    out["quote_recall@10"] = round(statistics.fmean(quote_recall(r, q.quote) for q, r in rows), 3)
    out["context_quote"] = round(statistics.fmean(context_quote_recall(r, q.quote) for q, r in rows), 3)
    out["questions"] = len(rows)
    return out


def _split_of(doc: str) -> str:
    return "dev" if doc in DEVELOPMENT else "held"


def run(data: Path, split: str, limit_filings: int | None, vault: Path | None = None) -> dict[str, Any]:
    """The whole benchmark (see the module docstring)."""
    questions, pdfs = load_questions(data)
    if split != "all":
        pdfs = {d: p for d, p in pdfs.items() if _split_of(d) == split}
    if limit_filings:
        pdfs = dict(sorted(pdfs.items())[:limit_filings])
    questions = [q for q in questions if q.doc in pdfs]
    print(f"{len(pdfs)} filings, {len(questions)} questions; extracting page texts …", file=sys.stderr)
    with ProcessPoolExecutor(max_workers=2) as pool:
        texts = pool.map(functools.partial(page_texts, cache=CACHE), [pdfs[d] for d in sorted(pdfs)])
        pages = dict(zip(sorted(pdfs), texts, strict=True))
    baseline = PageIndex(pages)
    with tempfile.TemporaryDirectory(prefix="cairn-bench-filings-") as tmp:
        vault_dir = vault or Path(tmp) / "vault"
        server = Server(vault_dir, Path(tmp) / "home", "hashing")
        try:
            server.wait_for_address(120)
            headers = {"Authorization": f"Bearer {server.token}"}
            with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", headers=headers) as client:
                print("ingesting over the endpoint …", file=sys.stderr)
                ids, ingest_figures = ingest(client, pdfs)
                print("asking …", file=sys.stderr)
                asked: dict[str, list[tuple[Question, Ranked]]] = {}
                recall_ms: list[float] = []
                for q in questions:
                    for scope in ("vault", "document"):
                        document_id = ids.get(q.doc) if scope == "document" else None
                        if scope == "document" and document_id is None:
                            ranked = Ranked()  # the filing was refused: nothing to find in it
                        else:
                            t0 = time.perf_counter()
                            ranked = cairn_search(client, q.text, document_id, max(KS))
                            recall_ms.append((time.perf_counter() - t0) * 1000)
                        asked.setdefault(f"cairn/{_split_of(q.doc)}/{scope}", []).append((q, ranked))
                        plain = baseline.search(q.text, q.doc if scope == "document" else None, max(KS))
                        asked.setdefault(f"bm25/{_split_of(q.doc)}/{scope}", []).append((q, plain))
        finally:
            server.stop()
    details: dict[str, dict[str, Any]] = {}
    for name, rows in asked.items():
        for q, ranked in rows:
            entry = details.setdefault(q.qid, {"doc": q.doc, "question": q.text, "gold": sorted(q.pages)})
            entry[name.split("/", 2)[0] + "/" + name.rsplit("/", 1)[1]] = [sorted(p) for p in ranked.pages]
    return {
        "machine": machine(),
        "split": split,
        "questions": details,
        "ingest": ingest_figures,
        "recall_ms_median": round(statistics.median(recall_ms), 1) if recall_ms else 0.0,
        "scores": {name: score(rows) for name, rows in sorted(asked.items())},
    }


def report(result: dict[str, Any]) -> str:
    """The figures as a table."""
    lines = [f"machine: {result['machine']}"]
    ing = result["ingest"]
    if ing["already_stored"]:
        lines.append(f"({ing['already_stored']} filings were already in the vault: the ingest figures leave them out)")
    lines.append(
        f"ingest: {ing['stored']}/{ing['filings']} filings, {ing['pages']} pages, "
        f"{ing['pages_per_s_median']} pages/s median, {ing['pages_per_s_overall']} overall"
    )
    for doc, reason in sorted(ing["refused"].items()):
        lines.append(f"  refused {doc}: {reason}")
    lines.append(f"recall median {result['recall_ms_median']} ms")
    heads = f"{'hit@1':>6} {'hit@5':>6} {'hit@10':>6} {'quote@10':>8} {'context':>8}"
    lines.append(f"{'system/split/scope':<24} {'n':>4} {heads}")
    for name, s in result["scores"].items():
        if s:
            lines.append(
                f"{name:<24} {s['questions']:>4} {s['hit@1']:>6.3f} {s['hit@5']:>6.3f} {s['hit@10']:>6.3f} "
                f"{s['quote_recall@10']:>8.3f} {s['context_quote']:>8.3f}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="folder with the jsonl and the PDFs")
    parser.add_argument("--split", choices=("dev", "held", "all"), default="dev")
    parser.add_argument("--limit-filings", type=int, default=None, help="only the first N filings (a quick look)")
    parser.add_argument(
        "--vault",
        type=Path,
        default=None,
        help="serve this vault folder (kept): filings already in it are not "
        "uploaded again, so recall can be measured again without the ingest",
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = run(args.data, args.split, args.limit_filings, args.vault)
    print(report(result))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
