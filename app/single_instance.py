"""One window per vault: a second launch brings the running window forward instead of failing on the vault's lock.

The running app listens on a local socket private to the user (a path in the user's runtime folder, named after the
vault's folder, mode 0600 through Qt's user-only option).  A second ``cairn`` on the same vault connects first,
before it opens anything: if a Cairn answers, it asks it to show its window and exits 0; if nothing answers (no
Cairn, or a socket file a killed Cairn left), it starts as usual and the new listener replaces the stale file.

The only message is ``show``; the socket carries nothing of the vault.  This module has no Qt in it: the second
launch asks before it loads anything heavy.  The listener is :class:`app.desktop.InstanceListener`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

SHOW = b"show\n"
ACK = b"ok\n"
#: How long a second launch waits for the running app's answer.
ANSWER_TIMEOUT_S = 3.0


def socket_path(root: Path) -> Path:
    """Where the app serving the vault in ``root`` listens (short enough for a Unix socket's 108 bytes)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    digest = hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:16]
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(runtime) / f"cairn-{uid}-{digest}.sock"


def bring_forward(root: Path, *, timeout: float = ANSWER_TIMEOUT_S) -> bool:
    """Ask a running Cairn on this vault to show its window; True when one did."""
    path = socket_path(root)
    if os.name == "nt" or not path.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(timeout)
            client.connect(str(path))
            client.sendall(SHOW)
            return client.recv(16).startswith(ACK.strip())
    except OSError:
        return False  # nobody listens (a file a killed Cairn left): this launch starts the app
