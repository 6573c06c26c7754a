"""Screenshots of every view of the real main window on the demo vault (``make screenshots``).

    python -m bench.screenshots [--out screenshots/] [--demo DIR] [--rebuild] [--size 1280x820]
                                [--readme docs/screenshots]

Builds (or reuses) the demo vault of :mod:`bench.demo_vault`, copies it to a temporary folder (so looking at it
changes nothing, and every run starts from the same state), opens it as the app does — plugins, background
workers, the localhost endpoint (on its configured port, or a free one when that is taken) — and shows the main
window offscreen.  Each view gets something meaningful selected (see :mod:`bench.desktop.capture`) and is saved as
``NN-<view>.png``.  ``--readme DIR`` also writes two small copies (Memories and Ask, 256 colours, under 200 KB
each) for the README.  The UI state (window geometry, last view) goes to the temporary folder too.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench.common import DEFAULT_LOCOMO, ROOT, locomo_files
from bench.demo_vault import DEFAULT_OUT, DemoVault, ensure
from engine.api.server import EndpointServer
from engine.errors import EnvironmentProblem
from engine.vault import Vault

DEFAULT_SHOTS = ROOT / "screenshots"


def _copy_demo(demo: DemoVault, into: Path) -> Path:
    target = into / "vault"
    shutil.copytree(demo.vault, target, ignore=shutil.ignore_patterns("vault.lock", "logs", "backups"))
    return target


def _serve(vault: Vault) -> EndpointServer:
    """The endpoint on the configured port, as the app serves it (so the Overview's check and the status bar
    agree); on a free port when that one is taken (a Cairn of your own running, say)."""
    from app.runtime import make_endpoint

    try:
        server = make_endpoint(vault)
        server.start()
        return server
    except EnvironmentProblem:
        server = make_endpoint(vault, 0)
        server.start()
        return server


def _log(line: str) -> None:
    print(line, file=sys.stderr)


def capture(demo: DemoVault, out: Path, size: tuple[int, int], readme: Path | None) -> list[Path]:
    """Open a copy of the demo vault in the real window and save one PNG per view; returns the files written."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from app.composition import build_main_window
    from app.plugins import build_plugin_manager
    from bench.desktop.capture import Scene, capture_views, offscreen_session, pump
    from engine.vault import Vault

    unused = [p for p in locomo_files(Path(demo.data)) if p.name not in demo.conversations]
    scene = Scene(more_conversations=unused[0] if unused else None)
    with tempfile.TemporaryDirectory(prefix="cairn-demo-") as tmp, offscreen_session(Path(tmp) / "ui-state"):
        vault = Vault.open(_copy_demo(demo, Path(tmp)), plugins=build_plugin_manager())
        endpoint = _serve(vault)
        window, runner = build_main_window(vault, endpoint_address=endpoint.address, token=vault.endpoint_token())
        try:
            window.resize(*size)
            window.show()
            pump(lambda: [r.state for r in vault.watcher.status()] == ["ok"])  # the watched folder scanned
            return capture_views(window, vault, out, scene=scene, small=readme, log=_log)
        finally:
            window.set_close_to_tray(False)
            window.close()
            runner.shutdown()
            endpoint.stop()
            vault.close()
            window.deleteLater()


def _size(text: str) -> tuple[int, int]:
    width, _, height = text.partition("x")
    return int(width), int(height)


def main(argv: Sequence[str] | None = None) -> int:
    """Take the screenshots."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DEFAULT_SHOTS, help="where the PNGs go")
    parser.add_argument("--demo", type=Path, default=DEFAULT_OUT, help="the demo vault's folder")
    parser.add_argument("--data", type=Path, default=DEFAULT_LOCOMO, help="LoCoMo data for a new demo vault")
    parser.add_argument("--rebuild", action="store_true", help="build the demo vault again")
    parser.add_argument("--size", type=_size, default=(1280, 820), help="window size, like 1280x820")
    parser.add_argument("--readme", type=Path, default=None, help="also write the README's two small copies here")
    args = parser.parse_args(argv)
    demo = ensure(args.demo.resolve(), args.data, force=args.rebuild)
    out = args.out.resolve()
    readme = args.readme.resolve() if args.readme else None
    written = capture(demo, out, args.size, readme)
    print(f"{sum(p.parent == out for p in written)} screenshots written to {args.out}")
    if readme is not None:
        print(f"{sum(p.parent == readme for p in written)} small copies for the README written to {args.readme}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
