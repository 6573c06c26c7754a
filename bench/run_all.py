"""``make bench``: every benchmark in turn, each as its own process (a crash or a timeout in one does not hide the
others), results collected into ``bench/out/results.json``.  BENCHMARKS.md records the figures, the machine and
these commands.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"

RUNS = (
    ("truth", ["-m", "bench.truth"]),
    ("enrich", ["-m", "bench.enrich", "--sample", "10"]),
    ("locomo_hashing", ["-m", "bench.locomo", "--embedder", "hashing"]),
    ("locomo_onnx", ["-m", "bench.locomo", "--embedder", "onnx"]),
    ("recall_speed_hashing", ["-m", "bench.recall_speed", "--embedder", "hashing"]),
    ("recall_speed_onnx", ["-m", "bench.recall_speed", "--embedder", "onnx"]),
    ("chroma_speed", ["-m", "bench.chroma_speed"]),
    ("documents", ["-m", "bench.documents"]),
    ("document_shape", ["-m", "bench.shape"]),
    ("endpoint", ["-m", "bench.endpoint"]),
    ("durability", ["-m", "bench.durability", "--rounds", "100"]),
    ("gui", ["-m", "bench.gui"]),
)


def main() -> int:
    """Run each benchmark with ``--json`` into bench/out/ and merge the results."""
    OUT.mkdir(parents=True, exist_ok=True)
    merged: dict[str, object] = {}
    failed = []
    only = set(sys.argv[1:])  # e.g. ``python -m bench.run_all gui endpoint``
    for name, args in RUNS:
        if only and name not in only:
            continue
        target = OUT / f"{name}.json"
        started = time.perf_counter()
        print(f"== {name}", flush=True)
        proc = subprocess.run([sys.executable, *args, "--json", str(target)], cwd=ROOT, check=False)
        if proc.returncode != 0 or not target.exists():
            failed.append(name)
            continue
        merged[name] = json.loads(target.read_text())
        print(f"   done in {time.perf_counter() - started:.0f} s", flush=True)
    (OUT / "results.json").write_text(json.dumps(merged, indent=2, sort_keys=True))
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"results in {OUT / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
