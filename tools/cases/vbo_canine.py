"""vbo-canine: the peer's VBO dog-name case on our engine, side by side with its committed figures.

Inputs are read in place from bioai-evidence-validator 0.8.0's sdist (``examples/vbo_canine``): the
pinned VBO dog-name projection, the 72 reference cases, the profile (loaded unchanged), and, for the
peer's figures and per-record decisions, ``results/summary.json`` and ``results/decisions.jsonl``.
Records are rebuilt the way the peer's pipeline builds them (an ontology-name assertion and a
candidate resolution per name; every third admitted name seeds ten controlled faults and three
forgeries) and checked to be the peer's own inputs by their canonical hash. Our grounded method is the
built-in source-bytes and ontology grounders plus the VBO name-index grounder of
``vbo_canine_grounder``; "beyond" adds three forgeries 0.8.0's grounder cannot see.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bioevidence import Profile, Report, Validator, load_profile

from .common import CaseResult, CaseUnavailable, example, peer_summary, table
from .vbo_canine_grounder import DogNames, VboNameIndexGrounder, dog_name_grounders, normalized
from .vbo_canine_notes import EXPLAINED, beyond_section, count_codes, count_statuses, notes_section

NAME = "vbo-canine"
FOLDER = "vbo_canine"
COHORTS = ("real_source", "controlled_fault", "trust_boundary")
METHODS = ("schema_only", "aggregate_quality", "full", "grounded")
OURS = ("schema_only", "full", "grounded")  # aggregate_quality: an ablation our engine has no switch for
Mutation = Callable[[dict[str, Any], DogNames], None]


# -- records, as the peer's pipeline builds them ----------------------------------------------------

def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def name_record(names: DogNames, manifest: dict[str, Any], observed: str, profile_id: str, query: str,
                case_id: str) -> dict[str, Any]:
    """A name-to-term mapping: the first candidate as the proposed object, a term assertion, and a
    candidate resolution that supports the statement only when the name has one candidate."""
    candidates = names.candidates(query)
    if not candidates:
        raise ValueError(f"no VBO dog term carries the name {query!r}")
    term = names.terms[candidates[0]]
    unique = len(candidates) == 1
    scope = ["NCBITaxon:9615", "VBO:" + names.release]
    made = {"source_artifact_id": "bioev:vbo-dog-projection", "extraction_method": "deterministic_parser",
            "created_by": {"id": "bioev:vbo-importer", "agent_type": "software"}, "scope": scope}
    assertion = {"id": "bioev:term", "evidence_type": "ontology_name_assertion",
                 "locator": f"term:{term['id']};upstream-line:{term['upstream_line']}",
                 "extracted_text": json.dumps({"query": query, "id": term["id"], "name": term["name"]},
                                              ensure_ascii=False)}
    resolution = {"id": "bioev:resolution",
                  "evidence_type": "unique_label_resolution" if unique else "ambiguous_label_resolution",
                  "locator": "name-index:" + normalized(query),
                  "extracted_text": json.dumps({"candidate_ids": list(candidates),
                                                "matching": "casefold+whitespace; names and EXACT synonyms"})}
    source = {"id": made["source_artifact_id"], "title": "VBO dog-name projection (CC BY 4.0)",
              "source_type": "ontology_snapshot", "uri": "urn:sha256:" + names.sha256,
              "version": names.release + ":dog-name-projection-v1", "retrieved_at": manifest["retrieved_at"],
              "sha256": names.sha256, "observed_sha256": observed}
    lines = [{"id": "bioev:term-line", "direction": "supports", "evidence_item_ids": ["bioev:term"]},
             {"id": "bioev:resolution-line", "direction": "supports" if unique else "neutral",
              "evidence_item_ids": ["bioev:resolution"]}]
    statement = {"id": "bioev:statement-" + case_id, "predicate": "maps_to_ontology_term", "scope": scope,
                 "subject": {"id": "bioev:name-" + _sha(query.encode())[:16], "label": query,
                             "entity_type": "source_name"},
                 "object": {"id": term["id"], "label": term["name"], "entity_type": "ontology_term"},
                 "statement_status": "proposed", "evidence_lines": lines}
    return {"record_id": "bioev:" + case_id, "profile_id": profile_id, "statement": statement,
            "source_artifacts": [source], "adjudications": [], "requested_uses": ["reference_catalog"],
            "evidence_items": [copy.deepcopy({**made, **assertion}), copy.deepcopy({**made, **resolution})]}


def _with_note(record: dict[str, Any]) -> None:
    note = {**copy.deepcopy(record["evidence_items"][0]), "id": "bioev:aux-note", "evidence_type": "curator_note",
            "extraction_method": "manual_curation",
            "extracted_text": "Synthetic auxiliary note for controlled fault injection."}
    record["evidence_items"].append(note)
    record["statement"]["evidence_lines"].append(
        {"id": "bioev:note-line", "direction": "supports", "evidence_item_ids": [note["id"]]})


def _assertion_method(method: str, second: bool = False) -> Mutation:
    def mutate(record: dict[str, Any], _names: DogNames) -> None:
        assertion = record["evidence_items"][0]
        assertion["extraction_method"] = method
        if second:
            extra = {**copy.deepcopy(assertion), "id": "bioev:weak2", "extraction_method": "normalized_string_match"}
            record["evidence_items"].append(extra)
            record["statement"]["evidence_lines"][0]["evidence_item_ids"].append(extra["id"])
        _with_note(record)
    return mutate


def _set(path: tuple[Any, ...], value: Any) -> Mutation:
    def mutate(record: dict[str, Any], _names: DogNames) -> None:
        target: Any = record
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = copy.deepcopy(value)
    return mutate


def _contradiction(record: dict[str, Any], _names: DogNames) -> None:
    record["statement"]["evidence_lines"].append(
        {"id": "bioev:contradiction", "direction": "contradicts", "evidence_item_ids": ["bioev:term"]})


def _falsified_target(record: dict[str, Any], _names: DogNames) -> None:
    record["statement"]["object"] = {"id": "VBO:NOT_A_REAL_TERM", "label": "Synthetic nonexistent target",
                                     "entity_type": "ontology_term"}


def _unpinned(record: dict[str, Any], _names: DogNames) -> None:
    source = record["source_artifacts"][0]
    forged = _sha(b"edited:" + source["sha256"].encode())
    source.update(sha256=forged, observed_sha256=forged, uri="urn:sha256:" + forged)


def _wrong_target(record: dict[str, Any], names: DogNames) -> None:
    query = record["statement"]["subject"]["label"]
    wrong = names.terms[min(set(names.terms) - set(names.candidates(query)))]
    record["statement"]["object"] = {"id": wrong["id"], "label": wrong["name"], "entity_type": "ontology_term"}
    record["evidence_items"][0].update(
        locator=f"term:{wrong['id']};upstream-line:{wrong['upstream_line']}",
        extracted_text=json.dumps({"query": query, "id": wrong["id"], "name": wrong["name"]}, ensure_ascii=False))


def _other_release(record: dict[str, Any], names: DogNames) -> None:
    """Beyond 0.8.0: the record says (consistently) that its mapping is from another VBO release."""
    scope = ["NCBITaxon:9615", "VBO:v2025-01-01"]
    record["statement"]["scope"] = list(scope)
    for item in record["evidence_items"]:
        item["scope"] = list(scope)
    record["source_artifacts"][0]["version"] = "v2025-01-01:dog-name-projection-v1"


def _both(*steps: Mutation) -> Mutation:
    def mutate(record: dict[str, Any], names: DogNames) -> None:
        for step in steps:
            step(record, names)
    return mutate


FAULTS: dict[str, Mutation] = {
    "required_llm_plus_note": _assertion_method("llm_extraction"),
    "required_string_plus_note": _assertion_method("normalized_string_match"),
    "required_mixed_weak_plus_note": _assertion_method("llm_extraction", second=True),
    "weak_unique_resolution": _set(("evidence_items", 1, "extraction_method"), "llm_extraction"),
    "missing_uniqueness": _set(("statement", "evidence_lines", 1, "direction"), "neutral"),
    "source_hash_mismatch": _set(("source_artifacts", 0, "observed_sha256"), "0" * 64),
    "scope_mismatch": _set(("evidence_items", 0, "scope"), ["NCBITaxon:9685"]),
    "dangling_reference": _set(("evidence_items", 0, "source_artifact_id"), "bioev:absent"),
    "explicit_contradiction": _contradiction,
    "withdrawn_statement": _set(("statement", "statement_status"), "superseded"),
}
FORGERIES: dict[str, Mutation] = {"falsified_target": _falsified_target, "wrong_existing_target": _wrong_target,
                                  "unpinned_source": _unpinned}
# Beyond 0.8.0, with what 0.8.0's grounded method gives each (read from its VboGrounder, which checks a
# record only when it cites the pinned projection's hash and never reads a scope or a source version;
# tests/cases/test_vbo_canine.py runs the peer's package on them to confirm).
PROBES: dict[str, tuple[Mutation, str]] = {
    "other_release": (_other_release, "admitted"),
    "unpinned_and_wrong_target": (_both(_unpinned, _wrong_target), "review_required"),
    "unpinned_and_falsified_target": (_both(_unpinned, _falsified_target), "review_required"),
}


@dataclass
class Case:
    case_id: str
    cohort: str
    category: str
    expected: str
    record: dict[str, Any]
    ours: dict[str, str] = field(default_factory=dict)
    codes: list[str] = field(default_factory=list)
    report: Report | None = None


def build_cases(folder: Path, names: DogNames, profile_id: str) -> tuple[list[Case], list[Case]]:
    """The peer's 280 cases (real names, controlled faults, forgeries) and our 48 probes, in its order."""
    manifest = json.loads((folder / "sources" / "manifest.json").read_text(encoding="utf-8"))
    observed = _sha((folder / manifest["projection_file"]).read_bytes())
    references = json.loads((folder / "reference_cases.json").read_text(encoding="utf-8"))
    cases: list[Case] = []
    seeds: list[tuple[str, dict[str, Any]]] = []
    for ref in references:
        if list(names.candidates(ref["query"])) != ref["expected_candidates"]:
            raise CaseUnavailable(f"{ref['case_id']}: the projection's candidates differ from reference_cases.json")
        record = name_record(names, manifest, observed, profile_id, ref["query"], ref["case_id"])
        cases.append(Case(ref["case_id"], "real_source", ref["stratum"], ref["expected_status"], record))
        if ref["expected_status"] == "admitted":
            seeds.append((ref["case_id"], record))
    probes: list[Case] = []

    def derive(case_id: str, record: dict[str, Any], kind: str, mutate: Mutation) -> dict[str, Any]:
        out = copy.deepcopy(record)
        out["record_id"] += ":" + kind
        mutate(out, names)
        return out

    for case_id, record in seeds[::3]:
        cases += [Case(f"{case_id}:{kind}", "controlled_fault", kind, "", derive(case_id, record, kind, mutate))
                  for kind, mutate in FAULTS.items()]
        cases += [Case(f"{case_id}:{kind}", "trust_boundary", kind, "", derive(case_id, record, kind, mutate))
                  for kind, mutate in FORGERIES.items()]
        probes += [Case(f"{case_id}:{kind}", "beyond", kind, peer, derive(case_id, record, kind, mutate))
                   for kind, (mutate, peer) in PROBES.items()]
    return cases, probes


# -- running and counting ---------------------------------------------------------------------------

def peer_decisions(folder: Path) -> dict[str, dict[str, Any]]:
    path = folder / "results" / "decisions.jsonl"
    if not path.is_file():
        raise CaseUnavailable(f"{path} is missing")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["case_id"]: row for row in rows}


def count(rows: list[dict[str, Any]], method: str) -> dict[str, int]:
    """The peer's per-cohort figures (run.py's metrics), from per-record statuses."""
    positive = [r for r in rows if r["expected_status"] == "admitted"]
    negative = [r for r in rows if r["expected_status"] != "admitted"]
    return {"n": len(rows), "should_admit": len(positive), "should_reject": len(negative),
            "false_admission": sum(r[method] == "admitted" for r in negative),
            "false_block": sum(r[method] != "admitted" for r in positive),
            "review": sum(r[method] == "review_required" for r in rows)}


def from_peer(metrics: dict[str, Any]) -> dict[str, int]:
    """The peer's summary.json figures of one cohort and method, named as :func:`count` names ours."""
    return {"n": metrics["n"], "should_admit": metrics["expected_admitted"],
            "should_reject": metrics["expected_non_admitted"], "false_admission": metrics["false_admissions"],
            "false_block": metrics["false_blocks"], "review": metrics["status_counts"].get("review_required", 0)}


def json_shape(figures: dict[str, dict[str, int]]) -> dict[str, Any]:
    """The ``--json`` summary of one engine's grounded figures."""
    real = figures["real_source"]
    return {"real_source": {k: real[k] for k in ("false_admission", "should_reject", "false_block", "should_admit")},
            "controlled_faults": {"admitted": figures["controlled_fault"]["false_admission"],
                                  "n": figures["controlled_fault"]["n"]},
            "trust_boundary": {"admitted": figures["trust_boundary"]["false_admission"],
                               "n": figures["trust_boundary"]["n"]}}


def _cell(k: int, n: int) -> str:
    return f"{k}/{n}" if n else "N/A"


def run(sdist: Path) -> CaseResult:
    folder = example(sdist, FOLDER)
    summary = peer_summary(folder)
    decisions = peer_decisions(folder)
    manifest = json.loads((folder / "sources" / "manifest.json").read_text(encoding="utf-8"))
    profile = load_profile(folder / "profile.yaml")
    with tempfile.TemporaryDirectory(prefix="vbo-canine-") as work:
        grounders, names = dog_name_grounders(folder / manifest["projection_file"], manifest["projection_sha256"],
                                              manifest["release"], Path(work))
        cases, probes = build_cases(folder, names, profile.id)
        strict = verified_variant(folder / "profile.yaml", Path(work))
        validators = {"full": Validator(profile), "grounded": Validator(profile, grounders=grounders),
                      "alone_verified": Validator(strict),
                      "grounded_verified": Validator(strict, grounders=grounders)}
        for case in [*cases, *probes]:
            reports = {method: v.validate(case.record, floats=False) for method, v in validators.items()}
            case.report = reports["grounded"]
            case.ours = {method: r.overall_status for method, r in reports.items()}
            case.ours["schema_only"] = "admitted" if reports["full"].schema_valid else "rejected"
            case.codes = case.report.reason_codes()
        grounder_names = [f"`{g.name}`" + (f", which runs the built-in `{g.ontology.name}`" if isinstance(
            g, VboNameIndexGrounder) and g.ontology is not None else "") for g in grounders]
    missing = sorted(set(decisions) ^ {c.case_id for c in cases})
    if missing:
        raise CaseUnavailable(f"our cases and the peer's decisions.jsonl differ: {missing[:3]}")
    for case in cases:
        case.expected = case.expected or decisions[case.case_id]["expected_status"]
    identical = sum(c.report is not None and c.report.input_sha256 == decisions[c.case_id]["input_sha256"]
                    for c in cases)
    text, ours = _tables(summary, decisions, cases, identical, profile.sha256, names, grounder_names)
    text = "\n\n".join([text, notes_section(summary, decisions, cases), beyond_section(decisions, cases, probes)])
    text = re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
    peer = {cohort: from_peer(summary["cohorts"][cohort]["grounded"]) for cohort in COHORTS}
    shape = {**json_shape(ours), "peer": json_shape(peer)}
    if any(code not in EXPLAINED for case in cases for code in case.codes):
        raise AssertionError("a rule code our engine wrote on the peer's records has no explanation in the notes")
    return CaseResult(NAME, text, shape)


def _tables(summary: dict[str, Any], decisions: dict[str, dict[str, Any]], cases: list[Case], identical: int,
            profile_sha: str, names: DogNames, grounder_names: list[str]) -> tuple[str, dict[str, dict[str, int]]]:
    peer = summary["cohorts"]
    real = sum(c.cohort == "real_source" for c in cases)
    out = [f"# {NAME}: VBO dog names, controlled faults and forged sources (0.8.0 and bioevidence)", "",
           f"Inputs read in place from bioai-evidence-validator {summary['validator_version']}'s sdist, "
           f"`examples/{FOLDER}`: the VBO {names.release} dog-name projection ({len(names.terms)} terms, sha256 "
           f"`{names.sha256[:12]}…`, re-hashed before it is parsed), its {real} "
           "reference names and its `profile.yaml`, loaded unchanged by `load_profile` (sha256 "
           f"{'equal to' if profile_sha == summary['profile_sha256'] else 'DIFFERENT from'} the peer's). Records "
           f"rebuilt here as the peer's pipeline builds them: {len(cases)}; identical to the peer's inputs (the "
           f"canonical `input_sha256` of each in its `results/decisions.jsonl`): {identical}/{len(cases)}.", "",
           "Our methods: *schema_only* is the report's `schema_valid` (the peer's definition); *full* is "
           "`Validator(profile)` with no grounder; *grounded* adds " + " and ".join(grounder_names)
           + " (the name index: `tools/cases/vbo_canine_grounder.py`). The 0.8.0 columns are its committed "
           "`results/summary.json`; \"same\" counts records whose decision equals 0.8.0's in "
           "`results/decisions.jsonl`.", "",
           "## Side by side", ""]
    rows: list[list[Any]] = []
    ours: dict[str, dict[str, int]] = {}
    for cohort in COHORTS:
        members = [c for c in cases if c.cohort == cohort]
        mine = [{"expected_status": c.expected, **c.ours} for c in members]
        for method in METHODS:
            theirs = from_peer(peer[cohort][method])
            figures = count(mine, method) if method in OURS else None
            row: list[Any] = [cohort, method, theirs["n"]]
            for key, of in (("false_admission", "should_reject"), ("false_block", "should_admit"), ("review", "n")):
                row += [_cell(theirs[key], theirs[of]), _cell(figures[key], figures[of]) if figures else "N/A"]
            same = sum(c.ours[method] == decisions[c.case_id][method] for c in members) if figures else None
            rows.append([*row, "N/A" if same is None else f"{same}/{len(members)}"])
            if method == "grounded" and figures:
                ours[cohort] = figures
    out.append(table(["cohort", "method", "n", "false admission 0.8.0", "ours", "false block 0.8.0", "ours",
                      "review 0.8.0", "ours", "same"], rows, right=set(range(2, 10))))
    out += ["", "## Grounded, by category", "",
            "Decisions and the rule codes that decided them (0.8.0: `grounded` and `grounded_reason_codes` in its "
            "decisions.jsonl; ours: the report's error and review codes).", ""]
    detail: list[list[Any]] = []
    for cohort in COHORTS:
        for category in sorted({c.category for c in cases if c.cohort == cohort}):
            members = [c for c in cases if c.cohort == cohort and c.category == category]
            peer_rows = [decisions[c.case_id] for c in members]
            detail.append([cohort, category, len(members), count_statuses(r["grounded"] for r in peer_rows),
                           count_codes(r["grounded_reason_codes"] for r in peer_rows),
                           count_statuses(c.ours["grounded"] for c in members), count_codes(c.codes for c in members)])
    out.append(table(["cohort", "category", "n", "0.8.0", "0.8.0 codes", "ours", "our codes"], detail, right={2}))
    return "\n".join(out), ours


def verified_variant(profile: Path, work: Path) -> Profile:
    """The peer's profile with ``verified_evidence_types`` added to its use (beyond 0.8.0's case)."""
    data = yaml.safe_load(profile.read_text(encoding="utf-8"))
    for contract in data["uses"].values():
        contract["verified_evidence_types"] = list(contract["required_evidence_types"])
    path = work / "profile-verified.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_profile(path)
