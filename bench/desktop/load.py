"""The event sender of :func:`bench.desktop.measure.ingest_stall_benchmark`, run as its own process.

Chat clients are other processes: their HTTP work does not compete with the GUI for its interpreter.  So the
benchmark starts this module as a child (``python -m bench.desktop.load``), which imports nothing of Qt or the engine,
opens ``clients`` keep-alive connections to the endpoint, prints ``READY``, waits for a line on stdin, and then
POSTs ``count`` chat turns to ``/v6/ingest`` on a fixed schedule of ``rate`` a second (open loop: a slow
acknowledgement does not delay the next send while a connection is free).  At the end it prints one JSON line:
how many were sent and acknowledged, the achieved rate, acknowledgement latencies, and how far the schedule
slipped.

The client is a minimal HTTP/1.1 client on asyncio streams: a general-purpose client spends several
milliseconds of CPU per request, which on a two-core machine would be taken from the app being measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

TEMPLATES = (
    "My colleague {name} works as a {job}.",
    "I visited {place} last weekend with {name}.",
    "{name} prefers {thing} over coffee.",
    "Remind me that {name} lives in {place}.",
    "I bought a new {thing} for the kitchen.",
)
NAMES = ("Ada", "Bruno", "Chloe", "Dev", "Eli", "Farah", "Goran", "Hana", "Ines", "Jonas")
JOBS = ("baker", "pilot", "nurse", "teacher", "welder", "chemist", "architect")
PLACES = ("Lisbon", "Oslo", "Kyoto", "Quito", "Accra", "Perth", "Tallinn", "Bergen")
THINGS = ("green tea", "a kettle", "oat milk", "a toaster", "lemonade", "a blender")
CONVERSATIONS = 20
READY = "READY"


def bench_sentence(n: int) -> str:
    """The ``n``-th of a varied, deterministic stream of chat turns with facts in them."""
    return TEMPLATES[n % len(TEMPLATES)].format(
        name=NAMES[n % len(NAMES)],
        job=JOBS[n % len(JOBS)],
        place=PLACES[(n // 3) % len(PLACES)],
        thing=THINGS[(n // 2) % len(THINGS)],
    )


@dataclass(slots=True)
class Outcome:
    """What the sender saw (printed as JSON)."""

    sent: int = 0
    acknowledged: int = 0
    failed: int = 0
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    max_slip_ms: float = 0.0

    def summary(self) -> dict[str, float | int]:
        """The JSON line: counts, rate, latency percentiles, schedule slip."""
        ordered = sorted(self.latencies_ms)

        def pct(q: float) -> float:
            return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 1) if ordered else 0.0

        out = {k: v for k, v in asdict(self).items() if k != "latencies_ms"}
        out.update(
            rate=round(self.acknowledged / self.seconds, 1) if self.seconds else 0.0,
            ack_p50_ms=pct(0.50),
            ack_p99_ms=pct(0.99),
            ack_max_ms=round(ordered[-1], 1) if ordered else 0.0,
            seconds=round(self.seconds, 2),
            max_slip_ms=round(self.max_slip_ms, 1),
        )
        return out


class Connection:
    """One keep-alive HTTP/1.1 connection that POSTs JSON and reads the status of each answer."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self._host, self._port = host, port
        self._head = (
            f"POST /v6/ingest HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        )
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        """Connect."""
        self._reader, self._writer = await asyncio.open_connection(self._host, self._port)

    async def post(self, body: bytes) -> int:
        """Send one request and read its whole answer; returns the HTTP status."""
        if self._reader is None or self._writer is None:
            await self.open()
        assert self._reader is not None and self._writer is not None
        self._writer.write(self._head.replace("{length}", str(len(body))).encode("ascii") + body)
        await self._writer.drain()
        status_line = await self._reader.readline()
        if not status_line:
            raise ConnectionError("the endpoint closed the connection")
        status = int(status_line.split(b" ", 2)[1])
        length = 0
        close = False
        while True:
            line = await self._reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
            elif name.strip().lower() == "connection" and value.strip().lower() == "close":
                close = True
        if length:
            await self._reader.readexactly(length)
        if close:
            self.close()
        return status

    def close(self) -> None:
        """Drop the connection (the next post opens a new one)."""
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None


async def send(address: str, token: str, rate: float, count: int, clients: int, *, wait_for_go: bool) -> Outcome:
    """Open ``clients`` connections, then POST ``count`` turns at ``rate`` a second; see the module docstring."""
    host, _, port = address.split("://", 1)[-1].rstrip("/").rpartition(":")
    idle: asyncio.Queue[Connection] = asyncio.Queue()
    for _ in range(clients):
        connection = Connection(host, int(port), token)
        await connection.open()
        idle.put_nowait(connection)
    if wait_for_go:
        sys.stdout.write(f"{READY}\n")
        sys.stdout.flush()
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    outcome = Outcome()
    started = time.monotonic()

    async def one(n: int) -> None:
        connection = await idle.get()
        body = json.dumps({"conversation_id": f"bench-{n % CONVERSATIONS}", "content": bench_sentence(n)}).encode()
        sent_at = time.monotonic()
        outcome.max_slip_ms = max(outcome.max_slip_ms, (sent_at - started - n / rate) * 1000)
        try:
            status = await connection.post(body)
        except (OSError, ValueError, IndexError, asyncio.IncompleteReadError):
            connection.close()
            status = 0
        outcome.sent += 1
        if status == 202:
            outcome.acknowledged += 1
            outcome.latencies_ms.append((time.monotonic() - sent_at) * 1000)
        else:
            outcome.failed += 1
        idle.put_nowait(connection)

    tasks = []
    for n in range(count):
        delay = started + n / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(n)))
    await asyncio.gather(*tasks)
    outcome.seconds = time.monotonic() - started
    while not idle.empty():
        idle.get_nowait().close()
    return outcome


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bench.desktop.load ADDRESS TOKEN --rate R --count N [--clients C] [--go]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("address")
    parser.add_argument("token")
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--go", action="store_true", help="print READY and wait for a line on stdin first")
    args = parser.parse_args(argv)
    outcome = asyncio.run(send(args.address, args.token, args.rate, args.count, args.clients, wait_for_go=args.go))
    sys.stdout.write(json.dumps(outcome.summary()) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
