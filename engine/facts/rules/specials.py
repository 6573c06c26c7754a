"""Clause readings that produce a fact the rule table cannot express: a name after a count, two
objects.

"I have a golden retriever named Max" (the name, not the breed), "I have two kids" (the count), "I
have a shellfish allergy" (the allergen before the noun), "I'm a nurse at St. Mary's" (the employer
after the job).
"""

from __future__ import annotations

import re

from engine.facts.rules.lexicon import OCCUPATIONS, PETS, PROGRAMMING_LANGUAGES, RELATIONS, pet_compound
from engine.facts.rules.model import Found, Head
from engine.facts.rules.text import clean_object, extract_object

_NAME = r"[A-Z][a-zà-ỹ]+(?:\s[A-Z][a-zà-ỹ]+)?"
_HAVE_RELATION_RE = re.compile(
    r"(?P<count>a|an|one|two|three|four|five|six|\d+|any|no|this|my|our)\s+"
    r"(?P<adj>(?:(?!for\b|of\b|in\b|with\b|to\b|and\b|from\b)[\w-]+\s+){0,2}?)"
    r"(?P<noun>" + "|".join(sorted(PETS | set(RELATIONS), key=len, reverse=True)) + r")\b"
    r"(?:\s*,?\s*(?:named|called)\s+(?P<name>" + _NAME + r"))?",
    re.IGNORECASE,
)
_GIFT_RE = re.compile(r"\s+for\s+(?:you|him|her|them|my|our|his|their)\b", re.IGNORECASE)
#: "I have kids", "I don't have pets": a bare plural names the relation when nothing follows it.
_HAVE_PLURAL_RE = re.compile(
    r"(?P<count>)(?P<adj>)(?P<noun>kids|children|sons|daughters|siblings|brothers|sisters|pets|dogs|cats)"
    r"(?P<name>)(?=\s*(?:[,.;!?]|$|\s+(?:and|too|either|yet|anymore|at\s+home)\b))",
    re.IGNORECASE,
)
_MAINLY_RE = re.compile(r"\b(?:mostly|mainly|primarily|usually)\b", re.IGNORECASE)
_CODE_IN_RE = re.compile(
    r"(?:code|codes|coding|program|programs|programming|write|writes|work|works)\s+(?:in\s+)?",
    re.IGNORECASE,
)
_JOB_AT_RE = re.compile(
    r"(?:a|an)\s+(?P<job>(?:[\w-]+\s+){0,3}?(?P<noun>[\w-]+))\s+(?:at|for|with)"
    r"\s+(?P<org>[A-Z][\w&.'-]*"
    r"(?:\s+(?:of\s+)?[A-Z][\w&.'-]*){0,3})"
)


def have_relation(text: str, head: Head, limit: int) -> Found | None:
    """ "I have two kids", "I've got a dog named Max", "I don't have any pets"."""
    if head.mode != "have" or head.tense not in ("present", "perfect"):
        return None
    m = _HAVE_RELATION_RE.match(text, head.pos, limit) or _HAVE_PLURAL_RE.match(text, head.pos, limit)
    if not m or _GIFT_RE.match(text, m.end(), limit):
        return None  # "I got this pup for you": a gift for someone else, not the speaker's pet
    noun = m.group("noun").casefold()
    predicate = "has_pet" if noun in PETS else RELATIONS[noun]
    if m.group("name"):
        obj = m.group("name")
    elif predicate in ("has_friend", "has_colleague", "has_manager", "has_relative"):
        return None  # "I have a friend" says nothing worth keeping without the friend's name
    else:
        count = m.group("count")
        noun_text = pet_compound(text, m.group("noun"), m.end("noun"))
        obj = (
            f"{count} {m.group('adj')}{noun_text}"
            if count.casefold() not in ("a", "an", "any", "no", "this", "my", "our")
            else f"{m.group('adj')}{noun_text}"
        )
    cleaned = clean_object(obj, "np")
    if cleaned is None:
        return None
    negated = head.negated or m.group("count").casefold() == "no"
    return Found(head.subject, predicate, cleaned, "have.relation", negated=negated)


def have_allergy(text: str, head: Head, limit: int) -> Found | None:
    """ "I have a shellfish allergy" / "I've got a bad peanut allergy"."""
    if head.mode != "have":
        return None
    m = re.compile(
        r"(?:an?\s+)?(?:severe\s+|mild\s+|bad\s+|slight\s+)?(?P<what>[\w-]+(?:\s+[\w-]+)?)\s+"
        r"allerg(?:y|ies)\b",
        re.IGNORECASE,
    ).match(text, head.pos, limit)
    if not m:
        return None
    obj = clean_object(m.group("what"), "np")
    return Found(head.subject, "has_allergy", obj, "have.allergy", negated=head.negated) if obj else None


def job_at(text: str, head: Head, limit: int) -> Found | None:
    """The employer in "I'm a nurse at St. Mary's" (the job itself comes from ``be.a``)."""
    if head.mode != "be" or head.tense != "present" or head.negated or head.person == "we":
        return None
    m = _JOB_AT_RE.match(text, head.pos, limit)
    if not m or m.group("noun").casefold() not in OCCUPATIONS:
        return None
    org = extract_object(text, m.start("org"), limit, "name")
    return Found(head.subject, "works_at", org, "be.job-at") if org else None


def main_language(text: str, head: Head, limit: int) -> Found | None:
    """ "I mostly code in Rust", "I mainly write Python": the programming language someone works in
    most.
    """
    if head.mode != "verb" or head.tense not in ("present", "progressive") or head.negated:
        return None
    if not _MAINLY_RE.search(text, head.start, head.pos):
        return None
    m = _CODE_IN_RE.match(text, head.pos, limit)
    if not m:
        return None
    obj = extract_object(text, m.end(), limit, "np")
    if obj is None or obj.split()[0].casefold() not in PROGRAMMING_LANGUAGES:
        return None
    return Found(head.subject, "primary_language", obj, "code.mainly")


SPECIALS = (have_relation, have_allergy, job_at, main_language)
