"""Parsers for the sandbox tests: a few well-behaved, the rest misbehaving every way a real one can.

They live in an importable module because the sandbox re-creates a parser in its worker process from
``module:qualname``.  Each class follows the :class:`engine.plugin_api.Parser` protocol.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from pathlib import Path

from engine.plugin_api import (
    LimitExceeded,
    ParsedDocument,
    ParsedPage,
    ParsedSection,
    ParseError,
    ParseLimits,
)


class _Base:
    version = "1"
    extensions: tuple[str, ...] = (".txt",)
    mime_types: tuple[str, ...] = ("text/plain",)
    name = "base"


class OutlineParser(_Base):
    """Deterministic and well-behaved: pages split at form feeds, sections at ``# `` headings."""

    name = "outline"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"not UTF-8 at byte {exc.start}") from exc
        pages, start = [], 0
        for number, chunk in enumerate(text.split("\f"), start=1):
            pages.append(ParsedPage(number, start, start + len(chunk)))
            start += len(chunk) + 1
        if len(pages) > limits.max_pages:
            raise LimitExceeded(f"{len(pages)} pages, more than {limits.max_pages}")
        sections, offset = [], 0
        for line in text.splitlines(keepends=True):
            if line.startswith("# "):
                sections.append(ParsedSection(line[2:].strip(), 1, offset, len(text)))
            offset += len(line)
        ends = [s.start_char for s in sections[1:]] + [len(text)]
        bounded = tuple(
            ParsedSection(s.title, s.level, s.start_char, end, 1, len(pages))
            for s, end in zip(sections, ends, strict=True)
        )
        return ParsedDocument(
            text=text,
            sections=bounded,
            pages=tuple(pages),
            title=bounded[0].title if bounded else name,
            metadata={"name": name, "bytes": str(len(data))},
            warnings=("no headings",) if not bounded else (),
        )


#: Files this process has parsed with ProbeParser or StaleStateParser.
_served = 0
#: Top-level packages a lean worker must not have imported.
_HEAVY = {"sqlalchemy", "numpy", "pydantic", "PySide6", "onnxruntime", "httpx", "pytest"}


class ProbeParser(_Base):
    """Reports where and with what it ran: pid, limits, the working folder's files."""

    name = "probe"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        global _served
        _served += 1
        return ParsedDocument(
            text=f"{len(data)} bytes",
            metadata={
                "pid": str(os.getpid()),
                "name": name,
                "size": str(len(data)),
                "head": data[:16].hex(),
                "tail": data[-16:].hex(),
                "max_bytes": str(limits.max_bytes),
                "max_pages": str(limits.max_pages),
                "max_chars": str(limits.max_chars),
                "cwd_files": ",".join(sorted(os.listdir("."))),
                "threads": ",".join(sorted(t.name for t in threading.enumerate())),
                "modules": ",".join(sorted(m for m in sys.modules if m.split(".")[0] in _HEAVY)),
            },
        )


class StaleStateParser(_Base):
    """Dies in a process that has parsed other files before, works in a fresh one.

    Stands for a parser whose native library is left in a bad state by an earlier file.
    """

    name = "stale-state"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        global _served
        if _served:
            os._exit(9)
        _served += 1
        return ParsedDocument(text="fresh", metadata={"pid": str(os.getpid())})


class NappingParser(_Base):
    """Takes half a second, then answers with its pid (for concurrency tests)."""

    name = "napping"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        time.sleep(0.5)
        return ParsedDocument(text=name, metadata={"pid": str(os.getpid())})


class SlowParser(_Base):
    """Takes one second whatever the file, then answers with its name."""

    name = "slow"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        time.sleep(1.0)
        return ParsedDocument(text=name)


class GatheringParser(_Base):
    """For concurrency tests without timings: ``data`` names a folder; each parse leaves a marker there, notes how
    many markers it saw at once (the parses in flight together), waits until ``name``'s number of them have
    arrived (or 60 s), and answers ``together`` or ``alone`` with the most it saw in flight."""

    name = "gathering"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        folder = Path(data.decode())
        wanted = int(name.split("-")[0])
        marker = folder / f"{os.getpid()}-{name}"
        marker.touch()
        most = 0
        deadline = time.monotonic() + 60
        try:
            while time.monotonic() < deadline:
                here = len(list(folder.iterdir()))
                most = max(most, here)
                if most >= wanted:
                    break
                time.sleep(0.02)
            time.sleep(0.2)  # stay in flight a moment, so that a third parse running now would be seen
            most = max(most, len(list(folder.iterdir())))
        finally:
            marker.unlink()
        text = "together" if most >= wanted else "alone"
        return ParsedDocument(text=text, metadata={"pid": str(os.getpid()), "most": str(most)})


class InvalidParser(_Base):
    name = "invalid"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        raise ParseError("bad magic number 0xdeadbeef")


class OverLimitParser(_Base):
    name = "over-limit"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        raise LimitExceeded(f"the document has 9001 pages, more than {limits.max_pages}")


class TooManyPagesParser(_Base):
    """Ignores ``max_pages`` and returns one page more than allowed."""

    name = "too-many-pages"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        pages = tuple(ParsedPage(n, 0, 0) for n in range(1, limits.max_pages + 2))
        return ParsedDocument(text="", pages=pages)


class SleepingParser(_Base):
    name = "sleeping"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        time.sleep(1000)
        raise AssertionError("woke up")


class LongPagedParser(_Base):
    """A long paged document, read slowly: reports its six pages as it goes, 0.5 s a page (3 s in all)."""

    name = "long-paged"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        report = limits.progress or (lambda done, total: None)
        for page in range(6):
            report(page, 6)
            time.sleep(0.5)
        report(6, 6)
        text = "\f".join(f"page {n}" for n in range(1, 7))
        pages = [ParsedPage(n + 1, n * 7, n * 7 + 6) for n in range(6)]
        return ParsedDocument(text=text, sections=(), pages=tuple(pages), title=name, metadata={}, warnings=())


class PageLiarParser(_Base):
    """Claims a billion pages to earn time, then hangs."""

    name = "page-liar"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        if limits.progress is not None:
            limits.progress(0, 10**9)
        time.sleep(1000)
        raise AssertionError("woke up")


class SpinningParser(_Base):
    name = "spinning"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        n = 0
        while True:
            n += 1


class HungryParser(_Base):
    """Allocates 16 MB at a time without bound (calloc'd: address space grows, RAM barely)."""

    name = "hungry"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        hoard = []
        while True:
            hoard.append(bytearray(16 * 1024 * 1024))


class AbortingParser(_Base):
    name = "aborting"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        os.abort()


class SegfaultingParser(_Base):
    name = "segfaulting"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        ctypes.string_at(0)
        raise AssertionError("read address 0")


class NativeOutOfMemoryParser(_Base):
    """Dies the way a C++ library does when an allocation fails: a message on stderr, then abort."""

    name = "native-oom"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        os.write(2, b"terminate called after throwing an instance of 'std::bad_alloc'\n")
        os.write(2, b"  what():  std::bad_alloc\n")
        os.abort()


class ExitingParser(_Base):
    name = "exiting"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        os._exit(7)


class SystemExitParser(_Base):
    name = "system-exit"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        sys.exit(3)


class HostileError(Exception):
    """An exception type no caller knows."""


class RaisingParser(_Base):
    name = "raising"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        raise HostileError("the xref table points at itself")


class WrongResultParser(_Base):
    name = "wrong-result"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        return "just a string"  # type: ignore[return-value]


class MalformedResultParser(_Base):
    """Returns a ParsedDocument whose fields have the wrong types."""

    name = "malformed-result"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        return ParsedDocument(text=12345)  # type: ignore[arg-type]


class NoisyParser(_Base):
    """Floods stdout and stderr (1 MB each) from Python and from the C level, then succeeds."""

    name = "noisy"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        line = "x" * 1023 + "\n"
        for _ in range(512):
            print(line, end="")
            print(line, end="", file=sys.stderr)
        sys.stdout.flush()
        for _ in range(512):
            os.write(1, line.encode())
            os.write(2, line.encode())
        return ParsedDocument(text="survived the noise")


class ThreadLeavingParser(_Base):
    """Leaves a thread running after it returns: its worker must not take another file."""

    name = "thread-leaving"

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        threading.Thread(target=time.sleep, args=(1000,), daemon=True).start()
        return ParsedDocument(text="done", metadata={"pid": str(os.getpid())})


class NeedsConfigParser(_Base):
    """Cannot be re-created without arguments."""

    name = "needs-config"

    def __init__(self, config: dict[str, str]) -> None:
        self.config = config

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        return ParsedDocument(text=self.config["text"])
