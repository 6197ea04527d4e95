"""Record builders for tests: a minimal valid record per built-in profile, and edits of it.

Records are built fresh on every call so tests can mutate them freely.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

HASH = "ab" * 32
OTHER_HASH = "cd" * 32
SCOPE = ["NCBITaxon:9606"]


def item(n: int, evidence_type: str = "curated_annotation", method: str = "manual_curation",
         scope: list[str] | None = None, created_by: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": f"t:item-{n}", "source_artifact_id": "t:source-1", "locator": f"row={n}",
        "extracted_text": f"Evidence sentence number {n} for the test record.",
        "evidence_type": evidence_type, "extraction_method": method, "scope": list(scope or SCOPE),
    }
    if created_by is not None:
        out["created_by"] = created_by
    return out


def adjudication(n: int, uses: list[str], decision: str = "accept", agent_type: str = "human",
                 reviewer: str = "orcid:0000-0001-0000-0001") -> dict[str, Any]:
    return {"id": f"t:review-{n}", "statement_id": "t:statement", "applies_to_uses": uses, "decision": decision,
            "reviewer": {"id": reviewer, "agent_type": agent_type}, "rationale": "Checked against the source.",
            "decided_at": "2026-11-02T10:00:00Z"}


def record(profile: str = "general", uses: list[str] | None = None, items: list[dict[str, Any]] | None = None,
           adjudications: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The nearest valid record: admitted for ``uses`` under ``profile`` (with the right evidence types)."""
    if profile == "literature-claim":
        subject = {"id": "HGNC:1097", "label": "BRAF", "entity_type": "gene"}
        predicate, obj = "associated_with", {"id": "MONDO:0005105", "label": "melanoma", "entity_type": "disease"}
        default_items = [item(1, "publication_result")]
        uses = uses or ["research_summary"]
    elif profile == "dataset-label":
        subject = {"id": "t:sample-1", "label": "sample 1", "entity_type": "sample"}
        predicate, obj = "has_label", {"id": "CL:0000236", "label": "B cell", "entity_type": "cell_type"}
        default_items = [item(1, "curated_label"), item(2, "sample_link", "deterministic_parser")]
        uses = uses or ["reference_annotation"]
    else:
        subject = {"id": "t:protein-a", "label": "protein A", "entity_type": "protein"}
        predicate, obj = "participates_in", {"id": "t:process-a", "label": "process A",
                                             "entity_type": "biological_process"}
        default_items = [item(1)]
        uses = uses or ["knowledge_base"]
    items = copy.deepcopy(items) if items is not None else default_items
    return {
        "record_id": "t:record",
        "profile_id": profile,
        "statement": {
            "id": "t:statement", "subject": subject, "predicate": predicate, "object": obj, "scope": list(SCOPE),
            "evidence_lines": [{"id": "t:line-1", "direction": "supports",
                                "evidence_item_ids": [i["id"] for i in items]}],
            "statement_status": "proposed",
        },
        "source_artifacts": [{
            "id": "t:source-1", "title": "A test source", "source_type": "dataset_snapshot",
            "uri": "https://example.org/source", "version": "v1", "retrieved_at": "2026-09-21T00:00:00Z",
            "sha256": HASH, "observed_sha256": HASH,
        }],
        "evidence_items": items,
        "adjudications": copy.deepcopy(adjudications) if adjudications is not None else [],
        "requested_uses": list(uses),
    }


# A mutation corpus: every field of two base records replaced by each of VALUES, dropped, or given an
# unknown sibling. Used to compare validators (compiled vs jsonschema; ours vs the reference).

VALUES: list[Any] = [
    None, "", " ", "\t", "x", "ok value", 0, 1.5, True, [], ["a"], ["a", "a"], [""], {}, {"id": "x"},
    "2026-09-21T00:00:00Z", "2026-09-21T00:00:00", "2026-09-21", "2026-09-21T25:00:00Z", "2026-02-30T00:00:00Z",
    "2026-09-21t00:00:00z", "2026-09-21 00:00:00Z", "2026-09-21T00:00:00.123456+05:30", "2016-12-31T23:59:60Z",
    "2026-9-21T00:00:00Z", "pmid:12345", "https://example.org/a b", "doi:10.1000/xyz", "not a uri", "urn:x",
    "/relative/path", "http://exa mple.org", "https://example.org/é", "mailto:x@example.org", "a" * 64, "A" * 64,
    "ab" * 31, "0" * 65, "supports", "human", "accept", "publication", "llm_extraction", "proposed",
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*prefix, index))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    out = copy.deepcopy(value)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = copy.deepcopy(new)
    return out


def _bases() -> list[dict[str, Any]]:
    rich = record("dataset-label", ["training_data"], adjudications=[adjudication(1, ["training_data"])])
    rich["statement"]["created_by"] = {"id": "software:model", "name": "a model", "agent_type": "software"}
    rich["evidence_items"][0]["created_by"] = {"id": "software:model", "agent_type": "software"}
    rich["statement"]["evidence_lines"][0]["rationale"] = "why"
    minimal = record("general", items=[item(1)])
    del minimal["adjudications"]
    del minimal["source_artifacts"][0]["uri"]
    del minimal["source_artifacts"][0]["observed_sha256"]
    return [rich, minimal]


def corpus() -> Iterator[Any]:
    for base in _bases():
        yield base
        for path in _paths(base):
            if not path:
                continue
            for new in VALUES:
                yield _replace(base, path, new)
            if isinstance(path[-1], str):  # drop the key, and add an unknown sibling
                dropped = copy.deepcopy(base)
                parent = dropped
                for key in path[:-1]:
                    parent = parent[key]
                del parent[path[-1]]
                yield dropped
                yield _replace(base, (*path[:-1], "unknown_field"), "x")
    yield from (None, [], "record", 3, {"record_id": "x"})


# A profile for records built from librarian output: a research summary needs a quote a grounder verified.
LIBRARIAN_PROFILE = """\
id: librarian-evidence
version: "1"
description: Claims resting on verbatim quotes the librarian returned.
predicates: []
subject_types: []
object_types: []
uses:
  research_summary:
    required_evidence_types: [literature_quote]
    verified_evidence_types: [literature_quote]
    require_human_acceptance: false
    allow_llm_only: false
    allow_string_match_only: true
"""


def claim_record(n: int, pmid: str, sha: str, title: str, quote: str) -> dict[str, Any]:
    """A complete ``literature-claim`` record: one quote (locator ``body``) from the paper ``pmid``."""
    return {
        "record_id": f"civic:{pmid}:{n}", "profile_id": "literature-claim", "requested_uses": ["research_summary"],
        "statement": {
            "id": "s", "statement_status": "proposed", "predicate": "associated_with",
            "subject": {"id": "HGNC:6407", "label": "KRAS", "entity_type": "gene"},
            "object": {"id": "MONDO:0005575", "label": "colorectal cancer", "entity_type": "disease"},
            "scope": ["NCBITaxon:9606"],
            "evidence_lines": [{"id": "l", "direction": "supports", "evidence_item_ids": ["e"]}]},
        "source_artifacts": [{"id": "p", "title": title, "source_type": "publication", "uri": f"pmid:{pmid}",
                              "version": "1", "retrieved_at": "2026-09-29T00:00:00Z", "sha256": sha,
                              "observed_sha256": sha}],
        "evidence_items": [{"id": "e", "source_artifact_id": "p", "locator": "body", "extracted_text": quote,
                            "evidence_type": "publication_result", "extraction_method": "manual_curation",
                            "scope": ["NCBITaxon:9606"]}],
        "adjudications": [],
    }


ANTONYMS = [("increased", "decreased"), ("higher", "lower"), ("positive", "negative"),
            ("sensitive", "resistant"), ("more", "less"), ("longer", "shorter"), ("better", "worse"),
            ("significantly", "insignificantly"), ("high", "low")]


SUPERSCRIPT = str.maketrans("0123456789", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")
SUBSCRIPT = str.maketrans("0123456789", "".join(chr(0x2080 + n) for n in range(10)))


def quote_faults(sentence: str, other: str) -> dict[str, str]:
    """The controlled faults derivable from a true ``sentence`` (``other``: a sentence from elsewhere in
    the paper, for stitching): stitched, word dropped, negation added/removed, number changed, a digit
    written as a superscript or subscript, antonym."""
    words = sentence.split()
    out = {"stitched": sentence + " " + other}
    middle = next((i for i in range(len(words) // 2, len(words) - 1) if len(words[i]) > 3), None)
    if middle is not None:
        out["word dropped"] = " ".join(words[:middle] + words[middle + 1:])
    verb = re.search(r"\b(is|was|were|are|did|does|could|can|may)\b", sentence)
    out["negation added"] = (sentence[:verb.end()] + " not" + sentence[verb.end():]) if verb else \
        " ".join([*words[:3], "not", *words[3:]])
    if re.search(r"\b(not|no)\b ", sentence):
        out["negation removed"] = re.sub(r"\b(not|no)\b ", "", sentence, count=1)
    digit = re.search(r"\d", sentence)
    if digit:
        d = sentence[digit.start()]
        out["number changed"] = sentence[:digit.start()] + str((int(d) + 1) % 10) + sentence[digit.end():]
        # "4 of the 34" as "4 of the 3⁴": a reader sees another number (compatibility folding must not forgive it)
        out["digit superscripted"] = sentence[:digit.start()] + d.translate(SUPERSCRIPT) + sentence[digit.end():]
        out["digit subscripted"] = sentence[:digit.start()] + d.translate(SUBSCRIPT) + sentence[digit.end():]
    for a, b in ANTONYMS:
        for x, y in ((a, b), (b, a)):
            if re.search(rf"\b{x}\b", sentence):
                out["antonym swapped"] = re.sub(rf"\b{x}\b", y, sentence, count=1)
                break
        if "antonym swapped" in out:
            break
    return out


# A policy corpus: the contracts' inputs (statement status, adjudications, extraction methods, directions,
# scope, hashes, evidence types) combined over each built-in profile's uses, each record valid by the schema.
# Used to compare our findings with the reference's where both emit them (tests/gate/test_reference_parity.py).

_METHODS = ("manual_curation", "llm_extraction", "normalized_string_match", "deterministic_parser")


def policy_corpus() -> Iterator[tuple[str, dict[str, Any]]]:
    uses_of = {"general": ["knowledge_base", "research_summary", "training_data", "external_validation"],
               "dataset-label": ["reference_annotation", "training_data", "external_validation"],
               "literature-claim": ["research_summary", "knowledge_base"]}
    for profile, uses in uses_of.items():
        for use in uses:
            base = record(profile, [use])
            yield profile, base
            for status in ("rejected", "superseded", "accepted"):
                out = copy.deepcopy(base)
                out["statement"]["statement_status"] = status
                yield profile, out
            for decision in ("accept", "reject", "defer"):
                for agent in ("human", "software"):
                    yield profile, record(profile, [use], adjudications=[adjudication(1, [use], decision, agent)])
            for first in _METHODS:
                for second in _METHODS:
                    out = copy.deepcopy(base)
                    for n, entry in enumerate(out["evidence_items"]):
                        entry["extraction_method"] = first if n == 0 else second
                    if len(out["evidence_items"]) == 1:
                        extra = copy.deepcopy(out["evidence_items"][0])
                        extra["id"], extra["extraction_method"] = "t:item-9", second
                        out["evidence_items"].append(extra)
                        out["statement"]["evidence_lines"][0]["evidence_item_ids"].append("t:item-9")
                    yield profile, out
            contradicting = copy.deepcopy(base)
            contradicting["statement"]["evidence_lines"].append(
                {"id": "t:line-2", "direction": "contradicts", "evidence_item_ids": [base["evidence_items"][0]["id"]]})
            yield profile, contradicting
            only_against = copy.deepcopy(base)
            only_against["statement"]["evidence_lines"][0]["direction"] = "contradicts"
            yield profile, only_against
            other_scope = copy.deepcopy(base)
            other_scope["evidence_items"][0]["scope"] = ["NCBITaxon:10090"]
            yield profile, other_scope
            rehashed = copy.deepcopy(base)
            rehashed["source_artifacts"][0]["observed_sha256"] = "b" * 64
            yield profile, rehashed
            untyped = copy.deepcopy(base)
            for entry in untyped["evidence_items"]:
                entry["evidence_type"] = "other_evidence"
            yield profile, untyped
            for where in (("predicate",), ("subject", "entity_type"), ("object", "entity_type")):
                outside = copy.deepcopy(base)  # outside the profile's allowlists (general has none)
                parent = outside["statement"]
                for key in where[:-1]:
                    parent = parent[key]
                parent[where[-1]] = "regulates" if where == ("predicate",) else "organism"
                yield profile, outside
            foreign = copy.deepcopy(base)
            foreign["profile_id"] = "dataset-label" if profile != "dataset-label" else "general"
            yield profile, foreign
            unknown_use = copy.deepcopy(base)
            unknown_use["requested_uses"] = [use, "publication"]
            yield profile, unknown_use
            unsourced = copy.deepcopy(base)
            unsourced["evidence_items"][0]["source_artifact_id"] = "t:source-9"
            yield profile, unsourced
            repeated = copy.deepcopy(base)
            repeated["statement"]["scope"] = [*SCOPE, *SCOPE]
            repeated["evidence_items"][0]["scope"] = [*SCOPE, *SCOPE]
            yield profile, repeated
            elsewhere = record(profile, [use], adjudications=[adjudication(1, [use])])
            elsewhere["adjudications"][0]["statement_id"] = "t:statement-2"
            yield profile, elsewhere
            floated = copy.deepcopy(base)  # a float the two JSON encoders write differently (1e-07 / 1e-7)
            floated["statement"]["confidence"] = 1e-7
            yield profile, floated
