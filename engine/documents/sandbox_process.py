"""The parent's handle on one parser worker process: start, request with a deadline, stop.

:class:`WorkerProcess` owns the child process of :mod:`engine.documents.sandbox_worker`, a thread
reading its replies (so that waiting for one can time out on every platform) and a thread keeping
the last few KB of its stderr (so that a crash can be explained, and a chatty parser can never block
on a full pipe).

Workers are fresh interpreters started with :mod:`subprocess`.  That is what multiprocessing's
"spawn" does too — nothing of this multi-threaded process is inherited: no threads, no sqlite
connections — but without spawn's re-import of the parent's ``__main__``, which would load the whole
CLI or GUI into every worker.  They are started, stopped and reaped as every child process of the
vault is (:class:`engine.lifeline.Child`), so a worker ends with this process even when it is killed
in the middle of a parse, and leads a process group of its own that is killed with it.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from engine.documents.sandbox_worker import (
    WORKER_ARGUMENT,
    Job,
    load_plain,
    read_frame,
    write_message,
)
from engine.lifeline import Child
from engine.plugin_api import ParseLimits

#: How long a new worker may take to import and report ready.
START_TIMEOUT_S: Final = 60.0
#: How long to wait for the exit status of a worker whose reply stream ended.
_EXIT_GRACE_S: Final = 2.0
#: Largest reply accepted: the text cap in UTF-8 plus room for structure.
_MAX_REPLY_BYTES: Final = 4 * ParseLimits().max_chars + 64 * 1024 * 1024
#: Bytes of a worker's stderr kept for crash details.
_TAIL_BYTES: Final = 8192


def worker_command() -> list[str]:
    """The command line that starts a worker.

    From source, the worker gets this process's ``sys.path`` (made absolute: the worker runs in its
    own folder) so that every parser importable here is importable there.  A frozen application is
    started again with :data:`~engine.documents.sandbox_worker.WORKER_ARGUMENT` and must hand over
    to :func:`engine.documents.sandbox_worker.main` when it sees it.
    """
    if getattr(sys, "frozen", False):
        return [sys.executable, WORKER_ARGUMENT]
    bootstrap = "import sys; sys.path[:] = sys.argv[1:]; from engine.documents.sandbox_worker import main; main()"
    return [sys.executable, "-c", bootstrap, *(os.path.abspath(str(p)) for p in sys.path)]


class WorkerStartError(Exception):
    """A worker process could not be started or did not report ready."""


class ParseDeadline(TimeoutError):
    """No reply within the time allowed (``allowed_s``, the page count's allowance where it was reported)."""

    def __init__(self, allowed_s: float) -> None:
        super().__init__(f"no reply within {allowed_s:g} s")
        self.allowed_s = allowed_s


class WorkerDiedError(Exception):
    """The worker ended during a request; ``problem`` is set when it broke the protocol instead."""

    def __init__(self, returncode: int, stderr_tail: str, problem: str | None = None) -> None:
        super().__init__(problem or f"worker ended with status {returncode}")
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        self.problem = problem


@dataclass(frozen=True, slots=True)
class _Closed:
    """Queued when the reply stream ends; ``problem`` is set when it carried garbage."""

    problem: str | None = None


class WorkerProcess:
    """One worker process and its two pipe threads.

    Serves one request at a time (the sandbox hands each worker to one caller); :meth:`stop` may be
    called from any thread, any number of times.
    """

    def __init__(self, child: Child) -> None:
        self.pid = child.pid
        self.files = 0
        self.startup_s = 0.0
        self.memory_limited = False
        self._child = child
        self._proc = child.proc
        self._replies: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._tail = bytearray()
        self._tail_lock = threading.Lock()
        self._stop_lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._read_replies, name=f"parse-{self.pid}", daemon=True),
            threading.Thread(target=self._keep_tail, name=f"parse-{self.pid}-err", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @classmethod
    def start(cls, command: list[str], *, cwd: str, memory_mb: int) -> WorkerProcess:
        """Start a worker and wait until it reports ready with its limits applied.

        Raises:
            WorkerStartError: the process could not be started or did not become ready.
        """
        began = time.monotonic()
        env = dict(os.environ)
        # glibc reserves 64 MB of address space per thread arena: under RLIMIT_AS, a parser using
        # threads would lose that much of its budget for nothing.
        env.setdefault("MALLOC_ARENA_MAX", "2")
        try:
            # its own process group: killing the group also ends programs a parser started
            pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
            child = Child.start(command, group=True, cwd=cwd, env=env, **pipes)
        except OSError as exc:
            raise WorkerStartError(str(exc)) from exc
        worker = cls(child)
        try:
            reply = worker._exchange({"memory_mb": memory_mb}, timeout=START_TIMEOUT_S)
        except (TimeoutError, WorkerDiedError) as exc:
            worker.stop()
            tail = exc.stderr_tail if isinstance(exc, WorkerDiedError) else worker.stderr_tail()
            raise WorkerStartError(f"{exc} {last_words(tail)}".strip()) from exc
        match reply:
            case ("ready", int(), bool(limited)):
                worker.memory_limited = limited
            case _:
                worker.stop()
                raise WorkerStartError("the worker's first message was not 'ready'")
        worker.startup_s = time.monotonic() - began
        return worker

    def request(
        self,
        job: Job,
        *,
        timeout: float,
        allowance: Callable[[int], float] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> object:
        """Send ``job`` and return the reply.

        ``timeout`` is the time allowed until the worker reports how many pages the document has; from then on
        it is ``allowance(pages)`` (never less than ``timeout``), counted from the start.  Each report is passed
        to ``on_progress``.

        Raises:
            ParseDeadline: no reply within the time allowed; the worker has been killed.
            WorkerDiedError: the worker ended (or broke the protocol) instead of replying.
        """
        self.files += 1
        with self._tail_lock:
            self._tail.clear()
        return self._exchange(job, timeout=timeout, allowance=allowance, on_progress=on_progress)

    def stderr_tail(self) -> str:
        """The last few KB the worker wrote to stderr since the current request began."""
        with self._tail_lock:
            return self._tail.decode("utf-8", errors="replace")

    def stop(self) -> None:
        """Kill the process and its process group, reap it and release the pipes.  Idempotent."""
        self._child.stop()
        with self._stop_lock:  # one stopper at a time closes the pipes
            for thread in self._threads:
                if thread is not threading.current_thread():
                    thread.join(timeout=1.0)
            for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass

    def _exchange(
        self,
        message: object,
        *,
        timeout: float,
        allowance: Callable[[int], float] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> object:
        began = time.monotonic()
        allowed = timeout
        assert self._proc.stdin is not None
        try:
            # Does not wait on the parser: requests are small (large files go by temp file), the
            # worker reads them in its own loop (one whose parser left threads running is retired),
            # and a dead worker makes this fail at once with a broken pipe.
            write_message(self._proc.stdin, message)
        except (OSError, ValueError):
            pass  # it died, or close() stopped it meanwhile: the reply stream says which
        while True:
            try:
                reply = self._replies.get(timeout=max(0.0, began + allowed - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise ParseDeadline(allowed) from None
            match reply:
                case ("progress", int(done), int(total)) if 0 <= done <= total:
                    # The page count the worker claims can only earn what ``allowance`` grants for it (the
                    # sandbox caps it), so a subverted worker gains no more than a long document would.
                    if allowance is not None:
                        allowed = max(timeout, allowance(total))
                    if on_progress is not None:
                        on_progress(done, total)
                    continue
                case _Closed(problem=problem):
                    raise self._ended(problem)
            return reply

    def _ended(self, problem: str | None) -> WorkerDiedError:
        """Collect the exit status of a worker whose reply stream ended, and stop it."""
        if problem is None:
            try:
                self._proc.wait(timeout=_EXIT_GRACE_S)
            except subprocess.TimeoutExpired:
                problem = "it closed its reply stream but kept running"
        self.stop()
        return WorkerDiedError(self._proc.returncode, self.stderr_tail(), problem)

    def _read_replies(self) -> None:
        assert self._proc.stdout is not None
        while True:
            try:
                frame = read_frame(self._proc.stdout, _MAX_REPLY_BYTES)
            except (EOFError, OSError):
                frame = None  # it died while writing, or we stopped it
            except ValueError as exc:
                self._replies.put(_Closed(str(exc)))
                return
            if frame is None:
                self._replies.put(_Closed())
                return
            try:
                self._replies.put(load_plain(frame))
            except Exception as exc:  # whatever a garbage pickle makes the unpickler raise
                self._replies.put(_Closed(f"unreadable reply: {type(exc).__name__}: {exc}"))
                return

    def _keep_tail(self) -> None:
        assert self._proc.stderr is not None
        fd = self._proc.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._tail_lock:
                self._tail += chunk
                del self._tail[:-_TAIL_BYTES]


def last_words(tail: str) -> str:
    """The telling line of a worker's stderr: the interpreter's fatal error, else the last line."""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("Fatal Python error"):
            return line[:300]
    return lines[-1][:300] if lines else ""
