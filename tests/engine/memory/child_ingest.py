"""Child process for durability tests: ingests events and prints each acknowledged id, then waits to be killed.

Usage: python child_ingest.py VAULT_DIR COUNT WORKERS(0|1)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from engine import Settings, Vault
from engine.events import EventIn


def main() -> None:
    vault_dir, count, workers = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    vault = Vault.open(vault_dir, settings=settings, start_workers=workers)
    print("ready", flush=True)
    for i in range(count):
        result = vault.events.ingest(
            EventIn(
                conversation_id=f"c{i % 3}", content=f"I adopted a dog named Rex{i}.", occurred_at=1_700_000_000 + i
            )
        )
        print(f"ack {result.event_id}", flush=True)
    print("done", flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main()
