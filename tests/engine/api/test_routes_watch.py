"""``/v6/watch``: watch a folder, list it with its state, rescan, let go of it (keeping or
forgetting its documents), and the refusals."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from engine import Vault
from tests.engine.api.conftest import assert_error


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "Notes"
    folder.mkdir()
    (folder / "garden.md").write_text("# Garden\n\nWater the basil daily.", encoding="utf-8")
    (folder / "ignored.bin").write_bytes(b"\x00\x01")
    return folder


def wait_for(condition: object, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_watch_list_rescan_and_unwatch(client: httpx.Client, auth: dict[str, str], vault: Vault, notes: Path) -> None:
    watched = client.post("/v6/watch", json={"path": str(notes), "include": ["*.md"]}, headers=auth)
    assert watched.status_code == 200
    [folder] = watched.json()["folders"]
    assert folder["path"] == str(notes.resolve())
    assert folder["include"] == ["*.md"] and ".*" in folder["exclude"]
    wait_for(lambda: [d.name for d in vault.documents()] == ["garden.md"])

    (notes / "kitchen.md").write_text("# Kitchen\n\nThe kettle is blue.", encoding="utf-8")
    rescanned = client.post("/v6/watch/rescan", json={"path": str(notes)}, headers=auth)
    assert rescanned.status_code == 200
    out = rescanned.json()
    assert out["completed"] is True
    assert out["result"]["roots"] == [str(notes.resolve())] and out["result"]["reason"] == "demand"
    assert out["result"]["added"] + out["result"]["unchanged"] == 2
    assert out["result"]["finished_at"].endswith("Z")
    assert sorted(d.name for d in vault.documents()) == ["garden.md", "kitchen.md"]

    listed = client.get("/v6/watch", headers=auth).json()["folders"]
    assert [f["state"] for f in listed] == ["ok"]
    assert listed[0]["last_scan_at"].endswith("Z") and listed[0]["last_result"] is not None
    assert vault.settings.watch.folders[0].path == str(notes.resolve())  # saved in settings

    kept = client.request("DELETE", "/v6/watch", json={"path": str(notes)}, headers=auth)
    assert kept.status_code == 200 and kept.json() == {"folders": []}
    assert len(vault.documents()) == 2  # the documents stay
    assert vault.settings.watch.folders == ()


def test_unwatch_with_forget_deletes_the_folders_documents(
    client: httpx.Client, auth: dict[str, str], vault: Vault, notes: Path
) -> None:
    client.post("/v6/watch", json={"path": str(notes)}, headers=auth)
    client.post("/v6/watch/rescan", json={}, headers=auth)
    assert [d.name for d in vault.documents()] == ["garden.md"]
    gone = client.request("DELETE", "/v6/watch", json={"path": str(notes), "forget": True}, headers=auth)
    assert gone.status_code == 200
    wait_for(lambda: vault.documents() == [])


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"path": "Notes"}, "'Notes' is a relative path"),
        ({"path": "/definitely/not/here"}, "is not a folder"),
        ({"path": "FILE"}, "is not a folder"),
        ({"path": "INSIDE"}, "overlaps the watched folder"),
        ({"path": "NOTES", "include": []}, "include"),
    ],
)
def test_refusals_say_what_is_wrong(
    client: httpx.Client,
    auth: dict[str, str],
    vault: Vault,
    notes: Path,
    body: dict[str, object],
    words: str,
) -> None:
    client.post("/v6/watch", json={"path": str(notes)}, headers=auth)
    inside = notes / "inner"
    inside.mkdir()
    paths = {"FILE": str(notes / "garden.md"), "INSIDE": str(inside), "NOTES": str(notes)}
    sent = {**body, "path": paths.get(str(body["path"]), body["path"])}
    error = assert_error(client.post("/v6/watch", json=sent, headers=auth), 400)
    assert words in error["message"]  # type: ignore[operator]
    assert [f.path for f in vault.settings.watch.folders] == [str(notes.resolve())]


def test_an_unwatched_folder_is_a_404(client: httpx.Client, auth: dict[str, str], tmp_path: Path) -> None:
    unwatch = client.request("DELETE", "/v6/watch", json={"path": str(tmp_path)}, headers=auth)
    assert assert_error(unwatch, 404, "not_found")["details"]["kind"] == "watched folder"  # type: ignore[index]
    rescan = client.post("/v6/watch/rescan", json={"path": str(tmp_path)}, headers=auth)
    assert_error(rescan, 404, "not_found")


def test_a_scan_longer_than_the_wait_answers_202(
    client: httpx.Client, auth: dict[str, str], vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    waited: list[float | None] = []

    def slow(path: object = None, *, timeout: float | None = None) -> object:
        waited.append(timeout)
        raise TimeoutError

    monkeypatch.setattr(vault.watcher, "rescan", slow)
    response = client.post("/v6/watch/rescan", json={"wait_s": 0.5}, headers=auth)
    assert response.status_code == 202
    assert response.json() == {"completed": False, "result": None}
    assert waited == [0.5]
    too_long = client.post("/v6/watch/rescan", json={"wait_s": 301}, headers=auth)
    assert assert_error(too_long, 400)["details"]["field"] == "wait_s"  # type: ignore[index]
