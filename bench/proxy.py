"""The memory proxy's own cost: what a chat turn through Cairn takes beyond the model and beyond recall.

A real endpoint (uvicorn on 127.0.0.1, in this process) serves a vault of ``--turns`` synthetic chat turns, its
``proxy.upstream`` a minimal Ollama-speaking server in this process that answers at once (a fixed reply, streamed
as NDJSON or whole), so the model's own time is nearly zero and what remains is the path through Cairn.  For each
of ``--rounds`` questions, in turn and on keep-alive connections (httpx, the same client for every leg):

* **direct** — the chat request straight to the upstream;
* **off** — through the proxy with ``proxy.mode = off`` (forwarding only);
* **both** — through the proxy with ``proxy.mode = both`` (``--mode`` picks another): recall, injection, and the
  user's turn recorded while the upstream answers (the reply is recorded after the answer's last byte);
* **recall** — the part of **both** the proxy spent in recall, as its answer's ``Server-Timing`` header says.

Reported, as p50/p95 in milliseconds: each leg, the proxy's added latency (``off − direct`` and
``both − direct``, per question) and, against the target of ≤ 10 ms, ``both − direct − recall`` per question: the
proxy's own work beyond recall.  Non-streaming and streaming requests alternate.  Before each round the previous
round's recording and the enrichment of its turns are left to finish (they run after the answer in use too, and
``make bench-enrich`` measures them), so that they do not bill the next round.

Usage: ``python -m bench.proxy [--turns 2000] [--rounds 200] [--json F]``
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.common import bench_vault, machine, make_embedder, percentile, write_json
from bench.synth import FOODS, PETS, PLACES, THINGS
from engine.api.app import create_app
from engine.api.server import EndpointServer
from engine.events import EventIn
from engine.vault import Vault

REPLY_PIECES = ("Sure, ", "here ", "is ", "what ", "I ", "know.")
NAMES = "Ann Bob Chen Dara Eli Femi Gus Hana Ivo Jun".split()


class _Upstream(http.server.BaseHTTPRequestHandler):
    """An Ollama ``/api/chat`` that answers at once: the model's time taken out of the measurement."""

    protocol_version = "HTTP/1.1"
    # Each answer goes out in several small writes; with Nagle's algorithm on, every one after the first waits
    # for the client's delayed ACK (~40 ms), which a real Ollama (Go, TCP_NODELAY by default) never makes anyone do.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        model = str(body.get("model", "bench"))
        if body.get("stream") is False:
            data = json.dumps(_piece(model, "".join(REPLY_PIECES), done=True)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for piece in REPLY_PIECES:
            self._chunk(_piece(model, piece, done=False))
        self._chunk(_piece(model, "", done=True))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, payload: dict[str, Any]) -> None:
        line = json.dumps(payload).encode() + b"\n"
        self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
        self.wfile.flush()


def _piece(model: str, content: str, *, done: bool) -> dict[str, Any]:
    return {"model": model, "message": {"role": "assistant", "content": content}, "done": done}


@contextmanager
def upstream() -> Iterator[str]:
    """The instant upstream on a free loopback port; yields its URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def seed(vault: Vault, turns: int, rng: random.Random) -> None:
    """``turns`` chat turns over 50 conversations, then wait for their enrichment."""
    events = []
    for n in range(turns):
        name = rng.choice(NAMES)
        text = rng.choice(
            (
                f"My friend {name} moved to {rng.choice(PLACES)} and took up {rng.choice(THINGS)}.",
                f"{name} cooked {rng.choice(FOODS)} for us; {name} has a {rng.choice(PETS)} now.",
                f"I spent the weekend in {rng.choice(PLACES)} doing {rng.choice(THINGS)} with {name}.",
            )
        )
        events.append(EventIn(conversation_id=f"seed-{n % 50}", content=text, occurred_at=1_700_000_000 + n * 60))
    for start in range(0, len(events), 500):
        vault.events.ingest(events[start : start + 500])
    vault.jobs.wait_idle(600)


def questions(rng: random.Random, rounds: int) -> list[str]:
    """Questions about the seeded people and places, one per round."""
    forms = ("Where did {name} move to?", "What does {name} cook?", "Who went to {place} with me?")
    return [rng.choice(forms).format(name=rng.choice(NAMES), place=rng.choice(PLACES)) for _ in range(rounds)]


def chat_body(question: str, stream: bool) -> dict[str, Any]:
    """An Ollama chat request, as a chat app sends one (a system prompt, the new question)."""
    messages = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": question}]
    return {"model": "llama3.2", "messages": messages, "stream": stream}


def timed_chat(client: httpx.Client, url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[float, float]:
    """Milliseconds from sending the request to reading the last byte of its answer, and the milliseconds the
    proxy says it spent in recall (its ``Server-Timing`` header; 0 without one)."""
    start = time.perf_counter()
    with client.stream("POST", url, json=body, headers=headers) as response:
        for _ in response.iter_bytes():
            pass
        if response.status_code != 200:
            raise SystemExit(f"{url} answered {response.status_code}")
    elapsed = (time.perf_counter() - start) * 1000
    timing = response.headers.get("server-timing", "")
    recall = float(timing.partition("dur=")[2] or 0) if timing.startswith("recall;") else 0.0
    return elapsed, recall


def settle(server: EndpointServer, vault: Vault) -> None:
    """Wait until the last turn's recording has finished and its enrichment has run, so that one round's
    background work does not bill the next (it is the memory's cost, measured by ``make bench-enrich``)."""
    guard = getattr(server.app, "middleware_stack", None)
    deadline = time.monotonic() + 30
    while guard is not None and guard.requests.in_use and time.monotonic() < deadline:
        time.sleep(0.002)
    vault.jobs.wait_idle(30)


def summary(values: list[float]) -> dict[str, float]:
    """p50 and p95 of ``values``, in ms rounded to 0.01."""
    return {"p50": round(percentile(values, 50), 2), "p95": round(percentile(values, 95), 2)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Seed, then time the four legs for every question; returns the report."""
    rng = random.Random(7)
    load_before = os.getloadavg()
    with upstream() as model_url, bench_vault(make_embedder("hashing"), **{"proxy.upstream": model_url}) as vault:
        seed(vault, args.turns, rng)
        token = vault.endpoint_token()
        server = EndpointServer(lambda port: create_app(vault, token=token, port=port), 0)
        server.start()
        legs: dict[str, list[float]] = {"direct": [], "off": [], "both": [], "recall": []}
        added: dict[str, list[float]] = {"off": [], "both": [], "beyond_recall": []}
        try:
            with httpx.Client(timeout=30, trust_env=False) as client:
                auth = {"Authorization": f"Bearer {token}"}
                for n, question in enumerate(questions(rng, args.rounds + 10)):
                    stream = n % 2 == 1
                    settle(server, vault)
                    conversation = {"X-Cairn-Conversation": f"bench-{n}"}
                    direct, _ = timed_chat(client, f"{model_url}/api/chat", chat_body(question, stream), {})
                    vault.update_settings({"proxy.mode": "off"})
                    off, _ = timed_chat(client, f"{server.address}/api/chat", chat_body(question, stream), auth)
                    vault.update_settings({"proxy.mode": args.mode})
                    both, recall = timed_chat(
                        client, f"{server.address}/api/chat", chat_body(question, stream), auth | conversation
                    )
                    if n < 10:
                        continue  # warm-up: first connections, caches
                    for name, value in (("direct", direct), ("off", off), ("both", both), ("recall", recall)):
                        legs[name].append(value)
                    added["off"].append(off - direct)
                    added["both"].append(both - direct)
                    added["beyond_recall"].append(both - direct - recall)
        finally:
            server.stop()
    return {
        "machine": machine(),
        # Two cores shared with whatever else runs: read the figures against the load they ran beside.
        "load_average_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "turns": args.turns,
        "rounds": args.rounds,
        "legs_ms": {name: summary(values) for name, values in legs.items()},
        "added_ms": {name: summary(values) for name, values in added.items()},
        "target_beyond_recall_ms": 10,
    }


def main() -> None:
    """Parse arguments, run, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=2000, help="synthetic chat turns in the vault")
    parser.add_argument("--rounds", type=int, default=200, help="questions timed (after 10 warm-up rounds)")
    parser.add_argument(
        "--mode", choices=("both", "inject", "record"), default="both", help="proxy.mode of the memory leg"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    args = parser.parse_args()
    report = run(args)
    print(f"memory proxy — {report['machine']}; {args.turns} turns in the vault, {args.rounds} chat turns")
    before, after = report["load_average_before_after"]
    print(f"  load average (1 min) {before} before, {after} after")
    for name, values in report["legs_ms"].items():
        print(f"  {name:<14} p50 {values['p50']:7.2f} ms   p95 {values['p95']:7.2f} ms")
    labels = {"off": "added (off)", "both": "added (both)", "beyond_recall": "beyond recall"}
    for name, values in report["added_ms"].items():
        print(f"  {labels[name]:<14} p50 {values['p50']:7.2f} ms   p95 {values['p95']:7.2f} ms")
    print("  target: beyond recall ≤ 10 ms")
    write_json(args.json, report)


if __name__ == "__main__":
    main()
