"""A guard against a reference-counting bug of PySide6 6.12 on Python 3.11: immortal singletons.

PySide6 6.12.0 returns ``None`` from every Qt method without a result (``widget.update()``,
``label.setText(...)``, …) and from Qt's reading back of unset values (``index.data(role)``)
without taking the reference the C API requires (and loses references to ``True`` and ``False``
on some paths too).  Python 3.12 and later do not count references
to ``None`` (PEP 683: it is immortal), so the bug is invisible there; on 3.11 each such call takes
one reference away, and a GUI that has made more of them than ``None`` had references is killed
with ``Fatal Python error: none_dealloc``.  A model/view window repaints often enough to get there.

:func:`guard_none` gives ``None``, ``True`` and ``False`` what 3.12 gives them: a reference count
no program can use up.  They are static objects that are never freed, so an oversized count changes
nothing else.  It runs when :mod:`ui` is imported, before any Qt call.  Remove it when the project
moves to Python 3.12 or to a PySide6 without the bug.
"""

from __future__ import annotations

import ctypes
import platform
import sys

RESERVE = 1 << 60
"""References added to each singleton: more than any process will lose, far from overflowing."""
GUARDED = RESERVE // 2
"""A count above this was raised already: the process has lost references since, but nowhere near this many."""
SINGLETONS = (None, True, False)


def guard_none() -> bool:
    """Make ``None``, ``True`` and ``False`` effectively immortal; True when counts were raised."""
    if sys.version_info >= (3, 12) or platform.python_implementation() != "CPython":
        return False
    if hasattr(sys, "gettotalrefcount"):  # a debug build lays objects out differently
        return False
    raised = False
    for singleton in SINGLETONS:
        count = ctypes.c_ssize_t.from_address(id(singleton))  # ob_refcnt, the first field
        if count.value < GUARDED:
            count.value += RESERVE
            raised = True
    return raised
