"""Query analysis: what a recall query asks for (DESIGN §5 step 1).

Rules decide, always: the **mode** (``broad`` profile/summary, ``direct`` a specific fact, ``indirect``
advice/planning), the **predicates** the query targets (catalog cues, then nearest predicate descriptions by
embedding), the **subjects and speakers** it names (known subject names and aliases; first person → the vault
owner), a **time window** (temporal expressions resolved against ``reference_time``), a **named section** ("the
Installation section of the README"), and the **keywords** for full-text search.  When a model is in use it may
refine mode and keywords under a short timeout and rewrite the question as statements the answer would appear in;
the channels search those rewrites too.  The rule result stands whenever the model is slow or fails.

An ``indirect`` question ("what should I cook tonight?") rarely shares words with its answer, so its predicates are
expanded: more of the nearest predicate descriptions are kept, at a lower similarity, than for a direct question.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.ai.embedders import Embedder
from engine.ai.llm import LLM
from engine.errors import ModelUnavailable
from engine.facts.catalog import Catalog
from engine.facts.model import Fact
from engine.prompts import load_prompt
from engine.recall.slots import SlotQuestion, slot_question, slot_rank
from engine.recall.types import Mode, TimeWindow
from engine.temporal import find_mentions
from engine.vectors.ops import matvec

_WORD = re.compile(r"[\w'’-]+", re.UNICODE)
STOP = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being am do does did done
    have has had having i me my mine we us our you your yours he him his she her hers it its they them their this
    that these those there here what which who whom whose when where why how not no any some all about into over
    than then so too very can could would should will shall may might must just also ever yet still s t d ll re ve
    m tell know say said remember give show please anything something everything thing things recall""".split()
)
_BROAD = re.compile(
    r"\b(what do you know about|tell me (?:everything )?about|summar(?:y|ise|ize)|profile|who am i|about me\b|"
    r"overview|remind me (?:what|who)|what have i told you|describe (?:me|him|her|them))",
    re.IGNORECASE,
)
#: Asking for a judgement or a plan: indirect whatever else the question says.
_INDIRECT = re.compile(
    r"\b(should (?:i|we|he|she|they)|help me (?:plan|decide|choose|pick)|"
    r"what would be (?:a )?good|how (?:can|could|should) (?:i|we)|plan (?:a|my|our)|gift for|what to (?:buy|get|do)|"
    r"would .{1,40} (?:like|enjoy|prefer)|likely)",
    re.IGNORECASE,
)
#: Words of advice: a request for advice ("any ideas for the weekend?", "can you recommend a book?") unless the
#: question reports advice already given ("what did Ana recommend?", "what advice does Tom give?"), which asks
#: for a recorded fact like any direct question.
_ADVICE = re.compile(r"\b(recommend|suggest|ideas? for|advice)", re.IGNORECASE)
_REPORTED = re.compile(
    r"\b(did|does|has|had|gave|given|received|recommended|suggested|advised)\b"
    r"|['’]s (?:suggestion|advice|recommendation)",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(i|me|my|mine|myself|i'm|i've|i'd)\b", re.IGNORECASE)
_SECTION = re.compile(
    r"(?P<before>[\w'’\"“”&/\- ]{1,80}?)\s+(?:section|chapter|part)\b"
    r"(?:\s+(?:of|in|from)\s+(?:the\s+|my\s+)?[\"“']?(?P<document>[^\s?!,\"”']+(?:\s+[^\s?!,\"”']+){0,4}))?",
    re.IGNORECASE,
)
_SECTION_STOP = frozenset(
    "the a an my your our this that of in from show me what does do is are about tell "
    "summarise summarize read open give find".split()
)
#: Nearest predicate descriptions kept for a direct question, and their similarity floor; an indirect one keeps
#: more, lower.
PREDICATE_SIM = 0.45
INDIRECT_PREDICATES = 6
INDIRECT_PREDICATE_SIM = 0.35
_NOW = re.compile(r"\b(?:now|right\s+now|currently|these\s+days|at\s+the\s+moment|nowadays|today|still)\b", re.I)
_WHEN = re.compile(r"^\s*(when|what (?:date|day|time|year|month)|how long ago|since when)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    """Everything recall knows about a query before searching."""

    query: str
    mode: Mode
    predicates: tuple[str, ...]
    subjects: tuple[str, ...]
    subject_ids: tuple[int, ...]
    temporal: TimeWindow | None
    asks_when: bool
    keywords: tuple[str, ...]
    section: str | None
    section_document: str | None
    used_queries: tuple[str, ...]
    engine: str
    notes: tuple[str, ...] = ()
    #: The keywords of each model rewrite (``used_queries[1:]``, same order), searched beside :attr:`keywords`.
    rewrite_keywords: tuple[tuple[str, ...], ...] = ()
    #: A personal question's slot (:mod:`engine.recall.slots`): its predicates, best first, and whose slots they
    #: are; facts of those slots rank first.
    slot_predicates: tuple[str, ...] = ()
    slot_subject_ids: tuple[int, ...] = ()
    #: The question asks about now ("now", "right now", "currently", "these days"): a value that only holds from a
    #: later date is not the answer.
    asks_now: bool = False

    def slot_rank_of(self, fact: Fact, reference: datetime) -> int | None:
        """Where ``fact`` stands among this personal question's answers (0 = the asked slot itself), or None when it
        is not part of the asked slots (:func:`engine.recall.slots.slot_rank`)."""
        return slot_rank(
            fact.predicate,
            fact.object_text,
            fact.subject_id,
            fact.valid_from,
            predicates=self.slot_predicates,
            subject_ids=self.slot_subject_ids,
            reference=reference,
            now=self.asks_now,
        )


#: A question about what several people have or did together, each on their own: "both", "in common", "share".
_JOINT = re.compile(r"\b(?:both|in\s+common|share[sd]?|similar|the\s+same|each)\b", re.IGNORECASE)


def each_subject(text: str, subjects: Sequence[str]) -> list[str]:
    """The question asked of each person it names together ("What movies have both Joanna and Nate seen?" → "What
    movies have Joanna seen?", "What movies have Nate seen?"): the evidence is one person's turn at a time, and a
    turn that names one of them rarely names the other.  Empty unless the question names two or more people and
    asks what they have together."""
    names = [n for n in dict.fromkeys(subjects) if n and n.casefold() != "user"]
    if len(names) < 2 or not _JOINT.search(text):
        return []
    out = []
    for keep in names:
        part = text
        for other in names:
            if other == keep:
                continue
            name = re.escape(other) + r"(?:['’]s)?"
            part = re.sub(rf"\b{name}\s*(?:,|and|&)\s*|\s*(?:,|and|&)\s*{name}\b", " ", part, flags=re.I)
        part = re.sub(r"\bboth\s+", "", part, flags=re.I)
        part = " ".join(part.split())
        if part and part != text:
            out.append(part)
    return out


def keywords_of(text: str) -> tuple[str, ...]:
    """The words of ``text`` worth a full-text search: everything but stop words, in order, once each."""
    words = (w.strip("'’-") for w in _WORD.findall(text))
    return tuple(dict.fromkeys(w for w in words if w and w.casefold() not in STOP))


def _named_section(text: str) -> tuple[str | None, str | None]:
    """ "the Installation section of the README" → ("Installation", "README"): the words right before "section"
    back to the first function word, and the document named after "of/in/from"."""
    found = _SECTION.search(text)
    if not found:
        return None, None
    words = found.group("before").split()
    kept: list[str] = []
    for word in reversed(words):
        if word.casefold().strip("'’\"“”") in _SECTION_STOP or len(kept) >= 4:
            break
        kept.insert(0, word.strip("'’\"“”"))
    section = " ".join(kept) or None
    document = (found.group("document") or "").strip() or None
    return section, document


class QueryAnalyzer:
    """Rule-based analysis, optionally refined by a model."""

    def __init__(self, catalog: Catalog, embedder: Embedder) -> None:
        self._catalog = catalog
        self._embedder = embedder
        self._predicate_matrix: tuple[list[str], npt.NDArray[np.float32]] | None = None

    def analyse(
        self,
        query: str,
        *,
        reference_time: datetime,
        known_subjects: dict[str, int],
        query_vector: npt.NDArray[np.float32] | None,
        llm: LLM | None = None,
        llm_timeout_s: float = 2.0,
        relatives: Callable[[tuple[str, ...]], tuple[int, ...]] | None = None,
    ) -> QueryAnalysis:
        """Analyse ``query``; ``known_subjects`` maps lower-cased names and aliases to subject ids; ``relatives``
        gives the subject ids of the asker's relatives by relationship predicate ("my son" → the children)."""
        text = query.strip()
        words = [w.strip("'’-") for w in _WORD.findall(text)]
        subjects, subject_ids = self._subjects(text, words, known_subjects)
        mentions = find_mentions(text, reference_time, prefer="past") if text else []
        window = None
        if mentions:
            first = mentions[0]
            window = TimeWindow(first.range.start, first.range.end, first.text)
        # words of a time expression ("last weekend") are answered by the time window, not by text matching
        untimed = text
        for mention in reversed(mentions):
            untimed = untimed[: mention.start] + " " + untimed[mention.end :]
        keywords = keywords_of(untimed)
        section, section_doc = _named_section(text)
        mode = self.mode_of(text)
        slot = slot_question(text) if text else None
        predicates = self._predicates(text, query_vector, wide=mode == "indirect")
        if slot is not None:
            predicates = tuple(dict.fromkeys((*slot.predicates, *predicates)))[: max(len(slot.predicates), 4)]
            if mode == "broad" and _BROAD.search(text) is None:
                mode = "direct"
        analysis = QueryAnalysis(
            query=text,
            mode=mode,
            predicates=predicates,
            subjects=subjects,
            subject_ids=subject_ids,
            temporal=window,
            asks_when=bool(_WHEN.search(text)),
            keywords=keywords,
            section=section,
            section_document=section_doc,
            used_queries=(text,),
            engine="rules",
            slot_predicates=slot.predicates if slot is not None else (),
            slot_subject_ids=self._slot_subjects(slot, subject_ids, known_subjects, relatives or {}) if slot else (),
            asks_now=bool(_NOW.search(text)),
        )
        parts = each_subject(text, subjects)
        if parts:
            # "which city have both Jean and John visited": the evidence is one turn of each, found by asking of each
            searched = [(q, keywords_of(q)) for q in parts]
            searched = [(q, k) for q, k in searched if k]
            analysis = replace(
                analysis,
                used_queries=(text, *(q for q, _k in searched)),
                rewrite_keywords=tuple(k for _q, k in searched),
            )
        if analysis.slot_subject_ids:
            # the predicate channel walks the slots of whom the question is about ("my husband" → Youssef)
            analysis = replace(analysis, subject_ids=tuple(dict.fromkeys((*analysis.slot_subject_ids, *subject_ids))))
        if llm is not None and text:
            analysis = self._refine(analysis, llm, llm_timeout_s)
            if analysis.mode == "indirect" and mode != "indirect":
                # the model heard a request for advice the rules missed: expand its predicates as the rules would
                analysis = replace(analysis, predicates=self._predicates(text, query_vector, wide=True))
        return analysis

    @staticmethod
    def _slot_subjects(
        slot: SlotQuestion,
        subject_ids: tuple[int, ...],
        known: dict[str, int],
        relatives: Callable[[tuple[str, ...]], tuple[int, ...]] | Any,
    ) -> tuple[int, ...]:
        """Whose slot a personal question asks about: the named relative, the relatives of that kind, named
        people, or the asker."""
        user = known.get("user")
        if slot.asks_relation:
            return (user,) if user is not None else ()
        if slot.name and slot.name.casefold() in known:
            return (known[slot.name.casefold()],)
        if slot.relation is not None and slot.relation_predicates and callable(relatives):
            found = tuple(relatives(slot.relation_predicates))
            if found:
                return found
        named = tuple(i for i in subject_ids if i != user)
        if named:
            return named
        return (user,) if user is not None else ()

    @staticmethod
    def mode_of(text: str) -> Mode:
        """The rule mode of a query (also used before analysis, to size the early vector scan)."""
        if not text or _BROAD.search(text):
            return "broad"
        if _INDIRECT.search(text) or (_ADVICE.search(text) and not _REPORTED.search(text)):
            return "indirect"
        return "direct"

    def _predicates(
        self, text: str, query_vector: npt.NDArray[np.float32] | None, *, wide: bool = False
    ) -> tuple[str, ...]:
        """Catalog cues first, then the predicates whose descriptions lie nearest the query.

        ``wide`` (indirect questions) keeps more neighbours at a lower similarity: advice draws on whatever the
        person likes, does and avoids, which a planning question names only loosely.
        """
        nearest, floor, cap = (INDIRECT_PREDICATES, INDIRECT_PREDICATE_SIM, 6) if wide else (3, PREDICATE_SIM, 4)
        found = list(self._catalog.predicates_in(text, limit=3)) if text else []
        if query_vector is not None and len(found) < cap - 1:
            try:
                names, matrix = self._predicate_index()
            except ModelUnavailable:
                names, matrix = [], np.zeros((0, 0), dtype=np.float32)  # the embedder is down: cues alone
            if names:
                sims = matvec(matrix, query_vector)
                for index in np.argsort(-sims)[:nearest]:
                    if float(sims[index]) >= floor and names[index] not in found:
                        found.append(names[index])
        return tuple(found[:cap])

    def _predicate_index(self) -> tuple[list[str], npt.NDArray[np.float32]]:
        if self._predicate_matrix is None:
            texts = self._catalog.describe_texts()
            names = list(texts)
            self._predicate_matrix = (names, self._embedder.embed([texts[n] for n in names]))
        return self._predicate_matrix

    @staticmethod
    def _subjects(text: str, words: list[str], known: dict[str, int]) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """Known subject names (and aliases) in the query: every 1–4 word window is looked up, so the cost does
        not grow with the number of subjects the vault knows."""
        names: list[str] = []
        ids: list[int] = []
        tokens = [w.casefold().removesuffix("'s").removesuffix("’s") for w in words]
        for size in (4, 3, 2, 1):
            for start in range(len(tokens) - size + 1):
                name = " ".join(tokens[start : start + size])
                subject_id = known.get(name)
                if subject_id is None or name == "user" or len(name) < 2 or subject_id in ids:
                    continue
                names.append(name)
                ids.append(subject_id)
        if _FIRST_PERSON.search(text) and "user" in known and known["user"] not in ids:
            names.append("user")
            ids.append(known["user"])
        return tuple(names), tuple(ids)

    @staticmethod
    def _refine(analysis: QueryAnalysis, llm: LLM, timeout_s: float) -> QueryAnalysis:
        prompt = load_prompt("analyze_query")
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["broad", "direct", "indirect"]},
                "keywords": {"type": "array", "items": {"type": "string"}},
                "rewrites": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["mode", "keywords"],
        }
        try:
            answer = llm.complete_json(
                prompt.render(query=analysis.query), "Answer as JSON.", schema, timeout_s=timeout_s
            )
        except ModelUnavailable as exc:
            return replace(analysis, notes=(*analysis.notes, f"model analysis skipped: {exc.message}"))
        if not isinstance(answer, dict) or answer.get("mode") not in ("broad", "direct", "indirect"):
            return replace(analysis, notes=(*analysis.notes, "model analysis ignored: invalid answer"))
        extra = [k for k in answer.get("keywords", []) if isinstance(k, str) and k.strip()]
        rewrites = [
            r.strip()
            for r in answer.get("rewrites", [])
            if isinstance(r, str) and r.strip() and r.strip().casefold() != analysis.query.casefold()
        ][:2]
        # a rewrite is searched only if it has words to search with; one that is all stop words is not listed
        searched = [(r, keywords_of(r)) for r in rewrites]
        searched = [(r, k) for r, k in searched if k]
        return replace(
            analysis,
            mode=answer["mode"],
            keywords=tuple(dict.fromkeys([*analysis.keywords, *extra]))[:24],
            # the model's rewrites join the rules' questions of each subject
            used_queries=(*analysis.used_queries, *(r for r, _k in searched)),
            rewrite_keywords=(*analysis.rewrite_keywords, *(k for _r, k in searched)),
            engine=llm.name,
        )
