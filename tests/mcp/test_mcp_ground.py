"""``ground``, the one network tool, against a loopback server replaying recorded NCBI responses;
what a server without a store, index or literature does; and the gate failing closed on bytes
that no longer hash to their name.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import SyncClient, civic_record, server_env, stdio_client

from loopback import Fault, LoopbackServer


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("store")


@pytest.fixture(scope="module")
def pinning(replay: LoopbackServer, empty_store: Path, mcp_cache: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncClient]:
    """A server over an empty store, its E-utilities pointed at the replay server."""
    home = tmp_path_factory.mktemp("home")
    env = server_env(home, mcp_cache, BIOEVIDENCE_EUTILS_URL=replay.url, BIOEVIDENCE_HTTP_CACHE=str(home / "http"))
    client = stdio_client(["--snapshot-dir", str(empty_store), "--profile", "literature-claim", "--email",
                           "tests@example.org"], env)
    yield client
    client.close()


def test_ground_pins_the_cited_paper_and_the_gate_then_admits_the_record(
        pinning: SyncClient, replay: LoopbackServer, civic: dict[str, Any], empty_store: Path) -> None:
    record = civic_record(civic, sha256="0" * 64, observed_sha256="0" * 64)
    before = pinning.ok("validate_record", {"record": record})
    assert before["admitted"] is False and "BEV015" in {f["rule_id"] for f in before["findings"]}

    out = pinning.ok("ground", {"record": record})
    assert out["cited"] == out["pinned"] == [f"pmid:{civic['pmid']}"] and out["complete"] is True
    [source] = out["record"]["source_artifacts"]
    assert source["sha256"] == source["observed_sha256"] == civic["sha256"]  # the recorded bytes' hash
    assert replay.hits("/esummary.fcgi") >= 1 and replay.hits("/efetch.fcgi") >= 1
    catalogue = json.loads((empty_store / "literature.json").read_text())["works"]
    assert catalogue[f"pmid:{civic['pmid']}"]["fulltext_sha256"] == civic["sha256"]

    # the gate and get_passage see the new work from the next call on
    after = pinning.ok("validate_record", {"record": out["record"]})
    assert after["admitted"] is True, after["findings"]
    passage = pinning.ok("get_passage", {"work": f"pmid:{civic['pmid']}", "locator": "abstract"})
    assert passage["passages"]

    again = pinning.ok("ground", {"record": out["record"]})
    assert again["known"] == [f"pmid:{civic['pmid']}"] and again["pinned"] == []


def test_ground_reports_works_it_could_not_pin_without_failing_the_call(
        pinning: SyncClient, replay: LoopbackServer, civic: dict[str, Any], corpus: Path) -> None:
    record = civic_record(civic)
    record["source_artifacts"].append({"id": "q", "source_type": "publication", "uri": "pmid:99000001"})
    record["source_artifacts"].append({"id": "r", "source_type": "publication", "uri": "pmid:22081665"})
    # its recorded esummary, behind one injected 400 (not retried)
    work = json.loads((corpus / "literature.json").read_text())["works"]["pmid:22081665"]
    summary = gzip.decompress((corpus / f"{work['metadata_sha256']}.json.gz").read_bytes())
    replay.route("/esummary.fcgi", summary, query={"id": "22081665"}, content_type="application/json")
    replay.fail("/esummary.fcgi", Fault.http(400), query={"id": "22081665"})
    out = pinning.ok("ground", {"record": record})
    assert out["not_found"] == ["pmid:99000001"] and list(out["failed"]) == ["pmid:22081665"]
    assert "400" in out["failed"]["pmid:22081665"] and out["complete"] is False
    assert out["record"]["source_artifacts"][2] == record["source_artifacts"][2]  # left as it was


def test_a_server_without_store_index_or_literature_fails_closed(
        civic: dict[str, Any], mcp_cache: Path, tmp_path: Path) -> None:
    client = stdio_client([], server_env(tmp_path / "home", mcp_cache))
    try:
        for name, arguments, words in [
            ("ground", {"record": civic_record(civic)}, "--snapshot-dir"),
            ("get_passage", {"work": f"pmid:{civic['pmid']}", "locator": "abstract"}, "--snapshot-dir"),
            ("ask", {"question": "KRAS in colorectal cancer"}, "--index"),
            ("validate_record", {"path": "record.json"}, "--workspace"),
            ("pin", {"works": [f"pmid:{civic['pmid']}"]}, "--snapshot-dir"),
            ("find", {"question": "KRAS in colorectal cancer"}, "--snapshot-dir"),
            ("corpus", {}, "--snapshot-dir"),
            ("add_to_index", {}, "--index"),
            ("queue_for_review", {"record": civic_record(civic), "reasons": []}, "--queue"),
            ("review_status", {"entry": 1}, "--queue"),
        ]:
            error = client.error(name, arguments)
            assert error["error"] == "configuration_error" and words in error["message"], (name, error)
        # unchecked quotes go to a person, never straight in (BEV029)
        out = client.ok("validate_record", {"record": civic_record(civic)})
        assert out["overall_status"] == "review_required" and out["admitted"] is False
        assert "BEV029" in {f["rule_id"] for f in out["findings"]}
    finally:
        client.close()


def test_bytes_that_no_longer_hash_to_their_name_are_never_admitted(
        civic: dict[str, Any], corpus: Path, mcp_cache: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    catalogue = json.loads((corpus / "literature.json").read_text())
    work = catalogue["works"][f"pmid:{civic['pmid']}"]
    shutil.copy(corpus / "literature.json", store)
    shutil.copy(corpus / f"{work['metadata_sha256']}.json.gz", store)
    tampered = civic["jats"].replace(civic["sentence"].encode(), civic["sentence"].replace(" ", "  ", 1).encode())
    assert tampered != civic["jats"]
    (store / f"{civic['sha256']}.xml.gz").write_bytes(gzip.compress(tampered))
    client = stdio_client(["--snapshot-dir", str(store), "--profile", "literature-claim"],
                          server_env(tmp_path / "home", mcp_cache))
    try:
        out = client.ok("validate_record", {"record": civic_record(civic)})
        assert out["admitted"] is False and out["overall_status"] == "rejected"
        assert "BEV014" in {f["rule_id"] for f in out["findings"]}
        error = client.error("get_passage", {"work": f"pmid:{civic['pmid']}", "locator": "abstract"})
        assert error["error"] == "integrity_error" and error["sha256"] == civic["sha256"]
    finally:
        client.close()
