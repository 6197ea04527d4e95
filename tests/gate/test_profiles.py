"""Profiles: discovered built-ins, files by path, and strict keys (configuration errors exit 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.errors import ConfigurationError
from bioevidence.gate.profiles import builtin_profiles, load_profile

REPO = Path(__file__).resolve().parents[2]

GOOD = """id: lab
version: "1"
description: A lab's own profile.
predicates: []
subject_types: []
object_types: []
uses:
  knowledge_base:
    required_evidence_types: []
    require_human_acceptance: false
    allow_llm_only: true
    allow_string_match_only: false
"""


def test_builtins_are_the_yaml_files_of_the_profiles_folder() -> None:
    on_disk = sorted(p.stem for p in (REPO / "profiles").glob("*.yaml"))
    assert sorted(builtin_profiles()) == on_disk
    assert {"general", "literature-claim", "dataset-label"} <= set(on_disk)
    for name in on_disk:
        assert load_profile(name).id == name


def test_a_profile_file_by_path_and_its_hash(tmp_path: Path) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text(GOOD)
    profile = load_profile(path)
    assert profile.id == "lab" and profile.uses["knowledge_base"].allow_llm_only is True
    import hashlib

    assert profile.sha256 == hashlib.sha256(GOOD.encode()).hexdigest()


BAD = {
    "unknown-key": GOOD + "extra: 1\n",
    "missing-key": GOOD.replace("object_types: []\n", ""),
    "string-boolean": GOOD.replace("allow_llm_only: true", "allow_llm_only: 'yes'"),
    "duplicate-key": GOOD + "id: again\n",
    "blank-id": GOOD.replace("id: lab", "id: ' '"),
    "repeated-entry": GOOD.replace("predicates: []", "predicates: [a, a]"),
    "unknown-use-key": GOOD.replace("    allow_llm_only: true\n", "    allow_llm_only: true\n    weight: 2\n"),
    "no-uses": GOOD.split("uses:")[0] + "uses: {}\n",
    "verified-not-required": GOOD.replace("    allow_string_match_only: false\n",
                                          "    allow_string_match_only: false\n    verified_evidence_types: [x]\n"),
    "not-a-mapping": "- a\n- b\n",
    "unknown-grounder-key": GOOD + "grounders:\n  magic: true\n",
}


@pytest.mark.parametrize("text", list(BAD.values()), ids=list(BAD))
def test_bad_profiles_are_configuration_errors(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigurationError, match="profile"):
        load_profile(path)
    record = tmp_path / "r.json"
    record.write_text("{}")
    result = CliRunner().invoke(cli, ["validate", str(record), "--profile", str(path)])
    assert result.exit_code == 3
    assert json.loads(result.stderr)["error"] == "configuration_error"


def test_profiles_command_lists_every_builtin_as_table_and_json() -> None:
    table = CliRunner().invoke(cli, ["profiles"])
    assert table.exit_code == 0 and "use training_data: any supporting evidence; human acceptance" in table.stdout
    data = json.loads(CliRunner().invoke(cli, ["profiles", "--format", "json"]).stdout)
    assert sorted(p["id"] for p in data) == sorted(builtin_profiles())
    assert all(len(p["sha256"]) == 64 for p in data)


def test_rules_and_schema_commands() -> None:
    from bioevidence.gate.rules import CATALOGUE

    rules = json.loads(CliRunner().invoke(cli, ["rules", "--format", "json"]).stdout)
    assert [r["code"] for r in rules] == [r.code for r in CATALOGUE]
    schema = json.loads(CliRunner().invoke(cli, ["schema"]).stdout)
    assert schema["required"] == ["record_id", "profile_id", "statement", "source_artifacts", "evidence_items",
                                  "requested_uses"]


@pytest.mark.parametrize("command", ["validate", "profiles", "rules", "schema"])
def test_help_has_examples(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0 and "Examples:" in result.stdout
