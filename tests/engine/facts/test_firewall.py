"""The L0 firewall on a generated, labelled corpus: recall, precision, offsets, policies, speed."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest

from engine.config import PrivacySettings
from engine.privacy import (
    PLACEHOLDERS,
    Detection,
    PiiCategory,
    apply,
    claim_type,
    iban_valid,
    looks_random,
    luhn_valid,
    scan,
)
from tests.engine.facts import pii_corpus as corpus

STRUCTURED: tuple[PiiCategory, ...] = ("card", "national_id", "iban", "secret", "email", "phone")
ALL_CATEGORIES: tuple[PiiCategory, ...] = (*STRUCTURED, "password")
POSITIVES = corpus.positives()
NEAR_MISSES = corpus.near_misses()
NEGATIVES = corpus.negative_sentences()


def _exact_hit(case: corpus.Case, found: Sequence[Detection]) -> bool:
    """Every labelled span is found with its category and its exact offsets."""
    got = {(d.category, d.start, d.end) for d in found}
    return all(span in got for span in case.spans)


def _misses(cases: list[corpus.Case]) -> list[tuple[str, list[tuple[str, str]]]]:
    out = []
    for case in cases:
        found = scan(case.text)
        if not _exact_hit(case, found):
            out.append((case.text, [(d.category, case.text[d.start : d.end]) for d in found]))
    return out


# -- the checksums themselves ----------------------------------------------------------------------
def test_luhn_accepts_known_test_numbers_and_rejects_a_changed_digit() -> None:
    for number in ("4111111111111111", "5500005555555559", "378282246310005", "6011111111111117"):
        assert luhn_valid(number)
        assert not luhn_valid(number[:-1] + str((int(number[-1]) + 1) % 10))


def test_luhn_check_digit_of_the_corpus_agrees_with_the_firewall() -> None:
    payload = "411111111111111"
    assert corpus.luhn_check_digit(payload) == "1"
    assert luhn_valid(payload + corpus.luhn_check_digit(payload))


def test_iban_checksum_accepts_published_examples_and_rejects_corruption() -> None:
    for example in (
        "DE89370400440532013000",
        "GB82WEST12345698765432",
        "FR1420041010050500013M02606",
    ):
        assert iban_valid(example)
        assert iban_valid(example.lower())
    assert not iban_valid("DE89370400440532013001")  # last digit changed
    assert not iban_valid("DE8937040044053201300")  # one character short for Germany
    assert not iban_valid("VN12345678901234567890")  # not an IBAN country


def test_corpus_iban_generator_computes_real_check_digits() -> None:
    # the corpus computes check digits itself; they must agree with the published example
    assert corpus.iban_check_digits("DE", "370400440532013000") == "89"
    assert corpus.iban_check_digits("GB", "WEST12345698765432") == "82"


# -- recall per category ---------------------------------------------------------------------------
@pytest.mark.parametrize("category", STRUCTURED)
def test_recall_per_structured_category_is_at_least_95_percent(category: PiiCategory) -> None:
    cases = POSITIVES[category]
    assert len(cases) >= 50
    misses = _misses(cases)
    recall = 1 - len(misses) / len(cases)
    assert recall >= 0.95, f"{category} recall {recall:.3f}; first misses: {misses[:5]}"


def test_passwords_are_found_with_the_value_alone() -> None:
    cases = POSITIVES["password"]
    misses = _misses(cases)
    assert 1 - len(misses) / len(cases) >= 0.95, misses[:5]


@pytest.mark.parametrize("category", ["card", "national_id", "iban"])
def test_near_misses_are_not_reported_as_their_category(category: PiiCategory) -> None:
    cases = NEAR_MISSES[category]
    assert len(cases) >= 50
    wrong = [c.text for c in cases if any(s in {(d.category, d.start, d.end) for d in scan(c.text)} for s in c.spans)]
    assert not wrong, wrong[:5]
    # anything of the category at all (e.g. a valid 16-digit prefix of a broken 19-digit number)
    partial = [c.text for c in cases if any(d.category == category for d in scan(c.text))]
    assert len(partial) / len(cases) <= 0.05, partial[:5]


def test_precision_on_sentences_with_numbers_that_are_not_pii() -> None:
    assert len(NEGATIVES) >= 300
    flagged = [(s, [(d.category, s[d.start : d.end]) for d in scan(s)]) for s in NEGATIVES]
    flagged = [f for f in flagged if f[1]]
    precision = 1 - len(flagged) / len(NEGATIVES)
    assert precision >= 0.95, f"precision {precision:.3f}; e.g. {flagged[:5]}"


# -- specific shapes -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "category", "value"),
    [
        ("pay with 4111 1111 1111 1111 123 (cvv)", "card", "4111 1111 1111 1111"),
        ("SSN: 078-05-1120", "national_id", "078-05-1120"),
        ("my social security number is 078051120", "national_id", "078051120"),
        ("Authorization: Bearer abc123DEF456ghi789JKL", "secret", "abc123DEF456ghi789JKL"),
        ("api_key = 'x9Fq2LmN8pR4tV6w'", "secret", "x9Fq2LmN8pR4tV6w"),
        ("AWS key AKIAIOSFODNN7EXAMPLE in the config", "secret", "AKIAIOSFODNN7EXAMPLE"),
        ('password: "correct horse battery"', "password", "correct horse battery"),
        ("PIN is 0000", "password", "0000"),
        ("text me: +84 912 345 678", "phone", "+84 912 345 678"),
        ("sđt 0912345678 nhé", "phone", "0912345678"),
    ],
)
def test_specific_shapes_are_found_exactly(text: str, category: PiiCategory, value: str) -> None:
    found = [(d.category, text[d.start : d.end]) for d in scan(text)]
    assert (category, value) in found


@pytest.mark.parametrize(
    "text",
    [
        "My password is too short.",
        "The pin is in the drawer.",
        "Order 2019 2020 2021 2022 was a good run",
        "Card 4111 1111 1111 1112 was declined",  # Luhn fails
        "Number 123-45-678 is too short for an SSN",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "uuid 123e4567-e89b-12d3-a456-426614174000",
        "see https://example.com/AbC123dEf456GhI789jKl012MnO345",
        "the getUserAccountBalance2023Report function",
        "Dinner at 19:30 on 2024-03-05, about $1,250.00",
        "she was born 12.05.1990 at 10.30",
        "I have 1,234,567,890 reasons",
    ],
)
def test_things_that_look_like_pii_but_are_not(text: str) -> None:
    assert scan(text) == []


def test_overlaps_keep_the_most_specific_detection() -> None:
    # a key after "password:" is a secret (known prefix) and is reported once
    text = "password: ghp_" + "a1B2c3D4e5" * 4
    found = scan(text)
    assert [(d.category, d.detector) for d in found] == [("secret", "prefix:gh_")]
    # an IBAN holds digit groups that could pass for a phone or a card; only the IBAN is reported
    text = "IBAN DE89 3704 0044 0532 0130 00 thanks"
    assert [(d.category, text[d.start : d.end]) for d in scan(text)] == [("iban", "DE89 3704 0044 0532 0130 00")]


def test_detections_are_sorted_and_disjoint() -> None:
    text = "mail a@example.com, card 4111111111111111, call +1 415 555 0132, pwd=hunter22"
    found = scan(text)
    assert [d.category for d in found] == ["email", "card", "phone", "password"]
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))


def test_looks_random_separates_tokens_from_identifiers() -> None:
    assert looks_random("Zx8kQ2mN7pL4vR9tB3wY6cH1")
    for word in (
        "getUserAccountBalance2023Report",
        "MAX_RETRY_COUNT_FOR_UPLOAD_2",
        "a" * 30 + "B1",
    ):
        assert not looks_random(word)


# -- policies --------------------------------------------------------------------------------------
SAMPLES: dict[PiiCategory, tuple[str, str]] = {
    "card": ("my card is 4111 1111 1111 1111 ok", "4111 1111 1111 1111"),
    "national_id": ("SSN 078-05-1120 on file", "078-05-1120"),
    "iban": ("send to GB82 WEST 1234 5698 7654 32 today", "GB82 WEST 1234 5698 7654 32"),
    "secret": (
        "use sk-abcdefghijklmnopqrstuvwxyz012345 now",
        "sk-abcdefghijklmnopqrstuvwxyz012345",
    ),
    "password": ("my password is Tr0ub4dor&3 ok", "Tr0ub4dor&3"),
    "email": ("write to mai.nguyen@example.vn soon", "mai.nguyen@example.vn"),
    "phone": ("call me on (415) 555-0132 later", "(415) 555-0132"),
}


@pytest.mark.parametrize("category", ALL_CATEGORIES)
@pytest.mark.parametrize("action", ["block", "redact", "keep"])
def test_each_policy_action_per_category(category: PiiCategory, action: str) -> None:
    text, value = SAMPLES[category]
    policy = PrivacySettings(**{category: action})
    result = apply(text, policy)
    assert len(result.findings) == 1
    finding = result.findings[0]
    assert (finding.category, finding.action) == (category, action)
    assert text[finding.start : finding.end] == value  # offsets into the ORIGINAL text
    assert result.blocked is (action == "block")
    if action == "keep":
        assert result.text == text
    else:
        assert result.text == text.replace(value, PLACEHOLDERS[category])
        assert value not in result.text


def test_default_policy_blocks_secrets_and_cards_and_redacts_the_rest() -> None:
    defaults = PrivacySettings()
    assert {category: getattr(defaults, category) for category in ALL_CATEGORIES} == {
        "card": "block",
        "national_id": "redact",
        "iban": "redact",
        "secret": "block",
        "password": "block",
        "email": "redact",
        "phone": "redact",
    }
    for category in ALL_CATEGORIES:
        text, value = SAMPLES[category]
        result = apply(text, defaults)
        expected = category in ("card", "secret", "password")
        assert result.blocked is expected, category
        assert PLACEHOLDERS[category] in result.text and value not in result.text


def test_password_keeps_the_phrase_and_masks_the_value() -> None:
    result = apply("My password is hunter2. Don't tell anyone.", PrivacySettings())
    assert result.text == "My password is [PASSWORD]. Don't tell anyone."
    assert result.blocked


def test_offsets_refer_to_the_original_text_when_several_identifiers_are_masked() -> None:
    text = "Email a.b@example.com or call +44 20 7946 0958; card 5555555555554444."
    result = apply(text, PrivacySettings())
    assert [text[f.start : f.end] for f in result.findings] == [
        "a.b@example.com",
        "+44 20 7946 0958",
        "5555555555554444",
    ]
    assert result.text == "Email [EMAIL] or call [PHONE]; card [CARD]."
    assert result.blocked  # the card's default is block


def test_kept_findings_are_still_reported_and_do_not_block() -> None:
    policy = PrivacySettings(card="keep", email="redact")
    result = apply("card 4111111111111111, mail x@example.org", policy)
    assert [(f.category, f.action) for f in result.findings] == [
        ("card", "keep"),
        ("email", "redact"),
    ]
    assert not result.blocked
    assert result.text == "card 4111111111111111, mail [EMAIL]"


def test_apply_is_idempotent_on_its_own_output() -> None:
    text = "pwd=abc123XYZ, mail a@b.co, call 020 7946 0958, key ghp_" + "Ab1" * 12
    once = apply(text, PrivacySettings())
    twice = apply(once.text, PrivacySettings())
    assert twice.text == once.text
    assert twice.findings == ()


def test_text_without_pii_passes_unchanged() -> None:
    text = "I moved to Da Nang in March 2021 and I teach 3 classes a week."
    result = apply(text, PrivacySettings())
    assert (result.text, result.blocked, result.findings) == (text, False, ())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("   ", "empty"),
        ("my password is hunter22", "secret-bearing"),
        ("What time is it?", "question"),
        ("Please summarise this article.", "command"),
        ("Hãy viết một bài thơ.", "command"),
        ("```python\nprint(1)\n```", "code"),
        ("I went to Paris. Have you been?", "statement"),
        ("I just got a new job at Google!", "statement"),
    ],
)
def test_claim_type(text: str, expected: str) -> None:
    assert apply(text, PrivacySettings()).claim_type == expected
    assert claim_type(text, apply(text, PrivacySettings()).findings) == expected


# -- hostile input ---------------------------------------------------------------------------------
# Throughput is measured by `python -m bench.components`, not asserted here.
def test_plain_chat_messages_have_no_findings() -> None:
    policy = PrivacySettings()
    assert all(not apply(m, policy).findings for m in corpus.plain_chat(n=500))


@pytest.mark.timeout(120)  # a hang guard, not a timing: linear work takes a second, the quadratic kind hours
@pytest.mark.parametrize(
    "text",
    [
        "password is " * 16000,
        "0 0 0 0 " * 24000,
        "+1 " * 60000,
        "4111 " * 40000,
        "DE89 " * 40000,
        "a@" * 80000,
        "Ab1" * 60000,
        "1." * 80000,
    ],
    ids=["passwords", "zeros", "plus", "card-groups", "iban-groups", "at-signs", "base62", "dots"],
)
def test_long_hostile_inputs_finish(text: str) -> None:
    result = apply(text, PrivacySettings())
    assert result.text  # masked or not, the whole text comes back
