"""``ask`` over a local index of the pinned CIViC corpus, through the SDK client (stdio)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import SyncClient, server_env, stdio_client

from bioevidence.cli import main


@pytest.fixture(scope="module")
def index(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("index") / "ix"
    assert main(["index", "build", str(corpus), "--index", str(folder)]) == 0
    return folder


@pytest.fixture(scope="module")
def librarian(index: Path, corpus: Path, mcp_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        SyncClient]:
    client = stdio_client(["--snapshot-dir", str(corpus), "--index", str(index)],
                          server_env(tmp_path_factory.mktemp("home"), mcp_cache))
    yield client
    client.close()


def test_ask_returns_ranked_verbatim_evidence_pinned_by_hash(librarian: SyncClient, civic: dict[str, Any],
                                                             corpus: Path) -> None:
    question = civic["row"]["evidence_statement"]
    out = librarian.ok("ask", {"question": question, "top_k": 5})
    assert out["question"] == question and 1 <= len(out["items"]) <= 5  # top_k counts sentences
    assert {item["stance"] for item in out["items"]} <= {"supports", "contradicts", "neutral"}
    assert all(item["stance_by"] == "lexical" and not item["retracted"] for item in out["items"])
    assert {p["doc_id"] for p in out["papers"]} >= {item["doc_id"] for item in out["items"]}
    assert [item["rank"] for item in out["items"]] == list(range(1, len(out["items"]) + 1))
    pinned = {w["fulltext_sha256"] or w["metadata_sha256"]
              for w in json.loads((corpus / "literature.json").read_text())["works"].values()}
    for item in out["items"]:
        assert item["sha256"] in pinned and item["text"].strip() and "#" in item["locator"]
    # the statement's own paper is among the papers found
    assert any(item["pmid"] == civic["pmid"] for item in out["items"]), [i["pmid"] for i in out["items"]]
    assert {a["sha256"] for a in out["source_artifacts"]} == {i["sha256"] for i in out["items"]}
    assert len(out["evidence_items"]) == len(out["items"])


def test_every_quote_ask_returns_is_the_slice_of_the_passage_get_passage_reads(librarian: SyncClient,
                                                                    civic: dict[str, Any]) -> None:
    out = librarian.ok("ask", {"question": civic["row"]["evidence_statement"], "top_k": 5})
    for item in out["items"]:
        work, anchor = item["locator"].split("#", 1)
        [passage] = librarian.ok("get_passage", {"work": work, "locator": f"#{anchor}"})["passages"]
        assert passage["sha256"] == item["sha256"] and passage["id"] == item["paragraph_id"]
        assert passage["text"][item["start"]:item["end"]] == item["text"]  # byte for byte, at its offsets


def test_ask_bounds_papers_and_refuses_bad_arguments(librarian: SyncClient, civic: dict[str, Any]) -> None:
    out = librarian.ok("ask", {"question": civic["row"]["evidence_statement"], "top_k": 8, "papers": 1})
    assert len({item["doc_id"] for item in out["items"]}) == 1
    for arguments, field in [({"question": "x", "papers": 0}, "papers"), ({"question": "x", "top_k": 201}, "top_k"),
                             ({"question": "x", "include_retracted": "maybe"}, "include_retracted")]:
        error = librarian.error("ask", arguments)
        assert error["error"] == "usage_error" and field in error["message"]
