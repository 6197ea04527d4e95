"""Accounts and the session secret: ``bioevidence users`` on a real queue file, argon2 hashes, an
append-only history, sessions and rate limits on an injected clock, and the secret file's rules."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from web_support import PASSWORD, cli, need_web

need_web()


def test_users_add_list_disable_enable_and_password(tmp_path: Path) -> None:
    queue = tmp_path / "q.sqlite"
    made = cli("users", "add", "dana", "--role", "admin", "--full-name", "Dana Lead", "--password-stdin",
               "--queue", queue, stdin=PASSWORD + "\n")
    assert made.returncode == 0 and "added dana (admin, decides as bioevidence-user:dana)" in made.stdout
    listed = json.loads(cli("users", "list", "--queue", queue, "--format", "json").stdout)
    assert [(a["name"], a["role"], a["enabled"], a["full_name"]) for a in listed] == [("dana", "admin", True,
                                                                                       "Dana Lead")]
    assert "password" not in json.dumps(listed)
    assert cli("users", "disable", "dana", "--queue", queue).returncode == 0
    table = cli("users", "list", "--queue", queue).stdout
    assert "dana" in table and "disabled" in table and "name" in table.splitlines()[0]
    assert cli("users", "enable", "dana", "--queue", queue).returncode == 0
    changed = cli("users", "password", "dana", "--password-stdin", "--queue", queue, stdin="another long password\n")
    assert changed.returncode == 0
    db = sqlite3.connect(queue)
    events = [r[0] for r in db.execute("SELECT event FROM account_events WHERE name = 'dana' ORDER BY id")]
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("UPDATE account_events SET role = 'admin'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("DELETE FROM account_events")
    db.close()
    assert events == ["add", "disable", "enable", "password"]  # the history is kept


@pytest.mark.parametrize("args, stdin, message", [
    (["users", "add", "eve", "--role", "reviewer", "--password-stdin"], "short\n", "at least 12 characters"),
    (["users", "add", "Eve Smith", "--role", "reviewer", "--password-stdin"], PASSWORD + "\n", "lower-case"),
    (["users", "add", "eve", "--role", "root", "--password-stdin"], PASSWORD + "\n", "'root' is not one of"),
    (["users", "add", "eve", "--role", "reviewer"], "", "--password-stdin"),
    (["users", "disable", "nobody"], "", "no account 'nobody'"),
], ids=["short-password", "bad-name", "bad-role", "no-stdin-flag", "unknown"])
def test_bad_account_input_is_exit_3_with_the_reason(tmp_path: Path, args: list[str], stdin: str,
                                                     message: str) -> None:
    from bioevidence.loop.queue import ReviewQueue

    ReviewQueue(tmp_path / "q.sqlite").close()
    result = cli(*args, "--queue", tmp_path / "q.sqlite", stdin=stdin)
    assert result.returncode == 3 and message in result.stderr, result.stderr


def test_a_name_is_never_reused(tmp_path: Path) -> None:
    queue = tmp_path / "q.sqlite"
    for _ in range(2):
        result = cli("users", "add", "fay", "--role", "reviewer", "--password-stdin", "--queue", queue,
                     stdin=PASSWORD + "\n")
    assert result.returncode == 3 and "names are never reused" in result.stderr


def test_serve_without_the_web_extra_names_the_install_command(tmp_path: Path) -> None:
    blocked = ("import sys; sys.modules['fastapi'] = None; from bioevidence.cli import main; "
               f"sys.exit(main(['serve', '--queue', {str(tmp_path / 'q.sqlite')!r}]))")
    result = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, check=False)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 3 and len(lines) == 1 and "pip install 'bioevidence[web]'" in lines[0]


def test_serve_refuses_a_missing_queue_and_a_busy_port(tmp_path: Path) -> None:
    missing = cli("serve", "--queue", tmp_path / "none.sqlite")
    assert missing.returncode == 3 and "no review queue" in missing.stderr
    import socket

    queue = tmp_path / "q.sqlite"
    cli("users", "add", "gil", "--role", "reviewer", "--password-stdin", "--queue", queue, stdin=PASSWORD + "\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = cli("serve", "--queue", queue, "--port", str(port))
    assert busy.returncode == 3 and "choose another --port" in busy.stderr


def test_sessions_expire_and_failed_sign_ins_back_off_per_account_not_per_client(tmp_path: Path) -> None:
    from bioevidence.loop.queue import ReviewQueue
    from bioevidence.web.sessions import Limits, Sessions

    now = [1000.0]
    with ReviewQueue(tmp_path / "q.sqlite") as queue:
        queue.accounts.add("hal", role="reviewer", password=PASSWORD)
        sessions = Sessions(queue.db, b"s" * 32, queue.accounts, clock=lambda: now[0],
                            limits=Limits(idle=600, lifetime=3600))
        signed = sessions.sign_in("hal", PASSWORD, "10.0.0.1")
        assert signed is not None
        token, _ = signed
        now[0] += 599
        assert sessions.get(token) is not None  # used: idle time starts again
        now[0] += 599
        assert sessions.get(token) is not None
        now[0] += 601
        assert sessions.get(token) is None  # idle too long
        token, _ = sessions.sign_in("hal", PASSWORD, "10.0.0.1") or ("", None)
        for _ in range(6):
            now[0] += 590
            assert sessions.get(token) is not None
        now[0] += 590
        assert sessions.get(token) is None  # past the lifetime, however busy
        for name in ("x", "y", "z") * 10:  # thirty failures from one client, on other names
            assert sessions.sign_in(name, "wrong password here", "10.0.0.9") is None
        assert sessions.backoff("hal").wait(now[0]) == 0  # that client's failures slow no one else
        assert sessions.sign_in("hal", PASSWORD, "10.0.0.9") is not None


def test_the_secret_comes_from_the_environment_or_an_owner_only_file(tmp_path: Path) -> None:
    from bioevidence.errors import ConfigurationError
    from bioevidence.web.secret import ENV, load_secret

    file = tmp_path / "q.sqlite.session-secret"
    secret, origin = load_secret(file, environ={})
    assert origin == "generated" and len(secret) == 64 and (file.stat().st_mode & 0o777) == 0o600
    assert load_secret(file, environ={}) == (secret, "file")
    assert load_secret(file, environ={ENV: "e" * 40}) == (b"e" * 40, "environment")
    with pytest.raises(ConfigurationError, match="at least 32"):
        load_secret(file, environ={ENV: "short"})
    file.chmod(0o640)
    with pytest.raises(ConfigurationError, match="chmod 600"):
        load_secret(file, environ={})
    file.chmod(0o600)
    link = tmp_path / "link"
    link.symlink_to(file)
    with pytest.raises(ConfigurationError, match="not a symlink"):
        load_secret(link, environ={})
    (tmp_path / "empty").write_text("x")
    os.chmod(tmp_path / "empty", 0o600)
    with pytest.raises(ConfigurationError, match="fewer than 32"):
        load_secret(tmp_path / "empty", environ={})


def test_serve_on_another_host_is_warned_about_and_answers_only_known_host_names(tmp_path: Path) -> None:
    import re

    import httpx

    queue = tmp_path / "q.sqlite"
    cli("users", "add", "ivy", "--role", "reviewer", "--password-stdin", "--queue", queue, stdin=PASSWORD + "\n")
    log = tmp_path / "serve.log"
    with open(log, "wb") as err:
        process = subprocess.Popen([sys.executable, "-m", "bioevidence", "serve", "--queue", str(queue), "--host",
                                    "0.0.0.0", "--port", "0", "--allowed-host", "review.lab.example"],
                                   stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert process.stdout is not None
        port = re.match(r"serving http://0\.0\.0\.0:(\d+)/", process.stdout.readline()).group(1)  # type: ignore[union-attr]
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                httpx.get(f"{url}/healthz")
                break
            except httpx.TransportError:
                import time

                time.sleep(0.1)
        assert httpx.get(f"{url}/healthz", headers={"host": "review.lab.example"}).text == "ok"
        assert httpx.get(f"{url}/healthz", headers={"host": "elsewhere.example"}).status_code == 400
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
    warning = log.read_text()
    assert "warning: serving on 0.0.0.0, reachable from the network" in warning and "--certfile" in warning
