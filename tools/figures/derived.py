"""Tables that copy figures from another step's region: built from the committed region, so a copy can
never drift from its source. README.md's performance summary is one (step ``readme-performance``): its
figures are those of docs/performance.md's ``gate-throughput`` and ``grounder-throughput`` regions,
which the timing steps regenerate; after ``reproduce.py gate-throughput --timings --write`` the
summary differs until ``reproduce.py readme-performance --write`` copies the new figures.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import regions

PERFORMANCE = "docs/performance.md"


class SourceTableError(Exception):
    """The source region lacks a row or a figure the copy needs."""


def _rows(repo: Path, region: str) -> dict[str, list[str]]:
    """The region's table rows by their first cell (bold removed), each as its cells."""
    text = (repo / PERFORMANCE).read_text(encoding="utf-8")
    rows: dict[str, list[str]] = {}
    for line in regions.read(text, region, PERFORMANCE).splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            cells = [cell.strip().replace("**", "") for cell in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


def _cell(rows: dict[str, list[str]], label: str, column: int, region: str) -> str:
    if label not in rows:
        raise SourceTableError(f"{PERFORMANCE} ({region}): no row {label!r}; rewrite the copy's labels "
                               "in tools/figures/derived.py")
    if column >= len(rows[label]):
        raise SourceTableError(f"{PERFORMANCE} ({region}): the row {label!r} has no column {column + 1}")
    return rows[label][column]


def _figure(cell: str, pattern: str, where: str) -> str:
    found = re.search(pattern, cell)
    if found is None:
        raise SourceTableError(f"{PERFORMANCE}: {where} {cell!r} does not match {pattern!r}")
    return found.group(1)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def readme_performance(repo: Path) -> str:
    """README.md's performance table, from docs/performance.md's two throughput regions."""
    gate = _rows(repo, "gate-throughput")
    one = _cell(gate, "batch, one process (`--workers 1`)", 1, "gate-throughput")
    seconds = _figure(one, r"^([\d.]+) s", "the one-process time")
    rate = _figure(one, r"→ ([\d,]+) records/s", "the one-process rate")
    two = _figure(_cell(gate, "batch, `--workers 2`", 1, "gate-throughput"), r"→ ([\d,]+) records/s",
                  "the 2-worker rate")
    peer = _figure(_cell(gate, "batch, one process (`--workers 1`)", 4, "gate-throughput"), r"^([\d,]+) records/s",
                   "the peer's rate")
    cold = _figure(_cell(gate, "`validate one.json` cold start", 1, "gate-throughput"), r"^([\d.]+) s",
                   "our cold start")
    peer_cold = _figure(_cell(gate, "`validate one.json` cold start", 4, "gate-throughput"), r"^([\d.]+) s",
                        "the peer's cold start")
    grounded = _rows(repo, "grounder-throughput")
    loaded = "throughput once loaded (first pass included)"
    g_rate = _figure(_cell(grounded, loaded, 1, "grounder-throughput"), r"^([\d,]+) records/s", "the grounded rate")
    g_peer = _figure(_cell(grounded, loaded, 4, "grounder-throughput"), r"^([\d,]+) records/s",
                     "the peer's grounded rate")
    g_ratio = _figure(_cell(grounded, loaded, 6, "grounder-throughput"), r"^([\d.]+×)$", "the grounded ratio")
    load_row = "warm load (imports, CL + HGNC, snapshots and catalogue, validator)"
    g_load = _figure(_cell(grounded, load_row, 1, "grounder-throughput"), r"^([\d.]+) s", "the warm load")
    g_peer_load = _figure(_cell(grounded, load_row, 4, "grounder-throughput"), r"^([\d.]+) s", "the peer's load")
    ratio = _number(rate) / _number(peer)
    return "\n".join([
        "| figure | bioevidence | bioai-evidence-validator 0.8.0 |",
        "|---|---|---|",
        f"| 10,000 records, no grounders, whole process | {seconds} s: **{rate} records/s** ({ratio:.1f}×); "
        f"{two}/s with `--workers 2` | {peer} records/s (its Python API loop alone) |",
        f"| `bioevidence validate one.json` cold start | **{cold} s** | {peer_cold} s (its CLI) |",
        f"| 10,000 records with the literature, Cell Ontology and HGNC grounders, once loaded | "
        f"**{g_rate} records/s** ({g_ratio}); {g_load} s to load | {g_peer} records/s; {g_peer_load} s to load |",
    ]) + "\n"
