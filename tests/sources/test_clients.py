"""Europe PMC, E-utilities and Crossref clients over real sockets, replaying recorded responses."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bioevidence.errors import ConfigurationError, RetrievalError
from bioevidence.sources.crossref import Crossref
from bioevidence.sources.europepmc import EuropePMC
from bioevidence.sources.eutils import EUtils
from bioevidence.sources.http import HttpClient
from bioevidence.sources.identifiers import parse_identifier
from loopback import Fault, LoopbackServer, Reply

MakeClient = Callable[..., HttpClient]


@pytest.fixture
def ten_pages(server: LoopbackServer, shared_data: Path) -> list[dict[str, object]]:
    pages = json.loads((shared_data / "api_responses" / "europepmc" / "fetch_10pages_cancer.json").read_bytes())
    cursor = "*"
    for page in pages:
        server.route(
            "/search", json.dumps(page).encode(), query={"cursorMark": cursor}, content_type="application/json"
        )
        cursor = page["nextCursorMark"]
    return list(pages)


def test_cursor_mark_chain_is_followed_to_the_page_cap(
    server: LoopbackServer, make_client: MakeClient, ten_pages: list[dict[str, object]]
) -> None:
    result = EuropePMC(make_client()).search("cancer", page_size=100, result_type="lite", max_pages=10)
    assert len(result.pages) == 10 and len(result.results) == 1000
    assert [q["cursorMark"] for _, q in server.log][:2] == ["*", ten_pages[0]["nextCursorMark"]]
    assert all(r.pmid or r.ids for r in result.results)


def test_paging_runs_until_an_empty_page(
    server: LoopbackServer, make_client: MakeClient, ten_pages: list[dict[str, object]], shared_data: Path
) -> None:
    empty = shared_data / "api_responses" / "europepmc" / "search_no_results.json"
    server.route(
        "/search", empty, query={"cursorMark": str(ten_pages[-1]["nextCursorMark"])}, content_type="application/json"
    )
    result = EuropePMC(make_client()).search("cancer", page_size=100, result_type="lite")
    assert len(result.pages) == 11 and len(result.results) == 1000 and result.exhausted


def test_max_results_caps_the_run(server: LoopbackServer, make_client: MakeClient, ten_pages: object) -> None:
    result = EuropePMC(make_client()).search("cancer", result_type="lite", max_results=150)
    assert len(result.results) == 150 and len(result.pages) == 2


def test_empty_result_ends_paging(server: LoopbackServer, make_client: MakeClient, shared_data: Path) -> None:
    server.route(
        "/search",
        shared_data / "api_responses" / "europepmc" / "search_no_results.json",
        content_type="application/json",
    )
    result = EuropePMC(make_client()).search("zzzz")
    assert result.hit_count == 0 and result.results == () and result.exhausted


def test_a_page_failing_mid_chain_is_retried(
    server: LoopbackServer, make_client: MakeClient, ten_pages: list[dict[str, object]]
) -> None:
    server.fail("/search", Fault.http(503), Fault.reset(), query={"cursorMark": str(ten_pages[3]["nextCursorMark"])})
    result = EuropePMC(make_client()).search("cancer", result_type="lite", max_pages=10)
    assert len(result.results) == 1000 and len(server.log) == 12


def test_core_lookup_and_fulltext(server: LoopbackServer, make_client: MakeClient, shared_data: Path) -> None:
    server.route(
        "/search",
        shared_data / "api_responses" / "europepmc" / "search_cancer_core.json",
        content_type="application/json",
    )
    jats = sorted((shared_data / "jats").rglob("*.xml"))[0]
    server.route("/PMC12174270/fullTextXML", jats, content_type="application/xml")
    client = EuropePMC(make_client())
    page = client.lookup(parse_identifier("pmcid:PMC12174270"))  # type: ignore[arg-type]
    assert server.log[-1][1]["query"] == "PMCID:PMC12174270" and server.log[-1][1]["resultType"] == "core"
    assert any(r.pmcid == "PMC12174270" and r.open_access for r in page.results)
    assert client.fulltext_xml("PMC12174270").content == jats.read_bytes()
    with pytest.raises(ConfigurationError):
        client.fulltext_xml("12174270")
    with pytest.raises(RetrievalError) as info:
        client.fulltext_xml("PMC1")
    assert info.value.status == 404


def test_eutils_esearch_esummary_efetch(server: LoopbackServer, make_client: MakeClient, shared_data: Path) -> None:
    eutils_dir = shared_data / "api_responses" / "eutils"
    server.route("/esearch.fcgi", eutils_dir / "esearch1.xml", content_type="text/xml")
    server.route("/efetch.fcgi", eutils_dir / "efetch_pmc.xml", query={"db": "pmc"}, content_type="text/xml")
    server.route(
        "/efetch.fcgi",
        shared_data / "retractions" / "pubmed_retracted_pmid993.xml",
        query={"db": "pubmed", "id": "993"},
        content_type="text/xml",
    )
    client = EUtils(make_client(ncbi_api_key="secret"))
    ids = client.esearch("biopython")
    assert ids and all(i.isdigit() for i in ids)
    query = server.log[-1][1]
    assert query["tool"] == "bioevidence" and query["email"] == "tests@example.org" and query["api_key"] == "secret"
    assert "api_key" not in client.public_url("esummary.fcgi", client.esummary_params("1"))
    assert client.efetch_pmc("PMC1234").content == (eutils_dir / "efetch_pmc.xml").read_bytes()
    assert server.log[-1][1]["id"] == "1234"
    assert b"Retracted Publication" in client.efetch_pubmed("993").content


def test_eutils_truncated_einfo_style_xml_is_one_error(
    server: LoopbackServer, make_client: MakeClient, shared_data: Path
) -> None:
    server.route("/esearch.fcgi", shared_data / "api_responses" / "eutils" / "einfo4.xml", content_type="text/xml")
    with pytest.raises(RetrievalError) as info:
        EUtils(make_client()).esearch("x")
    assert info.value.context["reason"] == "malformed" and server.hits("/esearch.fcgi") == 1


def test_crossref_work_by_doi_with_mailto(server: LoopbackServer, make_client: MakeClient) -> None:
    body = json.dumps({"status": "ok", "message-type": "work", "message": {"DOI": "10.1000/x", "title": ["T"]}})
    server.route("/works/10.1000/x", body.encode(), content_type="application/json")
    response = Crossref(make_client()).work("10.1000/x")
    assert json.loads(response.content)["message"]["DOI"] == "10.1000/x"
    assert server.log[-1][1]["mailto"] == "tests@example.org"


def test_crossref_unknown_doi_is_404(server: LoopbackServer, make_client: MakeClient) -> None:
    server.route("/works/10.1000/y", lambda q: Reply(404, b"Resource not found.", "text/plain"))
    with pytest.raises(RetrievalError) as info:
        Crossref(make_client()).work("10.1000/y")
    assert info.value.status == 404 and not info.value.retryable
