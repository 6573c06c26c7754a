"""What every view is given: the runner, the endpoint's state, and a way to post a status line.

Views receive a :class:`ViewContext` instead of the :class:`engine.Vault` itself, so the only way a
view can reach the engine is through :class:`ui.ops.OpRunner` — off the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtWidgets import QWidget

from ui.ops import OpRunner

FILE_DROPS_PROPERTY = "acceptsFileDrops"
"""A widget with this Qt property set takes dropped files itself; the main window leaves it be."""


@dataclass(frozen=True, slots=True)
class EndpointInfo:
    """The localhost endpoint as this process runs it.

    ``address`` is None when it is not serving; ``problem`` and ``fix`` then say why (port taken,
    turned off).
    """

    address: str | None
    token: str
    problem: str = ""
    fix: str = ""

    @property
    def running(self) -> bool:
        """True when clients can connect."""
        return self.address is not None


@dataclass(frozen=True, slots=True)
class ViewContext:
    """Handed to every view's factory."""

    runner: OpRunner
    endpoint: EndpointInfo
    show_status: Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ViewSpec:
    """One navigation entry: a stable key (saved in QSettings), its label, icon and factory."""

    key: str
    title: str
    icon: str
    factory: Callable[[ViewContext], QWidget]
    tooltip: str = ""
