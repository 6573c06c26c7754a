"""Process wiring shared by the GUI and ``cairn serve``: open the vault with the app's plugins, start the endpoint."""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable
from pathlib import Path

from app.logs import SECRETS, setup_logging
from app.plugins import build_plugin_manager
from engine import Vault, paths
from engine.api.server import EndpointServer
from engine.doctor import READ_ONLY_FIX, inspect_vault_dir, vault_dir_problem
from engine.errors import UserError

log = logging.getLogger(__name__)

#: What an OS error opening a vault means when it is about the folder, not a bug: no right to write, a read-only
#: file system, a path through a file.
_FOLDER_ERRORS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR}


def open_vault(
    vault_dir: Path | None,
    *,
    verbose: bool = False,
    start_workers: bool = True,
    set_up_logging: bool = True,
    on_created: Callable[[Path], None] | None = None,
) -> Vault:
    """Set up logging in the vault's ``logs/`` (unless the caller has: ``set_up_logging=False``) and open the
    vault with the built-in and installed plugins.

    The path is judged first (:func:`engine.doctor.vault_dir_problem`): a file, a folder of other files or a
    read-only folder is refused with its fix before anything is written there.  A missing or empty folder becomes a
    new vault, and ``on_created`` is told, so that a mistyped ``--vault`` is noticed rather than silently served.

    Raises:
        UserError: the path cannot be a vault (what is wrong and the fix), or the folder cannot be written.
        VaultError: anything :meth:`engine.Vault.open` raises (locked, damaged, too new…).
    """
    root = paths.resolve_vault_dir(vault_dir)
    found = inspect_vault_dir(root)
    problem = vault_dir_problem(found, create=True)
    if problem is not None:
        raise problem
    try:
        if set_up_logging:
            setup_logging(paths.VaultPaths(root).logs, verbose=verbose)
        vault = Vault.open(root, plugins=build_plugin_manager(), start_workers=start_workers)
    except OSError as exc:
        if exc.errno not in _FOLDER_ERRORS:
            raise
        where = exc.filename or root
        raise UserError(
            f"Cairn cannot write to the vault folder {root} ({exc.strerror}: {where}).", fix=READ_ONLY_FIX
        ) from exc
    try:
        vault.vault_id()  # recorded at the first open, so that `cairn doctor` can tell this vault's endpoint
        SECRETS.add(vault.endpoint_token())
    except BaseException:
        vault.close()
        raise
    if found.state != "vault":
        log.info("no vault was at %s: created a new one", root)
        if on_created is not None:
            on_created(root)
    return vault


def make_endpoint(vault: Vault, port: int | None = None) -> EndpointServer:
    """Bind the endpoint for ``vault`` on loopback (``port`` or the configured one); not yet serving."""
    from engine.api.app import create_app

    token = vault.endpoint_token()
    chosen = vault.settings.endpoint.port if port is None else port
    return EndpointServer(lambda actual: create_app(vault, token=token, port=actual), chosen)
