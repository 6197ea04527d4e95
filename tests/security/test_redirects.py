"""Issue 25, cause 13: a redirect never takes an answer from another host than the service asked.

``ground`` followed a 302 from E-utilities to another server and pinned its forged summary. Now the
HTTP client refuses a redirect that leaves the host (another host or port; ``http`` to ``https`` on
the same host is followed), for every command that uses it; only release downloads, whose bytes are
checked against a pinned SHA-256, may follow GitHub to its storage host. Real sockets: two loopback
servers, the service answering from the recorded CIViC E-utilities summaries.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bioevidence.cli import main
from bioevidence.errors import RetrievalError
from bioevidence.sources.catalogue import Catalogue
from bioevidence.sources.http import HttpClient, HttpConfig
from loopback import LoopbackServer, Reply
from sources.replay import serve_civic_ncbi

PMID = "15696205"  # a pinned CIViC paper: its recorded summary is what the real service answers
FORGED = "16609730"  # another pinned paper's summary, served by the other host under PMID's name


def _redirect_to(target: str) -> Reply:
    return Reply(302, b"", "text/plain", headers={"Location": target})


def test_the_client_follows_a_redirect_on_its_host_and_refuses_one_to_another() -> None:
    with LoopbackServer() as service, LoopbackServer() as elsewhere:
        service.route("/moved", lambda q: _redirect_to("/here"))
        service.route("/here", b'{"ok": 1}', content_type="application/json")
        service.route("/away", lambda q: _redirect_to(f"{elsewhere.url}/forged"))
        elsewhere.route("/forged", b'{"forged": 1}', content_type="application/json")
        with HttpClient(HttpConfig(max_attempts=1)) as http:
            assert http.get(f"{service.url}/moved").content == b'{"ok": 1}'
            with pytest.raises(RetrievalError, match="redirected to another host"):
                http.get(f"{service.url}/away")
        assert elsewhere.hits("/forged") == 0  # never even asked
        with HttpClient(HttpConfig(max_attempts=1, cross_host_redirects=True)) as http:
            assert http.get(f"{service.url}/away").content == b'{"forged": 1}'


def test_ground_pins_nothing_a_redirect_to_another_host_serves(shared_data: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    snapshots = shared_data / "civic_corpus" / "snapshots"
    with LoopbackServer() as service, LoopbackServer() as elsewhere:
        serve_civic_ncbi(elsewhere, snapshots)
        service.route("/esummary.fcgi", lambda q: _redirect_to(f"{elsewhere.url}/esummary.fcgi?db=pubmed&id={FORGED}"
                                                              "&retmode=json"))
        monkeypatch.setenv("BIOEVIDENCE_EUTILS_URL", service.url)
        record = {"record_id": "bioev:t", "source_artifacts": [
            {"id": "bioev:s1", "source_type": "publication", "uri": f"pmid:{PMID}", "title": "x", "version": "v",
             "retrieved_at": "2026-01-01T00:00:00Z", "sha256": "0" * 64}]}
        (tmp_path / "record.json").write_text(json.dumps(record))
        code = main(["ground", str(tmp_path / "record.json"), "--snapshot-dir", str(tmp_path / "snap"),
                     "--output", str(tmp_path / "grounded.json")])
        err = capsys.readouterr().err
        assert elsewhere.hits("/esummary.fcgi") == 0
    assert code != 0 and "redirected to another host" in err, err
    catalogue = Catalogue.load(tmp_path / "snap") if (tmp_path / "snap" / "literature.json").exists() else []
    assert [w for w in catalogue] == []  # nothing pinned from the other host
