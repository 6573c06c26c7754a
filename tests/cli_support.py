"""What the tests that run the real ``cairn`` command in a child process share: its environment."""

from __future__ import annotations

import os
from pathlib import Path


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any ``CAIRN_*`` of the person running the tests, plus a home of the test's
    own, the rule path and the hashing embedder (no model server is ever reached), plain wide output (a temp path's
    length must not wrap a message a test reads) and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env.update(
        CAIRN_HOME=str(home),
        CAIRN_TESTING="1",
        CAIRN_LLM_PROVIDER="simple",
        CAIRN_EMBEDDER_PROVIDER="hashing",
        COLUMNS="1000",
        NO_COLOR="1",
        **extra,
    )
    return env
