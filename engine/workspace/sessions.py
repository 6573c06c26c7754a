"""Sessions of the workspace: what an assistant has already been shown, and when its context was lost.

``bring_to_mind`` surfaces understandings and fresh observations on a topic and notes them in the session's *seen
log*, so the next call brings something new instead of repeating itself.  Each answer carries a heartbeat token;
the client sends the last one back.  A token that does not match (or none at all for a known session), or a gap
of more than :data:`COMPACTION_GAP_S`, means the client's context was compacted — what it was shown is gone from
it — so the seen log starts again.  Sessions are provenance only: nothing else depends on them (DESIGN §3a).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.store import Tx

COMPACTION_GAP_S = 30 * 60


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """A session's state after a call: the token to send back next time, and whether the context was lost."""

    token: str
    compacted: bool
    new_session: bool


def beat(tx: Tx, user_id: str, session_id: str, last_token: str | None, *, reset: bool = False) -> Heartbeat:
    """Record a call of ``session_id``: detect compaction, clear the seen log when needed, issue a new token."""
    row = tx.execute(
        "SELECT token, last_seen_at FROM workspace_sessions WHERE user_id = ? AND session_id = ?", (user_id, session_id)
    ).first()
    new_session = row is None
    compacted = not new_session and (last_token != str(row[0]) or tx.now - float(row[1]) > COMPACTION_GAP_S)
    if reset or compacted or new_session:
        tx.execute("DELETE FROM workspace_seen WHERE user_id = ? AND session_id = ?", (user_id, session_id))
    token = secrets.token_hex(8)
    tx.execute(
        "INSERT INTO workspace_sessions(user_id, session_id, token, last_seen_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(user_id, session_id) DO UPDATE SET token = excluded.token, last_seen_at = excluded.last_seen_at",
        (user_id, session_id, token, tx.now),
    )
    return Heartbeat(token, compacted, new_session)


def compacted(q: Any, user_id: str, session_id: str, last_token: str | None) -> bool:
    """Whether the session's context was lost since its last call (a new session has nothing to lose)."""
    row = q.execute(
        "SELECT token, last_seen_at FROM workspace_sessions WHERE user_id = ? AND session_id = ?", (user_id, session_id)
    ).first()
    if row is None:
        return False
    return last_token != str(row[0]) or time.time() - float(row[1]) > COMPACTION_GAP_S


def seen_ids(q: Any, user_id: str, session_id: str) -> set[int]:
    """The objects already shown to the session."""
    rows = q.execute(
        "SELECT object_id FROM workspace_seen WHERE user_id = ? AND session_id = ?", (user_id, session_id)
    ).fetchall()
    return {int(r[0]) for r in rows}


def note_seen(tx: Tx, user_id: str, session_id: str, object_ids: Sequence[int]) -> None:
    """Add ``object_ids`` to the session's seen log."""
    tx.executemany(
        "INSERT OR IGNORE INTO workspace_seen(user_id, session_id, object_id, seen_at) VALUES (?, ?, ?, ?)",
        [(user_id, session_id, i, tx.now) for i in dict.fromkeys(object_ids)],
    )


def reset(tx: Tx, user_id: str, session_id: str) -> int:
    """Forget what the session was shown; returns how many items the log held."""
    return int(
        tx.execute("DELETE FROM workspace_seen WHERE user_id = ? AND session_id = ?", (user_id, session_id)).rowcount
        or 0
    )
