"""The Memories actions on facts (delete, restore, approve, retract, marks, tiers), one or many at a time.

They run on the runner's writer.  A problem with one memory of a selection (already deleted, no
longer current) does not stop the others; the view reports how many could not be changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine import Vault, VaultError
from engine.errors import Conflict
from engine.facts.model import Fact
from ui.format import plural

LOWER_TIER = {"hot": "warm", "warm": "cold", "cold": "cold"}

ActionResult = tuple[list[Fact], list[str]]


def _apply(vault: Vault, key: str, fact_id: int) -> Fact:
    """One action on one fact (on the writer thread).

    Demote pins the fact one tier lower so the usual rules do not lift it straight back; Unpin
    keeps the tier it has and lets the rules choose from now on.
    """
    facts = vault.facts
    if key == "delete":
        return facts.delete(fact_id)
    if key == "restore":
        return facts.restore(fact_id)
    if key == "approve":
        return facts.approve(fact_id)
    if key == "retract":
        return facts.retract(fact_id)
    if key in ("useful", "questionable"):
        return facts.mark(fact_id, key)
    if key == "pin_hot":
        return facts.set_tier(fact_id, "hot", pinned=True)
    current = facts.get(fact_id)
    if key == "demote":
        return facts.set_tier(fact_id, LOWER_TIER[current.tier], pinned=True)
    if key == "unpin":
        return facts.set_tier(fact_id, current.tier, pinned=False)
    raise ValueError(f"unknown action {key!r}")


def run_action(vault: Vault, key: str, fact_ids: Sequence[int]) -> ActionResult:
    """Apply ``key`` to each fact; problems with one fact do not stop the others."""
    done: list[Fact] = []
    problems: list[str] = []
    for fact_id in fact_ids:
        try:
            done.append(_apply(vault, key, fact_id))
        except Conflict as exc:
            if key in ("delete", "restore"):  # already deleted / not deleted: nothing to do
                continue
            problems.append(exc.message)
        except VaultError as exc:
            problems.append(exc.message)
    return done, problems


def action_message(key: str, count: int) -> str:
    """The status line after ``key`` changed ``count`` memories (only deletes say Ctrl+Z: see ui.fact_undo)."""
    memories = plural(count, "memory", "memories")
    return {
        "delete": f"Deleted {memories}. Ctrl+Z brings them back.",
        "restore": f"Restored {memories}.",
        "approve": f"Approved {memories}.",
        "retract": f"Retracted {memories}.",
        "useful": f"Marked {memories} useful.",
        "questionable": f"Marked {memories} questionable.",
        "pin_hot": f"Pinned {memories} to hot.",
        "demote": f"Demoted {memories}.",
        "unpin": f"Unpinned {memories}.",
    }.get(key, f"Changed {memories}.")
