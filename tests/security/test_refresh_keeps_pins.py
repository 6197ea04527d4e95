"""Issue 25, cause 8: a refresh never loses a pin.

``ground --refresh`` replaced a pinned paper with whatever NCBI answered: a 200 reply "cannot get
document summary" dropped the full-text pin and turned an admitted record rejected, reported as
success. Now a refresh adds the new bytes beside the old and switches only to an answer that keeps
what the pin had; a worse one keeps the old pin and says so. Over real sockets: the first pin from the
recorded CIViC E-utilities answers, the refresh from the same server with one answer degraded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bioevidence.cli import main
from bioevidence.sources.catalogue import Catalogue
from bioevidence.sources.store import SnapshotStore
from loopback import Fault, LoopbackServer
from sources.replay import serve_civic_ncbi

PMID = "15696205"  # pinned with open full text (PMC545207) in the CIViC corpus


def _record(tmp_path: Path) -> Path:
    record = {"record_id": "bioev:t", "source_artifacts": [
        {"id": "bioev:s1", "source_type": "publication", "uri": f"pmid:{PMID}", "title": "x", "version": "v",
         "retrieved_at": "2026-01-01T00:00:00Z", "sha256": "0" * 64}]}
    (tmp_path / "record.json").write_text(json.dumps(record))
    return tmp_path / "record.json"


def _ground(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["ground", str(_record(tmp_path)), "--snapshot-dir", str(tmp_path / "snap"),
                 "--output", str(tmp_path / "grounded.json"), *extra])
    return code, capsys.readouterr().err


def _cannot_get(real: bytes) -> bytes:
    doc = json.loads(real)
    doc["result"][PMID] = {"uid": PMID, "error": "cannot get document summary"}  # NCBI's own answer
    return json.dumps(doc).encode()


DEGRADED = {  # what a refresh may answer with, each worse than the pin
    "summary 'cannot get document summary'": ("/esummary.fcgi", _cannot_get),
    "full text gone (PMC efetch 404, PubMed efetch an empty set)": ("/efetch.fcgi", None),
}


@pytest.mark.parametrize("how", list(DEGRADED))
def test_a_worse_refresh_answer_keeps_the_pin_and_says_so(how: str, shared_data: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    snapshots = shared_data / "civic_corpus" / "snapshots"
    with LoopbackServer() as server:
        serve_civic_ncbi(server, snapshots)
        monkeypatch.setenv("BIOEVIDENCE_EUTILS_URL", server.url)
        code, err = _ground(tmp_path, capsys)
        assert code == 0, err
        before = Catalogue.load(tmp_path / "snap")[f"pmid:{PMID}"]
        assert before.fulltext_sha256
        path, change = DEGRADED[how]
        real = SnapshotStore(snapshots).read(Catalogue.load(snapshots)[f"pmid:{PMID}"].metadata_sha256)
        if change is not None:
            server.fail(path, Fault.replace_body(change(real)))  # the next answer only
        else:  # routes more specific than the replay's win: PMC answers 404, PubMed an empty set
            server.route(path, lambda q: None, query={"db": "pmc"})
            server.route(path, b"<?xml version='1.0'?><PubmedArticleSet></PubmedArticleSet>",
                         query={"db": "pubmed", "id": PMID}, content_type="text/xml")
        code, err = _ground(tmp_path, capsys, "--refresh")
    after = Catalogue.load(tmp_path / "snap")[f"pmid:{PMID}"]
    assert after == before  # the same pin, full text and all
    assert f"kept pmid:{PMID}: the refresh answer" in err and "earlier pin kept 1" in err, err
    assert code == 0
    grounded = json.loads((tmp_path / "grounded.json").read_text())
    assert grounded["source_artifacts"][0]["sha256"] == before.pinned_sha256


def test_a_complete_refresh_answer_switches(shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with LoopbackServer() as server:
        serve_civic_ncbi(server, shared_data / "civic_corpus" / "snapshots")
        monkeypatch.setenv("BIOEVIDENCE_EUTILS_URL", server.url)
        assert _ground(tmp_path, capsys)[0] == 0
        code, err = _ground(tmp_path, capsys, "--refresh")
    assert code == 0 and "kept" not in err, err
    assert "refreshed_at" in Catalogue.load(tmp_path / "snap")[f"pmid:{PMID}"].extra


def test_the_mcp_ground_tool_is_not_announced_idempotent() -> None:
    """An agent may not retry ``ground`` as if it changed nothing: with ``refresh`` it may pin newer bytes."""
    pytest.importorskip("mcp", reason="the mcp extra: pip install 'bioevidence[mcp]'")
    from bioevidence.mcp.config import ServerConfig
    from bioevidence.mcp.server import build_server
    from bioevidence.mcp.services import Services

    server = build_server(Services(ServerConfig()))
    tools = {t.name: t for t in server._tool_manager.list_tools()}
    assert tools["ground"].annotations.idempotent_hint is False and tools["ground"].annotations.open_world_hint
    assert tools["validate_record"].annotations.idempotent_hint is True
