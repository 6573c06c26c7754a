"""Usage feeds tiering (DESIGN §3): what a query selects counts as accessed, frequent use promotes warm → hot,
and a hot fact nobody asks about cools back to warm in the decay sweep.  Times are set explicitly (the sweep's
clock, the last access), never waited for."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from engine import Vault
from engine.config import Settings
from engine.facts import params
from engine.recall.types import RecallRequest, RecallResult
from engine.recall.usage import DAY, FLUSH_S, decay_sweep, record_access
from engine.store import Tx

REF = datetime(2024, 6, 10, 12, 0, tzinfo=UTC)


def recall(vault: Vault, query: str) -> RecallResult:
    result = vault.recall(RecallRequest(conversation_id="c", query=query, reference_time=REF))
    assert vault.jobs.wait_idle()  # usage is gathered and written in batches after the answer: record it now
    return result


def sweep_at(vault: Vault, now: float) -> int:
    """Run the decay sweep as if the clock read ``now``."""

    def op(tx: Tx) -> int:
        tx.now = now
        return decay_sweep(tx)

    return int(vault.store.write(op))


def last_access(vault: Vault, fact_id: int) -> tuple[int, float | None]:
    count, at = vault.store.query("SELECT access_count, last_accessed_at FROM facts WHERE id = ?", (fact_id,))[0]
    return int(count), at


def test_background_alone_is_not_use_so_an_idle_hot_fact_cools_down(vault: Vault) -> None:
    kayak = vault.facts.add("user", "likes", "sea kayaking")
    vault.store.write(lambda tx: tx.execute("UPDATE facts SET tier = 'hot' WHERE id = ?", (kayak.id,)))  # unpinned
    long_ago = time.time() - (params.DEMOTE_IDLE_DAYS + 10) * DAY
    vault.store.write(
        lambda tx: tx.execute(
            "UPDATE facts SET last_accessed_at = ?, access_count = 1 WHERE id = ?", (long_ago, kayak.id)
        )
    )
    for query in ("which train leaves for Hue", "when is the dentist appointment", "how tall is Mount Fansipan"):
        result = recall(vault, query)
        assert kayak.id in {b.id for b in result.background_context}, "hot facts ride along with every answer"
        assert kayak.id not in {b.id for b in result.blocks}
    assert last_access(vault, kayak.id) == (1, long_ago), "riding along is not an access"
    assert sweep_at(vault, time.time()) >= 1
    cooled = vault.facts.get(kayak.id)
    assert cooled.tier == "warm", "idle for longer than the demotion window"


def test_frequent_real_use_promotes_and_keeps_a_fact_hot(vault: Vault) -> None:
    kayak = vault.facts.add("user", "likes", "sea kayaking")
    assert kayak.tier == "warm"
    for _ in range(params.PROMOTE_ACCESS_COUNT):
        result = recall(vault, "kayaking")
        assert kayak.id in {b.id for b in result.blocks}
    promoted = vault.facts.get(kayak.id)
    assert promoted.tier == "hot" and promoted.access_count == params.PROMOTE_ACCESS_COUNT
    # asked about (selected, not merely in the background): an access that keeps it hot through the sweep
    before = last_access(vault, kayak.id)[1]
    assert before is not None
    result = recall(vault, "kayaking")
    assert kayak.id in {b.id for b in result.background_context} and kayak.id in {b.id for b in result.blocks}
    count, after = last_access(vault, kayak.id)
    assert count == params.PROMOTE_ACCESS_COUNT + 1 and after is not None and after >= before
    sweep_at(vault, after + (params.DEMOTE_IDLE_DAYS - 1) * DAY)
    assert vault.facts.get(kayak.id).tier == "hot", "used within the window"
    # and once nobody asks for longer than the window, it cools down
    sweep_at(vault, after + (params.DEMOTE_IDLE_DAYS + 1) * DAY)
    assert vault.facts.get(kayak.id).tier == "warm"


def test_a_pinned_hot_fact_never_cools(vault: Vault) -> None:
    pinned = vault.facts.set_tier(vault.facts.add("user", "likes", "green tea").id, "hot")
    sweep_at(vault, time.time() + (params.DEMOTE_IDLE_DAYS + 30) * DAY)
    assert vault.facts.get(pinned.id).tier == "hot"


def test_usage_is_gathered_into_one_write_with_summed_counts(vault: Vault) -> None:
    """Recalls close together cost one write transaction between them, and each counts: three recalls selecting a
    fact add three accesses (and reach promotion as three separate writes would)."""
    kayak = vault.facts.add("user", "likes", "sea kayaking")
    assert vault.jobs.wait_idle()
    writes: list[int] = []
    recorder = vault._recall._usage  # the recorder behind Vault.recall
    recorder._delay_s = 60.0  # however slow the machine, these recalls fall in one batch
    submit = recorder._submit
    recorder._submit = lambda op: (writes.append(1), submit(op))[1]
    for _ in range(params.PROMOTE_ACCESS_COUNT):
        result = vault.recall(RecallRequest(conversation_id="c", query="kayaking", reference_time=REF))
        assert kayak.id in {b.id for b in result.blocks}
    assert last_access(vault, kayak.id)[0] == 0, "nothing written while the batch gathers"
    assert vault.jobs.wait_idle()
    assert writes == [1], "one write for every recall in the batch"
    promoted = vault.facts.get(kayak.id)
    assert promoted.access_count == params.PROMOTE_ACCESS_COUNT and promoted.tier == "hot"


def test_gathered_usage_is_written_by_itself_within_the_flush_delay(vault: Vault) -> None:
    kayak = vault.facts.add("user", "likes", "sea kayaking")
    vault.recall(RecallRequest(conversation_id="c", query="kayaking", reference_time=REF))
    deadline = time.monotonic() + FLUSH_S + 10
    while last_access(vault, kayak.id)[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert last_access(vault, kayak.id)[0] == 1, "written by the recorder's timer, nobody asked for it"


def test_closing_the_vault_records_the_usage_still_gathered(tmp_path: Path, offline_settings: Settings) -> None:
    with Vault.open(tmp_path / "v", settings=offline_settings) as vault:
        kayak = vault.facts.add("user", "likes", "sea kayaking")
        vault.recall(RecallRequest(conversation_id="c", query="kayaking", reference_time=REF))
        vault.recall(RecallRequest(conversation_id="c", query="sea kayaking", reference_time=REF))
    with Vault.open(tmp_path / "v", settings=offline_settings) as vault:
        assert last_access(vault, kayak.id)[0] == 2


def test_record_access_restarts_a_stale_count_with_the_batch_count(vault: Vault) -> None:
    kayak = vault.facts.add("user", "likes", "sea kayaking")
    long_ago = time.time() - (params.PROMOTE_WINDOW_DAYS + 5) * DAY
    vault.store.write(
        lambda tx: tx.execute(
            "UPDATE facts SET last_accessed_at = ?, access_count = 40 WHERE id = ?", (long_ago, kayak.id)
        )
    )
    vault.store.write(lambda tx: record_access(tx, {kayak.id: 2}))
    assert last_access(vault, kayak.id)[0] == 2, "an old count restarts: promotion measures recent use"
    vault.store.write(lambda tx: record_access(tx, {kayak.id: 3}))
    assert last_access(vault, kayak.id)[0] == 5
