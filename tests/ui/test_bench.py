"""The GUI benchmarks: scrolling, stalls while events arrive over the endpoint, start-up to first paint."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from bench.desktop.measure import scroll_benchmark
from engine import Settings, Vault
from ui.main_window import MainWindow
from ui.models.facts import PAGE_SIZE
from ui.ops import OpRunner
from ui.views.memories import MemoriesView

pytestmark = pytest.mark.gui

FACTS = PAGE_SIZE + 40  # two pages


def test_scroll_benchmark_scrolls_to_the_end_fetching_each_page_once(
    vault: Vault,
    window_for: Callable[[Vault], tuple[MainWindow, OpRunner]],
    qtbot: QtBot,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for n in range(FACTS):
        vault.facts.add(f"Person {n % 9}", f"custom_habit_{n}", f"habit {n}")
    window, _runner = window_for(vault)
    stall = scroll_benchmark(window, vault, steps=30)
    view = window.view("memories")
    assert isinstance(view, MemoriesView)
    assert view.model.rowCount() == FACTS
    assert sorted(view.model.requested_pages) == [0, 1]  # each page once, however fast it went
    last = view.model.fact_id_at(FACTS - 1)
    assert view.model.cached_fact(last) is not None
    bar = view.table.verticalScrollBar()
    assert bar.value() == bar.maximum()
    assert stall >= 0  # measured and reported; how long is the benchmark's business, not the suite's
    assert f"{FACTS:,} facts in {vault.paths.root}: longest stall" in capsys.readouterr().out


def test_ingest_stall_benchmark_posts_over_the_real_endpoint_and_times_the_gui(
    vault: Vault,
    window_for: Callable[[Vault], tuple[MainWindow, OpRunner]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    from app.runtime import make_endpoint
    from bench.desktop.measure import ingest_stall_benchmark

    server = make_endpoint(vault, 0)
    server.start()
    try:
        window, _runner = window_for(vault)
        report = ingest_stall_benchmark(window, server.address, vault.endpoint_token(), rate=40, seconds=1.0)
    finally:
        server.stop()
    assert report.sent == 40 and report.acknowledged == 40
    assert vault.counts().events == 40  # they really arrived
    assert report.ticks > 0 and 0 <= report.p99_ms <= report.longest_ms  # measured; the figures are the bench's
    assert "40/40 events acknowledged" in capsys.readouterr().out


def test_startup_benchmark_times_a_fresh_process_to_its_first_paint(
    tmp_path: Path, offline_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.desktop.measure import startup_benchmark

    folder = tmp_path / "vault"
    with Vault.open(folder, settings=offline_settings) as v:
        v.update_settings({"llm.provider": "simple", "embedder.provider": "hashing"})
    report = startup_benchmark(folder, runs=1)
    assert len(report.first_paint_ms) == 1
    assert 50 < report.first_paint_ms[0] <= report.content_ms[0] < 120_000
    assert "start-up to first paint" in capsys.readouterr().out


CRASH_ONCE = """
import os, signal, sys, time
from pathlib import Path

flag = Path(sys.argv[sys.argv.index("--vault") + 1]) / "{name}"
if not flag.exists():
    flag.write_text("")
    sys.stderr.write("Fatal Python error: Aborted\\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGABRT)
print("FIRST_PAINT", time.time() + 0.1)
"""


def test_startup_benchmark_runs_a_start_killed_before_painting_once_more_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.desktop.measure import startup_benchmark

    (tmp_path / "vault").mkdir()
    script = tmp_path / "child.py"
    script.write_text(CRASH_ONCE.format(name="crashed-once"))
    report = startup_benchmark(tmp_path / "vault", runs=1, child=(str(script),))
    assert len(report.first_paint_ms) == 1
    assert len(report.crashes) == 1 and "signal 6" in report.crashes[0] and "Fatal Python error" in report.crashes[0]
    assert "killed by a signal before painting and run again" in capsys.readouterr().out


def test_startup_benchmark_fails_with_the_fatal_line_when_a_start_dies_twice(tmp_path: Path) -> None:
    from bench.desktop.measure import startup_benchmark

    (tmp_path / "vault").mkdir()
    script = tmp_path / "child.py"
    script.write_text(
        "import os, signal, sys\nsys.stderr.write('Fatal Python error: Aborted\\n' + 'x' * 5000)\n"
        "sys.stderr.flush()\nos.kill(os.getpid(), signal.SIGABRT)\n"
    )
    with pytest.raises(RuntimeError, match=r"failed \(-6\): Fatal Python error: Aborted"):
        startup_benchmark(tmp_path / "vault", runs=1, child=(str(script),))
