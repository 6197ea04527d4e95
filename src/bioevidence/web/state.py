"""What the server holds while it runs: settings, one queue connection per thread, the listing,
the validators (one per profile, shared, each behind a lock), the session store and the sign-in
attempts in flight."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..loop.accounts import index_login_attempts
from ..loop.listing import QueueListing
from ..loop.queue import Entry, ReviewQueue
from .redact import add_roots
from .sessions import InFlight, Limits, Sessions

__all__ = ["Settings", "WebState"]


@dataclass(frozen=True)
class Settings:
    """How the server runs. ``allowed_hosts`` are the ``Host`` names it answers to (DNS rebinding)."""

    queue: Path
    secret: bytes
    allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")
    https: bool = False
    limits: Limits = field(default_factory=Limits)
    page_size: int = 50
    #: seconds between re-checks of the whole ledger after another connection wrote the file
    reverify_every: float = 2.0
    max_body: int = 10 * 1024 * 1024
    max_upload: int = 5 * 1024 * 1024


class LockedValidator:
    """A validator shared by the server's threads: one record at a time through it."""

    def __init__(self, validator: Any) -> None:
        self.validator = validator
        self.grounders = list(getattr(validator, "grounders", []))
        self._lock = threading.Lock()

    def validate(self, record: Any) -> Any:
        with self._lock:
            return self.validator.validate(record)


class WebState:
    """Shared by every request of one server (see module docstring)."""

    def __init__(self, settings: Settings, validator_for: Callable[[str | None], Any],
                 ask: Any = None) -> None:
        self.settings = settings
        self._validator_for = validator_for
        self._validators: dict[str | None, LockedValidator] = {}
        self._validators_lock = threading.Lock()
        self._local = threading.local()
        self.listing = QueueListing()
        self._verify_lock = threading.Lock()
        self._checked_at = time.monotonic()
        self._stale = False
        self._altered: str | None = None
        self.ask = ask
        self.in_flight = InFlight(settings.limits.in_flight)
        #: How a held sign-in waits (tests replace it to see the waits without spending them).
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        add_roots([settings.queue.parent, settings.queue.resolve().parent])
        if not settings.queue.exists():
            raise ConfigurationError(f"no review queue at {settings.queue}; create one with `bioevidence review add "
                                     "RECORDS --queue FILE` and an account with `bioevidence users add`")
        with ReviewQueue(settings.queue) as queue:  # verifies the whole ledger once: a tampered file never serves
            self.listing.refresh(queue.db)
            self.accounts_at_start = len(queue.accounts.list())
            index_login_attempts(queue.db)

    def queue(self) -> ReviewQueue:
        """This thread's connection. The ledger was verified at start; when the file changes under the
        server (``PRAGMA data_version``: another connection committed), it is verified again, at most
        once per ``reverify_every`` seconds, and a queue altered outside bioevidence stops every page
        (503, naming the problem) instead of showing the altered decision."""
        queue = getattr(self._local, "queue", None)
        if queue is None:
            queue = self._local.queue = ReviewQueue(self.settings.queue, verify=False)
        self._check(queue)
        return queue

    def _check(self, queue: ReviewQueue) -> None:
        from fastapi import HTTPException

        version = queue.db.execute("PRAGMA data_version").fetchone()[0]
        if version != getattr(self._local, "version", None):
            self._local.version = version
            self._stale = True
        now = time.monotonic()
        if self._stale and now - self._checked_at >= self.settings.reverify_every \
                and self._verify_lock.acquire(blocking=False):
            try:
                self._stale, self._checked_at = False, now
                state = queue.verify()
                if not state.intact:
                    self._altered = state.problems[0]
            finally:
                self._verify_lock.release()
        if self._altered is not None:
            raise HTTPException(503, f"the review queue was altered outside bioevidence ({self._altered}); stop "
                                     "the server and run `bioevidence review verify`, then restore it from a backup")

    def sessions(self) -> Sessions:
        queue = self.queue()
        return Sessions(queue.db, self.settings.secret, queue.accounts, limits=self.settings.limits)

    def fresh_listing(self) -> QueueListing:
        self.listing.refresh(self.queue().db)
        return self.listing

    def profile_of(self, entry: Entry) -> str | None:
        chosen = entry.profile or entry.record.get("profile_id")
        return chosen if isinstance(chosen, str) else None

    def validator(self, profile: str | None) -> LockedValidator:
        with self._validators_lock:
            found = self._validators.get(profile)
            if found is None:
                found = self._validators[profile] = LockedValidator(self._validator_for(profile))
            return found
