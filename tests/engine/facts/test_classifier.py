"""The L0.5 classifier: English and Vietnamese labels, mixed messages, code, segments, offsets."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.facts.classifier import classify
from engine.facts.types import Classification


def _pieces(text: str, role: str = "user") -> list[tuple[str, str, bool]]:
    result = classify(text, role)
    return [(text[s.start : s.end], s.label, s.keep) for s in result.segments]


def _only(text: str) -> str:
    """The label of a text that must come out as one segment."""
    pieces = _pieces(text)
    assert len(pieces) == 1, pieces
    assert pieces[0][0] == text.strip()
    return pieces[0][1]


# -- one label per text, English and Vietnamese ----------------------------------------------------
GREETINGS = [
    "Hi!",
    "Hello there",
    "Hey Mel!",
    "Good morning!",
    "Thanks!",
    "Thank you so much!",
    "Thanks for sharing!",
    "Bye!",
    "See you later!",
    "Good to see you!",
    "Take care.",
    "Long time no see!",
    "Have a great weekend!",
    "Xin chào!",
    "Chào bạn!",
    "Chào anh Nam",
    "Cảm ơn bạn nhiều nhé!",
    "Tạm biệt!",
    "Chúc ngủ ngon",
    "Hẹn gặp lại!",
]
QUESTIONS = [
    "What about you?",
    "How are you?",
    "Where do you live?",
    "Did you see the game last night?",
    "What do you think",
    "How about you",
    "Have you ever been to Japan",
    "Bạn có khỏe không?",
    "Bạn đi đâu vậy",
    "Bạn ăn cơm chưa",
    "Tại sao bạn không đến?",
    "Khi nào bạn về?",
    "Cái này bao nhiêu tiền",
    "Bạn tên là gì",
]
COMMANDS = [
    "Write a poem about the sea.",
    "Please summarise this article.",
    "please summarize the meeting notes",
    "Can you translate this into French?",
    "Could you remind me to call mom tomorrow?",
    "Tell me a joke.",
    "I want you to act as a travel guide.",
    "Don't forget to buy milk.",
    "Explain quantum computing in simple terms",
    "Hãy viết một bài thơ về biển.",
    "Giúp tôi dịch đoạn này sang tiếng Anh.",
    "Làm ơn tóm tắt bài báo này.",
    "Dịch câu này sang tiếng Pháp",
    "Bạn có thể giúp tôi viết email không?",
    "Đừng quên mua sữa nhé.",
]
FILLERS = [
    "ok",
    "lol",
    "hahaha",
    "Yeah!",
    "Wow!",
    "That's awesome!",
    "That's awesome, Nate!",
    "😂😂",
    "👍",
    ":)",
    "Sounds great!",
    "So cool!",
    "No worries!",
    "Me too!",
    "Keep it up!",
    "Tuyệt vời!",
    "Hay quá!",
    "Ừ",
    "Vâng",
    "Haha 😂",
    "Really?",
    "Thật à?",
]
STATEMENTS = [
    "I just got a new job at Google!",
    "My sister lives in Hanoi.",
    "I went to a support group yesterday.",
    "I'm allergic to peanuts",
    "My dog is named Max and he's 3 years old.",
    "We're moving to Berlin next month!",
    "When I was a kid, I loved turtles.",
    "Went hiking with my sister last weekend.",
    "Had a great time at the concert with my brother!",
    "Book club meets on Tuesdays.",
    "It's Shia Labeouf!",
    "I ran `pip install cairn` yesterday and it worked.",
    "Tôi là kỹ sư phần mềm.",
    "Tôi sống ở Đà Nẵng.",
    "Hôm qua tôi đi xem phim với em gái.",
    "Tôi không biết gì về chuyện đó.",
    "Tìm được việc mới rồi!",
    "Năm ngoái tôi chuyển đến Sài Gòn",
]


@pytest.mark.parametrize("text", GREETINGS)
def test_greetings(text: str) -> None:
    assert _only(text) == "greeting"


@pytest.mark.parametrize("text", QUESTIONS)
def test_questions(text: str) -> None:
    assert _only(text) == "question"


@pytest.mark.parametrize("text", COMMANDS)
def test_commands(text: str) -> None:
    assert _only(text) == "command"


@pytest.mark.parametrize("text", FILLERS)
def test_fillers(text: str) -> None:
    assert _only(text) == "filler"


@pytest.mark.parametrize("text", STATEMENTS)
def test_statements_are_kept(text: str) -> None:
    assert _only(text) == "statement"
    assert classify(text).keep


@pytest.mark.parametrize("text", GREETINGS + QUESTIONS + COMMANDS + FILLERS)
def test_only_statements_are_kept(text: str) -> None:
    result = classify(text)
    assert not result.keep
    assert result.kept == ()


# -- mixed messages --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Hey Mel! I went to a support group yesterday. How are you?",
            [
                ("Hey Mel!", "greeting"),
                ("I went to a support group yesterday.", "statement"),
                ("How are you?", "question"),
            ],
        ),
        (
            "Thanks, Caroline! I adopted a puppy last week. What about you?",
            [
                ("Thanks, Caroline!", "greeting"),
                ("I adopted a puppy last week.", "statement"),
                ("What about you?", "question"),
            ],
        ),
        (
            "Hey Joanna, I'm no writer like you, but I started a blog.",
            [
                ("Hey Joanna,", "greeting"),
                ("I'm no writer like you, but I started a blog.", "statement"),
            ],
        ),
        (
            "Oh yeah, I remember you telling me about Harry Potter!",
            [
                ("Oh yeah,", "filler"),
                ("I remember you telling me about Harry Potter!", "statement"),
            ],
        ),
        (
            "Wow, that looks great! Where in England was it?",
            [
                ("Wow,", "filler"),
                ("that looks great!", "filler"),
                ("Where in England was it?", "question"),
            ],
        ),
        (
            "I loved Paris, have you been?",
            [("I loved Paris,", "statement"), ("have you been?", "question")],
        ),
        (
            "FYI, I finished another pottery project - want to see a pic?",
            [("FYI, I finished another pottery project -", "statement"), ("want to see a pic?", "question")],
        ),
        (
            # thanks for the moment is a reaction; naming what the speaker values is kept for the rules
            "Thanks! Your support means a lot to me. That means a lot. Your words mean a lot.",
            [
                ("Thanks!", "greeting"),
                ("Your support means a lot to me.", "statement"),
                ("That means a lot.", "filler"),
                ("Your words mean a lot.", "filler"),
            ],
        ),
        (
            "Appreciate the offer! I appreciate your encouragement.",
            [("Appreciate the offer!", "greeting"), ("I appreciate your encouragement.", "statement")],
        ),
        (
            "It's all about practice isn't it?",
            [("It's all about practice", "statement"), ("isn't it?", "question")],
        ),
        (
            "Xin chào! Tôi tên là Lan. Bạn có khỏe không?",
            [
                ("Xin chào!", "greeting"),
                ("Tôi tên là Lan.", "statement"),
                ("Bạn có khỏe không?", "question"),
            ],
        ),
        (
            "Cảm ơn bạn! Tuần trước mình mới nhận nuôi một chú mèo. Hãy kể cho mình nghe về chuyến đi nhé.",
            [
                ("Cảm ơn bạn!", "greeting"),
                ("Tuần trước mình mới nhận nuôi một chú mèo.", "statement"),
                ("Hãy kể cho mình nghe về chuyến đi nhé.", "command"),
            ],
        ),
    ],
)
def test_mixed_messages_keep_only_the_statements(text: str, expected: list[tuple[str, str]]) -> None:
    pieces = _pieces(text)
    assert [(p, label) for p, label, _ in pieces] == expected
    assert [p for p, label, keep in pieces if keep] == [p for p, label in expected if label == "statement"]


def test_system_role_keeps_nothing() -> None:
    text = "You are a helpful assistant. The user lives in Paris."
    result = classify(text, role="system")
    assert [s.label for s in result.segments] == ["statement", "statement"]
    assert not result.keep
    assert all("system" in s.reason for s in result.segments)


def test_assistant_statements_are_kept() -> None:
    assert classify("Your flight to Tokyo leaves at 9.", role="assistant").keep


# -- code ------------------------------------------------------------------------------------------
def test_fenced_code_block_is_one_segment() -> None:
    text = "Here is my code:\n```python\ndef f(x):\n\n    return x\n```\nDoes it work?"
    assert _pieces(text) == [
        ("Here is my code:", "statement", True),
        ("```python\ndef f(x):\n\n    return x\n```", "code", False),
        ("Does it work?", "question", False),
    ]


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "Look:\n```\nSELECT * FROM users;\nI think it is fine"
    assert _pieces(text)[-1] == ("```\nSELECT * FROM users;\nI think it is fine", "code", False)


def test_indented_code_after_a_blank_line_is_code() -> None:
    text = "My script:\n\n    for i in range(3):\n        print(i)\n\nIt prints three numbers."
    assert _pieces(text) == [
        ("My script:", "statement", True),
        ("for i in range(3):\n        print(i)", "code", False),
        ("It prints three numbers.", "statement", True),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "x = foo(bar)\nprint(x)",
        "SELECT name, age FROM users WHERE id = 1;",
        "import numpy as np",
        "const total = items.reduce((a, b) => a + b, 0);",
        "if (x > 0) {\n  return x;\n}",
        "$ git commit -m 'fix'",
        '<div class="box">',
    ],
)
def test_lines_of_code_syntax_are_code(text: str) -> None:
    pieces = _pieces(text)
    assert [(p, label) for p, label, _ in pieces] == [(text, "code")]


# -- sentence splitting and offsets ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Mr. Smith paid $3.50 for e.g. apples... and then left. Then I cried.",
            ["Mr. Smith paid $3.50 for e.g. apples... and then left.", "Then I cried."],
        ),
        ("I met Dr. Lee at 5 p.m. yesterday.", ["I met Dr. Lee at 5 p.m. yesterday."]),
        (
            "J. K. Rowling wrote it. I read No. 5 twice.",
            ["J. K. Rowling wrote it.", "I read No. 5 twice."],
        ),
        ("It costs 3.5 dollars. Cheap!", ["It costs 3.5 dollars.", "Cheap!"]),
        ("Wait... What?", ["Wait...", "What?"]),
        ("I was thinking… maybe not.", ["I was thinking… maybe not."]),
        ("I love it 😍 See you soon!", ["I love it 😍", "See you soon!"]),
        ("haha 😂 that was a good one", ["haha 😂 that was a good one"]),
        ("i went there. it was fun", ["i went there.", "it was fun"]),
        ("my sister and I\nwent to Hue last year", ["my sister and I\nwent to Hue last year"]),
        ("First line\nSecond line", ["First line", "Second line"]),
        ("  Tôi đi học.  Em tôi ở nhà!  ", ["Tôi đi học.", "Em tôi ở nhà!"]),
        ('He said "I\'m done." Then he left.', ['He said "I\'m done."', "Then he left."]),
        ("Really?! No way.", ["Really?!", "No way."]),
    ],
)
def test_sentence_splitting(text: str, expected: list[str]) -> None:
    assert [p for p, _, _ in _pieces(text)] == expected


def test_offsets_index_the_original_text_exactly() -> None:
    text = "  Hey Mel!\n\nI went to a support group yesterday.   How are you?  "
    result = classify(text)
    assert [(s.start, s.end) for s in result.segments] == [(2, 10), (12, 48), (51, 63)]
    assert [text[s.start : s.end] for s in result.kept] == ["I went to a support group yesterday."]


def test_empty_and_blank_texts_have_no_segments() -> None:
    for text in ("", "   ", "\n\n\t"):
        assert classify(text) == Classification(())
        assert not classify(text).keep


_ALPHABET = st.sampled_from(
    [
        *"abcXYZ019 .,!?;:-—…'\"`\n\t()[]{}=<>$#@",
        "Mr.",
        "e.g.",
        "😂",
        "🇻🇳",
        "đ",
        "Ư",
        "```",
        "    ",
        "\r",
    ]
)


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_segments_are_ordered_trimmed_disjoint_and_cover_every_visible_character(text: str) -> None:
    result = classify(text)
    spans = [(s.start, s.end) for s in result.segments]
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert all(b1 <= a2 for (_, b1), (a2, _) in itertools.pairwise(spans))
    for a, b in spans:
        assert not text[a].isspace() and not text[b - 1].isspace()
    covered = {i for a, b in spans for i in range(a, b)}
    assert all(i in covered for i, c in enumerate(text) if not c.isspace())
    assert all(s.keep == (s.label == "statement") for s in result.segments)


# Throughput is measured by `python -m bench.components`, not asserted here.
@pytest.mark.timeout(120)  # a hang guard, not a timing: linear work takes a second, the quadratic kind hours
@pytest.mark.parametrize(
    "text",
    ["Mr. " * 40000, "Hey, " * 40000, "a, " * 40000 + "right?", "I went. " * 10000, "```\n" * 10000],
    ids=["abbreviations", "interjections", "commas-then-question", "sentences", "fences"],
)
def test_long_hostile_inputs_finish(text: str) -> None:
    result = classify(text)
    assert result.segments
