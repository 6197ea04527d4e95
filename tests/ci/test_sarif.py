"""SARIF 2.1.0 output: valid against the official schema, rules from the catalogue, results at lines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from bioevidence.ci.lines import Locator
from bioevidence.ci.sarif import sarif_log
from bioevidence.ci.summary import rules_url
from bioevidence.cli import cli
from bioevidence.gate.batch import run
from bioevidence.gate.inputs import iter_jobs
from bioevidence.gate.rules import CATALOGUE
from bioevidence.gate.validator import Validator

DATA = Path(__file__).parent / "data"
FIXTURES = Path(__file__).parent / "fixtures"
URL = "https://github.com/example/bioevidence/blob/v1/docs/rules.md"
UNSET = ("BIOEVIDENCE_RULES_URL", "BIOEVIDENCE_ACTION_PATH", "GITHUB_ACTION_REPOSITORY", "GITHUB_ACTION_REF",
         "GITHUB_REPOSITORY", "GITHUB_SHA")


def line_of(path: Path, needle: str) -> int:
    return next(n for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if needle in text)


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@pytest.fixture()
def log(tmp_path: Path) -> dict[str, Any]:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES, root)
    results = run(list(iter_jobs([root / "records", root / "jsonl"])), Validator())
    return sarif_log(results, locator=Locator(base=root), rules_url=URL)


def test_sarif_validates_against_the_official_2_1_0_schema(validator: Any, log: dict[str, Any]) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert errors == [], [f"{list(e.absolute_path)}: {e.message}" for e in errors]
    assert log["version"] == "2.1.0"


def test_schema_check_has_teeth(validator: Any, log: dict[str, Any]) -> None:
    """The same log with a wrong level or a relative helpUri is refused (formats are checked)."""
    broken = json.loads(json.dumps(log))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    assert not validator.is_valid(broken)
    broken = json.loads(json.dumps(log))
    broken["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = "docs/rules.md#schema"
    assert not validator.is_valid(broken)


def test_rules_carry_catalogue_metadata(log: dict[str, Any]) -> None:
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in CATALOGUE] + ["INPUT_ERROR"]
    for descriptor, rule in zip(rules, CATALOGUE, strict=False):
        assert descriptor["name"] == rule.code
        assert descriptor["shortDescription"]["text"].rstrip(".") in rule.message
        assert descriptor["fullDescription"]["text"] == rule.message
        assert descriptor["helpUri"] == f"{URL}#{rule.code.lower()}"
        levels = {"error": "error", "review": "warning", "warning": "warning", "info": "note"}
        assert descriptor["defaultConfiguration"]["level"] == levels[rule.severity]
        assert descriptor["properties"]["route"] == rule.route


def test_results_point_at_the_file_and_line_of_the_field(log: dict[str, Any]) -> None:
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    places = {}
    for result in run_["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        places[result["ruleId"], physical["artifactLocation"]["uri"]] = (
            result["level"], physical.get("region", {}).get("startLine"),
            result["locations"][0].get("logicalLocations", [{}])[0].get("fullyQualifiedName"))
    deep = FIXTURES / "records" / "nested" / "deep.yaml"
    assert places == {
        ("INPUT_ERROR", "records/broken.json"): ("error", 6, None),
        ("SCHEMA", "records/nested/deep.yaml"): (
            "error", line_of(deep, "extraction_method: guesswork"), "$.evidence_items[2].extraction_method"),
        ("RECORD_INTEGRITY", "records/rejected.json"): ("error", 59, "$.evidence_items[1].source_artifact_id"),
        ("BEV012", "records/review.json"): (
            "warning", line_of(FIXTURES / "records" / "review.json", '"adjudications"'), "$.adjudications"),
        ("BEV012", "jsonl/batch.jsonl"): ("warning", 2, "$.adjudications"),
    }
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file:///")


def test_fingerprints_do_not_depend_on_the_line(tmp_path: Path) -> None:
    record = tmp_path / "r.json"
    text = (FIXTURES / "records" / "review.json").read_text(encoding="utf-8")
    record.write_text(text, encoding="utf-8")
    first = sarif_log(run(list(iter_jobs([record])), Validator()), locator=Locator(base=tmp_path), rules_url=URL)
    record.write_text("\n\n\n" + text, encoding="utf-8")
    moved = sarif_log(run(list(iter_jobs([record])), Validator()), locator=Locator(base=tmp_path), rules_url=URL)
    a, b = first["runs"][0]["results"][0], moved["runs"][0]["results"][0]
    assert b["locations"][0]["physicalLocation"]["region"]["startLine"] == (
        a["locations"][0]["physicalLocation"]["region"]["startLine"] + 3)
    assert a["partialFingerprints"] == b["partialFingerprints"]


def test_validate_format_sarif_at_the_command_line(validator: Any, tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "records", tmp_path / "records")
    out = tmp_path / "report.sarif"
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "records"), "--format", "sarif", "-o", str(out)],
                                env=dict.fromkeys(UNSET))
    assert result.exit_code == 3  # broken.json is an input error
    log = json.loads(out.read_text(encoding="utf-8"))
    assert validator.is_valid(log)
    assert {r["ruleId"] for r in log["runs"][0]["results"]} == {"INPUT_ERROR", "SCHEMA", "RECORD_INTEGRITY", "BEV012"}
    assert all("helpUri" not in r for r in log["runs"][0]["tool"]["driver"]["rules"])  # no absolute base known


@pytest.mark.parametrize(("env", "url"), [
    pytest.param({"BIOEVIDENCE_RULES_URL": "https://x.org/r.md"}, "https://x.org/r.md", id="explicit"),
    pytest.param({"GITHUB_ACTION_REPOSITORY": "acme/bioevidence", "GITHUB_ACTION_REF": "v1"},
                 "https://github.com/acme/bioevidence/blob/v1/docs/rules.md", id="action-variables"),
    pytest.param({"BIOEVIDENCE_ACTION_PATH": "/home/runner/work/_actions/acme/bioevidence/v1.2",
                  "GITHUB_SERVER_URL": "https://ghe.example.com/"},
                 "https://ghe.example.com/acme/bioevidence/blob/v1.2/docs/rules.md", id="action-path"),
    pytest.param({"GITHUB_REPOSITORY": "acme/records", "GITHUB_SHA": "abc123"},
                 "https://github.com/acme/records/blob/abc123/docs/rules.md", id="local-action"),
    pytest.param({}, "docs/rules.md", id="outside-github"),
])
def test_rules_url_follows_the_running_revision(env: dict[str, str], url: str) -> None:
    assert rules_url(env) == url
