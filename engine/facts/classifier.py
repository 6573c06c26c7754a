"""L0.5 classifier: cuts a message into sentence-like segments and keeps only the statements.

Fact extraction is the expensive stage, and most chat text carries no fact: greetings ("Hey Mel!"),
questions ("What about you?"), requests to an assistant ("write a poem"), code, and reactions
("That's awesome!").  This module drops those cheaply, with the English and Vietnamese cue lists of
:mod:`engine.facts.classifier_cues`, and hands the statements on.

Segmentation (offsets index the text given to :func:`classify`; segments carry no surrounding
whitespace):

* a fenced code block (``` or ~~~) is one segment; a run of indented or code-looking lines is one
  segment;
* prose lines are joined where a sentence wraps (no end punctuation, next line in lower case), then
  cut after ``. ! ? …`` and after an emoji followed by a capital — but not after abbreviations
  ("Mr.", "e.g."), initials ("J. K."), numbered references ("No. 5"), decimals ("3.5"), or an
  ellipsis followed by lower case;
* a leading interjection is split off ("Hey Mel, I went …" → "Hey Mel," + "I went …"), and so is a
  trailing question after a statement ("I loved Paris, have you been?"), so the statement is not
  lost.

Labels, first match wins: ``code``; ``greeting``; ``filler`` (a reaction without content);
``command``; ``question``; else ``statement``.  Only statements are kept, and nothing at all for the
``system`` role. The rules lean towards keeping: an unsure sentence stays a statement, because a
dropped fact costs more than a reaction sent to the extractor.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from engine.commands import EN_COMMAND, VI_COMMAND
from engine.facts import classifier_cues as cues
from engine.facts.types import Classification, Segment, SegmentLabel

_HAS_LETTER = re.compile(r"[^\W\d_]")
_CLOSERS = "\"'”’)]}»"
_FENCE_RE = re.compile(r"(```|~~~)[\s\S]*?(?:\1|\Z)")
_BOUNDARY_RE = re.compile(r"(?:[.!?…？！。]+[\"'”’)\]]*|" + cues.EMOJI + r"+)(?=\s)|[.!?…？！。]+[\"'”’)\]]*$")
_INITIALISM = re.compile(r"(?:[a-z]\.)+[a-z]")
_LEADING_VOCATIVE = re.compile(r"[A-ZÀ-Ỹ][\w'’-]*\s*,\s+")
_PREFIX_SEP = re.compile(r"\s*(?:,|\s[-–—]\s)\s*")
_TAG_SEP = re.compile(r",\s+|\s[-–—]\s+|;\s+")
_WORD = re.compile(r"[\w'’]+")
_CODE_SYMBOL_RE = re.compile(r"[{}\[\]()<>;=+*/\\|&$#_^%~`]")

_Piece = tuple[int, int, SegmentLabel, str]


# -- segmentation ----------------------------------------------------------------------------------
def _spans(text: str) -> Iterator[tuple[int, int, bool]]:
    """Yield ``(start, end, is_code)`` for every sentence-like piece of ``text``, in order."""
    pos = 0
    for fence in _FENCE_RE.finditer(text):
        yield from _lines(text, pos, fence.start())
        end = fence.start() + len(fence.group().rstrip())  # an unclosed fence runs to the end
        yield fence.start(), end, True
        pos = fence.end()
    yield from _lines(text, pos, len(text))


def _code_score(line: str) -> int:
    """How code-like one stripped line looks; 2 or more is code."""
    symbols = len(_CODE_SYMBOL_RE.findall(line))
    if not symbols and not line.startswith(cues.CODE_KEYWORDS):
        return 0  # the common case, prose: skip the patterns
    score = 0
    if cues.CODE_START.match(line):
        score += 2
    if cues.CODE_END.search(line):
        score += 2
    if cues.ASSIGNMENT.match(line):
        score += 2
    if cues.CODE_OPERATOR.search(line):
        score += 1
    if symbols >= 3 and symbols / len("".join(line.split())) >= 0.15:
        score += 1
    return score


def _lines(text: str, start: int, end: int) -> Iterator[tuple[int, int, bool]]:
    """Group the lines of ``text[start:end]`` into code runs and prose blocks; cut prose into
    sentences.

    A line is code when it scores 2, when it scores 1 right after code, or when it is indented (4
    spaces or a tab) and either follows code or follows a blank line while looking a little like
    code.
    """
    block: list[int] = []  # [first, last] offsets of the current block
    block_code = prev_code = False
    prev_blank = True
    prev_line = ""
    pos = start
    while pos <= end:
        eol = text.find("\n", pos, end)
        eol = end if eol < 0 else eol
        line, line_start, pos = text[pos:eol], pos, eol + 1
        stripped = line.strip()
        if not stripped:
            if block:
                yield from _emit(text, block, block_code)
                block = []
            prev_blank, prev_code, prev_line = True, False, ""
            continue
        score = _code_score(stripped)
        indented = line.startswith(("    ", "\t"))
        is_code = score >= 2 or (score >= 1 and prev_code) or (indented and (prev_code or (prev_blank and score > 0)))
        first = line_start + len(line) - len(line.lstrip())
        last = line_start + len(line.rstrip())
        if block and is_code == block_code and (is_code or _wraps(prev_line, stripped)):
            block[1] = last
        else:
            if block:
                yield from _emit(text, block, block_code)
            block, block_code = [first, last], is_code
        prev_blank, prev_code, prev_line = False, is_code, stripped
    if block:
        yield from _emit(text, block, block_code)


def _wraps(prev_line: str, line: str) -> bool:
    """A prose line goes on from the last if that lacks end punctuation and this is lower case."""
    return bool(prev_line) and prev_line[-1] not in ".!?…:;" and line[0].islower()


def _emit(text: str, block: list[int], is_code: bool) -> Iterator[tuple[int, int, bool]]:
    if is_code:
        yield block[0], block[1], True
        return
    seg_start, end = block
    for m in _BOUNDARY_RE.finditer(text, seg_start, end):
        if m.end() <= seg_start or not _is_boundary(text, seg_start, m, end):
            continue
        yield seg_start, m.end(), False
        seg_start = m.end()
        while seg_start < end and text[seg_start].isspace():
            seg_start += 1
    if seg_start < end:
        yield seg_start, end, False


def _is_boundary(text: str, seg_start: int, m: re.Match[str], end: int) -> bool:
    """Whether the punctuation (or emoji) matched by ``m`` ends a sentence."""
    nxt = m.end()
    while nxt < end and text[nxt].isspace():
        nxt += 1
    if nxt >= end:
        return True
    following = text[nxt]
    punct = m.group().rstrip(_CLOSERS)
    if not punct or cues.EMOJI_RE.match(punct):
        return following.isupper()  # "So cute 😍 I love him", but not "haha 😂 that was fun"
    if any(c in punct for c in "!?？！"):
        return True
    if punct.startswith("..") or "…" in punct:
        return not following.islower()
    before = text[max(seg_start, m.start() - 40) : m.start()].split()  # the word before the mark
    word = before[-1].lstrip("(\"'“‘").lower() if before else ""
    if word in cues.NO_SPLIT:
        return False
    if word in cues.NUMBERED:
        return not following.isdigit()
    if word in cues.MAYBE_FINAL:
        return following.isupper()
    if (len(word) == 1 or _INITIALISM.fullmatch(word)) and text[m.start() - 1].isupper():
        return not following.isupper()  # initials: "J. K. Rowling", "J.K. Rowling"
    return True


# -- normalisation ---------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def _norm(s: str) -> str:
    """Lower case, straight apostrophes, no emoji/emoticons/punctuation, single spaces.

    Labelling one piece normalises the same few strings several times over (its forms without names, without a
    vocative, its tail), so the answers are remembered: this was half of the classifier's time.
    """
    s = cues.EMOTICON_RE.sub(" ", s.replace("’", "'").replace("‘", "'"))
    s = s.lower() if s.isascii() else cues.EMOJI_RE.sub(" ", s.lower())
    return " ".join(_PUNCTUATION.sub(" ", s).split())


_PUNCTUATION = re.compile(r"[^\w'\s]|_")


def _is_name(word: str) -> bool:
    """Title case and not the pronoun "I" ("I'm", "I've"): a name when it is not the first word."""
    return word[0].isupper() and not word.isupper() and not word.startswith("I'")


def _bare_forms(piece: str, *, strip_first: bool) -> list[str]:
    """Normalised forms of ``piece`` for the reaction lists, without names or a leading conjunction.

    Title-case words after the first are taken for names and dropped ("Hey Mel" → "hey"); with
    ``strip_first`` a second form also drops a capitalised first word ("Maria, that sounds
    awesome").
    """
    found = _WORD.findall(piece.replace("’", "'"))
    kept = [w for i, w in enumerate(found) if i == 0 or not _is_name(w)]
    while len(kept) > 1 and kept[0].lower() in cues.LEADING_CONJUNCTIONS:
        kept = kept[1:]
    forms = [_norm(" ".join(kept))]
    if strip_first and len(kept) > 1 and _is_name(kept[0]):
        forms.append(_norm(" ".join(kept[1:])))
    return [f for f in forms if f]


# -- labels ----------------------------------------------------------------------------------------
def _reaction(bare: str) -> tuple[SegmentLabel, str] | None:
    """Greeting or filler when the whole name-free, normalised piece is one; else None."""
    if cues.GREETING_RE.fullmatch(bare) or _is_thanks_for(bare):
        return "greeting", "greeting or thanks"
    if all(w in cues.FILLER_WORDS or cues.REPEATED_INTERJECTION.fullmatch(w) for w in bare.split()):
        return "filler", "reaction words only"
    if cues.FILLER_PHRASES_RE.fullmatch(bare) or cues.EVALUATIVE_RE.fullmatch(bare):
        return "filler", "short reaction without content"
    return None


def _is_thanks_for(bare: str) -> bool:
    """'Thanks for sharing the recipe' is thanking, unless the reason is the speaker's own news."""
    found = bare.split()
    return bool(cues.THANKS_FOR.match(bare)) and len(found) <= 12 and not cues.FIRST_PERSON.intersection(found[1:])


def _label(piece: str, *, strip_first: bool = True) -> tuple[SegmentLabel, str]:
    """Label one piece of prose (``strip_first``: a capitalised first word may be a name)."""
    if not _HAS_LETTER.search(cues.EMOTICON_RE.sub(" ", piece)):
        return "filler", "no words (emoji or punctuation)"
    for bare in _bare_forms(piece, strip_first=strip_first):
        found = _reaction(bare)
        if found:
            return found
    if strip_first and len(names := _WORD.findall(piece)) <= 2 and all(map(_is_name, names)):
        return "filler", "only a name"  # "Caroline!" alone; as a prefix ("Books, …") it stays
    low = _norm(piece)
    unaddressed = _norm(_LEADING_VOCATIVE.sub("", piece.strip(), count=1))
    if any(EN_COMMAND.match(x) or VI_COMMAND.match(x) for x in (low, unaddressed)):
        return "command", "request or imperative"
    tail = cues.EMOJI_RE.sub("", piece.rstrip().rstrip(_CLOSERS + " ")).rstrip()
    if tail.endswith(("?", "？")):
        return "question", "ends with '?'"
    if _asks(tail, low) or _asks(tail, unaddressed):
        return "question", "interrogative form"
    return "statement", "statement"


def _asks(tail: str, low: str) -> bool:
    """A question without "?": an interrogative opening, or a Vietnamese question particle."""
    if tail.endswith((".", "!", "…")):
        return False
    if cues.EN_QUESTION_START.match(low) and not cues.TAG_ONLY.match(low):
        return True
    if low.endswith("không sao"):
        return False  # "không sao": no problem
    if cues.VI_QUESTION_END.search(low) or cues.VI_QUESTION_START.match(low):
        return True
    m = cues.VI_QUESTION_WORD_END.search(low)
    return m is not None and not cues.VI_NEGATION.search(low[: m.start() + 1] + " ")


def _split_label(text: str, start: int, end: int) -> Iterator[_Piece]:
    """Label ``text[start:end]``, splitting off leading interjections and a trailing question."""
    while True:  # "Oh, wow, that's great": one interjection after another
        sep = _PREFIX_SEP.search(text, start, min(end, start + _PREFIX_REACH))
        if not (sep and sep.start() > start and _TWO_WORDS.search(text, sep.end(), end)):
            break
        prefix = text[start : sep.start()]
        if len(_WORD.findall(prefix)) > 5:
            break
        label, reason = _label(prefix, strip_first=False)
        if label not in ("greeting", "filler"):
            break
        yield start, _mark_end(sep), label, reason
        start = sep.end()
    piece = text[start:end]
    label, reason = _label(piece)
    if label == "question" and reason == "ends with '?'":
        split = _statement_before_question(piece) or _own_statement_before_question(piece)
        if split is not None:
            yield start, start + split[0], "statement", "statement before a question"
            yield start + split[1], end, "question", "question after a statement"
            return
    if label == "question" and not piece.rstrip().endswith("?"):
        after = _statement_after_question(piece)
        if after is not None:
            yield start, start + after[0], "question", reason
            yield start + after[1], end, "statement", "statement after a question"
            return
    yield start, end, label, reason


_PREFIX_REACH = 80  # an interjection is at most five words long
_TWO_WORDS = re.compile(r"[\w'’]+\W+[\w'’]+")


def _mark_end(sep: re.Match[str]) -> int:
    """End of the separator's mark (comma, dash): the mark stays with the text before it."""
    return sep.start() + len(sep.group()) - len(sep.group().lstrip()) + 1


_TAIL_REACH = 200


def _statement_before_question(piece: str) -> tuple[int, int] | None:
    """Where a statement ends and a trailing question starts: "I loved Paris, have you been?"."""
    cuts = [(_mark_end(m), m.end()) for m in _TAG_SEP.finditer(piece)]
    tag = cues.BARE_TAG.search(piece)
    if tag:
        cuts.append((tag.start(), tag.start("tag")))
    for head_end, tail_start in sorted(cuts, reverse=True):
        if len(piece) - tail_start > _TAIL_REACH:
            return None  # a trailing question is short; stop looking further back
        head, tail = piece[:head_end], _norm(piece[tail_start:])
        asks = cues.EN_QUESTION_START.match(tail) or cues.ELLIPTICAL_QUESTION.match(tail)
        if len(_WORD.findall(head)) < 3 or not asks:
            continue
        if _label(head)[0] == "statement" and not cues.EN_QUESTION_START.match(_norm(head)):
            return head_end, tail_start
        return None
    return None


#: The opening of a statement about the speaker ("I speak …", "Also I don't smoke", "we have …", "my wife …").
_OWN_STATEMENT = re.compile(
    r"^(?:(?:also|and|but|so|plus|ok|okay|well|oh|btw)\s+)?(?:i|i['’]m|im|i['’]ve|we|we['’]re|we['’]ve|my|our)\s",
    re.IGNORECASE,
)
_FIRST_PERSON_WORD = re.compile(r"\b(?:i|i['’]m|im|me|my|we|our|us)\b", re.IGNORECASE)


def _own_statement_before_question(piece: str) -> tuple[int, int] | None:
    """A statement about the speaker with a short question tacked on after a comma ("I speak Arabic, French and
    a little Spanish, maybe this is an advantage?", "I don't smoke, I don't drink, so rent 4,000 ok?")."""
    if not _OWN_STATEMENT.match(_norm(piece)):
        return None
    for head_end, tail_start in sorted(((_mark_end(m), m.end()) for m in _TAG_SEP.finditer(piece)), reverse=True):
        tail = piece[tail_start:]
        if len(tail) > 120:
            return None
        if _FIRST_PERSON_WORD.search(tail):
            continue
        head = piece[:head_end]
        if len(_WORD.findall(head)) >= 3 and _label(head)[0] == "statement":
            return head_end, tail_start
        return None
    return None


def _statement_after_question(piece: str) -> tuple[int, int] | None:
    """A question without "?" that runs on into a statement about the speaker ("what should I set up at home
    before, we have a two story house and my wife works full time")."""
    for m in _TAG_SEP.finditer(piece):
        tail = piece[m.end() :]
        if _OWN_STATEMENT.match(_norm(tail)) and len(_WORD.findall(tail)) >= 3:
            return _mark_end(m), m.end()
    return None


def classify(text: str, role: str = "user") -> Classification:
    """Cut ``text`` into labelled segments; only statements are kept (none for the ``system`` role).

    Offsets index ``text``: ``text[s.start:s.end]`` is the segment, without surrounding whitespace.
    """
    system = role == "system"
    segments: list[Segment] = []
    for start, end, is_code in _spans(text):
        pieces: list[_Piece] | Iterator[_Piece] = (
            [(start, end, "code", "code block or code lines")] if is_code else _split_label(text, start, end)
        )
        for s, e, label, reason in pieces:
            note = "; system role: nothing is kept" if system else ""
            segments.append(Segment(s, e, label, label == "statement" and not system, reason + note))
    return Classification(tuple(segments))
