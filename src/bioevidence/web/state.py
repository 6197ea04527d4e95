"""What the server holds while it runs: settings, one queue connection per thread, the listing,
the validators (one per profile, shared, each behind a lock), the session store and the sign-in
attempts in flight."""

from __future__ import annotations

import asyncio
import threading
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
from .watch import LedgerWatch

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
    #: seconds between looks for another connection's writes; after one, the whole ledger is checked
    #: again off the request path (:mod:`bioevidence.web.watch`)
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
        self.watch = LedgerWatch(settings.queue, settings.reverify_every)

    def queue(self) -> ReviewQueue:
        """This thread's connection. The ledger was verified at start and is verified again after other
        connections write the file (:mod:`bioevidence.web.watch`, off the request path); a queue altered
        outside bioevidence stops every page (503, naming the problem) instead of showing the altered
        decision."""
        from fastapi import HTTPException

        altered = self.watch.altered
        if altered is not None:
            raise HTTPException(503, f"the review queue was altered outside bioevidence ({altered}); stop "
                                     "the server and run `bioevidence review verify`, then restore it from a backup")
        queue = getattr(self._local, "queue", None)
        if queue is None:
            queue = self._local.queue = ReviewQueue(self.settings.queue, verify=False)
        return queue

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
