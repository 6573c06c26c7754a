"""Document shape: what a pathological outline costs the vault's process in memory.

A Markdown file of 100,000 one-line headings (~0.9 MB) used to become 100,000 sections and spans, and left the
server at ~850 MB RSS after the vault went idle (129 MB before).  This benchmark builds that file (and, with
``--bodies``, the same headings each followed by a one-line paragraph, which the section cap has to handle),
uploads it to a fresh vault with the shipped document settings, waits until the vault is idle (distillation done)
and reports the process's resident memory (current and peak, from ``/proc/self/status``), the document's status and
reason, and its section and span counts.

It measures one process, so run it alone: ``python -m bench.shape [--headings 100000] [--bodies] [--json F]``.
The figure the hardening asked for is "under 300 MB RSS after idle".
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import bench_vault, machine, make_embedder, write_json


def headings_file(folder: Path, count: int, *, bodies: bool) -> Path:
    """``count`` one-line Markdown headings (with a one-line paragraph under each when ``bodies``)."""
    path = folder / ("headings-with-bodies.md" if bodies else "headings.md")
    lines = []
    for i in range(count):
        lines.append(f"# H{i}")
        if bodies:
            lines.append(f"Line {i} under its heading.\n")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rss_mb() -> tuple[float, float]:
    """(current, peak) resident memory of this process in MB (Linux)."""
    values: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return round(values["VmRSS"], 1), round(values["VmHWM"], 1)


def measure(count: int, *, bodies: bool) -> dict[str, Any]:
    """Upload the file to a fresh vault, wait for idle, and report memory and the document's shape."""
    with tempfile.TemporaryDirectory(prefix="cairn-shape-") as tmp:
        source = headings_file(Path(tmp), count, bodies=bodies)
        # A generous parse timeout: this measures memory, not the parser's speed on a shared machine.
        with bench_vault(
            make_embedder("hashing"), folder=Path(tmp) / "v", **{"documents.parse_timeout_s": 300.0}
        ) as vault:
            vault.jobs.wait_idle(60)
            gc.collect()
            before, _ = rss_mb()
            started = time.perf_counter()
            result = vault.documents.upload(name=source.name, data=source.read_bytes())
            upload_s = time.perf_counter() - started
            idle = vault.jobs.wait_idle(600)
            gc.collect()
            after, peak = rss_mb()
            info = vault.documents.get(result.document_id).info if result.document_id else None
            return {
                "file": source.name,
                "headings": count,
                "bytes": source.stat().st_size,
                "upload_s": round(upload_s, 1),
                "idle": idle,
                "status": info.status if info else result.status,
                "reason": info.status_reason if info else result.reason,
                "sections": info.sections if info else 0,
                "spans": info.spans if info else 0,
                "rss_before_mb": before,
                "rss_after_idle_mb": after,
                "rss_peak_mb": peak,
            }


def main(argv: list[str] | None = None) -> int:
    """Run and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--headings", type=int, default=100_000)
    parser.add_argument("--bodies", action="store_true", help="a one-line paragraph under each heading")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    figures = {"machine": machine(), **measure(args.headings, bodies=args.bodies)}
    for key, value in figures.items():
        print(f"{key:>18}: {value}")
    if args.json is not None:
        write_json(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
