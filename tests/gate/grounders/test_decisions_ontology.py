"""A scope's release tag against the pinned ontology releases (issue 30, the identifiers group).

Two real releases are pinned side by side, the Cell Ontology (``data-version: releases/2026-06-08``)
and the Sequence Ontology (``data-version: 2024-11-18``), read from the files' headers. A tag naming
the pinned release passes, with or without its ``v``; another date is BEV017 at that scope entry,
naming both releases, blocking every use asked for, with the pinned tag as the fix; each tag is
judged against its own ontology.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.grounders.obo import load_ontology
from bioevidence.gate.grounders.ontology import OntologyGrounder

PINNED = {"CL": "2026-06-08", "SO": "2024-11-18"}  # the files' data-version headers


@pytest.fixture(scope="module")
def two(cell_ontology: Any, shared_data: Path, cache_dir: Path) -> OntologyGrounder:
    so = load_ontology(shared_data / "ontologies" / "so.obo", cache_root=cache_dir)
    return OntologyGrounder([cell_ontology, so], {"cell_type": "CL:0000000"})


def _record(scope: list[str], uses: list[str]) -> dict[str, Any]:
    return {"requested_uses": uses, "statement": {
        "subject": {"id": "SAMPLE:1", "label": "sample 1", "entity_type": "sample"},
        "object": {"id": "CL:0000236", "label": "B cell", "entity_type": "cell_type"}, "scope": scope},
        "evidence_items": []}


@pytest.mark.parametrize("prefix", sorted(PINNED))
def test_the_pinned_release_passes_with_or_without_its_v(two: OntologyGrounder, prefix: str) -> None:
    date = PINNED[prefix]
    for tag in (f"{prefix}:v{date}", f"{prefix}:{date}"):
        assert two.ground(_record(["NCBITaxon:9606", tag], ["research_summary"])).findings == [], tag


@pytest.mark.parametrize("prefix", sorted(PINNED))
def test_another_release_is_named_beside_the_pinned_one(two: OntologyGrounder, prefix: str) -> None:
    uses = ["research_summary", "reference_annotation"]
    for other in ("2025-01-01", "2019-12-31"):
        for written in (f"v{other}", other):
            report = two.ground(_record(["NCBITaxon:9606", f"{prefix}:{written}"], uses))
            (f,) = report.findings
            assert (f.rule_id, f.field_path, f.blocking_uses) == ("BEV017", "$.statement.scope[1]", uses)
            assert f.message == (f"the scope names {prefix} release {other}, but the pinned release is "
                                 f"{PINNED[prefix]}: the record was made against another release")
            assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value) == (
                "replace", "$.statement.scope[1]", f"{prefix}:v{PINNED[prefix]}")
            assert f.fix.detail == f"the pinned release is {PINNED[prefix]}"
