"""Child processes die with their parent (engine/lifeline.py): real parents, SIGKILLed, and their real children;
and the stopping and restarting every child of the vault shares.

The recall helpers have their own test (tests/engine/recall/test_processes.py); here the parser sandbox's workers,
and the portable fallback (a thread watching the parent) that platforms without Linux's death signal use.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX signals")

REPO = Path(__file__).resolve().parents[2]
#: Generous: the children end within about a second, but the machine may be busy.
DEADLINE_S = 10.0


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper that never comes, in a container without init, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (macOS): ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"


def _gone_in_time(pid: int) -> bool:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.1)
    return not _alive(pid)


class Parent:
    """A Python script as the parent, in a child process of the test; its first lines on stdout are pids."""

    def __init__(self, script: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(script)], cwd=REPO, stdout=subprocess.PIPE, text=True
        )
        self.children: list[int] = []

    def read_pid(self) -> int:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.strip().isdigit(), f"the parent said {line!r} (exit status {self.proc.poll()})"
        pid = int(line)
        self.children.append(pid)
        return pid

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def clean_up(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid in self.children:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _parent(script: str) -> Iterator[Parent]:
    parent = Parent(script)
    try:
        yield parent
    finally:
        parent.clean_up()


@pytest.fixture
def sandbox_parent(tmp_path: Path) -> Iterator[Parent]:
    """A parent whose one parser worker, started from a thread that has ended since, is sleeping in a parser.

    It prints the worker's pid twice: once from the first parse (a quick one, on a thread that then ends), then
    once the second parse is under way in the same worker (its parser has written its marker and sleeps).
    """
    marker = tmp_path / "parsing"
    yield from _parent(
        f"""
        import pathlib, threading, time
        from engine.documents.sandbox import ParserSandbox, SandboxLimits
        from tests.engine.documents import hostile_parsers as hp
        from tests.engine.lifeline_parsers import MarkingSleeper

        box = ParserSandbox(SandboxLimits(timeout_s=600.0, memory_mb=300, max_bytes=1 << 20, max_pages=10))
        probe = threading.Thread(target=lambda: box.parse(hp.ProbeParser(), b"probe", name="probe.txt"))
        probe.start()
        probe.join()
        print(box.worker_pids()[0], flush=True)
        marker = pathlib.Path({str(marker)!r})
        parse = lambda: box.parse(MarkingSleeper(), str(marker).encode(), name="sleep.txt")
        threading.Thread(target=parse, daemon=True).start()
        while not marker.exists():
            time.sleep(0.05)
        print(box.worker_pids()[0], flush=True)
        time.sleep(600)
        """
    )


def test_a_parser_worker_dies_with_its_killed_parent_even_in_the_middle_of_a_parse(sandbox_parent: Parent) -> None:
    worker = sandbox_parent.read_pid()
    assert sandbox_parent.read_pid() == worker, "the worker died with the thread that started it"
    assert _alive(worker)
    sandbox_parent.kill()
    assert _gone_in_time(worker), "the parser worker outlived its parent"


@pytest.fixture
def watched_parent() -> Iterator[Parent]:
    """A parent with one child tied to it by the portable fallback only (no death signal), which then sleeps."""
    yield from _parent(
        """
        import sys, time
        from engine.lifeline import popen

        child = popen(
            [sys.executable, "-c",
             "import sys, time; from engine.lifeline import die_with_parent; "
             "print(die_with_parent(death_signal=False), flush=True); time.sleep(600)"],
            stdout=__import__("subprocess").PIPE,
        )
        assert child.stdout.readline().strip() == b"watch"
        print(child.pid, flush=True)
        time.sleep(600)
        """
    )


def test_the_portable_watch_ends_a_child_whose_parent_is_killed(watched_parent: Parent) -> None:
    child = watched_parent.read_pid()
    assert _alive(child)
    watched_parent.kill()
    assert _gone_in_time(child), "the watched child outlived its parent"


def test_a_child_whose_parent_died_before_it_was_tied_ends_at_once(tmp_path: Path) -> None:
    """The parent's pid travels with the child: a child that starts after its parent died (the tie not made yet)
    notices and ends instead of running on."""
    started = tmp_path / "started"
    env = dict(os.environ, CAIRN_PARENT_PID=str(_dead_pid()))
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pathlib, sys, time; from engine.lifeline import die_with_parent; die_with_parent(); "
            f"pathlib.Path({str(started)!r}).write_text('ran on'); time.sleep(600)",
        ],
        cwd=REPO,
        env=env,
        timeout=60,
    )
    assert child.returncode != 0
    assert not started.exists()


def test_a_process_not_started_by_a_cairn_parent_is_left_alone() -> None:
    env = {k: v for k, v in os.environ.items() if k != "CAIRN_PARENT_PID"}
    child = subprocess.run(
        [sys.executable, "-c", "from engine.lifeline import die_with_parent; print(repr(die_with_parent()))"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.returncode == 0 and child.stdout.strip() == "''", child.stderr


def _dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(ended.stdout)


# -- the supervision every child shares (engine.lifeline.Child and Restarts) ------------------------------------------
def test_a_child_given_grace_exits_on_its_own_and_is_reaped() -> None:
    from engine.lifeline import Child

    child = Child.start([sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit(3)"], stdin=subprocess.PIPE)
    assert child.running
    assert child.proc.stdin is not None
    child.proc.stdin.close()  # how a child is asked to leave: its channel closes
    assert child.stop(grace_s=DEADLINE_S) == 3  # its own exit status: it was not killed
    assert not child.running and not _alive(child.pid)
    assert child.stop() == 3  # again, from anywhere: the same answer


def test_stopping_a_group_leader_kills_what_it_started_too(tmp_path: Path) -> None:
    from engine.lifeline import Child

    marker = tmp_path / "grandchild"
    script = textwrap.dedent(
        f"""
        import subprocess, sys, time
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(marker)!r}, "w").write(str(p.pid))
        time.sleep(600)
        """
    )
    child = Child.start([sys.executable, "-c", script], group=True)
    deadline = time.monotonic() + DEADLINE_S
    while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = int(marker.read_text())
    assert child.stop(grace_s=0.2) == -signal.SIGKILL  # it would not leave: killed, with its group
    deadline = time.monotonic() + DEADLINE_S
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_a_slot_whose_children_keep_dying_at_once_is_given_up() -> None:
    from engine.lifeline import Child, Restarts

    restarts = Restarts(limit=3, quick_s=60.0)
    child = Child.start([sys.executable, "-c", "pass"])
    child.stop(grace_s=DEADLINE_S)
    assert restarts.died("a", child) and restarts.died("a", child)
    assert restarts.died("b", child), "each slot counts its own deaths"
    assert not restarts.died("a", child), "the third quick death in a row: not started again"
    child.started_at -= 120  # one that lived past the quick window starts the count again
    assert restarts.died("a", child) and restarts.died("b", child)
