"""Issue 24 items 8 and 9: what a newcomer types first.

Plain ``bioevidence`` (and a group such as ``bioevidence sources``) prints readable help on stdout
and exits 0; a mistyped command names the one meant; ``ground --snapshot-dir new/`` that pins
nothing still makes ``new/`` a folder, so the README's ground-then-validate pair works.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli

REPO = Path(__file__).resolve().parents[2]


def test_plain_bioevidence_prints_help_on_stdout_and_exits_0() -> None:
    result = subprocess.run([sys.executable, "-m", "bioevidence"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.startswith("Usage: bioevidence")
    assert "\n  validate " in result.stdout  # one command per line, not a JSON string
    assert "\\n" not in result.stdout


@pytest.mark.parametrize("group", ["sources", "review", "index"])
def test_a_group_without_a_subcommand_prints_its_help(group: str) -> None:
    result = CliRunner().invoke(cli, [group])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Usage: bioevidence {group}")
    assert result.stderr == ""


@pytest.mark.parametrize(("typed", "meant"), [("validat", "validate"), ("valdiate", "validate"),
                                               ("groud", "ground"), ("profile", "profiles")])
def test_a_mistyped_command_names_the_one_meant(typed: str, meant: str) -> None:
    result = CliRunner().invoke(cli, [typed, "x.json"])
    assert result.exit_code == 3
    (line,) = result.stderr.splitlines()
    message = json.loads(line)["message"]
    assert f"No such command '{typed}'" in message
    assert f"did you mean {meant}" in message.casefold()


def test_a_mistyped_subcommand_names_the_one_meant() -> None:
    result = CliRunner().invoke(cli, ["sources", "verfy", "snapshots/"])
    assert result.exit_code == 3
    assert "verify" in json.loads(result.stderr)["message"]


def test_nothing_like_any_command_lists_none(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["zzzzqqq"])
    assert result.exit_code == 3
    assert "did you mean" not in result.stderr.casefold()


def test_ground_that_pins_nothing_still_makes_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record citing no paper: nothing to fetch (no network), and ``new/`` is a folder afterwards."""
    monkeypatch.setenv("BIOEVIDENCE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("BIOEVIDENCE_STORE", raising=False)
    snapshots = tmp_path / "new"
    runner = CliRunner()
    grounded = runner.invoke(cli, ["ground", str(REPO / "examples" / "labels" / "01_b_cell.json"),
                                   "--snapshot-dir", f"{snapshots}/", "--output-dir", str(tmp_path / "grounded")])
    assert grounded.exit_code == 0, grounded.output
    assert snapshots.is_dir(), "the catalogue was written as a file named after the folder"
    catalogue = json.loads((snapshots / "literature.json").read_text(encoding="utf-8"))
    assert catalogue["works"] == {}
    validated = runner.invoke(cli, ["validate", str(tmp_path / "grounded"), "--snapshot-dir", str(snapshots),
                                    "--format", "text"])
    assert validated.exit_code in (0, 1, 2), validated.output  # a decision, not an input error
    assert "0 input errors" in validated.stdout
