"""The Settings view's helper panels: Ollama's status and models, the token, the vault folder.

Each panel does its own engine calls through the runner; the Settings view only places them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engine.ai.ollama import OllamaClient, OllamaStatus
from ui.context import EndpointInfo, EndpointState
from ui.ops import OpRunner
from ui.widgets.labels import secondary_label, value_label

PROBE_TIMEOUT_S = 5.0


def probe_ollama(host: str) -> OllamaStatus:
    """Ask the Ollama server at ``host`` for its version and models (reader pool)."""
    client = OllamaClient(host, timeout_s=PROBE_TIMEOUT_S, connect_timeout_s=2.0)
    try:
        return client.probe()
    finally:
        client.close()


class OllamaPanel(QGroupBox):
    """Whether Ollama runs at the configured address, and which models it has.

    Signals:
        models_found(tuple[str, ...]): a probe listed these installed models.
    """

    models_found = Signal(tuple)

    def __init__(
        self,
        runner: OpRunner,
        show_status: Callable[[str], None],
        host: Callable[[], str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Ollama", parent)
        self._runner = runner
        self._show_status = show_status
        self._host = host
        self.status: OllamaStatus | None = None
        self.status_label = value_label("")
        self.detail_label = secondary_label("")
        self.check_button = QPushButton("Check again")
        self.check_button.setToolTip("Ask the Ollama address below which models it has")
        self.check_button.clicked.connect(self.check)
        row = QHBoxLayout()
        row.addWidget(self.status_label, 1)
        row.addWidget(self.check_button, 0, Qt.AlignmentFlag.AlignTop)
        box = QVBoxLayout(self)
        box.addLayout(row)
        box.addWidget(self.detail_label)

    def check(self) -> None:
        """Probe the address in the form (the "Check again" button)."""
        host = self._host().strip()
        if not host:
            return
        self.check_button.setEnabled(False)
        self.status_label.setText(f"Checking {host}…")
        self._runner.read(
            lambda _vault: probe_ollama(host),
            lambda status: self.show_probe(status, host, checked=True),
            on_error=self._check_failed,
        )

    def _check_failed(self, error: BaseException) -> None:
        self.check_button.setEnabled(True)
        self._runner.report(error)

    def show_probe(self, status: OllamaStatus | None, host: str, *, checked: bool) -> None:
        """Describe ``status`` (None: Cairn did not need Ollama at start-up, so never asked)."""
        self.check_button.setEnabled(True)
        self.status = status
        if status is None:
            self.status_label.setText(f"Not checked: Ollama at {host} was not needed.")
            self.detail_label.setText(
                "The language model is set to “simple” and the embedder does not use Ollama. "
                "Check again to see which models Ollama has."
            )
            return
        if not status.reachable:
            self.status_label.setText(f"Ollama is not running at {status.host}.")
            self.detail_label.setText(
                (f"{status.error}. " if status.error else "")
                + "Start Ollama (ollama serve) or correct the address below, then Check again. "
                "Until then Cairn uses the rule path and the built-in embedder."
            )
            return
        count = len(status.models)
        version = f" {status.version}" if status.version else ""
        self.status_label.setText(
            f"Ollama{version} is running at {status.host} with {count} model{'' if count == 1 else 's'}."
        )
        self.detail_label.setText(
            "Models: " + (", ".join(status.models) if status.models else "none yet (ollama pull …)")
        )
        self.models_found.emit(tuple(status.models))
        if checked:
            self._show_status(f"Ollama at {status.host} has {count} models.")


class TokenPanel(QGroupBox):
    """Where the endpoint serves (following its state: it may still be starting), and its token: masked, Show,
    Copy, Rotate."""

    def __init__(
        self,
        runner: OpRunner,
        show_status: Callable[[str], None],
        endpoint: EndpointState,
        token: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Address and token", parent)
        self._runner = runner
        self._show_status = show_status
        self.serving_label = value_label(endpoint.info.address_text)
        endpoint.changed.connect(self._show_endpoint)
        self.token_field = QLineEdit(token)
        self.token_field.setReadOnly(True)
        self.token_field.setEchoMode(QLineEdit.EchoMode.Password)
        self.token_field.setAccessibleName("Endpoint token")
        self.show_button = QPushButton("Show")
        self.show_button.setCheckable(True)
        self.show_button.toggled.connect(self._toggle)
        self.copy_button = QPushButton("Copy")
        self.copy_button.clicked.connect(self.copy)
        self.rotate_button = QPushButton("Rotate…")
        self.rotate_button.setToolTip("Make a new token; apps using the old one are refused")
        self.rotate_button.clicked.connect(self.ask_rotate)
        row = QHBoxLayout()
        row.addWidget(self.token_field, 1)
        row.addWidget(self.show_button)
        row.addWidget(self.copy_button)
        row.addWidget(self.rotate_button)
        form = QFormLayout(self)
        form.addRow("Serving at", self.serving_label)
        form.addRow("Token", row)
        form.addRow(
            "",
            secondary_label(
                "Local apps send the token as “Authorization: Bearer <token>”. A new port takes "
                "effect the next time Cairn starts; a new token at once."
            ),
        )

    def set_token(self, token: str) -> None:
        """Show ``token``."""
        self.token_field.setText(token)

    def _show_endpoint(self, endpoint: EndpointInfo) -> None:
        self.serving_label.setText(endpoint.address_text)

    def _toggle(self, shown: bool) -> None:
        self.token_field.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        self.show_button.setText("Hide" if shown else "Show")

    def copy(self) -> None:
        """Copy the token to the clipboard."""
        QGuiApplication.clipboard().setText(self.token_field.text())
        self._show_status("Endpoint token copied to the clipboard.")

    def ask_rotate(self) -> QMessageBox:
        """Ask before replacing the token (non-blocking); returns the question."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Rotate the endpoint token",
            "Make a new endpoint token? Apps using the current one are refused until they are given the new one.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.buttonClicked.connect(
            lambda button: self.rotate() if box.standardButton(button) == QMessageBox.StandardButton.Yes else None
        )
        box.finished.connect(box.deleteLater)
        box.open()
        return box

    def rotate(self) -> None:
        """Replace the token now (``vault.rotate_endpoint_token``)."""
        self._runner.write(lambda vault: vault.rotate_endpoint_token(), self._rotated)

    def _rotated(self, token: str) -> None:
        self.set_token(token)
        self._show_status("New endpoint token made. Give it to the apps that use Cairn.")


class LocationPanel(QGroupBox):
    """The vault folder, read-only, with "Open folder"."""

    def __init__(self, path: str, parent: QWidget | None = None) -> None:
        super().__init__("Vault location", parent)
        self.path = path
        self.open_url: Callable[[QUrl], Any] = QDesktopServices.openUrl
        """How the folder is opened (tests put a recorder here)."""
        self.path_label = value_label(path)
        self.open_button = QPushButton("Open folder")
        self.open_button.clicked.connect(self.open_folder)
        row = QHBoxLayout()
        row.addWidget(self.path_label, 1)
        row.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignTop)
        box = QVBoxLayout(self)
        box.addLayout(row)
        box.addWidget(
            secondary_label(
                "Memories, settings.toml, the token, logs and backups live here. Start Cairn with "
                "--vault <folder> (or set CAIRN_HOME) to use another vault."
            )
        )

    def open_folder(self) -> None:
        """Open the vault folder in the file manager."""
        self.open_url(QUrl.fromLocalFile(str(Path(self.path))))
