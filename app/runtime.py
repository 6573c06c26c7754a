"""Process wiring shared by the GUI and ``cairn serve``: open the vault with the app's plugins, start the endpoint."""

from __future__ import annotations

import logging
from pathlib import Path

from app.logs import SECRETS, setup_logging
from app.plugins import build_plugin_manager
from engine import Vault, paths
from engine.api.server import EndpointServer

log = logging.getLogger(__name__)


def open_vault(
    vault_dir: Path | None, *, verbose: bool = False, start_workers: bool = True, set_up_logging: bool = True
) -> Vault:
    """Set up logging in the vault's ``logs/`` (unless the caller has: ``set_up_logging=False``) and open the
    vault with the built-in and installed plugins."""
    root = paths.resolve_vault_dir(vault_dir)
    if set_up_logging:
        setup_logging(paths.VaultPaths(root).logs, verbose=verbose)
    vault = Vault.open(root, plugins=build_plugin_manager(), start_workers=start_workers)
    SECRETS.add(vault.endpoint_token())
    return vault


def make_endpoint(vault: Vault, port: int | None = None) -> EndpointServer:
    """Bind the endpoint for ``vault`` on loopback (``port`` or the configured one); not yet serving."""
    from engine.api.app import create_app

    token = vault.endpoint_token()
    chosen = vault.settings.endpoint.port if port is None else port
    return EndpointServer(lambda actual: create_app(vault, token=token, port=actual), chosen)
