"""Parity with bioai-evidence-validator 0.8.0: the same record gets the same decisions and rule codes.

One difference is ours on purpose (safe by default): ``literature-claim`` runs the negation cue, so a
negated finding offered as support goes to review (BEV022) where 0.8.0 admits it; ``--no-cues``
(``CueChecker(enabled=False)``) gives 0.8.0's decision. The mutation corpus holds no such record; the
last test pins the difference on one.

The reference runs in its own virtual environment (``$BIOEVIDENCE_REFERENCE_PYTHON``, set up by
``.ci/run`` with ``pip install bioai-evidence-validator==0.8.0``). Outside CI the test skips when that
interpreter is not configured; under CI it fails instead.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bioevidence import Validator
from builders import corpus

pytestmark = pytest.mark.heavy(seconds=50)  # started first under xdist (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]

# Runs inside the reference's interpreter: one JSON line in ({"profile", "record"}), one line out.
REFERENCE_SIDE = r"""
import json, sys
from bioevidence_validator.engine import RecordValidator

validators = {}
for line in sys.stdin:
    job = json.loads(line)
    v = validators.get(job["profile"]) or validators.setdefault(job["profile"], RecordValidator(profile=job["profile"]))
    report = v.validate(job["record"])
    print(json.dumps([report["overall_status"],
                      [[d["use"], d["admission_status"], d["reason_codes"]] for d in report["use_decisions"]],
                      sorted(f["rule_id"] for f in report["findings"])]))
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


def _jobs() -> list[dict[str, Any]]:
    jobs: list[dict[str, Any]] = []
    for path in sorted((REPO / "examples" / "records").glob("*.json")):
        rec = json.loads(path.read_text())
        jobs.append({"profile": rec["profile_id"], "record": rec})
    for candidate in corpus():
        profile = candidate.get("profile_id") if isinstance(candidate, dict) else None
        if not isinstance(profile, str) or profile not in {"general", "dataset-label", "literature-claim"}:
            profile = "general"
        jobs.append({"profile": profile, "record": candidate})
    return jobs


def _ours(jobs: list[dict[str, Any]]) -> list[Any]:
    validators: dict[str, Validator] = {}
    out = []
    for job in jobs:
        # --no-grounding: 0.8.0 never checks quotes without a snapshot folder (our default sends them to review)
        validator = validators.setdefault(job["profile"], Validator(job["profile"], grounding=False))
        report = validator.validate(job["record"])
        out.append([report.overall_status,
                    [[d.use, d.admission_status, d.reason_codes] for d in report.use_decisions],
                    sorted(f.rule_id for f in report.findings)])
    return out


def test_same_decisions_and_codes_as_the_reference_over_a_mutation_corpus(reference_python: str) -> None:
    jobs = _jobs()
    done = subprocess.run([reference_python, "-c", REFERENCE_SIDE], input="".join(json.dumps(j) + "\n" for j in jobs),
                          capture_output=True, text=True, check=True, timeout=900)
    theirs = [json.loads(line) for line in done.stdout.splitlines()]
    ours = _ours(jobs)
    assert len(theirs) == len(ours) == len(jobs)
    differences = [(json.dumps(j["record"])[:200], t, o) for j, t, o in zip(jobs, theirs, ours, strict=True) if t != o]
    assert differences == [], f"{len(differences)} of {len(jobs)} differ; first: {differences[:3]}"
    statuses = {t[0] for t in theirs}
    assert statuses == {"admitted", "review_required", "rejected"}


@pytest.fixture(scope="module")
def reference_sdist() -> Path:
    folder = os.environ.get("BIOEVIDENCE_REFERENCE_SDIST")
    if not folder or not (Path(folder) / "examples").is_dir():
        message = "set BIOEVIDENCE_REFERENCE_SDIST to the unpacked bioai-evidence-validator 0.8.0 sdist"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return Path(folder)


def test_reference_example_records_get_the_same_status_and_codes(reference_python: str,
                                                                  reference_sdist: Path) -> None:
    examples = reference_sdist / "examples"
    jobs: list[dict[str, Any]] = []
    for folder in ("general", "literature_claim", "dataset_label", "custom_profile"):
        for path in sorted((examples / folder).glob("*.json")):
            rec = json.loads(path.read_text())
            profile = str(examples / "custom_profile" / "assay.yaml") if folder == "custom_profile" \
                else rec["profile_id"]
            jobs.append({"profile": profile, "record": rec})
    assert len(jobs) >= 6
    done = subprocess.run([reference_python, "-c", REFERENCE_SIDE], input="".join(json.dumps(j) + "\n" for j in jobs),
                          capture_output=True, text=True, check=True, timeout=300)
    theirs = [json.loads(line) for line in done.stdout.splitlines()]
    assert theirs == _ours(jobs)
    assert {t[0] for t in theirs} == {"admitted", "review_required", "rejected"}


def test_a_negated_quote_is_our_one_safer_default(reference_python: str) -> None:
    """Safe by default: a negated finding offered as support for a positive literature claim goes to review
    (BEV022); 0.8.0 admits it, and ``--no-cues`` (``CueChecker(enabled=False)``) gives 0.8.0's decision."""
    from bioevidence.gate.grounders.cues import CueChecker
    from builders import record

    negated = record("literature-claim")
    negated["evidence_items"][0]["extracted_text"] = "BRAF V600E was not associated with melanoma in this cohort."
    done = subprocess.run([reference_python, "-c", REFERENCE_SIDE],
                          input=json.dumps({"profile": "literature-claim", "record": negated}) + "\n",
                          capture_output=True, text=True, check=True, timeout=300)
    (theirs,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert theirs[0] == "admitted"
    ours = Validator("literature-claim", grounding=False).validate(negated)
    assert ours.overall_status == "review_required" and ours.reason_codes() == ["BEV022"]
    plain = Validator("literature-claim", grounding=False, checks=[CueChecker(enabled=False)]).validate(negated)
    assert [plain.overall_status, [[d.use, d.admission_status, d.reason_codes] for d in plain.use_decisions],
            sorted(f.rule_id for f in plain.findings)] == theirs
