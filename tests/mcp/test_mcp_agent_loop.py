"""Issue 27's done-when: an agent does the whole job over MCP alone, with the SDK's own client.

find -> pin -> index -> ask -> validate -> queue -> read the decision, over stdio and over HTTP, on
real recorded data: Europe PMC answers from a loopback server with CIViC works described by their
recorded NCBI esummary and served as their recorded JATS; E-utilities answers from the recorded
CIViC responses (``sources/replay.py``). The server starts with an empty store, an empty index
folder and an empty review queue. The curator's decision is written by `bioevidence review decide`
in the test while the agent waits for it in ``review_status``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import TOKEN, HttpServer, SyncClient, civic_record, serve_europepmc, server_env, stdio_client

from bioevidence.cli import main
from bioevidence.meaning import available
from loopback import LoopbackServer

pytestmark = pytest.mark.heavy(seconds=15)


@pytest.fixture(scope="module")
def found_works(corpus: Path, civic: dict[str, Any]) -> list[str]:
    """What Europe PMC finds: the CIViC statement's paper and two other open CIViC papers."""
    works = json.loads((corpus / "literature.json").read_text())["works"]
    others = [k for k, w in sorted(works.items()) if w["fulltext_sha256"] and not w.get("retracted")
              and k != f"pmid:{civic['pmid']}"][:2]
    return [f"pmid:{civic['pmid']}", *others]


@pytest.fixture(scope="module")
def europepmc(corpus: Path, found_works: list[str]) -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        serve_europepmc(server, corpus, found_works)
        yield server


@pytest.fixture(scope="module", params=["stdio", "http"])
def agent(request: pytest.FixtureRequest, replay: LoopbackServer, europepmc: LoopbackServer, mcp_cache: Path,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SyncClient, dict[str, Path]]]:
    """A server with an empty store, index folder and queue, its services pointed at the replays."""
    home = tmp_path_factory.mktemp("home")
    folders = {"store": home / "store", "index": home / "index", "queue": home / "review.sqlite"}
    folders["store"].mkdir()
    folders["index"].mkdir()
    env = server_env(home, mcp_cache, BIOEVIDENCE_EUTILS_URL=replay.url, BIOEVIDENCE_EUROPEPMC_URL=europepmc.url,
                     BIOEVIDENCE_HTTP_CACHE=str(home / "http"), BIOEVIDENCE_MCP_TOKEN=TOKEN)
    args = ["--snapshot-dir", str(folders["store"]), "--index", str(folders["index"]), "--queue",
            str(folders["queue"]), "--profile", "literature-claim", "--email", "tests@example.org"]
    if request.param == "stdio":
        client = stdio_client(args, env)
        yield client, folders
        client.close()
        return
    server = HttpServer(args, env, home / "server.log")
    client = server.client(TOKEN)
    yield client, folders
    client.close()
    server.close()


def test_an_agent_finds_pins_indexes_asks_validates_queues_and_reads_the_curators_decision(
        agent: tuple[SyncClient, dict[str, Path]], civic: dict[str, Any], found_works: list[str],
        corpus: Path) -> None:
    client, folders = agent
    question = civic["row"]["evidence_statement"]
    catalogue = json.loads((corpus / "literature.json").read_text())["works"]

    # find: Europe PMC, verbatim sentences cut from bytes pinned into the server's store
    found = client.ok("find", {"question": question, "top_k": 5})
    assert set(found["works"]) == set(found_works) and found["items"]
    for item in found["items"]:
        assert item["sha256"] == catalogue[item["doc_id"]]["fulltext_sha256"]  # the recorded JATS, by hash
        assert any(folders["store"].glob(f"{item['sha256']}.*"))
        assert item["stance"] in ("undetermined", "neutral") or available()  # passed through, never invented

    # pin: the works it found, through the E-utilities replay; nothing is indexed yet
    assert client.ok("corpus", {})["counts"]["works"] == 0
    pinned = client.ok("pin", {"works": found["works"]})
    assert pinned["complete"] is True and sorted(pinned["pinned"]) == sorted(found_works)
    for row in pinned["works"]:
        assert row["sha256"] == catalogue[row["id"]]["fulltext_sha256"] and row["pinned"] == "fulltext"
        assert row["title"] and "indexed" not in row  # no index yet
    retracted = sorted(row["id"] for row in pinned["works"] if row.get("retracted"))
    assert retracted == ["pmid:16609730"]  # its recorded esummary says so: flagged, and withheld from ask below
    held = client.ok("corpus", {})
    assert held["counts"] == {"works": 3, "fulltext": 3, "abstract": 0, "metadata": 0, "retracted": 1}
    assert client.error("ask", {"question": question})["error"] == "configuration_error"  # no index yet

    # index: the pinned works, from their pinned bytes
    built = client.ok("add_to_index", {})
    assert sorted(built["added"]) == sorted(found_works) and built["docs"] == 3
    held = client.ok("corpus", {"work": f"PMID:{civic['pmid']}"})
    assert held["found"] is True and held["works"][0]["indexed"] is True and held["counts"]["not_indexed"] == 0
    assert client.ok("add_to_index", {})["added"] == []  # again: nothing new

    # ask: the local index now holds them; the quote the agent takes is verbatim and pinned
    asked = client.ok("ask", {"question": question, "top_k": 10})
    assert all(i["doc_id"] not in retracted for i in asked["items"])
    ours = [i for i in asked["items"] if i["doc_id"] == f"pmid:{civic['pmid']}"]
    assert ours, asked["items"]
    quote = ours[0]
    assert quote["sha256"] == civic["sha256"]
    passage = client.ok("get_passage", {"work": quote["doc_id"], "locator": "#" + quote["locator"].split("#")[1]})
    assert passage["passages"][0]["text"][quote["start"]:quote["end"]] == quote["text"]

    # validate: the agent's record quotes it (cut by the librarian's parser) for the knowledge base: the gate
    # confirms the quote, and a knowledge-base claim needs a person's acceptance (BEV010), never a rewording
    record = civic_record(civic, quote["text"])
    record["requested_uses"] = ["knowledge_base"]
    record["evidence_items"][0].update(locator=quote["locator"], extraction_method="deterministic_parser")
    verdict = client.ok("validate_record", {"record": record})
    assert verdict["verified_evidence_item_ids"] == ["e"] and verdict["admitted"] is False
    assert [f["rule_id"] for f in verdict["findings"] if f["severity"] in ("error", "review")] == ["BEV010"]
    step = client.ok("revise_step", {"record": record})
    assert step["outcome"] == "to_person" and step["routes"] == ["policy"] and step["feedback"] == []

    # queue: handed to a person with the agent's reasons
    queued = client.ok("queue_for_review", {"record": record, "reasons": ["quoted from the results; please confirm"]})
    entry = queued["entry"]
    assert queued["state"] == "open" and "please confirm" in queued["reason"] and queued["reason_codes"]
    assert queued["asks"].startswith("accept or reject the record for knowledge_base")
    waiting = client.ok("review_status", {"entry": entry})
    assert (waiting["state"], waiting["decided"], waiting["decisions"]) == ("open", False, [])

    # read the decision: the agent waits while a curator decides with the CLI
    answer: dict[str, Any] = {}

    def wait() -> None:
        started = time.monotonic()
        answer.update(client.ok("review_status", {"entry": entry, "wait_seconds": 30}))
        answer["waited"] = time.monotonic() - started

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(1.0)
    assert waiter.is_alive()  # still waiting for a person
    assert main(["review", "decide", str(entry), "accept", "--reviewer", "orcid:0000-0002-1825-0097", "--name",
                 "A. Curator", "--rationale", "The quoted result states the association.", "--queue",
                 str(folders["queue"]), "--snapshot-dir", str(folders["store"])]) == 0
    waiter.join(60)
    assert not waiter.is_alive() and answer["waited"] >= 1.0
    assert (answer["state"], answer["decided"]) == ("accept", True)
    [decision] = answer["decisions"]
    assert (decision["decision"], decision["reviewer_id"], decision["reviewer_name"]) == (
        "accept", "orcid:0000-0002-1825-0097", "A. Curator")
    assert decision["rationale"] == "The quoted result states the association."
    assert decision["uses"] == ["knowledge_base"] and decision["overall_status_after"] == "admitted"
    assert (answer["overall_status"], answer["admitted"]) == ("admitted", True)  # the person's acceptance admits it
    full = client.ok("review_status", {"entry": entry, "details": True})
    [adjudication] = [a for a in full["record"]["adjudications"] if a["reviewer"]["agent_type"] == "human"]
    assert adjudication["decision"] == "accept" and full["validation"]["overall_status"] == answer["overall_status"]
