"""The Settings view: every setting in ``settings.toml``, in a form generated from its schema.

Pages group the sections of :class:`engine.config.Settings`; each field gets a typed editor
(:mod:`ui.widgets.setting_editors`) with its description beside it.  A few settings get more help:
the model names offer what Ollama has (and say plainly when Ollama is not running), the endpoint
page has the token with Copy and Rotate, the vault page shows the folder, and watched folders are
a list of folders with their globs.

Saving goes through ``vault.update_settings`` on the writer.  Each changed value is checked first,
so every invalid one shows the engine's message next to its field and nothing is saved.  Which
settings take effect at once (privacy, memories, recall, watched folders, backups …) and which at
the next start is the engine's to say (:func:`engine.config.applies_live`); each group and the
message after saving repeat it.  The vault page also lists the backups with "Back up now".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from engine import ValidationError, Vault
from engine.ai.ollama import OllamaStatus
from engine.changes import Change
from engine.config import Settings, applies_live
from engine.vectors.migration import VectorStatus
from ui.context import ViewContext
from ui.format import error_text, vectors_text
from ui.widgets.backup_panel import BackupPanel
from ui.widgets.labels import heading_label, secondary_label, value_label
from ui.widgets.setting_editors import (
    SettingEditor,
    SettingSpec,
    make_editor,
    model_editor,
    offer_models,
    plain,
    setting_specs,
)
from ui.widgets.settings_panels import LocationPanel, OllamaPanel, TokenPanel
from ui.widgets.watched_folders import WatchedFoldersEditor

# (page key, title, sections shown on it)
PAGES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("models", "Models", ("llm", "embedder")),
    ("privacy", "Privacy", ("privacy",)),
    ("endpoint", "Endpoint", ("endpoint", "proxy")),
    ("folders", "Watched folders", ("watch",)),
    ("vault", "Vault & storage", ("backups", "vectors")),
    ("advanced", "Advanced", ("jobs", "episodes", "facts", "documents", "recall", "workspace")),
)
SECTION_TITLES = {
    "llm": "Language model",
    "embedder": "Embedder",
    "vectors": "Vector storage",
    "endpoint": "Endpoint",
    "proxy": "Memory proxy (for chat apps speaking Ollama or OpenAI)",
    "privacy": "Personal data firewall",
    "jobs": "Background jobs",
    "episodes": "Episodes",
    "facts": "Memories",
    "documents": "Documents",
    "watch": "Watched folders",
    "backups": "Backups",
    "recall": "Recall",
    "workspace": "Subject workspace",
}
MODEL_FIELDS = ("llm.model", "embedder.ollama_model")
PRIVACY_NOTE = (
    "What happens to each kind of personal identifier before anything is stored, embedded or sent "
    "to a model: block the whole message, redact the identifier, or keep it."
)


@dataclass(frozen=True, slots=True)
class SettingsSnapshot:
    """What the page needs from the vault."""

    settings: Settings
    ollama: OllamaStatus | None
    vault_path: str
    token: str
    vectors: VectorStatus | None = None
    model: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class SaveResult:
    """The settings saved, or the message for each rejected setting (then nothing was saved)."""

    settings: Settings | None
    errors: dict[str, str]


def load_snapshot(vault: Vault) -> SettingsSnapshot:
    """The settings in effect, the Ollama status from start-up, the folder and the token."""
    return SettingsSnapshot(
        vault.settings,
        vault.ollama_status,
        str(vault.paths.root),
        vault.endpoint_token(),
        vault.vector_status(),
        vault.model_status(),
    )


def save_settings(vault: Vault, changes: dict[str, Any]) -> SaveResult:
    """Check each change on its own (to name every bad one), then save them together."""
    errors: dict[str, str] = {}
    for name, value in changes.items():
        try:
            vault.settings.updated({name: value})
        except ValidationError as exc:
            errors[name] = field_message(exc)
    if errors:
        return SaveResult(None, errors)
    try:
        return SaveResult(vault.update_settings(changes), {})
    except ValidationError as exc:
        # The running parts may name a part of a setting (``watch.folders.path`` for a folder that overlaps
        # another): the message belongs next to the setting that holds it.
        owner = next((name for name in changes if exc.field == name or exc.field.startswith(f"{name}.")), None)
        return SaveResult(None, {owner or next(iter(changes)): field_message(exc)})


def field_message(error: ValidationError) -> str:
    """The engine's message without the field name in front and the origin at the end."""
    message = error.message.removeprefix(f"{error.field}: ")
    return message.removesuffix(" (from settings)")


def restart_note(changes: dict[str, Any]) -> str:
    """Which of the saved settings wait for a restart (by section), in words."""
    later = sorted({SECTION_TITLES.get(name.split(".")[0], name).lower() for name in changes if not applies_live(name)})
    if not later:
        return "The new settings are in effect."
    return f"Restart Cairn to use the new {_listed(later)} settings."


def when_note(specs: Sequence[SettingSpec]) -> str:
    """When the settings of one group take effect: at once, at the next start, or which are which."""
    live = [spec for spec in specs if applies_live(spec.name)]
    later = [spec for spec in specs if not applies_live(spec.name)]
    if not later:
        return "Takes effect as soon as it is saved."
    if not live:
        return "Takes effect the next time Cairn starts."
    if len(live) >= len(later):
        return f"Takes effect as soon as it is saved, except {_listed([s.label for s in later])} (at the next start)."
    return f"Takes effect the next time Cairn starts, except {_listed([s.label for s in live])} (at once)."


def _listed(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


class SettingsView(QWidget):
    """Pages of settings with Save and Revert.

    ``editors`` maps dotted names to their :class:`SettingEditor`; ``error_labels`` to the label
    showing a rejected value's message.
    """

    def __init__(self, context: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = context.runner
        self._show_status = context.show_status
        self._endpoint = context.endpoint
        self._started = False
        self._saving = False
        self.snapshot: SettingsSnapshot | None = None
        self.editors: dict[str, SettingEditor] = {}
        self.error_labels: dict[str, QLabel] = {}
        self.page_keys = [key for key, _title, _sections in PAGES]

        self.pages = QListWidget()
        self.pages.setObjectName("settingsPages")
        self.pages.setAccessibleName("Settings pages")
        self.pages.setSpacing(3)
        for _key, title, _sections in PAGES:
            self.pages.addItem(title)
        self.pages.setFixedWidth(max(self.pages.fontMetrics().horizontalAdvance(t) for _k, t, _s in PAGES) + 40)
        self.stack = QStackedWidget()
        self.pages.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.loading_label = secondary_label("Loading the settings…")
        self.stack.addWidget(self.loading_label)

        self.save_button = QPushButton("Save")
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self.save)
        self.revert_button = QPushButton("Revert")
        self.revert_button.setToolTip("Put back the values last saved")
        self.revert_button.clicked.connect(self.revert)
        self.state_label = secondary_label("")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.addWidget(heading_label("Settings", scale=1.45))
        body = QHBoxLayout()
        body.addWidget(self.pages)
        body.addWidget(self.stack, 1)
        layout.addLayout(body, 1)
        bar = QHBoxLayout()
        bar.addWidget(self.state_label, 1)
        bar.addWidget(self.revert_button)
        bar.addWidget(self.save_button)
        layout.addLayout(bar)
        context.runner.changes_arrived.connect(self._on_changes)
        self._update_state()

    # -- loading -----------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        """Load on first show."""
        super().showEvent(event)
        if not self._started:
            self.load()

    def load(self) -> None:
        """Read the settings in effect (and build the pages the first time)."""
        self._started = True
        self._runner.read(load_snapshot, self._snapshot_arrived)

    def _snapshot_arrived(self, snapshot: SettingsSnapshot) -> None:
        first = self.snapshot is None
        self.snapshot = snapshot
        if first:
            self._build_pages(snapshot)
            self.pages.setCurrentRow(0)
            self.stack.setCurrentIndex(1)
            self.pages.currentRowChanged.disconnect()
            self.pages.currentRowChanged.connect(lambda row: self.stack.setCurrentIndex(row + 1))
        self._show_values(snapshot.settings)
        self.in_use.show_state(snapshot)
        self.token_panel.set_token(snapshot.token)
        self.ollama.show_probe(snapshot.ollama, snapshot.settings.llm.ollama_host, checked=False)

    def _ollama_host(self) -> str:
        editor = self.editors.get("llm.ollama_host")
        return str(editor.value()) if editor is not None else ""

    @property
    def loaded(self) -> bool:
        """True once the pages are built."""
        return self.snapshot is not None

    def show_page(self, key: str) -> None:
        """Show the page ``key`` (see :data:`PAGES`)."""
        self.pages.setCurrentRow(self.page_keys.index(key))

    # -- building ----------------------------------------------------------------------------------
    def _build_pages(self, snapshot: SettingsSnapshot) -> None:
        self.ollama = OllamaPanel(self._runner, self._show_status, self._ollama_host)
        self.ollama.models_found.connect(self._offer_models)
        self.token_panel = TokenPanel(self._runner, self._show_status, self._endpoint, snapshot.token)
        self.location = LocationPanel(snapshot.vault_path)
        self.in_use = InUsePanel()
        self.backups = BackupPanel(self._runner, self._show_status)
        self.backups.refresh()
        specs = setting_specs(snapshot.settings)
        by_section: dict[str, list[SettingSpec]] = {}
        for spec in specs:
            by_section.setdefault(spec.section, []).append(spec)
        for key, _title, sections in PAGES:
            page = QWidget()
            box = QVBoxLayout(page)
            box.setContentsMargins(12, 0, 12, 12)
            box.setSpacing(12)
            if key == "privacy":
                box.addWidget(secondary_label(PRIVACY_NOTE))
            labels: list[QLabel] = []
            for section in sections:
                box.addWidget(self._section_group(section, by_section.get(section, []), labels))
            # one label column for the whole page: the editors of every group on it line up
            width = max((label.sizeHint().width() for label in labels), default=0)
            for label in labels:
                label.setMinimumWidth(width)
            extra = {
                "models": self.ollama,
                "endpoint": self.token_panel,
                "vault": self.location,
            }.get(key)
            if extra is not None:
                box.insertWidget(1 if key == "models" else 0, extra)
            if key == "models":
                box.insertWidget(0, self.in_use)  # what runs now, above the settings that choose it
            if key == "vault":
                box.insertWidget(2, self.backups)  # under the backup settings it reports on
            box.addStretch(1)
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            scroll.setWidget(page)
            self.stack.addWidget(scroll)

    def _section_group(self, section: str, specs: Sequence[SettingSpec], labels: list[QLabel]) -> QGroupBox:
        """The form of one section; its field labels are added to ``labels``."""
        title = SECTION_TITLES.get(section, section)
        group = QGroupBox(title)
        form = QFormLayout(group)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setVerticalSpacing(10)
        form.addRow(secondary_label(when_note(specs)))
        for spec in specs:
            editor = self._editor_for(spec)
            self.editors[spec.name] = editor
            editor.edited.connect(lambda name=spec.name: self._on_edited(name))
            error = QLabel()
            error.setWordWrap(True)
            error.setObjectName(f"error:{spec.name}")
            error.hide()
            self.error_labels[spec.name] = error
            label = QLabel(spec.label)
            label.setBuddy(editor.widget)
            labels.append(label)
            form.addRow(label, self._field_cell(spec, editor, error))
        return group

    @staticmethod
    def _field_cell(spec: SettingSpec, editor: SettingEditor, error: QLabel) -> QWidget:
        """The editor (full width for text, natural width otherwise), its description, its error."""
        cell = QWidget()
        box = QVBoxLayout(cell)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        widens = isinstance(editor.widget, QLineEdit | WatchedFoldersEditor)
        if spec.name in MODEL_FIELDS:
            editor.widget.setMinimumWidth(editor.widget.fontMetrics().averageCharWidth() * 28)
        row.addWidget(editor.widget, 1 if widens else 0)
        if not widens:
            row.addStretch(1)
        box.addLayout(row)
        if spec.description and spec.name != "watch.folders":
            box.addWidget(secondary_label(spec.description))
        box.addWidget(error)
        return cell

    def _editor_for(self, spec: SettingSpec) -> SettingEditor:
        if spec.name in MODEL_FIELDS:
            return model_editor(spec)
        if spec.name == "watch.folders":
            folders = WatchedFoldersEditor()
            editor = SettingEditor(spec, folders, folders.model.folders, folders.model.set_folders)
            folders.edited.connect(editor.edited)
            editor.set_value(spec.value)
            self.folders_editor = folders
            return editor
        return make_editor(spec)

    # -- values ------------------------------------------------------------------------------------
    def _show_values(self, settings: Settings) -> None:
        for spec in setting_specs(settings):
            editor = self.editors.get(spec.name)
            if editor is not None:
                editor.set_value(spec.value)
        for name in self.error_labels:
            self._set_error(name, "")
        self._update_state()

    def changes(self) -> dict[str, Any]:
        """The settings edited but not saved: dotted name → new value."""
        if self.snapshot is None:
            return {}
        current = {spec.name: plain(spec.value) for spec in setting_specs(self.snapshot.settings)}
        return {name: editor.value() for name, editor in self.editors.items() if editor.value() != current.get(name)}

    def _on_edited(self, name: str) -> None:
        self._set_error(name, "")
        self._update_state()

    def _update_state(self) -> None:
        changes = self.changes()
        self.save_button.setEnabled(bool(changes) and not self._saving)
        self.revert_button.setEnabled(bool(changes) and not self._saving)
        if changes:
            count = len(changes)
            self.state_label.setText(f"{count} unsaved change{'' if count == 1 else 's'}")

    def _set_error(self, name: str, message: str) -> None:
        label = self.error_labels.get(name)
        if label is None:
            return
        if message:
            label.setText(f"Not saved: {message}")
            label.setToolTip(message)
            font = label.font()
            font.setBold(True)
            label.setFont(font)
            label.show()
        else:
            label.clear()
            label.hide()

    def save(self) -> None:
        """Check and save the edited settings."""
        changes = self.changes()
        if not changes or self._saving:
            return
        self._saving = True
        self._update_state()
        self.state_label.setText("Saving…")
        self._runner.write(
            lambda vault: save_settings(vault, changes),
            lambda result: self._saved(changes, result),
            on_error=self._save_failed,
        )

    def _saved(self, changes: dict[str, Any], result: SaveResult) -> None:
        self._saving = False
        if result.settings is None:
            for name, message in result.errors.items():
                self._set_error(name, message)
            first = next(iter(result.errors))
            self._reveal(first)
            self._update_state()
            count = len(result.errors)
            self.state_label.setText(
                f"Nothing was saved: {count} value{'' if count == 1 else 's'} "
                f"{'needs' if count == 1 else 'need'} fixing."
            )
            return
        assert self.snapshot is not None
        self.snapshot = replace(self.snapshot, settings=result.settings)
        self._show_values(result.settings)
        message = "Saved. " + restart_note(changes)
        self.state_label.setText(message)
        self._show_status(message)

    def _save_failed(self, error: BaseException) -> None:
        self._saving = False
        self._update_state()
        self.state_label.setText("The settings could not be saved.")
        self._runner.report(error)

    def revert(self) -> None:
        """Put back the values last saved."""
        if self.snapshot is not None:
            self._show_values(self.snapshot.settings)
            self.state_label.setText("")

    def _reveal(self, name: str) -> None:
        section = name.split(".")[0]
        for row, (_key, _title, sections) in enumerate(PAGES):
            if section in sections:
                self.pages.setCurrentRow(row)
                break
        editor = self.editors.get(name)
        if editor is not None:
            editor.widget.setFocus()

    def _on_changes(self, changes: Sequence[Change]) -> None:
        # Saved elsewhere (the endpoint, a token rotation): show it unless the person is editing.
        if self.snapshot is None or self._saving:
            return
        if any(c.type == "settings.changed" for c in changes) and not self.changes():
            self.load()

    # -- Ollama ------------------------------------------------------------------------------------
    def _offer_models(self, models: tuple[str, ...]) -> None:
        for name in MODEL_FIELDS:
            editor = self.editors.get(name)
            if editor is not None:
                offer_models(editor, models)


class InUsePanel(QGroupBox):
    """The models the vault runs with now: the language model and its last error, the embedder, a re-embedding
    under way with its progress, vectors waiting for an embedder that is down."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("In use now", parent)
        self.llm = value_label("…")
        self.llm_note = secondary_label("")
        self.embedder = value_label("…")
        self.embedder_note = secondary_label("")
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Re-embedding progress")
        self.progress.setVisible(False)
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Language model", self.llm)
        form.addRow("", self.llm_note)
        form.addRow("Embedder", self.embedder)
        form.addRow("", self.embedder_note)
        form.addRow("", self.progress)

    def show_state(self, snapshot: SettingsSnapshot) -> None:
        """Fill in from ``snapshot``."""
        model = snapshot.model or {}
        self.llm.setText(str(model.get("engine", "")))
        notes = [str(model.get("reason") or "")]
        error = error_text(model.get("last_error"), model.get("last_error_at"))
        self.llm_note.setText("\n".join(n for n in (*notes, error) if n))
        status = snapshot.vectors
        if status is None:
            return
        self.embedder.setText(f"{status.active} ({status.dim} dimensions)")
        lines = [vectors_text(status), error_text(status.last_error, status.last_error_at)]
        self.embedder_note.setText("\n".join(line for line in lines if line))
        if status.migration is not None:
            self.progress.setRange(0, max(1, status.migration.total))
            self.progress.setValue(max(0, status.migration.total - status.remaining))
        self.progress.setVisible(status.migration is not None)
