"""Point 6: a server cannot keep a download busy forever; every request ends by its deadline, and says why.

A real loopback server drips one byte every half second: never idle long enough for the 30 s
read timeout, never done. Before the deadline, ``get`` (and ``bioevidence ground``) waited as
long as the server kept dripping (here: 40 bytes of headers or 200 of body, 20-100 s; an
endless server, forever). Each call runs in a thread joined with a timeout well past the
deadline, so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bioevidence.errors import ConfigurationError, RetrievalError
from bioevidence.sources.http import HttpClient, HttpConfig
from loopback import Fault, LoopbackServer, RecordingSleep
from security.harness import run_cli
from sources.replay import serve_civic_ncbi

BODY = json.dumps({"result": ["x" * 190]}).encode()
DEADLINE = 2.0


def _timed(call: Callable[[], Any], limit: float = 30.0) -> tuple[BaseException | Any, float]:
    """Run ``call`` in a thread; (its exception or result, seconds taken); fails the test if it hangs."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:
            box["value"] = exc

    start = time.monotonic()
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(limit)
    assert not thread.is_alive(), f"the request was still running after {limit} s: no deadline"
    return box["value"], time.monotonic() - start


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        srv.route("/slow", BODY, content_type="application/json")
        yield srv


def _client(**overrides: Any) -> HttpClient:
    config = HttpConfig(email="tests@example.org", deadline=DEADLINE, read_timeout=30.0, **overrides)
    return HttpClient(config, sleep=RecordingSleep())


@pytest.mark.parametrize("headers", [False, True], ids=["drip-body", "drip-headers"])
def test_a_dripping_server_is_cut_off_at_the_deadline(server: LoopbackServer, headers: bool) -> None:
    server.fail("/slow", Fault.drip(0.5, headers=headers))
    with _client() as client:
        error, took = _timed(lambda: client.get(f"{server.url}/slow", accept=("application/json",)))
    assert isinstance(error, RetrievalError), error
    assert error.context["reason"] == "deadline" and "gave up after 1 attempt)" in error.message
    assert "2 s deadline" in error.message and "BIOEVIDENCE_HTTP_DEADLINE" in error.message
    assert DEADLINE - 0.1 <= took < DEADLINE + 5  # it waited for the deadline, and not much longer
    assert server.hits("/slow") == 1  # no retry after the deadline


def test_the_live_transport_has_the_deadline_backend_installed() -> None:
    """Guards the one place that reaches into httpx: if an upgrade moves it, this fails loudly."""
    with _client() as client:
        assert getattr(client._client._transport, "deadline_armed", False)


def test_a_retry_after_beyond_the_limit_says_one_attempt(server: LoopbackServer) -> None:
    server.fail("/slow", Fault.http(429, retry_after="3600"))
    with _client(retry_after_max=60) as client, pytest.raises(RetrievalError) as info:
        client.get(f"{server.url}/slow")
    message = info.value.message
    assert "retry after 3600 s" in message and "(gave up after 1 attempt)" in message
    assert server.hits("/slow") == 1


def test_backoff_that_would_pass_the_deadline_stops_retrying_and_counts_true(server: LoopbackServer) -> None:
    server.fail("/slow", *[Fault.http(503)] * 10)
    with _client(backoff_base=1.5, max_attempts=8) as client, pytest.raises(RetrievalError) as info:
        client.get(f"{server.url}/slow")
    hits = server.hits("/slow")
    assert hits < 8 and f"(gave up after {hits} attempt" in info.value.message
    assert "would pass the 2 s deadline" in info.value.message


def test_a_fast_server_is_untouched_by_the_deadline(server: LoopbackServer) -> None:
    with _client() as client:
        assert client.get(f"{server.url}/slow").content == BODY


def test_the_deadline_is_configurable_and_checked() -> None:
    assert HttpConfig.from_env({"BIOEVIDENCE_HTTP_DEADLINE": "7.5"}).deadline == 7.5
    assert HttpConfig.from_env({}).deadline == 120.0
    with pytest.raises(ConfigurationError):
        HttpConfig.from_env({"BIOEVIDENCE_HTTP_DEADLINE": "0"})


def test_ground_against_a_dripping_service_ends_and_names_the_deadline(tmp_path: Path, server: LoopbackServer,
                                                                       shared_data: Path) -> None:
    """The command a user runs: ``ground`` over a record citing a PMID, NCBI played by the dripping server
    (answering from the real recorded CIViC responses once the drip stops)."""
    serve_civic_ncbi(server, shared_data / "civic_corpus" / "snapshots")
    server.fail("/esummary.fcgi", *[Fault.drip(0.5, headers=True)] * 6)
    record = {"record_id": "t:r", "source_artifacts": [
        {"id": "t:s1", "source_type": "publication", "uri": "pmid:15696205", "title": "x", "version": "v",
         "retrieved_at": "2026-01-01T00:00:00Z", "sha256": "0" * 64}]}
    (tmp_path / "r.json").write_text(json.dumps(record), encoding="utf-8")
    (tmp_path / "snapshots").mkdir()
    env = {"BIOEVIDENCE_EUTILS_URL": server.url, "BIOEVIDENCE_EUROPEPMC_URL": server.url,
           "BIOEVIDENCE_CROSSREF_URL": server.url, "BIOEVIDENCE_EMAIL": "tests@example.org"}
    run = run_cli(["ground", "r.json", "--snapshot-dir", "snapshots", "--http-deadline", "2", "--workers", "1",
                   "--output", "out.json"], cwd=tmp_path, env=env, watchdog=60)
    assert not run.killed, "ground was still running after 60 s"
    assert run.code == 3 and "deadline" in run.stderr, run.stderr  # its only publication failed: nothing else did
