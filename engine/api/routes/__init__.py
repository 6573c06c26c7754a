"""The endpoint's routers, one module per area.

:func:`routers` is the one list :func:`engine.api.app.create_app` mounts; a new area adds its
module here.  Every router serves paths under ``/v6`` and sits behind the guard like everything
else in the app.  ``POST /v6/ingest`` and ``POST /v6/recall`` are not among them: lean handlers answer those
(:mod:`engine.api.fast_ingest`, :mod:`engine.api.fast_recall`).
"""

from __future__ import annotations

from fastapi import APIRouter


def routers() -> list[APIRouter]:
    """Every router of the endpoint, in the order they are mounted."""
    # imported on use: the package stays cheap to import
    from engine.api.routes import (
        collections,
        conflicts,
        conversations,
        documents,
        facts,
        forget,
        ingest,
        objects,
        stream,
        subjects,
        system,
        watch,
        workspace,
    )

    return [
        system.router,
        ingest.router,
        documents.router,
        collections.router,
        watch.router,
        facts.router,
        conflicts.router,
        conversations.router,
        subjects.router,
        workspace.router,
        forget.router,
        objects.router,
        stream.router,
    ]
