"""What Ctrl+Z can take back in the Memories view, and only that: deletes and edits.

The engine keeps enough to reverse two of the Memories actions exactly.  A delete is soft, so the
deleted memories are restored (``vault.facts.restore``).  An edit stores a new version that
supersedes the one edited, so retracting the new version (``vault.facts.retract``) brings the
earlier one back; the retracted version stays in the history, which the message says.  Marks,
tiers, approvals and retractions change counters and standings the engine does not remember the old
values of, so they never enter the stack: Ctrl+Z after them undoes the last delete or edit before
them, and the Undo button's tooltip names which one that is.

A step is checked again when it is undone: an edit whose new version was changed since (edited
again, deleted, retracted) or whose earlier version is no longer the one it replaced cannot be
undone, and the message says why instead of undoing something else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from engine import Vault
from engine.errors import Conflict, NotFound
from engine.facts.model import Fact
from ui.format import plural

CURRENT = ("active", "contested")
UndoKind = Literal["delete", "edit"]


@dataclass(frozen=True, slots=True)
class UndoStep:
    """One action Ctrl+Z can take back.

    ``fact_ids`` holds the deleted memories for a delete, and ``(edited, new version)`` for an
    edit.  ``text`` names the action for messages and the Undo button ("the delete of 2
    memories").
    """

    kind: UndoKind
    fact_ids: tuple[int, ...]
    text: str
    settled_conflict: bool = False
    """The edited memory was in an open conflict, which the edit settled (undo does not reopen it)."""

    @classmethod
    def delete(cls, fact_ids: Sequence[int]) -> UndoStep:
        """The delete of ``fact_ids``."""
        return cls("delete", tuple(fact_ids), f"the delete of {plural(len(fact_ids), 'memory', 'memories')}")

    @classmethod
    def edit(cls, before: Fact, after: Fact) -> UndoStep:
        """The edit that replaced ``before`` with ``after``."""
        return cls(
            "edit",
            (before.id, after.id),
            f"the edit of “{before.statement}”",
            settled_conflict=before.status == "contested",
        )


@dataclass(frozen=True, slots=True)
class UndoOutcome:
    """What undoing a step did: the memories as they are now and a sentence for the status bar."""

    step: UndoStep
    facts: tuple[Fact, ...]
    message: str
    undone: bool


class UndoStack:
    """The last :data:`depth` undoable steps, newest last."""

    def __init__(self, depth: int) -> None:
        self._depth = depth
        self._steps: list[UndoStep] = []

    def __len__(self) -> int:
        return len(self._steps)

    def push(self, step: UndoStep) -> None:
        """Remember ``step`` (the oldest is forgotten past the depth)."""
        self._steps.append(step)
        del self._steps[: -self._depth]

    def peek(self) -> UndoStep | None:
        """The step Ctrl+Z would take back now."""
        return self._steps[-1] if self._steps else None

    def pop(self) -> UndoStep | None:
        """Take the newest step off the stack."""
        return self._steps.pop() if self._steps else None


def undo_step(vault: Vault, step: UndoStep) -> UndoOutcome:
    """Take ``step`` back (on the writer thread)."""
    if step.kind == "delete":
        return _undo_delete(vault, step)
    return _undo_edit(vault, step)


def _undo_delete(vault: Vault, step: UndoStep) -> UndoOutcome:
    restored: list[Fact] = []
    already = 0
    for fact_id in step.fact_ids:
        try:
            restored.append(vault.facts.restore(fact_id))
        except Conflict:  # restored meanwhile (the Restore button, another window): nothing left to do
            already += 1
        except NotFound:  # forgotten for good since: it cannot come back
            already += 1
    if not restored:
        return UndoOutcome(step, (), f"Nothing to undo: the memories of {step.text} are no longer deleted.", False)
    message = f"Undid {step.text}: {plural(len(restored), 'memory', 'memories')} restored."
    if already:
        message += f" {already:,} had already come back or been forgotten."
    return UndoOutcome(step, tuple(restored), message, True)


def _undo_edit(vault: Vault, step: UndoStep) -> UndoOutcome:
    before_id, after_id = step.fact_ids
    try:
        before = vault.facts.get(before_id)
        after = vault.facts.get(after_id)
    except NotFound:
        return UndoOutcome(step, (), f"Cannot undo {step.text}: the memory was forgotten since.", False)
    problem = _edit_problem(before, after)
    if problem:
        return UndoOutcome(step, (before, after), f"Cannot undo {step.text}: {problem}", False)
    retracted = vault.facts.retract(after_id)
    back = vault.facts.get(before_id)
    message = f"Undid {step.text}: “{back.object_text}” is back; the corrected version stays in its history, retracted."
    if step.settled_conflict:
        message += " The conflict the edit settled stays settled."
    return UndoOutcome(step, (back, retracted), message, True)


def _edit_problem(before: Fact, after: Fact) -> str:
    """Why the edit from ``before`` to ``after`` can no longer be taken back ("" when it can)."""
    if after.status not in CURRENT:
        return f"the corrected version is {after.status} now."
    if before.status != "superseded" or before.superseded_by != after.id or after.previous_id != before.id:
        return "the earlier version changed since."
    return ""
