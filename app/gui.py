"""Start-up and shut-down of the desktop app: display, vault, QApplication, window, endpoint, tray.

Start-up is ordered for the time to the window's first paint, which on a large vault is mostly the
vault's integrity check and loading code:

0. Python's automatic garbage collection is off (:func:`collection_paused`): loading the code makes
   some hundred thousand objects that live as long as the process, and collections that traverse
   them again and again find next to no garbage.  Once the window has been painted, what start-up
   made is set aside for good (``gc.freeze``) and the GUI-thread collector takes over
   (:mod:`ui.garbage`).
1. Once the engine and PySide6's package (shiboken, whose start must not race another thread) are
   loaded, the vault opens on a thread of its own (:class:`VaultOpening`).  Most
   of that time is SQLite's ``PRAGMA quick_check`` over the whole file, C code that releases the
   interpreter lock, so meanwhile the GUI thread loads Qt and the interface (:mod:`app.desktop`,
   imported only then) and creates the QApplication.  The check is never skipped.
2. The window is built and shown meanwhile too, on the vault still opening (its first queries wait
   for it on the runner's threads): the first paint does not wait for the check.  A vault that
   cannot be opened is explained over the window, which then closes.
3. The endpoint (FastAPI, uvicorn, the MCP SDK: slower to load than everything before) starts on a
   worker thread once the vault is open and the window has been painted
   (:class:`app.desktop.BackgroundEndpoint`); the window says "Endpoint starting…" until its
   address, or its problem and fix, arrives.

This module therefore imports neither Qt nor the interface at the top.  The composition of the
window is :func:`app.composition.build_main_window`, used by :func:`run_gui` and by the tests, so what the tests
check is what people run.  Shut-down happens in one order: the window closes and its runner
finishes the operations in flight, the endpoint stops taking requests (or, still starting, is
stopped as soon as it is up), then the vault drains its writer and releases its lock.

Where the desktop has a system tray, a tray icon (:func:`app.desktop.install_tray`) keeps the app
running when the window is closed: the vault keeps learning and the endpoint keeps serving local
chat clients.  "Quit Cairn" in the tray menu ends it.  Without a tray, closing the window quits.
"""

from __future__ import annotations

import functools
import gc
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from app.composition import VaultOpening

if TYPE_CHECKING:
    pass

NO_DISPLAY_MESSAGE = (
    "No display found. Run `cairn serve` for the headless vault and endpoint, or set QT_QPA_PLATFORM=offscreen."
)


def has_display(env: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """False on Linux when Qt would find no display and abort the process instead of raising."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return True
    return any(env.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


@contextmanager
def collection_paused() -> Iterator[None]:
    """Automatic garbage collection off for the start-up (see the module docstring), as it was afterwards.

    Objects set aside by ``gc.freeze`` meanwhile are handed back to the collector at the end, so a
    process that goes on (the tests) can collect them again.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def start_opening(vault_dir: Path | None) -> VaultOpening:
    """Open the vault in ``vault_dir`` as the app does (its plugins, its logging), on a thread of its own.

    The engine is imported here, on the calling thread, before the thread starts: the opening thread
    then goes straight to the integrity check, and the caller's imports run while SQLite checks.
    Logging is set up here too, so that everything logged from now on, on any thread, is in the
    vault's log.
    """
    from app.logs import setup_logging
    from app.runtime import open_vault
    from engine import paths
    from engine.doctor import inspect_vault_dir, vault_dir_problem

    _load_shiboken()
    root = paths.resolve_vault_dir(vault_dir)
    # Nothing is written where no vault can be (a file, someone's folder, a read-only one): opening the vault then
    # fails with what is wrong and the fix, shown in the window's error dialog and on stderr.
    if vault_dir_problem(inspect_vault_dir(root), create=True) is None:
        try:
            setup_logging(paths.VaultPaths(root).logs)
        except OSError:
            pass  # a folder that cannot be written after all: the opening says so
    return VaultOpening(root, functools.partial(open_vault, root, set_up_logging=False))


def _load_shiboken() -> None:
    """Load PySide6's package — shiboken's C module and its import hook — while this is the only thread.

    Importing ``PySide6`` initialises ``shiboken6.Shiboken`` and replaces ``builtins.__import__`` with its own hook.
    Done while the opening thread runs Python code, that initialisation aborted the process once (SIGABRT inside
    ``from shiboken6.Shiboken import *``, the window never shown) in a suite run on a loaded machine.  Done first,
    it takes ~0.13 s that the GUI thread spent anyway; the Qt modules themselves still load while the vault opens.
    """
    import PySide6  # noqa: F401  (imported for its side effect: shiboken initialised before any other thread)


def run_gui(vault_dir: Path | None) -> int:
    """Run the desktop app on the vault in ``vault_dir`` (None: the default); return its status.

    0 after a normal quit, 1 when the vault cannot be opened, 2 when there is no display.
    """
    if not has_display():
        print(NO_DISPLAY_MESSAGE, file=sys.stderr)
        return 2
    from app.single_instance import bring_forward  # before anything opens: the running app holds the vault
    from engine.paths import resolve_vault_dir

    root = resolve_vault_dir(vault_dir)
    if bring_forward(root):
        print(f"Cairn is already running with the vault {root}: its window was brought forward.", file=sys.stderr)
        return 0
    with collection_paused():
        opening = start_opening(vault_dir)
        try:
            from app.desktop import run_desktop  # Qt and the interface load while the vault is checked

            return run_desktop(opening)
        finally:
            opening.abandon()
