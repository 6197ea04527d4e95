"""Helpers for the cluster tests: a real Dask ``LocalCluster`` of worker processes on 127.0.0.1,
``literature-claim`` records built from the CIViC corpus, and output comparison.

Without Dask installed (``pip install 'bioevidence[dask]'``) the cluster tests skip with that
message; under CI (``CI=true``) a missing Dask is a failure, never a skip.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


def need_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        message = "Dask is not installed; pip install 'bioevidence[dask]' to run the cluster tests"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return distributed


def start_cluster(n: int = 2) -> Any:
    distributed = need_distributed()
    return distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                    dashboard_address=":0", silence_logs=logging.ERROR)


def _quotes(snapshots: Path, works: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """pmid → (pinned sha256, title as pinned in esummary, first long paragraph's first sentence)."""
    from bioevidence.text.jats import parse_jats

    out = {}
    for key, work in sorted(works.items()):
        if not key.startswith("pmid:") or not work.get("fulltext_sha256"):
            continue
        pmid = key.split(":", 1)[1]
        article = parse_jats(gzip.decompress((snapshots / f"{work['fulltext_sha256']}.xml.gz").read_bytes()))
        para = next((p for p in article.passages if p.kind == "paragraph" and len(p.text.split()) > 20), None)
        summary = json.loads(gzip.decompress((snapshots / f"{work['metadata_sha256']}.json.gz").read_bytes()))
        if para is None or pmid not in summary.get("result", {}):
            continue
        out[pmid] = (work["fulltext_sha256"], summary["result"][pmid]["title"], " ".join(para.text.split()[:18]))
    return out


def civic_records(shared_data: Path, snapshots: Path) -> list[dict[str, Any]]:
    """One record per CIViC evidence item and use (378): those citing a paper with pinned full text
    quote it (a real sentence start: verifiable), on every other item the CIViC statement (a
    paraphrase: not verbatim), so the reports mix admitted, review and rejected outcomes."""
    with gzip.open(shared_data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt", encoding="utf-8") as handle:
        items = [json.loads(line) for line in handle]
    works = json.loads((snapshots / "literature.json").read_text())["works"]
    quotes = _quotes(snapshots, works)
    out = []
    for n, civic in enumerate(items):
        pmid = civic["citation_id"]
        work = works.get(f"pmid:{pmid}", {})
        sha, title, quote = quotes.get(pmid, (work.get("metadata_sha256") or "0" * 64, civic["citation"],
                                              civic["evidence_statement"]))
        if n % 2:
            quote = civic["evidence_statement"]
        for use in ("research_summary", "knowledge_base"):
            rid = f"civic:EID{civic['evidence_id']}/{use}"
            out.append({
                "record_id": rid, "profile_id": "literature-claim", "requested_uses": [use],
                "statement": {
                    "id": f"{rid}/s", "statement_status": "proposed", "predicate": "associated_with",
                    "subject": {"id": f"civic:MP{civic['molecular_profile_id']}", "label": civic["molecular_profile"],
                                "entity_type": "variant"},
                    "object": {"id": f"DOID:{civic['doid'] or '4'}", "label": civic["disease"] or "disease",
                               "entity_type": "disease"},
                    "scope": ["NCBITaxon:9606"],
                    "evidence_lines": [{"id": f"{rid}/l", "direction": "supports" if civic["evidence_direction"]
                                        == "Supports" else "contradicts", "evidence_item_ids": [f"{rid}/e"]}]},
                "source_artifacts": [{"id": f"{rid}/p", "title": title, "source_type": "publication",
                                      "uri": f"pmid:{pmid}", "version": "1", "retrieved_at": "2026-09-29T00:00:00Z",
                                      "sha256": sha, "observed_sha256": sha}],
                "evidence_items": [{"id": f"{rid}/e", "source_artifact_id": f"{rid}/p", "locator": "body",
                                    "extracted_text": quote, "evidence_type": "publication_result",
                                    "extraction_method": "manual_curation", "scope": ["NCBITaxon:9606"]}],
                "adjudications": [],
            })
    return out


def write_jsonl(path: Path, records: list[dict[str, Any]], *, broken_line: int | None = None) -> Path:
    lines = [json.dumps(r) for r in records]
    if broken_line is not None:
        lines.insert(broken_line, '{"record_id": "broken", ')  # an unreadable line keeps its place
    path.write_text("".join(line + "\n" for line in lines))
    return path


def without_timestamps(text: str) -> str:
    """The output with each ``validated_at`` value blanked (the one field allowed to differ between
    runs); every other byte is kept, so comparing two of these compares the outputs byte for byte."""
    return re.sub(r'("validated_at": ?)"[^"]*"', r'\1"-"', text)


@contextmanager
def processes(*commands: list[str]) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Start ``commands`` (a scheduler, workers) as processes; terminate them (then kill) at the end."""
    procs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for cmd in commands]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_for_workers(address: str, n: int) -> None:
    """Block until ``n`` workers have joined the scheduler at ``address`` (at most 120 s)."""
    distributed = need_distributed()
    with distributed.Client(address, timeout=30, set_as_default=False) as client:
        client.wait_for_workers(n, timeout=120)


@contextmanager
def scheduler_and_workers(file: Path, workers: int) -> Iterator[subprocess.Popen[bytes]]:
    """A real ``dask scheduler`` on 127.0.0.1 writing its address to ``file`` and ``workers`` one-thread
    ``dask worker`` processes found through it, all joined; yields the scheduler's process."""
    import sys
    import time

    python = sys.executable
    scheduler = [python, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                 "--no-dashboard", "--scheduler-file", str(file)]
    with processes(scheduler) as (started,):
        deadline = time.monotonic() + 60
        while not file.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        worker = [python, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(file), "--nthreads", "1",
                  "--no-dashboard", "--host", "127.0.0.1"]
        with processes(*[worker] * workers):
            wait_for_workers(address, workers)
            yield started
