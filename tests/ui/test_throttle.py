"""Throttle: the first trigger calls at once, a burst collapses into one trailing call."""

from __future__ import annotations

import time

import pytest
from pytestqt.qtbot import QtBot

from ui.throttle import Throttle

pytestmark = pytest.mark.gui


def test_first_trigger_calls_at_once_and_a_burst_costs_one_more_call(qtbot: QtBot) -> None:
    calls: list[float] = []
    throttle = Throttle(150, lambda: calls.append(time.monotonic()))
    throttle.trigger()
    assert len(calls) == 1  # no delay after a quiet period
    for _ in range(50):
        throttle.trigger()
    assert len(calls) == 1
    assert throttle.pending
    qtbot.waitUntil(lambda: len(calls) == 2, timeout=60_000)
    assert calls[1] - calls[0] >= 0.14  # never closer than the interval (a lower bound: load only adds to it)
    qtbot.wait(300)
    assert len(calls) == 2  # the burst did not leave more calls behind
    assert not throttle.pending


def test_cancel_drops_the_trailing_call(qtbot: QtBot) -> None:
    calls: list[int] = []
    throttle = Throttle(100, lambda: calls.append(1))
    throttle.trigger()
    throttle.trigger()
    throttle.cancel()
    qtbot.wait(250)
    assert calls == [1]
