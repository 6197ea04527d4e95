"""Routes that make a LoopbackServer answer like NCBI E-utilities and Europe PMC from real data."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from bioevidence.sources.catalogue import Catalogue
from bioevidence.sources.store import SnapshotStore
from loopback import LoopbackServer, Reply


def serve_civic_ncbi(server: LoopbackServer, snapshots: Path) -> Catalogue:
    """esummary and efetch db=pmc answered from the pinned CIViC corpus (the real recorded bytes)."""
    store, catalogue = SnapshotStore(snapshots), Catalogue.load(snapshots)
    summaries: dict[str, bytes] = {}
    jats: dict[str, bytes] = {}
    for work in catalogue:
        summaries[work.id.value] = store.read(work.metadata_sha256)
        if work.fulltext_sha256:
            pmc_url = work.urls[1]
            pmc_id = pmc_url.split("id=")[1].split("&")[0]
            jats[pmc_id] = store.read(work.fulltext_sha256)

    def esummary(query: dict[str, str]) -> Reply | None:
        body = summaries.get(query.get("id", ""))
        return None if body is None else Reply(200, body, "application/json")

    def efetch(query: dict[str, str]) -> Reply | None:
        if query.get("db") == "pmc":
            body = jats.get(query.get("id", ""))
            return None if body is None else Reply(200, body, "text/xml")
        return None

    server.route("/esummary.fcgi", esummary)
    server.route("/efetch.fcgi", efetch)
    return catalogue


def serve_pubmed_efetch(server: LoopbackServer, shared_data: Path) -> None:
    """efetch db=pubmed answered from api_responses/pubmed_efetch and the retracted PMID 993."""
    folder = shared_data / "api_responses" / "pubmed_efetch"
    for path in sorted(folder.glob("[0-9]*.xml")):
        server.route("/efetch.fcgi", path, query={"db": "pubmed", "id": path.stem}, content_type="text/xml")
    server.route(
        "/efetch.fcgi",
        shared_data / "retractions" / "pubmed_retracted_pmid993.xml",
        query={"db": "pubmed", "id": "993"},
        content_type="text/xml",
    )


def europepmc_single(result: dict[str, object]) -> bytes:
    """A one-hit Europe PMC search page around a real result object."""
    return json.dumps(
        {"version": "6.9", "hitCount": 1, "request": {}, "resultList": {"result": [result]}}, indent=2
    ).encode()


def gunzip(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes())
