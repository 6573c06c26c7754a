"""The Ollama extraction path: a rendered prompt, JSON-schema output, strict validation.

Evidence that is not a verbatim quote of the message is rejected (recorded in the trace, never stored).  Output
that is not the requested JSON is an :class:`ExtractionError` for the job — never silently an empty list.  A model
that is unreachable, missing or slow raises :class:`~engine.errors.ModelUnavailable`, which the caller turns into
a fallback to the rule path with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.ai.llm import LLM
from engine.errors import VaultError
from engine.facts.types import Evidence, Proposition
from engine.prompts import load_prompt

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "subject": {"type": "string"},
                    "predicate": {"type": "string"},
                    "object": {"type": "string"},
                    "evidence": {"type": "string"},
                    "negated": {"type": "boolean"},
                    "change": {"type": "boolean"},
                },
                "required": ["subject", "predicate", "object", "evidence"],
            },
        }
    },
    "required": ["facts"],
}


class ExtractionError(VaultError):
    """The model answered, but not with what was asked for."""

    code = "extraction_error"


@dataclass(frozen=True, slots=True)
class LLMExtraction:
    """Accepted propositions, rejected items with reasons, and the prompt hash."""

    propositions: tuple[Proposition, ...]
    rejected: tuple[tuple[dict[str, Any], str], ...]
    prompt_hash: str


def extract_with_model(
    llm: LLM,
    text: str,
    *,
    speaker: str,
    event_date: datetime,
    today: datetime,
    predicates: Sequence[tuple[str, str]],
    known: Sequence[str] = (),
    timeout_s: float | None = None,
) -> LLMExtraction:
    """Ask the model for facts in ``text`` and validate its answer.

    Raises:
        ModelUnavailable: the model could not be used (caller falls back to rules).
        ExtractionError: the answer is not valid JSON of the schema.
    """
    prompt = load_prompt("extract_facts")
    system = prompt.render(
        today=f"{today:%Y-%m-%d (%A)}",
        event_date=f"{event_date:%Y-%m-%d %H:%M (%A)}",
        speaker=speaker,
        predicates="\n".join(f"- {name}: {label}" for name, label in predicates),
        known="\n".join(f"- {k}" for k in known) or "- (nothing yet)",
        text=text,
    )
    answer = llm.complete_json(system, "Extract the facts as JSON.", SCHEMA, timeout_s=timeout_s)
    items = _validate_shape(answer)
    accepted: list[Proposition] = []
    rejected: list[tuple[dict[str, Any], str]] = []
    for item in items:
        evidence = item["evidence"].strip()
        start = text.find(evidence) if evidence else -1
        if start < 0:
            rejected.append((item, "evidence is not a verbatim quote of the message"))
            continue
        if not item["object"].strip() or not item["predicate"].strip():
            rejected.append((item, "empty predicate or object"))
            continue
        if not any(c.isalnum() for c in item["predicate"]):
            rejected.append((item, "the predicate has no letters or digits"))
            continue
        subject = item["subject"].strip() or speaker
        if subject.casefold() in ("i", "me", "myself", "speaker", speaker.casefold()):
            subject = speaker
        accepted.append(
            Proposition(
                subject=subject,
                predicate=item["predicate"].strip(),
                object=item["object"].strip(),
                evidence=Evidence(evidence, start, start + len(evidence)),
                extractor=f"{llm.name}",
                negated=bool(item.get("negated", False)),
                change_cue=bool(item.get("change", False)),
                rule=f"prompt:{prompt.name}@{prompt.hash}",
            )
        )
    return LLMExtraction(tuple(accepted), tuple(rejected), prompt.hash)


def _validate_shape(answer: Any) -> list[dict[str, Any]]:
    if not isinstance(answer, dict) or not isinstance(answer.get("facts"), list):
        raise ExtractionError(
            "The model's answer has no 'facts' list.",
            details={"answer_type": type(answer).__name__},
        )
    items: list[dict[str, Any]] = []
    for index, item in enumerate(answer["facts"]):
        if not isinstance(item, dict):
            raise ExtractionError(f"facts[{index}] is not an object.")
        for key in ("subject", "predicate", "object", "evidence"):
            if not isinstance(item.get(key), str):
                raise ExtractionError(f"facts[{index}].{key} is missing or not text.")
        for key in ("negated", "change"):
            if key in item and not isinstance(item[key], bool):
                raise ExtractionError(f"facts[{index}].{key} is not true/false.")
        items.append(item)
    return items
