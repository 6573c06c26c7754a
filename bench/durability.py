"""Nothing acknowledged is lost: ``cairn serve`` killed with SIGKILL in the middle of concurrent ingests and
document uploads, again and again (HARDENING.md, "SQLite durability").

Each round starts ``cairn serve`` as a child process, lets several client threads ingest over HTTP (single events
and batches) and one upload documents (JSON text and multipart files, in turn) for a random 0.3–0.8 s once
acknowledgements flow, and kills the server with SIGKILL at that moment.  After every restart, each event
acknowledged in the previous round (202) is fetched back through ``GET /v6/objects/{id}``, and each document
acknowledged (201) through ``GET /v6/documents/{id}`` with its text.  After the last round the vault is opened
directly: every acknowledged event and document is present exactly once with its content, ``PRAGMA
integrity_check`` is ``ok``, every full-text index matches its table (FTS5's own ``integrity-check`` too), and
every vec0 table holds exactly the vectors its embeddings rows promise.

The test suite runs 20 rounds (``tests/test_endpoint_durability.py``); the benchmark runs more and reports what it
found instead of stopping at the first problem::

    python -m bench.durability [--rounds 100] [--seed N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.common import ROOT, machine, write_json

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
        """Record one acknowledgement; an id acknowledged twice is a duplicate (a broken promise)."""
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
        """Record one acknowledged upload."""
        with self.lock:
            if document_id in self.by_id:
                self.duplicates.append(document_id)
            self.by_id[document_id] = (name, phrase)


class Server:
    """``python -m app serve --port 0`` on the rule path and the hashing embedder, its stderr read on a thread."""

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
            cwd=ROOT,
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
            if self.proc.poll() is not None:
                raise RuntimeError("serve exited early:\n" + "".join(self.lines))
            time.sleep(0.02)
        raise RuntimeError("serve printed no address:\n" + "".join(self.lines))

    def kill(self) -> None:
        """SIGKILL (no clean shutdown, no flush): the worst an application crash can do."""
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


def missing_over_http(server: Server, acks: Acks, docs: DocAcks, events: list[int], documents: list[int]) -> list[str]:
    """What the restarted server cannot give back of these acknowledged events and documents."""
    problems: list[str] = []
    headers = {"Authorization": f"Bearer {server.token}"}
    with httpx.Client(base_url=server.url, headers=headers, trust_env=False, timeout=10) as http:
        for event_id in events:
            answer = http.get(f"/v6/objects/{event_id}")
            if answer.status_code != 200:
                problems.append(f"acknowledged event {event_id} is gone ({answer.status_code})")
            elif (answer.json()["kind"], answer.json()["value"]["content"]) != ("event", acks.by_id[event_id]):
                problems.append(f"acknowledged event {event_id} came back different")
        for document_id in documents:
            name, phrase = docs.by_id[document_id]
            answer = http.get(f"/v6/documents/{document_id}")
            if answer.status_code != 200:
                problems.append(f"acknowledged document {document_id} is gone ({answer.status_code})")
                continue
            tree = answer.json()
            texts = [span["text"] for section in tree["sections"] for span in section["spans"]]
            if tree["document"]["name"] != name or not any(phrase in text for text in texts):
                problems.append(f"acknowledged document {document_id} lost its name or text")
    return problems


@dataclass
class Report:
    """What the rounds did and every broken promise found (empty ``problems``: nothing acknowledged was lost)."""

    rounds: int = 0
    kills_under_load: int = 0
    events_acknowledged: int = 0
    documents_acknowledged: int = 0
    problems: list[str] = field(default_factory=list)
    integrity: str = ""
    embeddings: int = 0
    elapsed_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "rounds": self.rounds,
            "kills_under_load": self.kills_under_load,
            "events_acknowledged": self.events_acknowledged,
            "documents_acknowledged": self.documents_acknowledged,
            "problems": self.problems,
            "integrity_check": self.integrity,
            "embeddings": self.embeddings,
            "elapsed_s": round(self.elapsed_s, 1),
        }


def run(vault_dir: Path, home: Path, *, rounds: int, seed: int = 20261122) -> Report:
    """Kill the server ``rounds`` times under load, then check the vault; every problem goes into the report."""
    started = time.perf_counter()
    rng = random.Random(seed)
    acks, docs, report = Acks(), DocAcks(), Report(rounds=rounds)
    last_events: list[int] = []
    last_documents: list[int] = []
    for round_no in range(rounds):
        server = Server(vault_dir, home)
        try:
            # what the previous round acknowledged before its kill is all back
            report.problems += missing_over_http(server, acks, docs, last_events, last_documents)
            events_before, documents_before = set(acks.by_id), set(docs.by_id)
            stop = threading.Event()
            threads = [
                threading.Thread(target=client_load, args=(server, round_no, t, stop, acks)) for t in range(THREADS)
            ]
            threads.append(threading.Thread(target=upload_load, args=(server, round_no, stop, docs)))
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 15
            while len(acks.by_id) == len(events_before) and time.monotonic() < deadline:
                time.sleep(0.005)  # the load is flowing: acknowledgements are coming back
            time.sleep(rng.uniform(0.3, 0.8))
            server.kill()  # mid-load, at a random moment
            stop.set()
            for thread in threads:
                thread.join(15)
            if any(t.is_alive() for t in threads):
                report.problems.append(f"round {round_no}: a client thread did not stop after the kill")
            last_events = sorted(set(acks.by_id) - events_before)
            last_documents = sorted(set(docs.by_id) - documents_before)
            report.kills_under_load += bool(last_events)
        finally:
            server.kill()
    report.problems += [f"event id {i} acknowledged twice" for i in acks.duplicates]
    report.problems += [f"document id {i} acknowledged twice" for i in docs.duplicates]
    report.events_acknowledged, report.documents_acknowledged = len(acks.by_id), len(docs.by_id)
    check_vault(vault_dir, acks, docs, report)
    report.elapsed_s = time.perf_counter() - started
    return report


def check_vault(vault_dir: Path, acks: Acks, docs: DocAcks, report: Report) -> None:
    """Open the vault directly and compare it with every acknowledgement; record each difference."""
    from engine import Settings, Vault

    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    vault = Vault.open(vault_dir, settings=settings, start_workers=False)
    try:
        store = vault.store
        stored: dict[int, list[str]] = {}
        for event_id, content in store.query("SELECT id, content FROM events"):
            stored.setdefault(int(event_id), []).append(str(content))
        copies: dict[str, int] = {}
        for contents in stored.values():
            for content in contents:
                copies[content] = copies.get(content, 0) + 1
        for event_id, content in acks.by_id.items():
            if stored.get(event_id) != [content]:
                report.problems.append(f"event {event_id} is not stored as acknowledged")
            elif copies[content] != 1:
                report.problems.append(f"event {event_id} is stored {copies[content]} times")
        documents: dict[str, list[int]] = {}
        for document_id, name in store.query("SELECT id, name FROM documents"):
            documents.setdefault(str(name), []).append(int(document_id))
        for document_id, (name, phrase) in docs.by_id.items():
            if documents.get(name) != [document_id]:
                report.problems.append(f"document {name} is not stored once under its id")
                continue
            held = store.scalar(
                "SELECT COUNT(*) FROM spans WHERE document_id = ? AND instr(text, ?) > 0", (document_id, phrase)
            )
            if held != 1:
                report.problems.append(f"document {name}: its text is not in its spans")
        report.integrity = ", ".join(str(r[0]) for r in store.query("PRAGMA integrity_check"))
        if report.integrity != "ok":
            report.problems.append(f"integrity_check: {report.integrity}")
        report.problems += _index_problems(store)
        report.embeddings = int(store.scalar("SELECT COUNT(*) FROM embeddings") or 0)
    finally:
        vault.close()


def _index_problems(store: Any) -> list[str]:
    """FTS rows against their tables (and FTS5's own check), vec0 rows against the embeddings rows."""
    problems: list[str] = []
    for table in FTS_TABLES:
        base = store.scalar(f"SELECT COUNT(*) FROM {table}")
        indexed = store.scalar(f"SELECT COUNT(*) FROM {table}_fts_docsize")
        if indexed != base:
            problems.append(f"{table}: {indexed} indexed rows for {base} rows")
        try:  # FTS5's own check that the index matches the table's content, row by row
            store.write(lambda tx, t=table: tx.execute(f"INSERT INTO {t}_fts({t}_fts) VALUES ('integrity-check')"))
        except Exception as exc:
            problems.append(f"{table}_fts integrity-check: {exc}")
    for space_id, vec_table in store.query("SELECT id, table_name FROM vector_spaces"):
        promised = {int(r[0]) for r in store.query("SELECT object_id FROM embeddings WHERE space_id = ?", (space_id,))}
        held = {int(r[0]) for r in store.query(f"SELECT rowid FROM {vec_table}")}
        if held != promised:
            problems.append(f"{vec_table}: {len(held ^ promised)} vec0 rows differ from the embeddings rows")
    orphans = store.scalar(
        "SELECT COUNT(*) FROM embeddings e LEFT JOIN objects o ON o.id = e.object_id WHERE o.id IS NULL"
    )
    if orphans:
        problems.append(f"{orphans} embeddings without their object")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Run the rounds in a temporary folder, print the report, write it as JSON; exit 1 on any broken promise."""
    parser = argparse.ArgumentParser(description="SIGKILL cairn serve under load, again and again; lose nothing")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cairn-durability-") as tmp:
        report = run(Path(tmp) / "vault", Path(tmp) / "home", rounds=args.rounds, seed=args.seed)
    payload = {"machine": machine(), "command": f"python -m bench.durability --rounds {args.rounds}"}
    payload |= report.as_dict()
    print(json.dumps(payload, indent=2))
    write_json(args.json, payload)
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
