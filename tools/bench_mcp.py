"""Benchmark ``bioevidence mcp``: cold start, tool-call latency over stdio and HTTP, the extra's size.

* cold start: spawn ``bioevidence mcp --snapshot-dir <CIViC snapshots>`` over stdio and time
  until the SDK client has initialised (the server answered ``initialize``), then until the
  first ``validate_record`` returned (grounders loaded, first paper read);
* latency: ``validate_record`` (a CIViC record quoting its pinned paper, admitted),
  ``get_passage`` and ``revise_step`` called repeatedly on one connection, per transport;
* size: bytes on disk of the distributions the ``mcp`` extra adds to a ``.[test,dask]``
  environment (read from their installed file lists);
* context cost (``--context``): bytes of ``tools/list`` (compact JSON of every tool as listed, and
  of what a model is given: name, description, input schema), and of the text an agent reads from
  ``validate_record``, ``answer`` and ``ask`` (by default and with ``details: true``; ``answer`` and
  ``ask`` for the first ``--questions`` CIViC evidence statements), over an index of the CIViC
  snapshots built in a temporary folder.

Prints medians. The record is built through the server itself: ``get_passage`` reads the first
body paragraph of a pinned paper and the record quotes its first sentence.

    python tools/bench_mcp.py [--runs 5] [--calls 50] [--markdown]
    python tools/bench_mcp.py --context [--questions 10] [--markdown]

``--markdown`` ends with the figures as docs/mcp.md's tables: its region ``mcp-latency`` (timing,
``tools/reproduce.py mcp-latency --timings``) and, with ``--context``, ``mcp-context`` (quality: sizes
in bytes, compared exactly by ``tools/reproduce.py mcp-context``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BIOEVIDENCE_SHARED_DATA", REPO.parent / "shared" / "data"))
CORPUS = DATA / "civic_corpus" / "snapshots"
TOKEN = "bench-token-" + "0" * 32
#: What `pip install mcp` adds to an environment that already has bioevidence[test,dask].
EXTRA = ("mcp", "mcp-types", "starlette", "uvicorn", "sse-starlette", "PyJWT", "cryptography", "cffi", "pycparser",
         "python-multipart", "opentelemetry-api")


def extra_bytes() -> dict[str, int]:
    out: dict[str, int] = {}
    for name in EXTRA:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        out[name] = sum(Path(dist.locate_file(f)).stat().st_size for f in dist.files or ()
                        if Path(dist.locate_file(f)).is_file())
    return out


def env(home: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("BIOEVIDENCE_STORE", "BIOEVIDENCE_MCP_TOKEN")}
    out.update(BIOEVIDENCE_HOME=str(home), BIOEVIDENCE_CACHE=str(home / "cache"))
    return out


ARGS = ["--snapshot-dir", str(CORPUS), "--profile", "literature-claim"]


def stdio(home: Path) -> Any:
    from mcp import Client, StdioServerParameters

    return Client(StdioServerParameters(command=sys.executable, args=["-m", "bioevidence", "mcp", *ARGS],
                                        env=env(home)))


@contextlib.asynccontextmanager
async def http(url: str) -> AsyncIterator[Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=300) as client,
                Client(streamable_http_client(url, http_client=client)) as session):
        yield session


async def record(client: Any) -> dict[str, Any]:
    """A literature-claim record quoting the first sentence of a pinned paper's first body paragraph."""
    import json

    works = json.loads((CORPUS / "literature.json").read_text())["works"]
    key, work = next((k, w) for k, w in sorted(works.items()) if w["fulltext_sha256"] and not w.get("retracted"))
    out = (await client.call_tool("get_passage", {"work": key, "locator": "body", "limit": 200})).structured_content
    for passage in out["passages"]:
        sentence = next((s for s in re.split(r"(?<=[a-z0-9]\.) (?=[A-Z])", passage["text"])
                         if 12 <= len(s.split()) <= 40), None)
        if passage["kind"] == "paragraph" and sentence:
            break
    else:
        raise SystemExit(f"no quotable sentence in {key}")
    sha = work["fulltext_sha256"]
    return {
        "record_id": "bench:1", "profile_id": "literature-claim", "requested_uses": ["research_summary"],
        "statement": {"id": "s", "statement_status": "proposed", "predicate": "associated_with",
                      "subject": {"id": "HGNC:6407", "label": "KRAS", "entity_type": "gene"},
                      "object": {"id": "MONDO:0005575", "label": "colorectal cancer", "entity_type": "disease"},
                      "scope": ["NCBITaxon:9606"],
                      "evidence_lines": [{"id": "l", "direction": "supports", "evidence_item_ids": ["e"]}]},
        "source_artifacts": [{"id": "p", "title": out["title"], "source_type": "publication", "uri": key,
                              "version": "1", "retrieved_at": "2026-09-29T00:00:00Z", "sha256": sha,
                              "observed_sha256": sha}],
        "evidence_items": [{"id": "e", "source_artifact_id": "p", "locator": f"{key}#{passage['id']}",
                            "extracted_text": sentence, "evidence_type": "publication_result",
                            "extraction_method": "manual_curation", "scope": ["NCBITaxon:9606"]}],
        "adjudications": [],
    }


async def cold_start(home: Path) -> tuple[float, float]:
    started = time.perf_counter()
    async with stdio(home) as client:
        ready = time.perf_counter() - started
        rec = await record(client)
        result = await client.call_tool("validate_record", {"record": rec})
        assert result.structured_content["admitted"], result.structured_content["findings"]
        return ready, time.perf_counter() - started


async def latencies(client: Any, calls: int) -> dict[str, float]:
    rec = await record(client)
    locator = rec["evidence_items"][0]["locator"]
    work, anchor = locator.split("#")
    bad = {**rec, "evidence_items": [{**rec["evidence_items"][0], "extracted_text": "the drug was never tested in "
                                      "any patient of this cohort at all"}]}
    timed = {"validate_record": ("validate_record", {"record": rec}),
             "get_passage": ("get_passage", {"work": work, "locator": f"#{anchor}"}),
             "revise_step (misquote)": ("revise_step", {"record": bad})}
    out = {}
    for label, (name, args) in timed.items():
        await client.call_tool(name, args)  # warm
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            result = await client.call_tool(name, args)
            times.append(time.perf_counter() - t0)
            assert not result.is_error, result.content
        out[label] = statistics.median(times) * 1000
    return out


def text_of(result: Any) -> str:
    """The text block of a tool result (what a client gives its model)."""
    return str(getattr(result.content[0], "text", ""))


def compact(value: Any) -> int:
    import json

    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def kb(size: float) -> str:
    return f"{size / 1000:.1f}"


async def context(home: Path, questions: int) -> list[tuple[str, str]]:
    """The context figures of docs/mcp.md ("Context cost"), printed, and as its table's rows."""
    import gzip
    import json

    from mcp import Client, StdioServerParameters

    index = home / "index"
    subprocess.run([sys.executable, "-m", "bioevidence", "index", "build", str(CORPUS), "--index", str(index)],
                   check=True, capture_output=True, env=env(home))
    with gzip.open(DATA / "civic_corpus" / "civic-evidence.jsonl.gz", "rt") as handle:
        asked = [json.loads(line)["evidence_statement"] for line in handle][:questions]
    server = StdioServerParameters(command=sys.executable, args=["-m", "bioevidence", "mcp", *ARGS, "--index",
                                                                 str(index)], env=env(home))
    async with Client(server) as client:
        listed = (await client.list_tools()).tools
        whole = compact([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed])
        model = compact([{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                         for t in listed])
        print(f"tools/list: {len(listed)} tools, {whole / 1000:.1f} KB as listed, {model / 1000:.1f} KB given to a "
              "model (name, description, input schema)")
        rows = [("`tools/list`, compact JSON as listed", f"{kb(whole)} KB ({len(listed)} tools)"),
                ("… given to a model (name, description, input schema)",
                 f"{kb(model)} KB ({kb(model / len(listed))} KB a tool)")]
        shown: dict[str, list[str]] = {}
        rec = await record(client)
        for details in (False, True):
            extra = {"details": True} if details else {}
            result = await client.call_tool("validate_record", {"record": rec, **extra})
            assert not result.is_error, result.content
            print(f"validate_record ({'details' if details else 'default'}), an admitted CIViC record: "
                  f"{len(text_of(result).encode()) / 1000:.1f} KB")
            shown.setdefault("validate_record", []).append(f"{kb(len(text_of(result).encode()))} KB")
        for tool in ("answer", "ask"):
            for details in (False, True):
                sizes = []
                for question in asked:
                    arguments: dict[str, Any] = {"question": question, **({"details": True} if details else {})}
                    result = await client.call_tool(tool, arguments)
                    assert not result.is_error, result.content
                    sizes.append(len(text_of(result).encode()))
                print(f"{tool} ({'details' if details else 'default'}): text an agent reads, first question "
                      f"{sizes[0] / 1000:.1f} KB, median of {len(sizes)} {statistics.median(sizes) / 1000:.1f} KB, "
                      f"largest {max(sizes) / 1000:.1f} KB")
                shown.setdefault(tool, []).append(f"{kb(sizes[0])} / {kb(statistics.median(sizes))} / "
                                                  f"{kb(max(sizes))} KB")
    for tool, label in (("answer", f"`answer` result text, first statement / median of {len(asked)} / largest"),
                        ("ask", "`ask` result text (`top_k` 10), first / median / largest"),
                        ("validate_record", "`validate_record` result text, an admitted CIViC record")):
        plain, detailed = shown[tool]
        rows.append((label, f"{plain} (`details`: {detailed})"))
    return rows


def print_table(rows: list[tuple[str, str]]) -> None:
    print("\n| figure | measured |\n|---|---|")
    for label, value in rows:
        print(f"| {label} | {value} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--context", action="store_true", help="Only the context-cost figures.")
    parser.add_argument("--questions", type=int, default=10, help="CIViC statements asked for --context.")
    parser.add_argument("--markdown", action="store_true", help="End with the figures as docs/mcp.md's table.")
    args = parser.parse_args()
    if args.context:
        with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
            rows = asyncio.run(context(Path(tmp), args.questions))
        if args.markdown:
            print_table(rows)
        return
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        home = Path(tmp)
        cold = asyncio.run(cold_start(home))  # empty parse cache: JATS parsed from the pinned bytes
        print(f"cold start, stdio, empty cache: initialised {cold[0]:.2f} s, first validate_record answered "
              f"{cold[1]:.2f} s")
        runs = [asyncio.run(cold_start(home)) for _ in range(args.runs)]
        ready, first = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        print(f"cold start, stdio, warm cache (median of {args.runs}): initialised {ready:.2f} s, "
              f"first validate_record answered {first:.2f} s")

        async def over_stdio() -> dict[str, float]:
            async with stdio(home) as client:
                return await latencies(client, args.calls)

        results = {"stdio": asyncio.run(over_stdio())}
        log = home / "http.log"
        with log.open("wb") as handle:
            server = subprocess.Popen([sys.executable, "-m", "bioevidence", "mcp", "--http", "--port", "0", *ARGS],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=handle,
                                      env={**env(home), "BIOEVIDENCE_MCP_TOKEN": TOKEN})
            try:
                while not (found := re.search(r"streamable HTTP at (\S+)", log.read_text())):
                    if server.poll() is not None:
                        raise SystemExit(log.read_text())
                    time.sleep(0.05)

                async def over_http() -> dict[str, float]:
                    async with http(found.group(1)) as client:
                        return await latencies(client, args.calls)

                results["http"] = asyncio.run(over_http())
            finally:
                server.terminate()
                server.wait(20)
    print(f"tool-call latency, median of {args.calls} calls on one connection (ms):")
    for transport, figures in results.items():
        print(f"  {transport:5}  " + "  ".join(f"{k} {v:.1f}" for k, v in figures.items()))
    sizes = extra_bytes()
    print(f"the mcp extra on disk: {sum(sizes.values()) / 1e6:.1f} MB "
          f"({', '.join(f'{k} {v / 1e6:.1f}' for k, v in sorted(sizes.items(), key=lambda kv: -kv[1]))})")
    if args.markdown:
        both = {label: f"{results['stdio'][label]:.1f} / {results['http'][label]:.1f} ms" for label in results["stdio"]}
        print_table([
            ("cold start over stdio, warm parse cache: spawn → `initialize` answered", f"{ready:.2f} s"),
            ("… → first `validate_record` answered (grounders loaded, paper re-hashed)", f"{first:.2f} s"),
            ("cold start, empty cache (the paper's JATS parsed from its bytes): `initialize` / first "
             "`validate_record`", f"{cold[0]:.2f} s / {cold[1]:.2f} s"),
            ("`validate_record` (CIViC record, admitted), stdio / HTTP", both["validate_record"]),
            ("`get_passage`, stdio / HTTP", both["get_passage"]),
            ("`revise_step` (a misquote: closest passage, requote fix), stdio / HTTP", both["revise_step (misquote)"]),
            ("the `mcp` extra on disk (what it adds to `.[test,dask]`)", f"{sum(sizes.values()) / 1e6:.1f} MB"),
        ])


if __name__ == "__main__":
    main()
