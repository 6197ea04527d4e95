"""Benchmark: pin N papers through a loopback server with injected per-request latency.

Serves real bytes from the pinned CIViC corpus (../shared/data/civic_corpus/snapshots): JATS
full texts, and Europe PMC-shaped one-hit search pages built around each paper's ids (or the
real NCBI esummary JSON with ``--resolver ncbi``). Prints wall time against the ideal
``requests / concurrency * latency`` (and, for rate-limited services, ``requests / rate``).

    .venv/bin/python tools/bench_pin.py [--papers 100] [--latency 0.2] [--resolver europepmc]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from bioevidence.sources.catalogue import Catalogue  # noqa: E402
from bioevidence.sources.http import HttpClient, HttpConfig  # noqa: E402
from bioevidence.sources.metadata import parse_metadata  # noqa: E402
from bioevidence.sources.pin import Pinner  # noqa: E402
from bioevidence.sources.store import SnapshotStore  # noqa: E402
from loopback import LoopbackServer, Reply  # noqa: E402


def build_server(server: LoopbackServer, snapshots: Path, papers: int) -> list[str]:
    store, catalogue = SnapshotStore(snapshots), Catalogue.load(snapshots)
    works = [w for w in catalogue if w.fulltext_sha256][:papers]
    pages: dict[str, bytes] = {}
    summaries: dict[str, bytes] = {}
    jats: dict[str, bytes] = {}
    for work in works:
        raw = store.read(work.metadata_sha256)
        meta = parse_metadata(raw, want=work.key)
        assert meta.pmcid and work.fulltext_sha256
        result = {
            "pmid": meta.pmid,
            "pmcid": meta.pmcid,
            "doi": meta.doi,
            "title": meta.title,
            "pubYear": str(meta.year),
            "isOpenAccess": "Y",
            "license": work.license,
            "pubTypeList": {"pubType": list(meta.publication_types)},
        }
        pages[f"EXT_ID:{meta.pmid} AND SRC:MED"] = json.dumps(
            {"hitCount": 1, "resultList": {"result": [result]}}
        ).encode()
        summaries[str(meta.pmid)] = raw
        jats[meta.pmcid] = store.read(work.fulltext_sha256)
        jats[meta.pmcid[3:]] = jats[meta.pmcid]
        server.route(f"/{meta.pmcid}/fullTextXML", jats[meta.pmcid], content_type="application/xml")
    server.route(
        "/search", lambda q: Reply(200, pages[q["query"]], "application/json") if q.get("query") in pages else None
    )
    server.route("/esummary.fcgi", lambda q: Reply(200, summaries[q["id"]], "application/json"))
    server.route("/efetch.fcgi", lambda q: Reply(200, jats[q["id"]], "text/xml"))
    return [w.key for w in works]


def run_once(args: argparse.Namespace, snapshots: Path) -> tuple[float, int, float]:
    with LoopbackServer(latency=args.latency) as server, tempfile.TemporaryDirectory() as tmp:
        idents = build_server(server, snapshots, args.papers)
        config = HttpConfig(
            urls={"europepmc": server.url, "eutils": server.url, "crossref": server.url}, ncbi_api_key=args.ncbi_api_key
        )
        limit = config.limit("eutils" if args.resolver == "ncbi" else "europepmc")
        with HttpClient(config) as http:
            pinner = Pinner(SnapshotStore(tmp), Catalogue(), http, resolver=args.resolver)
            start = time.perf_counter()
            results = pinner.pin_many(idents, workers=args.workers)
            wall = time.perf_counter() - start
        assert all(r.status == "pinned" for r in results), [r for r in results if r.status != "pinned"][:3]
        requests = len(server.log)
        ideal = requests / limit.concurrency * args.latency
        if limit.rate:
            ideal = max(ideal, requests / limit.rate)
        return wall, requests, ideal


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--resolver", choices=["europepmc", "ncbi"], default="europepmc")
    parser.add_argument("--ncbi-api-key", default=None, help="pretend a key is set (NCBI 10/s)")
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args()
    snapshots = args.data / "civic_corpus" / "snapshots"
    walls = []
    for _ in range(args.repeat):
        wall, requests, ideal = run_once(args, snapshots)
        walls.append(wall)
        print(f"run: {wall:.2f} s for {requests} requests")
    median = statistics.median(walls)
    print(
        f"resolver={args.resolver} papers={args.papers} latency={args.latency * 1000:.0f} ms "
        f"requests={requests} ideal={ideal:.2f} s median wall={median:.2f} s ratio={median / ideal:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
