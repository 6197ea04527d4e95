"""ADAPTER, until the librarian's cited answer (issue 11) is on main: an extractive answer over
``Librarian.ask`` results, citing only items the gate verified.

What it does, with stage APIs only: the question's items (``Answer.to_json()``: its
``source_artifacts`` and ``evidence_items``) go through the server's ``LiteratureGrounder``
(``ground(record)``: every quote re-checked against the pinned bytes of the server's store); an
item it did not verify is left out and named with the grounder's reason. From the verified
items: a verdict line counting papers by stance (a paper's stance is that of its best-ranked
verified sentence that is not neutral), then the best supporting and contradicting sentences
grouped by paper, each citing its item number. "Insufficient evidence" when no verified sentence
supports or contradicts. No model synthesis here. The output has the shape the librarian's
``CitedAnswer.to_json()`` will have, so the tool keeps its schema when this adapter goes.
"""

from __future__ import annotations

import re
from typing import Any

_ITEM = re.compile(r"^\$\.evidence_items\[(\d+)\]")
_SOURCE = re.compile(r"^\$\.source_artifacts\[(\d+)\]")


def verify(grounder: Any, answer: dict[str, Any]) -> tuple[list[int], list[tuple[int, str]]]:
    """(item numbers the literature grounder verified, [(item number, why) for the others])."""
    items = answer["items"]
    record = {"requested_uses": [], "source_artifacts": answer["source_artifacts"],
              "evidence_items": answer["evidence_items"]}
    grounding = grounder.ground(record)
    why: dict[int, str] = {}
    sources = [s.get("id") for s in answer["source_artifacts"]]
    for finding in grounding.findings:
        if finding.severity not in ("error", "review"):
            continue
        reason = f"{finding.rule_id}: {finding.message}"
        if (hit := _ITEM.match(finding.field_path)) is not None:
            why.setdefault(items[int(hit.group(1))]["rank"], reason)
        elif (hit := _SOURCE.match(finding.field_path)) is not None:
            for item, evidence in zip(items, answer["evidence_items"], strict=True):
                if evidence["source_artifact_id"] == sources[int(hit.group(1))]:
                    why.setdefault(item["rank"], reason)
    admitted, left_out = [], []
    for item, evidence in zip(items, answer["evidence_items"], strict=True):
        if evidence["id"] in grounding.verified:
            admitted.append(item["rank"])
        else:
            left_out.append((item["rank"], why.get(item["rank"], "the gate did not verify this quote against "
                                                               "the server's pinned papers")))
    return admitted, left_out


def _papers(n: int) -> str:
    return f"{n} paper{'s' if n != 1 else ''}"


def extractive(answer: dict[str, Any], admitted: list[int], left_out: list[tuple[int, str]],
               max_papers: int = 3) -> dict[str, Any]:
    """The cited answer from the verified items (see module docstring)."""
    by_rank = {item["rank"]: item for item in answer["items"]}
    stance: dict[str, str] = {}  # doc_id -> stance of its best verified non-neutral sentence
    seen: list[str] = []
    for rank in sorted(admitted):
        item = by_rank[rank]
        if item["doc_id"] not in seen:
            seen.append(item["doc_id"])
        if item.get("stance") in ("supports", "contradicts"):
            stance.setdefault(item["doc_id"], item["stance"])
    counts = {"supports": 0, "contradicts": 0, "neutral": 0}
    for doc in seen:
        counts[stance.get(doc, "neutral")] += 1
    sentences: list[dict[str, Any]] = []
    for side in ("supports", "contradicts"):
        docs = [d for d in seen if stance.get(d) == side][:max_papers]
        for doc in docs:
            ranks = [r for r in sorted(admitted) if by_rank[r]["doc_id"] == doc and by_rank[r].get("stance") == side]
            title = by_rank[ranks[0]].get("title") or doc
            quoted = " ".join(f'"{by_rank[r]["text"]}"' for r in ranks[:2])
            sentences.append({"text": f"{title} ({doc}) {side}: {quoted}", "cites": ranks[:2]})
    if counts["supports"] or counts["contradicts"]:
        verdict = (f"{_papers(counts['supports'])} support, {_papers(counts['contradicts'])} contradict, "
                   f"{_papers(counts['neutral'])} neutral")
    else:
        verdict = "Insufficient evidence: no verified sentence supports or contradicts the question."
    return {"question": answer["question"], "mode": "extractive", "verdict": verdict, "sentences": sentences,
            "admitted_items": sorted(admitted), "left_out": [{"item": n, "why": w} for n, w in left_out],
            "dropped_sentences": [], "papers_by_stance": counts,
            "items": [by_rank[r] for r in sorted(admitted)]}
