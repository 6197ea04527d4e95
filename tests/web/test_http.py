"""The server over HTTP: the real ``bioevidence serve`` on 127.0.0.1 over a real queue of CIViC records.

Each test uses its own queue entries (named in the test), so tests of one module share one server.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from web_support import PASSWORD, Server, Visitor, cli, hidden, need_web

need_web()

SECURITY_HEADERS = ("content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy",
                    "cross-origin-opener-policy", "permissions-policy")


def _decide(v: Visitor, entry: int, decision: str, rationale: str, **extra: str) -> object:
    page = v.get(f"/entries/{entry}")
    data = {"csrf": hidden(page.text, "csrf"), "request_id": hidden(page.text, "request_id"), "decision": decision,
            "rationale": rationale, **extra}
    return v.post(f"/entries/{entry}/decide", data=data)


def test_every_response_carries_the_security_headers(visitor: Visitor) -> None:
    for path in ("/login", "/queue", "/static/style.css", "/healthz", "/nowhere"):
        response = visitor.get(path)
        for header in SECURITY_HEADERS:
            assert header in response.headers, (path, header)
    csp = visitor.get("/login").headers["content-security-policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp and "'unsafe-inline'" not in csp


def test_a_page_without_a_session_sends_to_sign_in(visitor: Visitor) -> None:
    for path in ("/queue", "/entries/1", "/audit", "/audit/predictions.csv"):
        response = visitor.get(path)
        assert response.status_code == 303 and response.headers["location"] == f"/login?next={path}"


def test_a_state_change_without_a_session_is_refused(visitor: Visitor, server: Server) -> None:
    response = visitor.post("/entries/1/decide", data={"decision": "accept", "rationale": "r", "csrf": "x",
                                                        "request_id": "a" * 32})
    assert response.status_code == 403
    assert _decisions(server.queue, 1) == []


def test_signing_in_sets_a_secure_httponly_strict_cookie_and_keeps_no_password(visitor: Visitor,
                                                                              server: Server) -> None:
    v = visitor
    response = v.login("bob")
    assert response.status_code == 303 and response.headers["location"] == "/queue"
    cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith("bioevidence_session="))
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    token = v.cookies["bioevidence_session"]
    db = sqlite3.connect(server.queue)
    stored = [r[0] for r in db.execute("SELECT token_hmac FROM web_sessions")]
    hashes = [r[0] for r in db.execute("SELECT password_hash FROM account_events WHERE name = 'bob'")]
    db.close()
    assert token not in stored and len(stored[-1]) == 64  # only an HMAC of the cookie is stored
    assert hashes and all(h.startswith("$argon2id$") and PASSWORD not in h for h in hashes)
    assert "Bob Reviewer (reviewer)" in v.get("/queue").text


def test_a_wrong_password_or_unknown_name_is_one_answer(visitor: Visitor) -> None:
    wrong = visitor.login("bob", "not the password at all")
    unknown = visitor.login("nobody-here", "not the password at all")
    assert wrong.status_code == unknown.status_code == 401
    assert "Wrong name or password" in wrong.text and "Wrong name or password" in unknown.text
    assert "bioevidence_session" not in visitor.cookies


def test_the_sign_in_form_needs_its_own_token(visitor: Visitor) -> None:
    visitor.get("/login")
    response = visitor.post("/login", data={"name": "bob", "password": PASSWORD, "token": "forged"})
    assert response.status_code == 403 and "bioevidence_session" not in visitor.cookies


def test_failed_sign_ins_slow_the_account_but_the_right_password_still_signs_in(visitor: Visitor,
                                                                               server: Server) -> None:
    for _ in range(5):
        assert visitor.login("locked", "wrong password, again").status_code == 401
    db = sqlite3.connect(server.queue)
    failures = db.execute("SELECT count(*) FROM web_login_attempts WHERE name = 'locked' AND ok = 0").fetchone()[0]
    db.close()
    assert failures == 5  # the account is in backoff now: its next check waits a second
    signed = visitor.login("locked")  # held for the backoff, then checked: the owner is never locked out
    assert signed.status_code == 303 and "bioevidence_session" in visitor.cookies
    assert "bioevidence_device" in visitor.cookies


def test_a_form_without_its_csrf_token_is_refused(sign_in: Any, server: Server) -> None:
    v = sign_in()
    page = v.get("/entries/2")
    data = {"decision": "accept", "rationale": "The quote supports it.", "request_id": hidden(page.text, "request_id")}
    assert v.post("/entries/2/decide", data=data).status_code == 403
    assert v.post("/entries/2/decide", data={**data, "csrf": "not-the-token"}).status_code == 403
    assert v.post("/logout", data={}).status_code == 403
    assert _decisions(server.queue, 2) == []


def test_a_cross_origin_form_is_refused_even_with_the_token(sign_in: Any, server: Server) -> None:
    v = sign_in()
    page = v.get("/entries/2")
    data = {"csrf": hidden(page.text, "csrf"), "request_id": hidden(page.text, "request_id"), "decision": "accept",
            "rationale": "r"}
    response = v.post("/entries/2/decide", data=data, headers={"origin": "http://evil.example"})
    assert response.status_code == 403 and "cross-origin" in response.text
    assert _decisions(server.queue, 2) == []


def test_an_unknown_host_is_refused(server: Server) -> None:
    import httpx

    response = httpx.get(f"{server.url}/login", headers={"host": "attacker.example"})
    assert response.status_code == 400 and "--allowed-host" in response.text


def test_an_oversized_body_is_refused(sign_in: Any, server: Server) -> None:
    v = sign_in()
    response = v.post("/entries/2/decide", data={"rationale": "x" * (11 * 1024 * 1024)})
    assert response.status_code == 413


def _decisions(queue: Path, entry: int) -> list[tuple[str, str, str]]:
    db = sqlite3.connect(queue)
    try:
        return [tuple(r) for r in db.execute("SELECT decision, reviewer_id, rationale FROM decisions WHERE entry_id = ?"
                                             " ORDER BY id", (entry,))]
    finally:
        db.close()


def status_now(html: str) -> tuple[str, str, str]:
    """(standing, the gate's status, the words shown) of the record page's "Status now"."""
    found = re.search(r'id="status-now" data-standing="(\w+)" data-status="(\w+)"[^>]*>([^<]*)<', html)
    assert found is not None, "no status-now on the page"
    return found.group(1), found.group(2), found.group(3)


def test_a_decision_is_appended_with_reviewer_and_time_and_the_gate_runs_again(sign_in: Any, server: Server) -> None:
    v = sign_in()
    page = v.get("/entries/1")
    assert status_now(page.text) == ("awaiting_acceptance", "rejected", "awaiting your acceptance")
    assert "BEV010" in page.text
    response = _decide(v, 1, "accept", "The highlighted sentence states the association.")
    assert response.status_code == 303
    moved = re.fullmatch(r"/entries/(\d+)\?decided=(\d+)&prev=1", response.headers["location"])
    assert moved and moved.group(1) != "1"  # the next open entry, saying what was recorded on entry 1
    after = v.get(response.headers["location"])
    assert 'id="status-after" data-standing="admitted"' in after.text
    assert re.search(r'Recorded: <b>accept</b> on <a href="/entries/1" id="decided-entry">entry 1</a> by Bob Reviewer',
                     after.text)
    assert status_now(v.get("/entries/1").text)[:2] == ("admitted", "admitted")
    assert _decisions(server.queue, 1) == [("accept", "orcid:0000-0001-5109-3700",
                                            "The highlighted sentence states the association.")]
    shown = json.loads(cli("review", "show", "1", "--queue", server.queue, "--format", "json").stdout)
    (adjudication,) = shown["record"]["adjudications"]
    assert adjudication["reviewer"] == {"id": "orcid:0000-0001-5109-3700", "agent_type": "human",
                                        "name": "Bob Reviewer"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", adjudication["decided_at"])
    assert shown["overall_status"] == "admitted"


def test_a_rejection_says_why_the_record_is_now_rejected(sign_in: Any, server: Server) -> None:
    v = sign_in("carol")
    response = _decide(v, 5, "reject", "The sentence is about methods, not the claim.")
    assert 'id="status-after" data-standing="rejected"' in v.get(response.headers["location"]).text
    after = v.get("/entries/5")
    assert status_now(after.text)[:2] == ("rejected", "rejected") and "BEV011" in after.text  # a human rejection


def test_a_decision_needs_a_reason(sign_in: Any, server: Server) -> None:
    v = sign_in()
    response = _decide(v, 7, "accept", "   ")
    assert response.status_code == 400 and "needs a reason" in response.text
    assert _decisions(server.queue, 7) == []


def test_the_same_form_sent_twice_is_one_decision(sign_in: Any, server: Server) -> None:
    v = sign_in()
    page = v.get("/entries/3")
    data = {"csrf": hidden(page.text, "csrf"), "request_id": hidden(page.text, "request_id"), "decision": "defer",
            "rationale": "Need the supplementary table."}
    first = v.post("/entries/3/decide", data=data)
    second = v.post("/entries/3/decide", data=data)  # a double click, or a browser retrying
    assert first.status_code == second.status_code == 303
    assert first.headers["location"] == second.headers["location"]
    assert _decisions(server.queue, 3) == [("defer", "orcid:0000-0001-5109-3700", "Need the supplementary table.")]


def test_a_disabled_account_is_signed_out_at_once(sign_in: Any, server: Server) -> None:
    v = sign_in("carol")
    assert v.get("/queue").status_code == 200
    assert cli("users", "disable", "carol", "--queue", server.queue).returncode == 0
    assert v.get("/queue").status_code == 303
    assert v.login("carol").status_code == 401
    assert cli("users", "enable", "carol", "--queue", server.queue).returncode == 0
    assert v.login("carol").status_code == 303


def test_signing_out_ends_the_session_on_the_server(sign_in: Any, server: Server) -> None:
    v = sign_in()
    token = v.cookies["bioevidence_session"]
    page = v.get("/queue")
    assert v.post("/logout", data={"csrf": hidden(page.text, "csrf")}).status_code == 303
    assert "bioevidence_session" not in v.cookies
    v.cookies["bioevidence_session"] = token  # the old cookie, replayed
    assert v.get("/queue").status_code == 303


def test_the_queue_filters_by_status_code_profile_source_and_text(sign_in: Any, server: Server) -> None:
    v = sign_in()
    every = v.get("/queue?state=all").text
    assert 'id="result-count">60 records' in every
    retracted = v.get("/queue?state=all&code=BEV027").text
    assert re.findall(r'<tr data-entry="(\d+)"', retracted) == ["10"]
    by_source = v.get("/queue?state=all&source=pmid:32432717").text
    assert re.findall(r'<tr data-entry="(\d+)"', by_source) == ["10"]
    model = re.findall(r'<tr data-entry="(\d+)"', v.get("/queue?state=all&code=BEV008").text)
    assert model and all(int(e) % 10 == 8 for e in model)  # every 10th record, from position 7, is LLM-only
    assert "Nothing matches" in v.get("/queue?state=all&profile=dataset-label").text
    assert re.findall(r'<tr data-entry="(\d+)"', v.get("/queue?state=all&q=civic:8:0").text) == ["1"]


def test_reviewers_cannot_open_the_audit_page(sign_in: Any, server: Server) -> None:
    v = sign_in("bob")
    assert v.get("/audit").status_code == 403 and v.get("/audit/predictions.csv").status_code == 403


def test_a_missing_entry_is_a_404_page(sign_in: Any, server: Server) -> None:
    v = sign_in()
    response = v.get("/entries/9999")
    assert response.status_code == 404 and "no entry 9999" in response.text


@pytest.mark.parametrize("entry", [1, 4, 6, 10])
def test_the_cli_sees_the_queue_the_server_writes(server: Server, entry: int) -> None:
    """One schema, one file: `review verify` passes however the server wrote it."""
    verified = cli("review", "verify", "--queue", server.queue)
    assert verified.returncode == 0 and verified.stdout.startswith("ok: ")
    assert cli("review", "show", str(entry), "--queue", server.queue).returncode == 0
