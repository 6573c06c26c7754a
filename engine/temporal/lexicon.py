"""The words of time: numbers, units, months, weekdays, seasons (English, basic Vietnamese).

The tables map every accepted spelling to one canonical value; the regex fragments are built from
the same tables, so a word is recognised if and only if it can be interpreted.  Fragments use named
groups where a rule needs the value; :func:`unnamed` strips the names so a fragment can be embedded
more than once in a composite pattern.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# -- numbers ---------------------------------------------------------------------------------------
_CARDINALS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
NUMBER_WORDS: dict[str, int] = {word: value for value, word in enumerate(_CARDINALS) if value}
NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "a": 1, "an": 1, "a dozen": 12})
NUMBER_WORDS.update({"a couple of": 2, "a couple": 2, "couple of": 2})
#: Counts that are only approximately 3; a shift by them resolves to a range covering 2–4 units.
FUZZY_NUMBERS: dict[str, int] = {"a few": 3, "few": 3, "several": 3}
NUMBER_WORDS.update(FUZZY_NUMBERS)

_ORDINAL_UNITS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
]
ORDINAL_WORDS: dict[str, int] = {word: value for value, word in enumerate(_ORDINAL_UNITS, start=1)}
ORDINAL_WORDS.update({"twentieth": 20, "thirtieth": 30, "thirty-first": 31, "thirty first": 31})
for _value, _word in enumerate(_ORDINAL_UNITS[:9], start=1):
    ORDINAL_WORDS[f"twenty-{_word}"] = 20 + _value
    ORDINAL_WORDS[f"twenty {_word}"] = 20 + _value

# -- units -----------------------------------------------------------------------------------------
UNIT_WORDS: dict[str, str] = {}
for _canonical, _spellings in {
    "minute": "minute min",
    "hour": "hour hr",
    "day": "day night",
    "week": "week",
    "weekend": "weekend",
    "fortnight": "fortnight",
    "month": "month",
    "year": "year yr",
    "decade": "decade",
}.items():
    for _spelling in _spellings.split():
        UNIT_WORDS[_spelling] = _canonical
        UNIT_WORDS[_spelling + "s"] = _canonical

# -- calendar names --------------------------------------------------------------------------------
_MONTH_NAMES = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
MONTHS: dict[str, int] = {name: number for number, name in enumerate(_MONTH_NAMES, start=1)}
MONTHS.update({name[:3]: number for number, name in enumerate(_MONTH_NAMES, start=1)})
MONTHS["sept"] = 9
#: Month words that are also ordinary English words; outside a date they count only when
#: capitalised.
VERB_MONTHS = frozenset({"may", "march"})
#: Month words that are also given names (or abbreviations): they need a number or a cue word next
#: to them.
NAME_MONTHS = frozenset({"april", "june", "august"}) | frozenset(MONTHS).difference(_MONTH_NAMES)

_WEEKDAY_NAMES = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
WEEKDAYS: dict[str, int] = {name: number for number, name in enumerate(_WEEKDAY_NAMES)}
WEEKDAYS.update({"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4})
WEEKDAYS.update({"sat": 5, "sun": 6})
#: Weekday abbreviations that are English words ("sun", "sat", "wed"): they need a capital and a
#: cue.
WORD_WEEKDAYS = frozenset({"mon", "wed", "sat", "sun"})

SEASONS: dict[str, str] = {
    "spring": "spring",
    "summer": "summer",
    "autumn": "autumn",
    "fall": "autumn",
}
SEASONS["winter"] = "winter"

PARTS_OF_DAY: dict[str, tuple[int, int]] = {
    # (start hour, length in hours); a night runs past midnight into the next morning.
    "morning": (6, 6),
    "afternoon": (12, 6),
    "evening": (18, 6),
    "night": (18, 12),
}

#: Words that, right before a month or season, show it is meant as a time ("in May", "since June").
CUE_WORDS = frozenset(
    [
        "in",
        "during",
        "since",
        "until",
        "till",
        "by",
        "before",
        "after",
        "from",
        "through",
        "throughout",
        "of",
        "to",
        "early",
        "mid",
        "late",
        "last",
        "next",
        "this",
        "coming",
        "past",
        "around",
        "between",
        "and",
        "end",
        "beginning",
        "start",
        "middle",
    ]
)


# -- Vietnamese ------------------------------------------------------------------------------------
def vi(phrase: str) -> str:
    """A regex for a Vietnamese phrase in either Unicode form (NFC or NFD), any spacing.

    Text typed on some systems arrives decomposed (a base letter followed by combining marks);
    offsets must index the text as given, so both spellings are matched rather than normalising the
    text first.
    """
    forms = dict.fromkeys(unicodedata.normalize(form, phrase) for form in ("NFC", "NFD"))
    pieces = [r"\s+".join(re.escape(w) for w in form.split()) for form in forms]
    return "(?:" + "|".join(pieces) + ")"


VI_NUMBERS: dict[str, int] = {
    "một": 1,
    "hai": 2,
    "ba": 3,
    "bốn": 4,
    "năm": 5,
    "sáu": 6,
    "bảy": 7,
    "tám": 8,
    "chín": 9,
    "mười": 10,
    "vài": 3,
    "mấy": 3,
}
VI_UNITS: dict[str, str] = {
    "phút": "minute",
    "giờ": "hour",
    "tiếng": "hour",
    "ngày": "day",
    "tuần": "week",
    "tháng": "month",
    "năm": "year",
}
#: Fixed Vietnamese phrases → the English expression with the same meaning.
VI_PHRASES: dict[str, str] = {
    "hôm nay": "today",
    "bữa nay": "today",
    "ngày mai": "tomorrow",
    "hôm qua": "yesterday",
    "bữa qua": "yesterday",
    "hôm kia": "the day before yesterday",
    "ngày kia": "the day after tomorrow",
    "ngày mốt": "the day after tomorrow",
    "sáng nay": "this morning",
    "chiều nay": "this afternoon",
    "tối nay": "this evening",
    "đêm nay": "tonight",
    "tối qua": "yesterday evening",
    "đêm qua": "last night",
    "tuần trước": "last week",
    "tuần rồi": "last week",
    "tuần này": "this week",
    "tuần sau": "next week",
    "tuần tới": "next week",
    "cuối tuần này": "this weekend",
    "cuối tuần trước": "last weekend",
    "cuối tuần rồi": "last weekend",
    "cuối tuần sau": "next weekend",
    "cuối tuần tới": "next weekend",
    "tháng trước": "last month",
    "tháng rồi": "last month",
    "tháng này": "this month",
    "tháng sau": "next month",
    "tháng tới": "next month",
    "năm ngoái": "last year",
    "năm rồi": "last year",
    "năm trước": "last year",
    "năm nay": "this year",
    "năm sau": "next year",
    "năm tới": "next year",
}


# -- regex helpers ---------------------------------------------------------------------------------
def alternation(words: Iterable[str]) -> str:
    """A non-capturing alternation of ``words``, longest first, spaces matching any whitespace.

    Python's regex alternation takes the first branch that matches, not the longest, so "a couple
    of" must be tried before "a".
    """
    ordered = sorted(set(words), key=lambda w: (-len(w), w))
    return "(?:" + "|".join(r"\s+".join(re.escape(p) for p in w.split()) for w in ordered) + ")"


_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


def unnamed(pattern: str) -> str:
    """``pattern`` with its named groups made non-capturing, for embedding in a larger pattern."""
    return _NAMED_GROUP.sub("(?:", pattern)


def squash(text: str) -> str:
    """Lower-case ``text`` with runs of whitespace made one space: the key for the tables above."""
    return " ".join(text.lower().split())


#: Words whose presence lets a text through the cheap pre-filter of ``find_mentions``.
HEAD_WORDS = frozenset(
    {
        "today",
        "tonight",
        "tonite",
        "tomorrow",
        "tmrw",
        "yesterday",
        "ago",
        "recently",
        "lately",
        "noon",
        "midday",
        "midnight",
        "morning",
        "afternoon",
        "evening",
        "night",
    }
    | set(UNIT_WORDS)
    | set(MONTHS)
    | set(WEEKDAYS)
    | set(SEASONS)
    | {w for phrase in VI_PHRASES for w in phrase.split()}
    | set(VI_UNITS)
)
