"""vbo-canine: the peer's VBO dog-name case on our engine (tools/cases/vbo_canine.py).

The issue's targets are checked against the peer's figures read from its committed results; the
committed table must be the regenerated one byte for byte; each forgery must be caught by the check
the notes name (so a broken grounder fails here); and what the "beyond" table says 0.8.0 gives the
new forgeries is confirmed by running the peer's own package on them."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bioevidence import Grounder, IntegrityError, Validator, load_profile
from cases import vbo_canine
from cases.common import CaseResult, example, peer_summary
from cases.vbo_canine_grounder import DogNames, VboNameIndexGrounder, dog_name_grounders

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def result(sdist: Path) -> CaseResult:
    return vbo_canine.run(sdist)


@pytest.fixture(scope="module")
def folder(sdist: Path) -> Path:
    return example(sdist, vbo_canine.FOLDER)


@pytest.fixture(scope="module")
def built(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[Grounder], DogNames]]:
    manifest = json.loads((folder / "sources" / "manifest.json").read_text(encoding="utf-8"))
    yield dog_name_grounders(folder / manifest["projection_file"], manifest["projection_sha256"],
                             manifest["release"], tmp_path_factory.mktemp("vbo"))


@pytest.fixture(scope="module")
def cases(folder: Path, built: tuple[list[Grounder], DogNames]) -> dict[str, vbo_canine.Case]:
    names = built[1]
    ours, probes = vbo_canine.build_cases(folder, names, load_profile(folder / "profile.yaml").id)
    return {case.case_id: case for case in [*ours, *probes]}


def _grounded(folder: Path, grounders: list[Grounder]) -> Validator:
    return Validator(load_profile(folder / "profile.yaml"), grounders=grounders)


def test_targets_against_the_peers_committed_figures(result: CaseResult, folder: Path) -> None:
    peer = peer_summary(folder)["cohorts"]
    ours = result.summary
    faults, trust, real = peer["controlled_fault"]["grounded"], peer["trust_boundary"]["grounded"], \
        peer["real_source"]["grounded"]
    assert ours["controlled_faults"] == {"admitted": 0, "n": faults["n"]} and faults["n"] == 160
    assert ours["trust_boundary"] == {"admitted": 0, "n": trust["n"]} and trust["n"] == 48
    assert ours["real_source"]["should_admit"] == real["expected_admitted"]
    assert ours["real_source"]["should_reject"] == real["expected_non_admitted"]
    assert ours["real_source"]["false_block"] <= real["false_blocks"]
    assert ours["real_source"]["false_admission"] <= real["false_admissions"]
    assert ours["peer"] == {
        "real_source": {"false_admission": real["false_admissions"], "should_reject": real["expected_non_admitted"],
                        "false_block": real["false_blocks"], "should_admit": real["expected_admitted"]},
        "controlled_faults": {"admitted": faults["false_admissions"], "n": faults["n"]},
        "trust_boundary": {"admitted": trust["false_admissions"], "n": trust["n"]}}


def test_records_are_the_peers_and_no_difference_is_left_unexplained(result: CaseResult) -> None:
    assert "identical to the peer's inputs (the canonical `input_sha256` of each in its " \
           "`results/decisions.jsonl`): 280/280." in result.table
    assert "sha256 equal to the peer's" in result.table
    assert "**Differences: none.**" in result.table and "(280/280)" in result.table
    assert "| real_source | aggregate_quality | 72 | 0/24 | N/A |" in result.table
    assert "With it, the decision is the grounded one on 280/280 records." in result.table


def test_committed_table_is_the_regenerated_one(result: CaseResult) -> None:
    committed = REPO / "docs" / "cases" / f"{vbo_canine.NAME}.md"
    assert committed.read_text(encoding="utf-8") == result.table, \
        "regenerate it: .venv/bin/python tools/reproduce.py vbo-canine --write"


def _codes_at(report: Any) -> set[tuple[str, str]]:
    return {(f.rule_id, f.field_path) for f in report.findings}


def test_each_forgery_is_caught_by_the_check_the_notes_name(folder: Path, built: tuple[list[Grounder], DogNames],
                                                              cases: dict[str, vbo_canine.Case]) -> None:
    grounders, _names = built
    grounded = _grounded(folder, grounders)
    seed = next(c for c in cases.values() if c.cohort == "real_source" and c.expected == "admitted")
    real = grounded.validate(seed.record)
    assert real.overall_status == "admitted" and real.verified == {"bioev:term", "bioev:resolution"}

    def check(kind: str) -> Any:
        return grounded.validate(cases[f"{seed.case_id}:{kind}"].record)

    wrong = check("wrong_existing_target")
    assert wrong.overall_status == "rejected"
    assert ("BEV017", "$.statement.object.id") in _codes_at(wrong)
    fixes = [f.fix.value for f in wrong.findings if f.fix is not None and f.field_path == "$.statement.object.id"]
    assert fixes == [seed.record["statement"]["object"]["id"]]
    falsified = check("falsified_target")
    assert {("BEV016", "$.statement.object.id"), ("BEV017", "$.evidence_items[0].extracted_text")} \
        <= _codes_at(falsified)
    unpinned = check("unpinned_source")
    assert unpinned.overall_status == "review_required"
    assert _codes_at(unpinned) == {("BEV015", "$.source_artifacts[0].sha256")}
    note = check("required_llm_plus_note")
    assert ("BEV015", "$.evidence_items[2]") in _codes_at(note)
    other = check("other_release")
    assert other.overall_status == "rejected"
    assert {("BEV017", "$.statement.scope[1]"), ("BEV017", "$.source_artifacts[0].version")} == _codes_at(other)
    both = check("unpinned_and_wrong_target")
    assert both.overall_status == "rejected" and ("BEV017", "$.statement.object.id") in _codes_at(both)

    # The built-in grounders alone say nothing about the wrong target itself: it is the case's name index that
    # catches it. Alone, the ontology grounder reads the release tag in the scope as the pinned release (it read
    # it as a nonexistent term, BEV016 on every record, before the case found it) and another release as BEV017.
    ontology = next(g.ontology for g in grounders if isinstance(g, VboNameIndexGrounder))
    assert ontology is not None
    alone = _grounded(folder, [grounders[0], ontology])
    assert _codes_at(alone.validate(seed.record)) == set()
    assert _codes_at(alone.validate(cases[f"{seed.case_id}:wrong_existing_target"].record)) == set()
    other_alone = alone.validate(cases[f"{seed.case_id}:other_release"].record)
    assert ("BEV017", "$.statement.scope[1]") in _codes_at(other_alone)


def test_the_projection_is_rehashed_before_it_is_parsed(folder: Path, tmp_path: Path) -> None:
    manifest = json.loads((folder / "sources" / "manifest.json").read_text(encoding="utf-8"))
    tampered = tmp_path / "vbo-dogs.json"
    tampered.write_bytes((folder / manifest["projection_file"]).read_bytes().replace(b"Broholmer", b"Brohulmer", 1))
    with pytest.raises(IntegrityError):
        dog_name_grounders(tampered, manifest["projection_sha256"], manifest["release"], tmp_path / "work")


PEER_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pipeline import DogNames, VboGrounder
from bioevidence_validator.engine import RecordValidator
from bioevidence_validator.grounding import SnapshotStore, SourceBytesGrounder
names = DogNames()
pinned = names.root / "sources" / "vbo-dogs.json"
store = SnapshotStore({names.manifest["projection_sha256"]: pinned.read_bytes})
grounders = [SourceBytesGrounder(store), VboGrounder(names)]
validator = RecordValidator(profile=names.root / "profile.yaml", grounders=grounders)
for line in sys.stdin:
    report = validator.validate(json.loads(line))
    print(json.dumps([report["overall_status"], sorted({f["rule_id"] for f in report["findings"]})]))
"""


@pytest.fixture(scope="module")
def reference_python() -> str:
    python = os.environ.get("BIOEVIDENCE_REFERENCE_PYTHON")
    if not python or not Path(python).exists():
        message = "set BIOEVIDENCE_REFERENCE_PYTHON to a Python with bioai-evidence-validator==0.8.0 installed"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return python


def test_what_the_beyond_table_says_of_0_8_0_is_what_0_8_0_does(reference_python: str, folder: Path,
                                                                 cases: dict[str, vbo_canine.Case]) -> None:
    chosen = [c for c in cases.values() if c.cohort in ("beyond", "trust_boundary")]
    decisions = vbo_canine.peer_decisions(folder)
    run = subprocess.run([reference_python, "-B", "-c", PEER_SCRIPT, str(folder)], check=True, text=True,
                         capture_output=True, timeout=120, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                         input="".join(json.dumps(c.record) + "\n" for c in chosen))
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(answers) == len(chosen) == 96
    for case, (status, _codes) in zip(chosen, answers, strict=True):
        # the harness reproduces the peer's committed decisions on its own forgeries ...
        if case.cohort == "trust_boundary":
            assert status == decisions[case.case_id]["grounded"], case.case_id
        # ... and gives what the table states on ours
        else:
            assert status == vbo_canine.PROBES[case.category][1], case.case_id
