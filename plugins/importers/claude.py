"""The Claude data export (``conversations.json``): conversations with flat message lists.

Each conversation is ``{uuid, name, created_at, updated_at, chat_messages: [...]}`` and each message
``{uuid, text, sender, created_at, content: [{type, text}, ...]}``.  ``sender`` is ``human``
(imported as role ``user``) or ``assistant``.  Newer exports split a message into typed ``content``
blocks; the text blocks are the message (joined with a newline) and other blocks (tool use, tool
results, thinking, images) are left out and listed in the turn's ``skipped_parts`` metadata.  Older
exports have only ``text``, which is used when there are no ``content`` blocks.  Attached files are
not transcript text; their names are kept in ``attachments`` metadata. Messages without text are
skipped.  ``conversation_id`` is ``claude:<uuid>``, ``external_id`` the message uuid.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from engine.plugin_api import ImportedConversation, ImportedTurn, ImportFormatError, Role
from plugins.importers.fields import (
    JsonObject,
    describe,
    expect_object,
    iso_field,
    optional_str,
    required_list,
    required_str,
)
from plugins.importers.reading import (
    IsolatingImporter,
    first_json_key,
    first_significant_byte,
    load_json,
)

_ROLE_OF_SENDER: dict[str, Role] = {"human": "user", "assistant": "assistant"}


class ClaudeImporter(IsolatingImporter):
    """Reads ``conversations.json`` from a Claude data export."""

    name = "claude"
    description = "Claude data export (conversations.json)"
    extensions: tuple[str, ...] = (".json",)

    def sniff(self, path: Path, head: bytes) -> bool:
        """A JSON list whose records carry ``chat_messages``."""
        return first_significant_byte(head) == b"[" and first_json_key(path, head) == "chat_messages"

    def read_each(self, path: Path) -> Iterator[ImportedConversation | ImportFormatError]:
        """Yield each conversation of the export, or the error that sank it."""
        data = load_json(path)
        if not isinstance(data, list):
            raise ImportFormatError(f"expected a list of conversations, found {describe(data)}", location=path.name)
        for index in range(len(data)):
            raw, data[index] = data[index], None  # release each record once converted
            try:
                item: ImportedConversation | ImportFormatError = _conversation(raw, index, path.name)
            except ImportFormatError as exc:
                item = exc
            yield item


def _conversation(raw: object, index: int, file_name: str) -> ImportedConversation:
    where = f"{file_name}: conversation[{index}]"
    record = expect_object(raw, "the conversation", where)
    uuid = required_str(record, "uuid", where)
    if not uuid:
        raise ImportFormatError("'uuid' is empty", location=where)
    where = f"{where} (uuid {uuid})"
    title = optional_str(record, "name", where) or ""
    turns: list[ImportedTurn] = []
    for position, raw_message in enumerate(required_list(record, "chat_messages", where)):
        turn = _turn(raw_message, f"{where}, message[{position}]")
        if turn is not None:
            turns.append(turn)
    return ImportedConversation(f"claude:{uuid}", title, tuple(turns))


def _turn(raw: object, where: str) -> ImportedTurn | None:
    message = expect_object(raw, "the message", where)
    uuid = required_str(message, "uuid", where)
    where = f"{where} (uuid {uuid})"
    sender = required_str(message, "sender", where)
    role = _ROLE_OF_SENDER.get(sender)
    if role is None:
        raise ImportFormatError(f"sender {sender!r} is not one of {', '.join(_ROLE_OF_SENDER)}", location=where)
    occurred_at = iso_field(message, "created_at", where)
    text, skipped = _text_of(message, where)
    text = text.rstrip()
    if not text.strip():
        return None
    metadata: dict[str, str] = {}
    if skipped:
        metadata["skipped_parts"] = ", ".join(skipped)
    attachments = _attachment_names(message)
    if attachments:
        metadata["attachments"] = ", ".join(attachments)
    return ImportedTurn(
        role=role,
        content=text,
        occurred_at=occurred_at,
        external_id=uuid or None,
        metadata=metadata,
        location=where,
    )


def _text_of(message: JsonObject, where: str) -> tuple[str, list[str]]:
    """The text blocks of ``content`` (else ``text``) and the kinds of blocks left out."""
    blocks = message.get("content")
    if blocks is None or blocks == []:
        return optional_str(message, "text", where) or "", []
    if not isinstance(blocks, list):
        raise ImportFormatError(f"'content' must be a list, not {describe(blocks)}", location=where)
    texts: list[str] = []
    skipped: list[str] = []
    for number, raw_block in enumerate(blocks):
        block_where = f"{where}, content[{number}]"
        block = expect_object(raw_block, "the content block", block_where)
        kind = required_str(block, "type", block_where)
        if kind == "text":
            texts.append(required_str(block, "text", block_where))
        else:
            skipped.append(kind)
    return "\n".join(t for t in texts if t), skipped


def _attachment_names(message: JsonObject) -> list[str]:
    names: list[str] = []
    for key in ("attachments", "files"):
        items = message.get(key)
        if not isinstance(items, list):
            continue
        for item in items:
            if isinstance(item, dict):
                name = item.get("file_name")
                if isinstance(name, str) and name and name not in names:
                    names.append(name)
    return names
