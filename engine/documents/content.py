"""Telling binary content from text before a text parser sees it.

The text parsers never refuse bytes (any byte sequence decodes to *some* text, see
``plugins/parsers/decoding.py``), which is right for a text file with an odd bad byte and wrong
for an image, an archive or an executable that happens to be named ``.md``: it would be indexed as
mojibake and come back from recall.  Text — in UTF-8, a legacy 8-bit encoding, or UTF-16/32 with
or without a byte-order mark — has almost no control bytes other than tab, line feed, form feed,
carriage return and escape (colour codes in logs); binary formats are full of them (compressed
data ~10 % of its bytes, executables far more).  So: past a byte-order mark or the zero-byte pattern
of UTF-16, a file whose first 64 KiB are more than 5 % such control bytes is binary — half the share
of random bytes, and well above a text with a stray control byte on every line.
"""

from __future__ import annotations

import codecs

#: Bytes looked at: enough to judge, cheap on a 100 MB file.
SAMPLE_BYTES = 64 * 1024
#: Share of control bytes above which a sample is binary (text: ~0; compressed data: ~0.10).
MAX_CONTROL_SHARE = 0.05
# C0 controls other than tab, line feed, vertical tab, form feed, carriage return and escape.
_CONTROL_BYTES = bytes([*range(0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20)])
_TEXT_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)


def binary_content(data: bytes) -> str | None:
    """What makes ``data`` binary rather than text ("1,234 control bytes …"), or None for text (empty included)."""
    if not data or data.startswith(_TEXT_BOMS):
        return None
    sample = data[:SAMPLE_BYTES]
    if _looks_utf16(sample):
        return None
    controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    if controls <= max(1, int(len(sample) * MAX_CONTROL_SHARE)):
        return None
    nul = sample.count(0)
    what = f"{nul:,} NUL bytes and {controls - nul:,} other control bytes" if nul else f"{controls:,} control bytes"
    return f"{what} in its first {len(sample):,} bytes"


def _looks_utf16(sample: bytes) -> bool:
    """UTF-16 without a byte-order mark: mostly-ASCII text has a zero in every other byte, on one side only."""
    even = sample[: len(sample) - len(sample) % 2]
    pairs = len(even) // 2
    if pairs < 2:
        return False
    zero_even, zero_odd = even[0::2].count(0), even[1::2].count(0)
    return (zero_odd >= 0.4 * pairs and zero_even <= 0.05 * pairs) or (
        zero_even >= 0.4 * pairs and zero_odd <= 0.05 * pairs
    )
