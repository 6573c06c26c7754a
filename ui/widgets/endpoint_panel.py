"""The endpoint panel: where local apps connect and the token they need (masked; Show, Copy)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QWidget,
)

from ui.context import EndpointInfo
from ui.widgets.labels import secondary_label, value_label

TOKEN_HINT = (
    "Local apps send it as “Authorization: Bearer <token>”. `cairn token --rotate` replaces it; "
    "clients with the old token are refused from then on."
)


class EndpointPanel(QGroupBox):
    """Shows the endpoint's address (or why it is not serving) and its token.

    The token is masked until the person asks to see it: screenshots and screen sharing of the
    overview must not leak the key to every memory in the vault.
    """

    def __init__(
        self,
        endpoint: EndpointInfo,
        show_status: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Endpoint", parent)
        self._endpoint = endpoint
        self._token = endpoint.token
        self._show_status = show_status

        # When it is not serving, the address row says why, in the person's words rather than a bare
        # "off".
        self.address_label = value_label(endpoint.address or endpoint.problem or "Not serving")

        self.token_field = QLineEdit(endpoint.token)
        self.token_field.setReadOnly(True)
        self.token_field.setEchoMode(QLineEdit.EchoMode.Password)
        self.token_field.setAccessibleName("Endpoint token")
        # Narrow windows squeeze the field first; keep enough of it to see that a token is there.
        self.token_field.setMinimumWidth(self.token_field.fontMetrics().averageCharWidth() * 14)
        self.token_field.setCursorPosition(0)  # show its start, not a sliver cut at the left
        self.show_button = QPushButton("Show")
        self.show_button.setCheckable(True)
        self.show_button.toggled.connect(self._on_show_toggled)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the token to the clipboard")
        self.copy_button.clicked.connect(self._on_copy_clicked)

        token_row = QHBoxLayout()
        token_row.setContentsMargins(0, 0, 0, 0)
        token_row.addWidget(self.token_field, 1)
        token_row.addWidget(self.show_button)
        token_row.addWidget(self.copy_button)

        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        form.addRow("Address", self.address_label)
        if endpoint.fix:
            form.addRow("", secondary_label(f"Fix: {endpoint.fix}"))
        form.addRow("Token", token_row)
        form.addRow("", secondary_label(TOKEN_HINT))

    @property
    def token(self) -> str:
        """The token shown (and copied)."""
        return self._token

    def set_token(self, token: str) -> None:
        """Show a new token (after a rotation, which the endpoint picks up at once)."""
        self._token = token
        self.token_field.setText(token)
        self.token_field.setCursorPosition(0)

    @property
    def token_visible(self) -> bool:
        """True while the token is shown in clear."""
        return self.token_field.echoMode() == QLineEdit.EchoMode.Normal

    def _on_show_toggled(self, shown: bool) -> None:
        self.token_field.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        self.token_field.setCursorPosition(0)
        self.show_button.setText("Hide" if shown else "Show")

    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self._token)
        self._show_status("Endpoint token copied to the clipboard.")
