"""``python -m bench.chroma_speed`` end to end on a tiny synthetic vault: the collections catch up with every stored
vector, searches through Chroma find what the exact scan finds, and every figure the benchmark promises is written.

Timings are not asserted (they depend on the machine); behaviour is.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import chroma_speed


def test_a_small_run_catches_up_and_reports_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "chroma.json"
    cache = tmp_path / "cache"
    chroma_speed.main(
        ["--facts", "300", "--events", "300", "--queries", "20", "--cache", str(cache), "--json", str(out)]
    )
    report = json.loads(out.read_text())
    assert report["vectors"] == report["chroma_vectors"] > 0
    assert report["queries"] == 20
    for key in ("search_ms", "numpy_scan_ms", "recall_ms"):
        assert set(report[key]) == {"p50", "p95"} and report[key]["p95"] >= report[key]["p50"] > 0
    # a few hundred vectors: the HNSW graph is small enough to be searched almost exhaustively
    assert report["search_recall_at_30_vs_exact"] >= 0.9
    assert not any(cache.rglob("chroma")), "the benchmark works on a copy; the cached vault gets no Chroma folder"
