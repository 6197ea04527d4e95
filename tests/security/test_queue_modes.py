"""Issue 25, cause 10: the review queue (records, notes, reviewers' argon2 hashes) is its owner's alone.

A new queue and the ``-wal``/``-shm`` files SQLite makes beside it are created 0600 whatever the umask
(as the web server's session secret is); ``review verify`` warns, naming the ``chmod``, on a queue that
others may read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from security.harness import run_cli

REPO = Path(__file__).resolve().parents[2]


def test_a_new_queue_and_its_wal_and_shm_are_private_under_an_open_umask(tmp_path: Path) -> None:
    old = os.umask(0o000)  # the widest: every file would be 0666 if we relied on the umask
    try:
        added = run_cli(["review", "add", str(REPO / "examples" / "records"), "--queue", "q.sqlite"], cwd=tmp_path)
    finally:
        os.umask(old)
    assert added.code in (0, 2), added.stderr
    files = [tmp_path / name for name in ("q.sqlite", "q.sqlite-wal", "q.sqlite-shm") if (tmp_path / name).exists()]
    assert tmp_path / "q.sqlite" in files
    assert {f.name: oct(stat.S_IMODE(f.stat().st_mode)) for f in files} == {f.name: "0o600" for f in files}


def test_verify_warns_on_a_queue_others_can_read(tmp_path: Path) -> None:
    added = run_cli(["review", "add", str(REPO / "examples" / "records"), "--queue", "q.sqlite"], cwd=tmp_path)
    assert added.code in (0, 2), added.stderr
    quiet = run_cli(["review", "verify", "--queue", "q.sqlite"], cwd=tmp_path)
    assert quiet.code == 0 and "warning" not in quiet.stderr, quiet.stderr
    (tmp_path / "q.sqlite").chmod(0o644)
    warned = run_cli(["review", "verify", "--queue", "q.sqlite"], cwd=tmp_path)
    assert warned.code == 0 and "ok:" in warned.stdout
    assert "q.sqlite is readable or writable by others (mode 0644)" in warned.stderr
    assert "chmod 600" in warned.stderr
