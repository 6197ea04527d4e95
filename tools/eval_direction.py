"""How many genuine CIViC records the meaning checks send to review: the cues (BEV022, on by default in
``literature-claim``) and the direction check (BEV034).

Genuine records: every true quote ("as printed") that ``tools/eval_quotes.py`` reads from every part
of every pinned CIViC paper (title, abstract, body, captions, table cells, footnotes, back matter,
reference titles…: its own lxml reading, never bioevidence's parser), each in a complete
``literature-claim`` record whose statement is the paper's own CIViC evidence item read as a claim
(``--claims civic``: molecular profile ``associated_with`` the significance, therapy and disease,
e.g. "BRAF V600E is associated with sensitivity to vemurafenib in melanoma"), cited by a ``supports``
line when CIViC says Supports and a ``contradicts`` line when it says Does Not Support; or the fixed
claim "KRAS is associated with non-small cell lung carcinoma" that eval_quotes uses (``--claims
fixed``). Every quote is a real sentence of the cited paper, and the paper is the evidence CIViC
curated for that claim; most sentences of a paper are not about the claim at all, so this is a
harder test than a curator's pick of the deciding sentence.

Each record is validated twice with the snapshot grounders: with the checks off (``--no-cues
--direction off``) and as the profile says (cues on, direction auto). Printed: records admitted with
the checks off that the checks send to review, per line direction, per part and per code; the
labelling throughput; and the flagged quotes (``--show``).

    .venv/bin/python tools/eval_direction.py [--per-part 40] [--seed 7] [--claims civic|fixed] [--show 30]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
DATA = TOOLS.parents[1] / "shared" / "data"

SIGNIFICANCE = {
    ("Predictive", "Sensitivity/Response"): "sensitivity to {therapy} in {disease}",
    ("Predictive", "Resistance"): "resistance to {therapy} in {disease}",
    ("Prognostic", "Poor Outcome"): "poor outcome in {disease}",
    ("Prognostic", "Better Outcome"): "better outcome in {disease}",
    ("Prognostic", "N/A"): "outcome in {disease}",
    ("Functional", "Gain of Function"): "gain of function in {disease}",
    ("Functional", "Loss of Function"): "loss of function in {disease}",
    ("Functional", "Dominant Negative"): "dominant negative function in {disease}",
    ("Oncogenic", "Oncogenicity"): "oncogenicity in {disease}",
    ("Predisposing", "Predisposition"): "predisposition to {disease}",
    ("Predisposing", "Protectiveness"): "protection from {disease}",
}


def eval_quotes(data: Path) -> Any:
    spec = importlib.util.spec_from_file_location("eval_quotes", TOOLS / "eval_quotes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_quotes"] = module
    spec.loader.exec_module(module)
    module.DATA = data
    return module


def civic_items(data: Path) -> dict[str, dict[str, Any]]:
    """PMID → the paper's first CIViC evidence item (by evidence id)."""
    with gzip.open(data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt", encoding="utf-8") as handle:
        rows = sorted((json.loads(line) for line in handle), key=lambda r: int(r["evidence_id"]))
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        out.setdefault(row["citation_id"], row)
    return out


def civic_statement(item: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(subject, object, line direction) of a CIViC evidence item read as a literature claim."""
    disease = item["disease"] or "cancer"
    therapy = " or ".join(t.strip() for t in item["therapies"].split(",") if t.strip()) or "therapy"
    template = SIGNIFICANCE.get((item["evidence_type"], item["significance"]))
    subject = {"id": f"civic:MP{item['molecular_profile_id']}", "label": item["molecular_profile"],
               "entity_type": "variant"}
    if template is None:  # Diagnostic / Positive: the variant marks the disease
        obj = {"id": f"DOID:{item['doid'] or '162'}", "label": disease, "entity_type": "disease"}
    else:
        obj = {"id": f"civic:EID{item['evidence_id']}/significance",
               "label": template.format(therapy=therapy, disease=disease), "entity_type": "phenotype"}
    return subject, obj, "supports" if item["evidence_direction"] == "Supports" else "contradicts"


FIXED = ({"id": "HGNC:6407", "label": "KRAS", "entity_type": "gene"},
         {"id": "MONDO:0005233", "label": "non-small cell lung carcinoma", "entity_type": "disease"}, "supports")


def record(case: Any, n: int, statement: tuple[dict[str, Any], dict[str, Any], str]) -> dict[str, Any]:
    subject, obj, direction = statement
    paper = case.paper
    return {
        "record_id": f"eval:{n}", "profile_id": "literature-claim", "requested_uses": ["research_summary"],
        "statement": {"id": "eval:statement", "statement_status": "proposed", "predicate": "associated_with",
                      "subject": subject, "object": obj, "scope": ["NCBITaxon:9606"],
                      "evidence_lines": [{"id": "eval:line", "direction": direction,
                                          "evidence_item_ids": ["eval:item"]}]},
        "source_artifacts": [{"id": "eval:source", "title": paper.title, "source_type": "publication",
                              "uri": paper.key, "version": "1", "retrieved_at": paper.retrieved_at,
                              "sha256": paper.sha, "observed_sha256": paper.sha}],
        "evidence_items": [{"id": "eval:item", "source_artifact_id": "eval:source", "locator": "full text",
                            "extracted_text": case.quote, "evidence_type": "publication_result",
                            "extraction_method": "manual_curation", "scope": ["NCBITaxon:9606"]}],
        "adjudications": [],
    }


def genuine_records(data: Path, *, per_part: int = 40, seed: int = 7, claims: str = "civic") -> list[dict[str, Any]]:
    """One record per true ("as printed") quote of every CIViC paper, with its part in ``_part``."""
    tool = eval_quotes(data)
    items = civic_items(data)
    with tempfile.TemporaryDirectory() as tmp:
        cases = tool.build_cases(Path(tmp) / "jats-store", per_part=per_part, seed=seed)
    out = []
    for case in cases:
        pmid = case.paper.key.removeprefix("pmid:")
        if case.family != "true" or case.variant != "as printed" or not case.paper.key.startswith("pmid:"):
            continue
        if claims == "civic":
            if pmid not in items:
                continue
            statement = civic_statement(items[pmid])
        else:
            statement = FIXED
        rec = record(case, len(out), statement)
        rec["_part"] = case.part
        out.append(rec)
    return out


def evaluate(records: list[dict[str, Any]], snapshots: Path) -> list[dict[str, Any]]:
    """Each record validated with the checks off and as its profile says; one row per record."""
    from bioevidence.gate.grounders.config import GrounderOptions, build_checks, build_grounders
    from bioevidence.gate.validator import Validator

    grounders = build_grounders(GrounderOptions(snapshot_dir=snapshots))
    off = Validator("literature-claim", grounders=grounders,
                    checks=build_checks(GrounderOptions(cues=False, direction="off")))
    on = Validator("literature-claim", grounders=grounders)  # as the profile says: cues on, direction auto
    rows = []
    for rec in records:
        part = rec.pop("_part")
        before, after = off.validate(rec), on.validate(rec)
        new = sorted({f.rule_id for f in after.findings} - {f.rule_id for f in before.findings})
        rows.append({"part": part, "direction": rec["statement"]["evidence_lines"][0]["direction"],
                     "claim": f"{rec['statement']['subject']['label']} / {rec['statement']['object']['label']}",
                     "quote": rec["evidence_items"][0]["extracted_text"], "paper": rec["source_artifacts"][0]["uri"],
                     "before": before.overall_status, "after": after.overall_status, "new": new,
                     "verified": bool(after.verified),
                     "messages": [f.message for f in after.findings if f.rule_id in new]})
    return rows


def summary(rows: list[dict[str, Any]]) -> str:
    lines = []
    for direction in ("supports", "contradicts"):
        mine = [r for r in rows if r["direction"] == direction]
        if not mine:
            continue
        admitted = [r for r in mine if r["before"] == "admitted"]
        routed = [r for r in admitted if r["after"] != "admitted"]
        share = len(routed) / len(admitted) if admitted else 0.0
        lines.append(f"{direction} lines: {len(mine)} records, {len(admitted)} admitted with the checks off; "
                     f"the checks send {len(routed)} to review ({share:.1%})")
        codes = Counter(c for r in mine for c in r["new"])
        lines.append(f"  new codes on these records: {dict(sorted(codes.items())) or 'none'}")
    lines.append("")
    lines.append(f"{'part':<24}{'records':>9}{'admitted':>10}{'BEV022':>8}{'BEV034':>8}{'routed':>8}")
    per_part: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for r in rows:
        cell = per_part[r["part"]]
        cell[0] += 1
        cell[1] += r["before"] == "admitted"
        cell[2] += "BEV022" in r["new"]
        cell[3] += "BEV034" in r["new"]
        cell[4] += r["before"] == "admitted" and r["after"] != "admitted"
    for part, cell in per_part.items():
        lines.append(f"{part:<24}" + "".join(f"{v:>{w}}" for v, w in zip(cell, (9, 10, 8, 8, 8), strict=True)))
    total = [sum(c[i] for c in per_part.values()) for i in range(5)]
    lines.append(f"{'all parts':<24}" + "".join(f"{v:>{w}}" for v, w in zip(total, (9, 10, 8, 8, 8), strict=True)))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-part", type=int, default=40, help="true quotes per part and 20 papers (default 40)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--claims", choices=["civic", "fixed"], default="civic")
    parser.add_argument("--show", type=int, default=30, help="print up to N records the checks send to review")
    parser.add_argument("--dump", help="write every row to this JSON file")
    args = parser.parse_args()
    from bioevidence.meaning import available, load_model

    if not available():
        print("the stance model's runtime is not installed: pip install 'bioevidence[librarian]'")
        return 2
    model = load_model()
    records = genuine_records(DATA, per_part=args.per_part, seed=args.seed, claims=args.claims)
    start = time.perf_counter()
    rows = evaluate(records, DATA / "civic_corpus" / "snapshots")
    spent = time.perf_counter() - start
    print(f"model {model.name} (threshold {model.threshold}); claims: {args.claims}; "
          f"{len({r['paper'] for r in rows})} papers, {len(rows)} genuine records ({spent:.0f} s)")
    print(summary(rows))
    if args.dump:
        Path(args.dump).write_text(json.dumps(rows, indent=1))
    routed = [r for r in rows if r["before"] == "admitted" and r["after"] != "admitted"]
    for r in routed[:args.show]:
        print(f"\n[{r['part']} / {r['direction']}] {r['paper']} {r['claim']}\n  quote: {r['quote'][:300]}\n"
              f"  {' | '.join(m[:300] for m in r['messages'])}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(TOOLS.parent / "src"))
    raise SystemExit(main())
