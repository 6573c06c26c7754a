"""Usage feeds tiering (DESIGN §3): recalled facts record access; frequent use promotes warm → hot, disuse decays.

Access is recorded after the answer is sent (through the writer, without waiting), so recall latency never pays
for it.  The periodic sweep demotes hot facts nobody used for a long time and retires expired ephemeral ones.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.facts import params
from engine.store import Tx
from engine.store.writer import chunked

DAY = 86400.0


def record_access(tx: Tx, fact_ids: Sequence[int]) -> int:
    """Count one access for each fact; promote warm facts used often enough to hot.  Returns promotions."""
    promoted = 0
    window = tx.now - params.PROMOTE_WINDOW_DAYS * DAY
    for chunk in chunked(sorted(set(fact_ids))):
        marks = ",".join("?" * len(chunk))
        # a count older than the window restarts, so promotion measures recent use
        tx.execute(
            f"UPDATE facts SET access_count = CASE WHEN last_accessed_at IS NULL OR last_accessed_at < ? THEN 1 "
            f"ELSE access_count + 1 END, last_accessed_at = ? WHERE id IN ({marks})",
            (window, tx.now, *chunk),
        )
        rows = tx.execute(
            f"SELECT id FROM facts WHERE id IN ({marks}) AND tier = 'warm' AND tier_pinned = 0 "
            "AND status = 'active' AND standing IN ('fact', 'working') AND access_count >= ?",
            (*chunk, params.PROMOTE_ACCESS_COUNT),
        ).fetchall()
        for (fact_id,) in rows:
            tx.execute("UPDATE facts SET tier = 'hot', updated_at = ? WHERE id = ?", (tx.now, fact_id))
            tx.emit("memory.updated", int(fact_id), reason="promoted to hot by use")
            promoted += 1
    return promoted


def decay_sweep(tx: Tx) -> int:
    """Demote idle hot facts (not pinned, not hot by nature) and retire expired ephemeral facts to cold."""
    idle_since = tx.now - params.DEMOTE_IDLE_DAYS * DAY
    demoted = tx.execute(
        "SELECT id FROM facts WHERE tier = 'hot' AND tier_pinned = 0 AND status = 'active' "
        "AND COALESCE(last_accessed_at, recorded_at) < ? "
        "AND COALESCE(json_extract(metadata, '$.tier_hint'), 'warm') != 'hot'",
        (idle_since,),
    ).fetchall()
    expired = tx.execute(
        "SELECT id FROM facts WHERE tier != 'cold' AND tier_pinned = 0 AND status = 'active' AND decay = 'ephemeral' "
        "AND valid_to IS NOT NULL AND valid_to < ?",
        (tx.now,),
    ).fetchall()
    for (fact_id,) in demoted:
        tx.execute("UPDATE facts SET tier = 'warm', updated_at = ? WHERE id = ?", (tx.now, fact_id))
        tx.emit("memory.updated", int(fact_id), reason="demoted: unused")
    for (fact_id,) in expired:
        tx.execute("UPDATE facts SET tier = 'cold', updated_at = ? WHERE id = ?", (tx.now, fact_id))
        tx.emit("memory.updated", int(fact_id), reason="expired")
    return len(demoted) + len(expired)
