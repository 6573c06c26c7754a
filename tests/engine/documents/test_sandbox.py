"""The parser sandbox against real worker processes and parsers that misbehave in every way.

Each hostile parser runs for real (it hangs, hoards memory, aborts, segfaults); the proof that the
parent survives is that this test process keeps going.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.config import DocumentSettings
from engine.documents import sandbox as sandbox_module
from engine.documents.sandbox import ParseFailure, ParserSandbox, SandboxLimits
from engine.documents.sandbox_process import worker_command
from engine.documents.sandbox_worker import WORKER_ARGUMENT
from engine.errors import EnvironmentProblem
from engine.plugin_api import ParsedDocument, ParseLimits, Parser
from tests.engine.documents import hostile_parsers as hp

pytestmark = pytest.mark.timeout(120)

LIMITS = SandboxLimits(timeout_s=10.0, memory_mb=200, max_bytes=8 * 1024 * 1024, max_pages=20)
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux")


@pytest.fixture
def sandbox() -> Iterator[ParserSandbox]:
    with ParserSandbox(LIMITS) as box:
        yield box


def parsed(result: ParsedDocument | ParseFailure) -> ParsedDocument:
    assert isinstance(result, ParsedDocument), result
    return result


def failed(result: ParsedDocument | ParseFailure, reason: str) -> ParseFailure:
    assert isinstance(result, ParseFailure), result
    assert result.reason == reason, result
    return result


def probe_pid(box: ParserSandbox) -> int:
    return int(parsed(box.parse(hp.ProbeParser(), b"probe", name="probe.txt")).metadata["pid"])


def is_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# -- configuration ---------------------------------------------------------------------------------
def test_limits_come_from_the_document_settings() -> None:
    settings = DocumentSettings(
        parse_timeout_s=12.5,
        parse_memory_mb=300,
        max_bytes=4096,
        max_pages=7,
        parse_seconds_per_page=0.25,
        parse_timeout_max_s=40,
        parse_seconds_per_megabyte=3.0,
    )
    assert SandboxLimits.from_settings(settings) == SandboxLimits(12.5, 300, 4096, 7, 0.25, 40.0, 3.0)
    with pytest.raises(ValueError, match="timeout_s"):
        SandboxLimits(timeout_s=0, memory_mb=1, max_bytes=1, max_pages=1)
    with pytest.raises(ValueError, match="workers"):
        ParserSandbox(LIMITS, workers=0)


def test_worker_command_carries_sys_path_or_the_frozen_flag(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    command = worker_command()
    assert command[:2] == [sys.executable, "-c"]
    assert command[3:] == [os.path.abspath(str(p)) for p in sys.path]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert worker_command() == [sys.executable, WORKER_ARGUMENT]


# -- results ---------------------------------------------------------------------------------------
def test_a_normal_parse_equals_the_in_process_parse(sandbox: ParserSandbox) -> None:
    data = "# Intro\nHello.\n\f# Näher\nWorld — with ünïcode.\n\f# End\nbye\n".encode()
    expected = hp.OutlineParser().parse(
        data,
        name="notes.txt",
        limits=ParseLimits(max_bytes=LIMITS.max_bytes, max_pages=LIMITS.max_pages),
    )
    result = parsed(sandbox.parse(hp.OutlineParser(), data, name="notes.txt"))
    assert result == expected
    assert [s.title for s in result.sections] == ["Intro", "Näher", "End"]
    assert len(result.pages) == 3


def test_the_parser_runs_in_a_lean_worker_with_the_configured_limits(
    sandbox: ParserSandbox,
) -> None:
    meta = parsed(sandbox.parse(hp.ProbeParser(), b"abc", name="in.txt")).metadata
    assert int(meta["pid"]) != os.getpid()
    assert int(meta["pid"]) in sandbox.worker_pids()
    assert (meta["name"], meta["size"]) == ("in.txt", "3")
    assert (int(meta["max_bytes"]), int(meta["max_pages"])) == (LIMITS.max_bytes, LIMITS.max_pages)
    assert int(meta["max_chars"]) == ParseLimits().max_chars
    # Spawned, not forked: none of this process's threads, none of its heavy imports.
    assert meta["threads"] == "MainThread"
    assert meta["modules"] == ""


def test_a_large_file_travels_by_temp_file_which_is_removed_after(sandbox: ParserSandbox) -> None:
    data = os.urandom(3 * 1024 * 1024)
    meta = parsed(sandbox.parse(hp.ProbeParser(), data, name="big.bin")).metadata
    assert meta["size"] == str(len(data))
    assert (meta["head"], meta["tail"]) == (data[:16].hex(), data[-16:].hex())
    assert meta["cwd_files"].startswith("job-")  # the worker runs in the sandbox's private folder
    after = parsed(sandbox.parse(hp.ProbeParser(), b"small", name="small.txt")).metadata
    assert after["cwd_files"] == ""
    assert after["pid"] == meta["pid"]


def test_a_file_over_max_bytes_is_refused_without_starting_a_worker() -> None:
    limits = SandboxLimits(timeout_s=10.0, memory_mb=200, max_bytes=10, max_pages=5)
    with ParserSandbox(limits) as box:
        failure = failed(box.parse(hp.ProbeParser(), b"x" * 11, name="big.txt"), "limit")
        assert "11 bytes" in failure.detail
        assert box.worker_pids() == ()
        assert parsed(box.parse(hp.ProbeParser(), b"x" * 10, name="fits.txt")).metadata["size"] == "10"


# -- typed failures that keep the worker -----------------------------------------------------------
@pytest.mark.parametrize(
    ("parser", "reason", "words"),
    [
        (hp.InvalidParser(), "invalid", "bad magic number 0xdeadbeef"),
        (hp.OverLimitParser(), "limit", "9001 pages"),
        (hp.TooManyPagesParser(), "limit", "21 pages, more than the limit of 20"),
        (hp.RaisingParser(), "crash", "HostileError: the xref table points at itself"),
        (hp.WrongResultParser(), "crash", "returned str, not a ParsedDocument"),
        (hp.MalformedResultParser(), "crash", "malformed ParsedDocument"),
    ],
    ids=["ParseError", "LimitExceeded", "too-many-pages", "exception", "wrong-type", "malformed"],
)
def test_parser_errors_are_typed_and_the_worker_is_kept(
    sandbox: ParserSandbox, parser: Parser, reason: str, words: str
) -> None:
    pid = probe_pid(sandbox)
    failure = failed(sandbox.parse(parser, b"whatever", name="f.bin"), reason)
    assert words in failure.detail
    assert probe_pid(sandbox) == pid


def test_a_crash_names_the_exception_type_and_where_it_was_raised(sandbox: ParserSandbox) -> None:
    failure = failed(sandbox.parse(hp.RaisingParser(), b"%PDF", name="x.pdf"), "crash")
    assert failure.detail.startswith("tests.engine.documents.hostile_parsers.HostileError:")
    assert "hostile_parsers.py:" in failure.detail


# -- the worker dies or is killed ------------------------------------------------------------------
@pytest.mark.parametrize("parser", [hp.SleepingParser(), hp.SpinningParser()], ids=["sleep", "spin"])
def test_a_hanging_parser_times_out_and_the_worker_is_replaced(parser: Parser) -> None:
    limits = SandboxLimits(timeout_s=1.0, memory_mb=200, max_bytes=1024, max_pages=5)
    with ParserSandbox(limits) as box:
        first = probe_pid(box)
        began = time.monotonic()
        failure = failed(box.parse(parser, b"loop", name="loop.md"), "timeout")
        assert time.monotonic() - began >= 1.0  # it was given its second (a lower bound: load only adds)
        assert "1 s" in failure.detail
        assert is_gone(first)
        second = probe_pid(box)
        assert second != first
        assert box.worker_pids() == (second,)


def test_the_time_allowed_grows_with_the_pages_up_to_its_ceiling() -> None:
    limits = SandboxLimits(
        timeout_s=30, memory_mb=200, max_bytes=1024, max_pages=500, seconds_per_page=0.5, max_timeout_s=200
    )
    assert limits.allowance(0) == 30 and limits.allowance(100) == 80  # a 100-page report: 80 s
    assert limits.allowance(400) == 200  # the ceiling
    assert limits.allowance(10**9) == 200 and limits.longest_s == 200
    flat = SandboxLimits(timeout_s=30, memory_mb=200, max_bytes=1024, max_pages=500)
    assert flat.allowance(300) == 30 and flat.longest_s == 30
    with pytest.raises(ValueError, match="negative"):
        SandboxLimits(timeout_s=1, memory_mb=1, max_bytes=1, max_pages=1, seconds_per_page=-1)


def test_the_time_allowed_grows_with_the_bytes_before_any_page_is_counted() -> None:
    limits = SandboxLimits(
        timeout_s=30,
        memory_mb=200,
        max_bytes=10**9,
        max_pages=500,
        seconds_per_page=0.5,
        max_timeout_s=200,
        seconds_per_mb=2.0,
    )
    assert limits.opening(0) == 30 and limits.opening(20_000_000) == 70  # a 20 MB export: 70 s from the start
    assert limits.allowance(100, 20_000_000) == 120  # and its pages on top
    assert limits.opening(10**9) == 200 and limits.allowance(10**9, 10**9) == 200  # the ceiling holds


def test_a_large_unpaged_file_gets_time_for_its_bytes() -> None:
    # half a second flat, ten more per megabyte: the one-second parse of a 4 MB file is allowed 40.5 s, and the
    # same parse of a few bytes times out (a lower bound: a busy machine only makes it truer)
    limits = SandboxLimits(
        timeout_s=0.5, memory_mb=300, max_bytes=10**8, max_pages=20, seconds_per_mb=10.0, max_timeout_s=60
    )
    with ParserSandbox(limits) as box:
        slow = hp.SlowParser()
        assert parsed(box.parse(slow, b"x" * 4_000_000, name="big.txt")).text == "big.txt"
        failed(box.parse(slow, b"x", name="small.txt"), "timeout")


def test_a_long_paged_document_gets_time_for_its_pages_and_its_progress_is_reported() -> None:
    # one second flat, five more per page: the six-page parse (3 s) is allowed 31 s once its pages are counted
    limits = SandboxLimits(
        timeout_s=1.0, memory_mb=200, max_bytes=1024, max_pages=20, seconds_per_page=5.0, max_timeout_s=60
    )
    seen: list[tuple[int, int]] = []
    with ParserSandbox(limits) as box:
        doc = parsed(
            box.parse(hp.LongPagedParser(), b"long", name="long.txt", on_progress=lambda d, t: seen.append((d, t)))
        )
    assert len(doc.pages) == 6
    assert seen and seen[0] == (0, 6) and seen[-1] == (6, 6)
    assert [d for d, _t in seen] == sorted(d for d, _t in seen)


def test_a_parser_claiming_endless_pages_earns_no_more_than_the_ceiling() -> None:
    limits = SandboxLimits(
        timeout_s=1.0, memory_mb=200, max_bytes=1024, max_pages=20, seconds_per_page=5.0, max_timeout_s=2.0
    )
    with ParserSandbox(limits) as box:
        failure = failed(box.parse(hp.PageLiarParser(), b"liar", name="liar.txt"), "timeout")
    assert "within 2 s" in failure.detail  # 20 pages at most count (101 s), and the ceiling is 2 s


@linux_only
def test_unbounded_allocation_is_a_memory_failure(sandbox: ParserSandbox) -> None:
    failure = failed(sandbox.parse(hp.HungryParser(), b"bomb", name="bomb.pdf"), "memory")
    assert "200 MB" in failure.detail
    assert probe_pid(sandbox) > 0  # a fresh worker takes the next file


@linux_only
def test_a_file_too_big_for_the_worker_memory_is_a_memory_failure() -> None:
    limits = SandboxLimits(timeout_s=10.0, memory_mb=64, max_bytes=100 * 1024 * 1024, max_pages=5)
    with ParserSandbox(limits) as box:
        # The worker cannot even read it into memory: it reports by exit status.
        failure = failed(box.parse(hp.ProbeParser(), bytes(60 * 1024 * 1024), name="huge"), "memory")
        assert "64 MB" in failure.detail
        assert "exit status 86" in failure.detail
        assert parsed(box.parse(hp.ProbeParser(), b"small", name="small")).text == "5 bytes"


def test_a_native_allocation_failure_is_a_memory_failure(sandbox: ParserSandbox) -> None:
    failure = failed(sandbox.parse(hp.NativeOutOfMemoryParser(), b"", name="x.pdf"), "memory")
    assert "SIGABRT" in failure.detail


@pytest.mark.parametrize(
    ("parser", "words"),
    [
        (hp.AbortingParser(), "signal SIGABRT"),
        (hp.SegfaultingParser(), "signal SIGSEGV"),
        (hp.ExitingParser(), "exit status 7"),
        (hp.SystemExitParser(), "SystemExit: 3"),
    ],
    ids=["abort", "segfault", "os._exit", "sys.exit"],
)
def test_a_dying_parser_is_a_crash_and_the_worker_is_replaced(
    sandbox: ParserSandbox, parser: Parser, words: str
) -> None:
    pid = probe_pid(sandbox)
    failure = failed(sandbox.parse(parser, b"boom", name="boom.pdf"), "crash")
    assert words in failure.detail
    if "signal" in words:
        assert "Fatal Python error" in failure.detail  # the worker's last words on stderr
    assert is_gone(pid)
    assert probe_pid(sandbox) not in (pid, 0)


def test_a_parser_that_cannot_be_loaded_in_the_worker_is_a_crash(sandbox: ParserSandbox) -> None:
    class LocalParser(hp.ProbeParser):
        """Defined inside a function: the worker cannot import it."""

    ghost = type("GhostParser", (hp.ProbeParser,), {"__module__": "tests.engine.documents.no_such"})
    for parser in (LocalParser(), ghost(), hp.NeedsConfigParser({"text": "configured"})):
        failure = failed(sandbox.parse(parser, b"data", name="a.txt"), "crash")
        assert "cannot be loaded in the sandbox" in failure.detail
        assert type(parser).__qualname__ in failure.detail
    assert parsed(sandbox.parse(hp.ProbeParser(), b"data", name="a.txt")).text == "4 bytes"


def test_output_on_stdout_and_stderr_does_not_disturb_the_protocol(sandbox: ParserSandbox) -> None:
    pid = probe_pid(sandbox)
    assert parsed(sandbox.parse(hp.NoisyParser(), b"", name="n.txt")).text == "survived the noise"
    assert probe_pid(sandbox) == pid


def test_a_parser_that_leaves_threads_running_gets_its_worker_retired(
    sandbox: ParserSandbox,
) -> None:
    result = parsed(sandbox.parse(hp.ThreadLeavingParser(), b"", name="t.txt"))
    pid = int(result.metadata["pid"])
    assert is_gone(pid)
    assert probe_pid(sandbox) != pid


def test_a_failure_in_a_used_worker_is_confirmed_in_a_fresh_one(sandbox: ParserSandbox) -> None:
    used = probe_pid(sandbox)
    # Dies only where another file was parsed before; the retry on a fresh worker succeeds.
    result = parsed(sandbox.parse(hp.StaleStateParser(), b"", name="s.txt"))
    assert result.text == "fresh"
    assert int(result.metadata["pid"]) != used
    assert is_gone(used)


# -- reuse, concurrency, shutdown ------------------------------------------------------------------
def test_many_files_reuse_one_worker() -> None:
    """What a start-up costs is the benchmark's; here: fifty files, one worker process, started once."""
    with ParserSandbox(LIMITS) as box:
        first = probe_pid(box)  # includes starting the worker
        pids = {probe_pid(box) for _ in range(50)}
    assert pids == {first}


def test_concurrent_parses_run_in_parallel_workers_and_extra_calls_wait(tmp_path: Path) -> None:
    """Two workers: four parses at once run two by two.  Each parse waits until two are in flight together (they
    would wait in vain one at a time) and notes the most it ever saw in flight (a third would show)."""
    gathering = tmp_path / "in-flight"
    gathering.mkdir()
    with ParserSandbox(LIMITS, workers=2) as box:
        results: list[ParsedDocument | ParseFailure] = []
        lock = threading.Lock()

        def work(name: str) -> None:
            result = box.parse(hp.GatheringParser(), str(gathering).encode(), name=name)
            with lock:
                results.append(result)

        threads = [threading.Thread(target=work, args=(f"2-f{i}",)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(box.worker_pids()) == 2
    docs = [parsed(r) for r in results]
    assert [d.text for d in docs] == ["together"] * 4  # two ran at once, every time
    assert {d.metadata["most"] for d in docs} == {"2"}  # never three: the extra calls waited for a worker
    assert len({d.metadata["pid"] for d in docs}) == 2


def test_close_kills_every_worker_and_is_idempotent() -> None:
    box = ParserSandbox(LIMITS, workers=2)
    threads = [
        threading.Thread(target=box.parse, args=(hp.NappingParser(), b""), kwargs={"name": "x"}) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    pids = box.worker_pids()
    assert len(pids) == 2
    box.close()
    assert all(is_gone(pid) for pid in pids)
    assert box.worker_pids() == ()
    box.close()
    with pytest.raises(RuntimeError, match="closed"):
        box.parse(hp.ProbeParser(), b"", name="late.txt")


def test_close_during_a_parse_kills_the_busy_worker() -> None:
    box = ParserSandbox(SandboxLimits(timeout_s=60, memory_mb=200, max_bytes=1024, max_pages=5))
    pid = probe_pid(box)
    outcome: list[BaseException] = []

    def hang() -> None:
        try:
            box.parse(hp.SleepingParser(), b"", name="hang.txt")
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=hang)
    thread.start()
    time.sleep(0.3)
    box.close()
    thread.join(timeout=60)
    assert not thread.is_alive()  # close() did not wait for the parse to end on its own (it never would)
    assert is_gone(pid)
    assert len(outcome) == 1 and isinstance(outcome[0], RuntimeError)


def test_a_worker_that_cannot_start_is_an_environment_problem(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = [
        sys.executable,
        "-c",
        "import sys; sys.stderr.write('no engine here\\n'); sys.exit(5)",
    ]
    monkeypatch.setattr(sandbox_module, "worker_command", lambda: broken)
    with ParserSandbox(LIMITS) as box:
        with pytest.raises(EnvironmentProblem, match="no engine here"):
            box.parse(hp.ProbeParser(), b"data", name="a.txt")
        assert box.worker_pids() == ()
