"""The rule fast path of stage 2 (Extract): ``extract(text, speaker=…, catalog=…)`` → propositions.

For each sentence of the kept segments, skip what asserts nothing (questions, hypotheticals), then
find clause heads and run the rules for their verb, the sentence-level shapes (possessives,
favourites, relatives, deadlines, issues) and the Vietnamese patterns.  Every proposition quotes its
whole sentence as evidence, at exact offsets, and names the rule that produced it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from engine.errors import ValidationError
from engine.facts.catalog import Catalog
from engine.facts.rules import classify as c
from engine.facts.rules.copula import BE_RULES
from engine.facts.rules.heads import clause_starts, parse_head
from engine.facts.rules.lexicon import (
    CHAT_VERBS,
    EXERCISE_VERBS,
    FREQUENCY_RE,
    FUTURE_RE,
    HABIT_VERBS,
    HOBBY_ACTIVITIES,
    IRREGULAR_ACTIONS,
    NOT_ACTIONS,
    OFTEN_RE,
    VAGUE_GERUNDS,
)
from engine.facts.rules.life import life_facts
from engine.facts.rules.life.events import events
from engine.facts.rules.life.people import earlier_messages
from engine.facts.rules.mentions import (
    asides,
    deadlines,
    everyday,
    feelings,
    issues,
    subject_phrases,
)
from engine.facts.rules.model import Found, Head, Person, Rule, Sentence
from engine.facts.rules.possession import HAVE_RULES
from engine.facts.rules.possessive import favorites, possessives, relatives, values
from engine.facts.rules.specials import SPECIALS
from engine.facts.rules.subjects import other_subject
from engine.facts.rules.text import (
    Span,
    bound_object,
    clean_object,
    embedded_questions,
    extract_object,
    has_change_cue,
    has_reporting,
    quoted_spans,
    reported_before,
    sentences,
    skip_reason,
)
from engine.facts.rules.verbs_events import EVENT_RULES
from engine.facts.rules.verbs_prefs import PREFERENCE_RULES
from engine.facts.rules.verbs_state import STATE_RULES
from engine.facts.rules.vietnamese import extract_vietnamese
from engine.facts.types import Evidence, Proposition


def _index(
    rules: Sequence[Rule],
) -> tuple[dict[tuple[str, str], list[Rule]], dict[str, list[Rule]]]:
    keyed: dict[tuple[str, str], list[Rule]] = {}
    wildcard: dict[str, list[Rule]] = {}
    for r in rules:
        if r.keys:
            for key in r.keys:
                keyed.setdefault((r.mode, key), []).append(r)
        else:
            wildcard.setdefault(r.mode, []).append(r)
    return keyed, wildcard


_KEYED, _WILDCARD = _index((*STATE_RULES, *PREFERENCE_RULES, *EVENT_RULES, *BE_RULES, *HAVE_RULES))

#: Life facts that name a relation or trait in passing and leave the rest of their clause to the verb rules.
_UNCLAIMING = frozenset(
    {
        "has_partner",
        "has_spouse",
        "has_child",
        "has_sibling",
        "has_parent",
        "has_relative",
        "has_friend",
        "has_colleague",
        "has_manager",
        "has_pet",
        "pet_breed",
        "has_age",
        "holds_view",
    }
)

#: Sentence-level shapes, run before the clause heads.
SHAPES = (
    possessives,
    favorites,
    values,
    relatives,
    subject_phrases,
    feelings,
    deadlines,
    issues,
    everyday,
    asides,
)


def extract(
    text: str,
    *,
    speaker: str,
    catalog: Catalog,
    segments: Sequence[tuple[int, int]] | None = None,
    commands: Sequence[tuple[int, int]] = (),
    earlier: Sequence[str] = (),
) -> list[Proposition]:
    """Propositions the rules find in ``text``, each with verbatim evidence at exact offsets.

    Args:
        text: the (firewalled) text of one event or span.
        speaker: who said it: ``"user"`` for the vault owner, or the author's name in a group
        transcript. First-person statements are about the speaker; third-person ones about the named
        person. catalog: the predicate catalog; only its predicates are emitted. segments: ``(start,
        end)`` spans to extract from (the classifier's kept sentences); None = all. earlier: the speaker's
        messages just before this one, oldest first — only for what a pronoun with nobody to point back to in
        this text refers to ("his birthday is the 22nd" after "Lwazi's birthday is 27 July"); nothing is
        extracted from them.

    Raises:
        ValidationError: a segment lies outside the text or ends before it starts.
    """
    spans = _check_segments(text, segments)
    requests = set(_check_segments(text, commands)) if commands else set()
    with earlier_messages(earlier):
        return _extract(text, spans, requests, speaker, catalog)


def _extract(
    text: str, spans: list[tuple[int, int]], requests: set[tuple[int, int]], speaker: str, catalog: Catalog
) -> list[Proposition]:
    out: list[Proposition] = []
    seen: set[tuple[str, str, str, bool]] = set()
    for start, end in sorted(set(spans) | requests):
        request = (start, end) in requests and (start, end) not in spans
        for sentence in sentences(text, start, end):
            quote = text[sentence.start : sentence.end]
            facts = (
                _request_facts(text, sentence, speaker, catalog)
                if request
                else _sentence_facts(text, sentence, speaker, catalog)
            )
            for found in _distinct(facts):
                if found.predicate not in catalog:
                    continue
                key = (
                    found.subject.casefold(),
                    found.predicate,
                    found.object.casefold(),
                    found.negated,
                )
                if key in seen:
                    continue
                seen.add(key)
                out.append(
                    Proposition(
                        subject=found.subject,
                        predicate=found.predicate,
                        object=found.object,
                        evidence=Evidence(quote, sentence.start, sentence.end),
                        extractor="rules",
                        negated=found.negated,
                        change_cue=found.change or (found.span is None and has_change_cue(quote)),
                        rule=found.rule,
                        clause=found.span,
                        tense=found.time,
                    )
                )
    return out


def _request_facts(text: str, span: Span, speaker: str, catalog: Catalog) -> Iterator[Found]:
    """What a request says in passing about the speaker's dated events ("help me with a speech for Beatriz's
    party on the 14th"): the event shape only, nothing else of a sentence that asserts nothing."""
    quote = text[span.start : span.end]
    sentence = Sentence(text, span.start, span.end, (), speaker, quote.casefold())
    for found in events(sentence, catalog):
        if found.predicate in ("has_event", "has_birthday"):
            yield found


def _distinct(found: Iterator[Found]) -> list[Found]:
    """One sentence's facts without the tail copies a later clause start reads ("… education and
    infrastructure is interesting" also matches from "infrastructure"): a shorter object that ends a
    longer one of the same subject and predicate is dropped.  So is the bare mention of a relative
    ("my wife" → has_spouse wife) when the sentence also names that relative ("My wife is Anna"):
    the mention is the same person, and as a second value of a single-valued slot it would
    contradict the name.
    """
    facts = [f for f in (_unadorned(f) for f in found) if f.object.strip()]
    named = {(f.subject, f.predicate) for f in facts if f.rule != "relative.mention"}
    keep: list[Found] = []
    for f in facts:
        if f.rule == "relative.mention" and (f.subject, f.predicate) in named:
            continue
        tail = " " + f.object.casefold()
        if any(
            g is not f
            and g.subject == f.subject
            and g.predicate == f.predicate
            and len(g.object) > len(f.object)
            and g.object.casefold().endswith(tail)
            for g in facts
        ):
            continue
        keep.append(f)
    return keep


#: Emoji and pictographs: a value stops at the first ("GOT THE JOB 🎉🎉🎉 ok so …" → "JOB").
_PICTOGRAPH_RE = re.compile("[\u2600-\u27bf\U0001f000-\U0001faff\ufe0f]")


def _unadorned(found: Found) -> Found:
    """The value without what follows an emoji in it: chat punctuates with emoji, and a value read across one runs
    into the next thought."""
    m = _PICTOGRAPH_RE.search(found.object)
    if m is None:
        return found
    rest = _PICTOGRAPH_RE.sub("", found.object[m.start() :]).strip()
    if re.match(r"(?:and|or|&|,)\s", rest + " "):  # "hiking 🥾 and baking": a list goes on
        return replace(found, object=re.sub(r"\s{2,}", " ", _PICTOGRAPH_RE.sub("", found.object)).strip())
    return replace(found, object=found.object[: m.start()].strip(" ,;:-—–"))


def _check_segments(text: str, segments: Sequence[tuple[int, int]] | None) -> list[tuple[int, int]]:
    if segments is None:
        return [(0, len(text))]
    for start, end in segments:
        if not (0 <= start <= end <= len(text)):
            raise ValidationError("segments", f"segment ({start}, {end}) is outside the text of length {len(text)}")
    return sorted(set(segments))


def _sentence_facts(text: str, span: Span, speaker: str, catalog: Catalog) -> Iterator[Found]:
    quote = text[span.start : span.end]
    reason = skip_reason(quote)
    if reason == "question":
        return
    quotes = quoted_spans(text, span.start, span.end)

    def outside_quotes(pos: int) -> bool:
        return not quotes or not any(q.start <= pos < q.end for q in quotes)

    reporting = has_reporting(text, span.start, span.end)
    asked = embedded_questions(text, span.start, span.end) if " if " in quote else []
    starts = tuple(
        p
        for p in clause_starts(text, span.start, span.end)
        if outside_quotes(p)
        and not (reporting and reported_before(text, span.start, p))
        and not any(q.start <= p < q.end for q in asked)
    )
    sentence = Sentence(text, span.start, span.end, starts, speaker, quote.casefold())
    claimed: list[tuple[int, int]] = []
    for found in life_facts(sentence, catalog):
        if found.span is not None and found.predicate not in _UNCLAIMING:
            claimed.append(found.span)
        yield found
    if reason is not None:
        # a hypothetical somewhere in the sentence ("…, so I suppose he would be …"): the life shapes judged each
        # clause on its own; the other rules read whole sentences and take none of it
        return
    for shape in SHAPES:
        yield from shape(sentence, catalog)
    implicit: tuple[str, Person] | None = (speaker, "first")
    chained = past_chain = False
    for pos in starts:
        if other_subject(text, pos, span.end):
            # "You'll love exploring …, admiring …": later clauses share that subject, not a dropped
            # "I".
            implicit = None
            continue
        parsed = parse_head(
            text,
            pos,
            span.end,
            speaker,
            implicit,
            chained=chained,
            first=pos == starts[0],
            past_chain=past_chain,
        )
        if parsed is None:
            continue
        head, _relation = parsed
        if any(a <= head.pos < b for a, b in claimed):
            # the life shapes read this clause already ("moved to Lisbon" is a move, not an activity)
            implicit, chained = (head.subject, head.person), True
            continue
        implicit, chained = (head.subject, head.person), True
        past_chain = head.tense in ("past", "perfect")
        if outside_quotes(head.start):
            yield from _clause_facts(text, head, span.end, pos)
    yield from extract_vietnamese(text, span.start, span.end, speaker)


def _clause_facts(text: str, head: Head, limit: int, clause_start: int) -> Iterator[Found]:
    head = _with_future(text, head, limit, clause_start)
    fired = False
    for r in (*_KEYED.get((head.mode, head.word), ()), *_WILDCARD.get(head.mode, ())):
        found = _apply(r, head, text, limit)
        if found:
            yield from found
            fired = True
            break
    for special in SPECIALS:
        extra = special(text, head, limit)
        if extra is not None:
            fired = True
            yield extra
    if not fired and head.mode == "verb":
        generic = _generic(text, head, limit)
        if generic is not None:
            yield generic


def _with_future(text: str, head: Head, limit: int, clause_start: int) -> Head:
    """A progressive with a future time ("I'm hiking this weekend", "Next month I'm having a show")
    is a plan.
    """
    if head.tense != "progressive":
        return head
    _, end = bound_object(text, head.pos, limit, "event")
    if FUTURE_RE.search(text, clause_start, end) is None:
        return head
    return Head(
        head.subject,
        head.person,
        head.start,
        head.pos,
        head.mode,
        "future",
        head.negated,
        head.word,
        head.aux,
    )


def _apply(r: Rule, head: Head, text: str, limit: int) -> list[Found]:
    if head.person not in r.persons:
        return []
    if head.tense in r.tenses or (head.tense == "used_to" and "past" in r.tenses):
        predicate = r.predicate
    elif head.tense in ("past", "used_to") and r.past is not None:
        predicate = r.past
    else:
        return []
    negated = False
    if head.negated:
        if r.negation == "skip":
            return []
        if r.negation == "flag":
            negated = True
        elif r.negation != "require":
            predicate = r.negation
    elif r.negation == "require":
        return []
    m = r.lead.match(text, head.pos, limit)
    if not m:
        return []
    obj = extract_object(text, m.end(), limit, r.kind)
    if obj is None:
        return []
    if callable(predicate):
        choice = predicate(obj)
        if choice is None:
            return []
        name, obj = choice if isinstance(choice, tuple) else (choice, obj)
    else:
        name = predicate
    if r.negation not in ("flag", "skip", "require") and head.negated and name == r.predicate:
        name = r.negation
    found = [Found(head.subject, name, obj, r.name, negated=negated, change=r.change)]
    if r.also and c.is_proper(obj) and not negated:
        found.extend(Found(head.subject, extra, obj, r.name, change=True) for extra in r.also)
    return found


def _generic(text: str, head: Head, limit: int) -> Found | None:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """What a verb clause says when no rule knows its verb: a plan, a habit or an activity."""
    word = head.word
    if head.tense == "future" and not head.negated:
        if word in CHAT_VERBS or word in VAGUE_GERUNDS:
            return None
        if head.aux == "will" and FUTURE_RE.search(text, head.pos, limit) is None:
            return None  # "I'll bring some snacks": a promise in conversation, not a plan with a time
        obj = extract_object(text, head.pos, limit, "phrase")
        if obj is None:
            return None
        choice = c.plan(obj)
        if choice is None:
            return None
        name, obj = choice if isinstance(choice, tuple) else (choice, obj)
        return Found(head.subject, name, obj, "generic.future")
    if head.tense in ("present", "perfect_prog") and not head.negated:
        habit = _habit(text, head, limit)
        if habit is not None:
            return habit
    if (
        head.tense == "present"
        and not head.negated
        and not head.aux
        and head.person in ("first", "we")
        and word in HABIT_VERBS
    ):
        # "I color-code achievements so I can track my progress": the plain present of a verb of doing is
        # what the speaker habitually does
        obj = extract_object(text, head.pos, limit, "phrase")
        if obj is not None and word == "tend":
            obj = re.sub(r"^tend\s+to\s+(?:just\s+|usually\s+)?", "", obj)
        if obj is not None and len(obj.split()) >= 2 and c.activity(obj) is not None:
            return Found(head.subject, "does_regularly", obj, "generic.present")
    if head.tense == "perfect_prog" and word in HOBBY_ACTIVITIES and not head.negated:
        # "I've been running / reading / painting a lot": a pastime the person keeps up.
        obj = extract_object(text, head.pos, limit, "np")
        if obj is not None:
            return Found(head.subject, "has_hobby", obj, "generic.hobby")
    if head.tense in ("progressive", "perfect_prog") and word.endswith("ing") and word not in VAGUE_GERUNDS:
        obj = extract_object(text, head.pos, limit, "phrase")
        if obj is None:
            return None
        if head.tense == "perfect_prog" and word in HOBBY_ACTIVITIES:
            return Found(head.subject, "has_hobby", obj, "generic.hobby", negated=head.negated)
        if len(obj.split()) < 2:
            return None  # "Uplifting!", "I've been decompressing": no activity named beyond the verb
        return Found(head.subject, "currently_doing", obj, "generic.activity", negated=head.negated)
    if (
        head.tense in ("past", "perfect")
        and not head.negated
        and (_is_action(word) or (head.aux in ("was", "were") and word.endswith("ing") and word not in VAGUE_GERUNDS))
    ):
        obj = extract_object(text, head.pos, limit, "phrase")
        if obj is not None and c.activity(obj) is not None:
            return Found(head.subject, "did_activity", obj, "generic.past")
    return None


def _is_action(word: str) -> bool:
    """A past-tense verb of doing: regular "-ed" forms and the common irregular ones, minus thinking
    and saying.
    """
    if word in NOT_ACTIONS:
        return False
    return word.endswith("ed") or word in IRREGULAR_ACTIONS


def _habit(text: str, head: Head, limit: int) -> Found | None:
    """ "I run 5 km daily", "I call my parents every Sunday" → exercises / does_regularly."""
    _, end = bound_object(text, head.pos, limit, "event")
    m = FREQUENCY_RE.search(text, head.pos, end)
    if m is None and head.person == "first" and head.tense == "present" and not head.aux:
        m = OFTEN_RE.search(text, head.pos, end)
    if m is None or head.word in CHAT_VERBS - {"make", "get", "have"}:
        return None
    obj = clean_object(text[head.pos : m.start()], "phrase")
    if obj is None:
        return None
    words = set(c.words(obj))
    name = "exercises" if words & EXERCISE_VERBS or "gym" in words else "does_regularly"
    return Found(head.subject, name, obj, "generic.habit")
