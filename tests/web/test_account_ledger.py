"""Issue 25, cause 9: accounts are in the tamper-evident ledger, and a running server notices an edit.

One SQL ``INSERT`` into ``account_events`` made a reviewer an admin or set an admin's password, the
running server honoured it and ``review verify`` said ok; a decision edited in the file (trigger
dropped, row updated) was shown by the running server. Now every account event is chained
(``loop/account_ledger.py``): verify names a forged or altered event, a forged account cannot sign
in, and the server re-verifies when another connection writes the file, refusing to serve an
altered queue. Real queue files, the real CLI, the app through FastAPI's TestClient.
"""

from __future__ import annotations

import gc
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from web_support import PASSWORD, cli, need_web

need_web()

from fastapi.testclient import TestClient  # noqa: E402

from bioevidence.gate.validator import Validator  # noqa: E402
from bioevidence.loop.accounts import hash_password  # noqa: E402
from bioevidence.loop.queue import MIGRATIONS, ReviewQueue  # noqa: E402
from bioevidence.web.app import create_app  # noqa: E402
from bioevidence.web.state import Settings  # noqa: E402
from builders import record  # noqa: E402

FORGED = "a forged password, long enough"


def _queue(folder: Path) -> Path:
    path = folder / "queue.sqlite"
    validator = Validator("general")
    with ReviewQueue(path) as queue:
        rec = record("general", ["knowledge_base", "training_data"])
        queue.add(rec, validator.validate(rec), reason="policy", profile="general")
        queue.accounts.add("owner", role="admin", password=PASSWORD)
        queue.accounts.add("rita", role="reviewer", password=PASSWORD)
    return path


def _sql(path: Path, *statements: str, params: tuple[object, ...] = ()) -> None:
    db = sqlite3.connect(path)
    try:
        for statement in statements:
            db.execute(statement, params if "?" in statement else ())
        db.commit()
    finally:
        db.close()


FORGERIES = {
    "a new admin": ("INSERT INTO account_events (name, event, role, reviewer_id, full_name, password_hash, at) "
                    "VALUES ('mallory', 'add', 'admin', 'x:mallory', NULL, ?, '2026-12-01T00:00:00Z')", "mallory"),
    "a reviewer made admin": ("INSERT INTO account_events (name, event, role, reviewer_id, full_name, password_hash, "
                              "at) VALUES ('rita', 'add', 'admin', 'x:rita', NULL, ?, '2026-12-01T00:00:00Z')", "rita"),
    "the admin's password set": ("INSERT INTO account_events (name, event, role, reviewer_id, full_name, "
                                 "password_hash, at) VALUES ('owner', 'password', NULL, NULL, NULL, ?, "
                                 "'2026-12-01T00:00:00Z')", "owner"),
}


@pytest.mark.parametrize("how", list(FORGERIES))
def test_an_account_event_written_outside_bioevidence_is_named_and_never_honoured(how: str, tmp_path: Path) -> None:
    path = _queue(tmp_path)
    statement, name = FORGERIES[how]
    _sql(path, statement, params=(hash_password(FORGED),))
    verified = cli("review", "verify", "--queue", path)
    assert verified.returncode == 1, verified.stdout + verified.stderr
    assert "is not in the ledger: it was added outside bioevidence" in verified.stdout
    with ReviewQueue(path, verify=False) as queue:
        assert queue.accounts.get(name) is None  # no sign-in with the forged hash, nor with the old one
    with pytest.raises(Exception, match="altered outside bioevidence"):  # a server will not start on it
        create_app(Settings(queue=path, secret=b"s" * 32), lambda profile: Validator(profile))


def test_a_queue_of_schema_4_chains_its_accounts_when_it_migrates(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    for version, script in enumerate(MIGRATIONS[:4], start=1):
        db.executescript(script)
        db.execute("INSERT INTO schema_version VALUES (?, '2026-01-01T00:00:00Z')", (version,))
    db.execute("INSERT INTO account_events (name, event, role, reviewer_id, full_name, password_hash, at) "
               "VALUES ('owner', 'add', 'admin', 'x:owner', NULL, ?, '2026-01-01T00:00:00Z')",
               (hash_password(PASSWORD),))
    db.commit()
    db.close()
    with ReviewQueue(path) as queue:
        assert queue.version == len(MIGRATIONS) and queue.verify().intact
        owner = queue.accounts.get("owner")
        assert owner is not None and owner.role == "admin"


def _checked(web: Any, after: int, seconds: float = 15.0) -> int:
    """Wait until the server's ledger watch has finished a check after its ``after``-th (it runs on its own thread)."""
    deadline = time.monotonic() + seconds
    while web.watch.checks <= after and web.watch.altered is None:
        assert time.monotonic() < deadline, "the ledger watch did not check the file within 15 s"
        time.sleep(0.02)
    return int(web.watch.checks)


def test_a_running_server_stops_serving_a_queue_edited_under_it(tmp_path: Path) -> None:
    """The ledger is checked again after any other connection writes the file, on the server's
    ledger-check thread (no request waits for it): a write through bioevidence keeps the pages
    serving, an edit outside bioevidence stops every page, and the stop lasts."""
    path = _queue(tmp_path)
    guard = create_app(Settings(queue=path, secret=b"s" * 32, reverify_every=0.05), lambda p: Validator(p))
    web = guard.app.state.web
    client = TestClient(guard, base_url="https://127.0.0.1", raise_server_exceptions=False)
    token = re.search(r'name="token" value="([^"]*)"', client.get("/login").text)
    assert token is not None
    login = client.post("/login", data={"name": "owner", "password": PASSWORD, "token": token.group(1),
                                        "next": "/queue"}, follow_redirects=False)
    assert login.status_code in (302, 303), login.text[:300]
    assert client.get("/entries/1").status_code == 200
    checks = _checked(web, 0)  # the first look always checks (a write may follow the start-up check)
    decided = cli("review", "decide", "1", "defer", "--reviewer", "orcid:0000-0002-1825-0097", "--rationale",
                  "Waiting for the full text.", "--queue", path)
    assert decided.returncode in (0, 1, 2), decided.stderr
    _checked(web, checks)
    assert web.watch.altered is None
    assert client.get("/entries/1").status_code == 200  # a write through bioevidence is not an alteration
    _sql(path, "DROP TRIGGER decisions_append_only_update",
         "UPDATE decisions SET rationale = 'Accepted after review.' WHERE id = 1")
    _checked(web, web.watch.checks)
    assert web.watch.altered is not None and "decisions_append_only_update is missing" in web.watch.altered
    for where in ("/entries/1", "/queue", "/entries/1"):
        page = client.get(where)
        assert page.status_code == 503 and "altered outside bioevidence" in page.text, where
        assert "Accepted after review." not in page.text
    web.watch.stop(5)


def test_the_ledger_check_thread_ends_with_the_server_state(tmp_path: Path) -> None:
    """Its thread holds the server's state only weakly: a server (an app in a test) that is gone
    leaves no thread polling its file."""
    guard = create_app(Settings(queue=_queue(tmp_path), secret=b"s" * 32, reverify_every=0.05), lambda p: Validator(p))
    thread = guard.app.state.web.watch._thread
    assert thread.is_alive() and thread.name == "ledger-check"
    del guard
    gc.collect()
    thread.join(10)
    assert not thread.is_alive()


def test_the_ledger_check_thread_ends_with_the_server_state_after_idle_looks(tmp_path: Path) -> None:
    """The same once the thread has checked and then looked several times at an unchanged file (the
    path a server spends its life on): no look keeps the state alive while the thread waits."""
    guard = create_app(Settings(queue=_queue(tmp_path), secret=b"s" * 32, reverify_every=0.05), lambda p: Validator(p))
    watch = guard.app.state.web.watch
    thread = watch._thread
    _checked(guard.app.state.web, 0)
    time.sleep(0.5)  # about ten looks at 0.05 s, each finding the file unchanged
    assert watch.checks == 1 and watch.altered is None
    del guard, watch
    gc.collect()
    thread.join(10)
    assert not thread.is_alive()
