"""Typed editors for settings, generated from the pydantic fields of ``engine.config``.

Every setting ``engine.config.describe`` lists becomes a :class:`SettingSpec` (its dotted name,
current value, description, annotation and bounds) and gets an editor that fits its type: a combo
box for ``Literal`` choices, a check box for flags, spin boxes bounded by the field's ``ge``/``le``,
a line edit for text, a comma-separated line for lists of strings.  Lower bounds that are strict
(``gt=0``) stay reachable in the spin box, so the engine's own validation message is what the
person reads when they go too far.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from engine.config import Settings, WatchedFolder, describe
from ui.widgets.fact_filters import combo_edit

INT_LIMIT = 2_147_483_647
FLOAT_LIMIT = 1e9
UNITS = {"_s": "s", "_ms": "ms", "_mb": "MB", "_bytes": "bytes", "_minutes": "min", "_hours": "h"}
WORDS = {
    "llm": "LLM",
    "url": "URL",
    "id": "ID",
    "iban": "IBAN",
    "onnx": "ONNX",
    "dim": "dimensions",
    "mcp": "MCP",
    "openai": "OpenAI",
    "api": "API",
}


@dataclass(frozen=True, slots=True)
class SettingSpec:
    """One setting: where it lives, what it holds, and the limits its field declares."""

    name: str  # dotted: "llm.model"
    section: str
    field: str
    value: Any
    description: str
    annotation: Any
    minimum: float | None = None
    maximum: float | None = None

    @property
    def label(self) -> str:
        """The field name in words, without its unit (``timeout_s`` → "Timeout")."""
        base = self.field
        for suffix in UNITS:
            if base.endswith(suffix):
                base = base[: -len(suffix)]
                break
        if base in ("max", "min"):  # ``max_bytes``: the unit was the noun; "Max" alone says nothing
            base = f"{base}_size"
        words = [WORDS.get(word, word) for word in base.split("_")]
        text = " ".join(words)
        return text[:1].upper() + text[1:]

    @property
    def unit(self) -> str:
        """The unit its name ends in (``s``, ``MB`` …), or ""."""
        for suffix, unit in UNITS.items():
            if self.field.endswith(suffix):
                return unit
        return ""

    @property
    def choices(self) -> tuple[str, ...]:
        """The allowed values of a ``Literal`` field (empty for other types)."""
        if typing.get_origin(self.annotation) is typing.Literal:
            return tuple(str(arg) for arg in typing.get_args(self.annotation))
        return ()


def setting_specs(settings: Settings) -> list[SettingSpec]:
    """Every setting of ``settings`` in ``describe`` order, with its type and bounds."""
    specs = []
    for name, value, description in describe(settings):
        section, _, field = name.partition(".")
        info = type(getattr(settings, section)).model_fields[field]
        minimum = maximum = None
        for constraint in info.metadata:
            for attr in ("ge", "gt"):
                if getattr(constraint, attr, None) is not None:
                    minimum = float(getattr(constraint, attr))
            for attr in ("le", "lt"):
                if getattr(constraint, attr, None) is not None:
                    maximum = float(getattr(constraint, attr))
        specs.append(SettingSpec(name, section, field, value, description, info.annotation, minimum, maximum))
    return specs


def plain(value: Any) -> Any:
    """``value`` as the JSON-like data ``Settings.updated`` takes (lists, not tuples or models)."""
    if isinstance(value, WatchedFolder):
        return value.model_dump(mode="json")
    if isinstance(value, tuple | list):
        return [plain(item) for item in value]
    return value


class SettingEditor(QObject):
    """An editor widget for one setting, with a uniform value API.

    Signals:
        edited(): the person changed the value.
    """

    edited = Signal()

    def __init__(
        self,
        spec: SettingSpec,
        widget: QWidget,
        get: Callable[[], Any],
        put: Callable[[Any], None],
    ) -> None:
        super().__init__(widget)
        self.spec = spec
        self.widget = widget
        self._get = get
        self._put = put
        widget.setToolTip(spec.description)
        widget.setAccessibleName(spec.label)
        widget.setObjectName(f"setting:{spec.name}")

    def value(self) -> Any:
        """The value shown, as ``Settings.updated`` takes it."""
        return plain(self._get())

    def set_value(self, value: Any) -> None:
        """Show ``value`` without counting as an edit."""
        self.widget.blockSignals(True)
        try:
            self._put(value)
        finally:
            self.widget.blockSignals(False)


def make_editor(spec: SettingSpec) -> SettingEditor:
    """The editor that fits ``spec``'s type (see the module docstring)."""
    annotation = spec.annotation
    if spec.choices:
        return _choice_editor(spec)
    if annotation is bool:
        box = QCheckBox()
        editor = SettingEditor(spec, box, box.isChecked, lambda v: box.setChecked(bool(v)))
        box.toggled.connect(editor.edited)
    elif annotation is int:
        spin = QSpinBox()
        _bound(spin, spec, INT_LIMIT)
        editor = SettingEditor(spec, spin, spin.value, lambda v: spin.setValue(int(v)))
        spin.valueChanged.connect(editor.edited)
    elif annotation is float:
        spin_f = QDoubleSpinBox()
        spin_f.setDecimals(2)
        _bound(spin_f, spec, FLOAT_LIMIT)
        editor = SettingEditor(spec, spin_f, spin_f.value, lambda v: spin_f.setValue(float(v)))
        spin_f.valueChanged.connect(editor.edited)
    elif typing.get_origin(annotation) is tuple:
        line = QLineEdit()
        line.setPlaceholderText("none (separate several with commas)")
        editor = SettingEditor(
            spec,
            line,
            lambda: [part.strip() for part in line.text().split(",") if part.strip()],
            lambda v: line.setText(", ".join(str(item) for item in v)),
        )
        line.textEdited.connect(editor.edited)
    else:
        text = QLineEdit()
        if spec.name.endswith("api_key"):
            text.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)  # a key is not shown to whoever looks on
        editor = SettingEditor(spec, text, lambda: text.text().strip(), text.setText)
        text.textEdited.connect(editor.edited)
    editor.set_value(spec.value)
    return editor


def model_editor(spec: SettingSpec) -> SettingEditor:
    """An editable combo box for a model name, to be filled with the models Ollama has."""
    combo = QComboBox()
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    editor = SettingEditor(spec, combo, lambda: combo.currentText().strip(), lambda v: combo.setEditText(str(v)))
    combo_edit(combo).textEdited.connect(editor.edited)
    combo.activated.connect(editor.edited)
    editor.set_value(spec.value)
    return editor


def offer_models(editor: SettingEditor, models: Sequence[str]) -> None:
    """Put ``models`` in a :func:`model_editor`'s list, keeping the name typed."""
    combo = editor.widget
    if not isinstance(combo, QComboBox):
        return
    current = combo.currentText()
    editor.set_value(current)
    combo.blockSignals(True)
    combo.clear()
    combo.addItems(list(models))
    combo.setEditText(current)
    combo.blockSignals(False)


def _choice_editor(spec: SettingSpec) -> SettingEditor:
    combo = QComboBox()
    combo.addItems(list(spec.choices))
    editor = SettingEditor(
        spec,
        combo,
        combo.currentText,
        lambda v: combo.setCurrentIndex(max(0, combo.findText(str(v)))),
    )
    combo.currentIndexChanged.connect(editor.edited)
    editor.set_value(spec.value)
    return editor


def _bound(spin: QSpinBox | QDoubleSpinBox, spec: SettingSpec, limit: float) -> None:
    low = spec.minimum if spec.minimum is not None else 0
    high = spec.maximum if spec.maximum is not None else limit
    if isinstance(spin, QSpinBox):
        spin.setRange(int(low), int(high))
    else:
        spin.setRange(float(low), float(high))
    spin.setGroupSeparatorShown(spec.unit == "bytes")  # 26,214,400 bytes, but port 8642
    spin.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
    if spec.unit:
        spin.setSuffix(f" {spec.unit}")
    spin.setMinimumWidth(spin.fontMetrics().averageCharWidth() * 16)
