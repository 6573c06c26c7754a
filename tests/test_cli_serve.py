"""``cairn serve`` as a real child process: it prints its address, answers over HTTP, follows
``cairn token --rotate`` without a restart, keeps secrets out of its log file, and stops cleanly
(exit 0) on SIGTERM and SIGINT.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli_support import child_env

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX signals")

REPO = Path(__file__).resolve().parents[1]
ADDRESS = re.compile(r"http://127\.0\.0\.1:(\d+)")
CANARY = "CANARY-5e1d-serve-body"


class Serve:
    """``python -m app serve --vault DIR --port 0`` with its stderr collected by a reader thread."""

    def __init__(self, vault_dir: Path, home: Path) -> None:
        self.vault_dir = vault_dir
        self.env = child_env(home)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--vault", str(vault_dir), "--port", "0"],
            cwd=REPO,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._lines.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self._lines)

    def wait_for_port(self, timeout: float = 120.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = ADDRESS.search(self.stderr)
            if match:
                return int(match.group(1))
            assert self.proc.poll() is None, f"serve exited early:\n{self.stderr}"
            time.sleep(0.05)
        raise AssertionError(f"no address printed:\n{self.stderr}")

    def wait_healthy(self, http: httpx.Client, port: int, timeout: float = 20.0) -> dict[str, object]:
        deadline = time.monotonic() + timeout
        while True:
            try:
                response = http.get(f"http://127.0.0.1:{port}/v6/health")
                if response.status_code == 200:
                    return dict(response.json())
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"never healthy:\n{self.stderr}"
            time.sleep(0.05)

    def stop(self, sig: int, timeout: float = 10.0) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout)
        self._reader.join(5)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._reader.join(5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def cli(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "app", *args, "--vault", str(self.vault_dir)],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return result.stdout.strip()


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False, timeout=10) as client:
        yield client


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    process = Serve(tmp_path / "vault", tmp_path / "home")
    try:
        yield process
    finally:
        process.kill()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_answers_then_stops_cleanly(serve: Serve, http: httpx.Client, sig: int) -> None:
    port = serve.wait_for_port()
    health = serve.wait_healthy(http, port)
    assert health["status"] == "ok" and health["llm_engine"] == "simple"
    assert str(serve.vault_dir) not in str(health)  # nothing personal, not even the path
    token_file = serve.vault_dir / "token"
    assert (token_file.stat().st_mode & 0o777) == 0o600
    token = token_file.read_text().strip()
    assert http.get(f"http://127.0.0.1:{port}/v6/jobs").status_code == 401
    jobs = http.get(f"http://127.0.0.1:{port}/v6/jobs", headers={"Authorization": f"Bearer {token}"})
    assert jobs.json()["queue_depth"] == 0

    assert serve.stop(sig) == 0, serve.stderr
    assert "Stopped cleanly." in serve.stderr
    assert "Traceback" not in serve.stderr
    with pytest.raises(httpx.TransportError):
        http.get(f"http://127.0.0.1:{port}/v6/health")


def test_serve_follows_token_rotation_and_keeps_secrets_out_of_its_log(serve: Serve, http: httpx.Client) -> None:
    port = serve.wait_for_port()
    serve.wait_healthy(http, port)
    url = f"http://127.0.0.1:{port}/v6/jobs"
    old = serve.cli("token")
    assert http.get(url, headers={"Authorization": f"Bearer {old}"}).status_code == 200

    new = serve.cli("token", "--rotate")
    assert new and new != old
    assert http.get(url, headers={"Authorization": f"Bearer {old}"}).status_code == 401
    assert http.get(url, headers={"Authorization": f"Bearer {new}"}).status_code == 200

    auth = {"Authorization": f"Bearer {new}"}
    assert (
        http.post(f"http://127.0.0.1:{port}/v6/ingest", json={"content": CANARY}, headers=auth).status_code
        == 400  # no conversation_id: a validation error that must not echo the content
    )
    assert http.post(f"http://127.0.0.1:{port}/v6/ingest", content=CANARY, headers=auth).status_code == 415

    assert serve.stop(signal.SIGTERM) == 0, serve.stderr
    log_text = "".join(p.read_text(errors="replace") for p in (serve.vault_dir / "logs").glob("*.log*"))
    everything = log_text + serve.stderr
    for secret in (old, new, CANARY):
        assert secret not in everything
