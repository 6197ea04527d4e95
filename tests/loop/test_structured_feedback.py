"""Issue 24 item 14: the Python API a newcomer reaches for.

``bioevidence.load_record(path)`` reads a record as strictly as ``validate`` does, ``validate()``
takes a path, and ``revise()`` hands the proposer each feedback line with its structured fix, so a
proposer that edits records applies the fix instead of parsing prose (on the CL 2026-06-08 release).
"""

from __future__ import annotations

import copy
import json
import pickle
import re
from pathlib import Path
from typing import Any

import pytest

import bioevidence
from bioevidence import Feedback, GrounderOptions, InputError, Validator, build_grounders, revise

REPO = Path(__file__).resolve().parents[2]
LABELS = REPO / "examples" / "labels"


def test_load_record_reads_json_and_yaml_strictly(tmp_path: Path) -> None:
    path = LABELS / "02_wrong_name.json"
    assert bioevidence.load_record(path) == json.loads(path.read_text(encoding="utf-8"))
    import yaml

    as_yaml = tmp_path / "record.yaml"
    as_yaml.write_text(yaml.safe_dump(json.loads(path.read_text(encoding="utf-8"))), encoding="utf-8")
    assert bioevidence.load_record(as_yaml) == bioevidence.load_record(path)
    twice = tmp_path / "twice.json"
    twice.write_text('{"record_id": "a", "record_id": "b"}', encoding="utf-8")
    with pytest.raises(InputError, match="duplicate key") as caught:
        bioevidence.load_record(twice)
    assert caught.value.file == str(twice)
    with pytest.raises(InputError, match="one record per line"):
        bioevidence.load_record(tmp_path / "batch.jsonl")


def test_validate_takes_a_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BIOEVIDENCE_HOME", str(tmp_path))
    by_path = bioevidence.validate(LABELS / "01_b_cell.json", grounding=False)
    by_value = bioevidence.validate(bioevidence.load_record(LABELS / "01_b_cell.json"), grounding=False)
    assert by_path.to_dict()["use_decisions"] == by_value.to_dict()["use_decisions"]
    assert by_path.input_sha256 == by_value.input_sha256


def _set(record: dict[str, Any], path: str, value: Any) -> None:
    """Apply a fix at a ``$.a.b[0].c`` path (what a proposer that edits records does)."""
    parts = [int(p) if p.isdigit() else p for p in re.findall(r"[^.\[\]$]+", path)]
    target: Any = record
    for part in parts[:-1]:
        target = target[part]
    target[parts[-1]] = value


def test_revise_hands_the_proposer_the_structured_fix(shared_data: Path) -> None:
    grounders = build_grounders(GrounderOptions(ontologies=(shared_data / "references" / "cl_2026-06-08.obo.gz",),
                                                term_roots={"cell_type": "CL:0000000"}))
    validator = Validator("cell-type", grounders=grounders)
    wrong = bioevidence.load_record(LABELS / "02_wrong_name.json")  # CL:0000236 labelled 'T cell'
    told: list[list[str]] = []

    def propose(feedback: list[str]) -> dict[str, Any]:
        told.append(list(feedback))
        record = copy.deepcopy(wrong)
        for line in feedback:
            assert isinstance(line, Feedback) and isinstance(line, str)
            if line.fix is not None and line.fix.action == "replace":
                _set(record, line.fix.field_path, line.fix.value)
        return record

    attempts = revise(propose, validator)
    assert [a.outcome for a in attempts] == ["feedback", "admitted"]
    (line,) = told[1]
    assert line.rule_id == "BEV017" and line.field_path == "$.statement.object.label"
    assert line.fix is not None and line.fix.field_path == "$.statement.object.label" and line.fix.value == "B cell"
    assert attempts[1].record is not None and attempts[1].record["statement"]["object"]["label"] == "B cell"
    # the line says its detail once, after the instruction
    assert line.endswith("-- fix: set the label to B cell (or cite CL:0000084 if 'T cell' was meant)"), line
    assert line.count("CL:0000084 if") == 1
    assert pickle.loads(pickle.dumps(line)).fix == line.fix  # travels to a worker process intact
