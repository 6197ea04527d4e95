"""Librarian fixtures: small real indexes built once per session in temporary folders."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from bioevidence.librarian.index import build_index


@pytest.fixture(scope="session")
def scifact_small(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JSONL corpus of the first 300 SciFact abstracts plus the index built from it."""
    root = tmp_path_factory.mktemp("scifact")
    src = shared_data / "claims" / "scifact" / "corpus.jsonl.gz"
    with gzip.open(src, "rt") as fh:
        lines = [next(fh) for _ in range(300)]
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(lines))
    build_index([corpus], root / "index")
    return root


@pytest.fixture(scope="session")
def jats_index(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("jats") / "index"
    build_index([shared_data / "jats", shared_data / "civic_corpus" / "snapshots"], out)
    return out


@pytest.fixture(scope="session")
def civic_index(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index of the pinned CIViC snapshot folder (140 papers with pinned text)."""
    out = tmp_path_factory.mktemp("civic") / "index"
    build_index([shared_data / "civic_corpus" / "snapshots"], out)
    return out


@pytest.fixture(scope="session")
def scifact_full(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index of the whole SciFact corpus (5,183 abstracts)."""
    out = tmp_path_factory.mktemp("scifact-full") / "index"
    build_index([shared_data / "claims" / "scifact" / "corpus.jsonl.gz"], out)
    return out


@pytest.fixture(scope="session")
def civic_statements(shared_data: Path) -> list[dict[str, str]]:
    """Every CIViC evidence statement whose cited paper is pinned, as a question."""
    works = json.loads((shared_data / "civic_corpus" / "snapshots" / "literature.json").read_text())["works"]
    with gzip.open(shared_data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt") as fh:
        rows = [json.loads(line) for line in fh]
    return [{"pmid": r["citation_id"], "question": r["evidence_statement"].strip().rstrip(".") + "?",
             "statement": r["evidence_statement"], "direction": r["evidence_direction"]}
            for r in rows if f"pmid:{r['citation_id']}" in works]
