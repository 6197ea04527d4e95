"""Server-side sessions, CSRF tokens and the sign-in backoff, stored in the queue's database.

A session is a random 256-bit token in a cookie (``Secure``, ``HttpOnly``, ``SameSite=Strict``);
the database keeps only ``HMAC-SHA256(secret, token)``, so a copy of the file opens no session.
Each session has its own random CSRF token, which every form that changes state carries and the
server compares in constant time. Sessions end on sign-out, after ``idle`` seconds without a
request, after ``lifetime`` seconds in all, and at once when the account is disabled or its
password changed (the account is read on every request).

Before sign-in there is no session: the login form carries a token bound, by the same HMAC, to a
short-lived random cookie (a login CSRF guard).

**Backoff, per account, never a lockout.** Every attempt is a row of ``web_login_attempts``. An
account's failures are the failed attempts since its last success or ``bioevidence users unlock``
(forgotten after a day). From the 5th failure on, the next password check of that name waits
until ``first_delay`` (1 s) after the latest failure, doubling with each further failure up to
``max_delay`` (30 s). The attempt is *held* (the server answers later; no thread waits), then its
password is checked: the right password signs in and ends the run of failures, a wrong one counts.
So a right password is never refused, from any browser or address, and a guesser gets one
check per delay for each attempt in flight: the answer comes at the same time whether the
password was right or wrong, so hanging up early gains nothing. At most ``in_flight`` (4)
attempts on one name are held or checked at once; more are refused with 429 and ``Retry-After``,
unchecked and uncounted, except from a browser that signed in to that account before (its
``device`` cookie, an HMAC of the name and the password hash): under a flood of parallel guesses
the owner's usual browser still gets through. There is no limit per client address: behind a
proxy every reviewer has the same one. Unknown names back off exactly as real ones do.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..loop.accounts import FAILURES_KEPT, Account, Accounts, burn_time, login_failures, verify_password

__all__ = ["Backoff", "InFlight", "Limits", "Session", "Sessions"]


@dataclass(frozen=True, slots=True)
class Limits:
    idle: float = 2 * 3600.0
    lifetime: float = 12 * 3600.0
    free_failures: int = 5  # failures of one name before its checks wait
    first_delay: float = 1.0  # the wait after the free failures, doubled by each further failure...
    max_delay: float = 30.0  # ...up to this (below the 60 s a reverse proxy waits for an answer)
    in_flight: int = 4  # attempts on one name held or checked at once (browsers without its device cookie)
    device_days: int = 180  # how long a browser is known to an account after signing in


@dataclass(frozen=True, slots=True)
class Backoff:
    """Where a name stands: its failures since the last success or unlock, the latest, and the delay."""

    failures: int
    latest: float | None
    delay: float

    def wait(self, now: float) -> float:
        """Seconds the next password check of this name waits."""
        if self.latest is None or self.delay <= 0:
            return 0.0
        return max(0.0, self.latest + self.delay - now)


def delay_after(failures: int, limits: Limits) -> float:
    """The backoff after ``failures`` failures: none before ``free_failures``, then doubling, capped."""
    if failures < limits.free_failures:
        return 0.0
    return float(min(limits.max_delay, limits.first_delay * 2.0 ** min(failures - limits.free_failures, 60)))


class InFlight:
    """Sign-in attempts held or being checked, per name, in this server process (shared by its threads)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._count: dict[str, int] = {}
        self._lock = threading.Lock()

    def enter(self, name: str, known_device: bool) -> bool:
        """Whether another attempt on ``name`` may go ahead (always, from a known device); pair with leave."""
        with self._lock:
            count = self._count.get(name, 0)
            if count >= self.limit and not known_device:
                return False
            self._count[name] = count + 1
            return True

    def leave(self, name: str) -> None:
        with self._lock:
            count = self._count.get(name, 0) - 1
            if count > 0:
                self._count[name] = count
            else:
                self._count.pop(name, None)

    def count(self, name: str) -> int:
        with self._lock:
            return self._count.get(name, 0)


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

    # -- known devices --------------------------------------------------------------------------
    def device_cookie(self, account: Account) -> str:
        """The cookie a browser keeps after signing in to ``account`` (void once its password changes)."""
        return f"{account.name}.{self._mac('device', account.name + chr(0) + account.password_hash)}"

    def known_device(self, cookie: str | None, name: str) -> bool:
        """Whether ``cookie`` comes from a browser that signed in to ``name`` with its current password."""
        if not cookie or len(cookie) > 200 or "." not in cookie:
            return False
        if cookie.rpartition(".")[0] != name:
            return False
        account = self.accounts.get(name)
        if account is None:
            return False
        return hmac.compare_digest(self.device_cookie(account), cookie)

    # -- sign in and out --------------------------------------------------------------------------
    def backoff(self, name: str) -> Backoff:
        """Where ``name`` stands in its backoff now (module docstring)."""
        failures, latest = login_failures(self.db, name, self.clock())
        return Backoff(failures, latest, delay_after(failures, self.limits))

    def sign_in(self, name: str, password: str, client: str) -> tuple[str, Session] | None:
        """A new session token and session when the password is right and the account enabled.

        Every attempt is recorded (a failure counts towards the name's backoff, a success ends it);
        the caller holds an attempt for :meth:`backoff`'s wait before calling this."""
        account = self.accounts.get(name)
        if account is None:
            burn_time(password)  # an unknown name costs as long as a wrong password
            ok = False
        else:
            ok = verify_password(account.password_hash, password) and account.enabled
        now = self.clock()
        self.db.execute("DELETE FROM web_login_attempts WHERE at < ?", (now - FAILURES_KEPT,))
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
