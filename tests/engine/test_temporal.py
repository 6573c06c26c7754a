"""Temporal resolution: expressions → intervals, mentions in free text, instants at the edges."""

from __future__ import annotations

import unicodedata
from datetime import UTC, date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings, strategies as st

from engine.errors import ValidationError
from engine.temporal import find_mentions, from_epoch, parse_datetime, resolve, to_epoch
from engine.temporal.types import TimeRange

#: Wednesday 15 May 2024, 10:30 UTC.
ANCHOR = datetime(2024, 5, 15, 10, 30, tzinfo=UTC)


def at(y: int, mo: int, d: int, h: int = 0, mi: int = 0, tz: object = UTC) -> datetime:
    """An aware datetime (UTC unless ``tz`` says otherwise)."""
    assert isinstance(tz, timezone | ZoneInfo)
    return datetime(y, mo, d, h, mi, tzinfo=tz)


def span(expression: str, anchor: datetime = ANCHOR, prefer: str = "past") -> TimeRange:
    """``resolve`` that must succeed."""
    result = resolve(expression, anchor, prefer=prefer)  # type: ignore[arg-type]
    assert result is not None, f"{expression!r} did not resolve"
    return result


# -- the table -------------------------------------------------------------------------------------
TABLE: list[tuple[str, datetime, datetime, str]] = [
    ("today", at(2024, 5, 15), at(2024, 5, 16), "day"),
    ("tonight", at(2024, 5, 15, 18), at(2024, 5, 16, 6), "part_of_day"),
    ("this morning", at(2024, 5, 15, 6), at(2024, 5, 15, 12), "part_of_day"),
    ("this afternoon", at(2024, 5, 15, 12), at(2024, 5, 15, 18), "part_of_day"),
    ("this evening", at(2024, 5, 15, 18), at(2024, 5, 16), "part_of_day"),
    ("last night", at(2024, 5, 14, 18), at(2024, 5, 15, 6), "part_of_day"),
    ("tomorrow", at(2024, 5, 16), at(2024, 5, 17), "day"),
    ("tomorrow at 2pm", at(2024, 5, 16, 14), at(2024, 5, 16, 14, 1), "minute"),
    ("2pm tomorrow", at(2024, 5, 16, 14), at(2024, 5, 16, 14, 1), "minute"),
    ("tomorrow morning", at(2024, 5, 16, 6), at(2024, 5, 16, 12), "part_of_day"),
    ("tonight at 8", at(2024, 5, 15, 20), at(2024, 5, 15, 20, 1), "minute"),
    ("yesterday", at(2024, 5, 14), at(2024, 5, 15), "day"),
    ("the day before yesterday", at(2024, 5, 13), at(2024, 5, 14), "day"),
    ("the day after tomorrow", at(2024, 5, 17), at(2024, 5, 18), "day"),
    ("last week", at(2024, 5, 6), at(2024, 5, 13), "week"),
    ("this week", at(2024, 5, 13), at(2024, 5, 20), "week"),
    ("next week", at(2024, 5, 20), at(2024, 5, 27), "week"),
    ("the week before last", at(2024, 4, 29), at(2024, 5, 6), "week"),
    ("last month", at(2024, 4, 1), at(2024, 5, 1), "month"),
    ("this month", at(2024, 5, 1), at(2024, 6, 1), "month"),
    ("next month", at(2024, 6, 1), at(2024, 7, 1), "month"),
    ("last year", at(2023, 1, 1), at(2024, 1, 1), "year"),
    ("this year", at(2024, 1, 1), at(2025, 1, 1), "year"),
    ("next year", at(2025, 1, 1), at(2026, 1, 1), "year"),
    ("in 3 days", at(2024, 5, 18), at(2024, 5, 19), "day"),
    ("in two weeks", at(2024, 5, 27), at(2024, 6, 3), "week"),
    ("in an hour", at(2024, 5, 15, 11), at(2024, 5, 15, 12), "hour"),
    ("in a few days", at(2024, 5, 17), at(2024, 5, 20), "range"),
    ("3 days ago", at(2024, 5, 12), at(2024, 5, 13), "day"),
    ("2 weeks ago", at(2024, 4, 29), at(2024, 5, 6), "week"),
    ("a month ago", at(2024, 4, 1), at(2024, 5, 1), "month"),
    ("ten years ago", at(2014, 1, 1), at(2015, 1, 1), "year"),
    ("a few days ago", at(2024, 5, 11), at(2024, 5, 14), "range"),
    ("a couple of weeks ago", at(2024, 4, 29), at(2024, 5, 6), "week"),
    ("two weekends ago", at(2024, 5, 4), at(2024, 5, 6), "weekend"),
    ("on Friday", at(2024, 5, 10), at(2024, 5, 11), "day"),
    ("Friday", at(2024, 5, 10), at(2024, 5, 11), "day"),
    ("next Friday", at(2024, 5, 24), at(2024, 5, 25), "day"),
    ("last Friday", at(2024, 5, 10), at(2024, 5, 11), "day"),
    ("this Friday", at(2024, 5, 17), at(2024, 5, 18), "day"),
    ("this coming Monday", at(2024, 5, 20), at(2024, 5, 21), "day"),
    ("last Monday", at(2024, 5, 13), at(2024, 5, 14), "day"),
    ("Friday at 3pm", at(2024, 5, 10, 15), at(2024, 5, 10, 15, 1), "minute"),
    ("this weekend", at(2024, 5, 18), at(2024, 5, 20), "weekend"),
    ("last weekend", at(2024, 5, 11), at(2024, 5, 13), "weekend"),
    ("next weekend", at(2024, 5, 25), at(2024, 5, 27), "weekend"),
    ("the weekend before last", at(2024, 5, 4), at(2024, 5, 6), "weekend"),
    ("this past weekend", at(2024, 5, 11), at(2024, 5, 13), "weekend"),
    ("in March", at(2024, 3, 1), at(2024, 4, 1), "month"),
    ("last March", at(2024, 3, 1), at(2024, 4, 1), "month"),
    ("next March", at(2025, 3, 1), at(2025, 4, 1), "month"),
    ("in May", at(2024, 5, 1), at(2024, 6, 1), "month"),
    ("last August", at(2023, 8, 1), at(2023, 9, 1), "month"),
    ("March 2023", at(2023, 3, 1), at(2023, 4, 1), "month"),
    ("March 5", at(2024, 3, 5), at(2024, 3, 6), "day"),
    ("5 March", at(2024, 3, 5), at(2024, 3, 6), "day"),
    ("5th of March", at(2024, 3, 5), at(2024, 3, 6), "day"),
    ("March 5th", at(2024, 3, 5), at(2024, 3, 6), "day"),
    ("the first of June", at(2023, 6, 1), at(2023, 6, 2), "day"),
    ("March 5, 2023", at(2023, 3, 5), at(2023, 3, 6), "day"),
    ("8 May, 2023", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("2023-05-08", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("05/08/2023", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("8.5.2023", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("in 2022", at(2022, 1, 1), at(2023, 1, 1), "year"),
    ("last summer", at(2023, 6, 1), at(2023, 9, 1), "season"),
    ("this summer", at(2024, 6, 1), at(2024, 9, 1), "season"),
    ("this winter", at(2023, 12, 1), at(2024, 3, 1), "season"),
    ("next spring", at(2025, 3, 1), at(2025, 6, 1), "season"),
    ("last fall", at(2023, 9, 1), at(2023, 12, 1), "season"),
    ("winter 2023", at(2023, 12, 1), at(2024, 3, 1), "season"),
    ("at 2pm", at(2024, 5, 15, 14), at(2024, 5, 15, 14, 1), "minute"),
    ("at 14:30", at(2024, 5, 15, 14, 30), at(2024, 5, 15, 14, 31), "minute"),
    ("at 2:30 p.m.", at(2024, 5, 15, 14, 30), at(2024, 5, 15, 14, 31), "minute"),
    ("noon", at(2024, 5, 15, 12), at(2024, 5, 15, 12, 1), "minute"),
    ("midnight", at(2024, 5, 15), at(2024, 5, 15, 0, 1), "minute"),
    ("Friday at midnight", at(2024, 5, 11), at(2024, 5, 11, 0, 1), "minute"),
    ("end of the month", at(2024, 5, 21), at(2024, 6, 1), "range"),
    ("the end of next month", at(2024, 6, 21), at(2024, 7, 1), "range"),
    ("early May", at(2024, 5, 1), at(2024, 5, 11), "range"),
    ("mid May", at(2024, 5, 11), at(2024, 5, 21), "range"),
    ("mid-May", at(2024, 5, 11), at(2024, 5, 21), "range"),
    ("late May", at(2024, 5, 21), at(2024, 6, 1), "range"),
    ("early next week", at(2024, 5, 20), at(2024, 5, 22), "range"),
    ("late 2022", at(2022, 9, 1), at(2023, 1, 1), "range"),
    ("recently", at(2024, 4, 15, 10, 30), at(2024, 5, 15, 10, 30), "range"),
    ("earlier this year", at(2024, 1, 1), at(2024, 5, 15, 10, 30), "range"),
    ("later this week", at(2024, 5, 15, 10, 30), at(2024, 5, 20), "range"),
    ("the other day", at(2024, 5, 8), at(2024, 5, 15), "range"),
    ("the past week", at(2024, 5, 8, 10, 30), at(2024, 5, 15, 10, 30), "range"),
    ("the last 3 days", at(2024, 5, 12, 10, 30), at(2024, 5, 15, 10, 30), "range"),
    ("hôm nay", at(2024, 5, 15), at(2024, 5, 16), "day"),
    ("ngày mai", at(2024, 5, 16), at(2024, 5, 17), "day"),
    ("hôm qua", at(2024, 5, 14), at(2024, 5, 15), "day"),
    ("tuần trước", at(2024, 5, 6), at(2024, 5, 13), "week"),
    ("tuần sau", at(2024, 5, 20), at(2024, 5, 27), "week"),
    ("tháng trước", at(2024, 4, 1), at(2024, 5, 1), "month"),
    ("tháng sau", at(2024, 6, 1), at(2024, 7, 1), "month"),
    ("năm ngoái", at(2023, 1, 1), at(2024, 1, 1), "year"),
    ("năm sau", at(2025, 1, 1), at(2026, 1, 1), "year"),
    ("3 ngày trước", at(2024, 5, 12), at(2024, 5, 13), "day"),
    ("năm năm trước", at(2019, 1, 1), at(2020, 1, 1), "year"),
]


@pytest.mark.parametrize(("expression", "start", "end", "grain"), TABLE, ids=[t[0] for t in TABLE])
def test_resolve_table(expression: str, start: datetime, end: datetime, grain: str) -> None:
    result = span(expression)
    assert (result.start, result.end, result.grain) == (start, end, grain)
    assert result.expression == expression
    assert result.start.tzinfo is not None and result.start.utcoffset() == timedelta(0)


def test_table_is_large_enough_and_covers_the_product_spec() -> None:
    named = {t[0] for t in TABLE}
    spec = {"today", "tonight", "tomorrow at 2pm", "yesterday", "last week", "next month"}
    spec |= {"in 3 days", "2 weeks ago", "on Friday", "next Friday", "this weekend", "in March"}
    spec |= {"last summer"}
    assert spec <= named
    assert len(TABLE) >= 40


# -- prefer ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expression", "start", "end"),
    [
        ("Friday", at(2024, 5, 17), at(2024, 5, 18)),
        ("on Wednesday", at(2024, 5, 22), at(2024, 5, 23)),
        ("in March", at(2025, 3, 1), at(2025, 4, 1)),
        ("in May", at(2024, 5, 1), at(2024, 6, 1)),
        ("March 5", at(2025, 3, 5), at(2025, 3, 6)),
        ("May 15", at(2024, 5, 15), at(2024, 5, 16)),
        ("midnight", at(2024, 5, 16), at(2024, 5, 16, 0, 1)),
        ("next Friday", at(2024, 5, 24), at(2024, 5, 25)),
        ("over the weekend", at(2024, 5, 18), at(2024, 5, 20)),
    ],
)
def test_prefer_future(expression: str, start: datetime, end: datetime) -> None:
    result = span(expression, prefer="future")
    assert (result.start, result.end) == (start, end)


def test_bare_weekday_never_means_today() -> None:
    # The anchor is a Wednesday: "Wednesday" is a week back or a week ahead, never today.
    assert span("Wednesday").start == at(2024, 5, 8)
    assert span("Wednesday", prefer="future").start == at(2024, 5, 22)


def test_last_friday_on_a_saturday_is_yesterday() -> None:
    saturday = at(2023, 7, 15, 13, 51)
    assert span("last Friday", saturday).start == at(2023, 7, 14)
    assert span("next Friday", saturday).start == at(2023, 7, 21)


# -- edges -----------------------------------------------------------------------------------------
def test_next_month_rolls_over_the_year() -> None:
    new_years_eve = at(2024, 12, 31, 23, 59)
    assert (span("next month", new_years_eve).start, span("next month", new_years_eve).end) == (
        at(2025, 1, 1),
        at(2025, 2, 1),
    )
    assert span("next year", new_years_eve).start == at(2025, 1, 1)
    assert span("tomorrow", new_years_eve).start == at(2025, 1, 1)
    assert span("next week", new_years_eve).start == at(2025, 1, 6)


def test_month_arithmetic_from_the_31st() -> None:
    jan31 = at(2024, 1, 31, 9)
    assert (span("next month", jan31).start, span("next month", jan31).end) == (
        at(2024, 2, 1),
        at(2024, 3, 1),
    )
    assert span("in a month", jan31).start == at(2024, 2, 1)  # 31 Jan + 1 month = 29 Feb
    assert span("last month", jan31).start == at(2023, 12, 1)
    assert span("a month ago", at(2024, 3, 31)).start == at(2024, 2, 1)


def test_leap_days() -> None:
    assert span("tomorrow", at(2024, 2, 28, 12)).start == at(2024, 2, 29)
    assert span("tomorrow", at(2023, 2, 28, 12)).start == at(2023, 3, 1)
    assert span("a year ago", at(2024, 2, 29, 12)).start == at(2023, 1, 1)
    assert span("February 29", at(2023, 5, 15)).start == at(2020, 2, 29)
    assert span("February 29", at(2023, 5, 15), prefer="future").start == at(2024, 2, 29)
    assert resolve("February 29, 2023", ANCHOR) is None
    assert resolve("2023-02-30", ANCHOR) is None


def test_aware_non_utc_anchor_keeps_its_zone() -> None:
    saigon = ZoneInfo("Asia/Ho_Chi_Minh")
    anchor = at(2024, 5, 16, 1, 0, tz=saigon)  # still 15 May in UTC
    today = span("today", anchor)
    assert (today.start, today.end) == (at(2024, 5, 16, tz=saigon), at(2024, 5, 17, tz=saigon))
    assert today.start.tzinfo is saigon
    assert span("yesterday", anchor).start == at(2024, 5, 15, tz=saigon)
    assert span("at 2pm", anchor).start == at(2024, 5, 16, 14, tz=saigon)
    fixed = timezone(timedelta(hours=-5))
    assert span("tomorrow", at(2024, 5, 15, 22, tz=fixed)).start == at(2024, 5, 16, tz=fixed)


def test_days_follow_local_midnight_across_daylight_saving() -> None:
    new_york = ZoneInfo("America/New_York")
    tomorrow = span("tomorrow", at(2024, 3, 9, 12, tz=new_york))  # clocks spring forward on 10 March
    assert tomorrow.start == at(2024, 3, 10, tz=new_york)
    assert tomorrow.end == at(2024, 3, 11, tz=new_york)
    # Same-zone subtraction in Python is wall-clock; the real length shows in UTC.
    assert tomorrow.end.astimezone(UTC) - tomorrow.start.astimezone(UTC) == timedelta(hours=23)
    # "in an hour" is sixty real minutes: 01:30 EST + 1 h = 03:30 EDT.
    hour = span("in an hour", at(2024, 3, 10, 1, 30, tz=new_york))
    assert hour.start.astimezone(UTC) == datetime(2024, 3, 10, 7, 0, tzinfo=UTC)
    assert hour.end.astimezone(UTC) - hour.start.astimezone(UTC) == timedelta(hours=1)


def test_naive_anchor_is_utc() -> None:
    result = span("today", datetime(2024, 5, 15, 23, 0))
    assert result.start == at(2024, 5, 15)
    assert result.start.tzinfo is UTC


def test_unknown_expressions_resolve_to_none() -> None:
    garbage = ["", "   ", "banana", "a date", "a second", "someday", "the 45th of May", "x" * 500]
    for text in garbage:
        assert resolve(text, ANCHOR) is None


def test_bad_arguments_raise_validation_errors() -> None:
    with pytest.raises(ValidationError) as err:
        resolve("today", ANCHOR, prefer="sometime")  # type: ignore[arg-type]
    assert err.value.field == "prefer"
    with pytest.raises(ValidationError) as err:
        resolve("today", "2024-05-15")  # type: ignore[arg-type]
    assert err.value.field == "anchor"
    with pytest.raises(ValidationError):
        find_mentions("today", ANCHOR, prefer="later")  # type: ignore[arg-type]


def test_absolute_formats_outside_the_grammar_fall_back_to_dateparser() -> None:
    stamp = span("Mon, 08 May 2023 13:56:00 +0000")
    assert (stamp.start, stamp.grain) == (at(2023, 5, 8, 13, 56), "minute")
    slashes = span("2023/05/08")
    assert (slashes.start, slashes.end, slashes.grain) == (at(2023, 5, 8), at(2023, 5, 9), "day")


def test_surrounding_punctuation_and_case_are_ignored() -> None:
    assert span("  Next Friday! ").start == at(2024, 5, 24)
    assert span("TOMORROW.").start == at(2024, 5, 16)
    assert span("“yesterday”").start == at(2024, 5, 14)


# -- find_mentions ---------------------------------------------------------------------------------
def texts(text: str, anchor: datetime = ANCHOR) -> list[str]:
    return [m.text for m in find_mentions(text, anchor)]


def test_mentions_have_exact_offsets_and_resolve() -> None:
    text = "Let's meet tomorrow at 2pm, then again next Friday. I moved here in March."
    mentions = find_mentions(text, ANCHOR)
    assert [m.text for m in mentions] == ["tomorrow at 2pm", "next Friday", "in March"]
    for m in mentions:
        assert text[m.start : m.end] == m.text
        assert m.range.expression == m.text
    assert mentions[0].range.start == at(2024, 5, 16, 14)
    assert mentions[1].range.start == at(2024, 5, 24)
    assert mentions[2].range.start == at(2024, 3, 1)


def test_longest_match_wins_and_nothing_overlaps() -> None:
    assert texts("I'll see you on Friday at 3pm.") == ["on Friday at 3pm"]
    assert texts("We went the weekend before last.") == ["the weekend before last"]
    assert texts("Two weeks ago I started.") == ["Two weeks ago"]
    assert texts("It was March 5th, 2023 at noon.") == ["March 5th, 2023 at noon"]
    assert texts("Call me tomorrow morning") == ["tomorrow morning"]


def test_conversation_sentence_resolves_against_the_session_time() -> None:
    session = parse_datetime("1:56 pm on 8 May, 2023")
    [mention] = find_mentions("I went to a support group yesterday", session)
    assert mention.text == "yesterday"
    assert (mention.range.start, mention.range.end) == (at(2023, 5, 7), at(2023, 5, 8))
    assert mention.range.grain == "day"


@pytest.mark.parametrize(
    "text",
    [
        "I may go to the party.",
        "May I come along?",
        "we will march together",
        "we will march 5 miles",
        "Give it a second try.",
        "Let's set a date.",
        "June said she would come.",
        "I sat in the sun.",
        "I love summer.",
        "We hike every Friday.",
        "Read John 3:16 again.",
        "Write it in 2000 words.",
        "the last day of school",
    ],
)
def test_ordinary_words_are_not_times(text: str) -> None:
    assert find_mentions(text, ANCHOR) == []


def test_month_words_need_a_reason_to_be_months() -> None:
    assert texts("I think May works.") == ["May"]  # capitalised mid-sentence
    assert texts("Can we do it in June?") == ["in June"]
    assert texts("we will march on march 5th, 2023") == ["on march 5th, 2023"]
    assert texts("Last Fri I finally did it.") == ["Last Fri"]
    assert texts("I had fun last weekend and the summer of 2022.") == [
        "last weekend",
        "the summer of 2022",
    ]


def test_several_mentions_in_order() -> None:
    text = "Yesterday was hard, but last week was worse; in a few days it will be better."
    mentions = find_mentions(text, ANCHOR)
    assert [m.text for m in mentions] == ["Yesterday", "last week", "in a few days"]
    assert [m.start for m in mentions] == sorted(m.start for m in mentions)
    assert mentions[2].range.grain == "range"


def test_vietnamese_mentions_in_either_unicode_form() -> None:
    text = "Tôi đi Hà Nội hôm qua, tuần sau về."
    assert texts(text) == ["hôm qua", "tuần sau"]
    decomposed = unicodedata.normalize("NFD", text)
    mentions = find_mentions(decomposed, ANCHOR)
    assert len(mentions) == 2
    for m in mentions:
        assert decomposed[m.start : m.end] == m.text
    assert mentions[0].range.start == at(2024, 5, 14)
    assert mentions[1].range.start == at(2024, 5, 20)


def test_mentions_use_prefer() -> None:
    [past] = find_mentions("See you Friday", ANCHOR)
    [future] = find_mentions("See you Friday", ANCHOR, prefer="future")
    assert past.range.start == at(2024, 5, 10)
    assert future.range.start == at(2024, 5, 17)


def test_text_without_time_words_is_cheap_and_empty() -> None:
    assert find_mentions("", ANCHOR) == []
    assert find_mentions("Nothing temporal about this sentence at all.", ANCHOR) == []


_TOKENS = [
    "I", "we", "may", "May", "march", "March", "Friday", "fri", "Sun", "sun", "at", "on", "in",
    "the", "last", "next", "this", "week", "weekend", "month", "year", "ago", "a", "few", "two",
    "3", "days", "2pm", "14:30", "noon", "tomorrow", "yesterday", ",", ".", "5th", "of", "2023",
    "2023-05-08", "5/8/2023", "early", "late", "end", "summer", "recently", "hôm", "qua", "tuần",
    "trước", unicodedata.normalize("NFD", "tuần"), "night", "morning", "every", "back", "from",
    "now",
]  # fmt: skip


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=24).map(" ".join))
def test_mention_invariants_hold_for_any_text(text: str) -> None:
    mentions = find_mentions(text, ANCHOR)
    previous_end = 0
    for m in mentions:
        assert text[m.start : m.end] == m.text
        assert m.start >= previous_end  # ordered and non-overlapping
        previous_end = m.end
        assert m.range.start < m.range.end
        assert m.range.start.tzinfo is not None
        again = resolve(m.text, ANCHOR)
        assert again is not None
        assert (again.start, again.end) == (m.range.start, m.range.end)


def test_dates_are_found_in_typical_chat_sentences() -> None:
    """Throughput is measured by `python -m bench.components`; this checks what is found."""
    templates = [
        "Hey, how are you doing today?",
        "I went to a support group yesterday and it was great.",
        "That sounds amazing, I'm so happy for you!",
        "We should grab coffee next Friday at 3pm.",
        "My kids loved the museum, they keep talking about it.",
        "I started painting again a few weeks ago.",
        "Thanks for the recommendation, I'll check it out.",
        "Last summer we went camping by the lake.",
        "What have you been up to lately?",
        "I'm planning to visit my parents in March.",
        "The deadline is 8 May, 2023 so I need to hurry.",
        "It was raining all morning, so we stayed in.",
    ]
    sentences = [f"{templates[i % len(templates)]} ({i})" for i in range(3000)]
    found = sum(len(find_mentions(s, ANCHOR)) for s in sentences)
    assert found >= 1500


# -- parse_datetime, epochs ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-15T10:30:00Z", at(2024, 5, 15, 10, 30)),
        ("2024-05-15T10:30:00+00:00", at(2024, 5, 15, 10, 30)),
        ("2024-05-15T17:30:00+07:00", at(2024, 5, 15, 10, 30)),
        ("2024-05-15T10:30:00", at(2024, 5, 15, 10, 30)),
        ("2024-05-15 10:30", at(2024, 5, 15, 10, 30)),
        ("2024-05-15", at(2024, 5, 15)),
        ("1:56 pm on 8 May, 2023", at(2023, 5, 8, 13, 56)),
        ("12:24 am on 7 April, 2023", at(2023, 4, 7, 0, 24)),
        ("11:01 am on 17 December, 2022", at(2022, 12, 17, 11, 1)),
        ("8 May, 2023", at(2023, 5, 8)),
        ("Mon, 08 May 2023 13:56:00 +0000", at(2023, 5, 8, 13, 56)),
        ("1715769000", at(2024, 5, 15, 10, 30)),
        (1715769000, at(2024, 5, 15, 10, 30)),
        (1715769000.5, at(2024, 5, 15, 10, 30) + timedelta(seconds=0.5)),
        (datetime(2024, 5, 15, 10, 30), at(2024, 5, 15, 10, 30)),
        (at(2024, 5, 15, 12, 30, tz=timezone(timedelta(hours=2))), at(2024, 5, 15, 10, 30)),
    ],
)
def test_parse_datetime_accepts(value: str | datetime | float, expected: datetime) -> None:
    parsed = parse_datetime(value)
    assert parsed == expected
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize(
    "value",
    ["", "banana", "8 May", "yesterday", "2024-13-01", "1:56 pm on 31 February, 2023", True,
     float("nan"), float("inf"), 1.7e12, None, [2024]],
)  # fmt: skip
def test_parse_datetime_rejects_garbage(value: object) -> None:
    with pytest.raises(ValidationError) as err:
        parse_datetime(value)  # type: ignore[arg-type]
    assert err.value.field == "time"


def test_epoch_round_trip() -> None:
    moment = at(2023, 5, 8, 13, 56)
    assert to_epoch(moment) == 1683554160.0
    assert from_epoch(1683554160.0) == moment
    assert from_epoch(0).tzinfo is UTC
    assert to_epoch(datetime(2023, 5, 8, 13, 56)) == 1683554160.0  # naive = UTC
    assert to_epoch(at(2023, 5, 8, 15, 56, tz=timezone(timedelta(hours=2)))) == 1683554160.0
    with pytest.raises(ValidationError):
        from_epoch(float("nan"))
    assert date(2023, 5, 8) == from_epoch(to_epoch(moment)).date()


@pytest.mark.parametrize(
    ("expression", "prefer", "day"),
    [
        ("the day before Thanksgiving", "past", date(2025, 11, 26)),  # Thanksgiving 2025: Thursday 27 November
        ("the day before Thanksgiving", "future", date(2026, 11, 25)),
        ("at Christmas", "past", date(2024, 12, 25)),
        ("at Christmas", "future", date(2025, 12, 25)),
        ("on Easter Monday", "past", date(2025, 4, 21)),  # Easter 2025: 20 April
        ("on Easter Monday", "future", date(2026, 4, 6)),  # Easter 2026: 5 April
        ("over New Year's Eve", "future", date(2025, 12, 31)),
        ("Halloween", "past", date(2025, 10, 31)),
    ],
)
def test_holidays_resolve_to_their_day_on_the_preferred_side(expression: str, prefer: str, day: date) -> None:
    anchor = datetime(2025, 12, 2, 15, 0, tzinfo=UTC)
    found = resolve(expression, anchor, prefer=prefer)  # type: ignore[arg-type]
    assert found is not None and found.grain == "day" and found.start.date() == day


def test_a_holiday_is_found_in_running_text() -> None:
    anchor = datetime(2025, 12, 2, 15, 0, tzinfo=UTC)
    (mention,) = find_mentions("moved into a condo in West Asheville the day before Thanksgiving what a circus", anchor)
    assert mention.text == "the day before Thanksgiving" and mention.range.start.date() == date(2025, 11, 26)
