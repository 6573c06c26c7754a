"""The endpoint panel: where local apps connect and the token they need (masked; Show, Copy).

The address follows the window's :class:`~ui.context.EndpointState`: "Starting…" while the endpoint
loads after the window appears, then its address, or why it is not serving and the fix.
"""

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

from ui.context import EndpointInfo, EndpointState
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
        endpoint: EndpointState,
        show_status: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Endpoint", parent)
        info = endpoint.info
        self._token = info.token
        self._start_token = info.token
        self._show_status = show_status

        self.address_label = value_label()
        self.fix_label = secondary_label("")

        self.token_field = QLineEdit(info.token)
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
        form.addRow("", self.fix_label)
        form.addRow("Token", token_row)
        form.addRow("", secondary_label(TOKEN_HINT))
        self._form = form
        self._show_endpoint(info)
        endpoint.changed.connect(self._show_endpoint)

    def _show_endpoint(self, endpoint: EndpointInfo) -> None:
        if endpoint.token != self._start_token:
            # The token became known (a window built while the vault was opening has none before);
            # a rotation since is shown by set_token, and later states carry the same start token.
            self._start_token = endpoint.token
            self.set_token(endpoint.token)
        self.address_label.setText(endpoint.address_text)
        fix = "" if endpoint.running or endpoint.starting else endpoint.fix
        self.fix_label.setText(f"Fix: {fix}" if fix else "")
        self._form.setRowVisible(self.fix_label, bool(fix))

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
