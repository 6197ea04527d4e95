"""Issue 25, cause 7: a scheduler address is checked before any work, and nothing hangs on it.

A port that accepts TCP and never speaks hung ``validate`` for more than 600 s; ``tls://``,
``inproc://`` and ``http://`` gave tracebacks after 20 s; ``local:12`` started 12 processes on 2 cores;
``kb build --scheduler`` to an unreachable address wrote the knowledge base before failing. Real
processes and real sockets: a listener that never answers, a closed port, and the real CLI.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bioevidence.errors import ConfigurationError
from bioevidence.execute.cluster import local_workers, parse_scheduler
from security.harness import run_cli

pytest.importorskip("distributed", reason="the dask extra: pip install 'bioevidence[dask]'")

REPO = Path(__file__).resolve().parents[2]
RECORDS = str(REPO / "examples" / "records")
FAST = {"BIOEVIDENCE_DASK_HANDSHAKE": "2", "BIOEVIDENCE_DASK_WAIT": "5"}


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A listener that accepts every connection and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1]
    server.close()
    for conn in held:
        conn.close()


def _closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def _one_error(run_stderr: str) -> str:
    lines = [json.loads(line) for line in run_stderr.splitlines() if line.startswith("{")]
    assert len(lines) == 1, run_stderr[-1500:]
    return str(lines[0]["message"])


@pytest.mark.parametrize("scheme", ["tcp", "tls"])
def test_a_port_that_never_answers_is_refused_within_the_handshake_deadline(scheme: str, silent_port: int,
                                                                             tmp_path: Path) -> None:
    run = run_cli(["validate", RECORDS, "--scheduler", f"{scheme}://127.0.0.1:{silent_port}"], cwd=tmp_path,
                  env=FAST, watchdog=60)
    assert not run.killed and run.code == 3 and not run.traceback, run.stderr[-1500:]
    message = _one_error(run.stderr)
    assert "did not answer within 2 s" in message or "cannot reach" in message, message


@pytest.mark.parametrize("value", ["inproc://x", "http://127.0.0.1:8786", "ucx://127.0.0.1:1", "tcp://h:p"])
def test_addresses_no_command_can_use_are_refused_at_once(value: str, tmp_path: Path) -> None:
    run = run_cli(["validate", RECORDS, "--scheduler", value], cwd=tmp_path, env=FAST, watchdog=30)
    assert run.code == 3 and not run.traceback and run.cpu_seconds < 10, run.stderr[-1500:]
    assert "--scheduler" in _one_error(run.stderr)


def test_kb_build_checks_the_scheduler_before_it_writes_anything(tmp_path: Path) -> None:
    run = run_cli(["kb", "build", str(REPO / "examples" / "refs.bib"), "--kb", "kb", "--offline",
                   "--scheduler", f"tcp://127.0.0.1:{_closed_port()}"], cwd=tmp_path, env=FAST, watchdog=60)
    assert run.code == 3 and not run.traceback, run.stderr[-1500:]
    assert "cannot reach" in _one_error(run.stderr) or "did not answer" in run.stderr
    assert not (tmp_path / "kb").exists()


def test_local_n_is_capped_at_the_cores_unless_asked(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    cores = os.cpu_count() or 1
    monkeypatch.delenv("BIOEVIDENCE_DASK_OVERSUBSCRIBE", raising=False)
    assert local_workers(cores + 10) == cores and f"starting {cores}" in capsys.readouterr().err
    assert local_workers(None) == cores and local_workers(1) == 1
    monkeypatch.setenv("BIOEVIDENCE_DASK_OVERSUBSCRIBE", "1")
    assert local_workers(cores + 10) == cores + 10
    with pytest.raises(ConfigurationError, match="inproc:// is not a Dask scheduler address"):
        parse_scheduler("inproc://127.0.0.1/1/2")
