"""The questions a vector mirror was asked, and how they judge a dense shelf's reduced first pass.

A first pass fitted on data samples alone lost real questions' neighbours (see :mod:`engine.vectors.reduced`), so
the mirror keeps the vectors of the latest questions recall searched with and lets them judge it:

- before :data:`MIN_QUESTIONS` have been asked, a dense shelf may only take the cautious choices;
- once they have, a first pass fitted without them is fitted again on them — which may earn a cheaper choice, or
  lose the first pass (the shelf is then scanned exactly);
- a first pass already judged on questions is checked again after :data:`RECHECK_QUESTIONS` more and fitted again
  only if it no longer keeps the target (a check costs one exact scan per question; a fit, several projections).

The questions are kept in memory only, as vectors (never their text), and forgotten at a restart: a fit after one
is cautious again until enough new questions come.  A ring of the latest ones follows what users ask now, and
bounds both the memory (256 × 1.5 kB at 384 dimensions) and the cost of a check.

Sparse shelves (the hashing embedder's) are left as they were: postings answer them exactly whenever a question's
dimensions cost less to read than the first pass, and their first pass is fitted on the data as always.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from engine.vectors.reduced import CAUTIOUS_CHOICES, CHOICES, TARGET_RECALL, Reducer

F32 = npt.NDArray[np.float32]

#: How many of the latest questions' vectors are kept to judge first passes on.
QUESTION_MEMORY = 256
#: Questions needed before they judge a fit: fewer leave a dense shelf on the cautious choices.
MIN_QUESTIONS = 32
#: A first pass judged on questions is checked again once this many more have been asked.
RECHECK_QUESTIONS = 128


class QuestionMemory:
    """The vectors of the latest :data:`QUESTION_MEMORY` questions, and how many were ever noted.  Thread-safe."""

    def __init__(self, dim: int, size: int = QUESTION_MEMORY) -> None:
        self.dim = dim
        self._latest: deque[F32] = deque(maxlen=size)
        self._seen = 0
        self._lock = threading.Lock()

    def note(self, vector: F32) -> None:
        """Keep ``vector``; one of another size (a migration's query joined from two models) or zero is ignored."""
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim or not np.any(q) or not np.all(np.isfinite(q)):
            return
        with self._lock:
            self._latest.append(q.copy())
            self._seen += 1

    def latest(self) -> tuple[F32, int]:
        """The kept vectors (oldest first, one per row) and how many questions were noted in all."""
        with self._lock:
            if not self._latest:
                return np.zeros((0, self.dim), dtype=np.float32), self._seen
            return np.array(self._latest, dtype=np.float32), self._seen


def due(asked_at: int, seen: int, kept: int) -> bool:
    """Whether ``kept`` questions (``seen`` in all) should judge a first pass last judged at ``asked_at`` (-1:
    never)."""
    return kept >= MIN_QUESTIONS and (asked_at < 0 or seen - asked_at >= RECHECK_QUESTIONS)


def judge(
    vecs: F32, current: Reducer | None, reduced: F32 | None, asked: F32 | None, *, grown: bool
) -> Reducer | Literal["kept"] | None:
    """The first pass a dense shelf of ``vecs`` should have: a new one, None (scan exactly) or ``"kept"``.

    ``asked`` holds the questions to judge by (None: too few yet), ``current`` the shelf's first pass and
    ``reduced`` its rows projected by it; ``grown`` says the shelf has outgrown the last fit.
    """
    if not grown and asked is not None and current is not None and current.stats.questions and reduced is not None:
        recall = current.question_recall(vecs, reduced, asked)
        if recall >= TARGET_RECALL:
            current.stats = replace(current.stats, question_recall=round(recall, 4), questions=asked.shape[0])
            return "kept"
    return Reducer.fit(vecs, questions=asked, choices=CHOICES if asked is not None else CAUTIOUS_CHOICES)
