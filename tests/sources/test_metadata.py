"""Facts (ids, title, retraction, expression of concern) re-parsed from pinned resolver bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bioevidence.errors import InputError
from bioevidence.sources.catalogue import Catalogue
from bioevidence.sources.metadata import parse_metadata
from bioevidence.sources.store import SnapshotStore


def test_ncbi_esummary_of_the_reference_corpus(shared_data: Path) -> None:
    snapshots = shared_data / "civic_corpus" / "snapshots"
    store, catalogue = SnapshotStore(snapshots), Catalogue.load(snapshots)
    metas = {w.key: parse_metadata(store.read(w.metadata_sha256), want=w.key) for w in catalogue}
    assert sum(m.retracted for m in metas.values()) == 20
    assert sum(not m.found for m in metas.values()) == 20
    meta = metas["pmid:16609730"]
    assert meta.retracted and meta.retraction_notices[0].id == "pmid:23028303"
    assert meta.pmcid == "PMC1434790" and meta.doi == "10.1371/journal.ppat.0020025"
    assert meta.year == 2006 and meta.journal == "PLoS pathogens"
    first = metas["pmid:15696205"]
    assert first.title.startswith("KRAS mutations") and not first.retracted and first.authors[0] == "Pao W"


def test_expression_of_concern_is_named_not_a_retraction() -> None:
    doc = {
        "header": {"type": "esummary"},
        "result": {
            "uids": ["1"],
            "1": {
                "uid": "1",
                "title": "T",
                "pubdate": "2020",
                "pubtype": ["Journal Article"],
                "references": [{"reftype": "Expression of concern in", "pmid": 42, "refsource": "J. 2021"}],
            },
        },
    }
    meta = parse_metadata(json.dumps(doc).encode())
    assert meta.expression_of_concern and not meta.retracted
    assert str(meta.concern_notices[0]) == "pmid:42"


def test_europepmc_core_search_page(shared_data: Path) -> None:
    data = (shared_data / "api_responses" / "europepmc" / "search_cancer_core.json").read_bytes()
    meta = parse_metadata(data, want="pmcid:PMC12174270")
    assert meta.found and meta.source == "europepmc"
    assert meta.open_access is True and meta.license == "cc by"
    assert meta.title and meta.year == 2025
    assert any(parse_metadata(data, want=f"pmid:{p}").abstract for p in ("40468710",))
    assert parse_metadata(data, want="pmid:39709209").abstract is None
    first = parse_metadata(data)
    assert first.pmid == "39709209" and first.doi == "10.1016/s0140-6736(24)02600-x"
    assert first.journal == "Lancet (London, England)"
    assert not parse_metadata(data, want="pmid:1").found


def test_europepmc_retraction_comment_marks_retracted() -> None:
    result = {
        "pmid": "5",
        "title": "X",
        "pubYear": "2001",
        "pubTypeList": {"pubType": ["Journal Article"]},
        "commentCorrectionList": {"commentCorrection": [{"id": "9", "source": "MED", "type": "Retraction in"}]},
    }
    meta = parse_metadata(json.dumps({"resultList": {"result": [result]}}).encode())
    assert meta.retracted and meta.retraction_notices[0].id == "pmid:9"


def test_crossref_updated_by_retraction_and_concern() -> None:
    msg = {
        "DOI": "10.1000/ABC",
        "type": "journal-article",
        "title": ["A title"],
        "container-title": ["J"],
        "issued": {"date-parts": [[2019, 3]]},
        "author": [{"given": "A", "family": "B"}],
        "updated-by": [
            {"DOI": "10.1000/r", "type": "retraction", "label": "Retraction"},
            {"DOI": "10.1000/e", "type": "expression_of_concern"},
        ],
    }
    meta = parse_metadata(json.dumps({"status": "ok", "message-type": "work", "message": msg}).encode())
    assert meta.doi == "10.1000/abc" and meta.year == 2019 and meta.authors == ("A B",)
    assert meta.retracted and meta.retraction_notices[0].id == "doi:10.1000/r"
    assert meta.expression_of_concern and meta.concern_notices[0].id == "doi:10.1000/e"


def test_pubmed_xml_retracted_record(shared_data: Path) -> None:
    meta = parse_metadata((shared_data / "retractions" / "pubmed_retracted_pmid993.xml").read_bytes())
    assert meta.retracted and meta.pmid == "993" and meta.pmcid == "PMC1165577"
    assert meta.abstract and meta.abstract.startswith("Noradrenaline") and meta.year == 1975


def test_pubmed_xml_record(shared_data: Path) -> None:
    meta = parse_metadata((shared_data / "api_responses" / "pubmed_efetch" / "35123456.xml").read_bytes())
    assert meta.found and meta.pmid == "35123456" and not meta.retracted and meta.title


@pytest.mark.parametrize("data", [b"{}", b"[1]", b"<broken", b"not json"], ids=["empty", "list", "xml", "text"])
def test_unknown_bytes_are_input_errors(data: bytes) -> None:
    with pytest.raises(InputError):
        parse_metadata(data)
