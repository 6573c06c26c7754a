"""Distillations: a short summary per section and one per document, made after upload (the ``distill_document``
job).  Extractive without a model (the most informative sentences, in order), Ollama's when one is in use.

With a model, each section is summarised from its text and the document from its sections' titles and summaries
(``resources/prompts/distill_section.md`` and ``distill_document.md``, rendered at call time, answered as JSON
against a schema and validated).  A failure falls back to the extractive summary for that section or for the
document, with a warning on the job; once the model is found unreachable the rest of the job stays extractive
rather than waiting out one timeout per section.  Every distillation is labelled with what produced it
(``distiller``: ``extractive`` or ``ollama:<model>``), so a summary is never credited to a model that did not write
it.  When done the document is ``ready``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from engine.ai.llm import LLM
from engine.errors import ModelUnavailable
from engine.jobs import Job, JobOutcome, each_job, finish_jobs
from engine.prompts import load_prompt
from engine.store import Store, Tx
from engine.vectors import VectorItem
from engine.vectors.base import VectorIndex
from engine.vectors.migration import queue_vectors

log = logging.getLogger(__name__)

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_WORD = re.compile(r"\w+", re.UNICODE)
SECTION_CHARS = 400
DOCUMENT_CHARS = 800
MODEL_SECTIONS = 30  # beyond this many sections, the rest are distilled extractively (cost bound)
#: The longest section list the document prompt is given (titles and summaries; later sections are left out).
DOCUMENT_PROMPT_CHARS = 12_000
#: A model's document summary longer than this is not a summary: it is rejected (extractive instead).
MODEL_SUMMARY_MAX_CHARS = 2_000
_SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"summary": {"type": "string"}},
    "required": ["summary"],
}


def extractive(text: str, limit: int) -> str:
    """The sentences with the most distinct content words, kept in their order, within ``limit`` characters."""
    sentences = [m.group().strip() for m in _SENTENCE.finditer(text) if len(m.group().split()) >= 5]
    if not sentences:
        return " ".join(text.split())[:limit]
    scored = sorted(
        range(len(sentences)), key=lambda i: -len({w.casefold() for w in _WORD.findall(sentences[i]) if len(w) > 3})
    )
    chosen: list[int] = []
    used = 0
    for i in scored:
        if used + len(sentences[i]) > limit and chosen:
            continue
        chosen.append(i)
        used += len(sentences[i]) + 1
        if used >= limit:
            break
    return " ".join(sentences[i] for i in sorted(chosen))


class Distiller:
    """The ``distill_document`` job handler."""

    def __init__(
        self,
        store: Store,
        embed: Callable[[list[str]], Any],
        vectors: VectorIndex,
        llm: Callable[[], LLM | None],
        timeout_s: float,
    ) -> None:
        self._store = store
        self._embed = embed
        self._vectors = vectors
        self._llm = llm
        self._timeout_s = timeout_s

    def __call__(self, jobs: Sequence[Job]) -> list[JobOutcome]:
        """Distil each job's document."""
        return each_job(jobs, self._distil)

    def _distil(self, job: Job) -> list[str]:
        document_id = int(job.payload["document_id"])
        rows = self._store.query(
            "SELECT name, user_id, content_hash, status FROM documents WHERE id = ?", (document_id,)
        )
        if not rows or rows[0][2] != job.payload.get("content_hash"):
            self._store.write(lambda tx: finish_jobs(tx, [job.id]))  # deleted, or replaced by a newer upload
            return []
        name, user_id, _digest, _status = rows[0]
        sections = self._store.query(
            "SELECT se.id, se.title, group_concat(sp.text, ' ') FROM sections se LEFT JOIN spans sp "
            "ON sp.section_id = se.id WHERE se.document_id = ? GROUP BY se.id ORDER BY se.ordinal",
            (document_id,),
        )
        warnings: list[str] = []
        llm = self._llm()
        section_texts: list[tuple[int, str, str]] = []
        titled: list[tuple[str, str]] = []
        for index, (section_id, title, text) in enumerate(sections):
            body = str(text or "")
            summary, engine = "", "extractive"
            if llm is not None and index < MODEL_SECTIONS and body.strip():
                try:
                    summary, engine = self._model_summary(llm, str(name), str(title), body), llm.name
                except ModelUnavailable as exc:
                    warnings.append(f"section {title or index + 1}: extractive summary ({exc})")
                    if not _answered(exc):
                        llm = None  # unreachable: no further calls in this job, each would wait out its timeout
                except ValueError as exc:
                    warnings.append(f"section {title or index + 1}: extractive summary ({exc})")
            section_texts.append((int(section_id), summary or extractive(body, SECTION_CHARS), engine))
            titled.append((str(title or f"Section {index + 1}"), section_texts[-1][1]))
        document_summary, document_engine = self._document_summary(llm, str(name), titled, warnings)
        texts = [s for _i, s, _e in section_texts] + [document_summary or str(name)]
        vectors = None
        try:
            vectors = self._embed(texts)
        except ModelUnavailable as exc:
            warnings.append(f"embedder unavailable, vectors queued: {exc.message}")

        def write(tx: Tx) -> None:
            if tx.scalar("SELECT content_hash FROM documents WHERE id = ?", (document_id,)) != job.payload.get(
                "content_hash"
            ):
                finish_jobs(tx, [job.id])
                return
            for section_id, summary, engine in section_texts:
                tx.execute(
                    "UPDATE sections SET distillation = ?, distiller = ? WHERE id = ?", (summary, engine, section_id)
                )
            # A document stored degraded (past a section or span cap) is distilled like any other but keeps its
            # status and the reason that says what the cap did.
            tx.execute(
                "UPDATE documents SET distillation = ?, distiller = ?, "
                "status = CASE status WHEN 'degraded' THEN 'degraded' ELSE 'ready' END, "
                "status_reason = CASE status WHEN 'degraded' THEN status_reason END, updated_at = ? WHERE id = ?",
                (document_summary, document_engine, tx.now, document_id),
            )
            if vectors is None:
                queue_vectors(
                    tx,
                    self._vectors.space_id,
                    [(sid, "section", str(user_id), "section") for sid, _s, _e in section_texts]
                    + [(document_id, "document", str(user_id), "document")],
                )
            else:
                items = [
                    VectorItem(sid, "section", str(user_id), vectors[i], "section")
                    for i, (sid, _s, _e) in enumerate(section_texts)
                ]
                items.append(VectorItem(document_id, "document", str(user_id), vectors[-1], "document"))
                self._vectors.add(tx, items)
            tx.emit("document.ready", document_id, name=str(name), user_id=str(user_id))
            finish_jobs(tx, [job.id])

        self._store.write(write)
        return warnings

    def _document_summary(
        self, llm: LLM | None, name: str, sections: Sequence[tuple[str, str]], warnings: list[str]
    ) -> tuple[str, str]:
        """The document's distillation and what produced it: the model from the section summaries, else extractive.

        A model failure (unreachable, invalid or empty answer) adds a warning and falls back to the extractive
        summary of the section summaries.
        """
        joined = " ".join(summary for _title, summary in sections)
        fallback = extractive(joined, DOCUMENT_CHARS) if joined.strip() else ""
        if llm is None or not joined.strip():
            return fallback, "extractive"
        try:
            return self._model_document_summary(llm, name, sections), llm.name
        except (ModelUnavailable, ValueError) as exc:
            warnings.append(f"document: extractive summary ({exc})")
            return fallback, "extractive"

    def _model_document_summary(self, llm: LLM, name: str, sections: Sequence[tuple[str, str]]) -> str:
        listed: list[str] = []
        used = 0
        for title, summary in sections:
            entry = f"## {title}\n{summary}"
            if used + len(entry) > DOCUMENT_PROMPT_CHARS and listed:
                break
            listed.append(entry)
            used += len(entry) + 2
        text = load_prompt("distill_document").render(
            today=f"{datetime.now(UTC):%Y-%m-%d}",
            document=name,
            count=str(len(sections)),
            sections="\n\n".join(listed),
        )
        answer = llm.complete_json(text, "Answer as JSON.", _SUMMARY_SCHEMA, timeout_s=self._timeout_s)
        return _validated_summary(answer, MODEL_SUMMARY_MAX_CHARS)

    def _model_summary(self, llm: LLM, document: str, title: str, body: str) -> str:
        prompt = load_prompt("distill_section")
        text = prompt.render(
            today=f"{datetime.now(UTC):%Y-%m-%d}", document=document, section=title or "(untitled)", body=body[:8000]
        )
        answer = llm.complete_json(text, "Answer as JSON.", _SUMMARY_SCHEMA, timeout_s=self._timeout_s)
        return _validated_summary(answer, MODEL_SUMMARY_MAX_CHARS)


def _answered(exc: ModelUnavailable) -> bool:
    """True when the model did answer, only not in JSON (the client keeps the answer's start): worth asking again."""
    return "answer_start" in exc.details


def _validated_summary(answer: object, limit: int) -> str:
    """The ``summary`` of a model's answer; ``ValueError`` when it is missing, empty or far too long."""
    if not isinstance(answer, dict) or not isinstance(answer.get("summary"), str) or not answer["summary"].strip():
        raise ValueError("the model's summary is missing or empty")
    summary = " ".join(str(answer["summary"]).split())
    if len(summary) > limit:
        raise ValueError(f"the model's summary is {len(summary)} characters, more than {limit}")
    return summary
