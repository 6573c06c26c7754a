"""Nothing acknowledged is lost: ``cairn serve`` killed with SIGKILL in the middle of concurrent
ingests and document uploads, again and again (HARDENING.md, "SQLite durability").

Each round starts ``cairn serve`` as a child process, lets several client threads ingest over HTTP
(single events and batches) and one upload documents (JSON text and multipart files, in turn) for a
random 0.3–0.8 s, and kills the server with SIGKILL at that random moment.  After every restart,
each event acknowledged so far (202) is fetched back through ``GET /v6/objects/{id}``, and each
document acknowledged (201) through ``GET /v6/documents/{id}`` with its text.  After the last round
the vault is opened directly: every acknowledged event and document is present exactly once with
its content, ``PRAGMA integrity_check`` is ``ok``, every full-text index matches its table, and
every vec0 table holds exactly the vectors its embeddings rows promise.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from engine import Settings, Vault

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX signals")

REPO = Path(__file__).resolve().parents[1]
ROUNDS = 20
THREADS = 4
BATCH = 5
ADDRESS = re.compile(r"http://127\.0\.0\.1:(\d+)")
FTS_TABLES = ("events", "facts", "spans", "episodes", "understandings")


@dataclass
class Acks:
    """Acknowledged events: id → the content sent (collected from every client thread)."""

    by_id: dict[int, str] = field(default_factory=dict)
    duplicates: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, event_id: int, content: str) -> None:
        with self.lock:
            if event_id in self.by_id:
                self.duplicates.append(event_id)
            self.by_id[event_id] = content


@dataclass
class DocAcks:
    """Acknowledged documents: id → (name, a phrase only its text holds)."""

    by_id: dict[int, tuple[str, str]] = field(default_factory=dict)
    duplicates: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, document_id: int, name: str, phrase: str) -> None:
        with self.lock:
            if document_id in self.by_id:
                self.duplicates.append(document_id)
            self.by_id[document_id] = (name, phrase)


class Server:
    """``python -m app serve --port 0`` with its stderr read on a thread."""

    def __init__(self, vault_dir: Path, home: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
        env.update(
            CAIRN_HOME=str(home),
            CAIRN_TESTING="1",
            CAIRN_LLM_PROVIDER="simple",
            CAIRN_EMBEDDER_PROVIDER="hashing",
            NO_COLOR="1",
            COLUMNS="200",
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--vault", str(vault_dir), "--port", "0"],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.port = self._wait_for_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = (vault_dir / "token").read_text().strip()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def _wait_for_port(self, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = ADDRESS.search("".join(self.lines))
            if match:
                return int(match.group(1))
            assert self.proc.poll() is None, "serve exited early:\n" + "".join(self.lines)
            time.sleep(0.02)
        raise AssertionError("serve printed no address:\n" + "".join(self.lines))

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._reader.join(5)


def client_load(server: Server, round_no: int, thread_no: int, stop: threading.Event, acks: Acks) -> None:
    """Ingest until stopped or the server dies; record only what was acknowledged."""
    headers = {"Authorization": f"Bearer {server.token}"}
    n = 0
    with httpx.Client(base_url=server.url, headers=headers, trust_env=False, timeout=10) as http:
        while not stop.is_set():
            n += 1
            tag = f"r{round_no}t{thread_no}n{n}"
            try:
                if thread_no == 0:  # one thread sends batches: one transaction, several acks
                    contents = [f"Turn {tag}b{i}: I like gadget{tag}b{i}." for i in range(BATCH)]
                    response = http.post(
                        "/v6/ingest/batch",
                        json={"events": [{"conversation_id": f"c{thread_no}", "content": c} for c in contents]},
                    )
                    if response.status_code == 202:
                        for event_id, content in zip(response.json()["event_ids"], contents, strict=True):
                            acks.add(int(event_id), content)
                    continue
                content = f"Turn {tag}: I live in Town{tag}."
                response = http.post("/v6/ingest", json={"conversation_id": f"c{thread_no}", "content": content})
                if response.status_code == 202:
                    acks.add(int(response.json()["event_id"]), content)
            except httpx.TransportError:
                return  # killed mid-request: not acknowledged, so nothing is promised


def upload_load(server: Server, round_no: int, stop: threading.Event, docs: DocAcks) -> None:
    """Upload documents until stopped or the server dies; record only what was acknowledged."""
    headers = {"Authorization": f"Bearer {server.token}"}
    n = 0
    with httpx.Client(base_url=server.url, headers=headers, trust_env=False, timeout=30) as http:
        while not stop.is_set():
            n += 1
            tag = f"r{round_no}d{n}"
            name = f"notes-{tag}.md"
            phrase = f"The lantern {tag} hangs in the boathouse."
            text = f"# Notes {tag}\n\n{phrase}\n\n## More\n\nNothing else about {tag}.\n"
            try:
                if n % 2:
                    response = http.post("/v6/documents", json={"name": name, "content": text})
                else:
                    response = http.post("/v6/documents", files={"file": (name, text.encode(), "text/markdown")})
            except httpx.TransportError:
                return  # killed mid-request: not acknowledged, so nothing is promised
            if response.status_code == 201:
                docs.add(int(response.json()["document_id"]), name, phrase)


def check_documents_over_http(server: Server, docs: DocAcks, ids: list[int]) -> None:
    headers = {"Authorization": f"Bearer {server.token}"}
    with httpx.Client(base_url=server.url, headers=headers, trust_env=False, timeout=10) as http:
        for document_id in ids:
            name, phrase = docs.by_id[document_id]
            answer = http.get(f"/v6/documents/{document_id}")
            assert answer.status_code == 200, f"acknowledged document {document_id} is gone"
            tree = answer.json()
            assert tree["document"]["name"] == name
            texts = [span["text"] for section in tree["sections"] for span in section["spans"]]
            assert any(phrase in text for text in texts), f"document {document_id} lost its text"


def check_acknowledged_over_http(server: Server, acks: Acks, ids: list[int]) -> None:
    headers = {"Authorization": f"Bearer {server.token}"}
    with httpx.Client(base_url=server.url, headers=headers, trust_env=False, timeout=10) as http:
        for event_id in ids:
            content = acks.by_id[event_id]
            answer = http.get(f"/v6/objects/{event_id}")
            assert answer.status_code == 200, f"acknowledged event {event_id} is gone"
            assert (answer.json()["kind"], answer.json()["value"]["content"]) == ("event", content)


@pytest.fixture
def vault_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "vault"


def test_acknowledged_events_and_documents_survive_sigkill(vault_dir: Path, tmp_path: Path) -> None:
    rng = random.Random(20261122)
    acks = Acks()
    docs = DocAcks()
    kills_under_load = 0
    last_round: list[int] = []
    last_documents: list[int] = []
    for round_no in range(ROUNDS):
        server = Server(vault_dir, tmp_path / "home")
        try:
            # what the previous round acknowledged before its kill is all back
            check_acknowledged_over_http(server, acks, last_round)
            check_documents_over_http(server, docs, last_documents)
            before = set(acks.by_id)
            documents_before = set(docs.by_id)
            stop = threading.Event()
            threads = [
                threading.Thread(target=client_load, args=(server, round_no, t, stop, acks)) for t in range(THREADS)
            ]
            threads.append(threading.Thread(target=upload_load, args=(server, round_no, stop, docs)))
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 15
            while len(acks.by_id) == len(before) and time.monotonic() < deadline:
                time.sleep(0.005)  # the load is flowing: acknowledgements are coming back
            time.sleep(rng.uniform(0.3, 0.8))
            server.kill()  # mid-load, at a random moment
            stop.set()
            for thread in threads:
                thread.join(15)
            assert not any(t.is_alive() for t in threads)
            last_round = sorted(set(acks.by_id) - before)
            last_documents = sorted(set(docs.by_id) - documents_before)
            kills_under_load += bool(last_round)
        finally:
            server.kill()
    assert kills_under_load == ROUNDS  # every kill landed while acknowledgements were flowing
    assert not acks.duplicates  # no id was ever acknowledged for two different events
    assert len(acks.by_id) > ROUNDS * THREADS  # a real load, not a trickle
    assert not docs.duplicates
    assert len(docs.by_id) >= ROUNDS  # uploads were acknowledged throughout

    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    vault = Vault.open(vault_dir, settings=settings, start_workers=False)
    try:
        store = vault.store
        rows = store.query("SELECT id, content FROM events")
        stored: dict[int, list[str]] = {}
        for event_id, content in rows:
            stored.setdefault(int(event_id), []).append(str(content))
        for event_id, content in acks.by_id.items():
            assert stored.get(event_id) == [content], f"event {event_id}"
            copies = store.scalar("SELECT COUNT(*) FROM events WHERE content = ?", (content,))
            assert copies == 1, f"event {event_id} stored {copies} times"
        documents: dict[str, list[int]] = {}
        for document_id, name in store.query("SELECT id, name FROM documents"):
            documents.setdefault(str(name), []).append(int(document_id))
        for document_id, (name, phrase) in docs.by_id.items():
            assert documents.get(name) == [document_id], f"document {name}"
            held = store.scalar(
                "SELECT COUNT(*) FROM spans WHERE document_id = ? AND instr(text, ?) > 0",
                (document_id, phrase),
            )
            assert held == 1, f"document {name}: its text is not in its spans"
        assert store.query("PRAGMA integrity_check") == [("ok",)]
        for table in FTS_TABLES:
            base = store.scalar(f"SELECT COUNT(*) FROM {table}")
            indexed = store.scalar(f"SELECT COUNT(*) FROM {table}_fts_docsize")
            assert indexed == base, f"{table}: {indexed} indexed rows for {base} rows"
            # FTS5's own check that the index matches the table's content, row by row
            store.write(lambda tx, t=table: tx.execute(f"INSERT INTO {t}_fts({t}_fts) VALUES ('integrity-check')"))
        for space_id, vec_table in store.query("SELECT id, table_name FROM vector_spaces"):
            promised = {
                int(r[0]) for r in store.query("SELECT object_id FROM embeddings WHERE space_id = ?", (space_id,))
            }
            held = {int(r[0]) for r in store.query(f"SELECT rowid FROM {vec_table}")}
            assert held == promised, f"{vec_table}: vec0 rows differ from embeddings rows"
            orphans = store.scalar(
                "SELECT COUNT(*) FROM embeddings e LEFT JOIN objects o ON o.id = e.object_id WHERE o.id IS NULL"
            )
            assert orphans == 0
        assert store.scalar("SELECT COUNT(*) FROM embeddings") > 0  # enrichment ran between kills
    finally:
        vault.close()
