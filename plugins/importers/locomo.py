"""LoCoMo benchmark conversations: long multi-session chats between two people.

Three shapes are read, all holding the same conversation object (``speaker_a``, ``speaker_b``,
``session_N``: list of turns ``{speaker, dia_id, text, blip_caption?, img_url?, query?}``,
``session_N_date_time`` such as ``1:56 pm on 8 May, 2023``):

* the released ``locomo10.json``: a list of samples
  ``{sample_id, conversation, qa, event_summary, ...}``;
* one such sample object on its own;
* a bare conversation object with the annotations beside it (the project's dev split, ``26.json``),
  whose id is the file stem because it carries no ``sample_id``.

Only ``session_N`` lists are turns; ``qa``, summaries, observations and event lists are annotations
and are not imported, and a ``session_N_date_time`` without a ``session_N`` list (present in the
release) is ignored.  Every turn is role ``user`` with ``author`` = its speaker: both sides are
people.  A shared photo survives only as its caption, so the caption is kept as text:
``" [shares a photo: <caption>]"`` is appended to the turn.  A turn's time is its session's
date-time (UTC) plus ``i`` seconds for the i-th turn, which keeps turn order stable when sorting by
time.
``external_id`` is the ``dia_id`` (what the benchmark's evidence refers to); ``conversation_id`` is
``locomo:<sample_id>``; metadata carries the session number and the first image URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from engine.plugin_api import ImportedConversation, ImportedTurn, ImportFormatError
from plugins.importers.fields import (
    JsonObject,
    describe,
    expect_object,
    optional_id,
    optional_str,
    required,
    required_str,
)
from plugins.importers.reading import (
    IsolatingImporter,
    first_json_key,
    first_significant_byte,
    load_json,
)

_SESSION_KEY = re.compile(r"session_(\d+)")
_SESSION_TIME = re.compile(
    r"(?P<h>\d{1,2}):(?P<mi>\d{2})\s*(?P<ampm>[ap])\.?m\.?\s+on\s+"
    r"(?P<d>\d{1,2})\s+(?P<mon>[a-z]+)\.?,?\s+(?P<y>\d{4})",
    re.IGNORECASE,
)
# English month names, spelled out here because strptime's %B follows the process locale.
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}  # fmt: skip


def parse_session_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → 2023-05-08 13:56 UTC; ``ValueError`` for anything else."""
    match = _SESSION_TIME.fullmatch(text.strip())
    if match is None:
        raise ValueError("expected a time like '1:56 pm on 8 May, 2023'")
    month = _MONTHS.get(match["mon"].lower())
    if month is None:
        raise ValueError(f"unknown month {match['mon']!r}")
    hour = int(match["h"])
    if not 1 <= hour <= 12:
        raise ValueError(f"hour {hour} is out of range for a 12-hour clock")
    hour = hour % 12 + (12 if match["ampm"].lower() == "p" else 0)
    return datetime(int(match["y"]), month, int(match["d"]), hour, int(match["mi"]), tzinfo=UTC)


class LocomoImporter(IsolatingImporter):
    """Reads LoCoMo conversations (the benchmark release or one conversation per file)."""

    name = "locomo"
    description = "LoCoMo benchmark conversations (speaker_a / speaker_b sessions)"
    extensions: tuple[str, ...] = (".json",)

    def sniff(self, path: Path, head: bytes) -> bool:
        """A JSON object or list whose first distinguishing key is ``speaker_a``."""
        start = first_significant_byte(head)
        return start in (b"{", b"[") and first_json_key(path, head) == "speaker_a"

    def read_each(self, path: Path) -> Iterator[ImportedConversation | ImportFormatError]:
        """Yield each conversation (one per sample), or the error that sank it."""
        data = load_json(path)
        if isinstance(data, dict):
            try:
                single: ImportedConversation | ImportFormatError = _single(data, path)
            except ImportFormatError as exc:
                single = exc
            yield single
            return
        if not isinstance(data, list):
            raise ImportFormatError(
                f"expected an object or a list of samples, found {describe(data)}",
                location=path.name,
            )
        for index in range(len(data)):
            raw, data[index] = data[index], None  # release each sample once converted
            try:
                item: ImportedConversation | ImportFormatError = _sample(raw, index, path.name)
            except ImportFormatError as exc:
                item = exc
            yield item


def _single(data: JsonObject, path: Path) -> ImportedConversation:
    """A file holding one sample or one bare conversation (id: ``sample_id``, else the stem)."""
    sample_id = optional_id(data, "sample_id", path.name) or path.stem
    if "conversation" in data:
        where = f"{path.name} (sample_id {sample_id})"
        body = expect_object(data["conversation"], "'conversation'", where)
        return _conversation(body, sample_id, where)
    return _conversation(data, sample_id, path.name)


def _sample(raw: object, index: int, file_name: str) -> ImportedConversation:
    where = f"{file_name}: sample[{index}]"
    sample = expect_object(raw, "the sample", where)
    sample_id = optional_id(sample, "sample_id", where)
    if sample_id is None:
        raise ImportFormatError("missing key 'sample_id'", location=where)
    where = f"{where} (sample_id {sample_id})"
    body = expect_object(required(sample, "conversation", where), "'conversation'", where)
    return _conversation(body, sample_id, where)


def _conversation(body: JsonObject, sample_id: str, where: str) -> ImportedConversation:
    speaker_a = required_str(body, "speaker_a", where)
    speaker_b = required_str(body, "speaker_b", where)
    sessions = sorted((int(match[1]), key) for key in body if (match := _SESSION_KEY.fullmatch(key)) is not None)
    if not sessions:
        raise ImportFormatError("no 'session_N' lists of turns", location=where)
    turns: list[ImportedTurn] = []
    seen: dict[str, str] = {}  # dia_id → where it was first used
    for number, key in sessions:
        session_where = f"{where}, {key}"
        raw_turns = body[key]
        if not isinstance(raw_turns, list):
            raise ImportFormatError(f"'{key}' must be a list of turns, not {describe(raw_turns)}", location=where)
        start = _session_start(body, key, where)
        for index, raw_turn in enumerate(raw_turns):
            turn_where = f"{session_where}[{index}]"
            turn = _turn(raw_turn, number, start + timedelta(seconds=index), turn_where)
            if turn is None:
                continue
            dia_id = turn.external_id or ""
            if dia_id in seen:
                raise ImportFormatError(f"dia_id {dia_id!r} is already used at {seen[dia_id]}", location=turn_where)
            seen[dia_id] = turn_where
            turns.append(turn)
    return ImportedConversation(f"locomo:{sample_id}", f"{speaker_a} and {speaker_b}", tuple(turns))


def _session_start(body: JsonObject, key: str, where: str) -> datetime:
    time_key = f"{key}_date_time"
    text = required_str(body, time_key, where)
    try:
        return parse_session_time(text)
    except ValueError as exc:
        raise ImportFormatError(f"bad timestamp in '{time_key}' ({text!r}): {exc}", location=where) from exc


def _turn(raw: object, session: int, occurred_at: datetime, where: str) -> ImportedTurn | None:
    turn = expect_object(raw, "the turn", where)
    dia_id = required_str(turn, "dia_id", where)
    where = f"{where} (dia_id {dia_id})"
    speaker = required_str(turn, "speaker", where)
    text = required_str(turn, "text", where).rstrip()
    caption = (optional_str(turn, "blip_caption", where) or "").strip()
    if caption:
        photo = f"[shares a photo: {caption}]"
        text = f"{text} {photo}" if text.strip() else photo
    if not text.strip():
        return None
    metadata = {"session": str(session)}
    image_url = _first_image_url(turn.get("img_url"))
    if image_url:
        metadata["image_url"] = image_url
    return ImportedTurn(
        role="user",
        content=text,
        occurred_at=occurred_at,
        author=speaker,
        external_id=dia_id,
        metadata=metadata,
        location=where,
    )


def _first_image_url(value: object) -> str | None:
    if isinstance(value, str):
        return value or None
    if isinstance(value, list):
        return next((url for url in value if isinstance(url, str) and url), None)
    return None
