"""``ask``, ``answer`` and ``ground`` over streamable HTTP (the other tools run over both transports in
test_mcp_tools.py): a ``bioevidence mcp --http`` child with the CIViC index, an empty store and the
E-utilities pointed at the loopback replay of the recorded NCBI responses, reached over real loopback
sockets with the bearer token. Each answer is compared with the stdio server's over the same index.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import TOKEN, HttpServer, SyncClient, civic_record, server_env

from loopback import LoopbackServer


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("http-store")  # empty: ground pins into it


@pytest.fixture(scope="module")
def over_http(index: Path, store: Path, replay: LoopbackServer, mcp_cache: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncClient]:
    home = tmp_path_factory.mktemp("home")
    env = server_env(home, mcp_cache, BIOEVIDENCE_MCP_TOKEN=TOKEN, BIOEVIDENCE_EUTILS_URL=replay.url,
                     BIOEVIDENCE_HTTP_CACHE=str(home / "http"))
    server = HttpServer(["--snapshot-dir", str(store), "--index", str(index), "--profile", "literature-claim",
                         "--email", "tests@example.org"], env, home / "server.log")
    client = server.client(TOKEN)
    yield client
    client.close()
    server.close()


def test_ask_over_http_returns_what_stdio_returns(over_http: SyncClient, librarian: SyncClient,
                                                  civic: dict[str, Any]) -> None:
    question = civic["row"]["evidence_statement"]
    out = over_http.ok("ask", {"question": question, "top_k": 5})
    assert 1 <= len(out["items"]) <= 5 and out["question"] == question
    assert {item["stance"] for item in out["items"]} <= {"supports", "contradicts", "neutral", "undetermined"}
    assert out == librarian.ok("ask", {"question": question, "top_k": 5})


def test_answer_over_http_cites_only_verified_items_as_stdio_does(over_http: SyncClient, librarian: SyncClient,
                                                                  civic: dict[str, Any]) -> None:
    question = civic["row"]["evidence_statement"]
    out = over_http.ok("answer", {"question": question, "details": True})
    assert out["record"]["profile_id"] == "librarian-evidence"
    assert out["left_out"] == [] and out["admitted_items"]  # the index's papers are pinned: every item verifies
    for sentence in out["sentences"]:
        assert set(sentence["cites"]) <= set(out["admitted_items"])
    same = librarian.ok("answer", {"question": question, "details": True})
    for key in ("direction", "verdict", "deciding_items", "sentences", "admitted_items", "left_out",
                "papers_by_stance", "items"):
        assert out[key] == same[key], key


def test_ground_over_http_pins_the_paper_and_the_gate_then_admits_the_record(
        over_http: SyncClient, replay: LoopbackServer, civic: dict[str, Any], store: Path) -> None:
    record = civic_record(civic, sha256="0" * 64, observed_sha256="0" * 64)
    assert over_http.ok("validate_record", {"record": record})["admitted"] is False  # nothing pinned yet
    out = over_http.ok("ground", {"record": record})
    assert out["pinned"] == [f"pmid:{civic['pmid']}"] and out["complete"] is True
    [source] = out["record"]["source_artifacts"]
    assert source["sha256"] == source["observed_sha256"] == civic["sha256"]
    works = json.loads((store / "literature.json").read_text())["works"]
    assert works[f"pmid:{civic['pmid']}"]["fulltext_sha256"] == civic["sha256"]
    after = over_http.ok("validate_record", {"record": out["record"]})
    assert after["admitted"] is True, after["findings"]
    passage = over_http.ok("get_passage", {"work": f"pmid:{civic['pmid']}", "locator": "abstract"})
    assert passage["passages"] and passage["passages"][0]["sha256"]
