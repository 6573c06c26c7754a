"""Shared helpers for the benchmarks: opening throwaway vaults, LoCoMo files, timing and percentiles."""

from __future__ import annotations

import json
import platform
import statistics
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from app.plugins import build_plugin_manager
from engine import paths
from engine.ai.embedders import HashingEmbedder, OnnxEmbedder
from engine.config import Settings
from engine.vault import Vault

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LOCOMO = ROOT.parent / "shared" / "bench-data" / "locomo-dev"


def machine() -> str:
    """One line describing this machine (recorded with every figure)."""
    import os

    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def make_embedder(name: str) -> Any:
    """``hashing`` or ``onnx`` (the exported all-MiniLM-L6-v2 in the models folder)."""
    if name == "hashing":
        return HashingEmbedder(384)
    if name == "onnx":
        return OnnxEmbedder(paths.models_dir() / "all-MiniLM-L6-v2")
    raise SystemExit(f"unknown embedder {name!r}: use hashing or onnx")


@contextmanager
def bench_vault(embedder: Any, *, folder: Path | None = None, **settings: Any) -> Iterator[Vault]:
    """A fresh vault in a temp folder with the rule path and the given embedder."""
    changes = {"llm.provider": "simple", "embedder.provider": "hashing", **settings}
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as tmp:
        vault = Vault.open(
            folder or Path(tmp) / "vault",
            settings=Settings().updated(changes),
            plugins=build_plugin_manager(load_entry_points=False),
            embedder=embedder,
        )
        try:
            yield vault
        finally:
            vault.close()


@dataclass(frozen=True, slots=True)
class Question:
    """One LoCoMo question with its evidence turn ids."""

    text: str
    category: int
    evidence: tuple[str, ...]


def locomo_files(folder: Path) -> list[Path]:
    """The conversation files of a LoCoMo-format folder."""
    files = sorted(p for p in folder.glob("*.json") if p.is_file())
    if not files:
        raise SystemExit(f"no LoCoMo .json files in {folder}")
    return files


def locomo_questions(data: dict[str, Any]) -> list[Question]:
    """Questions of categories 1–4 (5 is adversarial: no answer in the conversation)."""
    out = []
    for qa in data.get("qa", []):
        category = int(qa.get("category", 0))
        if category not in (1, 2, 3, 4):
            continue
        evidence: list[str] = []
        for item in qa.get("evidence", []):
            evidence.extend(part.strip() for part in str(item).replace(",", ";").split(";") if part.strip())
        if evidence:
            out.append(Question(str(qa["question"]), category, tuple(dict.fromkeys(evidence))))
    return out


def locomo_sessions(data: dict[str, Any]) -> list[tuple[int, str, list[dict[str, Any]]]]:
    """(session number, date text, turns) for every session with turns, in order."""
    body = data.get("conversation", data)
    sessions = []
    for key, value in body.items():
        if key.startswith("session_") and key.count("_") == 1 and isinstance(value, list) and value:
            number = int(key.split("_")[1])
            sessions.append((number, str(body.get(f"{key}_date_time", "")), value))
    return sorted(sessions)


def parse_session_date(text: str) -> datetime:
    """LoCoMo's ``1:56 pm on 8 May, 2023`` as an aware UTC datetime."""
    from engine.temporal import parse_datetime

    return parse_datetime(text)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0–100) of ``values`` (nearest rank)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def mean(values: list[float]) -> float:
    """Arithmetic mean (0 for none)."""
    return statistics.fmean(values) if values else 0.0


def write_json(path: Path | None, payload: dict[str, Any]) -> None:
    """Write results as JSON (pretty) when a path is given."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(payload, indent=2, sort_keys=True), encoding="utf-8")
