"""Fixtures for the MCP tests: real ``bioevidence mcp`` processes driven by the SDK's own client.

``stdio`` servers are ``python -m bioevidence mcp …`` children spoken to over their real
stdin/stdout pipes; ``http`` servers listen on 127.0.0.1 with a bearer token. Helpers live in
``mcp_harness.py`` (this folder is put on ``sys.path``). No ``__init__.py`` here on purpose:
``tests/`` is on ``sys.path``, and a ``tests/mcp`` package would shadow the SDK's ``mcp``.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    import mcp  # noqa: F401
except ImportError:  # a user's clone without the extra; CI installs it, and there a missing SDK fails
    if os.environ.get("CI"):
        raise
    pytest.skip("the MCP SDK is not installed: pip install 'bioevidence[mcp]'", allow_module_level=True)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_harness import (
    TOKEN,
    HttpServer,
    SyncClient,
    civic_record,
    first_sentence,
    hgnc_ids,
    server_env,
    stdio_client,
    text_paragraphs,
)

from bioevidence.cli import main
from loopback import LoopbackServer
from sources.replay import serve_civic_ncbi, serve_pubmed_efetch

# -- real data ----------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def corpus(shared_data: Path) -> Path:
    return shared_data / "civic_corpus" / "snapshots"


@pytest.fixture(scope="session")
def mcp_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-cache")


@pytest.fixture(scope="session")
def civic(shared_data: Path, corpus: Path) -> dict[str, Any]:
    """A CIViC evidence statement whose pinned paper has a text-only body paragraph: the parts of a record."""
    catalogue = json.loads((corpus / "literature.json").read_text())["works"]
    with gzip.open(shared_data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt") as handle:
        rows = [json.loads(line) for line in handle]
    symbols = {row["molecular_profile"].split()[0] for row in rows}
    hgnc = hgnc_ids(shared_data, symbols)
    for row in rows:
        work = catalogue.get(f"pmid:{row['citation_id']}")
        gene = row["molecular_profile"].split()[0]
        if not work or not work["fulltext_sha256"] or work.get("retracted") or gene not in hgnc \
                or row["evidence_direction"] != "Supports" or not row["doid"]:
            continue
        raw = gzip.decompress((corpus / f"{work['fulltext_sha256']}.xml.gz").read_bytes())
        for paragraph in text_paragraphs(raw):
            sentence = first_sentence(paragraph)
            if sentence is None:
                continue
            summary = json.loads(gzip.decompress((corpus / f"{work['metadata_sha256']}.json.gz").read_bytes()))
            return {"row": row, "pmid": row["citation_id"], "gene": gene, "hgnc": hgnc[gene],
                    "sha256": work["fulltext_sha256"], "jats": raw, "paragraph": paragraph, "sentence": sentence,
                    "title": summary["result"][row["citation_id"]]["title"]}
    raise AssertionError("no CIViC statement with a text-only paragraph in its pinned paper")


@pytest.fixture(scope="session")
def index(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A librarian index of the pinned CIViC corpus (`bioevidence index build`)."""
    folder = tmp_path_factory.mktemp("index") / "ix"
    assert main(["index", "build", str(corpus), "--index", str(folder)]) == 0
    return folder


@pytest.fixture(scope="session")
def librarian(index: Path, corpus: Path, mcp_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        SyncClient]:
    """A stdio server over the corpus and its index (ask, answer)."""
    client = stdio_client(["--snapshot-dir", str(corpus), "--index", str(index)],
                          server_env(tmp_path_factory.mktemp("home"), mcp_cache))
    yield client
    client.close()


@pytest.fixture(scope="session")
def replay(corpus: Path, shared_data: Path) -> Iterator[LoopbackServer]:
    """E-utilities on 127.0.0.1: esummary and efetch db=pmc from the recorded CIViC responses, efetch
    db=pubmed from api_responses/pubmed_efetch."""
    with LoopbackServer() as server:
        serve_civic_ncbi(server, corpus)
        serve_pubmed_efetch(server, shared_data)
        yield server


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, civic: dict[str, Any]) -> Path:
    folder = tmp_path_factory.mktemp("workspace")
    (folder / "records").mkdir()
    (folder / "records" / "civic.json").write_text(json.dumps(civic_record(civic)))
    return folder


@pytest.fixture(scope="module")
def stdio(corpus: Path, workspace: Path, mcp_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        SyncClient]:
    """A stdio server over the pinned CIViC corpus, profile literature-claim, records readable in the workspace."""
    env = server_env(tmp_path_factory.mktemp("home"), mcp_cache)
    client = stdio_client(["--snapshot-dir", str(corpus), "--profile", "literature-claim",
                           "--workspace", str(workspace)], env)
    yield client
    client.close()


@pytest.fixture(scope="module")
def http_server(corpus: Path, workspace: Path, mcp_cache: Path,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The same server over streamable HTTP on 127.0.0.1, bearer token required."""
    home = tmp_path_factory.mktemp("home")
    env = server_env(home, mcp_cache, BIOEVIDENCE_MCP_TOKEN=TOKEN)
    server = HttpServer(["--snapshot-dir", str(corpus), "--profile", "literature-claim", "--workspace",
                         str(workspace)], env, home / "server.log")
    yield server
    server.close()


@pytest.fixture(scope="module")
def http(http_server: HttpServer) -> Iterator[SyncClient]:
    client = http_server.client(TOKEN)
    yield client
    client.close()


@pytest.fixture(scope="module", params=["stdio", "http"])
def server(request: pytest.FixtureRequest) -> SyncClient:
    """Each transport in turn (tests that must hold over both)."""
    return request.getfixturevalue(request.param)
