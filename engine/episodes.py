"""Episodes: conversations cut into segments, each summarised once it closes.

A segment closes when the next event comes after an idle gap (event time, default 30 min), when it reaches the turn
limit, when a periodic sweep finds it idle, or on demand.  Closing enqueues a ``summarize_episode`` job: an
extractive summary without a model, Ollama's when one is in use.  Episodes are scoped to their conversation.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.config import EpisodeSettings
from engine.jobs import enqueue
from engine.store import Tx
from engine.temporal import from_epoch

log = logging.getLogger(__name__)

SUMMARY_CHARS = 700
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
_WORD = re.compile(r"[A-Za-zÀ-ỹ0-9']+")
_COMMON = frozenset(
    """the a an and or but so to of in on at for with from is are was were be been it its i you he she we they me
    my your our their this that these those just really very too also like yeah yes no not oh ok okay wow haha
    lol hey hi hello thanks thank what how why when where who do does did have has had can could would should will
    im i'm it's that's don't didn't""".split()
)


@dataclass(frozen=True, slots=True)
class Episode:
    """A summarised (or still open) conversation segment."""

    id: int
    user_id: str
    conversation_id: str
    started_at: datetime
    ended_at: datetime
    turn_count: int
    summary: str
    status: str
    summarizer: str | None
    first_event_id: int | None
    last_event_id: int | None


EPISODE_COLUMNS = (
    "id, user_id, conversation_id, started_at, ended_at, turn_count, summary, status, summarizer, "
    "first_event_id, last_event_id"
)


def episode_from_row(row: Sequence[Any]) -> Episode:
    """Build an :class:`Episode` from a row selected with :data:`EPISODE_COLUMNS`."""
    return Episode(
        id=int(row[0]),
        user_id=str(row[1]),
        conversation_id=str(row[2]),
        started_at=from_epoch(float(row[3])),
        ended_at=from_epoch(float(row[4])),
        turn_count=int(row[5]),
        summary=str(row[6]),
        status=str(row[7]),
        summarizer=row[8],
        first_event_id=row[9],
        last_event_id=row[10],
    )


class EpisodeCutter:
    """Assigns events to episodes inside the ingest transaction."""

    def __init__(self, settings: EpisodeSettings) -> None:
        self.gap_s = settings.idle_gap_minutes * 60
        self.max_turns = settings.max_turns

    def assign(
        self, tx: Tx, user_id: str, project_id: str | None, conversation_id: str, event_id: int, at: float
    ) -> int:
        """The episode for a new event: the open one if it still fits, else a new one (closing the old)."""
        return self.assign_many(tx, [(user_id, project_id, conversation_id, event_id, at)])[0]

    def assign_many(self, tx: Tx, events: Sequence[tuple[str, str | None, str, int, float]]) -> list[int]:
        """The episode of each new event ``(user, project, conversation, event id, time)``, in order.

        The same as assigning them one by one, with one read of each conversation's open episode and one write of
        each episode the batch extends, however many of its events arrive together.
        """
        states: dict[tuple[str, str], _OpenEpisode | None] = {}
        out: list[int] = []
        for user_id, project_id, conversation_id, event_id, at in events:
            key = (user_id, conversation_id)
            if key not in states:
                states[key] = self._open_episode(tx, user_id, conversation_id)
            state = states[key]
            if state is not None:
                fits = (
                    at - state.ended <= self.gap_s and at >= state.started - self.gap_s and state.turns < self.max_turns
                )
                if fits:
                    state.extend(event_id, at)
                    out.append(state.id)
                    continue
                state.save(tx)
                close_episode(tx, state.id)
            episode_id = tx.new_id("episode")
            tx.execute(
                "INSERT INTO episodes(id, user_id, project_id, conversation_id, first_event_id, last_event_id, "
                "started_at, ended_at, turn_count, status, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, 'open', ?, ?)",
                (episode_id, user_id, project_id, conversation_id, event_id, event_id, at, at, tx.now, tx.now),
            )
            states[key] = _OpenEpisode(episode_id, at, at, 1, event_id)
            out.append(episode_id)
        for state in states.values():
            if state is not None:
                state.save(tx)
        return out

    @staticmethod
    def _open_episode(tx: Tx, user_id: str, conversation_id: str) -> _OpenEpisode | None:
        row = tx.execute(
            "SELECT id, started_at, ended_at, turn_count, last_event_id FROM episodes WHERE user_id = ? "
            "AND conversation_id = ? AND status = 'open' ORDER BY started_at DESC LIMIT 1",
            (user_id, conversation_id),
        ).first()
        if row is None:
            return None
        return _OpenEpisode(int(row[0]), float(row[1]), float(row[2]), int(row[3]), row[4])


@dataclass(slots=True)
class _OpenEpisode:
    """An open episode as a batch of events extends it; :meth:`save` writes what changed."""

    id: int
    started: float
    ended: float
    turns: int
    last_event_id: int | None
    changed: bool = False

    def extend(self, event_id: int, at: float) -> None:
        self.ended = max(self.ended, at)
        self.started = min(self.started, at)
        self.last_event_id = event_id
        self.turns += 1
        self.changed = True

    def save(self, tx: Tx) -> None:
        if not self.changed:
            return
        tx.execute(
            "UPDATE episodes SET ended_at = ?, started_at = ?, last_event_id = ?, turn_count = ?, updated_at = ? "
            "WHERE id = ?",
            (self.ended, self.started, self.last_event_id, self.turns, tx.now, self.id),
        )
        self.changed = False


def close_episode(tx: Tx, episode_id: int) -> None:
    """Mark an episode closed and queue its summary."""
    tx.execute(
        "UPDATE episodes SET status = 'closed', updated_at = ? WHERE id = ? AND status = 'open'", (tx.now, episode_id)
    )
    enqueue(
        tx, "summarize_episode", {"episode_id": episode_id}, priority=150, dedupe_key=f"summarize_episode:{episode_id}"
    )


def close_idle(tx: Tx, gap_s: float, *, conversation_id: str | None = None, user_id: str | None = None) -> int:
    """Close open episodes idle for ``gap_s`` (wall clock), or every open one of a conversation."""
    if conversation_id is not None:
        sql = "SELECT id FROM episodes WHERE status = 'open' AND conversation_id = ?"
        params: tuple[Any, ...] = (conversation_id,)
        if user_id is not None:
            sql += " AND user_id = ?"
            params += (user_id,)
        rows = tx.execute(sql, params).fetchall()
    else:
        rows = tx.execute(
            "SELECT id FROM episodes WHERE status = 'open' AND updated_at < ? AND ended_at < ?",
            (tx.now - gap_s, tx.now - gap_s),
        ).fetchall()
    for (episode_id,) in rows:
        close_episode(tx, int(episode_id))
    return len(rows)


def extractive_summary(turns: Sequence[tuple[str, str]], started: datetime, ended: datetime) -> str:
    """A short summary made of the most informative sentences, in order, each with its speaker.

    Informative = many uncommon words, names and numbers; greetings and reactions score low.  The date range
    leads so a reader knows when it happened.
    """
    scored: list[tuple[float, int, str, str]] = []
    order = 0
    for speaker, text in turns:
        for match in _SENTENCE.finditer(text):
            sentence = match.group().strip()
            words = _WORD.findall(sentence)
            if len(words) < 4 or sentence.endswith("?"):
                continue
            content = [w for w in words if w.lower() not in _COMMON]
            score = len(content) + sum(1.0 for w in content if w[:1].isupper()) * 0.5
            score += sum(1.0 for w in content if any(c.isdigit() for c in w)) * 0.5
            score /= max(1.0, len(words) ** 0.5)
            scored.append((score, order, speaker, sentence))
            order += 1
    head = _date_span(started, ended)
    if not scored:
        speakers = ", ".join(sorted({s for s, _ in turns}))
        return f"{head}: {len(turns)} short turns ({speakers})."
    chosen: list[tuple[int, str, str]] = []
    length = len(head)
    for score, position, speaker, sentence in sorted(scored, key=lambda s: (-s[0], s[1])):
        piece = f"{speaker}: {sentence}"
        if length + len(piece) > SUMMARY_CHARS and chosen:
            continue
        chosen.append((position, speaker, sentence))
        length += len(piece) + 1
        if len(chosen) >= 6 or score <= 0:
            break
    body = " ".join(f"{speaker}: {sentence}" for _pos, speaker, sentence in sorted(chosen))
    return f"{head}: {body}"


def _date_span(started: datetime, ended: datetime) -> str:
    if started.date() == ended.date():
        return started.strftime("%Y-%m-%d")
    return f"{started:%Y-%m-%d}–{ended:%Y-%m-%d}"
