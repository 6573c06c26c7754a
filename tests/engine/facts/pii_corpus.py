"""A labelled corpus for the firewall tests, generated from a seed.

Positives carry real checksums: card numbers of several networks with a computed Luhn digit, SSNs in
the issued ranges, IBANs of several countries with mod-97 check digits computed the ISO 13616 way.
Each near miss is a positive with one thing broken (the Luhn digit, an SSN range, one IBAN
character), so it must NOT be found.  Negatives are sentences full of numbers and long tokens that
are not personal data.

Every positive is a :class:`Case` whose ``spans`` give the exact offsets of the identifier in
``text``, so the tests can check offsets as well as recall.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass, field

from engine.privacy import PiiCategory


@dataclass(frozen=True)
class Case:
    """A text and the identifiers in it: ``text[start:end]`` for each ``(category, start, end)``."""

    text: str
    spans: tuple[tuple[PiiCategory, int, int], ...] = field(default=())


def place(template: str, category: PiiCategory, value: str) -> Case:
    """Put ``value`` where ``{}`` is in ``template`` and remember where it went."""
    start = template.index("{}")
    return Case(template.replace("{}", value, 1), ((category, start, start + len(value)),))


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


# -- cards -----------------------------------------------------------------------------------------
def luhn_check_digit(payload: str) -> str:
    """The digit that makes ``payload + digit`` pass Luhn."""
    total = 0
    for i, ch in enumerate(reversed(payload)):
        d = int(ch)
        if i % 2 == 0:  # doubled positions, counted from the check digit's left neighbour
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return str((10 - total % 10) % 10)


# (network, prefixes, length, grouping) — groupings as printed on the card
CARD_NETWORKS: tuple[tuple[str, tuple[str, ...], int, tuple[int, ...]], ...] = (
    ("visa", ("4",), 16, (4, 4, 4, 4)),
    ("visa13", ("4",), 13, (13,)),
    ("mastercard", ("51", "52", "53", "54", "55"), 16, (4, 4, 4, 4)),
    ("mastercard2", ("2221", "2500", "2720"), 16, (4, 4, 4, 4)),
    ("amex", ("34", "37"), 15, (4, 6, 5)),
    ("discover", ("6011", "65"), 16, (4, 4, 4, 4)),
    ("jcb", ("3528", "3589"), 16, (4, 4, 4, 4)),
    ("diners", ("36", "38"), 14, (4, 6, 4)),
    ("unionpay19", ("62",), 19, (4, 4, 4, 4, 3)),
)


def card_number(rng: random.Random, prefixes: tuple[str, ...], length: int) -> str:
    """A random card number with a valid Luhn digit."""
    prefix = rng.choice(prefixes)
    payload = prefix + _digits(rng, length - len(prefix) - 1)
    return payload + luhn_check_digit(payload)


def format_card(number: str, groups: tuple[int, ...], sep: str) -> str:
    """Print ``number`` in ``groups`` joined by ``sep`` (``""`` for unseparated)."""
    if not sep:
        return number
    parts, pos = [], 0
    for g in groups:
        parts.append(number[pos : pos + g])
        pos += g
    return sep.join(parts)


CARD_TEMPLATES = (
    "My card number is {}.",
    "Here's the card: {}, expires 09/27",
    "please charge {} for the order",
    "{} is the company Visa",
    "Thẻ của tôi là {} nhé",
    "I paid with {} yesterday at the store.",
    "card no {} cvv on the back",
)


def card_cases(rng: random.Random, n_per_network: int = 12) -> tuple[list[Case], list[Case]]:
    """Valid card numbers in sentences, and the same numbers with a wrong check digit."""
    good, bad = [], []
    for _name, prefixes, length, groups in CARD_NETWORKS:
        for i in range(n_per_network):
            number = card_number(rng, prefixes, length)
            sep = ("", " ", "-")[i % 3] if len(groups) > 1 else ""
            template = rng.choice(CARD_TEMPLATES)
            good.append(place(template, "card", format_card(number, groups, sep)))
            wrong = number[:-1] + str((int(number[-1]) + rng.randint(1, 9)) % 10)
            bad.append(place(template, "card", format_card(wrong, groups, sep)))
    return good, bad


# -- SSNs ------------------------------------------------------------------------------------------
SSN_TEMPLATES = (
    "My SSN is {}.",
    "social security number: {}",
    "Her number is {} on the form",
    "{} — that's what the W-2 says",
    "Use {} for the tax return.",
)


def ssn_cases(rng: random.Random, n: int = 60) -> tuple[list[Case], list[Case]]:
    """SSNs in issued ranges, and SSN-shaped numbers in ranges that are never issued."""
    good, bad = [], []
    for i in range(n):
        area = rng.choice([a for a in range(1, 900) if a != 666])
        group, serial = rng.randint(1, 99), rng.randint(1, 9999)
        good.append(place(rng.choice(SSN_TEMPLATES), "national_id", f"{area:03d}-{group:02d}-{serial:04d}"))
        broken = (
            f"000-{group:02d}-{serial:04d}",
            f"666-{group:02d}-{serial:04d}",
            f"9{rng.randint(0, 99):02d}-{group:02d}-{serial:04d}",
            f"{area:03d}-00-{serial:04d}",
            f"{area:03d}-{group:02d}-0000",
        )[i % 5]
        bad.append(place(rng.choice(SSN_TEMPLATES), "national_id", broken))
    return good, bad


ID_CUE_CASES = (
    ("My passport number is {}.", "C01234567"),
    ("passport no. {} expires next year", "X1234567"),
    ("Số CCCD của tôi là {}", "001203004567"),
    ("CMND: {}", "025123456"),
    ("national ID number {} for the visa form", "7501011234"),
    ("SSN {} please keep it safe", "123456789"),
)


# -- IBANs -----------------------------------------------------------------------------------------
# country: BBAN layout as (kind, count) pieces: "n" digits, "a" capitals, "c" alphanumerics
IBAN_LAYOUTS: dict[str, tuple[tuple[str, int], ...]] = {
    "DE": (("n", 18),),
    "GB": (("a", 4), ("n", 14)),
    "FR": (("n", 10), ("c", 11), ("n", 2)),
    "ES": (("n", 20),),
    "IT": (("a", 1), ("n", 10), ("c", 12)),
    "NL": (("a", 4), ("n", 10)),
    "BE": (("n", 12),),
    "CH": (("n", 5), ("c", 12)),
    "PL": (("n", 24),),
    "NO": (("n", 11),),
    "VN": (("n", 10),),  # not an IBAN country: must never match, see iban_cases
}


def iban_check_digits(country: str, bban: str) -> str:
    """ISO 13616: 98 - (BBAN + country + "00" as digits, letters A=10…Z=35) mod 97."""
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{98 - int(numeric) % 97:02d}"


def iban(rng: random.Random, country: str) -> str:
    """A random IBAN of ``country`` with correct check digits (compact form)."""
    alphabet = {
        "n": string.digits,
        "a": string.ascii_uppercase,
        "c": string.digits + string.ascii_uppercase,
    }
    bban = "".join(rng.choice(alphabet[kind]) for kind, count in IBAN_LAYOUTS[country] for _ in range(count))
    return country + iban_check_digits(country, bban) + bban


def group4(value: str) -> str:
    return " ".join(value[i : i + 4] for i in range(0, len(value), 4))


IBAN_TEMPLATES = (
    "Please transfer it to {} by Friday.",
    "IBAN: {}",
    "my account is {} at the local bank",
    "Số tài khoản {} ngân hàng",
)


def iban_cases(rng: random.Random, n_per_country: int = 10) -> tuple[list[Case], list[Case]]:
    """Valid IBANs (compact and grouped), and the same with one character changed."""
    good, bad = [], []
    for country in IBAN_LAYOUTS:
        if country == "VN":
            continue
        for i in range(n_per_country):
            value = iban(rng, country)
            template = rng.choice(IBAN_TEMPLATES)
            shown = group4(value) if i % 2 else value
            good.append(place(template, "iban", shown))
            pos = rng.randrange(4, len(value))  # a BBAN character: one change always breaks mod 97
            old = value[pos]
            pool = string.digits if old.isdigit() else string.ascii_uppercase
            new = rng.choice([c for c in pool if c != old])
            broken = value[:pos] + new + value[pos + 1 :]
            bad.append(place(template, "iban", group4(broken) if i % 2 else broken))
    # a well-formed number for a country with no IBAN: not an IBAN
    bad.append(place("account {} in Hanoi", "iban", iban(rng, "VN")))
    return good, bad


# -- secrets ---------------------------------------------------------------------------------------
def _random(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def secret_values(rng: random.Random) -> list[str]:
    """One random token per known prefix, a JWT, and generic high-entropy strings."""
    b62 = string.ascii_letters + string.digits
    url = b62 + "-_"
    values = [
        "sk-" + _random(rng, 48, b62),
        "sk-proj-" + _random(rng, 64, url),
        "sk-ant-api03-" + _random(rng, 80, url),
        "ghp_" + _random(rng, 36, b62),
        "gho_" + _random(rng, 36, b62),
        "github_pat_" + _random(rng, 22, b62) + "_" + _random(rng, 59, b62),
        "xoxb-" + _digits(rng, 12) + "-" + _digits(rng, 13) + "-" + _random(rng, 24, b62),
        "xoxp-" + _digits(rng, 12) + "-" + _digits(rng, 12) + "-" + _random(rng, 32, b62),
        "AKIA" + _random(rng, 16, string.ascii_uppercase + string.digits),
        "AIza" + _random(rng, 35, url),
        "glpat-" + _random(rng, 20, url),
        "hf_" + _random(rng, 34, b62),
        "eyJ" + _random(rng, 30, url) + ".eyJ" + _random(rng, 40, url) + "." + _random(rng, 43, url),
    ]
    generic = []
    while len(generic) < 3:
        token = _random(rng, 32, b62)
        if any(c.isdigit() for c in token):  # the rule needs digits; a digit-free draw is not a test
            generic.append(token)
    return values + generic


SECRET_TEMPLATES = (
    "my key is {} don't share it",
    "export OPENAI_API_KEY={}",
    "Here you go: {}",
    "token {} expires tomorrow",
    "{}",
    "Khóa API của tôi: {} nhé",
)


def secret_cases(rng: random.Random, rounds: int = 6) -> list[Case]:
    cases = [place(rng.choice(SECRET_TEMPLATES), "secret", v) for _ in range(rounds) for v in secret_values(rng)]
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + "\n".join(_random(rng, 64, string.ascii_letters + string.digits + "+/") for _ in range(4))
        + "\n-----END RSA PRIVATE KEY-----"
    )
    cases.append(place("here is the deploy key:\n{}\nthanks", "secret", pem))
    bearer = _random(rng, 40, string.ascii_letters + string.digits)
    cases.append(place("curl -H 'Authorization: Bearer {}' https://api.example.com", "secret", bearer))
    return cases


# -- passwords -------------------------------------------------------------------------------------
PASSWORD_TEMPLATES = (
    "my password is {}",
    "My password is {} and the user is admin",
    "password: {}",
    "pwd={}",
    "the wifi password is {}.",
    "passcode is {}",
    "mật khẩu là {}",
    "Mật khẩu: {} nhé",
    "The password for my email is {}",
)
PIN_TEMPLATES = ("My PIN is {}.", "PIN is {}", "mã PIN là {}")


def password_value(rng: random.Random) -> str:
    """A plausible password that does not end in sentence punctuation."""
    words = ("blue", "horse", "tiger", "Sunny", "coffee", "Dragon", "maple")
    style = rng.randrange(3)
    if style == 0:
        return rng.choice(words) + _digits(rng, rng.randint(2, 4))
    if style == 1:
        body = _random(rng, rng.randint(8, 14), string.ascii_letters + string.digits + "!@#$%&*")
        return body + rng.choice(string.ascii_letters + string.digits)
    return rng.choice(words).capitalize() + "_" + rng.choice(words) + "#" + _digits(rng, 2)


def password_cases(rng: random.Random, n: int = 60) -> list[Case]:
    cases = [place(rng.choice(PASSWORD_TEMPLATES), "password", password_value(rng)) for _ in range(n)]
    cases += [place(rng.choice(PIN_TEMPLATES), "password", _digits(rng, rng.choice((4, 6)))) for _ in range(12)]
    return cases


# -- e-mail and phones -----------------------------------------------------------------------------
EMAIL_TEMPLATES = (
    "mail me at {}.",
    "My email is {}",
    "Contact: {} (work)",
    "send it to <{}> please",
    "Email của tôi là {}",
)


def email_value(rng: random.Random) -> str:
    first = rng.choice(("john", "mai", "nguyen.van.a", "j.smith", "anna_k", "li+news", "dev-ops"))
    domain = rng.choice(("example.com", "mail.example.co.uk", "uni-example.edu", "example.vn", "gmail.com"))
    return f"{first}{rng.randint(1, 999)}@{domain}"


def email_cases(rng: random.Random, n: int = 60) -> list[Case]:
    return [place(rng.choice(EMAIL_TEMPLATES), "email", email_value(rng)) for _ in range(n)]


def phone_value(rng: random.Random, style: int) -> str:
    d = lambda k: _digits(rng, k)  # noqa: E731 - a local shorthand keeps the table readable
    area = str(rng.randint(2, 9)) + d(2)
    exchange = str(rng.randint(2, 9)) + d(2)
    styles = (
        f"+1 ({area}) {exchange}-{d(4)}",
        f"+1 {area} {exchange} {d(4)}",
        f"+44 20 {d(4)} {d(4)}",
        f"+84 9{d(2)} {d(3)} {d(3)}",
        f"+33 {rng.randint(1, 9)} {d(2)} {d(2)} {d(2)} {d(2)}",
        f"+49 30 {d(8)}",
        f"+84{rng.choice('35789')}{d(8)}",
        f"({area}) {exchange}-{d(4)}",
        f"{area}-{exchange}-{d(4)}",
        f"{area}.{exchange}.{d(4)}",
        f"020 {d(4)} {d(4)}",
        f"09{d(2)} {d(3)} {d(3)}",
        f"09{d(2)}-{d(3)}-{d(3)}",
        f"0{rng.randint(1, 9)} {d(2)} {d(2)} {d(2)} {d(2)}",
        f"0044 20 {d(4)} {d(4)}",
    )
    return styles[style % len(styles)]


PHONE_TEMPLATES = (
    "call me at {} tonight",
    "My number is {}.",
    "Phone: {}",
    "You can reach the office on {}, ask for Sam",
    "Số điện thoại của tôi là {}",
    "{} is my cell",
)


def phone_cases(rng: random.Random, n: int = 90) -> list[Case]:
    return [place(rng.choice(PHONE_TEMPLATES), "phone", phone_value(rng, i)) for i in range(n)]


def positives(seed: int = 20240601) -> dict[PiiCategory, list[Case]]:
    """Every positive case, by category."""
    rng = random.Random(seed)
    cards, _ = card_cases(rng)
    ssns, _ = ssn_cases(rng)
    ibans, _ = iban_cases(rng)
    ids = ssns + [place(t, "national_id", v) for t, v in ID_CUE_CASES]
    return {
        "card": cards,
        "national_id": ids,
        "iban": ibans,
        "secret": secret_cases(rng),
        "password": password_cases(rng),
        "email": email_cases(rng),
        "phone": phone_cases(rng),
    }


def near_misses(seed: int = 20240602) -> dict[PiiCategory, list[Case]]:
    """Positives with one thing broken; each must not be found as its category."""
    rng = random.Random(seed)
    _, cards = card_cases(rng)
    _, ssns = ssn_cases(rng)
    _, ibans = iban_cases(rng)
    return {"card": cards, "national_id": ssns, "iban": ibans}


# -- negatives -------------------------------------------------------------------------------------
LONG_WORDS = (
    "Supercalifragilisticexpialidocious",
    "antidisestablishmentarianism",
    "Donaudampfschiffahrtsgesellschaftskapitän",
    "pneumonoultramicroscopicsilicovolcanoconiosis",
    "internationalization",
    "getUserAccountBalanceForReport2023",
    "XMLHttpRequestResponseHandler2",
    "MAX_RETRY_COUNT_FOR_UPLOAD_2",
    "test_user_account_balance_v2",
    "ThisIsMyVeryLongCamelCase1Identifier",
)
# Negative templates.  Fields: {Y} a year, {mo} {dd} month/day as 2 digits, {MON} a month name,
# {d<k>} k random digits, {n<a>_<b>} an integer in [a, b], {hex<k>} k hex digits, {WORD} a long
# word.
NEGATIVE_TEMPLATES = (
    "We met on {Y}-{mo}-{dd} at the cafe.",
    "The deadline is {dd}/{mo}/{Y}.",
    "It was {n1_28} {MON}, {Y} at {n1_12}:{d2} pm.",
    "{dd}-{mo}-{Y} {n10_23}:{d2}",
    "she was born {dd}.{mo}.{Y} at {n10_23}.{n10_59}",
    "From {Y} to {Y} I lived in Lyon.",
    "The seasons {Y} {Y} {Y} {Y} were all great.",
    "Open {n7_9}:00-{n17_19}:00, {Y}-{mo}-{dd} to {Y}-{mo}-{dd}.",
    "It cost ${n1_999},{d3}.{d2} in total.",
    "Giá là {n1_999}.{d3}.{d3} VND thôi.",
    "Tôi mua nó {n10_999} {d3} {d3} đồng.",
    "The budget is $1 {d3} {d3} this year.",
    "€ {n1_999}.{d2} for the dinner",
    "I ordered {n2_500} boxes and {n2_5000} units in {Y}.",
    "Order #{d10} shipped with {n2_40} items.",
    "We sold {n1_999},{d3},{d3} copies.",
    "Upgrade to Python 3.{n8_13}.{n0_12} and numpy {n1_2}.{d2}.{d1}.",
    "Release v{n0_9}.{n0_30}.{n0_30}-rc{n1_5} is out.",
    "The server at 192.168.{n0_255}.{n0_255} restarted at {n10_23}:{d2}:{d2}.",
    "The meeting is at {n1_12}:{n10_59} tomorrow.",
    "ISBN 978-{n0_9}-{d2}-{d6}-{d1} is the new edition.",
    "ISBN {n0_9}-{d3}-{d5}-{d1} was the old one.",
    "The barcode reads 978{d10} on the back.",
    "I read {WORD} in the article.",
    "Call {WORD}() before saving.",
    "See https://example.com/docs/v{n1_9}/AbC{d3}dEf{d3}GhI{d3}jKl?id={d6}&ref=x{d4}",
    "The id is {hex8}-{hex4}-{hex4}-{hex4}-{hex12}.",
    "Fixed in commit {hex40} last night.",
    "sha256 {hex64}",
    "I ran {n3_42}.{n0_9} km in {n20_59}:{d2}.",
    "We won {n10_30}-{n10_30} and then {n1_5}-{n1_5}.",
    "The coordinates are {n10_60}.{d4}, {n1_120}.{d4}.",
    "The video got {n1_999},{d3},{d3} views and {n2_99}% likes.",
    "Timestamp {n1500000000_1799999999} in the log.",
    "My zip code is {d5}-{d4} and I live at {n1_999} Main St.",
    "Room {n100_999}, floor {n1_40}, building {n1_9}.",
    "Pi is roughly 3.{d16} they say.",
    "My password is too short, said the app, so I changed it.",
    "The password is required and case-sensitive.",
    "I forgot my pin in the car again, {n2_9} times this week.",
    "Tickets are {n10_99} euros, {n2_9} for kids, {Y} edition.",
    "The flight VN{n100_999} leaves at {n10_23}{d2}.",
    "Between {d3} and {d3} people came, about {d4} in total.",
    "Lotto numbers: 0{n1_9} {n10_49} {n10_49} {n10_49} {n10_49} 0{n1_9} tonight.",
    "The token budget is {n1000_9000} and the key length is {n128_512} bits.",
    "It weighs {n1_99}.{d1} kg and measures {n1_300} x {n1_300} cm.",
    "Model number ABC-{d4}-XYZ costs {n100_999} dollars.",
    "My passport expires on {Y}-{mo}-{dd}, renew it by {MON}.",
    "    password: str = Field(default='', description='db password {n1_9}')",
    "conn = connect(host, pwd=os.environ['DB_PWD_{n1_9}'], password=None)",
    "The logo is data:image/png;base64,iVBORw0KGgoAAAANSUhEUg{d4}AAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
)
MONTHS = ("January", "March", "May", "July", "September", "December")
_FIELD = re.compile(r"\{(\w+)\}")


def _fill(rng: random.Random, template: str) -> str:
    def field(m: re.Match[str]) -> str:
        name = m.group(1)
        if name == "Y":
            return str(rng.randint(1950, 2030))
        if name == "mo":
            return f"{rng.randint(1, 12):02d}"
        if name == "dd":
            return f"{rng.randint(1, 28):02d}"
        if name == "MON":
            return rng.choice(MONTHS)
        if name == "WORD":
            return rng.choice(LONG_WORDS)
        if name.startswith("hex"):
            return "".join(rng.choice("0123456789abcdef") for _ in range(int(name[3:])))
        if name.startswith("n"):
            low, high = name[1:].split("_")
            return str(rng.randint(int(low), int(high)))
        return _digits(rng, int(name[1:]))

    return _FIELD.sub(field, template)


def negative_sentences(seed: int = 20240603, n: int = 400) -> list[str]:
    """Sentences with numbers, long words and tokens that are not personal data."""
    rng = random.Random(seed)
    return [_fill(rng, NEGATIVE_TEMPLATES[i % len(NEGATIVE_TEMPLATES)]) for i in range(n)]


PLAIN_CHAT = (
    "I went hiking with my sister last weekend and it was great",
    "Can you believe it's already {n} degrees outside?",
    "We're meeting at {h}:{m} near the station, bring snacks",
    "My daughter turned {n} on Sunday and we had a party",
    "Thanks so much! See you on the {n}th",
    "Tôi vừa chuyển đến Đà Nẵng được {n} tháng rồi",
    "lol that's hilarious 😂",
    "I read {n} pages of the new novel before bed",
    "The train was {n} minutes late again",
    "Did you finish the report for the {n} clients?",
)


def plain_chat(seed: int = 20240604, n: int = 5000) -> list[str]:
    """Short chat messages without personal data, for the throughput test."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        template = rng.choice(PLAIN_CHAT)
        out.append(template.format(n=rng.randint(2, 99), h=rng.randint(1, 12), m=rng.choice(("00", "30"))))
    return out
