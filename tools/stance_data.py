"""The labelled claim–sentence pairs of the stance model, and their fixed split (train / calibrate /
held-out). Shared by tools/train_stance.py, tools/eval_stance.py and the stance tests; not part of
the package. Imported by name (a script's own folder is on ``sys.path``).

Sources (../shared/data/claims):

* **SciFact train** (809 claims): each rationale sentence of a cited abstract gives a pair labelled
  by its rationale set (SUPPORT → supports, CONTRADICT → contradicts); every other sentence of a
  cited abstract gives a ``neutral`` pair (the hard kind: same paper, same topic).
* **HealthVer dev** (1,917 claim–evidence pairs, COVID-19): Supports / Refutes / Neutral.

The split is **document-disjoint**: SciFact claims that cite a common abstract form one group (a
supported claim and its negation share their paper), and a group goes whole to one part, by the
smallest claim id in it: ``% 3 == 0`` held-out (the same third as tools/scifact_eval.py), ``% 6 == 1``
calibrate (temperature and the undetermined threshold), the rest train. HealthVer is split by
topic the same way (``topic_ip``). Nothing held out is trained or tuned on.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
LABELS = ("supports", "contradicts", "neutral")
PARTS = ("train", "calibrate", "held-out")


@dataclass(frozen=True)
class Pair:
    source: str  # "scifact" | "healthver"
    group: int  # the split unit (SciFact claim group, HealthVer topic)
    claim_id: str
    claim: str
    sentence: str
    label: str  # supports | contradicts | neutral
    rationale: bool  # a gold rationale / labelled evidence sentence (not a same-paper neutral)

    @property
    def part(self) -> str:
        return part_of(self.group)


def part_of(group: int) -> str:
    return "held-out" if group % 3 == 0 else "calibrate" if group % 6 == 1 else "train"


def _claim_groups(claims: list[dict]) -> dict[int, int]:
    """claim id → the smallest claim id of its group (claims linked by a shared cited abstract)."""
    parent = {c["id"]: c["id"] for c in claims}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_doc: dict[str, int] = {}
    for c in claims:
        docs = {str(d) for d in c.get("cited_doc_ids", [])} | set(c.get("evidence", {}))
        for d in docs:
            if d in by_doc:
                a, b = find(by_doc[d]), find(c["id"])
                parent[max(a, b)] = min(a, b)
            else:
                by_doc[d] = c["id"]
    return {c["id"]: find(c["id"]) for c in claims}


def scifact_claims(data: Path = DATA) -> list[dict]:
    with open(data / "claims" / "scifact" / "claims_train.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def scifact_corpus(data: Path = DATA) -> dict[str, dict]:
    with gzip.open(data / "claims" / "scifact" / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        return {str(d["doc_id"]): d for d in map(json.loads, fh)}


def scifact_pairs(data: Path = DATA) -> Iterator[Pair]:
    claims = scifact_claims(data)
    corpus = scifact_corpus(data)
    groups = _claim_groups(claims)
    for c in claims:
        evidence = c.get("evidence", {})
        for doc_id in sorted({str(d) for d in c.get("cited_doc_ids", [])} | set(evidence)):
            doc = corpus.get(doc_id)
            if doc is None:
                continue
            labelled: dict[int, str] = {}
            for rset in evidence.get(doc_id, []):
                for s in rset["sentences"]:
                    labelled[s] = "supports" if rset["label"] == "SUPPORT" else "contradicts"
            for n, sentence in enumerate(doc["abstract"]):
                label = labelled.get(n, "neutral")
                yield Pair("scifact", groups[c["id"]], str(c["id"]), c["claim"], sentence.strip(), label,
                           n in labelled)


def healthver_pairs(data: Path = DATA) -> Iterator[Pair]:
    with open(data / "claims" / "healthver" / "healthver_dev.csv", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            label = {"Supports": "supports", "Refutes": "contradicts", "Neutral": "neutral"}[row["label"]]
            yield Pair("healthver", int(row["topic_ip"]), f"hv{row['id']}", row["claim"].strip(),
                       row["evidence"].strip(), label, label != "neutral")


def all_pairs(data: Path = DATA) -> list[Pair]:
    return [*scifact_pairs(data), *healthver_pairs(data)]


# ---- training-time augmentation: minimal pairs that differ only by the claim's polarity ----------

_AUX = re.compile(r"\b(is|are|was|were|can|could|may|might|will|would|should|must)\b(?! not)", re.I)
_NEGATED = [(re.compile(r"\b(is|are|was|were|could|may|might|will|would|should|must) not\b", re.I), r"\1"),
            (re.compile(r"\bcannot\b", re.I), "can"), (re.compile(r"\bdo not (\w+)", re.I), r"\1")]
_DOES_NOT = re.compile(r"\bdoes not (\w+)", re.I)
_VERBS = ("increase", "decrease", "reduce", "cause", "induce", "inhibit", "promote", "improve", "prevent",
          "lead", "result", "correlate", "affect", "regulate", "enhance", "activate", "suppress", "mediate",
          "contribute", "protect", "require", "predict", "associate", "play", "impair", "elevate", "lower",
          "raise", "drive", "block", "trigger", "confer", "alter", "control", "limit", "modulate", "decline",
          "rise", "occur", "exist", "produce", "bind", "express", "respond", "show", "have", "depend",
          "attenuate", "exacerbate", "delay", "accelerate", "stimulate", "restore", "facilitate", "impact")
_FLIPS = [("increases", "decreases"), ("increase", "decrease"), ("increased", "decreased"),
          ("higher", "lower"), ("more", "less"), ("greater", "smaller"), ("positively", "negatively"),
          ("upregulates", "downregulates"), ("up-regulates", "down-regulates"), ("promotes", "inhibits"),
          ("improves", "worsens"), ("shorter", "longer"), ("reduced", "increased"), ("reduces", "increases"),
          ("enhances", "reduces"), ("activates", "inhibits"), ("benefit", "harm"), ("lowers", "raises")]


_NOT_SUBJECT = {"to", "not", "may", "can", "will", "a", "an", "the", "leading", "main", "major", "common", "key",
                "primary", "no", "any", "this", "that", "its", "their", "of", "and", "or", "important"}


def _third_person(base: str) -> str:
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        return base[:-1] + "ies"
    return base + ("es" if base.endswith(("s", "sh", "ch", "x", "z", "o")) else "s")


def negate(claim: str) -> str | None:
    """The claim with its polarity turned (rule-based; None when no rule applies): "X increases Y"
    → "X does not increase Y"; "X is Y" → "X is not Y"; and back ("does not increase" → "increases")."""
    m = _DOES_NOT.search(claim)
    if m:
        return claim[:m.start()] + _third_person(m.group(1)) + claim[m.end():]
    for pattern, repl in _NEGATED:
        if pattern.search(claim):
            return pattern.sub(repl, claim, count=1)
    words = claim.split()
    for n, w in enumerate(words[1:], 1):
        low = w.lower().strip(",;")
        for base in _VERBS:
            if low == _third_person(base):
                return " ".join([*words[:n], "does not", base + w[len(low):] if w.lower() == low else base,
                                 *words[n + 1:]])
            if low == base and words[n - 1].lower() not in _NOT_SUBJECT:
                return " ".join([*words[:n], "do not", w, *words[n + 1:]])
    m = _AUX.search(claim)
    if m:
        word = m.group(1)
        return claim[:m.end()] + ("not" if word.lower() == "can" else " not") + claim[m.end():]
    return None


def flip(claim: str) -> str | None:
    """The claim with one direction word turned ("increases" → "decreases"); None when it has none."""
    for a, b in _FLIPS:
        for x, y in ((a, b), (b, a)):
            m = re.search(rf"\b{re.escape(x)}\b", claim, re.I)
            if m:
                return claim[:m.start()] + (y.capitalize() if m.group()[0].isupper() else y) + claim[m.end():]
    return None


def augmented(pairs: list[Pair], neutral_share: float = 0.3) -> list[Pair]:
    """Minimal pairs for training: each direction pair again with its claim negated (label turned),
    and with a direction word flipped where it has one (label turned); a share of neutral pairs again
    with the claim negated (still neutral), so negation alone never means "contradicts"."""
    out: list[Pair] = []
    turn = {"supports": "contradicts", "contradicts": "supports"}
    for n, p in enumerate(pairs):
        if p.label in turn:
            for changed in (negate(p.claim), flip(p.claim)):
                if changed and changed != p.claim:
                    out.append(Pair(p.source, p.group, p.claim_id + "~", changed, p.sentence, turn[p.label],
                                    p.rationale))
        elif (n * 2654435761) % 1000 < neutral_share * 1000:
            changed = negate(p.claim)
            if changed and changed != p.claim:
                out.append(Pair(p.source, p.group, p.claim_id + "~", changed, p.sentence, "neutral", p.rationale))
    return out
