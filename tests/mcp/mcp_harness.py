"""Helpers for the MCP tests: the SDK client on its own thread, HTTP server children, CIViC records.

* :class:`SyncClient`: the SDK ``Client`` in one long-lived task on its own event-loop thread,
  with blocking methods for tests (connect once per module, call many times).
* :class:`HttpServer`: ``bioevidence mcp --http --port 0`` as a child process; its URL is read
  from the line the server prints on stderr, and it is reached over real loopback sockets.
* CIViC records are built from the real data: a CIViC evidence statement (gene, disease,
  direction), its pinned paper, and a sentence read from the pinned JATS bytes with plain lxml
  (text-only body paragraphs), independently of the project's JATS parser.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from lxml import etree
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult

TOKEN = "t0ken-for-tests-" + "9" * 24


def server_env(home: Path, cache: Path, **extra: str) -> dict[str, str]:
    """The environment a test server runs in: its own home and cache, no ambient store or token."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("BIOEVIDENCE_STORE", "BIOEVIDENCE_MCP_TOKEN", "BIOEVIDENCE_WORKSPACE")}
    env.update({"BIOEVIDENCE_HOME": str(home), "BIOEVIDENCE_CACHE": str(cache)}, **extra)
    return env


class SyncClient:
    """The SDK client in one task of a private event loop; tests call it synchronously."""

    def __init__(self, connect: Callable[[], contextlib.AbstractAsyncContextManager[Client]],
                 timeout: float = 120.0) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._jobs: asyncio.Queue[Any] | None = None
        ready: concurrent.futures.Future[Client] = concurrent.futures.Future()
        self._main = asyncio.run_coroutine_threadsafe(self._serve(connect, ready), self._loop)
        started = time.perf_counter()
        self.client = ready.result(timeout)
        self.connect_seconds = time.perf_counter() - started

    async def _serve(self, connect: Callable[[], contextlib.AbstractAsyncContextManager[Client]],
                     ready: concurrent.futures.Future[Client]) -> None:
        self._jobs = asyncio.Queue()
        try:
            async with connect() as client:
                ready.set_result(client)
                while (job := await self._jobs.get()) is not None:
                    fn, done = job
                    try:
                        done.set_result(await fn(client))
                    except Exception as exc:
                        done.set_exception(exc)
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    def run(self, fn: Callable[[Client], Awaitable[Any]], timeout: float = 300.0) -> Any:
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        assert self._jobs is not None
        self._loop.call_soon_threadsafe(self._jobs.put_nowait, (fn, done))
        return done.result(timeout)

    def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        return self.run(lambda c: c.call_tool(name, arguments))

    def ok(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A successful call's structured content (the SDK client has checked it against the output schema)."""
        result = self.call(name, arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content

    def error(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A failed call's one-line JSON error (and that it carries no structured verdict)."""
        result = self.call(name, arguments)
        assert result.is_error, result.structured_content
        assert result.structured_content is None
        [block] = result.content
        text = block.text  # type: ignore[union-attr]
        assert "\n" not in text
        return json.loads(text)

    def close(self) -> None:
        if self._jobs is not None:
            self._loop.call_soon_threadsafe(self._jobs.put_nowait, None)
        with contextlib.suppress(Exception):
            self._main.result(60)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


def stdio_client(args: list[str], env: dict[str, str]) -> SyncClient:
    params = StdioServerParameters(command=sys.executable, args=["-m", "bioevidence", "mcp", *args], env=env)
    return SyncClient(lambda: Client(params))


class HttpServer:
    """``bioevidence mcp --http --port 0`` as a child process; ``url`` from the line it prints on stderr."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path, timeout: float = 120.0) -> None:
        self.log = log
        self._handle = log.open("wb")
        self.started = time.perf_counter()
        self.process = subprocess.Popen([sys.executable, "-m", "bioevidence", "mcp", "--http", "--port", "0", *args],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._handle,
                                        env=env)
        deadline = time.monotonic() + timeout
        self.url = ""
        while time.monotonic() < deadline:
            found = re.search(r"streamable HTTP at (\S+)", log.read_text(errors="replace"))
            if found:
                self.url = found.group(1)
                break
            if self.process.poll() is not None:
                raise AssertionError(f"server exited {self.process.returncode}: {log.read_text()}")
            time.sleep(0.05)
        else:
            self.close()
            raise AssertionError(f"no URL within {timeout} s: {log.read_text()}")

    def client(self, token: str | None) -> SyncClient:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        @contextlib.asynccontextmanager
        async def connect() -> AsyncIterator[Client]:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            async with (httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http,
                        Client(streamable_http_client(self.url, http_client=http)) as client):
                yield client

        return SyncClient(connect)

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self._handle.close()



# -- real data --------------------------------------------------------------------------------

def text_paragraphs(jats: bytes) -> list[str]:
    """Body paragraphs that hold text only (no inline elements), whitespace collapsed, by lxml alone."""
    root = etree.fromstring(jats, etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))
    return [" ".join(p.text.split()) for body in root.iter("body") for p in body.iter("p")
            if len(p) == 0 and p.text and len(p.text.split()) > 30]


def first_sentence(paragraph: str) -> str | None:
    for sentence in re.split(r"(?<=[a-z0-9]\.) (?=[A-Z])", paragraph):
        if 12 <= len(sentence.split()) <= 45 and sentence.endswith(".") and "al." not in sentence:
            return sentence
    return None


def hgnc_ids(shared_data: Path, symbols: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    with gzip.open(shared_data / "references" / "hgnc_complete_set_2026-09-30.tsv.gz", "rt") as handle:
        header = handle.readline().rstrip("\n").split("\t")
        for line in handle:
            row = dict(zip(header, line.rstrip("\n").split("\t"), strict=False))
            if row["symbol"] in symbols:
                out[row["symbol"]] = row["hgnc_id"]
    return out


def civic_record(civic: dict[str, Any], quote: str | None = None, **source: Any) -> dict[str, Any]:
    """A complete literature-claim record of the CIViC statement, quoting the paper (by default verbatim)."""
    row, sha = civic["row"], civic["sha256"]
    return {
        "record_id": f"civic:eid{row['evidence_id']}", "profile_id": "literature-claim",
        "requested_uses": ["research_summary"],
        "statement": {
            "id": "s", "statement_status": "proposed", "predicate": "associated_with",
            "subject": {"id": civic["hgnc"], "label": civic["gene"], "entity_type": "gene"},
            "object": {"id": f"DOID:{row['doid']}", "label": row["disease"], "entity_type": "disease"},
            "scope": ["NCBITaxon:9606"],
            "evidence_lines": [{"id": "l", "direction": "supports", "evidence_item_ids": ["e"]}]},
        "source_artifacts": [{"id": "p", "title": civic["title"], "source_type": "publication",
                              "uri": f"pmid:{civic['pmid']}", "version": "1", "retrieved_at": "2026-09-29T00:00:00Z",
                              "sha256": sha, "observed_sha256": sha, **source}],
        "evidence_items": [{"id": "e", "source_artifact_id": "p", "locator": "body",
                            "extracted_text": quote if quote is not None else civic["sentence"],
                            "evidence_type": "publication_result", "extraction_method": "manual_curation",
                            "scope": ["NCBITaxon:9606"]}],
        "adjudications": [],
    }


def altered(sentence: str) -> str:
    """The sentence with one word in the middle changed (what a model misquoting it writes)."""
    words = sentence.split()
    middle = len(words) // 2
    words[middle] = "never" if words[middle].lower() != "never" else "always"
    return " ".join(words)


def sha256_of_pinned(corpus: Path, sha: str) -> str:
    """SHA-256 of a pinned file's bytes (inflated), computed here, not by the project."""
    path = next(corpus.glob(f"{sha}.*"))
    data = path.read_bytes()
    return hashlib.sha256(gzip.decompress(data) if path.suffix == ".gz" else data).hexdigest()


def europepmc_result(corpus: Path, key: str) -> tuple[dict[str, Any], str, bytes]:
    """A Europe PMC ``resultType=core`` result for a pinned CIViC work, from its recorded NCBI esummary
    (title, ids, authors, journal, year), with the recorded JATS its ``fullTextXML`` serves: ``(result,
    pmcid, jats)``. The same bytes the E-utilities replay serves as ``efetch db=pmc``."""
    work = json.loads((corpus / "literature.json").read_text())["works"][key]
    pmid = key.split(":", 1)[1]
    summary = json.loads(gzip.decompress((corpus / f"{work['metadata_sha256']}.json.gz").read_bytes()))
    row = summary["result"][pmid]
    ids = {a["idtype"]: a["value"] for a in row["articleids"]}
    result = {"id": pmid, "source": "MED", "pmid": pmid, "pmcid": ids["pmc"], "title": row["title"],
              "pubYear": row["pubdate"][:4], "authorString": ", ".join(a["name"] for a in row["authors"]),
              "journalTitle": row["fulljournalname"], "isOpenAccess": "Y", "inEPMC": "Y"}
    if "doi" in ids:
        result["doi"] = ids["doi"]
    jats = gzip.decompress((corpus / f"{work['fulltext_sha256']}.xml.gz").read_bytes())
    return result, ids["pmc"], jats


def serve_europepmc(server: Any, corpus: Path, keys: list[str]) -> None:
    """Europe PMC on a loopback server: every search answers one core page holding ``keys`` (CIViC works),
    and each one's ``fullTextXML`` is its recorded JATS."""
    from loopback import Reply

    results = []
    for key in keys:
        result, pmcid, jats = europepmc_result(corpus, key)
        results.append(result)
        server.route(f"/{pmcid}/fullTextXML", jats, content_type="application/xml")
    page = json.dumps({"version": "6.9", "hitCount": len(results), "request": {},
                       "resultList": {"result": results}}).encode()

    def search(query: dict[str, str]) -> Any:
        return Reply(200, page, "application/json") if query.get("cursorMark", "*") == "*" else None

    server.route("/search", search)
