"""The Chroma vector backend against a real Chroma: a ``chroma run`` server on loopback, and embedded in the vault.

What must hold: searches are answered by the collection once it matches the store; every committed write reaches
it; a Chroma that is down costs speed, never answers (searches fall back to sqlite-vec and the collection catches
up when Chroma is back); a forget leaves nothing of the forgotten in the collection.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from engine import Vault
from engine.config import Settings
from engine.errors import EnvironmentProblem
from engine.events import EventIn
from engine.forget import ForgetScope
from engine.recall.types import RecallRequest
from engine.vectors import VectorIndex, VectorItem
from engine.vectors.chroma import ChromaIndex


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ChromaServer:
    """``chroma run`` as a child process on 127.0.0.1, stoppable and restartable on the same data and port."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        exe = shutil.which("chroma", path=str(Path(sys.executable).parent)) or "chroma"
        command = [exe, "run", "--host", "127.0.0.1", "--port", str(self.port), "--path", str(self.data)]
        env = dict(os.environ, ANONYMIZED_TELEMETRY="False")
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self.proc.returncode}")
            time.sleep(0.1)
        raise RuntimeError("chroma run did not answer within 60 s")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[ChromaServer]:
    server = ChromaServer(tmp_path / "chroma-server")
    server.start()
    try:
        yield server
    finally:
        server.kill()


def _settings(offline_settings: Settings, url: str = "") -> Settings:
    return offline_settings.updated({"vectors.backend": "chroma", "vectors.chroma_url": url})


def _unit(n: int, dim: int, seed: int) -> np.ndarray:
    data = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return data / np.linalg.norm(data, axis=1, keepdims=True)


def _index(vault: Vault) -> ChromaIndex:
    assert isinstance(vault.vectors, ChromaIndex) and isinstance(vault.vectors, VectorIndex)
    return vault.vectors


def _in_step(vault: Vault, timeout: float = 30.0) -> ChromaIndex:
    index = _index(vault)
    deadline = time.monotonic() + timeout
    while index.stale and time.monotonic() < deadline:
        index.maintain()
        index.flush(timeout)
    assert not index.stale, index.backend
    return index


def test_a_server_collection_answers_searches_and_follows_every_write(
    chroma_server: ChromaServer, tmp_path: Path, offline_settings: Settings
) -> None:
    with Vault.open(tmp_path / "vault", settings=_settings(offline_settings, chroma_server.url)) as vault:
        vault.events.ingest(
            EventIn(conversation_id="c1", content="Our cat Pumpernickel sleeps on the radiator all winter.")
        )
        vault.events.ingest(EventIn(conversation_id="c1", content="The quarterly budget review moved to Thursday."))
        assert vault.jobs.wait_idle(120)
        index = _in_step(vault)
        assert index.chroma_count() == index.count() > 0
        assert "Chroma server http://127.0.0.1" in index.backend and "in step" in index.backend

        # a search straight from the collection: the vector of a stored event is its own nearest neighbour
        event_id = int(vault.store.scalar("SELECT id FROM events WHERE content LIKE '%Pumpernickel%'"))
        stored = vault.embedder.embed(["Our cat Pumpernickel sleeps on the radiator all winter."])[0]
        hits = index.search(stored, 3, kinds=["event"], user_id="default")
        assert hits[0].object_id == event_id and hits[0].similarity > 0.99
        assert not index.stale, "the answer came from Chroma, not from the fallback"
        assert index.search(stored, 3, kinds=["document"]) == []
        assert index.search(stored, 3, user_id="someone-else") == []

        # recall end to end runs its vector channel on the collection
        answer = vault.recall(RecallRequest(conversation_id="c2", query="Where does Pumpernickel sleep?"))
        assert "Pumpernickel" in answer.llm_context.text

        # deletes reach the collection after COMMIT; a rolled-back write reaches nothing
        ids = vault.store.write(lambda tx: tx.new_ids("fact", 2))
        vectors = _unit(2, index.dim, seed=5)
        vault.store.write(
            lambda tx: index.add(tx, [VectorItem(i, "fact", "default", vectors[n], f"h{n}") for n, i in enumerate(ids)])
        )
        vault.store.write(lambda tx: index.delete(tx, [ids[0]]))

        def fails(tx):  # type: ignore[no-untyped-def]
            index.add(tx, [VectorItem(ids[0], "fact", "default", vectors[0], "h0")])
            raise RuntimeError("rolled back")

        with pytest.raises(RuntimeError):
            vault.store.write(fails)
        assert index.flush(30)
        assert index.chroma_count() == index.count()
        found = [h.object_id for h in index.search(vectors[0], 5, kinds=["fact"])]
        assert ids[0] not in found and ids[1] in [h.object_id for h in index.search(vectors[1], 1, kinds=["fact"])]


def test_chroma_down_costs_speed_not_answers_and_the_collection_catches_up(
    chroma_server: ChromaServer, tmp_path: Path, offline_settings: Settings
) -> None:
    with Vault.open(tmp_path / "vault", settings=_settings(offline_settings, chroma_server.url)) as vault:
        index = _in_step(vault)
        ids = vault.store.write(lambda tx: tx.new_ids("fact", 40))
        vectors = _unit(40, index.dim, seed=11)
        items = [VectorItem(i, "fact", "default", vectors[n], f"h{n}") for n, i in enumerate(ids)]
        vault.store.write(lambda tx: index.add(tx, items[:20]))
        assert index.flush(30) and index.chroma_count() == 20

        chroma_server.kill()
        vault.store.write(lambda tx: index.add(tx, items[20:]))  # the push fails: nothing acknowledged is at risk
        vault.store.write(lambda tx: index.delete(tx, [ids[0]]))
        assert index.flush(60)
        assert index.stale and "sqlite-vec" in index.backend
        # searches are answered from vault.db meanwhile, exactly
        assert index.search(vectors[30], 1, kinds=["fact"])[0].object_id == ids[30]
        assert ids[0] not in [h.object_id for h in index.search(vectors[0], 5, kinds=["fact"])]

        chroma_server.start()  # same data folder and port: the collection still lacks the last writes
        index = _in_step(vault, timeout=60)
        assert index.chroma_count() == index.count() == 39
        assert index.search(vectors[30], 1, kinds=["fact"])[0].object_id == ids[30]
        assert not index.stale


def test_a_forget_leaves_nothing_of_the_forgotten_in_the_collection(
    chroma_server: ChromaServer, tmp_path: Path, offline_settings: Settings
) -> None:
    with Vault.open(tmp_path / "vault", settings=_settings(offline_settings, chroma_server.url)) as vault:
        vault.events.ingest(EventIn(conversation_id="keep", content="I moved to Lisbon in March."))
        vault.events.ingest(EventIn(conversation_id="secret", user_id="ann", content="My doctor is Dr. Okonkwo."))
        assert vault.jobs.wait_idle(120)
        index = _in_step(vault)
        forgotten = {int(r[0]) for r in vault.store.query("SELECT object_id FROM embeddings WHERE user_id = 'ann'")}
        assert forgotten
        vault.forget(ForgetScope(user_id="ann"))
        index = _in_step(vault)
        held = set(index.chroma_ids())
        assert held and not (held & forgotten)
        assert index.chroma_count() == index.count()


_CONNECTIONS: list[object] | None = None


def _record_connections(event: str, args: tuple[object, ...]) -> None:
    if _CONNECTIONS is not None and event in ("socket.connect", "socket.getaddrinfo"):
        _CONNECTIONS.append(args[1] if event == "socket.connect" else args[0])


sys.addaudithook(_record_connections)


def test_embedded_chroma_lives_in_the_vault_folder_and_survives_reopening(
    tmp_path: Path, offline_settings: Settings
) -> None:
    """Embedded, it opens no connection at all (no telemetry, no model download): the audit hook sees every one."""
    global _CONNECTIONS
    root = tmp_path / "vault"
    _CONNECTIONS = []
    try:
        _use_embedded(root, offline_settings)
        reached = list(_CONNECTIONS)
    finally:
        _CONNECTIONS = None
    assert reached == []


def _use_embedded(root: Path, offline_settings: Settings) -> None:
    with Vault.open(root, settings=_settings(offline_settings)) as vault:
        vault.events.ingest(EventIn(conversation_id="c", content="Maria adopted a greyhound named Comet."))
        assert vault.jobs.wait_idle(120)
        index = _in_step(vault)
        count = index.count()
        assert count > 0 and index.chroma_count() == count
        assert "embedded" in index.backend
    assert (root / "chroma").is_dir()
    with Vault.open(root, settings=_settings(offline_settings)) as vault:
        index = _in_step(vault)
        assert index.chroma_count() == count
        answer = vault.recall(RecallRequest(conversation_id="c2", query="What is the name of Maria's greyhound?"))
        assert "Comet" in answer.llm_context.text


def test_the_chroma_backend_without_its_package_is_a_clear_error(
    tmp_path: Path, offline_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "chromadb", None)  # what an install without the extra looks like
    with pytest.raises(EnvironmentProblem) as info:
        Vault.open(tmp_path / "vault", settings=_settings(offline_settings))
    assert "chromadb package is not installed" in info.value.message
    assert "cairn[chroma]" in info.value.fix
    # the vault's lock is released: the same folder opens with the default backend
    with Vault.open(tmp_path / "vault", settings=offline_settings) as vault:
        assert vault.settings.vectors.backend == "sqlite-vec"


def test_searches_never_cross_users_or_kinds(tmp_path: Path, offline_settings: Settings) -> None:
    """With one user the user filter is skipped (it costs a metadata scan); from the second user on it is sent."""
    with Vault.open(tmp_path / "vault", settings=_settings(offline_settings)) as vault:
        index = _in_step(vault)
        vectors = _unit(6, index.dim, seed=21)
        ids = vault.store.write(lambda tx: tx.new_ids("fact", 6))
        ann = [VectorItem(ids[n], "fact" if n < 2 else "event", "ann", vectors[n], f"a{n}") for n in range(3)]
        vault.store.write(lambda tx: index.add(tx, ann))
        assert index.flush(30)
        assert [h.object_id for h in index.search(vectors[0], 5, user_id="ann")][:1] == [ids[0]]
        assert index.search(vectors[0], 5, user_id="bob") == []  # bob has nothing yet
        bob = [VectorItem(ids[n], "fact", "bob", vectors[n - 3], f"b{n}") for n in range(3, 6)]  # same directions
        vault.store.write(lambda tx: index.add(tx, bob))
        assert index.flush(30) and not index.stale
        found_ann = {h.object_id for h in index.search(vectors[0], 10, user_id="ann")}
        found_bob = {h.object_id for h in index.search(vectors[0], 10, user_id="bob")}
        assert found_ann == set(ids[:3]) and found_bob == set(ids[3:])
        assert {h.object_id for h in index.search(vectors[2], 10, kinds=["event"], user_id="ann")} == {ids[2]}
        assert {h.kind for h in index.search(vectors[0], 10)} == {"fact", "event"}
        assert len(index.search(vectors[0], 10)) == 6
