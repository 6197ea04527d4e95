"""The stance model on pairs it never saw: the held-out part of SciFact train and HealthVer dev.

    .venv/bin/python tools/eval_stance.py                 # the shipped model and the old lexical rule
    .venv/bin/python tools/eval_stance.py --part calibrate

Prints, per data set, what a reader sees:

* **accuracy** of the shown direction labels (supports / contradicts) on gold rationale sentences,
* **coverage**: the share of rationale sentences given a direction (the rest: neutral or undetermined),
* **contradicts recall**: the share of contradicting rationale sentences labelled contradicts,
* **neutral → direction**: the share of gold-neutral sentences (SciFact: every other sentence of a
  cited abstract; HealthVer: Neutral pairs) given a direction,

and the model's throughput (pairs/s, once loaded). Targets (issue 23): accuracy ≥ 0.90, coverage ≥ 0.60,
contradicts recall ≥ 0.50, neutral → direction ≤ 0.15, ≥ 100 pairs/s. The split is tools/stance_data.py's
(document-disjoint; held-out = the third tools/scifact_eval.py holds out); the model card
(src/bioevidence/_data/stance/model.json) says the held-out part was never read in training.
The answer's direction on CIViC questions: tools/eval_civic_answers.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stance_data import Pair, all_pairs

DIRECTIONS = ("supports", "contradicts")


def figures(shown: Sequence[str], pairs: Sequence[Pair]) -> dict[str, float]:
    """The four reader-facing figures of ``shown`` labels against ``pairs``' gold labels."""
    rat = [(s, p.label) for s, p in zip(shown, pairs, strict=True) if p.rationale and p.label in DIRECTIONS]
    directed = [(s, g) for s, g in rat if s in DIRECTIONS]
    contra = [s for s, g in rat if g == "contradicts"]
    neutral = [s for s, p in zip(shown, pairs, strict=True) if p.label == "neutral"]
    return {"n_rationale": len(rat), "n_neutral": len(neutral),
            "accuracy": sum(s == g for s, g in directed) / max(1, len(directed)),
            "coverage": len(directed) / max(1, len(rat)),
            "contradicts_recall": sum(s == "contradicts" for s in contra) / max(1, len(contra)),
            "neutral_to_direction": sum(s in DIRECTIONS for s in neutral) / max(1, len(neutral))}


def model_labels(pairs: Sequence[Pair]) -> tuple[list[str], float]:
    from bioevidence.meaning import load_model

    model = load_model()
    model.label_pairs([("warm", "up")])
    started = time.perf_counter()
    labels = model.label_pairs([(p.claim, p.sentence) for p in pairs])
    rate = len(pairs) / (time.perf_counter() - started)
    return [lab.stance for lab in labels], rate


def lexical_labels(pairs: Sequence[Pair]) -> list[str]:
    from lexical_stance import ClaimReading, lexical_stance  # the old rule, a baseline (tools/)

    readings: dict[str, ClaimReading] = {}
    out = []
    for p in pairs:
        reading = readings.get(p.claim) or readings.setdefault(p.claim, ClaimReading.of(p.claim))
        out.append(lexical_stance(p.sentence, reading))
    return out


def table(rows: list[tuple[str, str, dict[str, float]]]) -> str:
    head = f"{'data':<10} {'labeller':<16} {'rationale':>9} {'neutral':>7} {'accuracy':>8} {'coverage':>8} " \
           f"{'contra rec':>10} {'neutral→dir':>11}"
    lines = [head, "-" * len(head)]
    for data, who, f in rows:
        lines.append(f"{data:<10} {who:<16} {f['n_rationale']:>9.0f} {f['n_neutral']:>7.0f} {f['accuracy']:>8.3f} "
                     f"{f['coverage']:>8.3f} {f['contradicts_recall']:>10.3f} {f['neutral_to_direction']:>11.3f}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", default="held-out", choices=("held-out", "calibrate", "train"))
    ap.add_argument("--no-lexical", action="store_true", help="skip the old lexical rule's row")
    args = ap.parse_args()
    pairs = [p for p in all_pairs() if p.part == args.part]
    shown, rate = model_labels(pairs)
    labellers: list[tuple[str, Callable[[], list[str]]]] = [("model", lambda: shown)]
    if not args.no_lexical:
        labellers.append(("lexical (0.x)", lambda: lexical_labels(pairs)))
    rows = []
    for who, make in labellers:
        labels = make()
        for data in ("scifact", "healthver", "both"):
            chosen = [n for n, p in enumerate(pairs) if data in ("both", p.source)]
            rows.append((data, who, figures([labels[n] for n in chosen], [pairs[n] for n in chosen])))
    print(f"part {args.part}: {len(pairs)} pairs")
    print(table(rows))
    undetermined = sum(s == "undetermined" for s in shown) / max(1, len(shown))
    print(f"model: {rate:.0f} pairs/s once loaded (one process, 2 threads); undetermined {undetermined:.3f} of pairs")


if __name__ == "__main__":
    main()
