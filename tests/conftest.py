"""Shared fixtures: an isolated CAIRN_HOME per test, offline settings, and a real vault in a temp folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.fakes.ollama import fake_ollama_fixture  # noqa: F401 - provides the `fake_ollama` fixture
from tests.fakes.openai_server import fake_openai_fixture  # noqa: F401 - provides the `fake_openai` fixture

if TYPE_CHECKING:
    from engine import Settings, Vault

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["CAIRN_TESTING"] = "1"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own CAIRN_HOME so nothing touches the real data folder, and no CAIRN_* leaks in."""
    for name in list(os.environ):
        if name.startswith("CAIRN_") and name not in ("CAIRN_TESTING",):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("cairn-home")
    monkeypatch.setenv("CAIRN_HOME", str(home))
    # The CLI's tables and notes wrap at the console width, and temp paths differ in length from one machine (or
    # test worker) to the next: tests read them unwrapped.  Set per test, so pytest's own output keeps its width.
    monkeypatch.setenv("COLUMNS", "1000")
    return home


@pytest.fixture
def offline_settings() -> Settings:
    """Settings that never reach for a model: rule path and hashing embedder."""
    from engine.config import Settings

    return Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})


@pytest.fixture
def vault(tmp_path: Path, offline_settings: Settings) -> Iterator[Vault]:
    """A real vault in a temp folder with offline settings."""
    from engine.vault import Vault

    v = Vault.open(tmp_path / "vault", settings=offline_settings)
    try:
        yield v
    finally:
        v.close()
