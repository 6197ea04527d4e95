"""``--scheduler-file`` (issue 29 item 4): a file without an address, or both options, is one clear
error before any work. The file a real ``dask scheduler --scheduler-file`` writes is used end to end
in ``test_recipes.py::test_an_existing_scheduler_found_through_a_scheduler_file``."""

from __future__ import annotations

import json
from pathlib import Path

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
