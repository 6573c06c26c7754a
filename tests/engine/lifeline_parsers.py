"""A parser for the lifeline test, importable by the sandbox's worker (which re-creates it from ``module:qualname``)."""

from __future__ import annotations

import time
from pathlib import Path

from engine.plugin_api import ParsedDocument, ParseLimits


class MarkingSleeper:
    """Writes a marker file (its path is the document's bytes) once it is parsing, then sleeps far past any test."""

    name = "marking-sleeper"
    version = "1"
    extensions: tuple[str, ...] = (".txt",)
    mime_types: tuple[str, ...] = ("text/plain",)

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        Path(data.decode()).write_text("parsing")
        time.sleep(1000)
        raise AssertionError("woke up")
