"""Issue 24 item 11: bioai-evidence-validator 0.8.0's command line, not only its records.

Every command and option of the real 0.8.0 CLI (read from its own ``--help``, in the reference
environment ``.ci/run`` installs) is either ours (an alias where the name differs) or answers with
one line naming what to use here, exit 3; docs/migrating.md maps every one of them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from bioevidence.cli import cli

pytestmark = pytest.mark.heavy(seconds=45)  # started first under xdist (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]
RECORD = REPO / "examples" / "records" / "01_admitted_curated_claim.json"
LINKML = REPO / "schemas" / "bioevidence_core.yaml"


def _reference_cli() -> Path:
    python = os.environ.get("BIOEVIDENCE_REFERENCE_PYTHON")
    if not python:
        message = "set BIOEVIDENCE_REFERENCE_PYTHON to a Python with bioai-evidence-validator==0.8.0 installed"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return Path(python).parent / "bioevidence"


def _help(command: list[str]) -> str:
    done = subprocess.run([str(_reference_cli()), *command, "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _subcommands(text: str) -> list[str]:
    match = re.search(r"\{([a-z,-]+)\}", text)
    return match.group(1).split(",") if match else []


def peer_commands() -> dict[tuple[str, ...], set[str]]:
    """0.8.0's command paths and each one's long options, from its argparse help."""
    out: dict[tuple[str, ...], set[str]] = {}
    for name in _subcommands(_help([])):
        text = _help([name])
        subs = _subcommands(text) if name == "review" else []
        for sub in subs:
            out[(name, sub)] = set(re.findall(r"--[a-z][a-z-]*", _help([name, sub]))) - {"--help"}
        if not subs:
            out[(name,)] = set(re.findall(r"--[a-z][a-z-]*", text)) - {"--help"}
    return out


def _our_command(path: tuple[str, ...]) -> click.Command | None:
    command: click.Command | None = cli
    ctx = click.Context(cli)
    for part in path:
        assert isinstance(command, click.Group)
        command = command.get_command(ctx, part)
        if command is None:
            return None
    return command


def test_every_0_8_0_command_and_option_is_ours_or_names_ours() -> None:
    peer = peer_commands()
    assert {("validate",), ("ground",), ("generate-schema",), ("review", "check"), ("review", "freeze")} <= set(peer)
    stand_ins = []
    for path, options in sorted(peer.items()):
        result = CliRunner().invoke(cli, [*path, "--help"])
        if result.exit_code == 0:  # ours: every 0.8.0 option is one of its options (hidden ones included)
            command = _our_command(path)
            assert command is not None, path
            ours = {opt for p in command.params for opt in getattr(p, "opts", []) if opt.startswith("--")}
            assert options <= ours, (path, sorted(options - ours))
        else:  # not provided: one line naming what to use here
            stand_ins.append(path)
            assert result.exit_code == 3, (path, result.output)
            (line,) = result.stderr.splitlines()
            message = json.loads(line)["message"]
            assert "No such command" not in message and "docs/migrating.md" in message, message
            assert re.search(r"bioevidence (sources|review) [a-z-]+", message), message
    assert stand_ins == [("review", "adjudication-sheet"), ("review", "check"), ("review", "freeze"),
                         ("review", "score")]


def test_docs_migrating_maps_every_command_and_option() -> None:
    doc = (REPO / "docs" / "migrating.md").read_text(encoding="utf-8")
    rows = [line for line in doc.splitlines() if line.startswith("| `")]
    for path, options in peer_commands().items():
        named = [row for row in rows if row.startswith(f"| `{' '.join(path)}")]
        assert named, f"docs/migrating.md has no row for 0.8.0's {' '.join(path)}"
        mapped = " ".join(named)
        missing = sorted(o for o in options if o not in mapped)
        assert not missing, f"docs/migrating.md does not map {' '.join(path)} {missing}"


def test_generate_schema_is_schema_generate(tmp_path: Path) -> None:
    runner = CliRunner()
    ours = runner.invoke(cli, ["generate-schema", "--output", str(tmp_path / "a.json")])
    assert ours.exit_code == 0, ours.output
    generated = runner.invoke(cli, ["schema", "--generate"])
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == generated.stdout
    with_schema = runner.invoke(cli, ["generate-schema", "--schema", str(LINKML), "--output", str(tmp_path / "b.json")])
    assert with_schema.exit_code == 0 and (tmp_path / "b.json").read_bytes() == (tmp_path / "a.json").read_bytes()
    copy = tmp_path / "core.yaml"
    copy.write_bytes(LINKML.read_bytes())
    onto = runner.invoke(cli, ["generate-schema", "--schema", str(copy), "--output", str(copy)])
    assert onto.exit_code == 3 and copy.read_bytes() == LINKML.read_bytes()


def test_validate_schema_accepts_the_packaged_one_only(tmp_path: Path) -> None:
    runner = CliRunner()
    plain = runner.invoke(cli, ["validate", str(RECORD), "--no-grounding"])
    same = runner.invoke(cli, ["validate", str(RECORD), "--no-grounding", "--schema", str(LINKML)])
    assert same.exit_code == plain.exit_code == 0
    assert json.loads(same.stdout)["use_decisions"] == json.loads(plain.stdout)["use_decisions"]
    other = tmp_path / "mine.yaml"
    other.write_text(LINKML.read_text(encoding="utf-8").replace("bioevidence", "mine", 1), encoding="utf-8")
    out = tmp_path / "report.json"
    refused = runner.invoke(cli, ["validate", str(RECORD), "--schema", str(other), "-o", str(out)])
    assert refused.exit_code == 3 and not out.exists()
    assert "is not the packaged schema" in json.loads(refused.stderr)["message"]
    eco = runner.invoke(cli, ["validate", str(RECORD), "--annotate-eco"])
    assert eco.exit_code == 3 and "--annotate-eco is 0.8.0's" in eco.stderr


def test_review_agreement_writes_output_as_0_8_0_did(tmp_path: Path) -> None:
    sheet = tmp_path / "annotations.csv"
    sheet.write_text("case_id,requested_use,reviewer_id,admission_label,mapping_label\n"
                     "c1,u,r1,admitted,correct\nc1,u,r2,admitted,incorrect\n", encoding="utf-8")
    out = tmp_path / "agreement.json"
    result = CliRunner().invoke(cli, ["review", "agreement", str(sheet), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text(encoding="utf-8"))["columns"]["admission_label"]["percent_agreement"] == 1.0
    onto = CliRunner().invoke(cli, ["review", "agreement", str(sheet), "--output", str(sheet)])
    assert onto.exit_code == 3 and sheet.read_text(encoding="utf-8").startswith("case_id")
