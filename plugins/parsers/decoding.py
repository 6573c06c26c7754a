"""Bytes to text for the text-based parsers: byte-order marks, declared charsets and fallbacks.

Never fails: any byte sequence decodes to *some* text, with a warning whenever a guess was made.
The order is a byte-order mark (UTF-8, UTF-16, UTF-32), a charset the document declares (HTML
``<meta charset>``), UTF-16 recognised by its zero bytes (mostly-ASCII UTF-16 is also valid UTF-8,
full of NULs, so this comes first), strict UTF-8, then UTF-8 with the odd bad byte replaced when
the rest is clearly UTF-8, and finally Windows-1252 / Latin-1.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_BOMS = (
    # UTF-32 before UTF-16: the UTF-32-LE mark starts with the UTF-16-LE one.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_SNIFF_BYTES = 4096
# C0 controls other than tab, newline, carriage return and form feed; DEL; C1 controls (which only
# appear through the Latin-1 fallback or broken input) and the two non-characters.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufffe\uffff]")
_NEWLINES = re.compile(r"\r\n?|[\x0c\x85\u2028\u2029]")
# WHATWG maps these labels to windows-1252, a superset of Latin-1 in the printable range.
_WINDOWS_1252_ALIASES = frozenset({"iso-8859-1", "iso8859-1", "latin-1", "latin1", "ascii", "us-ascii"})


@dataclass(frozen=True, slots=True)
class Decoded:
    """Decoded text, the encoding used, and what was guessed along the way."""

    text: str
    encoding: str
    warnings: tuple[str, ...] = ()


def decode(data: bytes, *, declared: str | None = None) -> Decoded:
    """Decode ``data``; ``declared`` is a charset label the document itself names, if any."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _lenient(data[len(bom) :], encoding)
    label = _usable_label(declared)
    if label is not None:
        try:
            return Decoded(data.decode(label), label)
        except UnicodeDecodeError:
            pass
    utf16 = _sniff_utf16(data)
    if utf16 is not None:
        decoded = _lenient(data, utf16)
        return Decoded(
            decoded.text,
            utf16,
            (
                f"no byte-order mark: decoded as {utf16.upper()} from its zero bytes",
                *decoded.warnings,
            ),
        )
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    mostly = _mostly_utf8(data)
    if mostly is not None:
        return mostly
    try:
        return Decoded(data.decode("cp1252"), "cp1252", ("not valid UTF-8: decoded as Windows-1252",))
    except UnicodeDecodeError:
        return Decoded(data.decode("latin-1"), "latin-1", ("not valid UTF-8: decoded as Latin-1",))


def normalise_newlines(text: str) -> str:
    r"""``\r\n``, ``\r``, form feeds and Unicode line/paragraph separators become ``\n``."""
    return _NEWLINES.sub("\n", text)


def strip_controls(text: str) -> str:
    """Remove control characters that have no place in readable text (keeps tab and newlines)."""
    return _CONTROLS.sub("", text)


def _lenient(data: bytes, encoding: str) -> Decoded:
    text = data.decode(encoding, errors="replace")
    bad = text.count("\ufffd") - _literal_replacements(data, encoding)
    if bad > 0:
        return Decoded(text, encoding, (f"{bad} invalid {encoding.upper()} sequences replaced",))
    return Decoded(text, encoding)


def _literal_replacements(data: bytes, encoding: str) -> int:
    """U+FFFD characters genuinely present in ``data`` (not produced by decoding errors)."""
    return data.count("\ufffd".encode(encoding))


def _usable_label(declared: str | None) -> str | None:
    if not declared:
        return None
    label = declared.strip().lower()
    if label in _WINDOWS_1252_ALIASES:
        return "cp1252"
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    # A declared UTF-16/32 without a byte-order mark is almost always a mislabelled UTF-8 page
    # (browsers ignore it too); UTF-7 is refused as a label for the same reason.
    if name.startswith(("utf-16", "utf-32", "utf-7")):
        return None
    return name


def _sniff_utf16(data: bytes) -> str | None:
    """UTF-16 without a byte-order mark, recognised by mostly-ASCII text's zero high bytes."""
    sample = data[: _SNIFF_BYTES - _SNIFF_BYTES % 2]
    pairs = len(sample) // 2
    if pairs < 2:
        return None
    zero_even = sample[0::2].count(0)
    zero_odd = sample[1::2].count(0)
    if zero_odd >= 0.4 * pairs and zero_even <= 0.05 * pairs:
        return "utf-16-le"
    if zero_even >= 0.4 * pairs and zero_odd <= 0.05 * pairs:
        return "utf-16-be"
    return None


def _mostly_utf8(data: bytes) -> Decoded | None:
    """UTF-8 with a few broken sequences (a truncated file, one bad paste), else ``None``."""
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    wide = len(text) - len(text.encode("ascii", errors="ignore")) - bad
    if wide >= 4 * bad:
        return Decoded(text, "utf-8", (f"{bad} invalid UTF-8 sequences replaced",))
    return None
