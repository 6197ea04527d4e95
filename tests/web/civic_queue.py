"""Review-queue records built from the real CIViC corpus (``../shared/data/civic_corpus``).

Each CIViC evidence row (molecular profile, disease, direction, PubMed id) becomes a complete
``literature-claim`` record asking for the ``knowledge_base`` use, which needs a person's
acceptance, so every record goes to the review queue. Its quote is a sentence of the cited
paper's body read from the pinned JATS bytes with plain lxml (never with bioevidence's parser).
Some records carry the faults reviewers meet, by position ``n % 10``:

* 3: one word of the quote changed (not in the paper: the page shows the closest passage);
* 5: the quote starts inside a word (the page names the whole word);
* 7: extracted by a model (``llm_extraction``: the use does not allow LLM-only evidence);
* 9 (every other time): the claim cites, with a true quote, one of the corpus's retracted papers
  instead (BEV019; PMID 32432717 also carries an expression of concern, BEV027).

"Does Not Support" rows put the quote on a contradicting line.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

from lxml import etree

FAULTS = {3: "changed-word", 5: "cut-start", 7: "llm"}
CONCERN = "32432717"  # retracted, after an expression of concern: the first retracted paper cited (entry 10)


def _sentences(data: bytes) -> list[str]:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(data, parser)
    out: list[str] = []
    for body in root.iter("body"):
        for p in body.iter("p"):
            if len(p) or not p.text or any(a.tag in ("caption", "list-item", "table-wrap") for a in p.iterancestors()):
                continue
            text = " ".join(p.text.split())
            for s in re.split(r"(?<=[a-z0-9]\.) (?=[A-Z])", text):
                s = s.strip()
                if 12 <= len(s.split()) <= 40 and s.endswith(".") and "al." not in s:
                    out.append(s)
    return out


def retracted(shared: Path) -> list[str]:
    return [str(p) for p in json.loads((shared / "civic_corpus" / "manifest.json").read_text())["retracted"]]


def papers(shared: Path) -> dict[str, dict[str, Any]]:
    """pmid → pinned sha256, esummary title and body sentences, for every paper with open full text."""
    snapshots = shared / "civic_corpus" / "snapshots"
    works = json.loads((snapshots / "literature.json").read_text())["works"]
    out: dict[str, dict[str, Any]] = {}
    for key, work in sorted(works.items()):
        pmid = key.split(":", 1)[1]
        if not key.startswith("pmid:") or not work.get("fulltext_sha256"):
            continue
        sentences = _sentences(gzip.decompress((snapshots / f"{work['fulltext_sha256']}.xml.gz").read_bytes()))
        if not sentences:
            continue
        summary = json.loads(gzip.decompress((snapshots / f"{work['metadata_sha256']}.json.gz").read_bytes()))
        out[pmid] = {"sha": work["fulltext_sha256"], "title": summary["result"][pmid]["title"],
                     "sentences": sentences}
    return out


def evidence_rows(shared: Path) -> list[dict[str, Any]]:
    with gzip.open(shared / "civic_corpus" / "civic-evidence.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _fault(quote: str, kind: str) -> str:
    words = quote.split()
    if kind == "changed-word":
        i = next((k for k in range(len(words) // 2, len(words)) if len(words[k]) > 4 and words[k].isalpha()),
                 len(words) // 2)
        words[i] = "never" if words[i] != "never" else "always"
        return " ".join(words)
    if kind == "cut-start":
        i = next((k for k, w in enumerate(words[:-6]) if len(w) > 6 and w.isalpha()), 0)
        return " ".join([words[i][2:], *words[i + 1:]])
    return quote


def record(n: int, row: dict[str, Any], paper: dict[str, Any], *, sentence: int = 0,
           fault: str | None = None, pmid: str | None = None) -> dict[str, Any]:
    pmid = pmid or row["citation_id"]
    quote = paper["sentences"][sentence % len(paper["sentences"])]
    if fault in ("changed-word", "cut-start"):
        quote = _fault(quote, fault)
    against = row.get("evidence_direction") == "Does Not Support"
    method = "llm_extraction" if fault == "llm" else "manual_curation"
    lines = [{"id": "l", "direction": "contradicts" if against else "supports", "evidence_item_ids": ["e"]}]
    return {
        "record_id": f"civic:{row['evidence_id']}:{n}", "profile_id": "literature-claim",
        "requested_uses": ["knowledge_base"],
        "statement": {
            "id": "s", "statement_status": "proposed", "predicate": "associated_with",
            "subject": {"id": f"civic.mp:{row['molecular_profile_id']}", "label": row["molecular_profile"],
                        "entity_type": "variant"},
            "object": {"id": f"DOID:{row['doid']}" if row.get("doid") else "DOID:162", "label": row["disease"],
                       "entity_type": "disease"},
            "scope": ["NCBITaxon:9606"], "evidence_lines": lines},
        "source_artifacts": [{"id": "p", "title": paper["title"], "source_type": "publication", "uri": f"pmid:{pmid}",
                              "version": "1", "retrieved_at": "2026-09-29T00:00:00Z", "sha256": paper["sha"],
                              "observed_sha256": paper["sha"]}],
        "evidence_items": [{"id": "e", "source_artifact_id": "p", "locator": "body", "extracted_text": quote,
                            "evidence_type": "publication_result", "extraction_method": method,
                            "scope": ["NCBITaxon:9606"]}],
        "adjudications": [],
    }


def records(shared: Path, count: int) -> list[dict[str, Any]]:
    """``count`` records cycling over the CIViC rows whose paper has open full text (see module docstring)."""
    found = papers(shared)
    rows = [r for r in evidence_rows(shared) if r.get("citation_id") in found and r.get("disease", "").strip()]
    gone = sorted((p for p in retracted(shared) if p in found), key=lambda p: p != CONCERN)  # the concern first
    out = []
    for n in range(count):
        row = rows[n % len(rows)]
        if n % 20 == 9:
            pmid = gone[(n // 20) % len(gone)]
            out.append(record(n, row, found[pmid], sentence=n // 20, pmid=pmid))
            continue
        out.append(record(n, row, found[row["citation_id"]], sentence=n // len(rows), fault=FAULTS.get(n % 10)))
    return out


def long_record(shared: Path, items: int = 300) -> dict[str, Any]:
    """One record citing ``items`` sentences of the CIViC papers (a long record): every tenth quote has
    a changed word and every tenth, from the sixth, starts inside a word, as in :func:`records`."""
    found = papers(shared)
    row = evidence_rows(shared)[0]
    pmids = [p for p in sorted(found) if p not in retracted(shared)]
    base = record(0, row, found[pmids[0]])
    sources, evidence = [], []
    for n in range(items):
        pmid = pmids[n % len(pmids)]
        paper = found[pmid]
        if n < len(pmids):
            sources.append({**base["source_artifacts"][0], "id": f"p{n}", "title": paper["title"],
                            "uri": f"pmid:{pmid}", "sha256": paper["sha"], "observed_sha256": paper["sha"]})
        quote = paper["sentences"][(n // len(pmids)) % len(paper["sentences"])]
        fault = {3: "changed-word", 5: "cut-start"}.get(n % 10)
        evidence.append({**base["evidence_items"][0], "id": f"e{n + 1}", "source_artifact_id": f"p{n % len(pmids)}",
                         "extracted_text": _fault(quote, fault) if fault else quote})
    base["record_id"] = f"civic:long:{items}"
    base["source_artifacts"] = sources
    base["evidence_items"] = evidence
    base["statement"]["evidence_lines"] = [{"id": "l", "direction": "supports",
                                            "evidence_item_ids": [e["id"] for e in evidence]}]
    return base
