"""The guard against PySide6 6.12 dropping references to None on Python 3.11 (ui.none_guard)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ui  # noqa: F401 - importing ui installs the guard
from ui.none_guard import GUARDED, guard_none

pytestmark = pytest.mark.gui

REPO = Path(__file__).resolve().parents[2]
NEEDS_GUARD = sys.version_info < (3, 12)
CALLS = 300_000  # more void Qt calls than None has references in a fresh interpreter

SCRIPT = f"""
import sys
if sys.argv[1] == "guarded":
    import ui
from PySide6.QtWidgets import QApplication, QLabel
app = QApplication([])
label = QLabel()
for _ in range({CALLS}):
    label.setText("x")  # returns None
print("survived")
"""


def _run(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode],
        cwd=REPO,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": ""},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(not NEEDS_GUARD, reason="None is immortal from Python 3.12 on")
def test_the_guard_is_installed_when_ui_is_imported() -> None:
    # Above GUARDED rather than RESERVE: the GUI tests that ran before this one have lost references since.
    assert sys.getrefcount(None) > GUARDED
    assert sys.getrefcount(True) > GUARDED and sys.getrefcount(False) > GUARDED
    assert guard_none() is False  # already done: a second call changes nothing


@pytest.mark.skipif(not NEEDS_GUARD, reason="None is immortal from Python 3.12 on")
def test_many_void_qt_calls_are_survived_only_with_the_guard() -> None:
    guarded = _run("guarded")
    assert guarded.returncode == 0 and guarded.stdout.strip() == "survived"
    bare = _run("bare")
    # When this fails, the PySide6 in use no longer loses references to None: ui.none_guard can go.
    assert bare.returncode != 0 and "none_dealloc" in bare.stderr
