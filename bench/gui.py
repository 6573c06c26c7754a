"""GUI figures on the 100k-fact synthetic vault: cold start to first paint, the longest event-loop stall while the
Memories table is flung from top to bottom, and the longest stall while 200 events/s arrive over the endpoint.

The measurements themselves are :mod:`bench.desktop.measure` (each mode in its own process, offscreen Qt); this
module only prepares the vault — the synthetic vault of :mod:`bench.synth` (100k facts, 100k events, hashing
vectors), cached under ``bench/out/`` and shared with :mod:`bench.recall_speed` — and gives every mode a fresh copy
of it, because the ingest mode adds events and every mode writes the UI's state.  It compiles the project's
bytecode first, as an install does, so that the start-up figure is an installed app's.

Usage: ``python -m bench.gui [--facts 100000] [--events 100000] [--json FILE]``
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import ROOT, machine, write_json
from bench.synth import build

#: The targets of the desktop issue, in milliseconds.
TARGETS = {"first_paint_ms_max": 1500.0, "stall_ms_max": 100.0}
MODES = (("startup", ["--startup"]), ("scroll", []), ("ingest_stall", ["--ingest-stall"]))


def cached_vault(cache: Path, facts: int, events: int) -> Path:
    """The synthetic vault of these sizes with hashing vectors (built on first use)."""
    folder = cache / f"synth-{facts}-{events}-hashing"
    if not (folder / "synth.json").exists():
        if folder.exists():
            raise SystemExit(f"{folder} exists without synth.json (an interrupted build?); remove it and re-run")
        print(f"building {folder} …", flush=True)
        build(folder, facts, events, "hashing")
    return folder


def compile_bytecode() -> None:
    """Compile the project's modules as an install does (pip compiles wheels; ``make``'s install step this tree).

    Without it a start recompiles every module it imports whose bytecode is missing or older than its source (with
    ``PYTHONDONTWRITEBYTECODE`` set, every time), which no installed app does.
    """
    for package in ("app", "engine", "ui", "plugins"):
        compileall.compile_dir(ROOT / package, quiet=1)


def run_mode(vault: Path, flags: list[str]) -> dict[str, Any]:
    """One ``bench.desktop.measure`` mode on a copy of ``vault``, in its own offscreen process."""
    with tempfile.TemporaryDirectory(prefix="cairn-gui-bench-") as tmp:
        copy = Path(tmp) / "vault"
        shutil.copytree(vault, copy, ignore=shutil.ignore_patterns("token", "*.lock", "backups"))
        out = Path(tmp) / "out.json"
        env = os.environ | {"QT_QPA_PLATFORM": "offscreen", "CAIRN_HOME": str(Path(tmp) / "home")}
        command = [sys.executable, "-m", "bench.desktop.measure", *flags, "--vault", str(copy), "--json", str(out)]
        subprocess.run(command, cwd=ROOT, env=env, check=True)
        result: dict[str, Any] = json.loads(out.read_text())
        return result


def main(argv: list[str] | None = None) -> int:
    """Every mode in turn; the merged figures and their verdicts printed and written."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, default=ROOT / "bench" / "out")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    vault = cached_vault(args.cache, args.facts, args.events)
    compile_bytecode()
    payload: dict[str, Any] = {"machine": machine(), "facts": args.facts, "events": args.events, "targets": TARGETS}
    for name, flags in MODES:
        print(f"-- {name}", flush=True)
        payload[name] = run_mode(vault, flags)[name]
    payload["pass"] = {
        "first_paint": payload["startup"]["first_paint_median_ms"] <= TARGETS["first_paint_ms_max"],
        "scroll_stall": payload["scroll"]["longest_stall_ms"] <= TARGETS["stall_ms_max"],
        "ingest_stall": payload["ingest_stall"]["longest_stall_ms"] <= TARGETS["stall_ms_max"],
    }
    print(json.dumps(payload, indent=2))
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
