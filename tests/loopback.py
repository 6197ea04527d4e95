"""A real HTTP server on 127.0.0.1 for tests: replays recorded responses and injects faults.

The test double for every remote service (Europe PMC, NCBI, Crossref, model servers): clients
run unchanged over real sockets against it. Usage::

    with LoopbackServer() as server:
        server.route("/esummary.fcgi", path_to_file, query={"id": "15696205"},
                     content_type="application/json")
        server.fail("/esummary.fcgi", Fault.status(503), Fault.status(429, retry_after="0"))
        client_base_url = server.url

* ``route(path, body, query=..., content_type=...)``: ``body`` is bytes, a file path, or a
  callable ``(query: dict[str, str]) -> Reply | bytes | None`` (None = 404). A route matches
  when the path is equal and every ``query`` item is present in the request (the most
  specific matching route wins).
* ``fail(path, *faults, query=...)``: the next requests to matching routes consume the faults
  in order, then the route answers normally. Faults: ``status`` (with optional
  ``Retry-After``), ``slow`` (sleep before answering), ``reset`` (close the socket without a
  reply), ``truncate`` (declare the full length, send fewer bytes, close), ``content_type``,
  ``body`` (replace the body, e.g. malformed JSON), ``oversize`` (pad the body), ``drip``
  (send the response one byte every ``seconds``, from the status line or after the headers:
  a server that never stalls long enough for a read timeout, yet never finishes).
* A handler may return ``Reply(headers={"Transfer-Encoding": "chunked"})`` to stream the body
  without a ``Content-Length``.
* ``latency``: seconds added to every request (benchmarks).
* ``log``: every request as ``(path, query)``, ``headers`` their headers (lower-case names);
  ``hits(path)`` counts them.
* :class:`RecordingSleep`: an injectable ``sleep`` that records requested waits and sleeps
  only a few milliseconds, so backoff runs fast in tests.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

__all__ = ["Fault", "LoopbackServer", "RecordingSleep", "Reply"]


class RecordingSleep:
    """Records requested waits and sleeps a tiny fraction of each (fast, still real)."""

    def __init__(self, cap: float = 0.005) -> None:
        self.waits: list[float] = []
        self.cap = cap

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        time.sleep(min(seconds, self.cap))


@dataclass(frozen=True)
class Reply:
    """One response: status, body and headers."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/octet-stream"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Fault:
    """One injected fault (see module docstring); build with the class methods."""

    kind: str
    status: int = 200
    seconds: float = 0.0
    keep: int = 0
    value: str = ""
    body: bytes = b""
    retry_after: str | None = None

    @classmethod
    def http(cls, status: int, retry_after: str | None = None, body: bytes = b"") -> Fault:
        return cls("status", status=status, retry_after=retry_after, body=body)

    @classmethod
    def slow(cls, seconds: float) -> Fault:
        return cls("slow", seconds=seconds)

    @classmethod
    def reset(cls) -> Fault:
        return cls("reset")

    @classmethod
    def truncate(cls, keep: int) -> Fault:
        return cls("truncate", keep=keep)

    @classmethod
    def wrong_type(cls, content_type: str = "text/html") -> Fault:
        return cls("content_type", value=content_type)

    @classmethod
    def replace_body(cls, body: bytes) -> Fault:
        return cls("body", body=body)

    @classmethod
    def oversize(cls, extra: int) -> Fault:
        return cls("oversize", keep=extra)

    @classmethod
    def drip(cls, seconds: float, *, headers: bool = False) -> Fault:
        """One byte every ``seconds``: of the whole response (``headers=True``) or of the body only."""
        return cls("drip", seconds=seconds, value="headers" if headers else "body")


Handler = Callable[[dict[str, str]], "Reply | bytes | None"]


class _QuietServer(ThreadingHTTPServer):
    """Injected resets make the handler fail on a closed socket; that is expected, not news."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


@dataclass
class _Route:
    path: str
    query: dict[str, str]
    handler: Handler
    content_type: str
    faults: list[Fault] = field(default_factory=list)


class LoopbackServer:
    """A threaded HTTP/1.1 server on an ephemeral 127.0.0.1 port (see module docstring)."""

    def __init__(self, *, latency: float = 0.0) -> None:
        self.latency = latency
        self._routes: list[_Route] = []
        self._lock = threading.Lock()
        self.log: list[tuple[str, dict[str, str]]] = []
        self.headers: list[dict[str, str]] = []
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True

    # -- lifecycle ------------------------------------------------------------------------
    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- configuration --------------------------------------------------------------------
    def route(
        self,
        path: str,
        body: bytes | Path | Handler,
        *,
        query: dict[str, str] | None = None,
        content_type: str = "application/octet-stream",
    ) -> None:
        if isinstance(body, Path):
            data = body.read_bytes()

            def handler(_: dict[str, str]) -> bytes:
                return data

        elif isinstance(body, bytes):
            raw = body

            def handler(_: dict[str, str]) -> bytes:
                return raw

        else:
            handler = body  # type: ignore[assignment]
        with self._lock:
            self._routes.append(_Route(path, dict(query or {}), handler, content_type))

    def fail(self, path: str, *faults: Fault, query: dict[str, str] | None = None) -> None:
        """Queue ``faults`` on the most specific route matching ``path`` and ``query``."""
        with self._lock:
            route = self._match(path, dict(query or {}))
            if route is None:
                raise LookupError(f"no route for {path} {query}")
            route.faults.extend(faults)

    def hits(self, path: str) -> int:
        with self._lock:
            return sum(1 for p, _ in self.log if p == path)

    def _match(self, path: str, query: dict[str, str]) -> _Route | None:
        best: _Route | None = None
        for route in self._routes:
            matches = route.path == path and all(query.get(k) == v for k, v in route.query.items())
            if matches and (best is None or len(route.query) > len(best.query)):
                best = route
        return best

    # -- serving --------------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_GET(self) -> None:
                server._serve(self)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                server._serve(self)

        return _Handler

    def _serve(self, request: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(request.path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        with self._lock:
            self.log.append((parts.path, query))
            self.headers.append({k.lower(): v for k, v in request.headers.items()})
            route = self._match(parts.path, query)
            fault = route.faults.pop(0) if route is not None and route.faults else None
        if self.latency:
            time.sleep(self.latency)
        if route is None:
            self._send(request, Reply(404, b'{"error": "no route"}', "application/json"))
            return
        if fault is not None and fault.kind == "reset":
            self._reset(request)
            return
        if fault is not None and fault.kind == "slow":
            time.sleep(fault.seconds)
        if fault is not None and fault.kind == "status":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            self._send(request, Reply(fault.status, fault.body, "text/plain", headers))
            return
        produced = route.handler(query)
        if produced is None:
            self._send(request, Reply(404, b"not found", "text/plain"))
            return
        reply = produced if isinstance(produced, Reply) else Reply(200, produced, route.content_type)
        if fault is not None and fault.kind == "content_type":
            reply = Reply(reply.status, reply.body, fault.value, reply.headers)
        elif fault is not None and fault.kind == "body":
            reply = Reply(reply.status, fault.body, reply.content_type, reply.headers)
        elif fault is not None and fault.kind == "oversize":
            reply = Reply(reply.status, reply.body + b" " * fault.keep, reply.content_type, reply.headers)
        elif fault is not None and fault.kind == "truncate":
            self._send(request, reply, keep=fault.keep)
            return
        elif fault is not None and fault.kind == "drip":
            self._drip(request, reply, fault)
            return
        self._send(request, reply)

    @staticmethod
    def _drip(request: BaseHTTPRequestHandler, reply: Reply, fault: Fault) -> None:
        """Write the response a byte at a time until it is sent or the client hangs up (at most a minute)."""
        head = (f"HTTP/1.1 {reply.status} OK\r\nContent-Type: {reply.content_type}\r\n"
                f"Content-Length: {len(reply.body)}\r\nConnection: close\r\n\r\n").encode()
        request.close_connection = True
        stop = time.monotonic() + 60
        try:
            if fault.value != "headers":
                request.wfile.write(head)
                request.wfile.flush()
                head = b""
            for byte in head + reply.body:
                if time.monotonic() > stop:
                    break
                request.wfile.write(bytes([byte]))
                request.wfile.flush()
                time.sleep(fault.seconds)
        except OSError:
            pass  # the client gave up: that is the point

    @staticmethod
    def _send(request: BaseHTTPRequestHandler, reply: Reply, keep: int | None = None) -> None:
        try:
            request.send_response(reply.status)
            request.send_header("Content-Type", reply.content_type)
            chunked = reply.headers.get("Transfer-Encoding") == "chunked"
            if not chunked:
                request.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers.items():
                request.send_header(name, value)
            if keep is not None:
                request.send_header("Connection", "close")
            request.end_headers()
            body = reply.body if keep is None else reply.body[:keep]
            if chunked:
                for start in range(0, len(body), 1024):
                    piece = body[start : start + 1024]
                    request.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                request.wfile.write(b"0\r\n\r\n")
            else:
                request.wfile.write(body)
            request.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        if keep is not None:
            request.close_connection = True
            with contextlib.suppress(OSError):
                request.connection.shutdown(socket.SHUT_WR)

    @staticmethod
    def _reset(request: BaseHTTPRequestHandler) -> None:
        """Close the socket abruptly (RST), so the client sees a connection reset."""
        request.close_connection = True
        sock = request.connection
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
        except OSError:
            pass
