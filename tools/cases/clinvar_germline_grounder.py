"""The ClinVar case's own pieces, written as a user of bioevidence would write them.

* :class:`Sample`: the peer's pinned ClinVar sample (``examples/clinvar_germline/sources``), read in
  place and checked against its manifest (SHA-256 and size of the decompressed JSON Lines).
* :func:`build_record`: one evidence record per variant, built by the method of the peer's importer
  (one item per 2023-09 submission, typed by its review status, cited by a line of the direction its
  classification gives; two derived items, ``multi_submitter_or_expert_review`` and ``expert_review``,
  naming the submissions they rest on).
* :func:`perturb`: the peer's ten controlled faults and two trust-boundary forgeries, plus the
  forgeries of "beyond 0.8.0".
* :class:`ClinVarSnapshotGrounder`: recomputes a record's evidence from the pinned sample bytes, read
  through :class:`bioevidence.SnapshotStore` (re-hashed before use), through the public grounder API
  (``name`` and ``ground(record) -> bioevidence.Grounding``).

Nothing ClinVar-specific lives in the engine (``src/``).
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bioevidence import Finding, Grounding, IntegrityError, SnapshotStore, SourceError

Record = dict[str, Any]

USES = ("research_summary", "clinical_reference", "expert_reference")
SCOPE = ("NCBITaxon:9606", "origin:germline")
SAMPLE_ARTIFACT = "bioev:clinvar-sample"
OBJECT_ID = "bioev:germline-plp"

# Classification terms (the peer's sources/README.md and prepare_source.py name the same sets).
PATHOGENIC = frozenset({"Pathogenic", "Likely pathogenic", "Pathogenic, low penetrance",
                        "Likely pathogenic, low penetrance"})
DISSENT = frozenset({"Uncertain significance", "Likely benign", "Benign"})
RISK = frozenset({"Likely risk allele", "Established risk allele"})

# A submission's review status decides its evidence type; a status not listed fails the import.
SUBMISSION_TYPE = {
    "criteria provided, single submitter": "criteria_based_classification",
    "reviewed by expert panel": "criteria_based_classification",
    "practice guideline": "criteria_based_classification",
    "no assertion criteria provided": "classification_without_criteria",
    "no assertion provided": "record_without_classification",
}
EXPERT = frozenset({"reviewed by expert panel", "practice guideline"})
DERIVED = ("multi_submitter_or_expert_review", "expert_review")

# The severities of the rule catalogue (docs/rules.md) for the codes this grounder emits: the public
# API has no way to ask for them (see the case's report), so they are written out here.
SEVERITY = {"BEV014": "error", "BEV015": "review", "BEV016": "error", "BEV017": "error", "BEV018": "review"}


def line_direction(classification: str) -> str:
    """``supports`` for a P/LP classification, ``contradicts`` for VUS/LB/B, else ``neutral``."""
    if classification in PATHOGENIC:
        return "supports"
    return "contradicts" if classification in DISSENT else "neutral"


def outcome(classification: str | None) -> str:
    """The 2026-09 aggregate classification as ``stable_plp``, ``conflicting``, ``downgraded``,
    ``missing`` or ``other`` (terms split on ``/`` and ``;``)."""
    if classification is None:
        return "missing"
    if classification.startswith("Conflicting"):
        return "conflicting"
    terms = {part.strip() for chunk in classification.split(";") for part in chunk.split("/") if part.strip()}
    if terms & PATHOGENIC and terms <= PATHOGENIC | RISK:
        return "stable_plp"
    return "downgraded" if terms & DISSENT else "other"


@dataclass(frozen=True)
class Sample:
    """The pinned sample: its manifest, the SHA-256 of its decompressed bytes and its variants."""

    folder: Path
    manifest: dict[str, Any]
    sha256: str
    cases: tuple[dict[str, Any], ...]

    @property
    def gz_path(self) -> Path:
        return self.folder / str(self.manifest["projection_file"])

    @classmethod
    def load(cls, folder: Path) -> Sample:
        """Read the sample in place; refuse bytes that are not the manifest's."""
        manifest = json.loads((folder / "sources" / "manifest.json").read_text(encoding="utf-8"))
        raw = gzip.decompress((folder / str(manifest["projection_file"])).read_bytes())
        sha = hashlib.sha256(raw).hexdigest()
        if sha != manifest["projection_sha256"] or len(raw) != manifest["projection_bytes"]:
            raise ValueError(f"the ClinVar sample hashes to {sha}, not to its manifest's "
                             f"{manifest['projection_sha256']}")
        cases = tuple(parse_cases(raw))
        if len(cases) != manifest["variant_count"]:
            raise ValueError(f"the ClinVar sample holds {len(cases)} variants, its manifest says "
                             f"{manifest['variant_count']}")
        return cls(folder, manifest, sha, cases)

    def population(self) -> dict[str, Any]:
        """The whole-population outcome table, checked against its manifest hash."""
        raw = (self.folder / str(self.manifest["population_file"])).read_bytes()
        if hashlib.sha256(raw).hexdigest() != self.manifest["population_sha256"]:
            raise ValueError("the ClinVar population table does not hash to its manifest's sha256")
        table: dict[str, Any] = json.loads(raw)["population_2023_09_germline_plp"]
        return table


def parse_cases(raw: bytes) -> list[dict[str, Any]]:
    """One variant per JSON line; duplicate variation ids are refused."""
    cases = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    if len({c["variation_id"] for c in cases}) != len(cases):
        raise ValueError("the ClinVar sample repeats a variation id")
    return cases


def _submission_text(sub: dict[str, Any]) -> str:
    fields = {"submitter": sub["Submitter"], "classification": sub["ClinicalSignificance"],
              "review_status": sub["ReviewStatus"], "collection_method": sub["CollectionMethod"],
              "date_last_evaluated": sub["DateLastEvaluated"]}
    return json.dumps(fields, ensure_ascii=False, sort_keys=True)


def _item(item_id: str, evidence_type: str, locator: str, text: str) -> Record:
    return {"id": item_id, "source_artifact_id": SAMPLE_ARTIFACT, "locator": locator, "extracted_text": text,
            "evidence_type": evidence_type, "extraction_method": "deterministic_parser",
            "created_by": {"id": "bioev:clinvar-importer", "agent_type": "software"}, "scope": list(SCOPE)}


def derived_items(case: dict[str, Any]) -> list[tuple[str, str, list[str], str]]:
    """The aggregates the submissions support: (item id, evidence type, SCVs it rests on, text)."""
    plp = [s for s in case["submissions"] if s["ClinicalSignificance"] in PATHOGENIC
           and SUBMISSION_TYPE[s["ReviewStatus"]] == "criteria_based_classification"]
    experts = [s for s in plp if s["ReviewStatus"] in EXPERT]
    submitters = {s["Submitter"] for s in plp}
    out = []
    if experts or len(submitters) >= 2:
        text = "expert or practice-guideline review" if experts else f"{len(submitters)} distinct submitters"
        out.append(("bioev:derived-multi", DERIVED[0], [s["SCV"] for s in experts or plp], text))
    if experts:
        out.append(("bioev:derived-expert", DERIVED[1], [s["SCV"] for s in experts],
                    "expert or practice-guideline review"))
    return out


def subject_label(case: dict[str, Any]) -> str:
    return f"ClinVar VariationID {case['variation_id']} ({case['gene']})"


def evidence(case: dict[str, Any]) -> tuple[list[Record], dict[str, list[str]]]:
    """The variant's evidence items (one per submission, then the derived aggregates) and the item ids
    of each line direction."""
    items: list[Record] = []
    lines: dict[str, list[str]] = {"supports": [], "contradicts": [], "neutral": []}
    for sub in case["submissions"]:
        status = sub["ReviewStatus"]
        if status not in SUBMISSION_TYPE:
            raise ValueError(f"{sub['SCV']}: unknown ClinVar review status {status!r}")
        item = _item("bioev:" + sub["SCV"], SUBMISSION_TYPE[status], f"{sub['SCV']};VariationID:{case['variation_id']}",
                     _submission_text(sub))
        items.append(item)
        lines[line_direction(sub["ClinicalSignificance"])].append(item["id"])
    for item_id, kind, scvs, text in derived_items(case):
        items.append(_item(item_id, kind, "derived:" + ";".join(scvs), text))
        lines["supports"].append(item_id)
    return items, lines


def build_record(case: dict[str, Any], sample: Sample) -> Record:
    """The variant's record: the statement "variant has a germline P/LP classification", one item per
    submission in a line of its classification's direction, the derived aggregates in the supporting line."""
    vid = case["variation_id"]
    items, lines = evidence(case)
    return {
        "record_id": f"bioev:clinvar-{vid}",
        "profile_id": "clinvar-germline",
        "statement": {
            "id": f"bioev:clinvar-statement-{vid}",
            "subject": {"id": f"clinvar:{vid}", "label": subject_label(case), "entity_type": "sequence_variant"},
            "predicate": "has_germline_classification",
            "object": {"id": OBJECT_ID, "label": "Pathogenic or likely pathogenic (germline)",
                       "entity_type": "germline_classification"},
            "scope": list(SCOPE),
            "statement_status": "proposed",
            "evidence_lines": [{"id": f"bioev:{direction}-line", "direction": direction, "evidence_item_ids": ids}
                               for direction, ids in lines.items() if ids],
        },
        "source_artifacts": [{
            "id": SAMPLE_ARTIFACT, "title": "ClinVar germline classification sample (NCBI)",
            "source_type": "registry_snapshot", "uri": "urn:sha256:" + sample.sha256,
            "version": "2023-09:germline-sample-v1", "retrieved_at": sample.manifest["retrieved_at"],
            "sha256": sample.sha256, "observed_sha256": sample.sha256}],
        "evidence_items": items,
        "adjudications": [],
        "requested_uses": list(USES),
    }


# -- faults ---------------------------------------------------------------------------------------

#: the peer's ten controlled faults: expected status and the rule that must say so (their pipeline.py)
FAULTS = {
    "llm_classification_plus_note": ("review_required", "BEV008"),
    "string_match_classification_plus_note": ("review_required", "BEV009"),
    "mixed_weak_classification_plus_note": ("review_required", "BEV013"),
    "llm_derived_review": ("review_required", "BEV008"),
    "missing_derived_review": ("rejected", "BEV007"),
    "source_hash_mismatch": ("rejected", "BEV002"),
    "somatic_scope": ("rejected", "BEV005"),
    "dangling_reference": ("rejected", "RECORD_INTEGRITY"),
    "injected_dissent": ("review_required", "BEV004"),
    "withdrawn_statement": ("rejected", "BEV001"),
}
#: the peer's trust-boundary forgeries and the status grounding should give them
TRUST_BOUNDARY = {"fabricated_expert_review": "rejected", "omitted_dissent": "review_required"}
#: beyond 0.8.0: forgeries of the statement, which the peer's grounder does not read
BEYOND = {"claim_swap": "rejected", "gene_swap": "rejected"}


def _line(record: Record, direction: str) -> Record:
    return next(x for x in record["statement"]["evidence_lines"] if x["direction"] == direction)


def _add_supporting_note(record: Record) -> None:
    note = {**copy.deepcopy(record["evidence_items"][0]), "id": "bioev:aux-note", "evidence_type": "curator_note",
            "extraction_method": "manual_curation",
            "extracted_text": "Synthetic auxiliary note added for a controlled fault."}
    record["evidence_items"].append(note)
    record["statement"]["evidence_lines"].append({"id": "bioev:note-line", "direction": "supports",
                                                  "evidence_item_ids": [note["id"]]})


def _weaken(record: Record, kind: str) -> None:
    """Classification items extracted by an LLM, by string matching, or alternately; plus a curator note."""
    items = record["evidence_items"]
    classified = [x for x in items if x["evidence_type"] == "criteria_based_classification"]
    for n, item in enumerate(classified):
        llm = kind.startswith("llm") or (kind.startswith("mixed") and n % 2 == 0)
        item["extraction_method"] = "llm_extraction" if llm else "normalized_string_match"
    if kind.startswith("mixed") and len(classified) == 1:
        twin = {**copy.deepcopy(classified[0]), "id": classified[0]["id"] + ":twin",
                "extraction_method": "normalized_string_match"}
        items.append(twin)
        _line(record, "supports")["evidence_item_ids"].append(twin["id"])
    _add_supporting_note(record)


def _drop(record: Record, ids: set[str]) -> None:
    record["evidence_items"] = [x for x in record["evidence_items"] if x["id"] not in ids]
    for line in record["statement"]["evidence_lines"]:
        line["evidence_item_ids"] = [i for i in line["evidence_item_ids"] if i not in ids]
    record["statement"]["evidence_lines"] = [x for x in record["statement"]["evidence_lines"] if x["evidence_item_ids"]]


def perturb(record: Record, kind: str) -> Record:
    """A copy of ``record`` with one fault (``FAULTS``, ``TRUST_BOUNDARY`` or ``BEYOND``)."""
    out = copy.deepcopy(record)
    out["record_id"] += ":" + kind
    items = out["evidence_items"]
    classified = [x for x in items if x["evidence_type"] == "criteria_based_classification"]
    derived = {x["id"] for x in items if x["evidence_type"] in DERIVED}
    if kind.endswith("_plus_note"):
        _weaken(out, kind)
    elif kind == "llm_derived_review":
        for item in items:
            if item["id"] in derived:
                item["extraction_method"] = "llm_extraction"
    elif kind == "missing_derived_review":
        _drop(out, derived)
    elif kind == "source_hash_mismatch":
        out["source_artifacts"][0]["observed_sha256"] = "0" * 64
    elif kind == "somatic_scope":
        classified[0]["scope"] = ["NCBITaxon:9606", "origin:somatic"]
    elif kind == "dangling_reference":
        classified[0]["source_artifact_id"] = "bioev:absent"
    elif kind == "injected_dissent":
        dissent = {**copy.deepcopy(classified[0]), "id": "bioev:synthetic-dissent", "locator": "synthetic",
                   "extracted_text": "Synthetic criteria-based 'Uncertain significance' submission."}
        items.append(dissent)
        out["statement"]["evidence_lines"].append({"id": "bioev:synthetic-dissent-line", "direction": "contradicts",
                                                   "evidence_item_ids": [dissent["id"]]})
    elif kind == "withdrawn_statement":
        out["statement"]["statement_status"] = "superseded"
    elif kind == "omitted_dissent":
        _drop(out, {i for x in out["statement"]["evidence_lines"] if x["direction"] == "contradicts"
                    for i in x["evidence_item_ids"]})
    elif kind == "fabricated_expert_review":
        for item in items:
            item["evidence_type"] = "criteria_based_classification"
        for item_id, evidence_type in (("bioev:fake-multi", DERIVED[0]), ("bioev:fake-expert", DERIVED[1])):
            items.append({**copy.deepcopy(items[0]), "id": item_id, "evidence_type": evidence_type,
                          "locator": "fabricated"})
            _line(out, "supports")["evidence_item_ids"].append(item_id)
    elif kind == "claim_swap":  # the same evidence offered for the opposite classification
        out["statement"]["object"] = {"id": "bioev:germline-benign", "label": "Benign or likely benign (germline)",
                                      "entity_type": "germline_classification"}
    elif kind == "gene_swap":  # the variant named in another gene
        subject = out["statement"]["subject"]
        other = "TP53" if subject["label"].endswith("(BRCA2)") else "BRCA2"
        subject["label"] = subject["label"].rsplit(" (", 1)[0] + f" ({other})"
    else:
        raise ValueError(f"unknown fault {kind!r}")
    return out


# -- the grounder -----------------------------------------------------------------------------------

class ClinVarSnapshotGrounder:
    """Rebuild each record's evidence from the pinned ClinVar sample and compare, item by item.

    For items citing the sample (by its ``sha256``): a submission must exist for the variant (BEV016)
    and match its evidence type, content, scope and the direction of every line citing it (BEV017);
    a derived aggregate must be the one the submissions give (BEV017); any other item type cannot be
    confirmed from ClinVar (BEV015); a submission the record leaves out is BEV018 (review). The
    statement must be the one the sample can support: the variant exists (BEV016), the object is
    the P/LP classification and the subject's label is the sample's (VariationID and gene; BEV017). Extraction
    methods are not compared (they say how the record was made, not what the source says). Items that
    match are returned as verified. Bytes are read through the store, which re-hashes them first.
    """

    name = "clinvar-snapshot"

    def __init__(self, store: SnapshotStore, sha256: str) -> None:
        self.store = store
        self.sha256 = sha256
        self._cases: dict[str, dict[str, Any]] | None = None
        self._problem: Finding | None = None

    def _index(self, uses: list[str]) -> dict[str, dict[str, Any]] | None:
        if self._cases is None and self._problem is None:
            try:
                self._cases = {c["variation_id"]: c for c in parse_cases(self.store.read(self.sha256))}
            except IntegrityError as exc:
                self._problem = Finding("BEV014", "error", f"the pinned ClinVar sample is corrupted: {exc.message}",
                                        "$.source_artifacts", uses)
            except SourceError:
                self._problem = Finding("BEV015", "review", f"the ClinVar sample {self.sha256} is not pinned in "
                                        f"{self.store.root}", "$.source_artifacts", uses)
        return self._cases

    def ground(self, record: Record) -> Grounding:
        uses = [u for u in record.get("requested_uses") or [] if isinstance(u, str)]
        ours = {a["id"] for a in record["source_artifacts"] if a.get("sha256") == self.sha256}
        if not ours:
            return Grounding()  # the record cites no pinned ClinVar sample: nothing for this grounder
        cases = self._index(uses)
        if cases is None:
            assert self._problem is not None
            return Grounding([Finding(self._problem.rule_id, self._problem.severity, self._problem.message,
                                      self._problem.field_path, uses)])
        found: list[Finding] = []

        def add(code: str, message: str, path: str) -> None:
            found.append(Finding(code, SEVERITY[code], message, path, uses))

        statement = record["statement"]
        subject = str(statement["subject"]["id"])
        case = cases.get(subject.removeprefix("clinvar:")) if subject.startswith("clinvar:") else None
        if case is None:
            add("BEV016", f"{subject} is not a variant of the pinned ClinVar sample", "$.statement.subject.id")
            return Grounding(found)
        if statement["object"]["id"] != OBJECT_ID:
            add("BEV017", f"the ClinVar submissions are evidence for {OBJECT_ID} (P/LP), not for "
                f"{statement['object']['id']}", "$.statement.object.id")
        if statement["subject"].get("label") != subject_label(case):
            add("BEV017", f"the sample names this variant {subject_label(case)!r}", "$.statement.subject.label")
        rebuilt, _ = evidence(case)
        submissions = {x["locator"]: x for x in rebuilt if x["evidence_type"] not in DERIVED}
        aggregates = {x["evidence_type"]: x for x in rebuilt if x["evidence_type"] in DERIVED}
        directions: dict[str, set[str]] = defaultdict(set)
        for line in statement["evidence_lines"]:
            for item_id in line["evidence_item_ids"]:
                directions[item_id].add(line["direction"])
        verified: set[str] = set()
        cited: set[str] = set()
        for index, item in enumerate(record["evidence_items"]):
            if item["source_artifact_id"] not in ours:
                continue
            path, kind = f"$.evidence_items[{index}]", item["evidence_type"]
            if kind in DERIVED:
                want = aggregates.get(kind)
                if want is None:
                    add("BEV017", f"the variant's submissions do not give {kind}", path)
                elif (item["locator"], item.get("extracted_text")) != (want["locator"], want["extracted_text"]):
                    add("BEV017", f"{kind} differs from the aggregate of the submissions ({want['locator']})", path)
                elif directions[item["id"]] - {"supports"}:
                    add("BEV017", f"{kind} is cited by a line that does not support the statement", path)
                else:
                    verified.add(item["id"])
            elif kind in SUBMISSION_TYPE.values():
                want = submissions.get(item["locator"])
                if want is None:
                    add("BEV016", f"no submission {item['locator']!r} for VariationID {case['variation_id']} "
                        "in the pinned sample", path)
                    continue
                cited.add(item["locator"])
                text = json.loads(want["extracted_text"])
                differs = _differences(item, want, text, directions[item["id"]])
                if differs:
                    add("BEV017", f"{item['locator'].split(';')[0]} differs from the pinned submission: "
                        + ", ".join(differs), path)
                else:
                    verified.add(item["id"])
            else:
                add("BEV015", f"ClinVar cannot confirm an item of type {kind!r}", path)
        for locator in sorted(set(submissions) - cited):
            add("BEV018", f"the pinned sample holds {locator.split(';')[0]} for this variant and the record "
                "leaves it out", "$.evidence_items")
        return Grounding(found, frozenset(verified))


def _differences(item: Record, want: Record, text: dict[str, Any], directions: Iterable[str]) -> list[str]:
    out = []
    if item["evidence_type"] != want["evidence_type"]:
        out.append(f"its review status gives {want['evidence_type']}, not {item['evidence_type']}")
    try:
        claimed = json.loads(item.get("extracted_text") or "null")
    except json.JSONDecodeError:
        claimed = None
    if claimed != text:
        out.append("its content")
    if set(item["scope"]) != set(want["scope"]):
        out.append(f"its scope ({', '.join(sorted(item['scope']))})")
    wrong = set(directions) - {line_direction(text["classification"])}
    if wrong:
        out.append(f"a {'/'.join(sorted(wrong))} line cites a '{text['classification']}' classification")
    return out
