"""Shared helpers for the recall tests: ingesting turns, building a query analysis and a channel input by hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine import Vault
from engine.events import EventIn
from engine.recall.analyze import QueryAnalysis, keywords_of
from engine.recall.channels import ChannelInput


def ingest(
    vault: Vault,
    conversation: str,
    *turns: tuple[str, str],
    author: str | None = None,
    user_id: str = "default",
    role: str = "user",
) -> list[int]:
    """Ingest ``(occurred_at, text)`` turns and wait for enrichment; the new event ids in order."""
    results = vault.events.ingest(
        [
            EventIn(
                conversation_id=conversation,
                content=text,
                occurred_at=when,
                author=author,
                user_id=user_id,
                role=role,
            )
            for when, text in turns
        ]
    )
    assert vault.jobs.wait_idle(120)
    return [r.event_id for r in results]


def analysis(query: str = "", **overrides: Any) -> QueryAnalysis:
    """A query analysis as the rules would make it for a plain direct question, with ``overrides``."""
    fields: dict[str, Any] = {
        "query": query,
        "mode": "direct",
        "predicates": (),
        "subjects": (),
        "subject_ids": (),
        "temporal": None,
        "asks_when": False,
        "keywords": keywords_of(query),
        "section": None,
        "section_document": None,
        "used_queries": (query,),
        "engine": "rules",
    }
    fields.update(overrides)
    return QueryAnalysis(**fields)


def channel_input(
    vault: Vault,
    a: QueryAnalysis,
    *,
    conversation: str = "asking",
    user_id: str = "default",
    project_id: str | None = None,
    depth: int = 30,
    rewrites: Sequence[str] = (),
) -> ChannelInput:
    """What a channel sees for analysis ``a``: the query's vector from the vault's embedder, and its rewrites'."""
    vector = vault.embedder.embed([a.query])[0] if a.query else None
    rewrite_vectors = tuple(vault.embedder.embed(list(rewrites))) if rewrites else ()
    return ChannelInput(a, user_id, project_id, conversation, vector, depth, rewrite_vectors)
