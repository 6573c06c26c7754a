"""What every view is given: the runner, the endpoint's state, and a way to post a status line.

Views receive a :class:`ViewContext` instead of the :class:`engine.Vault` itself, so the only way a
view can reach the engine is through :class:`ui.ops.OpRunner` — off the GUI thread.

The endpoint starts after the window is first painted (it takes longer to load than the window), so
its state changes while the window is up: views follow :class:`EndpointState` rather than keep a copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from ui.ops import OpRunner

FILE_DROPS_PROPERTY = "acceptsFileDrops"
"""A widget with this Qt property set takes dropped files itself; the main window leaves it be."""


@dataclass(frozen=True, slots=True)
class EndpointInfo:
    """The localhost endpoint as this process runs it.

    ``address`` is None when it is not serving; ``problem`` and ``fix`` then say why (port taken,
    turned off), unless it is ``starting``: still loading, its address or problem yet to come.
    ``held_by`` names who holds the port when that is why ("another Cairn vault", "another
    program"): the status bar says it rather than a bare "not serving", since a client finding
    something on the port would otherwise take it for this vault's endpoint.
    """

    address: str | None
    token: str
    problem: str = ""
    fix: str = ""
    starting: bool = False
    held_by: str = ""

    @property
    def running(self) -> bool:
        """True when clients can connect."""
        return self.address is not None

    @property
    def address_text(self) -> str:
        """Where it serves, in the person's words: the address, or why there is none (not a bare "off")."""
        if self.address is not None:
            return self.address
        if self.starting:
            return "Starting…"
        return self.problem or "Not serving"

    @property
    def status_text(self) -> str:
        """The status bar's short form."""
        if self.address is not None:
            return f"Endpoint {self.address}"
        if self.starting:
            return "Endpoint starting…"
        return f"Endpoint port held by {self.held_by}" if self.held_by else "Endpoint not serving"


class EndpointState(QObject):
    """The endpoint's current :class:`EndpointInfo`, with a signal when it changes (GUI thread only).

    The window owns one; the status bar, the Overview's endpoint panel and Settings show ``info`` and
    follow ``changed``, so "Starting…" turns into the address (or the problem) everywhere at once.
    """

    changed = Signal(object)
    """The new :class:`EndpointInfo`."""

    def __init__(self, info: EndpointInfo, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._info = info

    @property
    def info(self) -> EndpointInfo:
        """What is known now."""
        return self._info

    def set_info(self, info: EndpointInfo) -> None:
        """Replace the state and tell the widgets showing it."""
        if info == self._info:
            return
        self._info = info
        self.changed.emit(info)


@dataclass(frozen=True, slots=True)
class ViewContext:
    """Handed to every view's factory."""

    runner: OpRunner
    endpoint: EndpointState
    show_status: Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ViewSpec:
    """One navigation entry: a stable key (saved in QSettings), its label, icon and factory."""

    key: str
    title: str
    icon: str
    factory: Callable[[ViewContext], QWidget]
    tooltip: str = ""
