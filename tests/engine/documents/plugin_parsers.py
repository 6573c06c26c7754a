"""Parser plugins the vault tests register on a vault's plugin manager, each for an extension of its own.

They live in an importable module because the sandbox re-creates a parser in its worker process from
``module:qualname``.  The misbehaving ones reuse :mod:`tests.engine.documents.hostile_parsers` and
only claim a test-only extension, so that the built-in parsers keep ``.txt``, ``.md`` and the rest.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from engine.plugin_api import (
    ParsedDocument,
    ParsedPage,
    ParsedSection,
    ParsedTable,
    ParseLimits,
    Parser,
    hookimpl,
)
from tests.engine.documents import hostile_parsers as hp


class RecipeParser:
    """A third-party format: ``Title: …`` on the first line, ``== Heading`` lines start sections."""

    name = "recipe"
    version = "3"
    extensions = (".recipe",)
    mime_types = ("application/x-recipe",)

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        text = data.decode("utf-8")
        first, _, _rest = text.partition("\n")
        title = first.removeprefix("Title:").strip() if first.startswith("Title:") else name
        starts: list[tuple[str, int]] = []
        offset = 0
        for line in text.splitlines(keepends=True):
            if line.startswith("== "):
                starts.append((line[3:].strip(), offset))
            offset += len(line)
        ends = [start for _title, start in starts[1:]] + [len(text)]
        sections = tuple(
            ParsedSection(heading, 2, start, end) for (heading, start), end in zip(starts, ends, strict=True)
        )
        return ParsedDocument(text=text, sections=sections, title=title, metadata={"format": "recipe"})


class HangingParser(hp.SleepingParser):
    """Never returns (sleeps far past any parse timeout)."""

    name = "hanging"
    extensions = (".hang",)
    mime_types = ()


class AbortParser(hp.AbortingParser):
    """Aborts the process it runs in (SIGABRT)."""

    name = "aborting"
    extensions = (".abort",)
    mime_types = ()


class HoardingParser(hp.HungryParser):
    """Allocates without bound until the address-space limit stops it."""

    name = "hoarding"
    extensions = (".hog",)
    mime_types = ()


class FlagParser:
    """Aborts while the flag file named by the file's first line exists, else reads the rest as text.

    Stands for a parser that was fixed, or a crash that depended on the machine: the same bytes fail
    once and parse later.
    """

    name = "flag"
    version = "1"
    extensions = (".flag",)
    mime_types = ()

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        flag, _, body = data.decode("utf-8").partition("\n")
        if os.path.exists(flag):
            os.abort()
        return ParsedDocument(text=body, title=name)


class GateParser:
    """Waits until the gate file named by the file's first line exists, then reads the rest as pages split at form
    feeds, reporting each: stands for a long parse that a test can hold open and let go of."""

    name = "gate"
    version = "1"
    extensions = (".gate",)
    mime_types = ()

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        gate, _, body = data.decode("utf-8").partition("\n")
        pages = body.split("\f")
        report = limits.progress or (lambda done, total: None)
        report(0, len(pages))
        while not os.path.exists(gate):
            time.sleep(0.02)
        found, start = [], 0
        for number, page in enumerate(pages, start=1):
            found.append(ParsedPage(number, start, start + len(page)))
            start += len(page) + 1
            report(number, len(pages))
        return ParsedDocument(text=body, title=name, pages=tuple(found))


class FlagParserV2(FlagParser):
    """The same parser in a newer version."""

    version = "2"


class StrayOffsetsParser:
    """Returns sections and pages whose offsets lie far outside the text it returns."""

    name = "stray-offsets"
    version = "1"
    extensions = (".stray",)
    mime_types = ()

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        text = data.decode("utf-8")
        return ParsedDocument(
            text=text,
            sections=(ParsedSection("Beyond", 1, len(text) + 10, len(text) + 5000),),
        )


class StrayTableParser:
    """Returns a table whose rows end far past the text it returns."""

    name = "stray-table"
    version = "1"
    extensions = (".straytable",)
    mime_types = ()

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        text = data.decode("utf-8")
        return ParsedDocument(text=text, tables=(ParsedTable(0, 1, len(text) + 500),))


class TestParsers:
    """A plugin contributing the given parsers through ``register_parsers``."""

    __test__ = False  # not a pytest test class

    def __init__(self, *parsers: Parser) -> None:
        self.parsers = parsers

    @hookimpl
    def register_parsers(self, register: Callable[[Parser], None]) -> None:
        for parser in self.parsers:
            register(parser)
