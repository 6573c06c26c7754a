"""An event sent to the real endpoint over loopback HTTP shows up in the open Memories view by itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
from pytestqt.qtbot import QtBot

from app.runtime import make_endpoint
from engine import Vault
from engine.api.server import EndpointServer
from ui.main_window import MainWindow
from ui.models.facts import VALUE
from ui.ops import OpRunner
from ui.views.memories import MemoriesView

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


@pytest.fixture
def endpoint(vault: Vault) -> Iterator[EndpointServer]:
    """The vault's endpoint, serving on a free loopback port."""
    server = make_endpoint(vault, 0)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _values(view: MemoriesView) -> list[str]:
    model = view.model
    return [str(model.index(row, VALUE).data()) for row in range(model.rowCount())]


def test_an_event_posted_to_the_endpoint_appears_in_memories_without_a_reload(
    vault: Vault, endpoint: EndpointServer, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, _runner = window_for(vault)
    window.show()
    window.show_view("memories")
    view = window.view("memories")
    assert isinstance(view, MemoriesView)
    qtbot.waitUntil(lambda: view.model.loaded and not view.model.is_loading(), timeout=60_000)
    assert view.model.rowCount() == 0

    port = endpoint.port
    with httpx.Client(trust_env=False, timeout=10) as http:
        response = http.post(
            f"http://127.0.0.1:{port}/v6/ingest",
            json={"conversation_id": "phone", "content": "I live in Lisbon."},
            headers={
                "Authorization": f"Bearer {vault.endpoint_token()}",
                "Host": f"127.0.0.1:{port}",
            },
        )
    assert response.status_code == 202, response.text
    event_id = response.json()["event_id"]
    assert vault.jobs.wait_idle(120)  # enrichment made the fact
    qtbot.waitUntil(lambda: "Lisbon" in _values(view), timeout=60_000)
    fact = view.model.fact_at(_values(view).index("Lisbon"))
    assert fact is not None and fact.predicate == "lives_in"
    assert fact.event_id == event_id  # learned from the turn the endpoint acknowledged
    assert "1 memory" in view.count_label.text()
