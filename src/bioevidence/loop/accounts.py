"""Reviewer accounts of a review queue, for the web pages (``bioevidence serve``, ``bioevidence users``).

Accounts live in the queue's own SQLite file (schema version 4). Their history is an append-only
table, ``account_events`` (``add``, ``disable``, ``enable``, ``password``), guarded by the same
kind of triggers as the decisions; an account's state is the fold of its events, so who could
decide, and from when to when, is never rewritten. Passwords are argon2id hashes
(``argon2-cffi``, in the ``web`` extra, imported only when a password is hashed or checked) with
OWASP's recommended parameters (19 MiB, 2 passes, 1 lane: about 30 ms a check on one core, so 50
reviewers signing in at once on a 2-core server wait under a second); the parameters travel in
each hash, so raising them later keeps old hashes valid.
There is no default account: a queue has none until an operator runs ``bioevidence users add``.

Who can write the queue file is an operator: the CLI (``review decide``, ``users add``) needs no
password. Accounts guard the web pages only (``docs/web.md``).

The same migration adds the server's working tables, which are not history and may change:
``web_sessions`` (one row per signed-in browser, keyed by an HMAC of its cookie, so reading the
file does not give a usable session) and ``web_login_attempts`` (each sign-in attempt, for the
per-account backoff of :mod:`bioevidence.web.sessions`; ``bioevidence users unlock`` appends a row
that ends an account's run of failures, as a successful sign-in does).

**Password policy** (:func:`check_password`, at ``users add`` and ``users password``): refused when
blank or only spaces, shorter than 12 or longer than 1,024 characters, one character or a short
pattern repeated (``aaaaaaaaaaaa``, ``abababababab``), a simple sequence (``123456789012``,
``abcdefghijkl``, ``zyxwvutsrqpo``, a keyboard row), one of :data:`COMMON_PASSWORDS` or the account's
own name, compared case-insensitively and also with digits, spaces and punctuation around it taken
off and common letter-for-digit swaps undone (``P@ssw0rd2024!`` is ``password``). Each refusal is
one line naming the rule (``ConfigurationError``, exit 3).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError, InputError
from . import account_ledger
from .ledger import append_only

__all__ = ["COMMON_PASSWORDS", "MIGRATION", "ROLES", "TRIGGERS", "Account", "Accounts", "check_password",
           "hash_password", "login_failures", "verify_password"]

ROLES = ("reviewer", "admin")
EVENTS = ("add", "disable", "enable", "password")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
MIN_PASSWORD = 12
MAX_PASSWORD = 1024
#: How long a failed sign-in counts towards its account's backoff (the rows are deleted after it).
FAILURES_KEPT = 86400.0
#: The ``client`` of the row ``users unlock`` appends to ``web_login_attempts``.
UNLOCK_CLIENT = "users unlock"

#: Passwords refused whatever their length (compared lower-case, also with digits, spaces and
#: punctuation around them taken off and letter-for-digit swaps undone): the commonest passwords of
#: the public breach lists, keyboard walks, and words anyone guessing at a review server tries first.
COMMON_PASSWORDS: tuple[str, ...] = (
    "password", "passw0rd", "password1", "123456", "1234567", "12345678", "123456789", "1234567890",
    "12345", "123123", "111111", "000000", "654321", "666666", "121212", "112233", "123321", "987654321",
    "qwerty", "qwertyuiop", "qwerty123", "asdfgh", "asdfghjkl", "zxcvbnm", "qazwsx", "1qaz2wsx", "1q2w3e4r",
    "1q2w3e4r5t", "zaq12wsx", "q1w2e3r4", "abc123", "abcd1234", "aa123456", "letmein", "welcome", "welcome1",
    "iloveyou", "monkey", "dragon", "master", "sunshine", "princess", "shadow", "superman", "batman",
    "trustno1", "football", "baseball", "soccer", "hockey", "starwars", "whatever", "freedom", "secret",
    "hello", "hellohello", "login", "access", "admin", "administrator", "root", "toor", "guest", "default",
    "changeme", "changeit", "test", "testing", "tester", "user", "username", "letmein123", "michael",
    "jennifer", "jordan", "charlie", "donald", "computer", "internet", "mustang", "harley", "ranger",
    "buster", "killer", "hunter", "hunter2", "summer", "winter", "spring", "autumn", "flower", "cheese",
    "pepper", "ginger", "banana", "orange", "tigger", "maggie", "loveme", "lovely", "ninja", "azerty",
    "bioevidence", "evidence", "review", "reviewer", "curator", "science", "research", "laboratory",
    "biology", "genome", "protein", "pubmed", "civic",
)
_LEET = str.maketrans({"@": "a", "4": "a", "0": "o", "1": "i", "3": "e", "$": "s", "5": "s", "7": "t",
                       "+": "t", "8": "b", "9": "g"})
_AROUND = re.compile(r"^[\W\d_]+|[\W\d_]+$")  # digits and punctuation around a word
_SYMBOLS = re.compile(r"^[\W_]+|[\W_]+$")  # punctuation around digits
_TRAILING = re.compile(r"[\W\d_]+$")  # what follows a word (p@ssw0rd-2024)
_LEADING = re.compile(r"^[\W\d_]+")
_NOT_LETTERS = re.compile(r"[\W\d_]+")  # the letters alone (1qaz2wsx, dana2026dana)
_LETTER = re.compile(r"[^\W\d_]")
_SEQUENCES = ("0123456789", "abcdefghijklmnopqrstuvwxyz", "qwertyuiopasdfghjklzxcvbnm", "qwertyuiop", "asdfghjkl",
              "zxcvbnm", "1234567890")


MIGRATION = (
    """
    CREATE TABLE account_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        event TEXT NOT NULL CHECK (event IN ('add', 'disable', 'enable', 'password')),
        role TEXT CHECK (role IS NULL OR role IN ('reviewer', 'admin')),
        reviewer_id TEXT,
        full_name TEXT,
        password_hash TEXT,
        at TEXT NOT NULL
    );
    CREATE INDEX account_events_by_name ON account_events(name, id);
    CREATE TABLE decision_requests (
        request_id TEXT NOT NULL PRIMARY KEY,
        decision_id INTEGER NOT NULL REFERENCES decisions(id),
        entry_id INTEGER NOT NULL REFERENCES entries(id),
        account TEXT NOT NULL
    );
    CREATE TABLE web_sessions (
        token_hmac TEXT NOT NULL PRIMARY KEY,
        account TEXT NOT NULL,
        csrf TEXT NOT NULL,
        created_at REAL NOT NULL,
        seen_at REAL NOT NULL
    );
    CREATE TABLE web_login_attempts (
        at REAL NOT NULL,
        name TEXT NOT NULL,
        client TEXT NOT NULL,
        ok INTEGER NOT NULL
    );
    CREATE INDEX web_login_attempts_by_time ON web_login_attempts(at);
    """
    + append_only("account_events", "id = NEW.id")
    + append_only("decision_requests", "request_id = NEW.request_id")
)
TRIGGERS = tuple(f"{table}_append_only_{what}" for table in ("account_events", "decision_requests")
                 for what in ("update", "delete", "replace"))


def _argon2() -> Any:
    try:
        from argon2 import PasswordHasher
    except ImportError as exc:
        from ..extras import MissingExtraError

        raise MissingExtraError("argon2", "web", what="accounts need argon2-cffi, which") from exc
    return PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


def hash_password(password: str, *, name: str | None = None, full_name: str | None = None) -> str:
    """An argon2id hash of ``password`` (see module docstring for the parameters), once it passes the policy."""
    check_password(password, name=name, full_name=full_name)
    return str(_argon2().hash(password))


def verify_password(stored: str, password: str) -> bool:
    """Whether ``password`` matches ``stored`` (constant-time inside argon2); never raises on a mismatch."""
    from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

    if not password or len(password) > MAX_PASSWORD:
        return False
    try:
        return bool(_argon2().verify(stored, password))
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


#: A hash checked when the account does not exist, so that an unknown name costs as long as a wrong password.
_DUMMY: list[str] = []


def burn_time(password: str) -> None:
    if not _DUMMY:
        _DUMMY.append(str(_argon2().hash("not a password of anyone here")))
    verify_password(_DUMMY[0], password or "x")


def _period(text: str) -> int:
    """The length of the shortest unit ``text`` is a repetition of (``len(text)`` when none)."""
    return (text + text).find(text, 1)


def _repeats(text: str, words: set[str]) -> bool:
    """Whether ``text`` is one of ``words`` or one of them said several times."""
    if not text:
        return False
    period = _period(text)
    return any(text[:k] in words for k in range(period, len(text) + 1, period) if len(text) % k == 0)


def _forms(password: str) -> set[str]:
    """The password as a guesser writes it: lower-case, without spaces, without the digits and punctuation
    around it, its letters alone, with letter-for-digit swaps undone."""
    compact = "".join(password.lower().split())
    forms = {compact, _AROUND.sub("", compact), _SYMBOLS.sub("", compact), _NOT_LETTERS.sub("", compact),
             _TRAILING.sub("", compact), _LEADING.sub("", compact)}
    forms |= {f.translate(_LEET) for f in forms}
    forms |= {_AROUND.sub("", f) for f in forms}
    return {f for f in forms if f}


def _dressed(text: str, words: set[str]) -> bool:
    """Whether ``text`` is one of ``words`` with only digits and punctuation around it (``2024 1q2w3e4r!``)."""
    for word in words:
        at = text.find(word)
        if at >= 0 and not _LETTER.search(text[:at]) and not _LETTER.search(text[at + len(word):]):
            return True
    return False


def _sequence(text: str) -> bool:
    for alphabet in _SEQUENCES:
        for run in (alphabet, alphabet[::-1]):
            if text in run * (len(text) // len(run) + 2):
                return True
    return False


def check_password(password: str, *, name: str | None = None, full_name: str | None = None) -> None:
    """Refuse a password anyone would guess (module docstring): one line naming the rule."""
    if not password.strip():
        raise ConfigurationError("a password cannot be blank or only spaces")
    if len(password) > MAX_PASSWORD:
        raise ConfigurationError(f"a password has at most {MAX_PASSWORD} characters")
    compact = "".join(password.lower().split())
    if _period(compact) <= 4 and _period(compact) < len(compact):
        raise ConfigurationError("a password cannot be one character or a short pattern repeated "
                                 "(like aaaaaaaaaaaa)")
    if _sequence(compact):
        raise ConfigurationError("a password cannot be a simple sequence (like 123456789012 or abcdefghijkl)")
    forms = _forms(password)
    if any(_repeats(f, _COMMON) for f in forms) or _dressed(compact, _COMMON):
        raise ConfigurationError("a password cannot be a common password, even with digits or symbols around it "
                                 "(the built-in blocklist of common passwords)")
    own = {"".join(n.lower().split()) for n in (name, full_name) if n and n.strip()}
    own |= {_AROUND.sub("", re.sub(r"[\W_]+", "", n)) for n in own}
    if any(_repeats(f, own) for f in forms):
        raise ConfigurationError("a password cannot be the account's own name")
    if len(password) < MIN_PASSWORD:
        raise ConfigurationError(f"a password needs at least {MIN_PASSWORD} characters")


_COMMON = set(COMMON_PASSWORDS)


def login_failures(db: sqlite3.Connection, name: str, now: float) -> tuple[int, float | None]:
    """The failed sign-ins of ``name`` since its last success or ``users unlock`` (in the last
    :data:`FAILURES_KEPT` seconds), and when the latest was."""
    rows = db.execute("SELECT ok, at FROM web_login_attempts WHERE name = ? AND at > ? ORDER BY at DESC, rowid DESC"
                      " LIMIT 1000", (name[:64], now - FAILURES_KEPT))
    count, latest = 0, None
    for ok, at in rows:
        if ok:
            break
        count += 1
        latest = at if latest is None else latest
    return count, latest


def index_login_attempts(db: sqlite3.Connection) -> None:
    """An index for :func:`login_failures` (``web_login_attempts`` is a working table, not history)."""
    db.execute("CREATE INDEX IF NOT EXISTS web_login_attempts_by_name ON web_login_attempts(name, at)")


def check_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise ConfigurationError(f"account name {name!r} must be 1-64 lower-case letters, digits, '.', '_' or '-', "
                                 "starting with a letter or digit")
    return name


@dataclass(frozen=True, slots=True)
class Account:
    """An account's state now: the fold of its events."""

    name: str
    role: str
    reviewer_id: str
    full_name: str | None
    enabled: bool
    password_hash: str
    created_at: str
    changed_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "reviewer_id": self.reviewer_id, "full_name": self.full_name,
                "enabled": self.enabled, "created_at": self.created_at, "changed_at": self.changed_at}


def _fold(rows: list[sqlite3.Row]) -> Account | None:
    account: Account | None = None
    for row in rows:
        if row["event"] == "add":
            account = Account(row["name"], row["role"], row["reviewer_id"], row["full_name"], True,
                              row["password_hash"], row["at"], row["at"])
        elif account is not None:
            enabled = {"disable": False, "enable": True}.get(row["event"], account.enabled)
            password = row["password_hash"] if row["event"] == "password" else account.password_hash
            account = Account(account.name, account.role, account.reviewer_id, account.full_name, enabled,
                              password, account.created_at, row["at"])
    return account


class Accounts:
    """Accounts over an open queue connection (``ReviewQueue.db``); writes are one transaction each."""

    def __init__(self, db: sqlite3.Connection, clock: Callable[[], str]) -> None:
        self.db = db
        self.clock = clock

    def get(self, name: str) -> Account | None:
        cursor = self.db.cursor()
        cursor.row_factory = sqlite3.Row
        rows = cursor.execute("SELECT * FROM account_events WHERE name = ? ORDER BY id", (name,)).fetchall()
        if not account_ledger.trusted(self.db, rows):
            return None  # an event not chained as written (an INSERT outside bioevidence): no such account
        return _fold(rows)

    def list(self) -> list[Account]:
        names = [r[0] for r in self.db.execute("SELECT DISTINCT name FROM account_events ORDER BY name")]
        return [a for a in (self.get(n) for n in names) if a is not None]

    def _append(self, name: str, event: str, *, role: str | None = None, reviewer_id: str | None = None,
                full_name: str | None = None, password_hash: str | None = None,
                must: Callable[[Account | None], None]) -> Account:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            must(self.get(name))
            cursor = self.db.execute("INSERT INTO account_events (name, event, role, reviewer_id, full_name, "
                                     "password_hash, at) VALUES (?,?,?,?,?,?,?)",
                                     (name, event, role, reviewer_id, full_name, password_hash, self.clock()))
            account_ledger.append(self.db, int(cursor.lastrowid or 0))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        account = self.get(name)
        assert account is not None
        return account

    def add(self, name: str, *, role: str, password: str, reviewer_id: str | None = None,
            full_name: str | None = None) -> Account:
        """A new account; its name is never reused, even after it is disabled."""
        check_name(name)
        if role not in ROLES:
            raise ConfigurationError(f"role {role!r} must be one of {', '.join(ROLES)}")
        reviewer = (reviewer_id or f"bioevidence-user:{name}").strip()
        if not reviewer or len(reviewer) > 200 or any(c.isspace() for c in reviewer):
            raise ConfigurationError("--reviewer-id must be one word of at most 200 characters (e.g. orcid:…)")
        if full_name is not None and (not full_name.strip() or len(full_name) > 200):
            raise ConfigurationError("--full-name must be 1-200 characters")
        digest = hash_password(password, name=name, full_name=full_name)

        def must(current: Account | None) -> None:
            if current is not None:
                raise ConfigurationError(f"account {name!r} exists (names are never reused); choose another name")

        return self._append(name, "add", role=role, reviewer_id=reviewer, full_name=full_name,
                            password_hash=digest, must=must)

    def _existing(self, name: str) -> Callable[[Account | None], None]:
        def must(current: Account | None) -> None:
            if current is None:
                raise InputError(f"no account {name!r}; see `bioevidence users list`")
        return must

    def disable(self, name: str) -> Account:
        """Disable an account: its sessions stop working at once (checked on every request)."""
        account = self._append(name, "disable", must=self._existing(name))
        self.db.execute("DELETE FROM web_sessions WHERE account = ?", (name,))
        return account

    def enable(self, name: str) -> Account:
        return self._append(name, "enable", must=self._existing(name))

    def set_password(self, name: str, password: str) -> Account:
        current = self.get(name)
        self._existing(name)(current)
        digest = hash_password(password, name=name, full_name=current.full_name if current else None)
        account = self._append(name, "password", password_hash=digest, must=self._existing(name))
        self.db.execute("DELETE FROM web_sessions WHERE account = ?", (name,))
        return account

    def unlock(self, name: str) -> int:
        """End ``name``'s run of failed sign-ins (its backoff, :mod:`bioevidence.web.sessions`); returns how many
        failures it had. Kept as a row of ``web_login_attempts``, as a successful sign-in is."""
        self._existing(name)(self.get(name))
        index_login_attempts(self.db)
        now = time.time()
        failures, _ = login_failures(self.db, name, now)
        self.db.execute("INSERT INTO web_login_attempts (at, name, client, ok) VALUES (?,?,?,1)",
                        (now, name, UNLOCK_CLIENT))
        return failures
