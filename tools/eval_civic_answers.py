"""`answer`'s direction on the CIViC questions of tools/civic_questions.py, split tune / held-out.

    .venv/bin/python tools/eval_civic_answers.py [--work .ci/cache] [--n 80] [--part held-out] [--show 10]

Builds (once, then reuses) a local index of the pinned CIViC corpus under ``--work``
(``civic-index/``, as ``bioevidence index build ../shared/data/civic_corpus/snapshots`` would),
then for each question runs what ``bioevidence answer`` runs (``Librarian.ask`` then
``answering.answer_question``, the gate checking every quote against the pinned snapshots) and reads
``answer.direction`` (supports | contradicts | mixed | undetermined | insufficient). Printed per part
(tune = even PubMed id, held-out = odd; tune on the first, report the second):

* right: the direction is the item's gold one (Supports → supports, Does Not Support → contradicts);
* opposite: the other of the two (the error a curator is misled by);
* undetermined / mixed, insufficient;
* paper returned: the item's cited paper among the answer's papers; decided: among the papers of the
  sentences that decided the direction.

Targets (issue 23): right ≥ 70%, opposite ≤ 8%. When the answer has no ``direction`` yet (an older
``answering``), only the retrieval columns are printed, with "direction not available yet".
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from civic_questions import DATA, PARTS, CivicQuestion, questions

OPPOSITE = {"supports": "contradicts", "contradicts": "supports"}
COLUMNS = ("supports", "contradicts", "mixed", "undetermined", "insufficient")


def civic_index(work: Path, data: Path = DATA, rebuild: bool = False) -> Path:
    """The index of the pinned CIViC snapshots under ``work`` (built when absent or ``rebuild``)."""
    from bioevidence.librarian.index import build_index

    out = work / "civic-index"
    if rebuild or not (out / "index.sqlite").is_file():
        import shutil

        shutil.rmtree(out, ignore_errors=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        build_index([data / "civic_corpus" / "snapshots"], out)
        print(f"built {out} in {time.perf_counter() - t0:.1f} s", flush=True)
    return out


def run(lib: Any, qs: list[CivicQuestion]) -> list[dict[str, Any]]:
    """One row per question: the direction read from the answer (None when it has none yet), whether
    the cited paper was returned and whether it decided the direction, and the seconds taken."""
    from bioevidence.librarian.answering import answer_question

    rows = []
    for q in qs:
        t0 = time.perf_counter()
        found = lib.ask(q.question)
        cited, _, _ = answer_question(found)
        seconds = time.perf_counter() - t0
        direction = getattr(cited, "direction", None)
        deciding = getattr(cited, "deciding", None) or []
        pmids = {p.doc.pmid for p in found.papers}
        decided = {found.papers[found.ranked[n - 1].paper].doc.pmid for n in deciding if 0 < n <= len(found.ranked)}
        rows.append({"q": q, "direction": direction, "returned": q.pmid in pmids, "decided": q.pmid in decided,
                     "seconds": seconds, "verdict": getattr(cited, "verdict", ""),
                     "deciding": [found.ranked[n - 1].text for n in deciding[:2] if 0 < n <= len(found.ranked)]})
    return rows


def table(rows: list[dict[str, Any]]) -> None:
    have = any(r["direction"] is not None for r in rows)
    if not have:
        print("direction not available yet (answer has no `direction`): retrieval columns only\n")
    print("| part | questions | right | opposite | undetermined / mixed | insufficient | paper returned | decided |")
    print("|---|---|---|---|---|---|---|---|")
    for part in (*PARTS, "all"):
        mine = [r for r in rows if part == "all" or r["q"].part == part]
        n = len(mine)
        if not n:
            continue

        def share(k: int, n: int = n) -> str:
            return f"{k} ({k / n:.0%})"

        returned = share(sum(r["returned"] for r in mine))
        if not have:
            print(f"| {part} | {n} | – | – | – | – | {returned} | – |")
            continue
        right = sum(r["direction"] == r["q"].gold for r in mine)
        opposite = sum(r["direction"] == OPPOSITE[r["q"].gold] for r in mine)
        unsure = sum(r["direction"] in ("undetermined", "mixed") for r in mine)
        none = sum(r["direction"] == "insufficient" for r in mine)
        print(f"| {part} | {n} | {share(right)} | {share(opposite)} | {share(unsure)} | {share(none)} | "
              f"{returned} | {share(sum(r['decided'] for r in mine))} |")
    if have:
        print("\nby gold direction (all parts): rows gold, columns the answer's direction")
        print("| gold | " + " | ".join(COLUMNS) + " |")
        print("|---|" + "---|" * len(COLUMNS))
        count = collections.Counter((r["q"].gold, r["direction"]) for r in rows)
        for gold in ("supports", "contradicts"):
            print(f"| {gold} | " + " | ".join(str(count[(gold, d)]) for d in COLUMNS) + " |")
    seconds = [r["seconds"] for r in rows]
    print(f"\nmedian {statistics.median(seconds):.2f} s a question (ask + gate + direction), "
          f"max {max(seconds):.2f} s")


def main() -> None:
    from bioevidence.librarian.librarian import Librarian

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--work", default=".ci/cache", help="folder the CIViC index is cached in")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the cached index")
    ap.add_argument("--n", type=int, default=80, help="questions in the sample (tools/civic_questions.py)")
    ap.add_argument("--part", choices=PARTS, help="only this part (default both)")
    ap.add_argument("--retriever", choices=("bm25", "dense", "hybrid"), default="bm25")
    ap.add_argument("--vocabulary", default="claims/civic/civic.biomarkers.tsv",
                    help="planner vocabulary, relative to --data ('' for none)")
    ap.add_argument("--show", type=int, default=0, help="print this many wrong answers")
    args = ap.parse_args()
    data = Path(args.data)
    index = civic_index(Path(args.work), data, args.rebuild)
    vocab = (data / args.vocabulary,) if args.vocabulary else ()
    lib = Librarian(index, references=data / "references", vocabularies=vocab, retriever=args.retriever)
    qs = questions(data, args.n, args.part)
    lib.ask(qs[0].question)  # load the models once before timing
    rows = run(lib, qs)
    print(f"{len(rows)} CIViC questions ({sum(r['q'].gold == 'contradicts' for r in rows)} with gold contradicts), "
          f"index {index}, --retriever {args.retriever}\n")
    table(rows)
    shown = 0
    for r in rows:
        if shown >= args.show or r["direction"] in (None, r["q"].gold):
            continue
        shown += 1
        print(f"\n[{r['q'].part} · {r['q'].gold} → {r['direction']}] pmid:{r['q'].pmid} {r['q'].question}\n"
              f"    {r['verdict']}")
        for text in r["deciding"]:
            print(f"    · {text[:180]}")


if __name__ == "__main__":
    main()
