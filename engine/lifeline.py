"""Child processes: started, stopped and restarted in one way, and dying with the process that started them.

The vault's process starts helpers of its own: the recall helpers (:mod:`engine.recall.processes`) and the parser
sandbox's workers (:mod:`engine.documents.sandbox_process`).  They speak different protocols (questions and vector
changes over a socket; parse jobs over pipes), but their lives are supervised alike, here: :class:`Child` starts one
(:func:`popen`), stops it — a grace period to exit on its own, then SIGKILL to it or its whole process group — and
always reaps it; :class:`Restarts` decides whether one that died is worth starting again.

A SIGKILL gives the vault's process no chance to stop its children, and a child busy with its work (loading
vectors, a parser that sleeps or spins) does not notice that its pipe has closed until it next reads it — possibly
never.  So every such child ties its life to its parent's:

* **Linux**: the child asks the kernel for SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``, via ctypes).
  The kernel means the parent *thread* — the one that started the child — so the parent starts them all from one
  thread that lives as long as the process (:func:`popen`), never from a worker thread that may end first.
* **Elsewhere** (and on Linux when ``prctl`` is refused): a small thread in the child watches the parent — on
  Windows it waits on the parent's process handle, on POSIX it watches for the child being handed to another parent
  (``getppid`` changes when the parent dies) — and ends the child at once.

The parent passes its pid (``CAIRN_PARENT_PID``), so a child whose parent died before the tie was made (while the
child was still starting) ends as well.  Stdlib only: the parser worker imports this before anything else.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any, Final, TypeVar

#: The environment variable carrying the parent's pid to the child (removed by the child, so that programs it
#: starts in turn do not inherit it).
PARENT_ENV: Final = "CAIRN_PARENT_PID"
#: Name of the watching thread in a child (a parser worker does not count it as one its parser left running).
WATCH_THREAD: Final = "cairn-lifeline"
#: How often the POSIX fallback looks at its parent.
WATCH_INTERVAL_S: Final = 0.2
#: Exit status of a child ended by the fallback watch.
EXIT_ORPHANED: Final = 70

_PR_SET_PDEATHSIG: Final = 1
_T = TypeVar("_T")


# -- the parent's side ---------------------------------------------------------------------------------------------
def popen(args: list[str], *, env: dict[str, str] | None = None, **kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(args, ...)`` for a child that calls :func:`die_with_parent`: started from the
    long-lived spawning thread, with this process's pid in its environment.

    Raises:
        OSError: the child could not be started (as ``Popen`` does).
    """
    child_env = dict(os.environ if env is None else env)
    child_env[PARENT_ENV] = str(os.getpid())
    started: subprocess.Popen[bytes] = _Spawner.shared().run(lambda: subprocess.Popen(args, env=child_env, **kwargs))
    return started


class Child:
    """The parent's handle on one child process started by :func:`popen`.  :meth:`stop` is safe from any thread, any
    number of times, and always reaps the process (no zombie, whatever state it was in)."""

    def __init__(self, proc: subprocess.Popen[bytes], *, group: bool) -> None:
        self.proc = proc
        self.pid = proc.pid
        self.started_at = time.monotonic()
        self._group = group and sys.platform != "win32"
        self._lock = threading.Lock()

    @classmethod
    def start(cls, args: list[str], *, group: bool = False, env: dict[str, str] | None = None, **kwargs: Any) -> Child:
        """Start ``args`` (see :func:`popen`).  ``group``: the child leads a process group of its own, so a
        terminal's Ctrl-C reaches only the app (which stops its children itself) and :meth:`stop` also ends any
        program the child started.

        Raises:
            OSError: the child could not be started.
        """
        if group and sys.platform == "win32":
            kwargs["creationflags"] = kwargs.get("creationflags", 0) | subprocess.CREATE_NEW_PROCESS_GROUP
        elif group:
            kwargs["start_new_session"] = True
        return cls(popen(args, env=env, **kwargs), group=group)

    @property
    def running(self) -> bool:
        """Whether the process has not ended yet."""
        return self.proc.poll() is None

    def age(self) -> float:
        """Seconds since the child was started."""
        return time.monotonic() - self.started_at

    def stop(self, *, grace_s: float = 0.0) -> int:
        """End the child and reap it; returns its exit status.

        ``grace_s``: how long it may take to exit on its own first (the caller has closed its channel, which is how
        a child is asked to leave).  After that it is killed — with its process group when it leads one.
        """
        with self._lock:
            if self.proc.returncode is None and grace_s > 0:
                try:
                    self.proc.wait(grace_s)
                except subprocess.TimeoutExpired:
                    pass
            if self.proc.returncode is None:
                # Before reaping: until then the process (and group) id cannot have been reused by anyone.
                if self._group:
                    try:
                        os.killpg(self.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                else:
                    self.proc.kill()
                self.proc.wait()
            return int(self.proc.returncode)


class Restarts:
    """Whether a child that died should be started again in its slot.

    A child that keeps dying right after it starts (a broken install, a vault it cannot read) would only die again:
    after ``limit`` deaths in a row, each within ``quick_s`` of its start, the slot is given up.  A child that lived
    longer than that resets its slot's count.
    """

    def __init__(self, *, limit: int = 3, quick_s: float = 60.0) -> None:
        self.limit = limit
        self.quick_s = quick_s
        self._quick: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    def died(self, slot: Hashable, child: Child) -> bool:
        """Record that ``child`` (of ``slot``) died or failed; True if another should be started in its place."""
        with self._lock:
            quick = child.age() < self.quick_s
            count = self._quick.get(slot, 0) + 1 if quick else 0
            self._quick[slot] = count
            return count < self.limit


class _Spawner:
    """One daemon thread that starts children and then waits, blocked, for as long as the process lives.

    Linux delivers a child's death signal when the thread that started it ends, not the process; this thread never
    ends before the process does (a daemon thread is not stopped at interpreter exit, only with the process).
    """

    _lock = threading.Lock()
    _shared: _Spawner | None = None

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="cairn-spawner", daemon=True)
        self.thread.start()

    @classmethod
    def shared(cls) -> _Spawner:
        """This process's spawner (a forked child gets its own: threads do not survive a fork)."""
        with cls._lock:
            current = cls._shared
            if current is None or current.pid != os.getpid() or not current.thread.is_alive():
                current = cls._shared = _Spawner()
            return current

    def run(self, job: Callable[[], _T]) -> _T:
        """Run ``job`` on the spawning thread and return its result (or raise its exception)."""
        if threading.current_thread() is self.thread:
            return job()
        future: Future[_T] = Future()
        self._jobs.put((job, future))
        return future.result()

    def _loop(self) -> None:
        while True:
            job, future = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as exc:  # handed to the caller, who raises it
                future.set_exception(exc)


# -- the child's side ----------------------------------------------------------------------------------------------
def die_with_parent(*, death_signal: bool = True) -> str:
    """Tie this process's life to its parent's; call it first thing in a child started by :func:`popen`.

    Returns how: ``"signal"`` (Linux's death signal), ``"watch"`` (the fallback thread), or ``""`` when this
    process was not started by :func:`popen` (run by hand: nothing to tie to).  ``death_signal=False`` uses the
    fallback even on Linux (tests).  Ends the process at once if the parent is already gone.
    """
    raw = os.environ.pop(PARENT_ENV, "")
    if not raw.isdigit():
        return ""
    parent = int(raw)
    armed = death_signal and _arm_death_signal()
    watch = None if armed else _parent_watch(parent)
    if _orphaned(parent):  # it died before the tie was made
        os._exit(EXIT_ORPHANED)
    if watch is None:
        return "signal"
    # a small stack: a parser worker runs under an address-space limit, and this thread only waits
    previous = threading.stack_size(256 * 1024)
    try:
        threading.Thread(target=watch, name=WATCH_THREAD, daemon=True).start()
    finally:
        threading.stack_size(previous)
    return "watch"


def _arm_death_signal() -> bool:
    """Linux: have the kernel send SIGKILL when the parent dies.  False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _orphaned(parent: int) -> bool:
    """Whether the parent is gone already (POSIX: this process has been handed to another parent)."""
    if sys.platform == "win32":
        return not _windows_alive(parent)
    return os.getppid() != parent


def _parent_watch(parent: int) -> Callable[[], None]:
    """The fallback: a function that returns only to end this process, once the parent is gone."""
    if sys.platform == "win32":
        return _windows_watch(parent)

    def watch() -> None:
        import time

        while os.getppid() == parent:
            time.sleep(WATCH_INTERVAL_S)
        os._exit(EXIT_ORPHANED)

    return watch


def _windows_alive(pid: int) -> bool:
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    synchronize, timeout = 0x00100000, 0x00000102
    handle = kernel32.OpenProcess(synchronize, False, pid)
    if not handle:
        return False
    try:
        return int(kernel32.WaitForSingleObject(handle, 0)) == timeout
    finally:
        kernel32.CloseHandle(handle)


def _windows_watch(parent: int) -> Callable[[], None]:
    """Windows: wait on a handle to the parent, opened now (while the parent is known to be alive, so its pid cannot
    have been reused by another process yet)."""
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    synchronize, infinite = 0x00100000, 0xFFFFFFFF
    handle = kernel32.OpenProcess(synchronize, False, parent)

    def watch() -> None:
        if handle:
            kernel32.WaitForSingleObject(handle, infinite)
        os._exit(EXIT_ORPHANED)

    return watch
