"""What start-up and the desktop app share: the app's name, the vault being opened, and the main window's wiring.

:mod:`app.gui` orders start-up (no Qt at the top) and :mod:`app.desktop` runs the Qt side; both use these, so they
live here, below both, and neither module imports the other to reach them.  Like :mod:`app.gui`, this module
imports neither Qt nor the interface at the top: :func:`build_main_window` loads them when called.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine import Vault
    from ui.main_window import MainWindow
    from ui.ops import BugReporter, OpRunner

APP_NAME = "Cairn"


def build_main_window(
    vault: Vault | VaultOpening,
    *,
    endpoint_address: str | None,
    token: str,
    endpoint_problem: str = "",
    endpoint_fix: str = "",
    endpoint_starting: bool = False,
    report_bug: BugReporter | None = None,
) -> tuple[MainWindow, OpRunner]:
    """The main window wired to ``vault`` (open, or still opening) through a new :class:`OpRunner`.

    ``endpoint_starting`` shows the endpoint as starting; :meth:`MainWindow.set_endpoint` shows what
    became of it.  Closing the window shuts the runner down (joining its threads); the caller still
    closes the vault.
    """
    from ui.context import EndpointInfo
    from ui.main_window import MainWindow
    from ui.ops import OpRunner

    if isinstance(vault, VaultOpening):
        runner = OpRunner(vault.future, report_bug=report_bug)
        root = vault.root
    else:
        runner = OpRunner(vault, report_bug=report_bug)
        root = vault.paths.root
    endpoint = EndpointInfo(
        address=endpoint_address, token=token, problem=endpoint_problem, fix=endpoint_fix, starting=endpoint_starting
    )
    window = MainWindow(runner, endpoint=endpoint, title=f"{APP_NAME} — {root}")
    window.closed.connect(runner.shutdown)
    return window, runner


class VaultOpening:
    """A vault being opened on a thread of its own; :meth:`result` waits for it and hands it over.

    Nothing uses the vault before it is open (the window's runner waits for :attr:`future` on its own
    threads), so opening it elsewhere is safe; the gain is that its integrity check (C code, the
    interpreter lock released) runs while the GUI thread loads the interface and builds the window.
    A vault nobody claimed, because start-up failed before the window, is closed by :meth:`abandon`
    so that its lock is released.
    """

    def __init__(self, root: Path, open_vault: Callable[[], Vault]) -> None:
        self.root = root
        """The vault's folder."""
        self._future: Future[Vault] = Future()
        # set once the future's done-callbacks have run: Future.set_result wakes result() before running them, and the
        # runner's subscription to the change feed is one — a change made right after result() could otherwise miss it
        self._settled = threading.Event()
        self._claimed = False
        self._thread = threading.Thread(target=self._open, args=(open_vault,), name="vault-open", daemon=True)
        self._thread.start()

    def _open(self, open_vault: Callable[[], Vault]) -> None:
        try:
            vault = open_vault()
        except BaseException as exc:  # handed to the GUI thread, which reports it as it always did
            self._future.set_exception(exc)
        else:
            self._future.set_result(vault)
        finally:
            self._settled.set()

    @property
    def future(self) -> Future[Vault]:
        """The vault, for code that waits for it elsewhere (the runner's threads); does not claim it."""
        return self._future

    def result(self) -> Vault:
        """The open vault, once it is; raises what opening it raised (a :class:`VaultError`: locked, damaged…)."""
        self._claimed = True
        vault = self._future.result()
        self._settled.wait()
        return vault

    def abandon(self) -> None:
        """Close the vault if it was never claimed (waiting for the opening to finish); else do nothing."""
        if self._claimed:
            return
        self._claimed = True
        try:
            vault = self._future.result()
        except BaseException:  # it never opened: nothing to close, and the caller is failing already
            return
        vault.close()
