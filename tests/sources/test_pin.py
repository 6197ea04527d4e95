"""Pinning over real sockets reproduces the reference CIViC catalogue byte for byte."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from bioevidence.sources.catalogue import Catalogue
from bioevidence.sources.http import HttpClient
from bioevidence.sources.pin import Pinner, jats_access
from bioevidence.sources.store import SnapshotStore
from loopback import Fault, LoopbackServer
from sources.replay import serve_civic_ncbi, serve_pubmed_efetch

MakeClient = Callable[..., HttpClient]
FIXED = "2026-09-29T01:12:31+00:00"


def test_pinning_the_civic_corpus_reproduces_the_reference_hashes(
    server: LoopbackServer, make_client: MakeClient, shared_data: Path, tmp_path: Path
) -> None:
    reference = serve_civic_ncbi(server, shared_data / "civic_corpus" / "snapshots")
    store, catalogue = SnapshotStore(tmp_path / "snap"), Catalogue()
    pinner = Pinner(store, catalogue, make_client(cache_dir=None), clock=lambda: FIXED)
    results = pinner.pin_many([w.key for w in reference], workers=8)
    assert Counter(r.status for r in results) == {"pinned": 140, "not_found": 20}
    for ref in reference:
        got = catalogue[ref.key]
        assert (got.metadata_sha256, got.fulltext_sha256, got.license) == (
            ref.metadata_sha256,
            ref.fulltext_sha256,
            ref.license,
        )
        assert got.urls[0].split("?")[1].startswith("db=pubmed&id=")
    assert sum(bool(w.extra.get("retracted")) for w in catalogue) == 20
    assert store.verify() == []
    assert catalogue["pmcid:PMC545207"].key == "pmid:15696205"


def test_second_run_uses_catalogue_and_refresh_records_when(
    server: LoopbackServer, make_client: MakeClient, shared_data: Path, tmp_path: Path
) -> None:
    serve_civic_ncbi(server, shared_data / "civic_corpus" / "snapshots")
    store, catalogue = SnapshotStore(tmp_path / "snap"), Catalogue()
    times = iter(["2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00"])
    pinner = Pinner(store, catalogue, make_client(), clock=lambda: next(times))
    assert pinner.pin("pmid:15696205").status == "pinned"
    hits = len(server.log)
    assert pinner.pin("PMID:015696205").status == "known" and len(server.log) == hits
    again = pinner.pin("pmid:15696205", refresh=True)
    assert again.work is not None and again.work.extra["refreshed_at"] == "2026-02-01T00:00:00+00:00"
    assert again.work.extra["first_retrieved_at"] == "2026-01-01T00:00:00+00:00"
    assert len(server.log) == hits + 2


def test_paper_without_pmc_pins_pubmed_abstract_and_sees_retraction(
    server: LoopbackServer, make_client: MakeClient, shared_data: Path, tmp_path: Path
) -> None:
    summary = (
        b'{"header":{"type":"esummary"},"result":{"uids":["993"],"993":{"uid":"993","title":"T",'
        b'"pubdate":"1975 Jun","pubtype":["Journal Article","Retracted Publication"],"articleids":[]}}}'
    )
    server.route("/esummary.fcgi", summary, content_type="application/json")
    serve_pubmed_efetch(server, shared_data)
    store = SnapshotStore(tmp_path)
    result = Pinner(store, Catalogue(), make_client()).pin("pmid:993")
    assert result.status == "no_fulltext" and result.work is not None
    assert result.work.abstract_sha256 and result.work.pinned_sha256 == result.work.abstract_sha256
    assert result.work.extra["retracted"] is True


def test_failure_mid_way_leaves_no_partial_file_and_reports_why(
    server: LoopbackServer, make_client: MakeClient, shared_data: Path, tmp_path: Path
) -> None:
    serve_civic_ncbi(server, shared_data / "civic_corpus" / "snapshots")
    server.fail("/efetch.fcgi", *[Fault.truncate(500)] * 4, query={"db": "pmc"})
    store = SnapshotStore(tmp_path / "snap")
    catalogue = Catalogue()
    result = Pinner(store, catalogue, make_client()).pin("pmid:15696205")
    assert result.status == "failed" and "truncated" in (result.error or "")
    assert "pmid:15696205" not in catalogue
    assert store.verify() == [] and not list(store.root.glob("*.tmp"))
    assert [p.name.split(".", 1)[1] for p in store.root.iterdir()] == ["json.gz"]


def test_jats_licences_of_the_corpus_match_the_catalogue(shared_data: Path) -> None:
    snapshots = shared_data / "civic_corpus" / "snapshots"
    store = SnapshotStore(snapshots)
    for work in Catalogue.load(snapshots):
        if work.fulltext_sha256:
            assert jats_access(store.read(work.fulltext_sha256)) == (True, work.license)
