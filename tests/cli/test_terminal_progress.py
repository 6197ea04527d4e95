"""Progress on a terminal, silence in a pipe: what `ask` and `validate` write to stderr.

docs/librarian.md and docs/performance.md promise that on a terminal `ask` shows a rich status line of
the library's progress and `validate` a bar with records/s and the ETA, while pipes, `--json` and batch
logs get none. Each command runs here as a user runs it, the console script in a child process, once
with stderr on a real pseudo-terminal (``pty.openpty``) and once on a pipe, over real data: the CIViC
snapshot folder's index and 3,000 records built from the CIViC controls. stdout is a pipe both times and
must be the same bytes: progress never reaches what a pipeline reads.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bioevidence.librarian.index import build_index

REPO = Path(__file__).resolve().parents[2]
ESC = b"\x1b["


def _console_script() -> str:
    return str(Path(sys.executable).with_name("bioevidence"))


def _run(args: list[str], *, terminal: bool) -> tuple[int, bytes, bytes]:
    """Run ``bioevidence ARGS``: stdout a pipe, stderr a pseudo-terminal (``terminal``) or a pipe."""
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "SOURCE_DATE_EPOCH": "1764547200"}
    env.pop("NO_COLOR", None)
    if not terminal:
        done = subprocess.run([_console_script(), *args], capture_output=True, env=env, timeout=300, check=False)
        return done.returncode, done.stdout, done.stderr
    master, slave = pty.openpty()
    seen = bytearray()

    def drain() -> None:  # a full pty buffer would block the child: read until every writer has closed
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the slave side is closed everywhere
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        child = subprocess.Popen([_console_script(), *args], stdout=subprocess.PIPE, stderr=slave, env=env)
        os.close(slave)
        out, _ = child.communicate(timeout=300)
        reader.join(timeout=10)
    finally:
        os.close(master)
    return child.returncode, out, bytes(seen)


@pytest.fixture(scope="module")
def civic_index(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("civic") / "index"
    build_index([shared_data / "civic_corpus" / "snapshots"], out)
    return out


QUESTION = "Does BRAF V600E predict response to vemurafenib in melanoma?"


def test_ask_shows_a_status_line_on_a_terminal_and_nothing_in_a_pipe(civic_index: Path) -> None:
    args = ["ask", QUESTION, "--index", str(civic_index), "--retriever", "bm25"]
    code_tty, out_tty, err_tty = _run(args, terminal=True)
    code_pipe, out_pipe, err_pipe = _run(args, terminal=False)
    assert code_tty == code_pipe == 0, err_pipe.decode(errors="replace")[-500:]
    assert b"asking" in err_tty and ESC in err_tty  # the rich status line, drawn with terminal escapes
    assert err_pipe == b""
    assert out_tty == out_pipe and ESC not in out_pipe  # what a pipeline reads is the same either way
    assert b"Retriever: bm25" in out_pipe


def test_ask_json_on_a_terminal_prints_no_status(civic_index: Path) -> None:
    code, out, err = _run(["ask", QUESTION, "--index", str(civic_index), "--retriever", "bm25", "--json"],
                          terminal=True)
    assert code == 0
    assert b"asking" not in err and ESC not in err
    assert json.loads(out)["question"] == QUESTION


def test_validate_shows_a_bar_with_rate_and_eta_on_a_terminal_and_nothing_in_a_pipe(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "tools"))
    try:
        from bench_gate import civic_records  # the CIViC controls as records (tools/bench_gate.py)
    finally:
        sys.path.remove(str(REPO / "tools"))
    batch = tmp_path / "batch.jsonl"
    batch.write_text("".join(json.dumps(r) + "\n" for r in civic_records(3000)))
    args = ["validate", str(batch), "--profile", "literature-claim", "--workers", "1"]
    code_tty, out_tty, err_tty = _run(args, terminal=True)
    code_pipe, out_pipe, err_pipe = _run(args, terminal=False)
    assert code_tty == code_pipe == 1  # knowledge_base uses need a person: rejected, exit 1
    assert ESC in err_tty and b"records/s" in err_tty  # the bar, with its rate
    assert b"3,000 records" in err_tty  # the count it reached
    assert re.search(rb"\d+:\d\d:\d\d", err_tty)  # the ETA column
    assert err_pipe == b""
    assert out_tty == out_pipe and len(out_pipe.splitlines()) == 3000
