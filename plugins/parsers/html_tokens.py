"""A linear-time HTML tokenizer: start tags, end tags and text, following HTML5's end-of-file rules.

The standard library's :class:`html.parser.HTMLParser` is not safe on hostile input on the Python
versions we support: ``"<a" * n`` or ``"<a b='" * n`` take quadratic time (each unfinished tag is
rescanned to the end of the input and then re-read as text), and ``"<!["`` raises
``AssertionError``.  HTML5 tokenization never rescans: a tag, comment or quoted attribute value
that is still open at the end of the input simply ends there.  This module follows that rule, so
every character is examined a bounded number of times; its regular expressions use possessive
quantifiers and cannot backtrack.

Raw-text elements (``script``, ``style`` …) yield their content as one ``raw`` token and
escapable ones (``title``, ``textarea``) as decoded ``text``; elsewhere character references are
decoded with :func:`unescape` (:func:`html.unescape` with numeric references made safe first: a
reference of thousands of digits would otherwise overflow Python's integer-parsing limit and fail
the whole file; HTML5 reads any out-of-range number as U+FFFD, and so does this).  Comments,
doctypes and processing instructions are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from html import unescape as _html_unescape
from typing import Literal, NamedTuple

#: Elements whose content is never markup: it runs to the matching end tag (or the end of input).
RAW_TEXT = frozenset({"script", "style", "xmp", "iframe", "noembed", "noframes", "noscript"})
#: Like :data:`RAW_TEXT`, but character references in the content are decoded.
ESCAPABLE_RAW_TEXT = frozenset({"title", "textarea"})

_TAG_OPEN = re.compile(r"<(/?)([A-Za-z][^\s/>]*+)")
# The rest of a tag up to its ">": runs of ordinary characters, "=" with a quoted or bare value,
# or a stray quote inside a name.  A value whose quote never closes makes the match fail, which
# HTML5 treats as a tag cut off by the end of the file.
_TAG_REST = re.compile(r"""(?:[^>"'=]++|=\s*+(?:"[^"]*+"|'[^']*+'|[^\s>]*+)|["'])*+>""")
_ATTRIBUTE = re.compile(r"""([^\s"'>/=][^\s"'>/=]*+)(?:\s*+=\s*+(?:"([^"]*+)"|'([^']*+)'|([^\s>]++)))?""")
_MAX_ATTRIBUTES = 200
# A numeric character reference as html.unescape reads it: "&#" digits or "&#x" hex digits, ";" optional.
_NUMERIC_REFERENCE = re.compile(r"&#(?:([0-9]++)|([xX])([0-9A-Fa-f]++))(;?)")
# A code point has at most 7 decimal or 6 hexadecimal digits (U+10FFFF), leading zeros apart.
_MAX_DECIMAL_DIGITS = 7
_MAX_HEX_DIGITS = 6


def unescape(text: str) -> str:
    """:func:`html.unescape` that cannot fail: a numeric reference too long to be a character is U+FFFD.

    Leading zeros are dropped first (``&#000…065;`` is "A" however many zeros there are), so no
    reference reaches :func:`int` with more digits than a code point has.
    """
    if "&#" not in text:
        return _html_unescape(text)
    return _html_unescape(_NUMERIC_REFERENCE.sub(_short_reference, text))


def _short_reference(match: re.Match[str]) -> str:
    """The reference with its leading zeros dropped, or U+FFFD when it names no code point."""
    decimal, x, hexadecimal, semicolon = match.groups()
    digits = (decimal if decimal is not None else hexadecimal).lstrip("0") or "0"
    if len(digits) > (_MAX_DECIMAL_DIGITS if decimal is not None else _MAX_HEX_DIGITS):
        return "\ufffd"
    return f"&#{x or ''}{digits}{semicolon}"


class Token(NamedTuple):
    """One token: ``kind`` is ``start``, ``end``, ``text`` (decoded) or ``raw`` (verbatim)."""

    kind: Literal["start", "end", "text", "raw"]
    data: str
    attributes: str = ""


def tokens(source: str) -> Iterator[Token]:
    """The tokens of ``source`` in document order; tag names are lower-cased."""
    pos = 0
    end_of_input = len(source)
    while pos < end_of_input:
        lt = source.find("<", pos)
        if lt < 0:
            yield Token("text", unescape(source[pos:]))
            return
        if lt > pos:
            yield Token("text", unescape(source[pos:lt]))
        tag = _TAG_OPEN.match(source, lt)
        if tag is not None:
            rest = _TAG_REST.match(source, tag.end())
            if rest is None:
                return  # a tag open at the end of the input is dropped, with the rest of it
            name = tag.group(2).lower()
            pos = rest.end()
            if tag.group(1):
                yield Token("end", name)
                continue
            yield Token("start", name, source[tag.end() : pos - 1])
            if name in RAW_TEXT or name in ESCAPABLE_RAW_TEXT:
                pos = yield from _raw_content(source, pos, name)
            continue
        pos = _skip_markup(source, lt)
        if pos < 0:
            yield Token("text", "<")
            pos = lt + 1


def attributes(raw: str) -> dict[str, str]:
    """The attributes in a start tag's ``raw`` text (names lower-cased, values decoded)."""
    found: dict[str, str] = {}
    for match in _ATTRIBUTE.finditer(raw):
        name = match.group(1).lower()
        if name not in found:
            value = next((v for v in match.group(2, 3, 4) if v is not None), "")
            found[name] = unescape(value)
            if len(found) >= _MAX_ATTRIBUTES:
                break
    return found


def _raw_content(source: str, pos: int, name: str) -> Generator[Token, None, int]:
    """Yield the content of a raw-text element and its end tag; return where parsing resumes."""
    closing = re.compile(r"</" + re.escape(name) + r"(?=[\s/>])", re.IGNORECASE)
    match = closing.search(source, pos)
    stop = match.start() if match else len(source)
    content = source[pos:stop]
    if content:
        yield (Token("text", unescape(content)) if name in ESCAPABLE_RAW_TEXT else Token("raw", content))
    yield Token("end", name)
    if match is None:
        return len(source)
    after = _TAG_REST.match(source, match.end())
    return after.end() if after else len(source)


def _skip_markup(source: str, lt: int) -> int:
    """Past a comment, doctype, processing instruction or bogus end tag at ``lt``; -1 if not one.

    An unclosed one extends to the end of the input, as in HTML5.
    """
    if source.startswith("<!--", lt):
        close = source.find("-->", lt + 4)
        return len(source) if close < 0 else close + 3
    if source.startswith(("<!", "<?", "</"), lt) and not source.startswith("</>", lt):
        if source.startswith("</", lt) and lt + 2 >= len(source):
            return -1
        close = source.find(">", lt + 2)
        return len(source) if close < 0 else close + 1
    if source.startswith("</>", lt):
        return lt + 3
    return -1
