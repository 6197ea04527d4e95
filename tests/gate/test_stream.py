"""A JSONL batch is streamed (issue 29 items 2 and 3): each line is capped, not the batch, and a
run killed with SIGKILL resumes with --resume to the bytes an uninterrupted run writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.io import MAX_BYTES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "records"
FIXED = {"SOURCE_DATE_EPOCH": "1767225600"}  # validated_at fixed, so two runs compare byte for byte


def _records() -> list[bytes]:
    """The example records (one admitted, reviews, a rejection), each as one JSONL line."""
    out = []
    for path in sorted(EXAMPLES.glob("*.json")):
        out.append(json.dumps(json.loads(path.read_text(encoding="utf-8"))).encode())
    assert len(out) >= 5
    return out


def _batch(path: Path, n: int) -> Path:
    lines = _records()
    path.write_bytes(b"".join(lines[i % len(lines)] + b"\n" for i in range(n)))
    return path


def _validate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bioevidence", "validate", *args], capture_output=True, text=True,
                          env={**os.environ, **FIXED, **(env or {})}, timeout=600)


def test_a_batch_over_the_file_cap_is_validated_and_only_the_long_line_is_refused(tmp_path: Path) -> None:
    """The 50 MB cap bounds one line (one record), not the batch: a file of 50 MB and more, holding
    one line over the cap between two records, gets a report, one limit error and a report."""
    good = _records()[0]
    big = tmp_path / "big.jsonl"
    with big.open("wb") as fh:
        fh.write(good + b"\n")
        fh.write(b'{"padding": "' + b"a" * MAX_BYTES + b'"}\n')
        fh.write(good + b"\n")
    assert big.stat().st_size > MAX_BYTES
    out = tmp_path / "out.jsonl"
    done = CliRunner().invoke(cli, ["validate", str(big), "-o", str(out)])
    assert done.exit_code == 3, done.output  # an input error in the batch
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [x["line"] for x in lines] == [1, 2, 3]
    assert "error" not in lines[0] and "error" not in lines[2]
    assert lines[1]["error"] == "input_error" and "MB limit for one record" in lines[1]["message"]
    assert lines[0]["overall_status"] == lines[2]["overall_status"]


def test_streamed_output_is_the_same_whatever_the_window(tmp_path: Path) -> None:
    """Windows only bound memory: 1, 7 and the default give the same bytes and exit code."""
    batch = _batch(tmp_path / "b.jsonl", 60)
    outs = {}
    for window in ("1", "7", "20000"):
        done = _validate(str(batch), "-o", str(tmp_path / f"w{window}.jsonl"), "--window", window)
        outs[window] = (done.returncode, (tmp_path / f"w{window}.jsonl").read_bytes())
    assert outs["1"] == outs["7"] == outs["20000"]
    assert len(outs["1"][1].splitlines()) == 60 and outs["1"][0] in (1, 2)


@pytest.mark.parametrize("torn", [False, True])
def test_a_killed_run_resumes_to_the_bytes_of_an_uninterrupted_one(tmp_path: Path, torn: bool) -> None:
    """SIGKILL mid-run leaves no output file, only the partial; --resume skips what it holds (a line
    cut by the kill is written again) and ends with the uninterrupted run's bytes and exit code."""
    batch = _batch(tmp_path / "batch.jsonl", 4000)
    whole = _validate(str(batch), "-o", str(tmp_path / "whole.jsonl"))
    expected = (tmp_path / "whole.jsonl").read_bytes()
    assert len(expected.splitlines()) == 4000

    out = tmp_path / "out.jsonl"
    partial = tmp_path / "out.jsonl.partial"
    args = [str(batch), "-o", str(out), "--window", "100", "--workers", "1"]
    proc = subprocess.Popen([sys.executable, "-m", "bioevidence", "validate", *args], env={**os.environ, **FIXED},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not partial.is_file() or partial.read_bytes().count(b"\n") < 500):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not out.exists(), "a killed run left a half-written output"
    written = partial.read_bytes().count(b"\n")
    assert 500 <= written < 4000, written
    if torn:  # the kill landed inside a line
        with partial.open("ab") as fh:
            fh.write(b'{"file": "half a li')
    resumed = _validate(*args, "--resume")
    assert resumed.returncode == whole.returncode, resumed.stderr
    assert out.read_bytes() == expected
    assert not partial.exists() and not (tmp_path / "out.jsonl.partial.json").exists()


def test_resume_refuses_a_partial_made_for_other_input_and_needs_an_output(tmp_path: Path) -> None:
    """A partial of another batch is never continued (one line naming the fix, exit 3)."""
    batch = _batch(tmp_path / "batch.jsonl", 30)
    out = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.partial").write_bytes(b"")
    (tmp_path / "out.jsonl.partial.json").write_text(json.dumps({"fingerprint": "another run"}), encoding="utf-8")
    refused = _validate(str(batch), "-o", str(out), "--resume")
    assert refused.returncode == 3 and "start over" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert not out.exists()
    no_output = _validate(str(batch), "--resume")
    assert no_output.returncode == 3 and "-o" in no_output.stderr


def test_a_batch_job_log_gets_json_progress_lines_only_when_asked(tmp_path: Path) -> None:
    """Not on a terminal: silent by default; with --progress-every, JSON lines (records done rising,
    a rate, the share of the input read), beside the report lines, never inside them."""
    batch = _batch(tmp_path / "b.jsonl", 4000)
    quiet = _validate(str(batch), "-o", str(tmp_path / "q.jsonl"), "--window", "100", "--workers", "1")
    assert quiet.stderr == ""
    told = _validate(str(batch), "-o", str(tmp_path / "t.jsonl"), "--window", "100", "--workers", "1",
                     "--progress-every", "0.1")
    lines = [json.loads(x) for x in told.stderr.splitlines()]
    assert lines and all(x["progress"] == "validating" and x["per_s"] > 0 for x in lines), told.stderr
    records = [x["records"] for x in lines]
    assert records == sorted(records) and 0 < records[-1] <= 4000
    assert all(0 < x["input_share"] <= 1 for x in lines)
    assert (tmp_path / "q.jsonl").read_bytes() == (tmp_path / "t.jsonl").read_bytes()
