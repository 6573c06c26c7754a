"""Pathological inputs for the text parsers and a growth-exponent measurement of parse time.

The Markdown patterns follow CommonMark's known slow cases (the ``cmark`` pathological tests and
markdown-it's issue history): nested and unmatched emphasis, brackets and links without
partners, deep nesting, reference definitions, long lines.  The HTML patterns are those that make
the standard library's ``html.parser`` quadratic (unfinished tags and quotes) or crash (``<![``).

The exponent is ``log(time(16k) / time(4k)) / log(4)``: about 1 for linear work, 2 for quadratic.
Times are CPU seconds with the garbage collector paused, the best of a few runs, so that other
processes and collector pauses do not decide the result.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable

Pattern = Callable[[int], str]

MARKDOWN_PATTERNS: dict[str, Pattern] = {
    # Symmetric patterns repeat each half n/2 times, so that n counts units of similar size.
    "nested strong and emphasis": lambda n: "*a **a " * (n // 2) + "b" + " a** a*" * (n // 2),
    "link openers and emphasis closers": lambda n: "[ a_" * n,
    "nested images and brackets": lambda n: "![[" * (n // 2) + "a" + "]](b)" * (n // 2),
    "nested block quotes and lists": lambda n: "> - " * n + "a",
    "reference definitions and uses": lambda n: (
        "".join(f"[r{i}]: /u{i}\n" for i in range(n // 2)) + "\n" + "".join(f"[r{i}] " for i in range(n // 2))
    ),
    "long line of inline markup": lambda n: "w *x* `y` a] " * n,
    "table rows": lambda n: "|a|b|\n|-|-|\n" + "|x|\n" * n,
    "raw html tags": lambda n: "<div>\n" + "<a b='" * n,
}

HTML_PATTERNS: dict[str, Pattern] = {
    "unfinished start tags": lambda n: "<a" * n,
    "unfinished quoted attributes": lambda n: "<a b='" * n,
    "mixed quotes in attributes": lambda n: "<a b=\"x'" * n,
    "attributes without values": lambda n: "<a =" * n,
    "unfinished end tags": lambda n: "</a" * n,
    "processing instructions": lambda n: "<?a" * n,
    "marked sections": lambda n: "<![" * n,
    "nested elements": lambda n: "<div>" * n + "x" + "</div>" * n,
    "unclosed headings": lambda n: "<h1>a" * n,
    "entities": lambda n: "&amp;&#" * n,
}

SMALL, LARGE = 4_000, 16_000


def cpu_seconds(work: Callable[[], object], *, budget: float = 0.15, most: int = 5) -> float:
    """Best CPU time of runs of ``work``: repeated while they add up to under ``budget`` seconds.

    The garbage collector is paused throughout (one collection first: a full collection of the
    test process's heap costs more than a fast run).  A slow run is not repeated (its noise is
    small next to its length); a fast one is, up to ``most`` times.
    """
    best = math.inf
    spent = 0.0
    gc.collect()
    gc.disable()
    try:
        for _ in range(most):
            started = time.process_time()
            work()
            elapsed = time.process_time() - started
            best = min(best, elapsed)
            spent += elapsed
            if spent >= budget:
                break
    finally:
        gc.enable()
    return best


def growth_exponent(parse: Callable[[bytes], object], pattern: Pattern) -> float:
    """How parse time grows from ``SMALL`` to ``LARGE`` repetitions of ``pattern``."""
    small = pattern(SMALL).encode("utf-8")
    large = pattern(LARGE).encode("utf-8")
    t_small = max(cpu_seconds(lambda: parse(small)), 1e-4)
    t_large = max(cpu_seconds(lambda: parse(large)), 1e-4)
    return math.log(t_large / t_small) / math.log(LARGE / SMALL)
