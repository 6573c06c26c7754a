"""UI-only state kept between runs (window geometry, the last view): QSettings, not the engine.

The engine's ``settings.toml`` describes the vault; how big the window was is a fact about this
desktop, so it lives with Qt.  Always the INI format, on every OS, so the file is readable and tests
can redirect it with ``QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, folder)``.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings

ORGANIZATION = "Cairn"
APPLICATION = "Cairn"


def ui_settings() -> QSettings:
    """The UI state file (``<config folder>/Cairn/Cairn.ini``)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)
