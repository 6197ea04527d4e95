"""End to end: evidence the librarian returns drops into records that the gate's literature
grounder admits. Records are built from real CIViC claims over a local index of the shared JATS
folder and the pinned CIViC snapshots; the returned items are used unchanged."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from bioevidence import Validator
from bioevidence.gate.grounders.literature import LiteratureGrounder
from bioevidence.librarian.librarian import Librarian, Settings
from builders import LIBRARIAN_PROFILE as PROFILE

SCOPE = ("NCBITaxon:9606",)
N_CLAIMS = 12


def _record(claim: dict[str, Any], answer: dict[str, Any], catalogue: dict[str, Any]) -> dict[str, Any] | None:
    """A record for one CIViC claim citing the returned items from catalogued (pinned) papers."""
    pinned = {a["id"] for a in answer["source_artifacts"] if a["uri"] in catalogue}
    items = [e for e in answer["evidence_items"] if e["source_artifact_id"] in pinned]
    if not items:
        return None
    return {
        "record_id": f"civic:{claim['evidence_id']}", "profile_id": "librarian-evidence",
        "statement": {
            "id": "st", "subject": {"id": f"civic.mp:{claim['molecular_profile_id']}",
                                    "label": claim["molecular_profile"], "entity_type": "variant"},
            "predicate": "associated_with",
            "object": {"id": f"DOID:{claim['doid'] or '162'}", "label": claim["disease"] or "cancer",
                       "entity_type": "disease"},
            "scope": list(SCOPE), "statement_status": "proposed",
            "evidence_lines": [{"id": "line", "direction": "supports",
                                "evidence_item_ids": [e["id"] for e in items]}],
        },
        "source_artifacts": [a for a in answer["source_artifacts"] if a["id"] in pinned],
        "evidence_items": items, "adjudications": [], "requested_uses": ["research_summary"],
    }


@pytest.fixture(scope="module")
def civic(shared_data: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    snapshots = shared_data / "civic_corpus" / "snapshots"
    catalogue = json.loads((snapshots / "literature.json").read_text())["works"]
    with gzip.open(shared_data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt") as fh:
        claims = [json.loads(line) for line in fh]
    return [c for c in claims if f"pmid:{c['citation_id']}" in catalogue], catalogue


def test_every_returned_quote_from_a_pinned_paper_is_verified_by_the_literature_grounder(
        jats_index: Path, shared_data: Path, tmp_path: Path,
        civic: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
    claims, catalogue = civic
    profile = tmp_path / "librarian-evidence.yaml"
    profile.write_text(PROFILE)
    grounder = LiteratureGrounder.from_directory(shared_data / "civic_corpus" / "snapshots")
    validator = Validator(profile, grounders=[grounder])
    lib = Librarian(jats_index, references=shared_data / "references", settings=Settings(scope=SCOPE))
    checked = admitted = 0
    unverified: list[tuple[str, str, str]] = []
    for claim in claims[::max(1, len(claims) // N_CLAIMS)][:N_CLAIMS]:
        answer = lib.ask(claim["evidence_statement"], top_k=10).to_json()
        record = _record(claim, answer, catalogue)
        if record is None:
            continue
        report = validator.validate(record)
        flagged = {i["source_artifact_id"] for i in answer["items"] if i["retracted"] or i["expression_of_concern"]}
        for finding in report.findings:
            assert finding.rule_id not in ("SCHEMA", "BEV014", "BEV015", "BEV017", "BEV028"), finding.message
            if finding.rule_id in ("BEV019", "BEV027"):  # retraction / concern: flagged on the item too
                index = int(finding.field_path.split("[")[1].split("]")[0])
                assert record["source_artifacts"][index]["id"] in flagged
        for item in record["evidence_items"]:
            checked += 1
            if item["source_artifact_id"] not in flagged and item["id"] not in report.verified:
                unverified.append((record["record_id"], item["locator"], item["extracted_text"]))
        if not flagged:
            admitted += report.overall_status == "admitted"
    assert unverified == []
    assert checked >= 50 and admitted >= 5
