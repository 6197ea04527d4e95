"""KG2Bib: keywords to a .bib over a loopback DBLP SPARQL endpoint (pyoxigraph, test data in DBLP's
RDF schema) and over Europe PMC (the recorded core search page); the output reads back into kb build."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.errors import RetrievalError
from bioevidence.librarian.kg2bib import europepmc_query, search_bib
from bioevidence.sources.bibtex import read_bibliography
from bioevidence.sources.dblp import DBLP, keywords, search_query
from bioevidence.sources.http import HostLimit, HttpClient, HttpConfig
from loopback import Fault, LoopbackServer

if not os.environ.get("CI"):  # installed by the test extra under CI
    pytest.importorskip("pyoxigraph", reason="pip install pyoxigraph")
TTL = Path(__file__).parent / "data" / "dblp_test.ttl"


@pytest.fixture
def dblp() -> Iterator[tuple[LoopbackServer, list[str], HttpClient]]:
    from sparql_server import serve_sparql

    with LoopbackServer() as server:
        queries = serve_sparql(server, TTL)
        http = HttpClient(HttpConfig(urls={"dblp": server.url, "europepmc": server.url}, backoff_base=0.01,
                                     backoff_max=0.02, max_attempts=3, limits={"default": HostLimit(None, 4)}))
        yield server, queries, http
        http.close()


def test_keywords_drop_stop_words_and_short_words() -> None:
    assert keywords("Using a pre-trained language model for the biomedical NER task") == [
        "pre", "trained", "language", "model", "biomedical", "ner", "task"]


def test_titles_score_by_whole_keywords_then_citations_and_authors_come_in_order(
        dblp: tuple[LoopbackServer, list[str], HttpClient]) -> None:
    _, queries, http = dblp
    works = DBLP(http).search("language model biomedical text net", limit=10)
    assert [w.title.split(":")[0] for w in works] == ["BioBERT", "SciBERT",
                                                      "Graph neural networks for biomedical text."]
    biobert, scibert, graph = works
    assert (biobert.score, biobert.citations, scibert.citations) == (4, 3, 1)
    assert graph.score == 2  # "net" does not match "networks"
    assert biobert.authors == ("Jinhyuk Lee", "Wonjin Yoon", "Jaewoo Kang")  # signature order, homonym number dropped
    assert biobert.doi == "10.1093/bioinformatics/btz682" and scibert.doi is None  # DOI and OMID optional
    assert biobert.venue == "Bioinform." and biobert.entry_type == "article" and scibert.entry_type == "misc"
    assert len(queries) == 2 and "VALUES ?publ" in queries[1]


def test_a_year_window_and_a_server_error_retried(dblp: tuple[LoopbackServer, list[str], HttpClient]) -> None:
    server, _, http = dblp
    server.fail("/sparql", Fault.http(503))
    works = DBLP(http).search("scientific claims verifying", years=(2020, 2020))
    assert [w.title for w in works] == ["Fact or Fiction: Verifying Scientific Claims."]
    assert works[0].authors == ("David Wadden", "Shanchuan Lin")
    assert DBLP(http).search("scientific claims", years=(2021, None)) == []
    server.fail("/sparql", *[Fault.http(500)] * 3)
    with pytest.raises(RetrievalError):
        DBLP(http).search("claims")


def test_the_query_refuses_unsafe_keywords() -> None:
    from bioevidence.errors import InputError

    with pytest.raises(InputError):
        search_query(['x") } DROP ALL #'], limit=5)


def test_dblp_bib_reads_back_and_the_cli_writes_it(dblp: tuple[LoopbackServer, list[str], HttpClient],
                                                   tmp_path: Path) -> None:
    server, _, http = dblp
    entries = search_bib("biomedical language model", source="dblp", http=http)
    out = tmp_path / "refs.bib"
    result = CliRunner().invoke(cli, ["kg2bib", "biomedical language model", "--source", "dblp", "-o", str(out)],
                                env={"BIOEVIDENCE_DBLP_SPARQL_URL": server.url})
    assert result.exit_code == 0, result.output
    back = read_bibliography(out)
    assert not back.failed and [e.title for e in back.entries] == [e.title for e in entries]
    assert back.entries[0].key == "Lee2020" and back.entries[0].ids[0].key == "doi:10.1093/bioinformatics/btz682"


def test_europepmc_keywords_to_bib_over_the_recorded_core_page(shared_data: Path, tmp_path: Path) -> None:
    recorded = shared_data / "api_responses" / "europepmc" / "search_cancer_core.json"
    with LoopbackServer() as server:
        server.route("/search", recorded, content_type="application/json")
        result = CliRunner().invoke(cli, ["kg2bib", "cancer", "--source", "europepmc", "-o", str(tmp_path / "e.bib"),
                                          "--limit", "25"], env={"BIOEVIDENCE_EUROPEPMC_URL": server.url})
        assert result.exit_code == 0, result.output
        assert server.log[0][1]["query"] == "cancer" and server.log[0][1]["resultType"] == "core"
    page = json.loads(recorded.read_bytes())["resultList"]["result"]
    back = read_bibliography(tmp_path / "e.bib")
    assert not back.failed and len(back.entries) == 25
    assert [e.ids[0].value for e in back.entries if e.ids][:3] == [r["doi"] for r in page[:3]]
    assert sum(1 for e in back.entries if e.abstract) >= 15  # core pages carry abstracts: the abstract tier
    assert europepmc_query("KRAS in lung cancer", (2010, 2015)) == "(kras lung cancer) AND PUB_YEAR:[2010 TO 2015]"


def _scifact_titles(shared_data: Path) -> list[str]:
    import gzip

    with gzip.open(shared_data / "claims" / "scifact" / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line)["title"] for line in fh]


def test_names_with_greek_letters_and_short_parts_are_matched_whole_on_real_titles(shared_data: Path,
                                                                                  tmp_path: Path) -> None:
    """Every SciFact title (5,183 real abstracts) as a dblp publication: a search for "NF-κB activation"
    scores the titles naming NF-κB above those with only "activation". With the short, Greek parts
    dropped (the old ASCII tokens) every title with "activation" scored alike and NF-κB was not asked."""
    from sparql_server import serve_sparql

    titles = _scifact_titles(shared_data)
    ttl = tmp_path / "scifact.ttl"
    ttl.write_text("@prefix dblp: <https://dblp.org/rdf/schema#> .\n" + "".join(
        f'<https://example.org/rec/{i}> a dblp:Publication ; dblp:title {json.dumps(t)} .\n'
        for i, t in enumerate(titles)), encoding="utf-8")
    assert keywords("NF-κB activation by TNF-α") == ["nf-κb", "activation", "tnf-α"]
    with LoopbackServer() as server:
        serve_sparql(server, ttl)
        http = HttpClient(HttpConfig(urls={"dblp": server.url}, max_attempts=1))
        works = DBLP(http).search("NF-κB activation", limit=20)
        http.close()
    named = [t for t in titles if "nf-κb" in t.lower()]
    both = [t for t in named if "activation" in t.lower()]
    assert len(named) >= 5 and both  # the corpus names NF-κB in real titles
    # the titles naming NF-κB and activation come first (two words matched), and no other title does
    assert sorted(w.title for w in works[:len(both)]) == sorted(both)
    assert [w.score for w in works[:len(both)]] == [2] * len(both) and works[len(both)].score == 1
    with LoopbackServer() as server:
        serve_sparql(server, ttl)
        http = HttpClient(HttpConfig(urls={"dblp": server.url}, max_attempts=1))
        alone = DBLP(http).search("NF-κB", limit=50)
        http.close()
    assert sorted(w.title for w in alone) == sorted(named)  # every title naming it, and only those


def test_keys_transliterate_every_accented_author_of_a_recorded_europepmc_page(shared_data: Path) -> None:
    """Keys of the real authors of a recorded Europe PMC answer: accented surnames keep every letter
    (Kötter -> Kotter2020), never "Ktter"."""
    import re
    import unicodedata

    from bioevidence.sources.bibtex import cite_key

    text = (shared_data / "api_responses" / "europepmc" / "search_cancer.xml").read_text(encoding="utf-8")
    authors = {a.strip().rstrip(".") for found in re.findall(r"<authorString>([^<]+)</authorString>", text)
               for a in found.split(",")}
    accented = sorted(a for a in authors if not a.isascii() and all(
        unicodedata.name(c, "").startswith("LATIN") for c in a if c.isalpha()))
    assert "Kötter T" in accented and len(accented) >= 2
    for author in accented:  # PubMed style: "Kötter T"
        key = cite_key([author], 2020, "x")
        letters = sum(1 for c in author.split()[0] if c.isalpha())
        assert key.isascii() and key.endswith("2020") and len(key) - 4 >= letters, (author, key)
    assert cite_key(["Müller, A"], 2020, "x") == "Muller2020" and cite_key(["Groß J"], 2019, "x") == "Gross2019"
