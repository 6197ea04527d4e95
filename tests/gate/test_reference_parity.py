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

import hashlib
import json
import os
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bioevidence import Validator
from builders import corpus

pytestmark = pytest.mark.heavy(seconds=50)  # started first under xdist (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]

def _reference_script(report_line: str) -> str:
    """A script for the reference's interpreter: one JSON job a line in ({"profile", "record"}), the
    expression ``report_line`` (over ``report``, its report) printed as one line out."""
    return ("import json, sys\n"
            "from bioevidence_validator.engine import RecordValidator\n"
            "validators = {}\n"
            "for line in sys.stdin:\n"
            "    job = json.loads(line)\n"
            "    v = validators.get(job['profile']) or validators.setdefault(job['profile'], "
            "RecordValidator(profile=job['profile']))\n"
            "    report = v.validate(job['record'])\n"
            f"    print(json.dumps({report_line}))\n")


# Status, decisions and sorted codes: what the first tests compare.
REFERENCE_SIDE = _reference_script(
    '[report["overall_status"], '
    '[[d["use"], d["admission_status"], d["reason_codes"]] for d in report["use_decisions"]], '
    'sorted(f["rule_id"] for f in report["findings"])]')


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


# The reference's findings, where and in what words: one JSON line in, one line out.
REFERENCE_FINDINGS = _reference_script(
    '[[f["rule_id"], f.get("field_path"), f.get("message")] for f in report["findings"]]')

# Rules whose message is 0.8.0's word for word (the others say more: the value, the allowed list, the fix).
SAME_WORDS = frozenset({"BEV004", "BEV006", "BEV007", "BEV008", "BEV009", "BEV013"})


def _cached_reference(python: str, script: str, jobs: list[dict[str, Any]]) -> list[Any]:
    """What ``script`` prints per job in the reference's interpreter, kept in a cache keyed by the jobs, the
    script and the interpreter (the reference never changes: mutation runs, which re-run these tests once per
    mutant, read its answers again instead of spending its validation time on every mutant)."""
    payload = "".join(json.dumps(j, sort_keys=True) + "\n" for j in jobs)
    key = hashlib.sha256(f"{python}\0{script}\0{payload}".encode()).hexdigest()
    cache = Path(tempfile.gettempdir()) / "bioevidence-reference-findings" / f"{key}.json"
    if cache.is_file():
        return list(json.loads(cache.read_text(encoding="utf-8")))
    done = subprocess.run([python, "-c", script], input=payload, capture_output=True, text=True,
                          check=True, timeout=900)
    found = [json.loads(line) for line in done.stdout.splitlines()]
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_suffix(f".{os.getpid()}.part")
    partial.write_text(json.dumps(found), encoding="utf-8")
    partial.replace(cache)
    return found


def _reference_findings(python: str, jobs: list[dict[str, Any]]) -> list[list[list[Any]]]:
    return _cached_reference(python, REFERENCE_FINDINGS, jobs)


def _policy_jobs() -> list[dict[str, Any]]:
    from builders import policy_corpus

    return [{"profile": profile, "record": rec} for profile, rec in policy_corpus()]


def _compare_findings(python: str, jobs: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    """Assert our findings name the fields 0.8.0 names (SCHEMA left out: the two JSON Schema libraries name
    some fields differently) and, for the rules in SAME_WORDS, say it in its words; the rules reached."""
    theirs = _reference_findings(python, jobs)
    assert len(theirs) == len(jobs)
    validators: dict[str, Validator] = {}
    differences: list[Any] = []
    rules: Counter[str] = Counter()
    worded: Counter[str] = Counter()
    for job, their in zip(jobs, theirs, strict=True):
        validator = validators.setdefault(job["profile"], Validator(job["profile"], grounding=False))
        ours = [[f.rule_id, f.field_path, f.message] for f in validator.validate(job["record"]).findings]
        mine = Counter((r, p) for r, p, _ in ours if r != "SCHEMA")
        them = Counter((r, p) for r, p, _ in their if r != "SCHEMA")
        words_mine = Counter((r, m) for r, _, m in ours if r in SAME_WORDS)
        words_them = Counter((r, m) for r, _, m in their if r in SAME_WORDS)
        if mine != them or words_mine != words_them:
            differences.append((json.dumps(job["record"])[:160], sorted(mine - them), sorted(them - mine),
                                sorted(words_mine - words_them), sorted(words_them - words_mine)))
        rules.update(r for r, _ in them)
        worded.update(r for r, _ in words_them)
    assert differences == [], f"{len(differences)} of {len(jobs)} differ; first: {differences[:3]}"
    return rules, worded


def test_contract_findings_name_the_fields_the_reference_names(reference_python: str) -> None:
    """A policy corpus (statement status, adjudications by people and software, extraction methods mixed,
    contradicting lines, scope, observed hashes, evidence types, allowlists, a foreign profile_id, on every
    use of every built-in profile): each finding at 0.8.0's field, in its words where ours are its."""
    rules, worded = _compare_findings(reference_python, _policy_jobs())
    # the corpus reaches every contract rule 0.8.0 has, and the wording check every rule it names
    assert {f"BEV{n:03d}" for n in range(1, 14)} | {"RECORD_INTEGRITY"} <= set(rules), sorted(rules)
    assert set(worded) == SAME_WORDS, sorted(worded)


def test_findings_over_the_mutation_corpus_name_the_fields_the_reference_names(reference_python: str) -> None:
    """The same over the mutation corpus (every field of two records replaced, dropped or given a sibling)."""
    rules, _ = _compare_findings(reference_python, _jobs())
    assert {"RECORD_INTEGRITY", "BEV003", "BEV005", "BEV006", "BEV007"} <= set(rules), sorted(rules)


REFERENCE_ENVELOPE = _reference_script(
    '[report[k] for k in ("profile_id", "schema_version", "input_sha256", "schema_valid", "overall_status")]')


def test_the_report_envelope_agrees_with_the_reference(reference_python: str) -> None:
    """Input hash (0.8.0's canonical JSON, floats included), profile id, schema version, schema validity and
    status: the same as 0.8.0 writes, over the policy corpus and records that are no record at all (the
    profiles' versions differ on purpose: literature-claim is 0.5.0 here, docs/profiles.md)."""
    jobs = _policy_jobs() + [{"profile": "general", "record": value} for value in (None, [], "record", 3,
                                                                                    {"record_id": "x"})]
    theirs = _cached_reference(reference_python, REFERENCE_ENVELOPE, jobs)
    validators: dict[str, Validator] = {}
    ours = []
    for job in jobs:
        validator = validators.setdefault(job["profile"], Validator(job["profile"], grounding=False))
        report = validator.validate(job["record"])
        ours.append([report.profile_id, report.schema_version, report.input_sha256, report.schema_valid,
                     report.overall_status])
    differences = [(json.dumps(j["record"])[:120], t, o) for j, t, o in zip(jobs, theirs, ours, strict=True) if t != o]
    assert differences == [], f"{len(differences)} of {len(jobs)} differ; first: {differences[:3]}"
    assert {row[3] for row in theirs} == {True, False}
