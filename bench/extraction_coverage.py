"""Rule-extraction coverage on LoCoMo: how many annotated observations get a fact from their turns.

For every ``session_N_observation`` item (speaker → [observation text, evidence dia_id(s)]) of
each conversation, the item is *covered* when at least one of its evidence turns yields at least
one proposition, extracting the turn's text with ``speaker`` = the turn's speaker (a shared photo's
caption is appended as " [shares a photo: <caption>]", as the importer does).  Also prints the
extraction speed and a random sample of propositions to read: coverage without precision is
worthless, so look at the sample.

    python -m bench.extraction_coverage [--data DIR] [--only 26,30] [--sample 30] [--seed 7] [--uncovered N]
                                        [--fail-under 0.6]

``--only`` keeps the named conversations (file stems), so a change tuned on some of them can be checked on the
others; ``--uncovered N`` prints N uncovered observation items (a random choice, same seed) with their evidence
turns, to read what the rules miss.

The data directory defaults to ``../shared/bench-data/locomo-dev`` relative to the repository
root; its files are read in place and never copied.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.facts.catalog import Catalog, load_catalog
from engine.facts.rules import extract
from engine.facts.types import Proposition

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "bench-data" / "locomo-dev"
_SESSION_RE = re.compile(r"^session_(\d+)$")
_OBSERVATION_RE = re.compile(r"^session_(\d+)_observation$")


@dataclass(frozen=True, slots=True)
class Turn:
    """One dialogue turn as the pipeline would see it."""

    dia_id: str
    speaker: str
    text: str


@dataclass(slots=True)
class ConversationResult:
    """Coverage figures of one conversation."""

    name: str
    speakers: str
    items: int = 0
    covered: int = 0
    turns: int = 0
    propositions: int = 0
    facts: dict[str, list[Proposition]] = field(default_factory=dict)
    turn_by_id: dict[str, Turn] = field(default_factory=dict)
    uncovered: list[tuple[str, str, list[str]]] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        return self.covered / self.items if self.items else 0.0


def turn_text(raw: dict[str, Any]) -> str:
    """The turn's text, with a shared photo's caption appended the way the importer does it."""
    text = str(raw.get("text", ""))
    caption = raw.get("blip_caption")
    if caption:
        text += f" [shares a photo: {caption}]"
    return text


def load_turns(conversation: dict[str, Any]) -> dict[str, Turn]:
    """All turns of a conversation by dia_id."""
    turns: dict[str, Turn] = {}
    for key, value in conversation.items():
        if _SESSION_RE.match(key) and isinstance(value, list):
            for raw in value:
                turns[raw["dia_id"]] = Turn(raw["dia_id"], raw["speaker"], turn_text(raw))
    return turns


def observation_items(conversation: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """(speaker, observation, evidence dia_ids) for every observation item."""
    items: list[tuple[str, str, list[str]]] = []
    for key, value in conversation.items():
        if not _OBSERVATION_RE.match(key) or not isinstance(value, dict):
            continue
        for speaker, entries in value.items():
            for entry in entries:
                observation, evidence = entry[0], entry[1]
                ids = evidence if isinstance(evidence, list) else re.split(r"[,;\s]+", str(evidence))
                items.append((speaker, observation, [i for i in (s.strip() for s in ids) if i]))
    return items


def measure(path: Path, catalog: Catalog) -> ConversationResult:
    """Coverage of one conversation file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    conversation = data.get("conversation", data)
    turns = load_turns(conversation)
    result = ConversationResult(path.stem, f"{conversation.get('speaker_a')} & {conversation.get('speaker_b')}")
    result.turns = len(turns)
    result.turn_by_id = turns
    for dia_id, turn in turns.items():
        result.facts[dia_id] = extract(turn.text, speaker=turn.speaker, catalog=catalog)
    result.propositions = sum(len(v) for v in result.facts.values())
    for speaker, observation, ids in observation_items(conversation):
        result.items += 1
        if any(result.facts.get(i) for i in ids):
            result.covered += 1
        else:
            result.uncovered.append((speaker, observation, ids))
    return result


def speed(texts: list[tuple[str, str]], catalog: Catalog, *, repeats: int = 3) -> float:
    """Turns per second on one core: CPU time of this process, best of ``repeats`` passes.

    CPU time rather than wall time, so that other processes sharing the machine do not distort it.
    """
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        for text, speaker in texts:
            extract(text, speaker=speaker, catalog=catalog)
        best = min(best, time.process_time() - t0)
    return len(texts) / best if best > 0 else float("inf")


def print_uncovered(results: list[ConversationResult], count: int, rng: random.Random) -> None:
    """``count`` uncovered observation items, chosen at random, each with its evidence turns."""
    pool = [(r, item) for r in results for item in r.uncovered]
    chosen = rng.sample(pool, min(count, len(pool)))
    print(f"\n{len(chosen)} of {len(pool)} uncovered observation items:")
    for r, (speaker, observation, ids) in chosen:
        print(f"* [{r.name}] {speaker}: {observation}")
        for dia_id in ids:
            turn = r.turn_by_id.get(dia_id)
            text = turn.text if turn is not None else "(no such turn)"
            who = turn.speaker if turn is not None else "?"
            print(f"    {dia_id} {who}: {text}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its report; returns 1 when coverage is below ``--fail-under``."""
    parser = argparse.ArgumentParser(prog="python -m bench.extraction_coverage", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of LoCoMo conversation JSON files")
    parser.add_argument("--sample", type=int, default=30, help="propositions to print for reading")
    parser.add_argument("--seed", type=int, default=7, help="random seed of the sample")
    parser.add_argument("--only", default="", help="comma-separated conversation file stems to keep (e.g. 42,43)")
    parser.add_argument("--uncovered", type=int, default=0, help="uncovered observation items to print")
    parser.add_argument("--fail-under", type=float, default=None, help="exit 1 below this overall coverage")
    args = parser.parse_args(argv)

    files = sorted(args.data.glob("*.json"))
    if args.only:
        keep = {name.strip() for name in args.only.split(",") if name.strip()}
        files = [f for f in files if f.stem in keep]
    if not files:
        print(f"no conversation files in {args.data}", file=sys.stderr)
        return 2
    catalog = load_catalog()
    results = [measure(path, catalog) for path in files]

    print(f"Rule extraction coverage of LoCoMo observations ({args.data})")
    header = ("conversation", "speakers", "items", "covered", "coverage", "turns", "props")
    print("{:<14}{:<22}{:>6}{:>9}{:>10}{:>7}{:>7}".format(*header))
    row = "{:<14}{:<22}{:>6}{:>9}{:>10.3f}{:>7}{:>7}"
    for r in results:
        print(row.format(r.name, r.speakers, r.items, r.covered, r.coverage, r.turns, r.propositions))
    items = sum(r.items for r in results)
    covered = sum(r.covered for r in results)
    overall = covered / items if items else 0.0
    turn_count = sum(r.turns for r in results)
    props = sum(r.propositions for r in results)
    print(row.format("overall", "", items, covered, overall, turn_count, props))
    with_facts = sum(1 for r in results for v in r.facts.values() if v)
    share = with_facts / max(turn_count, 1)
    print(f"turns with at least one proposition: {with_facts}/{turn_count} ({share:.3f})")

    texts: list[tuple[str, str]] = []
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        texts.extend((t.text, t.speaker) for t in load_turns(data.get("conversation", data)).values())
    rate = speed(texts, catalog)
    print(f"speed: {rate:,.0f} turns/s on one core, CPU time ({len(texts)} turns, best of 3)")

    predicates = Counter(p.predicate for r in results for v in r.facts.values() for p in v)
    print("predicates: " + ", ".join(f"{name} {count}" for name, count in predicates.most_common(20)))

    everything = [p for r in results for v in r.facts.values() for p in v]
    rng = random.Random(args.seed)
    sample = rng.sample(everything, min(args.sample, len(everything)))
    print(f"\nrandom sample of {len(sample)} propositions (seed {args.seed}):")
    print("subject | predicate | object | evidence")
    for p in sample:
        flags = ("  [negated]" if p.negated else "") + ("  [change]" if p.change_cue else "")
        print(f"- {p.subject} | {p.predicate} | {p.object} | {p.evidence.text}{flags}")
    if args.uncovered:
        print_uncovered(results, args.uncovered, random.Random(args.seed))
    if args.fail_under is not None and overall < args.fail_under:
        print(f"\ncoverage {overall:.3f} is below {args.fail_under}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
