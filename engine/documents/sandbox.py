"""Sandboxed parsing: :class:`ParserSandbox` runs parser plugins on untrusted bytes in workers.

Parsers are third-party code fed hostile input: they hang, allocate without bound, segfault in
native code or abort.  None of that may reach the process holding the vault, so every parse runs in
a worker process (:mod:`engine.documents.sandbox_worker`, started by
:mod:`engine.documents.sandbox_process`) with a wall-clock limit (the parent kills the worker), an
address-space limit (``RLIMIT_AS``, which the worker sets on itself) and byte/page caps.  Every
outcome is a :class:`~engine.plugin_api.ParsedDocument` or a typed :class:`ParseFailure`.  Workers
are reused across files and replaced after a timeout, a memory failure or a crash.

**For parser authors:** the worker re-creates your parser from its class: it imports
``type(parser).__module__`` and calls ``type(parser).__qualname__`` with no arguments.  A sandboxed
parser must therefore be a module-level class (not defined in a function, not in ``__main__``) whose
no-argument construction behaves like the registered instance; configuration given to ``__init__``
is not seen by the worker.  A parser that cannot be re-created fails every file with ``crash``.

Platform notes: the memory limit is enforced on Linux only.  On macOS ``RLIMIT_AS`` is requested but
the kernel does not apply it to most allocations, and Windows has no ``resource`` module; there only
the wall-clock limit and the caps protect the parent.
"""

from __future__ import annotations

import logging
import os
import queue
import shutil
import signal
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Final, Literal, get_args

from engine.documents.sandbox_process import (
    ParseDeadline,
    WorkerDiedError,
    WorkerProcess,
    WorkerStartError,
    last_words,
    worker_command,
)
from engine.documents.sandbox_worker import EXIT_MEMORY, Job, document_from_wire
from engine.errors import EnvironmentProblem, StorageFull
from engine.permissions import private_dir
from engine.plugin_api import ParsedDocument, ParseLimits, Parser

if TYPE_CHECKING:
    from engine.config import DocumentSettings

log = logging.getLogger(__name__)

FailureReason = Literal["timeout", "memory", "crash", "limit", "invalid"]
_REASONS: Final = frozenset(get_args(FailureReason))

#: Files up to this size travel inside the request, larger ones through a private temp file: past
#: about 64 KB the pipe (and its context switches) is slower than the page cache.  A request this
#: small also fits in a Linux pipe buffer, so sending it never waits for the worker.
INLINE_MAX_BYTES: Final = 64 * 1024
#: A worker is replaced after this many files, so that allocator fragmentation and library caches
#: built up over a long ingest cannot push an innocent file over the memory limit.
MAX_FILES_PER_WORKER: Final = 200
#: CPU seconds beyond the wall-clock limit before the worker's own RLIMIT_CPU backstop fires.
_CPU_GRACE_S: Final = 10.0
_MEMORY_MARKERS: Final = (
    "MemoryError",
    "Cannot allocate memory",
    "out of memory",
    "bad_alloc",
    "memory allocation failed",
)


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """What one parse may use: wall-clock seconds, worker address space, input bytes, pages.

    Time scales with the file: ``timeout_s`` plus ``seconds_per_mb`` for each megabyte of it (known before the
    parse, from the bytes handed over) until the parser reports the page count, then that plus
    ``seconds_per_page`` for each page, at most ``max_timeout_s`` (:meth:`opening` and :meth:`allowance`).  A flat
    limit either refused ordinary 300-page annual reports (pypdf takes 25–50 s on some) or let a stuck one-page file
    hold a worker for minutes.
    """

    timeout_s: float
    memory_mb: int
    max_bytes: int
    max_pages: int
    seconds_per_page: float = 0.0
    max_timeout_s: float = 0.0  # 0: timeout_s
    seconds_per_mb: float = 0.0

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, not {self.timeout_s}")
        if self.memory_mb < 1 or self.max_bytes < 1 or self.max_pages < 1:
            raise ValueError("memory_mb, max_bytes and max_pages must be at least 1")
        if self.seconds_per_page < 0 or self.max_timeout_s < 0 or self.seconds_per_mb < 0:
            raise ValueError("seconds_per_page, seconds_per_mb and max_timeout_s cannot be negative")

    @property
    def longest_s(self) -> float:
        """The most wall-clock time any one parse may take."""
        return max(self.timeout_s, self.max_timeout_s)

    def opening(self, size: int) -> float:
        """Seconds a parse of a file of ``size`` bytes may take before it reports its pages."""
        return min(self.timeout_s + self.seconds_per_mb * max(size, 0) / 1_000_000, self.longest_s)

    def allowance(self, pages: int, size: int = 0) -> float:
        """Seconds a parse of a document of ``pages`` pages and ``size`` bytes may take (pages past ``max_pages``
        earn nothing)."""
        earned = self.opening(size) + self.seconds_per_page * min(max(pages, 0), self.max_pages)
        return min(earned, self.longest_s)

    @classmethod
    def from_settings(cls, settings: DocumentSettings) -> SandboxLimits:
        """The limits configured in the ``documents`` settings section."""
        return cls(
            timeout_s=settings.parse_timeout_s,
            memory_mb=settings.parse_memory_mb,
            max_bytes=settings.max_bytes,
            max_pages=settings.max_pages,
            seconds_per_page=settings.parse_seconds_per_page,
            max_timeout_s=settings.parse_timeout_max_s,
            seconds_per_mb=settings.parse_seconds_per_megabyte,
        )


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """Why a file was not parsed: ``reason`` is the quarantine reason, ``detail`` is for people."""

    reason: FailureReason
    detail: str


def parser_reference(parser: Parser) -> str:
    """``module:qualname`` of the parser's class: how the worker finds it."""
    cls = type(parser)
    return f"{cls.__module__}:{cls.__qualname__}"


@dataclass
class _Pool:
    """State shared with the finalizer, which must not hold the sandbox itself."""

    workdir: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    live: set[WorkerProcess] = field(default_factory=set)
    closed: bool = False


def _shutdown(pool: _Pool) -> None:
    with pool.lock:
        pool.closed = True
        workers = list(pool.live)
        pool.live.clear()
    for worker in workers:
        worker.stop()
    shutil.rmtree(pool.workdir, ignore_errors=True)


class ParserSandbox:
    """Parses in up to ``workers`` persistent worker processes; thread-safe.

    Calls beyond ``workers`` wait for a free worker; workers start on first use.  Use it as a
    context manager or call :meth:`close`; workers still running when the interpreter exits are
    killed then.
    """

    def __init__(self, limits: SandboxLimits, *, workers: int = 1, work_root: Path | None = None) -> None:
        """``work_root``: where the work folder is made (the vault's private ``work/``; the system's temp folder
        when not given)."""
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.limits = limits
        if work_root is not None:
            private_dir(work_root)
        self._pool = _Pool(workdir=tempfile.mkdtemp(prefix="cairn-parse-", dir=work_root))
        # One entry per worker slot: a running worker, or None for "start one when needed".
        self._slots: queue.SimpleQueue[WorkerProcess | None] = queue.SimpleQueue()
        for _ in range(workers):
            self._slots.put(None)
        self._finalizer = weakref.finalize(self, _shutdown, self._pool)

    def __enter__(self) -> ParserSandbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Kill every worker and remove the work folder.  Idempotent; :meth:`parse` raises after."""
        self._finalizer()

    def worker_pids(self) -> tuple[int, ...]:
        """Process ids of the running workers (for diagnostics)."""
        with self._pool.lock:
            return tuple(sorted(w.pid for w in self._pool.live))

    def parse(
        self, parser: Parser, data: bytes, *, name: str, on_progress: Callable[[int, int], None] | None = None
    ) -> ParsedDocument | ParseFailure:
        """Parse ``data`` with ``parser`` in a worker; blocks until done (the limits' allowance at most).

        ``on_progress(pages read, pages in all)`` is called as a paged document is read (from a thread of the
        sandbox, a few times a second at most).

        Whatever the parser does, the answer is a document or a :class:`ParseFailure`.

        Raises:
            RuntimeError: the sandbox is closed (also when another thread closes it meanwhile).
            EnvironmentProblem: no worker process can be started (not the file's fault).
            StorageFull: a large file cannot be handed over: the temp folder is full.
        """
        self._check_open()
        if len(data) > self.limits.max_bytes:
            return ParseFailure(
                "limit",
                f"the file has {len(data)} bytes, more than the limit of {self.limits.max_bytes}",
            )
        with self._handover(data) as (inline, path):
            job = Job(
                parser_ref=parser_reference(parser),
                name=name,
                max_bytes=self.limits.max_bytes,
                max_pages=self.limits.max_pages,
                max_chars=ParseLimits().max_chars,
                cpu_budget_s=self._cpu_budget_s(),
                data=inline,
                path=path,
            )
            return self._dispatch(job, on_progress, size=len(data))

    # -- internals ---------------------------------------------------------------------------------
    def _dispatch(
        self, job: Job, on_progress: Callable[[int, int], None] | None = None, *, size: int = 0
    ) -> ParsedDocument | ParseFailure:
        slot = self._slots.get()
        try:
            for attempt in (1, 2):
                self._check_open()
                worker = slot if slot is not None else self._start_worker()
                seasoned = worker.files > 0
                result, keep = self._run(worker, job, on_progress, size=size)
                self._check_open()
                if keep and worker.files < MAX_FILES_PER_WORKER:
                    slot = worker
                else:
                    self._retire(worker)
                    slot = None
                # A worker that served other files may die or run out of memory because of what they
                # left behind.  Quarantine is sticky, so such a failure is confirmed on a fresh
                # worker.
                confirm = attempt == 1 and seasoned and not keep
                if not (confirm and isinstance(result, ParseFailure)):
                    return result
                if result.reason not in ("memory", "crash"):
                    return result
            raise AssertionError("unreachable: the second attempt always returns")
        finally:
            self._slots.put(slot)

    def _run(
        self,
        worker: WorkerProcess,
        job: Job,
        on_progress: Callable[[int, int], None] | None = None,
        *,
        size: int = 0,
    ) -> tuple[ParsedDocument | ParseFailure, bool]:
        """One request on ``worker`` for a file of ``size`` bytes; the flag says whether the worker may be kept."""
        limits = self.limits
        try:
            reply = worker.request(
                job,
                timeout=limits.opening(size),
                allowance=lambda pages: limits.allowance(pages, size),
                on_progress=on_progress,
            )
        except ParseDeadline as late:
            # No file name in the log: logs outlive a forget.
            log.info("a parse timed out; worker %d killed", worker.pid)
            detail = f"parsing did not finish within {late.allowed_s:g} s"
            return ParseFailure("timeout", detail), False
        except WorkerDiedError as died:
            return self._death(died), False
        return self._interpret(reply)

    def _interpret(self, reply: object) -> tuple[ParsedDocument | ParseFailure, bool]:
        match reply:
            case ("ok", wire, bool(keep)):
                try:
                    return document_from_wire(wire), keep
                except ValueError as exc:
                    detail = f"parse() returned a malformed ParsedDocument ({exc})"
                    return ParseFailure("crash", detail), False
            case ("fail", str(reason), str(detail), bool(keep)) if reason in _REASONS:
                if reason == "memory":
                    detail = f"{self._over_memory()} ({detail})"
                return ParseFailure(reason, detail), keep  # type: ignore[arg-type]  # in _REASONS
        return ParseFailure("crash", "the parse worker sent an unexpected reply"), False

    def _death(self, died: WorkerDiedError) -> ParseFailure:
        """Classify a worker that ended during a parse, by exit status and last words on stderr."""
        if died.problem is not None:
            return ParseFailure("crash", f"the parse worker broke the protocol: {died.problem}")
        status, tail = died.returncode, died.stderr_tail
        if status < 0:
            try:
                how = f"signal {signal.Signals(-status).name}"
            except ValueError:
                how = f"signal {-status}"
        else:
            how = f"exit status {status}"
        words = last_words(tail)
        said = f": {words}" if words else ""
        if status == EXIT_MEMORY or any(marker in tail for marker in _MEMORY_MARKERS):
            return ParseFailure("memory", f"{self._over_memory()} ({how}{said})")
        if sys.platform != "win32" and status == -signal.SIGXCPU:
            budget = self._cpu_budget_s()
            return ParseFailure("timeout", f"the parser used more than {budget:g} s of CPU time")
        if sys.platform != "win32" and status == -signal.SIGKILL:
            # Not sent by us (our kills are timeouts): on Linux, the kernel's out-of-memory killer.
            detail = f"the parser process was killed by the system ({how}), most likely for memory"
            return ParseFailure("memory", detail)
        return ParseFailure("crash", f"the parser process died ({how}){said}")

    def _cpu_budget_s(self) -> float:
        # A parser using every core burns up to timeout × cores of CPU time within the wall clock.
        return self.limits.longest_s * (os.cpu_count() or 1) + _CPU_GRACE_S

    def _over_memory(self) -> str:
        return f"the parser exceeded the memory limit of {self.limits.memory_mb} MB"

    def _start_worker(self) -> WorkerProcess:
        try:
            worker = WorkerProcess.start(worker_command(), cwd=self._pool.workdir, memory_mb=self.limits.memory_mb)
        except WorkerStartError as exc:
            raise EnvironmentProblem(
                f"Cannot start a document parser process: {exc}",
                fix="Check that Cairn is installed completely; if the message mentions memory, "
                "raise documents.parse_memory_mb.",
            ) from exc
        with self._pool.lock:
            closed = self._pool.closed
            if not closed:
                self._pool.live.add(worker)
        if closed:
            worker.stop()
            self._check_open()
        log.debug(
            "parse worker %d ready in %.0f ms (memory limit enforced: %s)",
            worker.pid,
            worker.startup_s * 1000,
            worker.memory_limited,
        )
        return worker

    def _retire(self, worker: WorkerProcess) -> None:
        with self._pool.lock:
            self._pool.live.discard(worker)
        worker.stop()

    def _check_open(self) -> None:
        if self._pool.closed:
            raise RuntimeError("ParserSandbox is closed")

    @contextmanager
    def _handover(self, data: bytes) -> Iterator[tuple[bytes | None, str | None]]:
        """Small files go inline; a large one is written once to a temp file the worker reads."""
        if len(data) <= INLINE_MAX_BYTES:
            yield data, None
            return
        try:
            fd, path = tempfile.mkstemp(prefix="job-", dir=self._pool.workdir)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        except OSError as exc:
            self._check_open()  # the work folder vanished because another thread closed us
            raise StorageFull(f"Cannot hand a file to the parser: {exc}", fix="Free space in the temp folder.") from exc
        try:
            yield None, path
        finally:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
