"""Helpers and fixtures for the web tests (conftest.py registers the fixtures): a real review queue of
CIViC records, real accounts made with the CLI, and the real server (``bioevidence serve --port 0``) in
a child process on 127.0.0.1.

Without the web extra these tests skip with the command that installs it; under CI
(``CI=true``) a missing extra is a failure, never a skip.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import civic_queue
import pytest

PASSWORD = "correct horse battery staple"  # test accounts only, never a default
ACCOUNTS = {  # name -> (role, reviewer id, full name)
    "alice": ("admin", "orcid:0000-0002-1825-0097", "Alice Curator"),
    "bob": ("reviewer", "orcid:0000-0001-5109-3700", "Bob Reviewer"),
    "carol": ("reviewer", "bioevidence-user:carol", None),
    "locked": ("reviewer", "bioevidence-user:locked", None),
}
RECORDS = 60
CHROMIUM = "/usr/bin/chromium"  # Debian's chromium; Playwright drives it, no browser is downloaded
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def need_web(*modules: str) -> None:
    """Skip (fail under CI) when the web extra, or another named module, is not installed."""
    missing = [m for m in ("fastapi", "uvicorn", "jinja2", "argon2", "multipart", *modules)
               if importlib.util.find_spec(m) is None]
    if missing:
        message = f"not installed: {', '.join(missing)}; pip install -e '.[test,web]'"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message, allow_module_level=True)


def need_chromium() -> None:
    need_web("playwright")
    if not Path(CHROMIUM).exists():
        message = f"{CHROMIUM} is absent: apt-get install -y chromium chromium-driver"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def cli(*args: str | Path, stdin: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bioevidence", *map(str, args)], input=stdin, capture_output=True,
                          text=True, check=False, env={**os.environ, **(env or {})}, timeout=120)


def build_queue(folder: Path, shared: Path, count: int = RECORDS, records: list[dict[str, Any]] | None = None) -> Path:
    """A queue of ``count`` CIViC records (or of ``records``) validated with the snapshot grounders, and
    the accounts."""
    from bioevidence.gate.grounders.config import GrounderOptions, build_grounders
    from bioevidence.gate.validator import Validator
    from bioevidence.loop.queue import ReviewQueue

    path = folder / "queue.sqlite"
    validator = Validator(None, grounders=build_grounders(GrounderOptions(
        snapshot_dir=shared / "civic_corpus" / "snapshots")))
    with ReviewQueue(path) as queue:
        for record in civic_queue.records(shared, count) if records is None else records:
            report = validator.validate(record)
            queue.add(record, report, reason=f"{report.overall_status}: {', '.join(report.reason_codes())}",
                      profile="literature-claim")
    for name, (role, reviewer, full) in ACCOUNTS.items():
        extra = ["--full-name", full] if full else []
        made = cli("users", "add", name, "--role", role, "--reviewer-id", reviewer, *extra, "--password-stdin",
                   "--queue", path, stdin=PASSWORD + "\n")
        assert made.returncode == 0, made.stderr
    return path


@dataclass
class Server:
    url: str
    queue: Path
    process: subprocess.Popen[str]
    port: int

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()

    @property
    def log(self) -> str:
        return self.queue.with_name("serve.log").read_text(errors="replace")


def start_server(queue: Path, shared: Path, *extra: str) -> Server:
    with open(queue.with_name("serve.log"), "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "bioevidence", "serve", "--queue", str(queue), "--port", "0",
             "--snapshot-dir", str(shared / "civic_corpus" / "snapshots"), *extra],
            stdout=subprocess.PIPE, stderr=log, text=True, env={**os.environ})
    assert process.stdout is not None
    line = process.stdout.readline()  # "serving http://127.0.0.1:PORT/ (...)", printed once it listens
    match = re.match(r"serving (http://127\.0\.0\.1:(\d+))/", line)
    if match is None:
        process.kill()
        process.wait()
        process.stdout.close()
        raise AssertionError(f"serve did not start: {line!r} {queue.with_name('serve.log').read_text()}")
    server = Server(match.group(1), queue, process, int(match.group(2)))
    _wait_ready(server)
    return server


def _wait_ready(server: Server) -> None:
    import httpx

    for _ in range(100):
        try:
            if httpx.get(f"{server.url}/healthz", timeout=2).text == "ok":
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("serve never answered /healthz")


@pytest.fixture(scope="module")
def web_queue(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    need_web()
    return build_queue(tmp_path_factory.mktemp("web"), shared_data)


@pytest.fixture(scope="module")
def server(web_queue: Path, shared_data: Path) -> Iterator[Server]:
    running = start_server(web_queue, shared_data)
    try:
        yield running
    finally:
        running.stop()


class Visitor:
    """An HTTP client that keeps cookies as a browser on 127.0.0.1 does (``Secure`` ones too, which
    httpx's jar keeps for https only) and reads the forms' hidden tokens."""

    def __init__(self, url: str) -> None:
        import httpx

        self.url = url
        self.http = httpx.Client(base_url=url, follow_redirects=False, timeout=60)
        self.cookies: dict[str, str] = {}

    def close(self) -> None:
        self.http.close()

    def _keep(self, response: Any) -> Any:
        for header in response.headers.get_list("set-cookie"):
            name, _, rest = header.partition("=")
            value = rest.split(";", 1)[0]
            if "Max-Age=0" in header or not value or value == '""':
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        return response

    def _headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        out = dict(extra or {})
        if self.cookies:
            out["cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return out

    def get(self, path: str, headers: dict[str, str] | None = None) -> Any:
        return self._keep(self.http.get(path, headers=self._headers(headers)))

    def post(self, path: str, data: Any = None, files: Any = None, headers: dict[str, str] | None = None) -> Any:
        return self._keep(self.http.post(path, data=data, files=files, headers=self._headers(headers)))

    def login(self, name: str, password: str = PASSWORD) -> Any:
        page = self.get("/login")
        return self.post("/login", data={"name": name, "password": password, "token": hidden(page.text, "token"),
                                         "next": "/queue"})


def hidden(html: str, name: str) -> str:
    match = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert match is not None, f"no hidden field {name}"
    return match.group(1)


@pytest.fixture()
def visitor(server: Server) -> Iterator[Visitor]:
    v = Visitor(server.url)
    try:
        yield v
    finally:
        v.close()


@pytest.fixture()
def sign_in(server: Server) -> Iterator[Any]:
    """``sign_in(name)``: a visitor signed in as ``name`` (closed after the test)."""
    made: list[Visitor] = []

    def make(name: str = "bob") -> Visitor:
        v = Visitor(server.url)
        made.append(v)
        assert v.login(name).status_code == 303, name
        return v

    try:
        yield make
    finally:
        for v in made:
            v.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright, one per test module (never downloaded)."""
    need_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()
