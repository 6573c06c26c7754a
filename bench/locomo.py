"""LoCoMo evidence-recall benchmark: Cairn's recall beside a plain BM25 index of the same turns.

Each conversation goes into a fresh vault through the LoCoMo importer (every turn a ``message`` event with the
speaker as author, the session date as ``occurred_at``, image captions kept as text) and is enriched on the rule
path.  Every question of categories 1–4 is recalled with ``reference_time`` = the last session's date.  Evidence
recall@k (``bench-data/locomo-dev/README.md``): the top k ranked blocks are mapped to the one turn each comes from
(the turn, or the turn holding a fact's evidence; episodes, conflicts and other summaries map to none but still take
their slot; a turn reached twice counts once), and the score is the fraction of the question's evidence turns among
them.

Beside recall, what the prompt would carry: ``llm_context`` precision and tokens per query.  An *item* is one entry
the text carries (``LLMContext.items``: each fact, turn, episode, span, distillation, conflict or understanding line,
background facts included; header and section titles are not items).  An item is *evidence* when the turn it comes
from is one of the question's evidence turns: a turn is its own turn; a fact is the turn it was extracted from (its
``event_id``, looked up in the vault — not whatever the block quotes); an understanding is evidence when any turn
it leads to is; a conflict when either fact's turn is.  Items from no turn (episodes, document passages, facts typed
by hand) count as non-evidence.  Precision is evidence items / items per question, averaged over questions (a
question whose text carries no items scores 0).  Beside it, context recall: the share of the question's evidence
turns the text carries at all, so that a cut which raises precision by dropping evidence shows.  Tokens per query is
``LLMContext.tokens``, the text's own estimate (``engine.recall.assemble.tokens``: ≈ 4 characters a token), at the
default token budget.

The baseline indexes one FTS5 row per turn (speaker + session date + text) and ranks by BM25 with the question's
words OR-ed — the "plain index" of the README.

After enrichment the vault runs one consolidation pass (what a quiet vault does by itself), so questions that name a
subject can bring its understanding; ``--no-understandings`` leaves both out.

Usage: ``python -m bench.locomo [--data DIR] [--json FILE] [--embedder hashing|onnx] [--files N] [--only 26,30,41]
[--no-understandings]`` (``--only`` keeps the conversations whose file name starts with one of the given stems: the
tuning half 26, 30, 41 and the held-out half 42, 43).
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import (
    DEFAULT_LOCOMO,
    Question,
    bench_vault,
    locomo_files,
    locomo_questions,
    locomo_sessions,
    machine,
    make_embedder,
    mean,
    parse_session_date,
    percentile,
    write_json,
)
from engine.recall.types import RecallRequest, RecallResult

KS = (5, 10, 20)
_TOKEN = re.compile(r"[A-Za-z0-9]+")


def ranked_turns(result: RecallResult) -> list[str | None]:
    """The turn (dia_id) of each ranked block, in rank order; None for a block that comes from no single turn.

    Every block keeps its slot: a summary or a second block from an already-seen turn is not dropped before the
    cut at k, so a top 10 is never more than ten blocks (the README's definition).  An understanding block is
    expanded to the turns it leads to, each in a slot of its own: it earns its place by them.
    """
    turns: list[str | None] = []
    for block in result.blocks:
        if block.kind == "understanding":
            # expanded to its evidence: each turn it leads to takes a slot (and it takes one even with none)
            led = [str(t) if t else None for t in block.meta.get("evidence_external_ids", [])]
            turns.extend(led or [None])
            continue
        external = block.meta.get("external_id")
        turns.append(str(external) if external else None)
    return turns


def context_items(result: RecallResult, fact_turn: dict[int, str], event_turn: dict[int, str]) -> list[set[str]]:
    """The turns (dia_ids) each item of ``llm_context`` maps to, in text order; an empty set for an item from none.

    ``fact_turn`` maps a fact to the turn it was extracted from and ``event_turn`` an event to its dia_id (both read
    from the vault), so a fact counts by its own turn whatever evidence its block shows.
    """
    by_key = {(b.kind, b.id): b for b in (*result.background_context, *result.blocks)}
    out: list[set[str]] = []
    for kind, item_id in result.llm_context.items:
        block = by_key.get((kind, item_id))
        turns: set[str] = set()
        if kind == "event":
            turns = {event_turn[item_id]} if item_id in event_turn else set()
        elif kind == "fact":
            turns = {fact_turn[item_id]} if item_id in fact_turn else set()
        elif kind == "understanding" and block is not None:
            turns = {str(t) for t in block.meta.get("evidence_external_ids", []) if t}
        elif kind == "conflict" and block is not None:
            turns = {fact_turn[f] for f in (block.meta.get("fact_a"), block.meta.get("fact_b")) if f in fact_turn}
        out.append(turns)
    return out


def precision(items: Sequence[set[str]], evidence: tuple[str, ...]) -> float:
    """The share of items that are evidence for the question (0 when the text carries none)."""
    if not items:
        return 0.0
    wanted = set(evidence)
    return sum(1 for turns in items if turns & wanted) / len(items)


def context_recall(items: Sequence[set[str]], evidence: tuple[str, ...]) -> float:
    """The share of the question's evidence turns the text carries (what a precision cut must not give away)."""
    carried = set().union(*items) if items else set()
    return len(carried & set(evidence)) / len(evidence)


def score(turns: Sequence[str | None], evidence: tuple[str, ...]) -> dict[int, float]:
    """Evidence recall at each k: the evidence turns among the first k items (None and repeats add nothing)."""
    return {k: len({t for t in turns[:k] if t is not None} & set(evidence)) / len(evidence) for k in KS}


def summarise(rows: list[dict[str, Any]], latencies: list[float]) -> dict[str, Any]:
    """Overall and per-category recall@k with latency percentiles."""
    by_category: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_category[row["category"]].append(row)

    def agg(items: list[dict[str, Any]]) -> dict[str, float]:
        out = {f"recall@{k}": round(mean([r["recall"][k] for r in items]), 4) for k in KS}
        if items and "precision" in items[0]:
            out["context_precision"] = round(mean([r["precision"] for r in items]), 4)
            out["context_recall"] = round(mean([r["context_recall"] for r in items]), 4)
            out["context_items"] = round(mean([r["items"] for r in items]), 2)
            out["tokens_per_query"] = round(mean([r["tokens"] for r in items]), 1)
        return out | {"n": len(items)}

    return {
        "overall": agg(rows),
        "by_category": {str(c): agg(items) for c, items in sorted(by_category.items())},
        "latency_ms": {"p50": round(percentile(latencies, 50), 2), "p95": round(percentile(latencies, 95), 2)},
    }


class Baseline:
    """One FTS5 row per turn (speaker + session date + text), BM25 over the question's words."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE VIRTUAL TABLE turns USING fts5(dia_id UNINDEXED, body, "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )

    def add(self, data: dict[str, Any]) -> None:
        """Index every turn of one conversation."""
        rows = []
        for _number, date, turns in locomo_sessions(data):
            for turn in turns:
                text = str(turn.get("text", ""))
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                rows.append((str(turn["dia_id"]), f"{turn.get('speaker', '')} {date} {text}"))
        self.db.executemany("INSERT INTO turns(dia_id, body) VALUES (?, ?)", rows)

    def search(self, question: str, k: int = max(KS)) -> list[str]:
        """The top-k turns for a question."""
        words = _TOKEN.findall(question)
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        return [
            r[0]
            for r in self.db.execute(
                "SELECT dia_id FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?", (match, k)
            )
        ]


def run_file(
    path: Path, embedder_name: str, understandings: bool = True
) -> tuple[list[dict[str, Any]], list[float], list[dict[str, Any]], list[float], dict[str, Any]]:
    """Benchmark one conversation file: (cairn rows, cairn latencies, baseline rows, baseline latencies, info)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    questions = locomo_questions(data)
    sessions = locomo_sessions(data)
    reference = parse_session_date(sessions[-1][1])
    cairn_rows: list[dict[str, Any]] = []
    cairn_ms: list[float] = []
    with bench_vault(make_embedder(embedder_name), **{"recall.understandings": understandings}) as vault:
        t0 = time.perf_counter()
        summary = vault.conversations.import_summary(path)
        if summary.errors:
            raise SystemExit(f"{path.name}: import errors: {summary.errors}")
        vault.jobs.wait_idle(timeout=3600)
        enrich_s = time.perf_counter() - t0
        if understandings:
            vault.workspace.consolidate()  # the pass a quiet vault runs by itself (the extractive synthesis)
        conversation_id = vault.conversations()[0].conversation_id
        event_turn = {
            int(i): str(e)
            for i, e in vault.store.query("SELECT id, external_id FROM events WHERE external_id IS NOT NULL")
        }
        fact_turn = {
            int(f): event_turn[int(e)]
            for f, e in vault.store.query("SELECT id, event_id FROM facts WHERE event_id IS NOT NULL")
            if int(e) in event_turn
        }
        for q in questions:
            t1 = time.perf_counter()
            result = vault.recall(
                RecallRequest(conversation_id=conversation_id, query=q.text, reference_time=reference, limit=max(KS))
            )
            cairn_ms.append((time.perf_counter() - t1) * 1000)
            row = _row(q, ranked_turns(result))
            items = context_items(result, fact_turn, event_turn)
            row |= {
                "precision": precision(items, q.evidence),
                "context_recall": context_recall(items, q.evidence),
                "items": len(items),
                "tokens": result.llm_context.tokens,
            }
            cairn_rows.append(row)
        info = {
            "file": path.name,
            "turns": summary.events_added,
            "questions": len(questions),
            "ingest_and_enrich_s": round(enrich_s, 2),
            "facts": vault.counts().active_facts,
            "embedder": vault.embedder.model_id,
            "llm": vault.llm_engine,
        }
    baseline = Baseline()
    baseline.add(data)
    base_rows: list[dict[str, Any]] = []
    base_ms: list[float] = []
    for q in questions:
        t1 = time.perf_counter()
        turns = baseline.search(q.text)
        base_ms.append((time.perf_counter() - t1) * 1000)
        base_rows.append(_row(q, turns))
    return cairn_rows, cairn_ms, base_rows, base_ms, info


def _row(q: Question, turns: Sequence[str | None]) -> dict[str, Any]:
    return {
        "question": q.text,
        "category": q.category,
        "evidence": list(q.evidence),
        "top": list(turns[:10]),
        "recall": score(turns, q.evidence),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print (and optionally write) the results."""
    parser = argparse.ArgumentParser(description="LoCoMo evidence recall: Cairn vs a plain BM25 index")
    parser.add_argument("--data", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--embedder", default="hashing", choices=["hashing", "onnx"])
    parser.add_argument("--files", type=int, default=0, help="only the first N files (0 = all)")
    parser.add_argument(
        "--only", default="", help="comma-separated file stems to keep, e.g. 26,30,41 (the tuning half) or 42,43"
    )
    parser.add_argument("--misses", type=Path, default=None, help="write per-question results for inspection")
    parser.add_argument(
        "--no-understandings",
        action="store_true",
        help="no consolidation pass and no understanding blocks (the 'before' of BENCHMARKS' understandings row)",
    )
    args = parser.parse_args(argv)
    files = locomo_files(args.data)
    if args.files:
        files = files[: args.files]
    if args.only:
        stems = {s.strip() for s in args.only.split(",") if s.strip()}
        files = [p for p in files if p.stem in stems]
        if not files:
            raise SystemExit(f"--only {args.only}: no such files in {args.data}")
    cairn_rows: list[dict[str, Any]] = []
    base_rows: list[dict[str, Any]] = []
    cairn_ms: list[float] = []
    base_ms: list[float] = []
    infos = []
    by_file: dict[str, dict[str, Any]] = {}
    for path in files:
        c_rows, c_ms, b_rows, b_ms, info = run_file(path, args.embedder, not args.no_understandings)
        cairn_rows += c_rows
        base_rows += b_rows
        cairn_ms += c_ms
        base_ms += b_ms
        infos.append(info)
        by_file[path.stem] = summarise(c_rows, c_ms)["overall"]
        c10 = mean([r["recall"][10] for r in c_rows])
        b10 = mean([r["recall"][10] for r in b_rows])
        print(
            f"{path.name}: {info['turns']} turns, {info['facts']} facts, enrich {info['ingest_and_enrich_s']} s; "
            f"recall@10 cairn {c10:.3f} vs baseline {b10:.3f}; context precision "
            f"{mean([r['precision'] for r in c_rows]):.3f}, {mean([r['tokens'] for r in c_rows]):.0f} tokens/query",
            flush=True,
        )
    payload = {
        "cairn": summarise(cairn_rows, cairn_ms),
        "baseline": summarise(base_rows, base_ms),
        "cairn_by_file": by_file,
        "embedder": infos[0]["embedder"],
        "llm": infos[0]["llm"],
        "machine": machine(),
        "files": infos,
    }
    print(json.dumps({k: payload[k] for k in ("cairn", "baseline", "embedder", "llm")}, indent=2))
    gain = payload["cairn"]["overall"]["recall@10"] - payload["baseline"]["overall"]["recall@10"]
    print(f"recall@10 gain over the plain index: {gain:+.3f}")
    overall = payload["cairn"]["overall"]
    print(
        f"llm_context: precision {overall['context_precision']:.3f} ({overall['context_items']} items), "
        f"context recall {overall['context_recall']:.3f}, "
        f"{overall['tokens_per_query']} tokens/query; recall@5 {overall['recall@5']:.3f}, "
        f"recall@10 {overall['recall@10']:.3f}"
    )
    for category, agg in payload["cairn"]["by_category"].items():
        print(
            f"  category {category}: precision {agg['context_precision']:.3f}, "
            f"context recall {agg['context_recall']:.3f}, {agg['tokens_per_query']} tokens/query, "
            f"recall@5 {agg['recall@5']:.3f}, recall@10 {agg['recall@10']:.3f} (n={agg['n']})"
        )
    write_json(args.json, payload)
    if args.misses:
        write_json(args.misses, {"cairn": cairn_rows, "baseline": base_rows})


if __name__ == "__main__":
    main()
