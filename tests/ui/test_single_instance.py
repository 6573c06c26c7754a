"""A second launch on the same vault brings the running window forward (over the real local socket), a socket file a
killed Cairn left is taken over, and another vault's launch is not answered."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.desktop import InstanceListener, bring_to_front
from app.single_instance import bring_forward, socket_path
from engine import Vault
from ui.main_window import MainWindow
from ui.ops import OpRunner

pytestmark = [pytest.mark.gui, pytest.mark.skipif(os.name == "nt", reason="Unix sockets")]

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def ask_in_a_thread(root: Path) -> dict[str, bool]:
    """The second launch's question, asked while this (GUI) thread keeps serving events."""
    answer: dict[str, bool] = {}
    threading.Thread(target=lambda: answer.setdefault("shown", bring_forward(root)), daemon=True).start()
    return answer


def test_a_second_launch_brings_the_window_forward(
    vault: Vault, window_for: WindowFor, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    window, _runner = window_for(vault)
    listener = InstanceListener(vault.paths.root)
    listener.show_requested.connect(lambda: bring_to_front(window))
    try:
        assert listener.listening
        path = socket_path(vault.paths.root)
        assert path.exists() and (path.stat().st_mode & 0o077) == 0  # the user's alone
        window.hide()  # in the tray, say
        answer = ask_in_a_thread(vault.paths.root)
        qtbot.waitUntil(lambda: "shown" in answer, timeout=60_000)
        assert answer["shown"] is True
        assert window.isVisible()
        assert bring_forward(tmp_path / "another-vault") is False  # nothing listens for that vault
    finally:
        listener.close()
    assert bring_forward(vault.paths.root) is False  # once it stopped, a launch opens the vault itself


def test_a_socket_a_killed_cairn_left_is_taken_over(
    vault: Vault, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    path = socket_path(vault.paths.root)
    path.write_text("")  # what a killed process leaves: a file nobody listens on
    assert bring_forward(vault.paths.root) is False
    listener = InstanceListener(vault.paths.root)
    shown: list[bool] = []
    listener.show_requested.connect(lambda: shown.append(True))
    try:
        assert listener.listening
        answer = ask_in_a_thread(vault.paths.root)
        qtbot.waitUntil(lambda: "shown" in answer, timeout=60_000)
        assert answer["shown"] is True and shown == [True]
    finally:
        listener.close()
