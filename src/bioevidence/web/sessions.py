"""Server-side sessions, CSRF tokens and login rate limiting, stored in the queue's database.

A session is a random 256-bit token in a cookie (``Secure``, ``HttpOnly``, ``SameSite=Strict``);
the database keeps only ``HMAC-SHA256(secret, token)``, so a copy of the file opens no session.
Each session has its own random CSRF token, which every form that changes state carries and the
server compares in constant time. Sessions end on sign-out, after ``idle`` seconds without a
request, after ``lifetime`` seconds in all, and at once when the account is disabled or its
password changed (the account is read on every request).

Before sign-in there is no session: the login form carries a token bound, by the same HMAC, to a
short-lived random cookie (a login CSRF guard). Failed sign-ins are counted per account and per
client address over a window; past the limit the server answers 429 with ``Retry-After`` and
does not check the password at all.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..loop.accounts import Account, Accounts, burn_time, verify_password

__all__ = ["Limits", "Session", "Sessions"]


@dataclass(frozen=True, slots=True)
class Limits:
    idle: float = 2 * 3600.0
    lifetime: float = 12 * 3600.0
    window: float = 15 * 60.0
    per_account: int = 5  # failed sign-ins per account in the window
    per_client: int = 30  # failed sign-ins per client address in the window


@dataclass(frozen=True, slots=True)
class Session:
    account: Account
    csrf: str
    token_hmac: str


class Sessions:
    """Sessions over one queue connection (each server thread has its own)."""

    def __init__(self, db: sqlite3.Connection, secret: bytes, accounts: Accounts, *, limits: Limits = Limits(),
                 clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.secret = secret
        self.accounts = accounts
        self.limits = limits
        self.clock = clock

    def _mac(self, purpose: str, value: str) -> str:
        return hmac.new(self.secret, f"{purpose}\0{value}".encode(), hashlib.sha256).hexdigest()

    # -- login CSRF -------------------------------------------------------------------------------
    def login_token(self, cookie: str) -> str:
        return self._mac("login", cookie)

    def login_token_ok(self, cookie: str | None, token: str | None) -> bool:
        if not cookie or not token:
            return False
        return hmac.compare_digest(self._mac("login", cookie), token)

    # -- sign in and out --------------------------------------------------------------------------
    def retry_after(self, name: str, client: str) -> int | None:
        """Seconds to wait when ``name`` or ``client`` is over its failed sign-in limit, else ``None``."""
        since = self.clock() - self.limits.window
        rows = self.db.execute(
            "SELECT name = ?, client = ?, at FROM web_login_attempts WHERE ok = 0 AND at > ?"
            " AND (name = ? OR client = ?) ORDER BY at", (name, client, since, name, client)).fetchall()
        by_name = [r[2] for r in rows if r[0]]
        by_client = [r[2] for r in rows if r[1]]
        waits = []
        if len(by_name) >= self.limits.per_account:
            waits.append(by_name[-self.limits.per_account] + self.limits.window - self.clock())
        if len(by_client) >= self.limits.per_client:
            waits.append(by_client[-self.limits.per_client] + self.limits.window - self.clock())
        return max(1, int(max(waits)) + 1) if waits else None

    def sign_in(self, name: str, password: str, client: str) -> tuple[str, Session] | None:
        """A new session token and session when the password is right and the account enabled."""
        account = self.accounts.get(name)
        if account is None:
            burn_time(password)  # an unknown name costs as long as a wrong password
            ok = False
        else:
            ok = verify_password(account.password_hash, password) and account.enabled
        now = self.clock()
        self.db.execute("DELETE FROM web_login_attempts WHERE at < ?", (now - 86400.0,))
        self.db.execute("INSERT INTO web_login_attempts (at, name, client, ok) VALUES (?,?,?,?)",
                        (now, name[:64], client[:64], int(ok)))
        if not ok or account is None:
            return None
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        digest = self._mac("session", token)
        self.db.execute("DELETE FROM web_sessions WHERE seen_at < ? OR created_at < ?",
                        (now - self.limits.idle, now - self.limits.lifetime))
        self.db.execute("INSERT INTO web_sessions (token_hmac, account, csrf, created_at, seen_at) VALUES (?,?,?,?,?)",
                        (digest, account.name, csrf, now, now))
        return token, Session(account, csrf, digest)

    def get(self, token: str | None) -> Session | None:
        """The live session of a cookie, or ``None`` (unknown, expired, or its account disabled)."""
        if not token or len(token) > 200:
            return None
        digest = self._mac("session", token)
        row = self.db.execute("SELECT account, csrf, created_at, seen_at FROM web_sessions WHERE token_hmac = ?",
                              (digest,)).fetchone()
        if row is None:
            return None
        now = self.clock()
        if now - row[3] > self.limits.idle or now - row[2] > self.limits.lifetime:
            self.db.execute("DELETE FROM web_sessions WHERE token_hmac = ?", (digest,))
            return None
        account = self.accounts.get(row[0])
        if account is None or not account.enabled:
            self.db.execute("DELETE FROM web_sessions WHERE token_hmac = ?", (digest,))
            return None
        if now - row[3] > 60.0:  # at most one write a minute per session
            self.db.execute("UPDATE web_sessions SET seen_at = ? WHERE token_hmac = ?", (now, digest))
        return Session(account, row[1], digest)

    def csrf_ok(self, session: Session, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(session.csrf, token or "")

    def sign_out(self, session: Session) -> None:
        self.db.execute("DELETE FROM web_sessions WHERE token_hmac = ?", (session.token_hmac,))
