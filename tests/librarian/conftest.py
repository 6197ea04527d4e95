"""Librarian fixtures: small real indexes built once per session in temporary folders."""

from __future__ import annotations

import gzip
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
