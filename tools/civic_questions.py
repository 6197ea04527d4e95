"""CIViC questions with a gold direction, for evaluating the answer's direction (issue 23).

    .venv/bin/python tools/civic_questions.py [--n 80] [--show]

A question is what a curator would type about one CIViC evidence item, written from its gene and
variant (or molecular profile), disease, drugs, evidence type and clinical significance, never with
the item's own verdict in it:

* Predictive + Sensitivity → "Does BRAF V600E confer sensitivity to vemurafenib in melanoma?"
* Predictive + Resistance → "Does EGFR T790M confer resistance to gefitinib in lung cancer?"
* Prognostic + Poor / Better Outcome → "Is KIT D816V associated with poor outcome in …?"
* Diagnostic, Predisposing, Oncogenic, Functional: "Is … a diagnostic marker of …?", "Does …
  predispose to …?", "Is … oncogenic in …?", "Is … a loss-of-function mutation?"

The gold answer is the item's evidence direction: Supports → ``supports``, Does Not Support →
``contradicts``. Only items whose PubMed paper is in the pinned CIViC corpus (a full text in
``civic_corpus/snapshots/literature.json``) are kept. Two sources, both read in place:

* ``claims/civic/civic.biomarkers.tsv`` (the 2016 CIViC export), first;
* ``civic_corpus/civic-evidence.jsonl.gz`` (today's items of the corpus), which holds most of the
  corpus's Does-Not-Support items; a question already written from the first for the same paper is
  not repeated.

The sample is deterministic (items ordered by the SHA-256 of their id) and balanced: Does-Not-
Support items fill up to ``contradicts_share`` of it, Supports items the rest. The split is fixed
by the paper: **held-out = odd PubMed id**, tune = even, so every item of one paper sits in one half
and tuning never sees the held-out papers.
"""

from __future__ import annotations

import argparse
import collections
import csv
import gzip
import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
GOLD = {"Supports": "supports", "Does Not Support": "contradicts"}
PARTS = ("tune", "held-out")


@dataclass(frozen=True)
class CivicQuestion:
    id: str  # "tsv:CIVIC_12" (2016 export) or "eid:8" (civic-evidence.jsonl.gz)
    question: str
    gold: str  # supports | contradicts
    pmid: str
    evidence_type: str
    significance: str
    source: str  # tsv | evidence
    profile: str = ""  # gene and variant, or the molecular profile

    @property
    def part(self) -> str:
        """``held-out`` for an odd PubMed id, else ``tune``."""
        return "held-out" if int(self.pmid) % 2 else "tune"


def _present(value: str) -> str:
    value = (value or "").strip()
    return "" if value in ("NA", "N/A") else value


def _drugs(names: str, interaction: str) -> str:
    drugs = [d.strip() for d in names.replace(";", ",").split(",") if _present(d)]
    if len(drugs) < 2:
        return "".join(drugs)
    if interaction.lower().startswith("substitut"):  # each drug alone: two of them ask the same
        drugs = drugs[:2]
        return " or ".join(drugs)
    return ", ".join(drugs[:-1]) + " and " + drugs[-1]


def question_for(kind: str, significance: str, profile: str, disease: str, drugs: str = "") -> str | None:
    """The question an evidence item answers, or None when its kind and significance ask nothing."""
    sig = _present(significance).lower()
    disease = _present(disease)
    where = f" in {disease}" if disease else ""
    if kind == "Predictive" and drugs:
        if "resist" in sig or "non-response" in sig:
            return f"Does {profile} confer resistance to {drugs}{where}?"
        if "sensitiv" in sig or "response" in sig:
            return f"Does {profile} confer sensitivity to {drugs}{where}?"
        if not sig:
            return f"Does {profile} predict response to {drugs}{where}?"
        return None
    if kind == "Prognostic":
        if "poor" in sig:
            return f"Is {profile} associated with poor outcome{where}?"
        if "better" in sig:
            return f"Is {profile} associated with better outcome{where}?"
        return f"Is {profile} associated with outcome{where}?" if not sig else None
    if kind == "Diagnostic" and sig == "positive" and disease:
        return f"Is {profile} a diagnostic marker of {disease}?"
    if kind == "Predisposing" and disease and sig in ("positive", "predisposition"):
        return f"Does {profile} predispose to {disease}?"
    if kind == "Predisposing" and disease and sig == "protectiveness":
        return f"Does {profile} protect against {disease}?"
    if kind == "Oncogenic" and sig == "oncogenicity":
        return f"Is {profile} oncogenic{where}?"
    if kind == "Functional" and sig in ("loss of function", "gain of function", "dominant negative"):
        return f"Is {profile} a {sig.replace(' of ', '-of-')} mutation?"
    return None


def corpus_pmids(data: Path = DATA) -> set[str]:
    """PubMed ids of the papers pinned with full text in the CIViC corpus."""
    works = json.loads((data / "civic_corpus" / "snapshots" / "literature.json").read_text(encoding="utf-8"))
    return {key.split(":", 1)[1] for key, w in works["works"].items()
            if key.startswith("pmid:") and w.get("fulltext_sha256")}


def _same(pmid: str, profile: str, kind: str, question: str) -> tuple[str, ...]:
    """Items asking one thing of one paper (the same profile and claim, the disease or drug named
    in other words: "Glioblastoma" / "Glioblastoma Multiforme") share this key; the first is kept."""
    claim = question.split(" in ")[0] if kind != "Predictive" else question.split(" to ")[0]
    return pmid, profile.lower(), kind, claim.lower()


def candidates(data: Path = DATA) -> list[CivicQuestion]:
    """Every askable item whose paper is pinned, 2016 export first, one question per paper."""
    pinned = corpus_pmids(data)
    out: dict[tuple[str, str], CivicQuestion] = {}
    with (data / "claims" / "civic" / "civic.biomarkers.tsv").open(encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            q = question_for(r["evidence_type"], r["clinical_significance"],
                             f"{r['genesymbol']} {r['variant_name']}", r["disease_name"],
                             _drugs(r["drug_names"], r["drug_interaction_type"]))
            if q and r["pubmed_id"] in pinned and r["evidence_direction"] in GOLD:
                profile = f"{r['genesymbol']} {r['variant_name']}"
                out.setdefault(_same(r["pubmed_id"], profile, r["evidence_type"], q), CivicQuestion(
                    f"tsv:{r['civic_id']}", q, GOLD[r["evidence_direction"]], r["pubmed_id"], r["evidence_type"],
                    r["clinical_significance"], "tsv", profile))
    with gzip.open(data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt", encoding="utf-8") as fh:
        for r in map(json.loads, fh):
            q = question_for(r["evidence_type"], r["significance"], r["molecular_profile"], r["disease"],
                             _drugs(r["therapies"], r["therapy_interaction_type"]))
            if q and r["citation_id"] in pinned and r["evidence_direction"] in GOLD:
                out.setdefault(_same(r["citation_id"], r["molecular_profile"], r["evidence_type"], q), CivicQuestion(
                    f"eid:{r['evidence_id']}", q, GOLD[r["evidence_direction"]], r["citation_id"],
                    r["evidence_type"], r["significance"], "evidence", r["molecular_profile"]))
    # one item's question twice with opposite gold (two curators disagreeing on one paper) asks nothing
    golds = collections.defaultdict(set)
    for q in out.values():
        golds[q.question.lower()].add(q.gold)
    return [q for q in out.values() if len(golds[q.question.lower()]) == 1]


def _key(q: CivicQuestion) -> str:
    return hashlib.sha256(q.id.encode()).hexdigest()


def sample(pool: list[CivicQuestion], n: int = 80, contradicts_share: float = 0.4,
           per_paper: int = 3) -> list[CivicQuestion]:
    """``n`` questions (or all there are), Does-Not-Support items up to ``contradicts_share`` of them,
    at most ``per_paper`` from one paper (so one paper's items do not decide a figure)."""
    ordered, seen = [], collections.Counter[str]()
    for q in sorted(pool, key=lambda q: (q.gold, _key(q))):
        if seen[q.pmid] < per_paper:
            ordered.append(q)
            seen[q.pmid] += 1
    ordered.sort(key=_key)
    against = [q for q in ordered if q.gold == "contradicts"]
    chosen = against[: int(n * contradicts_share)]
    chosen += [q for q in ordered if q.gold == "supports"][: n - len(chosen)]
    return sorted(chosen, key=_key)


def questions(data: Path = DATA, n: int = 80, part: str | None = None) -> list[CivicQuestion]:
    """The fixed sample, or its ``part`` ("tune" or "held-out")."""
    if part is not None and part not in PARTS:
        raise ValueError(f"part {part!r} is not one of {', '.join(PARTS)}")
    chosen = sample(candidates(data), n)
    return [q for q in chosen if part is None or q.part == part]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--n", type=int, default=80)
    ap.add_argument("--show", action="store_true", help="print every question")
    ap.add_argument("--jsonl", action="store_true", help="print the sample as JSON lines instead")
    args = ap.parse_args()
    data = Path(args.data)
    pool = candidates(data)
    chosen = sample(pool, args.n)
    if args.jsonl:
        for q in chosen:
            print(json.dumps({**asdict(q), "part": q.part}))
        return
    count = collections.Counter((q.part, q.gold) for q in chosen)
    print(f"{len(pool)} askable CIViC items with their paper pinned "
          f"({sum(q.gold == 'contradicts' for q in pool)} Does Not Support; "
          f"{sum(q.source == 'tsv' for q in pool)} from civic.biomarkers.tsv); sample of {len(chosen)} "
          f"from {len({q.pmid for q in chosen})} papers\n")
    print("| part | questions | supports | contradicts | papers |")
    print("|---|---|---|---|---|")
    for part in PARTS:
        mine = [q for q in chosen if q.part == part]
        print(f"| {part} | {len(mine)} | {count[(part, 'supports')]} | {count[(part, 'contradicts')]} | "
              f"{len({q.pmid for q in mine})} |")
    kinds = collections.Counter(q.evidence_type for q in chosen)
    print("\nby evidence type: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    print("by source: " + ", ".join(f"{k} {v}" for k, v in collections.Counter(q.source for q in chosen).items()))
    if args.show:
        for q in chosen:
            print(f"  [{q.part:<8} {q.gold:<11}] pmid:{q.pmid} {q.question}")


if __name__ == "__main__":
    main()
