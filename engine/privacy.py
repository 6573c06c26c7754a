"""The privacy firewall (L0): finds personal identifiers and secrets in a text and masks them per the policy.

It runs wherever text comes in — every ingested event, every document span — so it sits on the floor of the
inputs, below the facts room that used to hold it.

Two functions.  :func:`scan` finds payment cards, national ids, IBANs, secrets, passwords, e-mail
addresses and phone numbers, and returns :class:`Detection` spans with overlaps resolved.
:func:`apply` turns them into :class:`PiiFinding` objects carrying the action
the user's :class:`~engine.config.PrivacySettings` chose for each category, and replaces every
identifier whose action is ``redact`` or ``block`` by a ``[CATEGORY]`` placeholder.

Decisions worth knowing:

* Checksums before patterns.  A digit run is a card only if it passes Luhn and starts like a payment
  network's number; an IBAN only if its country is known, its length is that country's and mod-97
  gives 1.  Order numbers, timestamps and ISBNs rarely pass, so they are not masked.
* Finding offsets refer to the ORIGINAL text given to :func:`apply`, never to the masked output: the
  masked text is what gets stored; the offsets serve a caller that still holds the original (a
  preview that highlights what will be hidden).
* Passwords and ``Bearer``/``api_key=`` values are masked alone ("my password is [PASSWORD]"), so
  the sentence still reads.
* The generic secret rule is narrow on purpose: 24+ characters mixing upper case, lower case and
  digits, with high Shannon entropy and short alphanumeric runs.  CamelCase and snake_case
  identifiers, long words, anything inside a URL, UUIDs and pure-hex strings (commit hashes,
  checksums) are not flagged; secrets of those shapes are caught only by a known prefix or a cue
  such as ``api_key=``.
* Phones need a ``+``/``00`` prefix, a national layout with separators, or a cue word ("call me
  at"); bare digit runs, dates, times, prices and lists of years are left alone.
* Idempotent: placeholders are never detected again, so re-running it on stored text is safe.

Every ingested event passes here, so patterns are compiled once and the digit-based detectors run
only when the text contains a digit.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from engine.commands import EN_COMMAND, VI_COMMAND
from engine.config import PrivacySettings

PiiCategory = Literal["card", "national_id", "iban", "secret", "password", "email", "phone"]
PiiAction = Literal["block", "redact", "keep"]


# -- what the firewall finds and returns ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PiiFinding:
    """One personal identifier found in a text: where it was, what it is, and what the policy did with it."""

    category: PiiCategory
    start: int
    end: int
    action: PiiAction
    detector: str  # e.g. "luhn", "iban-checksum", "prefix:sk-", "entropy", "phrase:password"


@dataclass(frozen=True, slots=True)
class FirewallResult:
    """The text after the firewall (identifiers replaced by ``[CATEGORY]`` placeholders unless kept).

    ``blocked`` is True when a finding's policy is ``block``: the text is stored masked and produces no memory.
    """

    text: str
    blocked: bool
    findings: tuple[PiiFinding, ...] = ()
    claim_type: str = "statement"


PLACEHOLDERS: dict[PiiCategory, str] = {
    "card": "[CARD]",
    "national_id": "[NATIONAL_ID]",
    "iban": "[IBAN]",
    "secret": "[SECRET]",
    "password": "[PASSWORD]",
    "email": "[EMAIL]",
    "phone": "[PHONE]",
}


@dataclass(frozen=True, slots=True)
class Detection:
    """An identifier found by :func:`scan`: ``text[start:end]`` (for a password, just the value)."""

    category: PiiCategory
    start: int
    end: int
    detector: str


@dataclass(frozen=True, slots=True)
class _Candidate:
    detection: Detection
    rank: int  # specificity: of two overlapping candidates the higher rank wins, then the longer


# Known-prefix secrets and checksummed numbers are surest; the entropy rule is a guess and yields.
_RANK_SECRET, _RANK_CHECKSUM, _RANK_NATIONAL_ID, _RANK_PASSWORD = 90, 80, 75, 70
_RANK_EMAIL, _RANK_PHONE, _RANK_ENTROPY = 60, 50, 30

_HAS_DIGIT = re.compile(r"[0-9]")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- payment cards ---------------------------------------------------------------------------------
# 13–19 digits unseparated, or printed as 4-4-4-4(-3) / 4-6-5 / 4-6-4 with one consistent separator.
# A run glued to a decimal point ("3.1415926535897932") is not a card.
_CARD_RE = re.compile(
    r"(?<![0-9A-Za-z])(?<![0-9][.,])"
    r"(?:[0-9]{13,19}"
    r"|[0-9]{4}(?P<s1>[ -])[0-9]{4}(?P=s1)[0-9]{4}(?P=s1)[0-9]{1,4}(?:(?P=s1)[0-9]{1,3})?"
    r"|[0-9]{4}(?P<s2>[ -])[0-9]{6}(?P=s2)[0-9]{4,5})"
    r"(?![0-9A-Za-z])(?![.,][0-9])"
)
# First digits of payment networks: Mastercard 2/5, Amex/Diners/JCB 3, Visa 4, Discover/UnionPay 6
_CARD_FIRST_DIGITS = frozenset("23456")
_YEAR = re.compile(r"(?:19|20)[0-9]{2}")


def luhn_valid(digits: str) -> bool:
    """True when the digit string passes the Luhn check that every payment card number carries."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _cards(text: str) -> Iterator[_Candidate]:
    for m in _CARD_RE.finditer(text):
        groups = re.split(r"[ -]", m.group())
        if len(groups) > 1 and all(_YEAR.fullmatch(g) for g in groups):
            continue  # "2019 2020 2021 2022" is a list of years
        # The match, then shorter group-aligned prefixes: "4111 1111 1111 1111 123" is card + CVV.
        for n in range(len(groups), 0, -1):
            digits = "".join(groups[:n])
            if len(digits) < 13:
                break
            if digits[0] in _CARD_FIRST_DIGITS and luhn_valid(digits):
                end = m.start() + len(" ".join(groups[:n]))
                yield _Candidate(Detection("card", m.start(), end, "luhn"), _RANK_CHECKSUM)
                break


# -- national ids ----------------------------------------------------------------------------------
# US SSN AAA-GG-SSSS: area 000, 666 and 900–999, group 00 and serial 0000 are never issued.
_SSN_ISSUED = r"(?!000|666|9)[0-9]{3}-?(?!00)[0-9]{2}-?(?!0000)[0-9]{4}"
_SSN_ISSUED_RE = re.compile(_SSN_ISSUED)
_SSN_RE = re.compile(
    r"(?<![0-9A-Za-z-])(?!000|666|9)[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}"
    r"(?![0-9A-Za-z])(?!-[0-9])"
)
_SSN_SHAPE = re.compile(r"[0-9]{3}-?[0-9]{2}-?[0-9]{4}")
# A cue, an optional connector, then an id-like token: up to 2 letters, then digit groups.
_ID_CUE_RE = re.compile(
    r"(?i:\b(?P<cue>ssn|social\s+security(?:\s+(?:number|no\.?|num|#))?"
    r"|national\s+id(?:entity)?(?:\s+card)?(?:\s+(?:number|no\.?|num|#))?"
    r"|id\s+card\s+(?:number|no\.?|num|#)|passport(?:\s+(?:number|no\.?|num|#))?"
    r"|cccd|cmnd|căn\s+cước(?:\s+công\s+dân)?|chứng\s+minh\s+(?:nhân\s+dân|thư)"
    r"|(?:số\s+)?hộ\s+chiếu)"
    r"(?:\s+(?:của\s+(?:tôi|mình|em|anh|chị)|of\s+mine))?"
    r"\s*(?:(?:is|was|là|số|:|=|#|-)\s*){0,2})"
    r"(?P<id>[A-Za-z]{0,2}[0-9]{2,}(?:[ -][0-9]{2,}){0,4}[A-Za-z]?)(?![0-9A-Za-z])"
)


def _national_ids(text: str) -> Iterator[_Candidate]:
    for m in _SSN_RE.finditer(text):
        yield _Candidate(Detection("national_id", m.start(), m.end(), "ssn"), _RANK_NATIONAL_ID)
    for m in _ID_CUE_RE.finditer(text):
        token = m.group("id")
        if not 6 <= sum(c.isdigit() for c in token) <= 16:
            continue
        if _SSN_SHAPE.fullmatch(token) and not _SSN_ISSUED_RE.fullmatch(token):
            continue  # shaped like an SSN but in a range that is never issued
        start, end = m.span("id")
        yield _Candidate(Detection("national_id", start, end, "cue"), _RANK_NATIONAL_ID)


# -- IBAN ------------------------------------------------------------------------------------------
# Registered IBAN lengths (SWIFT IBAN registry).  Countries outside the table are not matched.
_IBAN_LENGTHS: dict[str, int] = {
    code[:2]: int(code[2:])
    for code in _words(
        """AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BI27 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 DJ27
        DK18 DO28 EE20 EG29 ES24 FI18 FK18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HR21 HU28 IE22
        IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 LY25 MC27 MD24 ME22 MK19
        MN20 MR27 MT31 MU30 NI28 NL18 NO15 OM23 PK24 PL28 PS29 PT25 QA29 RO24 RS22 RU33 SA24 SC31
        SD18 SE24 SI19 SK24 SM27 SO23 ST25 SV28 TL23 TN24 TR26 UA29 VA22 VG24 XK20"""
    )
}
_IBAN_START = re.compile(r"(?<![0-9A-Za-z])([A-Za-z]{2})[0-9]{2}(?=[ ]?[0-9A-Za-z])")


def iban_valid(compact: str) -> bool:
    """True when a space-free IBAN has its country's length and passes the ISO 13616 mod-97 test."""
    iban = compact.upper()
    if _IBAN_LENGTHS.get(iban[:2]) != len(iban) or not (iban.isascii() and iban.isalnum()):
        return False
    return int("".join(str(int(c, 36)) for c in iban[4:] + iban[:4])) % 97 == 1


def _ibans(text: str) -> Iterator[_Candidate]:
    n = len(text)
    for m in _IBAN_START.finditer(text):
        length = _IBAN_LENGTHS.get(m.group(1).upper())
        if length is None:
            continue
        # Take exactly ``length`` characters, allowing single spaces between groups ("DE89 3704 …").
        pos, count = m.start(), 0
        while pos < n and count < length:
            ch = text[pos]
            if ch.isascii() and ch.isalnum():
                count += 1
            elif not (ch == " " and count >= 4 and text[pos - 1] != " "):
                break
            pos += 1
        at_boundary = count == length and not (pos < n and text[pos].isalnum())
        if at_boundary and iban_valid(text[m.start() : pos].replace(" ", "")):
            yield _Candidate(Detection("iban", m.start(), pos, "iban-mod97"), _RANK_CHECKSUM)


# -- secrets ---------------------------------------------------------------------------------------
#: Text holding none of these (in any letter case) holds no secret of the named kinds below, so their patterns
#: need not run.  Substring tests on the lower-cased text: a case-insensitive regex alternation took ~20 µs for a
#: chat turn, the endpoint's biggest single cost per ingested event.
_SECRET_PRECHECK = tuple(
    needle.lower()
    for needle in (
        *("sk-", "sk_", "rk_", "github_pat_", "xox", "xapp-", "AKIA", "ASIA", "AIza", "glpat-", "hf_", "npm_"),
        *("pypi-", "eyJ", "-----BEGIN", "bearer", "key", "token", "secret"),
        *(f"gh{letter}_" for letter in "pousr"),
    )
)


def _may_hold_named_secret(text: str) -> bool:
    lowered = text.lower()
    return any(needle in lowered for needle in _SECRET_PRECHECK)


_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        (  # a key block; an unterminated paste is masked to its end
            "pem",
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,-]*)",
        ),
        ("prefix:sk-ant-", r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,}"),
        ("prefix:sk-proj-", r"(?<![\w-])sk-proj-[A-Za-z0-9_-]{20,}"),
        ("prefix:sk-", r"(?<![\w-])sk-(?!ant-|proj-)[A-Za-z0-9_-]{20,}"),
        ("prefix:sk_live_", r"(?<![\w-])[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
        ("prefix:gh_", r"(?<![\w-])gh[pousr]_[A-Za-z0-9]{30,}"),
        ("prefix:github_pat_", r"(?<![\w-])github_pat_[A-Za-z0-9_]{22,}"),
        ("prefix:xox", r"(?<![\w-])(?:xox[abposer]|xapp)-[A-Za-z0-9-]{10,}"),
        ("prefix:AKIA", r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        ("prefix:AIza", r"(?<![\w-])AIza[0-9A-Za-z_-]{35}"),
        ("prefix:glpat-", r"(?<![\w-])glpat-[A-Za-z0-9_-]{20,}"),
        ("prefix:hf_", r"(?<![\w-])hf_[A-Za-z0-9]{30,}"),
        ("prefix:npm_", r"(?<![\w-])npm_[A-Za-z0-9]{36}"),
        ("prefix:pypi-", r"(?<![\w-])pypi-[A-Za-z0-9_-]{50,}"),
        ("jwt", r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    )
)
_BEARER_RE = re.compile(r"(?i:\bbearer)\s+(?P<val>[A-Za-z0-9._~+/=-]{16,})")
_ASSIGN_RE = re.compile(
    r"(?i:\b(?P<key>api[_ -]?key|api[_ -]?token|access[_ -]?token|auth[_ -]?token"
    r"|refresh[_ -]?token|secret[_ -]?key|client[_ -]?secret|private[_ -]?key|apikey|token|secret))"
    r"[\"']?\s*(?:=>|:=|[:=]|\s+is)\s*[\"']?(?P<val>[A-Za-z0-9._~+/=-]{12,})"
)
# "=" only as base64 padding, so "API_KEY=<token>" yields the token alone
_ENTROPY_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_+/-])[A-Za-z0-9_+/-]{24,}={0,2}(?![A-Za-z0-9_+/=-])")
_URL_RE = re.compile(r"(?i:\b(?:https?|ftp)://|\bwww\.|\bdata:[\w/+.-]+;base64,)\S+")
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_HEX_RE = re.compile(r"[0-9a-fA-F-]+")
_ALNUM_RUN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
ENTROPY_MIN_LENGTH = 24
ENTROPY_MIN_BITS = 3.5  # bits per character; random base62 of length 24 stays above 3.85 in 99 %
# Mean length of alphanumeric runs ("get", "User", "2023"): random base62 averages 1.9 (p99 3.0),
# camelCase and snake_case identifiers run 3.3 and up.
ENTROPY_MAX_RUN = 3.0


def shannon_entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def looks_random(token: str) -> bool:
    """The generic secret rule: long, upper + lower + digits, high entropy, no word-like runs."""
    if len(token) < ENTROPY_MIN_LENGTH or _UUID_RE.fullmatch(token) or _HEX_RE.fullmatch(token):
        return False
    if not (any(c.isupper() for c in token) and any(c.islower() for c in token) and any(c.isdigit() for c in token)):
        return False
    runs = _ALNUM_RUN.findall(token)
    mean_run = sum(map(len, runs)) / len(runs)
    return mean_run <= ENTROPY_MAX_RUN and shannon_entropy(token) >= ENTROPY_MIN_BITS


def _has_letter_and_digit(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _secrets(text: str) -> Iterator[_Candidate]:
    if _may_hold_named_secret(text):
        for detector, pattern in _SECRET_PATTERNS:
            for m in pattern.finditer(text):
                yield _Candidate(Detection("secret", m.start(), m.end(), detector), _RANK_SECRET)
        for m in _BEARER_RE.finditer(text):
            if _has_letter_and_digit(m.group("val")):
                start, end = m.span("val")
                yield _Candidate(Detection("secret", start, end, "bearer"), _RANK_SECRET)
        for m in _ASSIGN_RE.finditer(text):
            value = m.group("val").rstrip(".")
            if len(value) >= 12 and _has_letter_and_digit(value):
                key = re.sub(r"[_ -]", "_", m.group("key").lower())
                start = m.start("val")
                detection = Detection("secret", start, start + len(value), f"assignment:{key}")
                yield _Candidate(detection, _RANK_SECRET)
    urls = [m.span() for m in _URL_RE.finditer(text)] if ":" in text or "www." in text else []
    for m in _ENTROPY_CANDIDATE.finditer(text):
        token = m.group().rstrip("=.-_")
        if looks_random(token) and not any(a <= m.start() < b for a, b in urls):
            detection = Detection("secret", m.start(), m.start() + len(token), "entropy")
            yield _Candidate(detection, _RANK_ENTROPY)


# -- passwords -------------------------------------------------------------------------------------
_PASSWORD_RE = re.compile(
    r"(?i:\b(?P<cue>pass(?:word|wd|code|phrase)|pwd|pin(?:\s+(?:code|number))?"
    r"|mật\s+khẩu|mã\s+pin|mk)\b)"
    r"(?:\s+(?:for|to|of|của|cho)\s+(?:the\s+|my\s+|our\s+|your\s+)?[^\s:=]{1,30}?)?"
    r"(?:\s*(?::=|[:=])\s*"
    r"|\s+(?i:is|was|là)\s*:?\s+(?:(?i:now|still|just|actually|currently|giờ)\s+)?)"
    r"(?P<val>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|`[^`\n]{1,128}`|\S{1,128})"
)
# Prose that can follow "password is": not a password.
_NOT_A_PASSWORD = _words(
    """a an the is was not too very so same different secure strong weak wrong correct right
    incorrect invalid valid expired required reset changed saved stored hidden encrypted missing
    empty blank long short easy hard simple complicated complex safe unsafe fine ok okay good bad
    still now just also in on at for to of and or but my your his her their our it its this that
    what which where who how why here there below above written mandatory optional needed necessary
    protected forgotten lost case-sensitive gì đâu nào sai đúng một cái của trong rồi"""
)
_TRAILING_PUNCT = ".,;:!?)]}>\"'"
# Values that are code, not a password: types, null values, variables, templates, calls, masks.
_CODE_VALUE = re.compile(
    r"(?i:none|null|nil|undefined|true|false|str|int|bytes|string|secretstr|optional\[.*"
    r"|(?:os|self|this|env|process|config|settings|request|args|kwargs|cls)\..*"
    r"|\$\{?[A-Z_][A-Z0-9_]*\}?"
    r"|\{\{?.*|<.*|\[.*|\*+|[\w.]+\(.*\)|[\w.]+\[[^\]]*\])"
)
_ANNOTATION = re.compile(r"\s*=[^=]")  # "password: str = Field(...)"


def _passwords(text: str) -> Iterator[_Candidate]:
    for m in _PASSWORD_RE.finditer(text):
        start, end = m.span("val")
        value = m.group("val")
        if len(value) > 2 and value[0] in "\"'`" and value[-1] == value[0]:
            start, end, value = start + 1, end - 1, value[1:-1]
        else:
            # Trailing sentence punctuation is taken for prose; at worst a final "!" stays visible.
            stripped = value.rstrip(_TRAILING_PUNCT)
            end -= len(value) - len(stripped)
            value = stripped
        if not value or value.lower() in _NOT_A_PASSWORD or _at_placeholder(text, start):
            continue
        raw = m.group("val")
        if _CODE_VALUE.fullmatch(value) or _CODE_VALUE.fullmatch(raw) or _ANNOTATION.match(text, end):
            continue  # source code: "password: str = ...", "pwd=os.environ[...]", "password=None"
        cue = " ".join(m.group("cue").lower().split())
        if cue.startswith(("pin", "mã")) and not (value.isdigit() and 4 <= len(value) <= 8):
            continue
        yield _Candidate(Detection("password", start, end, f"phrase:{cue}"), _RANK_PASSWORD)


def _at_placeholder(text: str, pos: int) -> bool:
    return text.startswith(tuple(PLACEHOLDERS.values()), pos)


# -- e-mail ----------------------------------------------------------------------------------------
_EMAIL_RE = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9][A-Za-z0-9-]{0,62}"
    r"(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"
)


def _emails(text: str) -> Iterator[_Candidate]:
    if "@" in text:
        for m in _EMAIL_RE.finditer(text):
            yield _Candidate(Detection("email", m.start(), m.end(), "email"), _RANK_EMAIL)


# -- phones ----------------------------------------------------------------------------------------
_PHONE_END = r"(?![0-9])(?![.,/:-][0-9])"  # not followed by more digits, a decimal part or a time
_PHONE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "+1 (415) 555-0132", "+44 20 7946 0958", "+84912345678", "0044 20 7946 0958"
    (
        "phone:international",
        re.compile(r"(?<![\w+.,/#-])(?:\+|00)[1-9][0-9]{0,2}+(?:[ .-]?\(?[0-9]{1,5}+\)?){1,6}+" + _PHONE_END),
    ),
    # "(415) 555-0132", "415-555-0132", "415.555.0132", "1-415-555-0132"
    (
        "phone:nanp",
        re.compile(
            r"(?<![\w+.,/-])(?:1[ .-])?(?:\([2-9][0-9]{2}\)[ .-]?|[2-9][0-9]{2}[ .-])"
            r"[2-9][0-9]{2}[ .-][0-9]{4}" + _PHONE_END
        ),
    ),
    # Trunk-0 national numbers: "020 7946 0958", "0912 345 678", "(028) 3822 1234", "01 23 45 67 89"
    (
        "phone:national",
        re.compile(
            r"(?<![\w+.,/-])(?:\(0[1-9][0-9]{0,3}\)[ .-]?|0[1-9][0-9]{0,4}[ .-])"
            r"[0-9]{2,8}(?:[ .-][0-9]{2,8}){0,3}" + _PHONE_END
        ),
    ),
    # A cue word, then any 9–15-digit grouping: "call me at 4155550132", "sđt: 0912345678"
    (
        "phone:cue",
        re.compile(
            r"(?i:\b(?:phone|tel|telephone|mobile|cell|call(?:\s+me)?|text\s+me|whatsapp|zalo|viber"
            r"|sđt|sdt|số\s+điện\s+thoại|điện\s+thoại|gọi(?:\s+cho\s+(?:tôi|mình|em|anh|chị))?)\b)"
            r"[^0-9\n]{0,16}?(?P<num>\+?[0-9](?:[ .-]?[0-9]){8,14})" + _PHONE_END
        ),
    ),
)
# dates ("2023-05-08", "08.05.2023") and US ZIP+4 codes ("06718-9615")
_DATE_LIKE = re.compile(r"[0-9]{1,4}[./-][0-9]{1,2}[./-][0-9]{1,4}|[0-9]{5}-[0-9]{4}$")
_CURRENCY_BEFORE = re.compile(r"(?:[$€£¥₫₹]|(?i:\b(?:usd|eur|vnd|gbp)))\s*$")
_CURRENCY_AFTER = re.compile(r"\s*(?:[$€£¥₫₹]|(?i:vnd|usd|eur|gbp|đồng|dollars?|euros?|k\b|đ\b))")
_NUMBER_BEFORE = re.compile(r"[0-9][A-Za-z0-9]*[ ]$")
_NUMBER_AFTER = re.compile(r"[ .-][0-9]")


def _phones(text: str) -> Iterator[_Candidate]:
    for detector, pattern in _PHONE_PATTERNS:
        for m in pattern.finditer(text):
            start, end = m.span("num" if detector == "phone:cue" else 0)
            if _plausible_phone(text, start, end, detector):
                yield _Candidate(Detection("phone", start, end, detector), _RANK_PHONE)


def _plausible_phone(text: str, start: int, end: int, detector: str) -> bool:
    """Reject what the patterns cannot: dates, prices, runs of numbers, bare digit strings."""
    raw = text[start:end]
    if not 9 <= sum(c.isdigit() for c in raw) <= 15 or _DATE_LIKE.match(raw.lstrip("+(")):
        return False
    if _CURRENCY_BEFORE.search(text, max(0, start - 6), start) or _CURRENCY_AFTER.match(text, end):
        return False  # a price
    if detector != "phone:cue" and (
        _NUMBER_BEFORE.search(text[max(0, start - 12) : start]) or _NUMBER_AFTER.match(text, end)
    ):
        return False  # a stretch of a longer run of numbers: an account, a card, lottery numbers
    if raw.startswith("00") and not any(c in " .-(" for c in raw):
        return False  # "0027354358": an order number, not "0044 20 7946 0958"
    # a national number uses one kind of separator: "020 7946 0958", not "05-08-2023 10"
    return detector != "phone:national" or "(" in raw or len({c for c in raw if c in " .-"}) == 1


# -- scan / apply ----------------------------------------------------------------------------------
def scan(text: str) -> list[Detection]:
    """Find the identifiers in ``text``, overlaps resolved, sorted by position.

    Of two overlapping candidates the more specific detector wins — known secret prefixes,
    checksummed numbers, national ids, passwords, e-mail, phones, and last the entropy rule — and
    among equals the longer span.  Offsets index ``text``.
    """
    candidates: list[_Candidate] = [*_secrets(text), *_passwords(text), *_emails(text)]
    if _HAS_DIGIT.search(text):
        candidates += [*_cards(text), *_ibans(text), *_national_ids(text), *_phones(text)]
    chosen: list[Detection] = []  # disjoint, sorted by start
    starts: list[int] = []
    for cand in sorted(candidates, key=lambda c: (-c.rank, c.detection.start - c.detection.end)):
        d = cand.detection
        i = bisect.bisect_right(starts, d.start)
        if d.end <= d.start or (i and chosen[i - 1].end > d.start):
            continue
        if i < len(chosen) and chosen[i].start < d.end:
            continue
        chosen.insert(i, d)
        starts.insert(i, d.start)
    return chosen


def apply(text: str, policy: PrivacySettings) -> FirewallResult:
    """Mask the identifiers in ``text`` according to ``policy``; say whether the text is blocked.

    ``redact`` and ``block`` both replace the identifier by its placeholder (``[CARD]``,
    ``[EMAIL]``…); ``keep`` leaves it.  ``blocked`` is True when any finding's action is ``block``.
    Every finding is reported, kept ones included, with offsets into the ORIGINAL ``text`` (not the
    masked result).
    """
    findings: list[PiiFinding] = []
    parts: list[str] = []
    pos = 0
    for d in scan(text):
        action: PiiAction = getattr(policy, d.category)
        findings.append(PiiFinding(d.category, d.start, d.end, action, d.detector))
        if action != "keep":
            parts += [text[pos : d.start], PLACEHOLDERS[d.category]]
            pos = d.end
    parts.append(text[pos:])
    return FirewallResult(
        text="".join(parts),
        blocked=any(f.action == "block" for f in findings),
        findings=tuple(findings),
        claim_type=claim_type(text, findings),
    )


_CREDENTIALS: frozenset[str] = frozenset({"secret", "password", "card", "national_id", "iban"})
_SENTENCE_END = re.compile(r"[.!?…]\s")
_TRAILING_NOISE = re.compile(r"[\s\"'”’)\]]+$")


def claim_type(text: str, findings: Iterable[PiiFinding] = ()) -> str:
    """A rough one-word label of the whole text from its surface form, for traces.

    ``"empty"`` (blank); ``"secret-bearing"`` (it carries a credential or an account or identity
    number, whatever the policy did with it); ``"code"`` (a fenced block); ``"question"`` (a single
    sentence ending in "?"); ``"command"`` (opens with a request: "please", "can you", "hãy"…); else
    ``"statement"``.  Deliberately cheap, since it runs on every ingest: a mixed message is simply a
    statement, and the classifier labels each sentence later.
    """
    stripped = _TRAILING_NOISE.sub("", text)
    if not stripped:
        return "empty"
    if any(f.category in _CREDENTIALS for f in findings):
        return "secret-bearing"
    if "```" in text:
        return "code"
    if stripped.endswith(("?", "？")) and not _SENTENCE_END.search(stripped, 0, len(stripped) - 1):
        return "question"
    opening = " ".join(stripped[:80].lower().replace("’", "'").split())
    if EN_COMMAND.match(opening) or VI_COMMAND.match(opening):
        return "command"
    return "statement"
