"""``pin``, ``add_to_index``, ``corpus``, ``queue_for_review`` and ``review_status`` beyond the agent loop
(test_mcp_agent_loop.py): what each reports, refuses and leaves alone, over a real ``bioevidence mcp``
child (stdio) and the E-utilities replay of the recorded CIViC responses.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import SyncClient, altered, civic_record, server_env, stdio_client

from bioevidence.cli import main
from loopback import LoopbackServer

pytestmark = pytest.mark.heavy(seconds=10)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "papers"


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An empty store, an index of the two example papers (`bioevidence index build`), a queue file."""
    home = tmp_path_factory.mktemp("corpus")
    out = {"home": home, "store": home / "store", "index": home / "index", "queue": home / "q.sqlite"}
    out["store"].mkdir()
    assert main(["index", "build", str(EXAMPLES), "--index", str(out["index"])]) == 0
    return out


@pytest.fixture(scope="module")
def pinning(folders: dict[str, Path], replay: LoopbackServer, mcp_cache: Path) -> Iterator[SyncClient]:
    env = server_env(folders["home"], mcp_cache, BIOEVIDENCE_EUTILS_URL=replay.url,
                     BIOEVIDENCE_HTTP_CACHE=str(folders["home"] / "http"))
    client = stdio_client(["--snapshot-dir", str(folders["store"]), "--index", str(folders["index"]),
                           "--email", "tests@example.org"], env)
    yield client
    client.close()


@pytest.fixture(scope="module")
def reviewing(corpus: Path, folders: dict[str, Path], mcp_cache: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncClient]:
    """The pinned CIViC corpus (read only) and a review queue."""
    client = stdio_client(["--snapshot-dir", str(corpus), "--profile", "literature-claim", "--queue",
                           str(folders["queue"])], server_env(tmp_path_factory.mktemp("home"), mcp_cache))
    yield client
    client.close()


def test_pin_reports_every_work_once_and_never_fails_the_call(pinning: SyncClient, civic: dict[str, Any],
                                                              corpus: Path) -> None:
    pmid = civic["pmid"]
    out = pinning.ok("pin", {"works": [f"PMID:{pmid}", f"pmid:{pmid}", f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
                                       "pmid:99000001", "hello"]})
    rows = {row["asked"]: row for row in out["works"]}
    assert list(rows) == [f"PMID:{pmid}", "pmid:99000001", "hello"]  # one row per work, however spelled
    assert rows[f"PMID:{pmid}"]["status"] == "pinned" and rows[f"PMID:{pmid}"]["sha256"] == civic["sha256"]
    assert rows[f"PMID:{pmid}"]["title"] == civic["title"] and rows[f"PMID:{pmid}"]["indexed"] is False
    assert rows["pmid:99000001"]["status"] == "not_found" and out["not_found"] == ["pmid:99000001"]
    assert rows["hello"]["status"] == "failed" and "not a pmid:" in rows["hello"]["error"]
    assert out["complete"] is False
    again = pinning.ok("pin", {"works": [f"pmid:{pmid}"]})
    assert again["known"] == [f"pmid:{pmid}"] and again["complete"] is True
    # the gate sees the work from the next call on
    assert pinning.ok("validate_record", {"record": civic_record(civic)})["admitted"] is True
    for bad, field in [({"works": []}, "works"), ({"works": ["x" * 301]}, "works"),
                       ({"works": [f"pmid:{n}" for n in range(51)]}, "works")]:
        error = pinning.error("pin", bad)
        assert error["error"] == "usage_error" and field in error["message"]


def test_add_to_index_keeps_what_the_index_held_and_adds_the_pinned_works(
        pinning: SyncClient, folders: dict[str, Path], civic: dict[str, Any], replay: LoopbackServer) -> None:
    pinning.ok("pin", {"works": [f"pmid:{civic['pmid']}"]})
    before = pinning.ok("corpus", {})
    # the CIViC paper and pmid:99000001, catalogued with the resolver's "no such work" (as `ground` does)
    assert before["counts"]["not_indexed"] == 2 and before["counts"]["indexed_docs"] == 2  # the examples
    missing = pinning.ok("corpus", {"work": "pmid:99000001"})["works"][0]
    assert missing["not_found"] is True and missing["pinned"] == "metadata" and missing["indexed"] is False
    out = pinning.ok("add_to_index", {})
    assert out["added"] == [f"pmid:{civic['pmid']}"] and out["docs"] == 3
    assert out["sources"] == [str(EXAMPLES.resolve()), str(folders["store"].resolve())]
    after = pinning.ok("corpus", {"work": f"pmid:{civic['pmid']}"})
    assert after["works"][0]["indexed"] is True and after["counts"] | {"indexed_docs": 3, "not_indexed": 1} == \
        after["counts"]  # nothing to index for a work that does not exist
    # ask searches both: an example paper, and the pinned CIViC paper by its own statement
    asked = pinning.ok("ask", {"question": civic["row"]["evidence_statement"], "top_k": 5})
    assert any(item["doc_id"] == f"pmid:{civic['pmid']}" for item in asked["items"])
    assert pinning.ok("ask", {"question": "BRAF V600E melanoma vemurafenib", "top_k": 3})["items"]
    assert not [p for p in folders["index"].iterdir() if p.name.startswith(".build-") or "-old-" in p.name]


def test_corpus_pages_and_looks_works_up(pinning: SyncClient, civic: dict[str, Any], corpus: Path) -> None:
    others = [k for k, w in sorted(json.loads((corpus / "literature.json").read_text())["works"].items())
              if w["fulltext_sha256"] and k != f"pmid:{civic['pmid']}"][:2]
    pinning.ok("pin", {"works": others})
    first = pinning.ok("corpus", {"limit": 2})
    assert first["total"] == 4 and len(first["works"]) == 2 and first["next_offset"] == 2
    rest = pinning.ok("corpus", {"offset": 2, "limit": 2})
    assert len(rest["works"]) == 2 and "next_offset" not in rest
    keys = [w["id"] for w in first["works"] + rest["works"]]
    assert keys == sorted(keys) == sorted([f"pmid:{civic['pmid']}", *others, "pmid:99000001"])
    work = next(w for w in first["works"] + rest["works"] if w["id"] == f"pmid:{civic['pmid']}")
    doi = next(i for i in work["ids"] if i.startswith("doi:"))
    by_doi = pinning.ok("corpus", {"work": doi.upper()})  # any spelling of any of its identifiers
    assert by_doi["found"] is True and by_doi["works"] == [work]
    assert pinning.ok("corpus", {"work": "pmid:1"}) | {"found": False, "works": []} == \
        pinning.ok("corpus", {"work": "pmid:1"})
    assert pinning.error("corpus", {"work": "hello"})["error"] == "input_error"


def test_add_to_index_refuses_an_index_with_dense_vectors_and_an_empty_store(
        folders: dict[str, Path], mcp_cache: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    assert main(["index", "build", str(EXAMPLES), "--index", str(index)]) == 0
    (index / "dense").mkdir()
    store = tmp_path / "store"
    store.mkdir()
    client = stdio_client(["--snapshot-dir", str(store), "--index", str(index)],
                          server_env(tmp_path / "home", mcp_cache))
    try:
        empty = client.error("add_to_index", {})
        assert empty["error"] == "input_error" and "pin works first" in empty["message"]
        (store / "literature.json").write_text((folders["store"] / "literature.json").read_text())
        dense = client.error("add_to_index", {})
        assert dense["error"] == "configuration_error" and "dense vectors" in dense["message"]
        for name in ("queue_for_review", "review_status"):  # no --queue: the review tools say how to start
            arguments = {"record": {}, "reasons": []} if name == "queue_for_review" else {"entry": 1}
            error = client.error(name, arguments)
            assert error["error"] == "configuration_error" and "--queue" in error["message"]
    finally:
        client.close()


def test_only_a_record_the_loop_sends_to_a_person_is_queued(reviewing: SyncClient, civic: dict[str, Any]) -> None:
    admitted = reviewing.error("queue_for_review", {"record": civic_record(civic), "reasons": ["check"]})
    assert admitted["error"] == "input_error" and "nothing for a person to decide" in admitted["message"]
    misquote = civic_record(civic, altered(civic["sentence"]))
    fixable = reviewing.error("queue_for_review", {"record": misquote, "reasons": []})
    assert fixable["error"] == "input_error" and "revise_step" in fixable["message"]
    # the same misquote after the last round: exhausted, a person decides
    queued = reviewing.ok("queue_for_review", {"record": misquote, "previous": [misquote, misquote],
                                                "reasons": ["the model could not fix the quote"]})
    assert queued["reason"].startswith("exhausted: ") and queued["rounds"] == 3
    assert queued["reason"].endswith("; the agent: the model could not fix the quote")
    assert queued["reason_codes"] == ["BEV017"] and queued["overall_status"] == "rejected"
    started = time.monotonic()
    status = reviewing.ok("review_status", {"entry": queued["entry"], "wait_seconds": 1.5})
    assert time.monotonic() - started >= 1.5 and (status["decided"], status["state"]) == (False, "open")
    full = reviewing.ok("review_status", {"entry": queued["entry"], "details": True})
    assert full["record"]["evidence_items"][0]["extracted_text"] == misquote["evidence_items"][0]["extracted_text"]
    assert reviewing.error("review_status", {"entry": 999})["error"] == "input_error"
    assert reviewing.error("review_status", {"entry": 1, "wait_seconds": 61})["error"] == "usage_error"
