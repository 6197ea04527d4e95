"""Case ``clinvar-germline``: the peer's ClinVar germline benchmark on our engine.

The peer's pinned sample (5,026 ClinVar variants, 2023-09 submissions, 2026-09 outcomes), its
profile and its committed results are read in place from its sdist. Records are built by the
method of its importer (:mod:`cases.clinvar_germline_grounder`) and validated by
:class:`bioevidence.Validator` with the peer's ``profile.yaml`` loaded unchanged, without and with
grounding (the source-bytes grounder from :func:`bioevidence.build_grounders` over a store of the
pinned sample, and this case's ClinVar-snapshot grounder). Sections: A policy reproduction against
NCBI's 2023-09 review status, B three-year stability, C/D controlled faults and trust-boundary
forgeries, then what our engine checks beyond 0.8.0.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bioevidence import GrounderOptions, Profile, SnapshotStore, Validator, build_grounders, load_profile

from .clinvar_germline_grounder import (
    BEYOND,
    FAULTS,
    TRUST_BOUNDARY,
    USES,
    ClinVarSnapshotGrounder,
    Record,
    Sample,
    build_record,
    line_direction,
    outcome,
    perturb,
)
from .common import CaseResult, example, peer_summary, rate, table

NAME = "clinvar-germline"
SEEDS = 16
STARS = {"no_criteria": 0, "single_submitter": 1, "multiple_submitters": 2, "expert_panel": 3, "practice_guideline": 4}
MIN_STARS = {"research_summary": 1, "clinical_reference": 2, "expert_reference": 3}
COHORTS = ("controlled_fault", "trust_boundary")


def ncbi(stratum: str, use: str) -> bool:
    """Whether NCBI's 2023-09 review status admits the variant for the use (conflicting: never)."""
    return stratum in STARS and STARS[stratum] >= MIN_STARS[use]


@contextmanager
def pinned_store(sample: Sample) -> Iterator[Path]:
    """A snapshot folder holding the sample under its content address: a symbolic link
    ``<sha256>.jsonl.gz`` to the peer's file (read in place, never copied), in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="clinvar-store-") as folder:
        os.symlink(sample.gz_path.resolve(), Path(folder) / f"{sample.sha256}.jsonl.gz")
        yield Path(folder)


def grounders_for(folder: Path, sha256: str) -> list[Any]:
    """Source bytes (built by the public options) and the ClinVar-snapshot grounder, on one folder."""
    return [*build_grounders(GrounderOptions(snapshot_dir=folder)),
            ClinVarSnapshotGrounder(SnapshotStore(folder), sha256)]


@dataclass(frozen=True)
class Row:
    """One fault or forgery: what schema-only, full and full-with-grounding validation decided."""

    case_id: str
    cohort: str
    category: str
    expected: str
    status: dict[str, str]
    codes: dict[str, list[str]]


def run(sdist: Path) -> CaseResult:
    folder = example(sdist, "clinvar_germline")
    peer = peer_summary(folder)
    sample = Sample.load(folder)
    profile = load_profile(folder / "profile.yaml")
    with pinned_store(sample) as store, tempfile.TemporaryDirectory(prefix="clinvar-profile-") as scratch:
        data = measure(sample, profile, store, verified_profile(folder, Path(scratch)))
    data["peer_rows"] = [json.loads(line) for line in
                         (folder / "results" / "faults.jsonl").read_text(encoding="utf-8").splitlines() if line]
    with (folder / "results" / "divergences.csv").open(encoding="utf-8", newline="") as handle:
        data["peer_divergences"] = {(r["variation_id"], r["use"]): r["reason_codes"] or "-"
                                    for r in csv.DictReader(handle)}
    n = len(sample.cases)
    summary = {"uses": {u: {"agreement": data["agreement"][u], "n": n} for u in USES},
               "controlled_faults": admitted(data["rows"], "controlled_fault"),
               "trust_boundary": admitted(data["rows"], "trust_boundary"), "peer": peer_shape(peer)}
    return CaseResult(NAME, render(peer, profile, sample, data), summary)


def admitted(rows: list[Row], cohort: str, method: str = "grounded") -> dict[str, int]:
    chosen = [r for r in rows if r.cohort == cohort]
    return {"admitted": sum(r.status[method] == "admitted" for r in chosen), "n": len(chosen)}


def peer_shape(peer: dict[str, Any]) -> dict[str, Any]:
    policy, faults = peer["policy_reproduction"], peer["faults"]
    grounded = {c: {"admitted": faults[c]["grounded"]["false_admissions"], "n": faults[c]["grounded"]["n"]}
                for c in COHORTS}
    return {"uses": {u: {"agreement": policy[u]["agreement"], "n": policy[u]["n"]} for u in USES},
            "controlled_faults": grounded["controlled_fault"], "trust_boundary": grounded["trust_boundary"]}


def verified_profile(folder: Path, scratch: Path) -> Profile:
    """0.8.0's profile with each use's required evidence types also listed in ``verified_evidence_types``
    (BEV020: they count only through items a grounder verified)."""
    raw = yaml.safe_load((folder / "profile.yaml").read_text(encoding="utf-8"))
    for use in raw["uses"].values():
        use["verified_evidence_types"] = list(use["required_evidence_types"])
    path = scratch / "profile-verified.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return load_profile(path)


def measure(sample: Sample, profile: Profile, store: Path, strict: Profile) -> dict[str, Any]:
    """Every validation of the case: the 5,026 real records (without and with grounding, with 0.8.0's
    profile and with ``strict``), the faults and forgeries, the meaning checks forced on, and grounding
    against a missing or tampered sample."""
    full, grounded = Validator(profile), Validator(profile, grounders=grounders_for(store, sample.sha256))
    strict_validators = {"without grounding": Validator(strict),
                         "with grounding": Validator(strict, grounders=grounders_for(store, sample.sha256))}
    strict_admitted: dict[str, Counter[str]] = {k: Counter() for k in strict_validators}
    decisions: list[tuple[dict[str, Any], Record, dict[str, str]]] = []
    divergences: dict[tuple[str, str], str] = {}
    codes: dict[str, Counter[str]] = {"full": Counter(), "grounded": Counter()}
    changed = verified = items = 0
    for case in sample.cases:
        record = build_record(case, sample)
        plain, checked = full.validate(record, floats=False), grounded.validate(record, floats=False)
        status = {d.use: d.admission_status for d in plain.use_decisions}
        changed += [(d.admission_status, d.reason_codes) for d in checked.use_decisions] != \
            [(d.admission_status, d.reason_codes) for d in plain.use_decisions]
        for name, report in (("full", plain), ("grounded", checked)):
            codes[name].update({f"{f.rule_id} ({f.severity})" for f in report.findings})
        verified += len(checked.verified)
        items += len(record["evidence_items"])
        decisions.append((case, record, status))
        for name, validator in strict_validators.items():
            report = validator.validate(record, floats=False)
            strict_admitted[name].update(d.use for d in report.use_decisions if d.admission_status == "admitted")
            strict_admitted[name].update(f"{c} (reason)" for c in report.reason_codes())
        for d in plain.use_decisions:
            if (d.admission_status == "admitted") != ncbi(case["stratum"], d.use):
                divergences[(case["variation_id"], d.use)] = ";".join(d.reason_codes) or "-"
    rows: list[Row] = []

    def add(record: Record, case_id: str, cohort: str, category: str, expected: str) -> None:
        plain, checked = full.validate(record, floats=False), grounded.validate(record, floats=False)
        rows.append(Row(case_id, cohort, category, expected,
                        {"schema_only": "admitted" if plain.schema_valid else "rejected",
                         "full": plain.overall_status, "grounded": checked.overall_status},
                        {"full": plain.reason_codes(), "grounded": checked.reason_codes()}))

    everywhere = [(c, r) for c, r, s in decisions if all(v == "admitted" for v in s.values())]
    seeds = everywhere[::max(1, len(everywhere) // SEEDS)][:SEEDS]
    dissent = [(c, r) for c, r, _ in decisions if c["stratum"] in ("expert_panel", "practice_guideline")
               and any(x["direction"] == "contradicts" for x in r["statement"]["evidence_lines"])]
    chosen = {"fabricated_expert_review": [(c, r) for c, r, _ in decisions if c["stratum"] == "no_criteria"][:SEEDS],
              "omitted_dissent": dissent[:SEEDS]}
    for cohort, kinds in (("controlled_fault", FAULTS), ("trust_boundary", TRUST_BOUNDARY), ("beyond", BEYOND)):
        for kind, spec in kinds.items():
            expected = spec[0] if isinstance(spec, tuple) else spec
            for case, record in chosen.get(kind, seeds):
                add(perturb(record, kind), f"{case['variation_id']}:{kind}", cohort, kind, expected)
    return {"decisions": [(c, s) for c, _, s in decisions], "divergences": divergences, "changed": changed,
            "agreement": {u: sum((s[u] == "admitted") == ncbi(c["stratum"], u) for c, _, s in decisions) for u in USES},
            "codes": codes, "verified": verified, "items": items, "rows": rows, "strict": strict_admitted,
            "checks": meaning_checks(profile, [r for _, r, _ in decisions]),
            "fail_closed": fail_closed(sample, profile, [r for _, r in seeds])}


def meaning_checks(profile: Profile, records: list[Record]) -> dict[str, Counter[str]]:
    """Reason codes on the real records with the cues forced on, and with the direction check required."""
    out: dict[str, Counter[str]] = {}
    for name, options in (("`--cues` (negation, animal)", GrounderOptions(cues=True)),
                          ("`--direction required`", GrounderOptions(direction="required"))):
        validator = Validator(profile, grounders=build_grounders(options))
        out[name] = Counter(code for record in records
                            for code in validator.validate(record, floats=False).reason_codes())
    return out


def fail_closed(sample: Sample, profile: Profile, seeds: list[Record]) -> dict[str, Counter[str]]:
    """The seeds grounded against a store without the sample, and against one whose file named for the
    sample's hash holds other bytes: statuses and reason codes."""
    out: dict[str, Counter[str]] = {}
    for name, content in (("the sample is not pinned", None),
                          ("the pinned file holds other bytes", gzip.compress(b'{"variation_id": "0"}\n', mtime=0))):
        with tempfile.TemporaryDirectory(prefix="clinvar-store-") as raw:
            if content is not None:
                (Path(raw) / f"{sample.sha256}.jsonl.gz").write_bytes(content)
            validator = Validator(profile, grounders=grounders_for(Path(raw), sample.sha256))
            reports = [validator.validate(record, floats=False) for record in seeds]
            out[name] = Counter([r.overall_status for r in reports] + [c for r in reports for c in r.reason_codes()])
    return out


def stability(cases: list[dict[str, Any]]) -> str:
    """Destabilized (conflicting or downgraded by 2026-09) among evaluable outcomes, Wilson 95%."""
    counts = Counter(outcome(c["clinvar_2026_09"]["classification"] if c["clinvar_2026_09"] else None) for c in cases)
    events = counts["conflicting"] + counts["downgraded"]
    return rate(events, events + counts["stable_plp"])


def peer_rate(stats: dict[str, Any]) -> str:
    return rate(stats["destabilized"], stats["evaluable"])


def counted(counter: Counter[str] | dict[str, int]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in sorted(counter.items())) or "none"


def explain(case: dict[str, Any], codes: str) -> str:
    """Why 0.8.0's rules (and ours) decide a variant differently from NCBI."""
    dissent = [s for s in case["submissions"] if line_direction(s["ClinicalSignificance"]) == "contradicts"]
    if codes == "BEV004" and case["stratum"] in ("expert_panel", "practice_guideline"):
        return "BEV004: dissenting lab submissions NCBI lets the expert review override"
    if codes == "BEV004" and dissent and all(s["ReviewStatus"] == "no assertion criteria provided" for s in dissent):
        return "BEV004: a dissenting submission without assertion criteria, which NCBI ignores"
    if codes == "-":
        neutral = sorted({s["ClinicalSignificance"] for s in case["submissions"]
                          if line_direction(s["ClinicalSignificance"]) == "neutral"})
        return f"looser: the only other submission is {', '.join(neutral)} (a neutral line), NCBI counts a conflict"
    return (f"{codes}: NCBI's summary counts {case['clinvar_2023_09']['number_submitters']} submitters, the "
            f"release's submission file lists {len(case['submissions'])}")


def render(peer: dict[str, Any], profile: Profile, sample: Sample, data: dict[str, Any]) -> str:
    policy, n = peer["policy_reproduction"], len(sample.cases)
    decisions: list[tuple[dict[str, Any], dict[str, str]]] = data["decisions"]
    ours_div: dict[tuple[str, str], str] = data["divergences"]
    peer_div: dict[tuple[str, str], str] = data["peer_divergences"]
    rows: list[Row] = data["rows"]
    by_id = {c["variation_id"]: c for c, _ in decisions}
    out = [f"# ClinVar germline classifications: 0.8.0's case on bioevidence (`{NAME}`)\n\n",
           "Read in place from bioai-evidence-validator 0.8.0's sdist, `examples/clinvar_germline/`: the pinned "
           f"sample `{sample.manifest['projection_file']}` ({n:,} variants; decompressed SHA-256 "
           f"`{sample.sha256[:12]}…`, as its manifest says), `profile.yaml` (loaded unchanged by `load_profile`; "
           f"SHA-256 `{profile.sha256[:12]}…`, "
           f"{'the same bytes' if profile.sha256 == peer['profile_sha256'] else 'NOT the bytes'} 0.8.0's summary "
           "names) and 0.8.0's committed `results/` (its columns below). One record per variant, built by the method "
           "of 0.8.0's importer (one item per 2023-09 submission, typed by its review status and cited by the line its "
           "classification gives; two derived aggregates). Grounding: `source-bytes` from `build_grounders("
           "GrounderOptions(snapshot_dir=…))` over a folder holding the sample under its content address, and "
           "`clinvar-snapshot` "
           "(`tools/cases/clinvar_germline_grounder.py`, the public grounder API), which recomputes each record's "
           "evidence from the pinned bytes. Regenerate: `.venv/bin/python tools/reproduce.py clinvar-germline`.\n\n",
           "## A. Policy reproduction against NCBI's 2023-09 review status\n\n"]
    body = []
    for use in USES:
        p = policy[use]
        ours_admitted = sum(s[use] == "admitted" for _, s in decisions)
        stricter = sum(1 for (v, u) in ours_div if u == use and ncbi(by_id[v]["stratum"], u))
        body.append([f"`{use}`", f"{n:,}", f"{p['ncbi_admitted']:,}", f"{p['agreement']:,}",
                     f"{data['agreement'][use]:,}", f"{p['validator_admitted']:,}", f"{ours_admitted:,}",
                     p["validator_stricter"], stricter, p["validator_looser"],
                     sum(1 for (_, u) in ours_div if u == use) - stricter])
    out.append(table(["Use", "n", "NCBI admitted", "agreement 0.8.0", "agreement ours", "admitted 0.8.0",
                      "admitted ours", "stricter 0.8.0", "stricter ours", "looser 0.8.0", "looser ours"],
                     body, set(range(1, 11))))
    same = sum(1 for key, codes in ours_div.items() if peer_div.get(key) == codes)
    reasons = Counter(explain(by_id[v], codes) for (v, _), codes in ours_div.items())
    out.append(f"\nDivergences from NCBI, per variant and use: ours {len(ours_div)}, 0.8.0's `divergences.csv` "
               f"{len(peer_div)}; {same} are the same variant, use and reason codes. Every one, by cause (computed "
               "from the sample):\n\n")
    out.append(table(["cause", "variant × use"], [[k, v] for k, v in sorted(reasons.items())], {1}))
    vids = sorted({v for (v, _), c in ours_div.items() if c != "BEV004"}, key=int)
    out.append(f"\nThe variants of the last two causes: {', '.join(vids)}.\n")

    out.append("\n## B. Three-year stability of the 2023-09 P/LP classifications\n\nDestabilized = conflicting, "
               "or including VUS/LB/B, in 2026-09; missing or other outcomes are left out of the denominator; "
               "Wilson 95%.\n\n")
    plp = [(c, s) for c, s in decisions if c["stratum"] in STARS]
    body = []
    for use in USES:
        groups = peer["stability_by_use"][use]
        body.append([f"`{use}`", peer_rate(groups["admitted"]), stability([c for c, s in plp if s[use] == "admitted"]),
                     peer_rate(groups["not_admitted"]), stability([c for c, s in plp if s[use] != "admitted"])])
    out.append(table(["Use", "admitted in 2023: 0.8.0", "ours", "not admitted: 0.8.0", "ours"], body))
    out.append("\n")
    out.append(table(["NCBI 2023-09 review status", "0.8.0", "ours"],
                     [[f"`{name}`", peer_rate(peer["stability_by_stratum"][name]),
                       stability([c for c, _ in plp if c["stratum"] == name])] for name in STARS]))
    population, matches = sample.population(), 0
    body = []
    for name, groups in sorted(population.items()):
        cells = []
        for key in ("without_dissenting_submission", "with_dissenting_submission"):
            counts = Counter(groups[key]["outcomes_2026_09"])
            cells.append((counts["conflicting"] + counts["downgraded"], sum(counts[k] for k in
                          ("conflicting", "downgraded", "stable_plp"))))
            theirs = peer["population_stability"][name][key]
            matches += cells[-1] == (theirs["destabilized"], theirs["evaluable"])
        ratio = (cells[1][0] / cells[1][1]) / (cells[0][0] / cells[0][1]) if cells[1][1] and cells[0][0] else None
        body.append([f"`{name}`", rate(*cells[0]), rate(*cells[1]), f"{ratio:.1f}×" if ratio else "–"])
    out.append("\nThe whole 2023-09 germline P/LP population (`sources/population_outcomes.json`; no engine decides "
               f"these, and {matches} of its {2 * len(population)} cells are those of 0.8.0's summary): a dissenting "
               "VUS/LB/B submission, which sends a record to review (BEV004) in both engines, goes with more "
               "reclassification three years later.\n\n")
    out.append(table(["2023-09 review status", "without dissent", "with dissent", "ratio"], body, {3}))

    out.append("\n## C/D. Controlled faults and trust-boundary forgeries (false admissions)\n\n")
    body = []
    for cohort in COHORTS:
        f = peer["faults"][cohort]
        theirs_c = [f"{f[m]['false_admissions']}/{f[m]['n']}"
                    for m in ("schema_only", "aggregate_quality", "full", "grounded")]
        ours = [f"{admitted(rows, cohort, m)['admitted']}/{admitted(rows, cohort, m)['n']}"
                for m in ("schema_only", "full", "grounded")]
        body.append([f"`{cohort}`", theirs_c[0], ours[0], theirs_c[1], "N/A", theirs_c[2], ours[1], theirs_c[3],
                     f"**{ours[2]}**"])
    out.append(table(["Cohort", "schema-only 0.8.0", "ours", "aggregate-quality ablation 0.8.0", "ours", "full 0.8.0",
                      "ours", "full + grounding 0.8.0", "ours"], body, set(range(1, 9))))
    peer_rows = {r["case_id"]: r for r in data["peer_rows"]}
    body, identical = [], 0
    for kind in [*FAULTS, *TRUST_BOUNDARY]:
        mine = [r for r in rows if r.category == kind]
        theirs = [r for r in data["peer_rows"] if r["category"] == kind]
        for r in mine:
            other = peer_rows.get(r.case_id)
            identical += other is not None and (other["full"], other["grounded"], other["reason_codes"],
                                                other["grounded_reason_codes"]) == (
                r.status["full"], r.status["grounded"], r.codes["full"], r.codes["grounded"])
        body.append([f"`{kind}`", mine[0].expected, counted(Counter(r["grounded"] for r in theirs)),
                     counted(Counter(x for r in theirs for x in r["grounded_reason_codes"])),
                     counted(Counter(r.status["grounded"] for r in mine)),
                     counted(Counter(x for r in mine for x in r.codes["grounded"]))])
    out.append(f"\nPer category, with grounding ({len(rows) - sum(r.cohort == 'beyond' for r in rows)} rows; "
               f"{identical} have the same statuses and reason codes, without and with grounding, as the row of the "
               "same variant in 0.8.0's `faults.jsonl`):\n\n")
    out.append(table(["category", "expected", "0.8.0 status", "0.8.0 reason codes", "ours status", "ours reason codes"],
                     body))
    same_a = all(data["agreement"][u] == policy[u]["agreement"] for u in USES) and \
        same == len(ours_div) == len(peer_div)
    fault_rows = len(rows) - sum(r.cohort == "beyond" for r in rows)
    if same_a and identical == fault_rows == len(peer_rows):
        first = (f"* **No difference.** Every figure of A, B, C and D is 0.8.0's: the same {same} divergences from "
                 f"NCBI (variant, use, reason codes) and the same statuses and reason codes on all {identical} fault "
                 "rows.")
    else:
        first = (f"* **DIFFERENCES**: {same} of {len(ours_div)} divergences and {identical} of {fault_rows} fault rows "
                 "are 0.8.0's; the tables above name where.")
    out.append(NOTES.format(first=first, changed=data["changed"], n=f"{n:,}"))

    out.append("\n## Beyond 0.8.0\n\n")
    quiet = [k for c in data["codes"].values() for k in c if k.endswith(("(warning)", "(info)"))]
    out.append(f"* **Reason codes on the {n:,} real records** (variant counts; every finding of every severity): "
               f"without grounding {counted(data['codes']['full'])}; with grounding "
               f"{counted(data['codes']['grounded'])}; "
               f"{'no warning or note' if not quiet else 'warnings or notes: see the counts'}, and no BEV029 (the "
               "records cite a registry snapshot, not a paper).\n")
    strict = data["strict"]
    base = Counter(u for _, status in decisions for u, v in status.items() if v == "admitted")
    out.append(f"* **Verified evidence.** `clinvar-snapshot` returns the items it matched (`Grounding.verified`): "
               f"{data['verified']:,} of {data['items']:,} evidence items of the real records (0.8.0's "
               "`ClinVarGrounder` returns findings only). With 0.8.0's profile plus `verified_evidence_types` listing "
               "each use's required types (BEV020: they count only through verified items), admitted per use ("
               + ", ".join(f"`{u}`" for u in USES) + "): "
               + "; ".join(f"{name} {' / '.join(f'{c[u]:,}' for u in USES)}" for name, c in strict.items())
               + f" (0.8.0's profile: {' / '.join(f'{base[u]:,}' for u in USES)}); "
               f"BEV020 on {strict['without grounding']['BEV020 (reason)']:,} records without grounding, "
               f"{strict['with grounding']['BEV020 (reason)']:,} with it.\n")
    for (name, counter), why in zip(data["checks"].items(), WHY, strict=True):
        extra = {k: v for k, v in counter.items() if k not in ("BEV004", "BEV007")}
        out.append(f"* **{name}** on the real records: {counted(extra) if extra else 'no other reason code'} "
                   f"(BEV004 {counter['BEV004']:,}, BEV007 {counter['BEV007']:,}, as without it)"
                   + (f": {why}.\n" if not extra else ".\n"))
    out.append(BEYOND_NOTE)
    body = []
    for kind in BEYOND:
        mine = [r for r in rows if r.category == kind]
        body.append([f"`{kind}`", mine[0].expected] + [f"{sum(r.status[m] == 'admitted' for r in mine)}/{len(mine)}"
                                                       for m in ("schema_only", "full", "grounded")]
                    + [counted(Counter(x for r in mine for x in r.codes["grounded"]))])
    out.append(table(["forgery (16 seeds)", "expected", "schema-only", "full", "full + grounding", "reason codes"],
                     body, {2, 3, 4}))
    out.append("\nFail closed: the 16 seeds, grounded against a snapshot folder where "
               + "; where ".join(f"{name}: {counted(c)}" for name, c in data["fail_closed"].items()) + ".\n")
    out.append(LIMITS.format(n=f"{n:,}"))
    return "".join(out)


NOTES = """
## Notes

{first} Our contracts
  (BEV001-BEV013) are 0.8.0's rule for rule, and nothing of ours that differs reads these records: they cite a
  `registry_snapshot`, so the literature checks (BEV029 unchecked publications, whole-paper quotes, BEV030-BEV033,
  the cues BEV022 and the direction check BEV034-BEV036) have nothing to act on (counts under "Beyond").
* **Where both engines are stricter than NCBI, they are right by the profile's terms**: any contradicting line
  goes to a person (BEV004), whether or not the dissent has assertion criteria and whether or not an expert panel
  reviewed the variant; NCBI's aggregation ignores the first and lets the panel override the second. The one BEV007
  is a source inconsistency (NCBI's 2023-09 summary counts two submitters, its submission file lists one), and the
  one looser decision is the pre-registered mapping of "Uncertain risk allele" to a neutral line.
* **B** follows from A: the same decisions give the same stability figures (the stratum rows depend on the sample
  only; they check our outcome categories).
* **Aggregate-quality ablation: N/A.** 0.8.0's column re-decides each report in its case script with the pre-0.4.1
  aggregate extraction-method gate; it is not a switch of its engine, and ours has none (BEV008/BEV009/BEV013 judge
  each required evidence type, as 0.8.0's full engine does).
* **Grounding** changes {changed} of the {n} real-record decisions and reason codes. Our `clinvar-snapshot`
  compares what 0.8.0's `ClinVarGrounder` compares (each submission's review status, content, scope and direction,
  each derived aggregate, left-out submissions) with the same codes: BEV016 for the injected dissent's nonexistent
  submission, BEV017 for a fabricated expert review or a somatic scope, BEV015 for the curator notes, BEV018 for
  omitted dissent. It also reads the sample through `SnapshotStore` (the store re-hashes the pinned bytes before
  they are parsed; 0.8.0's grounder uses the copy its case script parsed at start), checks the statement and
  returns the items it verified (below); none of that changes a row.
"""

WHY = ("the cues read the text of supporting items, here each submission's fields as JSON; \"no assertion "
       "criteria provided\" and \"not provided\" are not negated findings, and no submission is about an animal",
       "the direction check reads only quotes a literature grounder located in a paper; these records cite a "
       "registry snapshot, so it has nothing to read (`required` sends a record to review, BEV035, only when it "
       "has a quote to read and the model cannot run). The line directions are checked exactly instead: "
       "`clinvar-snapshot` compares each line with the classification of every submission it cites (BEV017)")

BEYOND_NOTE = """* **Statement forgeries.** The same evidence offered for another claim (`claim_swap`: the object
  becomes "Benign or likely benign") or the variant named in another gene (`gene_swap`: the subject's label).
  The engine's rules cannot see either (the profile allows any `germline_classification` object and labels are
  free text); `clinvar-snapshot` checks the statement against the sample (BEV017). 0.8.0's `ClinVarGrounder`
  reads only evidence items and source ids, so its full + grounding admits both.

"""

LIMITS = """
Limits: {n} variants in equal-sized strata (pooled sample rates are not population rates); 16 seeds per
fault. The reference is NCBI's own automated aggregation, not an independent expert annotation, and
stability over three years is not correctness. Not for clinical use.
"""
