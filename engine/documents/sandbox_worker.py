"""The child side of the parser sandbox, and the wire protocol both sides speak.

A worker is a fresh interpreter started by :mod:`engine.documents.sandbox_process` (never a fork of
the multi-threaded parent).  It first ties its life to the parent's (:mod:`engine.lifeline`: a
parser may sleep or spin for ever, and a killed parent can no longer stop it), then loops: read one
request from its stdin, parse, write one reply to its stdout.  It imports only the standard library,
:mod:`engine.lifeline` and :mod:`engine.plugin_api` so that start-up stays fast; parser modules are
imported on first use and kept for the worker's lifetime.

Protocol: every message is an 8-byte big-endian length followed by a pickle.  Parent → child: an
``init`` dict (the memory limit), then :class:`Job` tuples.  Child → parent: plain tuples of builtin
values only —

* ``("ready", pid, memory_limited)`` once, after start-up;
* ``("progress", pages_read, pages_in_all)`` while a paged document is read (a few a second at most): the
  parent gives the parse time in proportion to its pages, and shows how far it got;
* ``("ok", wire_document, keep)`` with the result in the plain form of :func:`document_to_wire`;
* ``("fail", reason, detail, keep)`` with a ``ParseFailure`` reason.

``keep`` is false when the worker should be replaced (it ran out of memory, or the parser left
threads running).  The parent unpickles replies without resolving any global, so even a subverted
child cannot make it import or call anything; it then validates the shape with
:func:`document_from_wire`.
"""

from __future__ import annotations

import faulthandler
import importlib
import math
import os
import pickle
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Final, NamedTuple

from engine.lifeline import WATCH_THREAD, die_with_parent
from engine.plugin_api import (
    LimitExceeded,
    ParsedDocument,
    ParsedPage,
    ParsedSection,
    ParsedTable,
    ParseError,
    ParseLimits,
    Parser,
)

#: Exit status of a worker that ran out of memory outside the parser, where it could not even reply.
EXIT_MEMORY: Final = 86
#: Argument a frozen (bundled) application recognises to run :func:`main` instead of its user
#: interface.
WORKER_ARGUMENT: Final = "--cairn-parse-worker"

_HEADER = struct.Struct(">Q")
_MAX_REQUEST_BYTES: Final = 64 * 1024 * 1024
_DETAIL_CHARS: Final = 2000
#: Seconds between two progress reports of one parse.
PROGRESS_EVERY_S: Final = 0.25


class Job(NamedTuple):
    """One parse request: ``data`` inline for small files, else ``path`` of a private temp file."""

    parser_ref: str
    name: str
    max_bytes: int
    max_pages: int
    max_chars: int
    cpu_budget_s: float
    data: bytes | None
    path: str | None


# -- framing ---------------------------------------------------------------------------------------
def write_message(stream: IO[bytes], message: object) -> None:
    """Send one length-prefixed pickle and flush it."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def read_frame(stream: IO[bytes], max_bytes: int) -> bytes | None:
    """The next message's payload; ``None`` at a clean end of stream.

    Raises:
        EOFError: the stream ended inside a message.
        ValueError: the announced size exceeds ``max_bytes``.
    """
    header = stream.read(_HEADER.size)
    if not header:
        return None
    if len(header) < _HEADER.size:
        raise EOFError("stream ended inside a message header")
    (size,) = _HEADER.unpack(header)
    if size > max_bytes:
        raise ValueError(f"message of {size} bytes exceeds the {max_bytes}-byte cap")
    payload = stream.read(size)
    if len(payload) < size:
        raise EOFError("stream ended inside a message")
    return payload


class _PlainUnpickler(pickle.Unpickler):
    """Builds builtin values only: any class or function reference in the stream is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing {module}.{name}: replies carry builtin values only")


def load_plain(payload: bytes) -> object:
    """Unpickle a child's reply without resolving any global."""
    import io  # parent side only: keeps the worker's imports minimal

    return _PlainUnpickler(io.BytesIO(payload)).load()


# -- the result in plain form ----------------------------------------------------------------------
def document_to_wire(doc: ParsedDocument) -> tuple[Any, ...]:
    """A :class:`ParsedDocument` as nested tuples of builtin values."""
    return (
        doc.text,
        tuple((s.title, s.level, s.start_char, s.end_char, s.page_start, s.page_end) for s in doc.sections),
        tuple((p.number, p.start_char, p.end_char) for p in doc.pages),
        doc.title,
        tuple((k, v) for k, v in doc.metadata.items()),
        tuple(doc.warnings),
        tuple((t.start_char, t.header_end, t.end_char) for t in doc.tables),
    )


def document_from_wire(wire: object) -> ParsedDocument:
    """Rebuild and type-check a document from :func:`document_to_wire` form.

    Raises:
        ValueError: the value does not have the expected shape or types, or a section or page
            lies outside the text (offsets index the text; spans are cut along them).
    """
    if not (isinstance(wire, tuple) and len(wire) == 7):
        raise ValueError("result is not a 7-tuple")
    text, sections, pages, title, metadata, warnings, tables = wire
    _expect(isinstance(text, str), "text is not a string")
    _expect(isinstance(title, str), "title is not a string")
    _expect(_tuple_of(sections, 6) and _tuple_of(pages, 3), "sections or pages are malformed")
    _expect(_tuple_of(metadata, 2) and isinstance(warnings, tuple), "metadata or warnings are malformed")
    built_sections = []
    for title_, level, start, end, page_start, page_end in sections:
        _expect(isinstance(title_, str) and _ints(level, start, end), "a section has a wrong field type")
        _expect(
            _ints(*(p for p in (page_start, page_end) if p is not None)),
            "a section page is not an int",
        )
        _expect(0 <= start <= end <= len(text), "a section lies outside the text")
        built_sections.append(ParsedSection(title_, level, start, end, page_start, page_end))
    built_pages = []
    for number, start, end in pages:
        _expect(_ints(number, start, end), "a page has a wrong field type")
        _expect(0 <= start <= end <= len(text), "a page lies outside the text")
        built_pages.append(ParsedPage(number, start, end))
    meta = {}
    for key, value in metadata:
        _expect(isinstance(key, str) and isinstance(value, str), "metadata holds a non-string")
        meta[key] = value
    _expect(all(isinstance(w, str) for w in warnings), "a warning is not a string")
    _expect(_tuple_of(tables, 3), "tables are malformed")
    built_tables = []
    for start, header_end, end in tables:
        _expect(_ints(start, header_end, end), "a table has a wrong field type")
        _expect(0 <= start <= header_end <= end <= len(text), "a table lies outside the text")
        built_tables.append(ParsedTable(start, header_end, end))
    return ParsedDocument(
        text=text,
        sections=tuple(built_sections),
        pages=tuple(built_pages),
        title=title,
        metadata=meta,
        warnings=tuple(warnings),
        tables=tuple(built_tables),
    )


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _tuple_of(value: object, width: int) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, tuple) and len(v) == width for v in value)


def _ints(*values: object) -> bool:
    return all(type(v) is int for v in values)


# -- the worker loop -------------------------------------------------------------------------------
def main() -> None:
    """Serve parse requests on stdin/stdout until the parent closes the pipe (or dies)."""
    die_with_parent()
    requests, replies = _claim_standard_streams()
    # A segfault or abort then leaves its Python stack on stderr, for the parent's crash detail.
    faulthandler.enable()
    first = read_frame(requests, _MAX_REQUEST_BYTES)
    if first is None:
        return
    init = pickle.loads(first)
    memory_limited = _limit_resources(int(init["memory_mb"]))
    write_message(replies, ("ready", os.getpid(), memory_limited))
    parsers: dict[str, Parser] = {}
    while True:
        try:
            frame = read_frame(requests, _MAX_REQUEST_BYTES)
            if frame is None:
                return
            reply = _handle(pickle.loads(frame), parsers, _Progress(replies))
            del frame
            write_message(replies, reply)
        except MemoryError:
            # Out of memory in our own code (reading the file, pickling a huge result): there is no
            # memory left to report it properly, so the exit status says it.
            os._exit(EXIT_MEMORY)
        if not reply[-1]:
            return


def _claim_standard_streams() -> tuple[IO[bytes], IO[bytes]]:
    """Keep private copies of stdin/stdout for the protocol; point fds 0 and 1 away from it.

    A parser that prints (or a library that writes to fd 1 from C) would otherwise corrupt the reply
    stream, and one that reads stdin would swallow requests.  Duplicated descriptors are not
    inheritable, so programs a parser starts do not get the protocol pipes either.
    """
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return requests, replies


def _limit_resources(memory_mb: int) -> bool:
    """Apply the address-space limit (and no core dumps); True when the kernel enforces it.

    Only Linux enforces ``RLIMIT_AS`` for every allocation; macOS accepts or rejects the call but
    does not limit mmap, and Windows has no ``resource`` module.  The limit covers the whole worker,
    interpreter included.
    """
    if sys.platform == "win32":
        return False
    import resource  # POSIX only

    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crashing parser must not write core files
    except (ValueError, OSError):
        pass
    limit = memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    try:
        # Hard limit too, so the parser cannot raise it again.
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        return False
    return sys.platform.startswith("linux")


def _arm_cpu_backstop(budget_s: float) -> None:
    """Let the kernel stop this job after ``budget_s`` more CPU seconds.

    The parent enforces the wall-clock limit; this only matters if the parent is gone (crashed,
    killed) while a parser spins, so that no orphan burns a core forever.  ``RLIMIT_CPU`` counts the
    process's whole life, hence re-armed relative to the CPU time used so far before every job.
    """
    if sys.platform == "win32":
        return
    import resource  # POSIX only

    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + budget_s)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ValueError, OSError):
        pass


class _Progress:
    """The parser's ``limits.progress``: passes ``(pages read, pages in all)`` on to the parent, the first report
    at once (the parent learns the page count early) and then at most every :data:`PROGRESS_EVERY_S`."""

    def __init__(self, replies: IO[bytes]) -> None:
        self._replies = replies
        self._sent = -math.inf
        self._lock = threading.Lock()  # a parser's own threads must not interleave two frames

    def __call__(self, done: int, total: int) -> None:
        if not (isinstance(done, int) and isinstance(total, int) and 0 <= done <= total):
            return
        with self._lock:
            now = time.monotonic()
            if now - self._sent < PROGRESS_EVERY_S and done < total:
                return
            self._sent = now
            write_message(self._replies, ("progress", done, total))


def _handle(job: Job, parsers: dict[str, Parser], progress: Callable[[int, int], None]) -> tuple[Any, ...]:
    _arm_cpu_backstop(job.cpu_budget_s)
    try:
        parser = parsers.get(job.parser_ref) or _load_parser(job.parser_ref)
    except MemoryError:
        return _fail("memory", "MemoryError while loading the parser", keep=False)
    except Exception as exc:
        return _fail("crash", f"parser {job.parser_ref} cannot be loaded in the sandbox: {_describe(exc)}")
    except BaseException as exc:  # SystemExit and the like from a module's import-time code
        detail = f"parser {job.parser_ref} cannot be loaded in the sandbox: {_describe(exc)}"
        return _fail("crash", detail, keep=False)
    parsers[job.parser_ref] = parser
    try:
        data = job.data if job.data is not None else Path(job.path or "").read_bytes()
    except OSError as exc:
        return _fail("crash", f"the worker could not read the file: {_describe(exc)}")
    limits = ParseLimits(max_bytes=job.max_bytes, max_pages=job.max_pages, max_chars=job.max_chars, progress=progress)
    ran_out_of_memory = False
    try:
        doc = parser.parse(data, name=job.name, limits=limits)
    except LimitExceeded as exc:  # before ParseError: it is a subclass
        return _fail("limit", _message(exc))
    except ParseError as exc:
        return _fail("invalid", _message(exc))
    except MemoryError:
        # Reported after the except block, once the traceback (and the parser's hoard with it) is
        # freed.
        ran_out_of_memory = True
    except Exception as exc:
        return _fail("crash", _describe(exc, where=True))
    except BaseException as exc:  # SystemExit, KeyboardInterrupt from the parser: retire the worker
        return _fail("crash", _describe(exc, where=True), keep=False)
    if ran_out_of_memory:
        return _fail("memory", "MemoryError", keep=False)
    del data
    return _result(doc, limits)


def _result(doc: object, limits: ParseLimits) -> tuple[Any, ...]:
    if not isinstance(doc, ParsedDocument):
        return _fail("crash", f"parse() returned {type(doc).__qualname__}, not a ParsedDocument")
    try:
        if len(doc.pages) > limits.max_pages:
            return _fail("limit", f"{len(doc.pages)} pages, more than the limit of {limits.max_pages}")
        if len(doc.text) > limits.max_chars:
            return _fail("limit", f"{len(doc.text)} characters, more than the limit of {limits.max_chars}")
        wire = document_to_wire(doc)
    except Exception as exc:
        return _fail("crash", f"parse() returned a malformed ParsedDocument ({_describe(exc)})")
    return ("ok", wire, _clean())


def _fail(reason: str, detail: str, *, keep: bool = True) -> tuple[Any, ...]:
    return ("fail", reason, detail[:_DETAIL_CHARS], keep and _clean())


def _clean() -> bool:
    """Whether this worker may take another file: one whose parser left threads running may not (the thread
    watching the parent, where there is one, is the worker's own)."""
    return sum(1 for thread in threading.enumerate() if thread.name != WATCH_THREAD) == 1


def _load_parser(ref: str) -> Parser:
    """Import ``module:qualname`` and call it without arguments (the sandboxed-parser contract)."""
    module_name, _, qualname = ref.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    if not isinstance(target, type):
        raise TypeError(f"{ref} is not a class")
    parser = target()
    if not callable(getattr(parser, "parse", None)):
        raise TypeError(f"{ref} has no parse() method")
    return parser  # type: ignore[no-any-return]


def _message(exc: BaseException) -> str:
    text = _safe_str(exc)
    return text or type(exc).__qualname__


def _describe(exc: BaseException, *, where: bool = False) -> str:
    """``Type: message`` (module-qualified unless builtin), optionally with the innermost line."""
    cls = type(exc)
    kind = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    text = _safe_str(exc)
    described = f"{kind}: {text}" if text else kind
    tb = exc.__traceback__
    if where and tb is not None:
        while tb.tb_next is not None:
            tb = tb.tb_next
        described += f" (at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno})"
    return described


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)[:_DETAIL_CHARS]
    except Exception:  # a hostile __str__
        return "<unprintable message>"
