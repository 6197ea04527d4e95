"""Does the librarian find the cited paper when a curator names the drug by its code or brand name
(issue 28, item 2)?

    .venv/bin/python tools/eval_drug_names.py [--data ../shared/data] [--index DIR] [--markdown]

``--markdown`` first prints both forms in one table as docs/librarian.md states it (the region
``tools/reproduce.py drug-names`` checks), then the per-form tables with counts as without it.

Questions: the askable CIViC items whose paper is pinned (``tools/civic_questions.py``:
``candidates``, the same questions the repo evaluates directions on: "Does AKT1 E17K confer
sensitivity to AZD5363 in Breast Cancer?"). Each question naming a drug listed in
``tools/drug_names.tsv`` (code and brand names of those drugs, written from public sources) is
rewritten once per other name of that drug: AZD5363 → capivasertib, Truqap; vemurafenib →
PLX4032, Zelboraf. Each rewrite is asked over the index of the pinned CIViC corpus
(``civic_corpus/snapshots``), and the figure is the share of rewrites whose cited paper (the
item's PubMed id) is among the first 10 (and 5, and 1) papers returned:

* **original**: the question as CIViC names the drug (the reference);
* **before**: the rewrite, planner without the index's synonyms (as before issue 28);
* **mined**: the rewrite, default ``ask`` (the abbreviation and drug-name pairs mined from the
  corpus at build time);
* **mined + vocabulary**: the rewrite over an index built with ``--vocabulary tools/drug_names.tsv``
  (a curator's pinned thesaurus; the evaluation's own table, so an upper bound).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from civic_questions import DATA, candidates

NAMES = Path(__file__).resolve().parent / "drug_names.tsv"


@dataclass(frozen=True)
class Rewrite:
    question: str  # as CIViC's names write it
    rewritten: str
    pmid: str
    drug: str  # the name replaced
    other: str  # the name written instead
    kind: str  # code | brand | inn: what ``other`` is
    form: str  # "curator": the whole CIViC question; "drug": the drug and the disease only


def groups(path: Path = NAMES) -> list[list[str]]:
    """The table's names, one list per drug."""
    from bioevidence.librarian.abbreviations import Synonyms, read_vocabulary

    syn = Synonyms.of(dict.fromkeys(read_vocabulary(path), 1))
    return [list(g) for g in sorted({tuple(v) for v in syn.names.values()})]


def kind_of(name: str) -> str:
    from bioevidence.librarian.abbreviations import code_like, inn_like

    return "code" if code_like(name) or re.search(r"\d", name) else "inn" if inn_like(name) else "brand"


def rewrites(data: Path = DATA, names: Path = NAMES) -> list[Rewrite]:
    """Every CIViC question naming a listed drug, rewritten with each of the drug's other names
    (a name's parenthesised code in CIViC's spelling, "Binimetinib (MEK162)", goes with it)."""
    out: list[Rewrite] = []
    table = groups(names)
    for q in sorted(candidates(data), key=lambda q: q.id):
        for group in table:
            spans = [(m.start(), -m.end(), name, m) for name in group
                     for m in [re.search(rf"\b{re.escape(name)}\b(?: \([^)]*\))?", q.question, re.IGNORECASE)] if m]
            if not spans:
                continue
            _, _, name, m = min(spans, key=lambda s: s[:2])  # the first, longest: "Selumetinib (AZD6244)"
            where = re.search(r" in ([^?]+)\?$", q.question)
            for other in group:
                if other.lower() == name.lower():
                    continue
                rewritten = q.question[: m.start()] + other + q.question[m.end():]
                out.append(Rewrite(q.question, rewritten, q.pmid, name, other, kind_of(other), "curator"))
                if where:
                    out.append(Rewrite(f"Does {name} work in {where.group(1)}?", f"Does {other} work in "
                                       f"{where.group(1)}?", q.pmid, name, other, kind_of(other), "drug"))
    return out


def rank_of(lib: Any, question: str, pmid: str) -> int | None:
    """The cited paper's place among the papers ``ask`` returns (1 = first), None when absent."""
    answer = lib.ask(question, top_k=10, papers=10)
    for n, paper in enumerate(answer.papers, 1):
        if paper.doc.pmid == pmid:
            return n
    return None


def librarians(data: Path, index: Path, with_vocabulary: Path | None) -> dict[str, Any]:
    """The three ways of asking: without the index's synonyms, with them, and over an index built
    with the vocabulary too."""
    from bioevidence.librarian.index import LocalIndex, build_index
    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.librarian import Librarian
    from bioevidence.librarian.planner import OfflinePlanner

    sources = [data / "civic_corpus" / "snapshots"]
    if not (index / "index.sqlite").is_file():
        build_index(sources, index)
    lexicon = default_lexicon(data / "references")
    ix = LocalIndex(index)
    out = {"before": Librarian(ix, lexicon=lexicon, planner=OfflinePlanner(lexicon)),
           "mined": Librarian(ix, lexicon=lexicon)}
    if with_vocabulary is not None:
        build_index(sources, with_vocabulary, vocabularies=[NAMES])
        out["mined + vocabulary"] = Librarian(LocalIndex(with_vocabulary), lexicon=lexicon)
    return out


def measure(libs: dict[str, Any], items: list[Rewrite]) -> dict[str, list[int | None]]:
    """The cited paper's rank per rewrite, per way of asking (and for the original questions)."""
    ranks: dict[str, list[int | None]] = {"original": []}
    originals: dict[str, int | None] = {}
    for r in items:
        if r.question not in originals:
            originals[r.question] = rank_of(libs["mined"], r.question, r.pmid)
        ranks["original"].append(originals[r.question])
    for name, lib in libs.items():
        ranks[name] = [rank_of(lib, r.rewritten, r.pmid) for r in items]
    return ranks


def share(ranks: list[int | None], k: int) -> str:
    hit = sum(1 for r in ranks if r is not None and r <= k)
    return f"{hit}/{len(ranks)} ({100 * hit / max(1, len(ranks)):.0f}%)"


def scifact(data: Path, index: Path) -> dict[str, float]:
    """SciFact train BEIR nDCG@10 of the default ``ask`` with and without the index's synonyms (the
    names and readings must not cost a general corpus what they give a drug question)."""
    import json
    import statistics

    from bioevidence.librarian.index import LocalIndex, build_index
    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.librarian import Librarian
    from bioevidence.librarian.planner import OfflinePlanner
    from scifact_eval import ndcg10

    if not (index / "index.sqlite").is_file():
        build_index([data / "claims" / "scifact" / "corpus.jsonl.gz"], index)
    claims = [json.loads(line) for line in (data / "claims" / "scifact" / "claims_train.jsonl").open()]
    lexicon = default_lexicon(data / "references")
    ix = LocalIndex(index)
    out = {}
    for name, lib in (("without synonyms", Librarian(ix, lexicon=lexicon, planner=OfflinePlanner(lexicon))),
                      ("default ask", Librarian(ix, lexicon=lexicon))):
        out[name] = statistics.mean(ndcg10([p.doc.doc_id for p in lib.ask(c["claim"]).papers],
                                           {str(d) for d in c.get("cited_doc_ids", [])}) for c in claims)
    return out


def _table(ranks: dict[str, list[int | None]], sel: list[int]) -> list[str]:
    out = ["| asked | cited paper in first 10 | first 5 | first |", "|---|---|---|---|"]
    for name, got in ranks.items():
        mine = [got[i] for i in sel]
        out.append(f"| {name} | {share(mine, 10)} | {share(mine, 5)} | {share(mine, 1)} |")
    return out


def percent(ranks: list[int | None], k: int) -> str:
    return f"{100 * sum(1 for r in ranks if r is not None and r <= k) / max(1, len(ranks)):.0f}%"


def doc_table(ranks: dict[str, list[int | None]], items: list[Rewrite]) -> str:
    """Both forms in one table, as docs/librarian.md ("Names") states it and ``tools/reproduce.py
    drug-names`` checks it; the headline (the drug and disease, other name, mined) in bold."""
    out = ["| question | asked | cited paper in first 10 | first 5 | first |", "|---|---|---|---|---|"]
    for form, label in (("curator", "whole question"), ("drug", "drug and disease")):
        sel = [i for i, r in enumerate(items) if r.form == form]
        for n, (name, got) in enumerate(ranks.items()):
            mine = [got[i] for i in sel]
            first10, first5, first = percent(mine, 10), percent(mine, 5), percent(mine, 1)
            asked = "CIViC's own drug name" if name == "original" else f"other name, {name}"
            if form == "drug" and name == "mined":
                asked, first10, first5 = "other name, **mined**", f"**{first10}**", f"**{first5}**"
            out.append(f"| {f'{label} ({len(sel)})' if n == 0 else ''} | {asked} | {first10} | {first5} | {first} |"
                       .replace("|  |", "| |"))
    return "\n".join(out)


def main() -> None:
    from bioevidence.librarian.abbreviations import key

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--index", default="/tmp/bioevidence_civic_index", help="CIViC corpus index (built if missing)")
    ap.add_argument("--vocabulary-index", default="/tmp/bioevidence_civic_index_vocabulary",
                    help="rebuilt here with --vocabulary tools/drug_names.tsv")
    ap.add_argument("--show", action="store_true", help="print every rewrite with its ranks")
    ap.add_argument("--markdown", action="store_true", help="first, the table as docs/librarian.md states it")
    ap.add_argument("--scifact", metavar="INDEX", help="also SciFact train nDCG@10 with / without the synonyms "
                    "(index of the SciFact corpus, built there if missing)")
    args = ap.parse_args()
    data = Path(args.data)
    if args.scifact:
        for name, value in scifact(data, Path(args.scifact)).items():
            print(f"SciFact train BEIR nDCG@10, {name}: {value:.4f}")
    items = rewrites(data)
    libs = librarians(data, Path(args.index), Path(args.vocabulary_index))
    index = libs["mined"].index
    mined = index.synonyms()
    by_pmid = {d.pmid: d.idx for d in index.docs if d.pmid}
    stated = [key(r.other) in {key(n) for n in mined.names.get(key(r.drug), [])} for r in items]
    absent = [not re.search(rf"\b{re.escape(r.other)}\b", index.field_text(by_pmid[r.pmid], "_ALL"), re.IGNORECASE)
              if r.pmid in by_pmid else True for r in items]
    ranks = measure(libs, items)
    if args.markdown:
        print(doc_table(ranks, items) + "\n")
    print(f"{len(items)} rewrites of {len({r.question for r in items if r.form == 'curator'})} CIViC questions "
          f"({sum(r.kind == 'code' for r in items)} to a code name, {sum(r.kind == 'brand' for r in items)} "
          f"to a brand name, {sum(r.kind == 'inn' for r in items)} from a code to its INN), each asked as the "
          f"curator's question and as the drug and disease alone; {len([p for p in mined.pairs if p.kind == 'name'])}"
          f" drug-name pairs mined from the corpus, which states {sum(stated)} of the rewrites' pairs")
    for form, label in (("curator", "the whole question"), ("drug", "\"Does DRUG work in DISEASE?\"")):
        sel = [i for i, r in enumerate(items) if r.form == form]
        print(f"\n{label} ({len(sel)} rewrites)\n")
        print("\n".join(_table(ranks, sel)))
        for what, keep in (("the cited paper never writes the name asked", lambda i: absent[i]),
                           ("... and another paper of the corpus states the pair", lambda i: absent[i] and stated[i])):
            sub = [i for i in sel if keep(i)]
            if sub:
                print(f"\n{what} ({len(sub)}): " + "; ".join(
                    f"{name} {share([got[i] for i in sub], 10)} in first 10, {share([got[i] for i in sub], 1)} first"
                    for name, got in ranks.items()))
    if args.show:
        for i, r in enumerate(items):
            print(f"  pmid:{r.pmid} {r.drug} → {r.other} ({r.form}{', absent' if absent[i] else ''}"
                  f"{', stated' if stated[i] else ''}): " + ", ".join(f"{n} {ranks[n][i]}" for n in ranks)
                  + f"  | {r.rewritten}")


if __name__ == "__main__":
    main()
