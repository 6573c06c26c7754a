"""The token follower: the token in force is the file's, read again only when the file changes."""

from __future__ import annotations

import os
from pathlib import Path

from engine.api.auth import TokenFile
from engine.token import read_or_create_token, rotate_token


def test_the_start_token_holds_until_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "token"
    first = read_or_create_token(path)
    tokens = TokenFile(path, first)
    assert tokens() == first
    assert tokens() == first  # unchanged file: not re-read, same answer
    second = rotate_token(path)
    assert second != first
    assert tokens() == second


def test_an_explicit_start_token_is_used_until_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "token"
    on_disk = read_or_create_token(path)
    tokens = TokenFile(path, "given-by-the-caller")
    assert tokens() == "given-by-the-caller"
    rotated = rotate_token(path)
    assert tokens() == rotated != on_disk


def test_a_rewrite_in_place_is_noticed(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("aaaa")
    tokens = TokenFile(path, "aaaa")
    path.write_text("bbbbbbbb\n")  # same inode, other size
    assert tokens() == "bbbbbbbb"
    stat = path.stat()
    path.write_text("cccccccc")  # same inode and size: the mtime tells
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert tokens() == "cccccccc"


def test_missing_or_empty_file_means_no_valid_token(tmp_path: Path) -> None:
    path = tmp_path / "token"
    token = read_or_create_token(path)
    tokens = TokenFile(path, token)
    path.unlink()
    assert tokens() is None
    path.write_text("   \n")
    assert tokens() is None
    path.write_text("fresh-token")
    assert tokens() == "fresh-token"


def test_an_empty_start_token_is_no_token(tmp_path: Path) -> None:
    assert TokenFile(tmp_path / "absent", "")() is None


def test_threads_asking_for_a_new_token_at_once_all_get_the_same_one(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "vault" / "token"
    start = threading.Barrier(8)
    got: list[str] = []
    errors: list[BaseException] = []

    def ask() -> None:
        start.wait()
        try:
            got.append(read_or_create_token(path))
        except BaseException as exc:  # the failure this test is about
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(got) == 8 and len(set(got)) == 1
    assert got[0] == path.read_text(encoding="utf-8").strip()
    assert sorted(p.name for p in path.parent.iterdir()) == ["token"]  # no temporary file left behind
