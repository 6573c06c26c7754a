"""Fresh things for a request to act on: a fact, a deleted fact, an open conflict, subjects, …

Each function makes its target through the :class:`~engine.Vault` facade and returns the values a
route's path and body are filled with.  The guard matrix calls one for every request that passes
the guard, so a state-changing route always finds a target in the state it needs (restoring a
fact twice would otherwise be a 409, not the route's success).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from engine import Vault
from engine.events import EventIn
from engine.forget import ForgetScope
from tests.plugins.parser_pdf import garbage_with_header, text_pdf

_numbers = itertools.count(1)

Targets = dict[str, Any]

CONVERSATION = "matrix-chat"


def unique(vault: Vault) -> Targets:
    """Only a fresh number (for bodies that must differ, like a hand-added fact)."""
    return {"n": next(_numbers)}


def fact(vault: Vault) -> Targets:
    """A new active fact."""
    n = next(_numbers)
    created = vault.facts.add("Matrix Person", "likes", f"thing number {n}")
    return {"n": n, "fact_id": created.id, "object_id": created.id}


def deleted_fact(vault: Vault) -> Targets:
    """A new soft-deleted fact."""
    targets = fact(vault)
    vault.facts.delete(targets["fact_id"])
    return targets


def conflict(vault: Vault) -> Targets:
    """A new open conflict: the owner now lives in yet another town (no change cue)."""
    n = next(_numbers)
    before = {c.id for c in vault.conflicts(status="open", limit=100_000)}
    vault.events.extract(f"I live in Townsville{n}.", learn=True, conversation_id=CONVERSATION)
    opened = [c.id for c in vault.conflicts(status="open", limit=100_000) if c.id not in before]
    assert opened, "the statement made no conflict"
    return {"n": n, "conflict_id": opened[0]}


def subject(vault: Vault) -> Targets:
    """A new subject."""
    n = next(_numbers)
    created = vault.facts.add(f"Person Number{n}", "likes", "tea")
    return {"n": n, "subject_id": created.subject_id}


def subject_pair(vault: Vault) -> Targets:
    """Two new subjects: one to keep and one to merge into it."""
    keep, other = subject(vault), subject(vault)
    return {"n": keep["n"], "subject_id": keep["subject_id"], "other_id": other["subject_id"]}


WORKSPACE_SESSION = "matrix-session"


def observation(vault: Vault) -> Targets:
    """A new observation about two new subjects, written in :data:`WORKSPACE_SESSION`."""
    n = next(_numbers)
    a, b = f"Matrix Ana{n}", f"Matrix Bob{n}"
    made = vault.workspace.remember(f"{a} and {b} share flat {n}.", [a, b], session_id=WORKSPACE_SESSION)
    return {"n": n, "observation_id": made.observation.id, "a": a, "b": b, "session_id": WORKSPACE_SESSION}


def perspective(vault: Vault) -> Targets:
    """A new perspective of the user's own."""
    name = f"matrix-{next(_numbers)}"
    vault.workspace.searcher.add_perspective(name, f"Represent what {name} asks about:", user_id="default")
    return {"perspective": name}


def understanding(vault: Vault) -> Targets:
    """A new, active understanding of a new subject."""
    n = next(_numbers)
    name = f"Matrix Carla{n}"
    made = vault.workspace.create_understanding(f"{name} sings {n}.", summary="sings", subject_names=[name])
    return {"n": n, "understanding_id": made.id, "name": name}


def receipt(vault: Vault) -> Targets:
    """A receipt (of a dry run that touches nobody's data)."""
    made = vault.forget(ForgetScope(user_id="matrix-nobody", dry_run=True))
    return {"receipt_id": made.receipt_id}


def conversation(vault: Vault) -> Targets:
    """A conversation with an event in it."""
    n = next(_numbers)
    vault.events.ingest(EventIn(conversation_id=CONVERSATION, content=f"Turn number {n}."))
    return {"n": n, "conversation_id": CONVERSATION}


def document(vault: Vault) -> Targets:
    """A new document (a short Markdown note)."""
    n = next(_numbers)
    result = vault.documents.upload(name=f"note-{n}.md", text=f"# Note {n}\n\nKettle {n} is blue.")
    assert result.document_id is not None
    return {"n": n, "document_id": result.document_id}


def collection(vault: Vault) -> Targets:
    """A new, empty collection."""
    n = next(_numbers)
    return {"n": n, "collection_id": vault.collections.create(f"Matrix shelf {n}").id}


def collection_and_document(vault: Vault) -> Targets:
    """A new collection and a new document that is not in it."""
    return {**document(vault), **collection(vault)}


def collection_member(vault: Vault) -> Targets:
    """A new collection holding a new document."""
    targets = collection_and_document(vault)
    vault.collections.add(targets["collection_id"], [targets["document_id"]])
    return targets


def repaired_quarantine(vault: Vault) -> Targets:
    """A file quarantined from its path, since replaced by a readable one (a retry succeeds)."""
    n = next(_numbers)
    path = _scratch(vault) / f"ledger-{n}.pdf"
    path.write_bytes(garbage_with_header(seed=n))
    held = vault.documents.upload(path=path)
    assert held.status == "quarantined" and held.quarantine_id is not None
    path.write_bytes(text_pdf([[f"Ledger {n}: the lamp oil came on Tuesday."]]))
    return {"n": n, "quarantine_id": held.quarantine_id}


def folder(vault: Vault) -> Targets:
    """A new, empty folder next to the vault (not watched)."""
    n = next(_numbers)
    path = _scratch(vault) / f"folder-{n}"
    path.mkdir()
    return {"n": n, "folder": str(path)}


def watched_folder(vault: Vault) -> Targets:
    """A new, empty folder that is watched."""
    targets = folder(vault)
    vault.watcher.watch(targets["folder"])
    return targets


def _scratch(vault: Vault) -> Path:
    path = vault.paths.root.parent / "matrix-files"
    path.mkdir(exist_ok=True)
    return path
