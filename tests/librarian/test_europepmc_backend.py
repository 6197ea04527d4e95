"""The live Europe PMC backend over a real loopback server replaying recorded Europe PMC responses
and real JATS: planning, cursorMark paging, deduplication and full text, without a network."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.librarian.corpus import read_jats
from bioevidence.librarian.europepmc_backend import EuropePMCBackend
from bioevidence.librarian.librarian import Librarian
from bioevidence.sources.europepmc import EuropePMC
from bioevidence.sources.http import HostLimit, HttpClient, HttpConfig
from bioevidence.sources.store import SnapshotStore
from bioevidence.text.jats import parse_jats
from loopback import Fault, LoopbackServer, Reply

QUESTION = "How is deep learning used for cancer in bioinformatics?"


def _jats_results(folder: Path) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """Core-style result objects for the recorded fullTextXML responses, from their own front matter."""
    results, texts = [], {}
    for path in sorted(folder.glob("PMC*.xml")):
        data = path.read_bytes()
        doc = read_jats(data, source=str(path))
        texts[path.stem] = data
        result: dict[str, Any] = {"id": doc.pmid or path.stem, "source": "MED" if doc.pmid else "PMC",
                                  "pmcid": path.stem, "title": doc.title, "inEPMC": "Y", "isOpenAccess": "Y",
                                  "authorString": ", ".join(doc.authors), "pubYear": str(doc.year or "")}
        if doc.pmid:
            result["pmid"] = doc.pmid
        if doc.doi:
            result["doi"] = doc.doi
        results.append(result)
    return results, texts


@pytest.fixture
def epmc(shared_data: Path) -> Iterator[tuple[LoopbackServer, dict[str, Any]]]:
    recorded = shared_data / "api_responses" / "europepmc"
    core = json.loads((recorded / "search_cancer_core.json").read_bytes())
    lite_pages = json.loads((recorded / "fetch_10pages_cancer.json").read_bytes())
    jats_results, texts = _jats_results(shared_data / "jats" / "europepmc_fulltext")
    first = core["resultList"]["result"]
    # A preprint of the first paper: same DOI, no PMID; one paper after deduplication.
    preprint = {k: v for k, v in first[0].items() if k not in ("pmid", "pmcid")} | {"id": "PPR1", "source": "PPR"}
    page1 = dict(core, resultList={"result": jats_results + first + [preprint]})
    pages = {"*": page1, core["nextCursorMark"]: dict(lite_pages[1], nextCursorMark="END"),
             "END": dict(lite_pages[2], resultList={"result": []}, nextCursorMark="END")}
    state: dict[str, Any] = {"queries": [], "pages": pages, "texts": texts}

    def search(query: dict[str, str]) -> Reply | None:
        state["queries"].append(query["query"])
        page = pages.get(query.get("cursorMark", ""))
        if page is None:
            return None
        size = int(query["pageSize"])
        cut = dict(page, resultList={"result": page["resultList"]["result"][:size]})
        return Reply(200, json.dumps(cut).encode(), "application/json")

    with LoopbackServer() as server:
        server.route("/search", search)
        for pmcid, data in texts.items():
            server.route(f"/{pmcid}/fullTextXML", data, content_type="application/xml")
        yield server, state


_CLIENTS: list[HttpClient] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    """Close every client a test opened (an unclosed pool's sockets raise ResourceWarning when collected)."""
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def _backend(server: LoopbackServer, tmp_path: Path, **kwargs: Any) -> EuropePMCBackend:
    config = HttpConfig(urls={"europepmc": server.url}, cache_dir=tmp_path / "cache", backoff_base=0.01,
                        backoff_max=0.02, max_attempts=3, connect_timeout=2.0, read_timeout=5.0,
                        limits={n: HostLimit(None, 8) for n in ("eutils", "europepmc", "crossref", "default")})
    http = HttpClient(config)
    _CLIENTS.append(http)
    return EuropePMCBackend(EuropePMC(http), SnapshotStore(tmp_path / "store"), **kwargs)


def test_plan_page_dedup_and_full_text_without_network(epmc: tuple[LoopbackServer, dict[str, Any]],
                                                       tmp_path: Path) -> None:
    server, state = epmc
    backend = _backend(server, tmp_path, page_size=40)
    lib = Librarian(backend=backend, use_lexicon=False)
    answer = lib.ask(QUESTION)
    record = answer.to_json()
    # planning: every planned subquery went to the server; paging: the cursor chain was followed
    assert set(state["queries"]) == {s["query"] for s in record["plan"]["subqueries"]}
    cursors = [q.get("cursorMark") for p, q in server.log if p == "/search"]
    assert "*" in cursors and any(c not in ("*", None) for c in cursors)
    # dedup: the preprint sharing a DOI with a PubMed record is one paper
    dois = [p.doc.doi for p in answer.papers if p.doc.doi]
    assert len(dois) == len(set(dois))
    # full text: fetched by PMCID, pinned once, quotes cut from the pinned bytes' paragraphs
    fulltext = [i for i in record["items"] if i["paragraph_id"] != "abstract"]
    assert fulltext, record["debug"]
    store = SnapshotStore(tmp_path / "store")
    for item in fulltext:
        article = parse_jats(store.read(item["sha256"]))
        passage = article.by_id(item["paragraph_id"])
        assert passage is not None and passage.text[item["start"]:item["end"]] == item["text"]  # verbatim
    for item in record["items"]:
        assert store.has(item["sha256"])  # abstracts name the pinned search page they came in
    fetched = {p for p, _ in server.log if p.endswith("/fullTextXML")}
    lib.ask(QUESTION)
    again = [p for p, _ in server.log if p.endswith("/fullTextXML")]
    assert len(again) == len(fetched)  # pinned once: the second ask fetches nothing again


def test_missing_full_text_and_a_failing_subquery_degrade_gracefully(
        epmc: tuple[LoopbackServer, dict[str, Any]], tmp_path: Path) -> None:
    server, _ = epmc
    pmcid = next(iter(epmc[1]["texts"]))
    server.fail(f"/{pmcid}/fullTextXML", Fault.http(500), Fault.http(500), Fault.http(500))
    backend = _backend(server, tmp_path)
    answer = Librarian(backend=backend, use_lexicon=False).ask(QUESTION)
    assert answer.papers and all(p.doc.pmcid != pmcid or p.doc.kind == "abstract" for p in answer.papers)
    server.fail("/search", *[Fault.http(503)] * 40)
    broken = Librarian(backend=_backend(server, tmp_path / "b"), use_lexicon=False).ask(QUESTION)
    assert broken.papers == [] and broken.debug["errors"]


def test_cli_backend_europepmc_reads_the_base_url_from_the_environment(
        epmc: tuple[LoopbackServer, dict[str, Any]], tmp_path: Path) -> None:
    server, _ = epmc
    env = {"BIOEVIDENCE_EUROPEPMC_URL": server.url, "BIOEVIDENCE_HTTP_CACHE": str(tmp_path / "cache")}
    res = CliRunner(env=env).invoke(cli, ["ask", QUESTION, "--backend", "europepmc", "--store",
                                          str(tmp_path / "store"), "--json", "--top-k", "5"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["items"] and len({i["doc_id"] for i in out["items"]}) <= 5
