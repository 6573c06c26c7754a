"""A list helper for SQL with many bound values, used by readers and the writer alike.

It lives apart from :mod:`engine.store.writer` so that a module that only reads does not import the writer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


def chunked(values: Iterable[T], size: int = 500) -> Iterable[list[T]]:
    """Split ``values`` into lists of at most ``size`` (SQLite bind-parameter limits)."""
    chunk: list[T] = []
    for value in values:
        chunk.append(value)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
