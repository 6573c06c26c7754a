"""The ChatGPT data export (``conversations.json``): conversations stored as message trees.

Each conversation keeps every message in ``mapping`` (node id → ``{message, parent, children}``);
editing a prompt or regenerating an answer adds a sibling branch.  What the user last saw is the
branch ending at ``current_node``, so the importer walks from there to the root and reverses the
path: abandoned branches are not imported and nothing is duplicated.  Exports without
``current_node`` fall back to following the newest child (the last in ``children``) from the root.

Per message: hidden messages (``metadata.is_visually_hidden_from_conversation``, e.g. the system
prompt and custom instructions) and messages without text are skipped; text comes from the string
``parts`` (joined with a newline) or, for code and tool output, from ``content.text``.  Non-text
parts (images, audio) are left out and listed in the turn's ``skipped_parts`` metadata.  An
assistant message addressed to a tool (``recipient`` other than ``all``) becomes a ``tool_call``
turn.  ``conversation_id`` is ``chatgpt:<id>`` and ``external_id`` the message id, so re-imports can
be deduplicated.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import get_args

from engine.plugin_api import (
    ImportedConversation,
    ImportedTurn,
    ImportFormatError,
    Role,
)
from plugins.importers.fields import (
    JsonObject,
    describe,
    epoch_field,
    expect_object,
    optional_str,
    required,
)
from plugins.importers.reading import (
    IsolatingImporter,
    first_json_key,
    first_significant_byte,
    load_json,
)

ROLES: tuple[Role, ...] = get_args(Role)


class ChatGPTImporter(IsolatingImporter):
    """Reads ``conversations.json`` from a ChatGPT data export."""

    name = "chatgpt"
    description = "ChatGPT data export (conversations.json)"
    extensions: tuple[str, ...] = (".json",)

    def sniff(self, path: Path, head: bytes) -> bool:
        """A JSON list whose records carry a ``mapping`` message tree."""
        return first_significant_byte(head) == b"[" and first_json_key(path, head) == "mapping"

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
    conversation_id = optional_str(record, "conversation_id", where) or optional_str(record, "id", where)
    if not conversation_id:
        raise ImportFormatError("missing key 'id' (or 'conversation_id')", location=where)
    where = f"{where} (id {conversation_id})"
    title = optional_str(record, "title", where) or ""
    mapping = expect_object(required(record, "mapping", where), "'mapping'", where)
    current = optional_str(record, "current_node", where)
    turns: list[ImportedTurn] = []
    for position, (node_id, node) in enumerate(_active_branch(mapping, current, where)):
        turn = _turn(node, node_id, f"{where}, message[{position}] (node {node_id})")
        if turn is not None:
            turns.append(turn)
    return ImportedConversation(f"chatgpt:{conversation_id}", title, tuple(turns))


def _active_branch(mapping: JsonObject, current: str | None, where: str) -> list[tuple[str, JsonObject]]:
    """The nodes from the root to ``current`` (or to the newest leaf without a current node)."""
    if current is None:
        return _newest_branch(mapping, where)
    chain: list[tuple[str, JsonObject]] = []
    seen: set[str] = set()
    node_id: str | None = current
    child = "current_node"
    while node_id is not None:
        if node_id in seen:
            raise ImportFormatError(f"'mapping' has a cycle through node {node_id}", location=where)
        if node_id not in mapping:
            raise ImportFormatError(f"node {node_id} (named by {child}) is missing from 'mapping'", location=where)
        node = expect_object(mapping[node_id], f"node {node_id}", where)
        seen.add(node_id)
        chain.append((node_id, node))
        child = f"the parent of node {node_id}"
        node_id = optional_str(node, "parent", where, label=f"{node_id}.parent")
    chain.reverse()
    return chain


def _newest_branch(mapping: JsonObject, where: str) -> list[tuple[str, JsonObject]]:
    nodes = {key: expect_object(value, f"node {key}", where) for key, value in mapping.items()}
    roots = [key for key, node in nodes.items() if node.get("parent") not in nodes]
    if not roots:
        raise ImportFormatError("'mapping' has no root node", location=where)
    chain: list[tuple[str, JsonObject]] = []
    node_id: str | None = roots[0]
    while node_id is not None:
        if any(key == node_id for key, _ in chain):
            raise ImportFormatError(f"'mapping' has a cycle through node {node_id}", location=where)
        node = nodes[node_id]
        chain.append((node_id, node))
        children = node.get("children") or []
        if not isinstance(children, list) or not all(isinstance(c, str) for c in children):
            raise ImportFormatError(f"node {node_id}: 'children' must be a list of ids", location=where)
        node_id = children[-1] if children else None
        if node_id is not None and node_id not in nodes:
            raise ImportFormatError(f"child node {node_id} is missing from 'mapping'", location=where)
    return chain


def _turn(node: JsonObject, node_id: str, where: str) -> ImportedTurn | None:
    """The node's turn; ``None`` for the empty root, hidden messages and messages without text."""
    raw_message = node.get("message")
    if raw_message is None:
        return None
    message = expect_object(raw_message, "'message'", where)
    meta = message.get("metadata")
    if isinstance(meta, dict) and meta.get("is_visually_hidden_from_conversation") is True:
        return None
    author = expect_object(required(message, "author", where), "'author'", where)
    role = optional_str(author, "role", where, label="author.role")
    if role not in ROLES:
        raise ImportFormatError(f"author.role {role!r} is not one of {', '.join(ROLES)}", location=where)
    content = expect_object(required(message, "content", where), "'content'", where)
    content_type = optional_str(content, "content_type", where, label="content.content_type") or ""
    text, skipped = _text_of(content, where)
    text = text.rstrip()
    if not text.strip():
        return None

    metadata: dict[str, str] = {}
    if content_type and content_type != "text":
        metadata["content_type"] = content_type
    if skipped:
        metadata["skipped_parts"] = ", ".join(skipped)
    if isinstance(meta, dict) and isinstance(meta.get("model_slug"), str):
        metadata["model"] = meta["model_slug"]
    recipient = optional_str(message, "recipient", where)
    is_tool_call = role == "assistant" and recipient not in (None, "", "all")
    if is_tool_call and recipient is not None:
        metadata["recipient"] = recipient
    return ImportedTurn(
        role=role,
        content=text,
        occurred_at=epoch_field(message, "create_time", where),
        author=optional_str(author, "name", where, label="author.name"),
        external_id=optional_str(message, "id", where) or node_id,
        type="tool_call" if is_tool_call else "message",
        metadata=metadata,
        location=where,
    )


def _text_of(content: JsonObject, where: str) -> tuple[str, list[str]]:
    """The message text and the kinds of non-text parts left out of it."""
    parts = content.get("parts")
    if parts is None:
        text = content.get("text")
        return (text, []) if isinstance(text, str) else ("", [])
    if not isinstance(parts, list):
        raise ImportFormatError(f"'content.parts' must be a list, not {describe(parts)}", location=where)
    texts: list[str] = []
    skipped: list[str] = []
    for number, part in enumerate(parts):
        if isinstance(part, str):
            if part:
                texts.append(part)
        elif isinstance(part, dict):
            kind = part.get("content_type")
            skipped.append(kind if isinstance(kind, str) else "object")
        elif part is not None:
            raise ImportFormatError(
                f"'content.parts[{number}]' must be a string or an object, not {describe(part)}",
                location=where,
            )
    return "\n".join(texts), skipped
