"""Document figures: ingest throughput beside the embedder's own, edit-to-recallable time, LOCAL recall at scale.

1. **Ingest throughput**: a generated corpus (Markdown notes and multi-page PDFs, :mod:`bench.doc_corpus`) is
   ingested with ``vault.watcher.ingest_paths`` (sandboxed parsing, spans, firewall, embedding, one transaction per
   file) — pages/s and MB/s — and in the same run the embedder alone embeds the very same span texts: the
   "embedder-bound rate" is how fast ingest could go if embedding were its only cost.  Reported for the hashing
   embedder and for ONNX MiniLM (when its files are present).
2. **Edit → recallable**: a 10-page Markdown document in a watched folder is edited (a new sentence appended) and the
   time until ``recall`` returns the new sentence is measured, several times.
3. **LOCAL recall at 1M spans**: a vault of N synthetic spans (hashing vectors) is built once and cached; LOCAL recall
   latency is measured beside a brute-force numpy scan of the same vectors in the same run.

Usage: ``python -m bench.documents [--markdown 40 --pdf 15 --pages 10] [--spans 1000000] [--skip-scale] [--json F]``
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from app.plugins import build_plugin_manager
from bench.common import ROOT, machine, make_embedder, percentile, write_json
from bench.doc_corpus import generate
from engine import paths
from engine.config import Settings
from engine.documents.chunking import cut
from engine.plugin_api import ParseLimits
from engine.recall.types import RecallRequest
from engine.store import Tx
from engine.vault import Vault
from engine.vectors import VectorItem

# The shipped defaults (watch.debounce_s included): the edit-to-recallable figure is what a person gets.
SETTINGS = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})


def open_vault(folder: Path, embedder: Any, **kwargs: Any) -> Vault:
    """A benchmark vault with the built-in parsers."""
    return Vault.open(
        folder, settings=SETTINGS, plugins=build_plugin_manager(load_entry_points=False), embedder=embedder, **kwargs
    )


def ingest_throughput(corpus: Path, embedder_name: str) -> dict[str, Any]:
    """Ingest the corpus; embed its span texts alone; compare."""
    embedder = make_embedder(embedder_name)
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".md", ".pdf"))
    size = sum(p.stat().st_size for p in files)
    with tempfile.TemporaryDirectory(prefix="cairn-docs-") as tmp:
        vault = open_vault(Path(tmp) / "v", embedder, start_workers=False)
        try:
            texts, pages = _span_texts(vault, files)
            for _ in range(2):  # warm the embedder (ONNX session, caches)
                embedder.embed(texts[:64])
            # The embedder's own best rate: every span text in one call, which it batches by length and runs on
            # all cores (ONNX runs a long list's batches side by side; one 64-text call runs on one thread).
            t0 = time.perf_counter()
            embedder.embed(texts)
            embed_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            runs = list(vault.watcher.ingest_paths(files))
            last = runs[-1] if runs else None
            ingest_s = time.perf_counter() - t0
        finally:
            vault.close()
    assert last is not None
    embedder_bound = pages / embed_s
    return {
        "embedder": embedder.model_id,
        "files": len(files),
        "pages": pages,
        "mb": round(size / 1e6, 2),
        "spans": len(texts),
        "ingest_s": round(ingest_s, 2),
        "pages_per_s": round(pages / ingest_s, 1),
        "mb_per_s": round(size / 1e6 / ingest_s, 2),
        "embedder_spans_per_s": round(len(texts) / embed_s, 1),
        "embedder_bound_pages_per_s": round(embedder_bound, 1),
        "ratio_to_embedder_bound": round((pages / ingest_s) / embedder_bound, 3),
        "outcomes": {"ok": last.ok, "degraded": last.degraded, "quarantined": last.quarantined, "failed": last.failed},
    }


def _span_texts(vault: Vault, files: list[Path]) -> tuple[list[str], int]:
    """The span texts ingest will embed (parsed in-process here), and the page count (a Markdown note = 1 page)."""
    texts: list[str] = []
    pages = 0
    for path in files:
        parser = vault.documents.parser_for(path.name)
        parsed = parser.parse(path.read_bytes(), name=path.name, limits=ParseLimits())
        texts += [parsed.text[s.start : s.end] for s in cut(parsed)]
        pages += max(1, len(parsed.pages))
    return texts, pages


def edit_to_recallable(rounds: int = 5) -> dict[str, Any]:
    """Seconds from saving an edit in a watched folder to a recall that returns it (10-page document)."""
    with tempfile.TemporaryDirectory(prefix="cairn-edit-") as tmp:
        folder = Path(tmp) / "notes"
        folder.mkdir()
        doc = folder / "handbook.md"
        rng = random.Random(3)
        body = "\n\n".join(
            f"## Chapter {i}\n\n"
            + " ".join(f"Paragraph {i}.{j} talks about {rng.random():.6f} things worth keeping." for j in range(40))
            for i in range(1, 11)
        )  # ≈ 10 pages of text
        doc.write_text(f"# Handbook\n\n{body}\n")
        vault = open_vault(Path(tmp) / "v", make_embedder("hashing"))
        times: list[float] = []
        try:
            vault.watcher.watch(folder)
            _wait(lambda: len(vault.documents()) == 1, 30)
            for n in range(rounds):
                marker = f"zq{n}marker{rng.randrange(10**6)}"
                time.sleep(0.5)
                t0 = time.perf_counter()
                with doc.open("a") as fh:
                    fh.write(f"\nThe new code word is {marker}.\n")
                _wait(
                    lambda m=marker: any(
                        m in b.content for b in vault.recall(RecallRequest(conversation_id="bench", query=m)).blocks
                    ),
                    30,
                )
                times.append(time.perf_counter() - t0)
        finally:
            vault.close()
    return {
        "rounds": rounds,
        "debounce_s": SETTINGS.watch.debounce_s,
        "p50_s": round(percentile(times, 50), 3),
        "max_s": round(max(times), 3),
    }


def _wait(predicate: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting")
        time.sleep(0.02)


def local_at_scale(spans: int, queries: int = 100) -> dict[str, Any]:
    """LOCAL recall over ``spans`` synthetic spans, beside a numpy scan of the same vectors."""
    folder = ROOT / "bench" / "out" / f"spans-{spans}"
    if not (folder / "built").exists():
        shutil.rmtree(folder, ignore_errors=True)
        _build_spans(folder, spans)
    embedder = make_embedder("hashing")
    vault = open_vault(folder, embedder, start_workers=False)
    try:
        t0 = time.perf_counter()
        vault.vectors.load_mirror()
        load_s = time.perf_counter() - t0
        fitted = vault.vectors.mirror.maintain()
        rng = random.Random(9)
        words = [r[0] for r in vault.store.query("SELECT text FROM spans WHERE id % 997 = 0 LIMIT 400")]
        qs = [" ".join(rng.choice(words).split()[2:9]) for _ in range(queries)]
        for q in qs[:5]:
            vault.recall(RecallRequest(conversation_id="bench", query=q))
        latencies = []
        for q in qs:
            t1 = time.perf_counter()
            result = vault.recall(RecallRequest(conversation_id="bench", query=q))
            latencies.append((time.perf_counter() - t1) * 1000)
            assert result.routing.strategy == "LOCAL"
        matrix = np.frombuffer(
            b"".join(
                r[0] for r in vault.store.query(f"SELECT embedding FROM {vault.vectors.table} WHERE kind = 'span'")
            ),
            dtype=np.float32,
        ).reshape(-1, 384)
        scans = []
        hits = 0
        for q in embedder.embed(qs):
            t1 = time.perf_counter()
            sims = matrix @ q
            np.argpartition(-sims, 30)[:30]
            scans.append((time.perf_counter() - t1) * 1000)
            # recall@10 of the vector search LOCAL runs (the mirror, with its reduced first pass when fitted)
            # against the exact top 10 of this scan; a vector as similar as the exact 10th counts as a hit.
            threshold = float(np.partition(sims, -10)[-10]) - 1e-6
            found = vault.vectors.mirror.search(q, 10, kinds=["span"], user_id="default")
            hits += sum(1 for _i, _k, sim in found if sim >= threshold)
        p95, scan95 = percentile(latencies, 95), percentile(scans, 95)
        return {
            "spans": spans,
            "mirror_load_s": round(load_s, 1),
            "first_pass": [{"dims": f.dims, "pool": f.pool, "recall": f.recall} for f in fitted],
            "local_recall_ms": {"p50": round(percentile(latencies, 50), 1), "p95": round(p95, 1)},
            "numpy_scan_ms": {"p50": round(percentile(scans, 50), 1), "p95": round(scan95, 1)},
            "ratio_p95_to_scan": round(p95 / scan95, 2),
            "vector_recall_at_10_vs_exact": round(hits / (10 * len(qs)), 4),
        }
    finally:
        vault.close()


def _build_spans(folder: Path, count: int) -> None:
    """``count`` spans in documents of 1,000 spans, inserted in bulk (real tables, FTS and vec0)."""
    from bench.doc_corpus import _sentence

    rng = random.Random(17)
    embedder = make_embedder("hashing")
    vault = open_vault(folder, embedder, start_workers=False)
    try:
        per_doc = 1000
        for start in range(0, count, per_doc):
            texts = [" ".join(_sentence(rng) for _ in range(4)) for _ in range(min(per_doc, count - start))]
            vectors = embedder.embed(texts)
            vault.store.write(lambda tx, t=texts, v=vectors, s=start: _insert_doc(tx, vault, t, v, s), timeout=600)
        (folder / "built").write_text("ok")
    finally:
        vault.close()


def _insert_doc(tx: Tx, vault: Vault, texts: list[str], vectors: Any, start: int) -> None:
    doc_id = tx.new_id("document")
    tx.execute(
        "INSERT INTO documents(id, user_id, name, content_hash, status, created_at, updated_at) "
        "VALUES (?, 'default', ?, ?, 'ready', ?, ?)",
        (doc_id, f"doc-{start}.md", f"h{start}", tx.now, tx.now),
    )
    section = tx.new_id("section")
    tx.execute(
        "INSERT INTO sections(id, document_id, ordinal, title, start_char, end_char) VALUES (?, ?, 0, 'Body', 0, 0)",
        (section, doc_id),
    )
    ids = tx.new_ids("span", len(texts))
    tx.executemany(
        "INSERT INTO spans(id, document_id, section_id, ordinal, text, start_char, end_char) "
        "VALUES (?, ?, ?, ?, ?, 0, 0)",
        [(i, doc_id, section, n, t) for n, (i, t) in enumerate(zip(ids, texts, strict=True))],
    )
    vault.vectors.add(tx, [VectorItem(i, "span", "default", vectors[n], "synth") for n, i in enumerate(ids)])


def main(argv: list[str] | None = None) -> None:
    """Run the three measurements."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", type=int, default=40)
    parser.add_argument("--pdf", type=int, default=15)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"machine": machine()}
    with tempfile.TemporaryDirectory(prefix="cairn-corpus-") as tmp:
        corpus = Path(tmp)
        generate(corpus, markdown=args.markdown, pdf=args.pdf, pages=args.pages, seed=7)
        out["ingest"] = [ingest_throughput(corpus, "hashing")]
        if (paths.models_dir() / "all-MiniLM-L6-v2" / "model.onnx").exists():
            out["ingest"].append(ingest_throughput(corpus, "onnx"))
        else:
            why = f"no ONNX model in {paths.models_dir() / 'all-MiniLM-L6-v2'} (run `make models`)"
            print(f"ONNX MiniLM ingest skipped: {why}", file=sys.stderr)
            out["ingest"].append({"embedder": "onnx", "skipped": why})
    out["edit_to_recallable"] = edit_to_recallable()
    if not args.skip_scale:
        out["local_at_scale"] = local_at_scale(args.spans)
    import json

    print(json.dumps(out, indent=2))
    write_json(args.json, out)


if __name__ == "__main__":
    main()
