"""The one HTTP layer of bioevidence (httpx): retries, rate limits, size caps, a response cache.

* Timeouts: separate connect and read timeouts (:class:`HttpConfig`), and a total
  ``deadline`` per request (default 120 s, ``BIOEVIDENCE_HTTP_DEADLINE``) covering every
  attempt, read and backoff wait: the live transport (:mod:`.transport`) gives each socket
  operation at most the time left, so a server that drips one byte every two seconds is cut
  off when the deadline passes, not kept forever.
* Retries: 429, 5xx and connection errors (reset, refused, timeout, truncated body) are
  retried with exponential backoff and jitter, honouring ``Retry-After`` (seconds or an HTTP
  date), up to ``max_attempts``; anything else fails at once with one :class:`RetrievalError`.
  A ``Retry-After`` beyond ``retry_after_max``, or a wait that would pass the deadline, ends
  the retries at once; the message says what happened and how many attempts were made.
* Per-service politeness: a rate (requests/s) and a concurrency cap per service
  (NCBI 3/s, 10/s with ``NCBI_API_KEY``; Europe PMC and Crossref a few requests at a time).
* A maximum download size, checked against ``Content-Length`` and while streaming.
* Content-type checks against what the caller expects.
* An on-disk cache keyed by method + URL + sorted parameters. Only complete 200 responses that
  passed the size, type and caller's ``validate`` checks are stored (one atomic file each), so
  a failed or truncated response is never served from it.
* httpx errors are translated into :class:`RetrievalError` in :func:`translate_error` only.

Clock, sleep and randomness are injectable so tests run backoff in milliseconds.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from ..errors import InputError, RetrievalError
from ..io import atomic_write_bytes
from .http_config import (  # noqa: F401 - re-exported: `from bioevidence.sources.http import HttpConfig`
    DEFAULT_URLS,
    ENV_URLS,
    HostLimit,
    HttpConfig,
    default_limits,
)

if TYPE_CHECKING:  # pragma: no cover
    import httpx

__all__ = ["HostLimit", "HttpClient", "HttpConfig", "HttpResponse", "translate_error"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class HttpResponse:
    """A complete, checked response."""

    url: str
    status: int
    content_type: str
    content: bytes
    from_cache: bool = False
    attempts: int = 1


def translate_error(exc: Exception, url: str) -> RetrievalError:
    """Map an httpx exception to one ``RetrievalError`` (the only place httpx errors are read)."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        kind = "connect" if isinstance(exc, httpx.ConnectTimeout) else "read"
        return RetrievalError(
            f"{kind} timeout talking to {_host(url)}; the service is slow: retry later or raise the timeout",
            url=url,
            retryable=True,
            reason="timeout",
        )
    if isinstance(exc, httpx.RemoteProtocolError):
        return RetrievalError(
            f"{_host(url)} closed the connection mid-response (truncated body: {exc}); retry later",
            url=url,
            retryable=True,
            reason="truncated",
        )
    if isinstance(exc, httpx.NetworkError):
        return RetrievalError(
            f"network error talking to {_host(url)} ({type(exc).__name__}: {exc}); "
            "check the connection or the base URL",
            url=url,
            retryable=True,
            reason="connection",
        )
    if isinstance(exc, httpx.TooManyRedirects):
        return RetrievalError(f"too many redirects from {url}", url=url, reason="redirects")
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return RetrievalError(f"invalid URL {url!r}: {exc}; fix the base URL setting", url=url, reason="url")
    if isinstance(exc, httpx.HTTPError):
        return RetrievalError(f"HTTP error for {url}: {exc}", url=url, retryable=True, reason="http")
    return RetrievalError(f"unexpected error for {url}: {exc}", url=url, reason="unexpected")


def _same_host_redirect(response: Any) -> None:
    """A redirect to another origin than the one asked is refused (a forged answer from elsewhere never
    reaches a catalogue); ``http`` to ``https`` on the same host and default ports is followed."""
    if not response.has_redirect_location:
        return
    asked = response.request.url
    target = asked.join(response.headers["location"])
    upgrade = asked.scheme == "http" and target.scheme == "https" and asked.port is None and target.port is None
    if target.host != asked.host or ((target.scheme, target.port) != (asked.scheme, asked.port) and not upgrade):
        raise RetrievalError(f"{asked.host} redirected to another host ({target.host or target}); refused: answers "
                             "are taken only from the service asked (check the base URL)",
                             url=str(asked), status=response.status_code, reason="redirect_host")


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


def _attempts(count: int) -> str:
    return f"{count} attempt" if count == 1 else f"{count} attempts"


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - now)


class _Politeness:
    """Per-service rate limiter and concurrency cap (thread-safe)."""

    def __init__(self, limit: HostLimit, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
        self.limit = limit
        self.semaphore = threading.BoundedSemaphore(max(1, limit.concurrency))
        self._lock = threading.Lock()
        self._next = 0.0
        self._clock = clock
        self._sleep = sleep

    def wait_turn(self) -> None:
        if not self.limit.rate:
            return
        interval = 1.0 / self.limit.rate
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + interval
        if slot > now:
            self._sleep(slot - now)


class ResponseCache:
    """On-disk cache of complete responses: one atomic file per key (a JSON header line, then bytes)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @staticmethod
    def key(method: str, url: str, params: Mapping[str, Any] | None) -> str:
        query = urlencode(sorted((str(k), str(v)) for k, v in (params or {}).items()))
        return hashlib.sha256(f"{method.upper()} {url}?{query}".encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.resp"

    def get(self, key: str) -> HttpResponse | None:
        path = self._path(key)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        head, sep, body = raw.partition(b"\n")
        try:
            meta = json.loads(head)
        except ValueError:
            return None
        if not sep or meta.get("sha256") != hashlib.sha256(body).hexdigest() or meta.get("status") != 200:
            return None  # damaged entries are ignored (and overwritten by the next success)
        return HttpResponse(meta["url"], 200, meta.get("content_type", ""), body, from_cache=True)

    def put(self, key: str, response: HttpResponse) -> None:
        meta = {
            "url": response.url,
            "status": response.status,
            "content_type": response.content_type,
            "sha256": hashlib.sha256(response.content).hexdigest(),
        }
        atomic_write_bytes(self._path(key), json.dumps(meta).encode() + b"\n" + response.content)


class HttpClient:
    """A thread-safe HTTP client with the behaviour described in the module docstring."""

    def __init__(
        self,
        config: HttpConfig | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        rng: Callable[[], float] = random.random,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        import httpx

        self.config = config or HttpConfig.from_env()
        self._clock, self._sleep, self._rng, self._wall = clock, sleep, rng, wall_clock
        self._polite: dict[str, _Politeness] = {}
        self._polite_lock = threading.Lock()
        self.cache = ResponseCache(self.config.cache_dir) if self.config.cache_dir else None
        pool = sum(self.config.limit(s).concurrency for s in ("eutils", "europepmc", "crossref", "default"))
        limits = httpx.Limits(max_connections=pool, max_keepalive_connections=pool)
        mounts: dict[str, Any] = {}
        if transport is None:  # the live transport: socket operations bounded by the request deadline
            from .transport import transports

            transport, mounts = transports(limits)
        self._client = httpx.Client(
            transport=transport,
            mounts=mounts or None,
            timeout=httpx.Timeout(self.config.read_timeout, connect=self.config.connect_timeout),
            headers={"User-Agent": self.config.user_agent},
            follow_redirects=True,
            limits=limits,
            event_hooks={"response": [] if self.config.cross_host_redirects else [_same_host_redirect]},
        )
        self.requests_sent = 0

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def _politeness(self, service: str) -> _Politeness:
        with self._polite_lock:
            if service not in self._polite:
                self._polite[service] = _Politeness(self.config.limit(service), self._clock, self._sleep)
            return self._polite[service]

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1``: exponential with jitter, or ``Retry-After``."""
        base = min(self.config.backoff_max, self.config.backoff_base * (2 ** (attempt - 1)))
        jittered = base / 2 + self._rng() * base / 2
        if retry_after is not None:
            return max(retry_after, jittered if retry_after == 0 else 0.0)
        return jittered

    def get(
        self,
        url: str,
        params: Mapping[str, Any] | None = None,
        *,
        service: str = "default",
        accept: tuple[str, ...] = (),
        validate: Callable[[bytes], object] | None = None,
        use_cache: bool = True,
        max_bytes: int | None = None,
    ) -> HttpResponse:
        """GET ``url`` with retries; return a complete 200 response or raise one ``RetrievalError``.

        ``accept`` lists acceptable content types (prefix match, e.g. ``"application/json"``);
        ``validate`` parses the body and raises ``InputError`` when it is malformed (then the
        response is neither cached nor retried); ``use_cache=False`` skips reading the cache
        (``--refresh``) but still stores the fresh response.
        """
        params = dict(params or {})
        key = ResponseCache.key("GET", url, params) if self.cache else ""
        if self.cache and use_cache:
            cached = self.cache.get(key)
            if cached is not None:
                return cached
        limit = max_bytes or self.config.max_bytes
        polite = self._politeness(service)
        at = self._clock() + self.config.deadline
        last: RetrievalError | None = None
        for attempt in range(1, self.config.max_attempts + 1):
            retry_after: float | None = None
            try:
                with polite.semaphore:
                    polite.wait_turn()
                    self.requests_sent += 1
                    response = self._fetch(url, params, accept, limit, at)
            except RetrievalError as exc:
                if exc.context.get("reason") == "deadline":
                    raise self._gave_up(exc, attempt, f"no complete answer within the {self.config.deadline:g} s "
                                                      "deadline (raise BIOEVIDENCE_HTTP_DEADLINE or --http-deadline "
                                                      "if the service is just slow)") from exc
                if not exc.retryable:
                    raise
                last = exc
                retry_after = exc.context.get("retry_after_seconds")
            else:
                response = replace(response, attempts=attempt)
                if validate is not None:
                    try:
                        validate(response.content)
                    except InputError as exc:
                        raise RetrievalError(
                            f"{_host(url)} sent a malformed body ({exc.message}); "
                            "the service may be degraded: retry later",
                            url=response.url,
                            status=response.status,
                            reason="malformed",
                        ) from exc
                if self.cache:
                    self.cache.put(key, response)
                return response
            if attempt < self.config.max_attempts:
                if retry_after is not None and retry_after > self.config.retry_after_max:
                    raise self._gave_up(last, attempt, f"it asked to retry after {retry_after:.0f} s, beyond the "
                                                       f"{self.config.retry_after_max:g} s this client waits "
                                                       "(retry_after_max)")
                wait = self.backoff(attempt, retry_after)
                if self._clock() + wait >= at:
                    raise self._gave_up(last, attempt, f"the next try (in {wait:.1f} s) would pass the "
                                                       f"{self.config.deadline:g} s deadline")
                self._sleep(wait)
        assert last is not None
        raise self._gave_up(last, self.config.max_attempts, None)

    @staticmethod
    def _gave_up(last: RetrievalError, attempts: int, why: str | None) -> RetrievalError:
        """The one error of a request that will not be tried again, saying how many attempts were made."""
        because = f"; {why}" if why else ""
        return RetrievalError(
            f"{last.message}{because} (gave up after {_attempts(attempts)})",
            url=last.url,
            status=last.status,
            retryable=True,
            reason=last.context.get("reason"),
            attempts=attempts,
        )

    def _fetch(self, url: str, params: Mapping[str, Any], accept: tuple[str, ...], limit: int,
               at: float) -> HttpResponse:
        import httpx

        from .transport import deadline

        try:
            with deadline(at, self._clock), self._client.stream("GET", url, params=params) as response:
                final_url = str(response.url)
                status = response.status_code
                ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if status in RETRY_STATUSES:
                    raise RetrievalError(
                        f"{_host(url)} answered {status}; retrying later may help",
                        url=final_url,
                        status=status,
                        retryable=True,
                        reason="status",
                        retry_after_seconds=parse_retry_after(response.headers.get("retry-after"), self._wall()),
                    )
                if status != 200:
                    hint = "the identifier is unknown to the service" if status == 404 else "check the request"
                    raise RetrievalError(
                        f"{_host(url)} answered {status} for {final_url}; {hint}",
                        url=final_url,
                        status=status,
                        reason="not_found" if status == 404 else "status",
                    )
                if accept and not any(ctype.startswith(a) for a in accept):
                    raise RetrievalError(
                        f"{_host(url)} sent content type {ctype or 'none'!r}, expected one of {', '.join(accept)}; "
                        "the base URL may point at a proxy or login page",
                        url=final_url,
                        status=status,
                        reason="content_type",
                    )
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > limit:
                    raise RetrievalError(
                        f"response of {declared} bytes is over the {limit} byte cap; raise max_bytes if expected",
                        url=final_url,
                        status=status,
                        reason="too_large",
                    )
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    if self._clock() >= at:  # also for transports without the deadline backend
                        raise self._deadline(final_url, size)
                    size += len(chunk)
                    if size > limit:
                        raise RetrievalError(
                            f"response grew over the {limit} byte cap; download aborted (raise max_bytes if expected)",
                            url=final_url,
                            status=status,
                            reason="too_large",
                        )
                    chunks.append(chunk)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            if isinstance(exc, httpx.TimeoutException) and self._clock() >= at - 0.05:
                raise self._deadline(url, None) from exc
            raise translate_error(exc, url) from exc
        return HttpResponse(final_url, status, ctype, b"".join(chunks))

    def _deadline(self, url: str, received: int | None) -> RetrievalError:
        got = f" after {received} bytes of the body" if received else ""
        return RetrievalError(f"{_host(url)} was still sending{got} when the request deadline passed",
                              url=url, retryable=True, reason="deadline")
