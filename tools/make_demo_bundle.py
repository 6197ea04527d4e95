"""Build the corpus ``bioevidence demo`` runs on, from the pinned CIViC snapshots (run by hand).

Six PubMed Central open-access papers on EGFR tyrosine kinase inhibitors in lung cancer, all
CC BY, one of them retracted (to show that a retracted paper is withheld): their JATS full
texts and NCBI esummary records are copied byte for byte (content-addressed, gzip) with the
catalogue entries, the CIViC evidence rows citing them (CC0) as the planner's vocabulary, and an
ATTRIBUTION.md naming each paper and its licence. Every file is re-hashed before it is written.

    .venv/bin/python tools/make_demo_bundle.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
from pathlib import Path

PMIDS = ["15696205", "27032107", "22901364", "24039832", "27612423", "34457028"]
OUT = Path(__file__).resolve().parents[1] / "src" / "bioevidence" / "_data" / "demo"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    data = Path(ap.parse_args().data)
    corpus = data / "civic_corpus"
    snapshots = corpus / "snapshots"
    works = json.loads((snapshots / "literature.json").read_text())["works"]
    target = OUT / "snapshots"
    if OUT.exists():
        shutil.rmtree(OUT)
    target.mkdir(parents=True)
    chosen = {}
    for pmid in PMIDS:
        work = works[f"pmid:{pmid}"]
        assert work["license"] == "cc by", (pmid, work["license"])
        for sha in (work["metadata_sha256"], work["fulltext_sha256"]):
            (path,) = snapshots.glob(f"{sha}.*")
            assert hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest() == sha, path
            shutil.copyfile(path, target / path.name)
        chosen[f"pmid:{pmid}"] = work
        for other, alias in works.items():  # the pmcid / doi aliases the catalogue keeps for it
            if alias is work and other not in chosen:
                chosen[other] = alias
    (target / "literature.json").write_text(json.dumps({"version": 1, "works": chosen}, indent=2, sort_keys=True)
                                            + "\n")
    with gzip.open(corpus / "civic-evidence.jsonl.gz", "rt") as fh:
        rows = [line for line in fh if json.loads(line)["citation_id"] in PMIDS]
    (OUT / "civic-vocabulary.jsonl").write_text("".join(rows))
    attribution = (corpus / "ATTRIBUTION.md").read_text().splitlines()
    lines = ["# Attribution", "",
             "The demo corpus: PubMed Central open-access articles redistributed unchanged (gzip-compressed) under",
             "the licences listed, with their NCBI esummary records (public). `civic-vocabulary.jsonl` holds the",
             "CIViC evidence items citing them (CC0, https://civicdb.org). Built by `tools/make_demo_bundle.py` from",
             "the pinned CIViC corpus of bioai-evidence-validator 0.8.0's example bundle.", "",
             "| PMID | Article | Licence |", "|---|---|---|"]
    lines += [row for row in attribution if any(f"[{p}]" in row for p in PMIDS)]
    (OUT / "ATTRIBUTION.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}: {len(PMIDS)} papers, {len(rows)} CIViC rows")


if __name__ == "__main__":
    main()
