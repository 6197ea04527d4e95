"""``--scheduler-file`` (issue 29 item 4): a file without an address, or both options, is one clear
error before any work. The file a real ``dask scheduler --scheduler-file`` writes is used end to end
in ``test_recipes.py::test_an_existing_scheduler_found_through_a_scheduler_file``."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli


def test_a_file_without_an_address_or_both_options_are_one_clear_error(repo: Path, tmp_path: Path) -> None:
    examples = str(repo / "examples" / "records")
    empty = tmp_path / "empty.json"
    empty.write_text("{}", encoding="utf-8")
    refused = CliRunner().invoke(cli, ["validate", examples, "--scheduler-file", str(empty)])
    assert refused.exit_code == 3 and "names no scheduler address" in refused.output
    garbled = tmp_path / "garbled.json"
    garbled.write_text("tcp://127.0.0.1:8786", encoding="utf-8")
    refused = CliRunner().invoke(cli, ["validate", examples, "--scheduler-file", str(garbled)])
    assert refused.exit_code == 3 and "is not a Dask scheduler file" in refused.output
    named = tmp_path / "scheduler.json"
    named.write_text(json.dumps({"address": "tcp://127.0.0.1:9"}), encoding="utf-8")
    both = CliRunner().invoke(cli, ["validate", examples, "--scheduler", "local:1", "--scheduler-file", str(named)])
    assert both.exit_code != 0 and "not both" in both.output


def test_the_file_is_waited_for_as_a_batch_script_starts_the_scheduler_beside_the_command(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SLURM script starts ``dask scheduler --scheduler-file F`` and ``validate --scheduler-file F``
    together (examples/slurm/validate.sbatch): a file not there yet is waited for, up to
    ``$BIOEVIDENCE_DASK_WAIT`` seconds, then one error line naming how to start it."""
    examples = str(repo / "examples" / "records")
    monkeypatch.setenv("BIOEVIDENCE_DASK_WAIT", "1")
    absent = tmp_path / "never.json"
    started = time.monotonic()
    refused = CliRunner().invoke(cli, ["validate", examples, "--scheduler-file", str(absent)])
    assert refused.exit_code == 3 and "appeared within 1 s" in refused.output
    assert "dask scheduler --scheduler-file" in refused.output and time.monotonic() - started >= 1
    late = tmp_path / "late.json"
    monkeypatch.setenv("BIOEVIDENCE_DASK_WAIT", "30")
    writer = threading.Timer(1.0, lambda: late.write_text(json.dumps({}), encoding="utf-8"))
    writer.start()
    try:  # the file written a second later is read (and found to hold no address): it was waited for
        waited = CliRunner().invoke(cli, ["validate", examples, "--scheduler-file", str(late)])
    finally:
        writer.cancel()
    assert waited.exit_code == 3 and "names no scheduler address" in waited.output
