"""The live HTTP transport: httpx over a network backend that enforces a total deadline.

httpx's timeouts bound each socket operation, not a request: a server that sends one byte
every two seconds (in the headers or the body) never trips a 30 s read timeout and keeps a
client busy forever. Here every connect, read and write of the socket is given at most the
time left before the calling thread's deadline (set by :func:`deadline` around a request), so
a dripping server is cut off when the deadline passes, whatever phase it is in.

The backend wraps httpcore's public ``NetworkBackend``/``NetworkStream`` interface; it is
installed in the connection pool of each ``httpx.HTTPTransport`` built by :func:`transports`,
which also honours the usual proxy variables (``HTTP(S)_PROXY``, ``ALL_PROXY``, ``NO_PROXY``)
as httpx does when it builds its own transports. DNS resolution is not bounded by it (the
system resolver has its own timeouts).
"""

from __future__ import annotations

import contextlib
import ipaddress
import threading
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import httpx

__all__ = ["deadline", "transports"]

_STATE = threading.local()  # per thread: .at (clock value) and .clock


@contextlib.contextmanager
def deadline(at: float, clock: Callable[[], float]) -> Iterator[None]:
    """Within this block, socket operations of this thread end by ``clock() == at``."""
    previous = getattr(_STATE, "at", None), getattr(_STATE, "clock", None)
    _STATE.at, _STATE.clock = at, clock
    try:
        yield
    finally:
        _STATE.at, _STATE.clock = previous


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    at, clock = getattr(_STATE, "at", None), getattr(_STATE, "clock", None)
    if at is None or clock is None:
        return timeout
    left = at - clock()
    if left <= 0:
        raise error("the request deadline passed")
    return left if timeout is None else min(timeout, left)


def _backend(inner: Any) -> Any:
    """A ``NetworkBackend`` whose streams clamp every timeout to the deadline."""
    import httpcore

    class Stream(httpcore.NetworkStream):
        def __init__(self, stream: Any) -> None:
            self._stream = stream

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return bytes(self._stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout)))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

        def close(self) -> None:
            self._stream.close()

        def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                      timeout: float | None = None) -> Any:
            return Stream(self._stream.start_tls(ssl_context, server_hostname,
                                                 _left(timeout, httpcore.ConnectTimeout)))

        def get_extra_info(self, info: str) -> Any:
            return self._stream.get_extra_info(info)

    class Backend(httpcore.NetworkBackend):
        def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                        socket_options: Iterable[Any] | None = None) -> Any:
            return Stream(inner.connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout), local_address,
                                            socket_options))

        def connect_unix_socket(self, path: str, timeout: float | None = None,
                                socket_options: Iterable[Any] | None = None) -> Any:
            return Stream(inner.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout), socket_options))

        def sleep(self, seconds: float) -> None:
            inner.sleep(seconds)

    return Backend()


def _armed(transport: httpx.HTTPTransport) -> httpx.HTTPTransport:
    pool = getattr(transport, "_pool", None)
    inner = getattr(pool, "_network_backend", None)
    if inner is None:  # pragma: no cover - guarded by tests/security/test_http_deadline.py
        raise RuntimeError("httpx/httpcore changed: cannot install the deadline backend")
    pool._network_backend = _backend(inner)  # type: ignore[union-attr]
    transport.deadline_armed = True  # type: ignore[attr-defined]
    return transport


def transports(limits: httpx.Limits,
               environ: dict[str, str] | None = None) -> tuple[httpx.HTTPTransport, dict[str, Any]]:
    """The default transport and the proxy mounts (``httpx.Client(transport=…, mounts=…)``), all armed."""
    import httpx

    proxies = {k.lower(): v for k, v in (urllib.request.getproxies() if environ is None else environ).items()}
    mounts: dict[str, Any] = {}
    for scheme, key in (("all", "all"), ("http", "http"), ("https", "https")):
        url = proxies.get(key)
        if url:
            if "://" not in url:
                url = f"http://{url}"
            mounts[f"{scheme}://"] = _armed(httpx.HTTPTransport(proxy=url, limits=limits))
    for host in (proxies.get("no") or "").split(","):
        host = host.strip()
        if host == "*":
            mounts = {}
            break
        if not host:
            continue
        if "://" in host:
            mounts[host] = None
            continue
        try:
            ip = ipaddress.ip_address(host)
            mounts[f"all://[{host}]" if ip.version == 6 else f"all://{host}"] = None
        except ValueError:
            mounts[f"all://{host}" if host.lower() == "localhost" else f"all://*{host}"] = None
    return _armed(httpx.HTTPTransport(limits=limits)), mounts
