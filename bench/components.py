"""Throughput of the per-message stages that every turn goes through: the privacy firewall, the classifier, the rule
extractor and the date finder, each on a few thousand ordinary chat messages (CPU time of this process).

These rates used to be asserted by the test suite; on a machine shared with other work a rate is a measurement, not
a behaviour, so they live here and in BENCHMARKS.md.  Floors below are what a two-core laptop must sustain for
enrichment to keep up with a chat; the report says whether each was met.

Usage: ``python -m bench.components [--json out.json]``
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import machine, write_json
from engine.config import PrivacySettings
from engine.facts.catalog import load_catalog
from engine.facts.classifier import classify
from engine.facts.rules import extract
from engine.privacy import apply
from engine.temporal import find_mentions

CHAT = (
    "Hey! How was your weekend? We went hiking near the lake on Saturday.",
    "I'm so swamped with the kids and work right now. Anything new with you?",
    "Haha yes, I love that movie! We should watch it together sometime.",
    "I just started a pottery class and it's like therapy for me.",
    "Thanks so much, that means a lot to me. Talk soon!",
    "My favorite food is pho, and I'm allergic to peanuts.",
    "Gonna explore more and volunteer at shelters next month. Can't wait!",
    "The train was {n} minutes late again, I missed the {h}:{m} meeting.",
    "Did you finish the report for the {n} clients?",
    "I'm planning to visit my parents in March.",
    "Last summer we went camping by the lake.",
    "The deadline is 8 May, 2023 so I need to hurry.",
    "Tôi sống ở Hà Nội và tôi thích phở.",
)
FLOORS = {"firewall": 1000.0, "classifier": 500.0, "rules": 800.0, "dates": 3000.0}


def messages(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [
        rng.choice(CHAT).format(n=rng.randint(2, 99), h=rng.randint(1, 12), m=rng.choice(("00", "30"))) + f" ({i})"
        for i in range(n)
    ]


def rate(work: Callable[[str], Any], texts: Sequence[str]) -> float:
    """Messages per CPU second of this process."""
    work(texts[0])  # warm caches (compiled regexes, the catalog)
    t0 = time.process_time()
    for text in texts:
        work(text)
    return len(texts) / max(time.process_time() - t0, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    texts = messages(args.messages)
    policy = PrivacySettings()
    catalog = load_catalog()
    anchor = datetime(2024, 5, 15, 10, 30, tzinfo=UTC)
    rates = {
        "firewall": rate(lambda t: apply(t, policy), texts),
        "classifier": rate(classify, texts),
        "rules": rate(lambda t: extract(t, speaker="user", catalog=catalog), texts),
        "dates": rate(lambda t: find_mentions(t, anchor), texts),
    }
    payload = {
        "machine": machine(),
        "messages": len(texts),
        "per_cpu_second": {k: round(v) for k, v in rates.items()},
        "floors": FLOORS,
        "all_met": all(rates[k] >= FLOORS[k] for k in FLOORS),
    }
    print(json.dumps(payload, indent=2))
    write_json(args.json, payload)


if __name__ == "__main__":
    main()
