"""Usage feeds tiering (DESIGN §3): recalled facts record access; frequent use promotes warm → hot, disuse decays.

Access is recorded after the answer is sent, so recall latency never pays for it, and in batches
(:class:`UsageRecorder`): one write transaction per :data:`FLUSH_S` however many recalls ran meanwhile.  A
transaction per recall cost a fifth of the endpoint's recall throughput on the benchmark vault — the commit itself,
and every reader's page cache, which SQLite discards whenever the database changed.  A crash loses at most the
last :data:`FLUSH_S` of access counts: a ranking signal, never a memory.  The periodic sweep demotes hot facts
nobody used for a long time and retires expired ephemeral ones.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any

from engine.facts import params
from engine.store import Tx, chunked

log = logging.getLogger(__name__)

DAY = 86400.0
#: Seconds between the first access gathered and the transaction that records it.
FLUSH_S = 1.0


class UsageRecorder:
    """Gathers the facts recalls selected and records them together, at most once per ``delay_s``.

    ``submit`` queues a write (the vault's writer); counts survive in memory until it is queued, and :meth:`close`
    queues what is left, so a clean shutdown loses nothing.
    """

    def __init__(self, submit: Callable[[Callable[[Tx], Any]], Future[Any]], delay_s: float = FLUSH_S) -> None:
        self._submit = submit
        self._delay_s = delay_s
        self._lock = threading.Lock()
        self._pending: Counter[int] = Counter()
        self._timer: threading.Timer | None = None
        self._closed = False

    def add(self, fact_ids: Iterable[int]) -> None:
        """Count one access for each of ``fact_ids`` (one recall's selection), written within ``delay_s``."""
        with self._lock:
            if self._closed:
                return
            self._pending.update(set(fact_ids))
            if self._pending and self._timer is None:
                self._timer = threading.Timer(self._delay_s, self._flush_soon)
                self._timer.daemon = True
                self._timer.name = "recall-usage"
                self._timer.start()

    def flush(self) -> Future[Any] | None:
        """Queue what was gathered now; returns the write's future (None when there was nothing)."""
        with self._lock:
            counts, self._pending = self._pending, Counter()
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        if not counts:
            return None
        return self._submit(lambda tx: record_access(tx, counts))

    def close(self) -> None:
        """Queue what is left; later accesses are ignored (the vault is closing)."""
        with self._lock:
            self._closed = True
        try:
            self.flush()
        except Exception:
            log.warning("recording recall usage failed at close", exc_info=True)

    def _flush_soon(self) -> None:
        try:
            self.flush()
        except Exception:
            log.warning("recording recall usage failed", exc_info=True)


def record_access(tx: Tx, counts: Mapping[int, int]) -> int:
    """Count ``counts[id]`` accesses for each fact; promote warm facts used often enough to hot.  Returns promotions."""
    promoted = 0
    window = tx.now - params.PROMOTE_WINDOW_DAYS * DAY
    by_count: dict[int, list[int]] = {}
    for fact_id, count in counts.items():
        if count > 0:
            by_count.setdefault(count, []).append(fact_id)
    for count, ids in sorted(by_count.items()):
        for chunk in chunked(sorted(ids)):
            marks = ",".join("?" * len(chunk))
            # a count older than the window restarts, so promotion measures recent use
            tx.execute(
                f"UPDATE facts SET access_count = CASE WHEN last_accessed_at IS NULL OR last_accessed_at < ? THEN ? "
                f"ELSE access_count + ? END, last_accessed_at = ? WHERE id IN ({marks})",
                (window, count, count, tx.now, *chunk),
            )
    for chunk in chunked(sorted(counts)):
        marks = ",".join("?" * len(chunk))
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
