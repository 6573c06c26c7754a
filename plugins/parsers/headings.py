"""Recognising heading-like lines in unstructured text (plain text files, text extracted from PDFs).

Only the shape of one line is judged here — numbered ("2.1 Methods"), ALL CAPS ("RESULTS") or
Title Case ("Related Work"); whether its neighbours make it a heading is the caller's business,
because plain text marks paragraphs with blank lines and PDF text usually does not.
"""

from __future__ import annotations

import re

MAX_HEADING_CHARS = 80
# "1", "1.", "2.3", "2.3.1." then a space and the title; three digits at most per part so that a
# year starting a sentence ("2024 was …") is not read as a section number.
_NUMBERED = re.compile(r"(\d{1,3}(?:\.\d{1,3}){0,5})\.?\s+(\S.*)")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_SENTENCE_END = (".", ",", ";", "!", "…")
# Words a Title Case heading may leave in lower case.
_MINOR_WORDS = frozenset(
    {"a", "an", "and", "as", "at", "but", "by", "for", "from", "in", "into", "nor", "of", "on"}
    | {"onto", "or", "over", "per", "the", "to", "up", "via", "vs", "with"}
)


def numbered_level(line: str) -> int | None:
    """The depth of a numbered heading ("3" → 1, "3.2" → 2), else ``None``."""
    line = line.strip()
    if not _plausible(line):
        return None
    match = _NUMBERED.fullmatch(line)
    if match is None:
        return None
    title = match.group(2)
    first = title[0]
    if not (first.isalpha() and first.isupper()):
        return None
    return min(match.group(1).count(".") + 1, 6)


def is_caps_heading(line: str) -> bool:
    """An ALL CAPS line with at least four letters ("RESULTS", "PART TWO")."""
    line = line.strip()
    if not _plausible(line):
        return False
    letters = [c for c in line if c.isalpha()]
    return len(letters) >= 4 and all(c.isupper() for c in letters)


def is_title_case(line: str) -> bool:
    """A short line whose significant words are all capitalised ("Results and Discussion")."""
    line = line.strip()
    if not _plausible(line):
        return False
    words = _WORD.findall(line)
    if not words or len(words) > 10 or not words[0][0].isupper():
        return False
    significant = [w for w in words if w.lower() not in _MINOR_WORDS]
    return bool(significant) and all(w[0].isupper() for w in significant)


def heading_shape(line: str) -> int | None:
    """The level a heading-like line would have (numbered depth, else 1), or ``None``."""
    level = numbered_level(line)
    if level is not None:
        return level
    if is_caps_heading(line) or is_title_case(line):
        return 1
    return None


def _plausible(line: str) -> bool:
    return 2 < len(line) <= MAX_HEADING_CHARS and not line.endswith(_SENTENCE_END)
