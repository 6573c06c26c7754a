"""Recall ranked in helper processes (engine/recall/processes.py): same answers, in step with every commit, and
nothing depends on a helper being alive."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import Vault
from engine.config import Settings
from engine.errors import NotFound
from engine.events import EventIn
from engine.forget import ForgetScope
from engine.recall.processes import RankerProcesses
from engine.recall.ranker import INLINE, Question
from engine.recall.types import RecallRequest, RecallResult
from tests.engine.recall.test_recall import REF, ingest

TURNS = [
    ("2024-05-01T09:00:00Z", "I work as a nurse at the city hospital."),
    ("2024-05-01T09:01:00Z", "My favorite food is pho."),
    ("2024-05-02T10:00:00Z", "I adopted a dog named Biscuit last week."),
    ("2024-06-08T18:00:00Z", "I went to a pottery workshop in Hanoi today."),
    ("2024-06-08T18:02:00Z", "I am allergic to peanuts."),
    ("2024-06-09T08:00:00Z", "Caroline is moving to Lisbon in August."),
]
QUERIES = [
    "what is my job?",
    "do I have a pet?",
    "what happened in Hanoi?",
    "any allergies?",
    "where is Caroline going?",
]


@pytest.fixture
def helped(tmp_path: Path, offline_settings: Settings) -> Iterator[tuple[Vault, RankerProcesses]]:
    """A vault whose recalls are ranked by two helper processes (asked for: the vault is far below the automatic
    threshold)."""
    vault = Vault.open(tmp_path / "vault", settings=offline_settings.updated({"recall.processes": 2}))
    try:
        ingest(vault, "c1", *TURNS)
        processes = vault.start_recall_processes()
        assert processes is not None and processes.wait_ready(120), "helpers did not start"
        yield vault, processes
    finally:
        vault.close()


def understood(vault: Vault, query: str, **kw: object) -> Question:
    return vault._recall._understand(  # type: ignore[attr-defined,no-any-return]
        RecallRequest(conversation_id="asking", query=query, reference_time=REF, **kw)  # type: ignore[arg-type]
    )


def shape(result: RecallResult) -> list[tuple[str, int, float]]:
    return [(b.kind, b.id, round(b.score, 9)) for b in result.blocks]


def in_helper(processes: RankerProcesses, question: Question) -> RecallResult:
    result = processes.rank(question)
    assert result is not None, "the helper did not answer"
    return result


def here(vault: Vault, question: Question) -> RecallResult:
    return vault._recall.ranker.rank(question, INLINE)  # type: ignore[attr-defined,no-any-return]


def test_a_helper_ranks_exactly_as_this_process_does(helped: tuple[Vault, RankerProcesses]) -> None:
    vault, processes = helped
    for query in QUERIES:
        question = understood(vault, query)
        local, remote = here(vault, question), in_helper(processes, question)
        assert shape(remote) == shape(local), query
        assert remote.llm_context.text == local.llm_context.text
        assert {k: v.hits for k, v in remote.routing.channels.items()} == {
            k: v.hits for k, v in local.routing.channels.items()
        }


def test_recall_through_the_vault_uses_the_helpers_and_times_the_whole_trip(
    helped: tuple[Vault, RankerProcesses],
) -> None:
    vault, _processes = helped
    result = vault.recall(RecallRequest(conversation_id="asking", query="what is my job?", reference_time=REF))
    assert result.answer_facts and "nurse" in result.answer_facts[0].content
    stages = sum(result.timings_ms[k] for k in ("embed", "analyse", "queued", "channels", "fuse", "assemble"))
    assert result.timings_ms["total"] >= stages - 0.01


def test_helpers_see_every_vector_committed_before_the_question(helped: tuple[Vault, RankerProcesses]) -> None:
    """The question is stripped of keywords, so only the vector channel can find the new turn: a helper that had
    not applied the vectors committed before the question was sent would miss it."""
    vault, processes = helped
    for round_ in range(3):
        word = f"zorblax{round_}qui"
        [added] = vault.events.ingest(
            [EventIn(conversation_id="c2", content=f"The {word} gadget hums near the window.", occurred_at=REF)]
        )
        assert vault.jobs.wait_idle(120)
        question = understood(vault, f"{word} gadget hums")
        question = dataclasses.replace(question, analysis=dataclasses.replace(question.analysis, keywords=()))
        remote = in_helper(processes, question)
        assert remote.routing.channels["keyword"].hits == 0
        assert ("event", added.event_id) in {(b.kind, b.id) for b in remote.blocks}
        assert shape(remote) == shape(here(vault, question))


def test_a_forget_reaches_the_helpers_copies(helped: tuple[Vault, RankerProcesses]) -> None:
    vault, processes = helped
    [kept] = vault.events.ingest([EventIn(conversation_id="keep", content="Quillfeather lamps glow amber.")])
    [gone] = vault.events.ingest([EventIn(conversation_id="drop", content="Quillfeather lamps glow amber too.")])
    assert vault.jobs.wait_idle(120)
    question = understood(vault, "quillfeather lamps glow amber")
    question = dataclasses.replace(question, analysis=dataclasses.replace(question.analysis, keywords=()))
    assert {kept.event_id, gone.event_id} <= {b.id for b in in_helper(processes, question).blocks if b.kind == "event"}
    vault.forget(ForgetScope(conversation_id="drop"))
    after = in_helper(processes, question)
    ids = {b.id for b in after.blocks if b.kind == "event"}
    assert kept.event_id in ids and gone.event_id not in ids
    assert shape(after) == shape(here(vault, question))


def test_a_bad_request_fails_as_it_would_here(helped: tuple[Vault, RankerProcesses]) -> None:
    vault, processes = helped
    with pytest.raises(NotFound):
        vault.recall(RecallRequest(conversation_id="asking", query="pho", document_id=987654))
    assert processes.ready == 2, "a failed question does not cost a helper"


def test_a_killed_helper_is_replaced_and_no_recall_fails_meanwhile(helped: tuple[Vault, RankerProcesses]) -> None:
    vault, processes = helped
    victims = [h.child.proc for h in processes._helpers if h.child is not None]  # type: ignore[attr-defined]
    for proc in victims:
        os.kill(proc.pid, signal.SIGKILL)
    for proc in victims:
        proc.wait(10)
    for query in QUERIES * 2:  # answered here while the helpers are replaced
        result = vault.recall(RecallRequest(conversation_id="asking", query=query, reference_time=REF))
        assert result.llm_context.text, query
    assert processes.wait_ready(120), "the helpers were not replaced"
    fresh = {h.child.pid for h in processes._helpers if h.child is not None}  # type: ignore[attr-defined]
    assert fresh.isdisjoint({p.pid for p in victims})
    question = understood(vault, "do I have a pet?")
    assert shape(in_helper(processes, question)) == shape(here(vault, question))


def test_closing_the_vault_stops_its_helpers(tmp_path: Path, offline_settings: Settings) -> None:
    vault = Vault.open(tmp_path / "vault", settings=offline_settings.updated({"recall.processes": 1}))
    try:
        processes = vault.start_recall_processes()
        assert processes is not None and processes.wait_ready(120)
        procs = [h.child.proc for h in processes._helpers if h.child is not None]  # type: ignore[attr-defined]
    finally:
        vault.close()
    assert procs and all(p.poll() is not None for p in procs)


def test_no_helpers_for_a_small_vault_by_default(vault: Vault) -> None:
    assert vault.settings.recall.processes == -1
    assert vault.start_recall_processes(vectors=10) is None
    assert vault._recall.processes is None  # type: ignore[attr-defined]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_helpers_exit_when_the_vault_process_is_killed(tmp_path: Path) -> None:
    """SIGKILL gives the vault's process no chance to stop its helpers, and a helper busy loading or ranking does not
    read its channel: it is ended with its parent all the same.  Here the helper cannot run at all (stopped), and it
    was started from a thread that has ended since (Linux's death signal follows the thread that started a child:
    helpers must be started from one that lives as long as the process)."""
    script = textwrap.dedent(
        f"""
        import sys, threading, time
        from engine.config import Settings
        from engine.vault import Vault
        settings = Settings().updated({{"llm.provider": "simple", "embedder.provider": "hashing",
                                        "recall.processes": 1}})
        vault = Vault.open({str(tmp_path / "vault")!r}, settings=settings)
        started = []
        starter = threading.Thread(target=lambda: started.append(vault.start_recall_processes()))
        starter.start()
        starter.join()
        processes = started[0]
        assert processes.wait_ready(120)
        print(processes._helpers[0].child.pid, flush=True)
        time.sleep(600)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    helper_pid = 0
    try:
        assert parent.stdout is not None
        helper_pid = int(parent.stdout.readline())
        assert _alive(helper_pid), "the helper died with the thread that started it"
        os.kill(helper_pid, signal.SIGSTOP)  # as busy as can be: it will not read its channel
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(helper_pid):
            time.sleep(0.1)
        assert not _alive(helper_pid), "the helper outlived the vault's process"
    finally:
        if parent.poll() is None:
            parent.kill()
        if helper_pid and _alive(helper_pid):
            os.kill(helper_pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
