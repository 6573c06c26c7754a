"""Logging set-up: a rotating file in the vault's ``logs/`` folder, scrubbed of secrets.

Log lines describe what happened (counts, ids, timings, error types), never memory content.  As a second line of
defence, a filter removes anything that looks like the endpoint token or an ``Authorization`` header.
"""

from __future__ import annotations

import logging
import logging.handlers
import re
from pathlib import Path

from engine.permissions import private_dir, private_file

_BEARER = re.compile(r"(?i)(authorization:?\s*(bearer\s+)?|bearer\s+)\S+")


class SecretFilter(logging.Filter):
    """Redacts the given secrets and any bearer credential from every record."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        super().__init__()
        self._secrets = [s for s in (secrets or []) if s]

    def add(self, secret: str) -> None:
        """Also redact ``secret`` from now on."""
        if secret and secret not in self._secrets:
            self._secrets.append(secret)

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's message with secrets removed."""
        message = record.getMessage()
        cleaned = _BEARER.sub(r"\1[redacted]", message)
        for secret in self._secrets:
            cleaned = cleaned.replace(secret, "[redacted]")
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


SECRETS = SecretFilter()


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose every file is 0600: logs name documents and models, which is nobody else's business."""

    def _open(self):  # type: ignore[no-untyped-def]  # the stdlib's own signature
        stream = super()._open()
        private_file(Path(self.baseFilename))
        return stream


def setup_logging(log_dir: Path | None, *, verbose: bool = False) -> None:
    """Send warnings (info with ``verbose``) to stderr and everything from info up to ``log_dir/cairn.log``."""
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    console = logging.StreamHandler()
    console.setLevel(logging.INFO if verbose else logging.WARNING)
    console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    console.addFilter(SECRETS)
    root.addHandler(console)
    if log_dir is not None:
        private_dir(log_dir)
        file_handler = PrivateRotatingFileHandler(
            log_dir / "cairn.log", maxBytes=2_000_000, backupCount=5, encoding="utf-8"
        )
        file_handler.setLevel(logging.INFO)
        file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
        file_handler.addFilter(SECRETS)
        root.addHandler(file_handler)
    for noisy in ("httpx", "httpcore", "uvicorn.access", "mcp", "watchdog"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
