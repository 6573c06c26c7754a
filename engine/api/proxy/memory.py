"""The proxy's use of the vault: recall before a turn, record the turn and the reply, report trouble.

None of it may stand between the user and their model.  Every call here that fails is logged (the exception's
type, never the text: it is the user's conversation) and reported on the change feed as a ``proxy.warning`` — the
desktop's Activity view lists those beside the jobs' warnings — and the chat goes on without memory.  The proxy
also tells the client, in the ``X-Cairn-Memory`` header of the answer (:mod:`engine.api.proxy.forward`).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool

from engine.api.fast_ingest import committed
from engine.events import EventIn
from engine.recall.types import RecallRequest
from engine.vault import Vault

log = logging.getLogger(__name__)

#: Where recorded turns say they came from (the events' ``source``).
SOURCE = "proxy"


@dataclass(frozen=True, slots=True)
class Exchange:
    """One chat request as the proxy records it."""

    conversation_id: str
    protocol: str  # "ollama" or "openai"
    model: str


@dataclass(slots=True)
class ProxyHealth:
    """What went wrong lately, for a status display: failures since start and the last one."""

    failures: int = 0
    last_failure: str = ""
    last_failure_at: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"failures": self.failures, "last_failure": self.last_failure, "last_failure_at": self.last_failure_at}


class ProxyMemory:
    """Recall and recording for the proxy, each failure reported and never raised."""

    def __init__(self, vault: Callable[[], Vault]) -> None:
        self._vault = vault
        self.health = ProxyHealth()

    async def recall(self, exchange: Exchange, query: str) -> str | None:
        """Recall's ``llm_context`` for ``query`` in this conversation; ``""`` when nothing is known, None when
        recall failed (reported)."""
        request = RecallRequest(conversation_id=exchange.conversation_id, query=query)
        try:
            result = await run_in_threadpool(self._vault().recall, request)
        except Exception as exc:
            self.report("recall", exc)
            return None
        return result.llm_context.text.strip()

    async def record(self, exchange: Exchange, role: str, text: str, *, index: int | None = None) -> bool:
        """Store one turn as an event of the conversation; True once committed, False if it failed (reported).

        A user turn carries its position in the conversation and a hash of its text as ``external_id``: a client
        that sends the same turn again (a regenerated answer, a retry) records it once.
        """
        external_id = None
        if index is not None:
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
            external_id = f"{SOURCE}:{index}:{digest}"
        event = EventIn(
            conversation_id=exchange.conversation_id,
            content=text,
            role=role,
            author=exchange.model if role == "assistant" and exchange.model else None,
            occurred_at=time.time(),
            metadata={"via": f"{exchange.protocol} proxy", "model": exchange.model},
            source=SOURCE,
            external_id=external_id,
        )
        try:
            await committed(self._vault().events.submit(event))
        except Exception as exc:
            self.report(f"recording the {role} turn", exc)
            return False
        if role == "assistant":  # one exchange captured: the activity history notes it (no content)
            with contextlib.suppress(Exception):
                self._vault().changes.emit(
                    "proxy.captured", kind="proxy", model=exchange.model, protocol=exchange.protocol
                )
        return True

    def report(self, what: str, exc: BaseException) -> None:
        """Log a failure, count it and put it on the change feed; the chat goes on without memory."""
        text = f"{what} failed ({type(exc).__name__}); the chat was forwarded without memory"
        log.warning("memory proxy: %s", text)
        self.health.failures += 1
        self.health.last_failure = text
        self.health.last_failure_at = time.time()
        try:
            self._vault().changes.emit("proxy.warning", kind="proxy", warnings=[text])
        except Exception as emit_exc:  # the feed itself failing must not end the chat either
            log.warning("memory proxy: could not report a failure (%s)", type(emit_exc).__name__)
