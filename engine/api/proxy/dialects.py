"""What the proxy reads and changes in a chat request and its answer, per protocol.

Three request shapes carry a conversation: Ollama's ``/api/chat`` (``messages``), Ollama's ``/api/generate`` (one
``prompt``, an optional ``system``) and OpenAI's ``/v1/chat/completions`` (``messages`` whose ``content`` is a
string or a list of parts).  For each, this module finds the user's new turn, the opening that names the
conversation, and where recalled memory goes; :class:`ReplyReader` collects the assistant's reply from whatever
the upstream answers — one JSON object, Ollama's NDJSON stream or OpenAI's server-sent events — chunk by chunk, as
the chunks pass through untouched.

Everything here is tolerant: a body the proxy does not understand is forwarded as it came, and the upstream says
what is wrong with it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

ChatKind = Literal["ollama_chat", "ollama_generate", "openai_chat"]

#: Put before recalled memory, so the model knows what the text is and that the user did not just say it.
MEMORY_PREAMBLE = (
    "Memory from the user's Cairn vault (earlier conversations and documents). Use it where it helps; "
    "do not mention it otherwise.\n\n"
)


@dataclass(frozen=True, slots=True)
class UserTurn:
    """The user's newest message: its position among the messages (0 for a prompt) and its text."""

    index: int
    text: str


def text_of(content: Any) -> str:
    """The text of a message's ``content``: a string, or OpenAI's list of parts (text parts joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(part for part in parts if part)
    return ""


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [m for m in messages if isinstance(m, dict)]


def user_turn(kind: ChatKind, body: dict[str, Any]) -> UserTurn | None:
    """The user's new turn, or None when the request does not end with one (a tool result, a model load)."""
    if kind == "ollama_generate":
        prompt = body.get("prompt")
        return UserTurn(0, prompt) if isinstance(prompt, str) and prompt.strip() else None
    messages = _messages(body)
    if not messages or messages[-1].get("role") != "user":
        return None
    text = text_of(messages[-1].get("content"))
    return UserTurn(len(messages) - 1, text) if text.strip() else None


def derived_conversation_id(kind: ChatKind, body: dict[str, Any]) -> str:
    """A conversation id that stays the same for every request of one conversation.

    Chat apps send the whole conversation each turn, so its opening — the system messages before the first user
    message, and that message — is the same in every request; its hash names the conversation.  A generate
    request carries no history: its system text and prompt name it, so each prompt is a conversation of its own.
    """
    if kind == "ollama_generate":
        opening: list[Any] = [body.get("system") or "", body.get("prompt") or ""]
    else:
        opening = []
        for message in _messages(body):
            opening.append([str(message.get("role", "")), text_of(message.get("content"))])
            if message.get("role") == "user":
                break
    digest = hashlib.sha256(json.dumps(opening, ensure_ascii=False).encode("utf-8")).hexdigest()
    return f"chat-{digest[:20]}"


def with_memory(kind: ChatKind, body: dict[str, Any], memory: str) -> dict[str, Any]:
    """``body`` with ``memory`` before the model as a system message (a copy; ``body`` is unchanged).

    The message goes after the client's own leading system messages, so the app's instructions still come first
    and the memory sits next to the conversation it is about.  A generate request has no messages: the memory
    joins its ``system`` text (which, when the client sent none, takes the place of the model's default system
    prompt — the price of generate having a single system slot).
    """
    text = MEMORY_PREAMBLE + memory
    if kind == "ollama_generate":
        system = body.get("system")
        joined = f"{system}\n\n{text}" if isinstance(system, str) and system.strip() else text
        return {**body, "system": joined}
    messages = list(body.get("messages") or [])
    at = 0
    while at < len(messages) and isinstance(messages[at], dict) and messages[at].get("role") == "system":
        at += 1
    messages.insert(at, {"role": "system", "content": text})
    return {**body, "messages": messages}


class ReplyReader:
    """Collects the assistant's reply from an upstream answer as its bytes pass through.

    ``framing`` is how the answer is cut: ``ndjson`` (Ollama streaming), ``sse`` (OpenAI streaming) or ``json``
    (one object, either protocol).  :attr:`complete` says whether the answer said it was finished (Ollama's
    ``done: true``, OpenAI's ``[DONE]`` or a ``finish_reason``, or a whole JSON object): a reply cut off half-way
    is not recorded as if the model had said just that.
    """

    def __init__(self, kind: ChatKind, framing: Literal["ndjson", "sse", "json"]) -> None:
        self.kind = kind
        self.framing = framing
        self.complete = False
        self._parts: list[str] = []
        self._buffer = b""

    @property
    def text(self) -> str:
        """The reply so far."""
        return "".join(self._parts)

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the answer."""
        self._buffer += chunk
        if self.framing == "json":
            return
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            self._line(line.strip())

    def finish(self) -> None:
        """The answer ended: read what is left."""
        rest, self._buffer = self._buffer.strip(), b""
        if self.framing == "json":
            self._whole(rest)
        elif rest:
            self._line(rest)

    def _whole(self, raw: bytes) -> None:
        data = json_object(raw)
        if data is None:
            return
        if self.kind == "openai_chat":
            choice = _first_choice(data)
            message = choice.get("message") if choice else None
            if isinstance(message, dict):
                self._parts.append(text_of(message.get("content")))
                self.complete = True
            return
        self._ollama(data)

    def _line(self, line: bytes) -> None:
        if self.framing == "ndjson":
            data = json_object(line)
            if data is not None:
                self._ollama(data)
            return
        if not line.startswith(b"data:"):
            return  # comments, event names, ids: not part of the reply
        payload = line[len(b"data:") :].strip()
        if payload == b"[DONE]":
            self.complete = True
            return
        choice = _first_choice(json_object(payload))
        if choice is None:
            return
        delta = choice.get("delta")
        if isinstance(delta, dict) and isinstance(delta.get("content"), str):
            self._parts.append(delta["content"])
        if choice.get("finish_reason"):
            self.complete = True

    def _ollama(self, data: dict[str, Any]) -> None:
        if self.kind == "ollama_generate":
            piece = data.get("response")
        else:
            message = data.get("message")
            piece = message.get("content") if isinstance(message, dict) else None
        if isinstance(piece, str):
            self._parts.append(piece)
        if data.get("done") is True:
            self.complete = True


def json_object(raw: bytes) -> dict[str, Any] | None:
    """``raw`` read as a JSON object; None when it is not JSON or not an object (the upstream then says why)."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _first_choice(data: dict[str, Any] | None) -> dict[str, Any] | None:
    choices = data.get("choices") if data else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0]
    return None
