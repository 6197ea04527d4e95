"""Session fixtures: real releases and the CIViC corpus, indexed once per session into a tmp cache."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bioevidence-cache")


@pytest.fixture(scope="session")
def corpus_dir(shared_data: Path) -> Path:
    return shared_data / "civic_corpus" / "snapshots"


@pytest.fixture(scope="session")
def cell_ontology(shared_data: Path, cache_dir: Path):  # type: ignore[no-untyped-def]
    from bioevidence.gate.grounders.obo import load_ontology

    return load_ontology(shared_data / "references" / "cl_2026-06-08.obo.gz", cache_root=cache_dir)


@pytest.fixture(scope="session")
def hgnc(shared_data: Path, cache_dir: Path):  # type: ignore[no-untyped-def]
    from bioevidence.gate.grounders.genes import load_genes

    return load_genes([shared_data / "references" / "hgnc_complete_set_2026-09-30.tsv.gz",
                       shared_data / "hgnc" / "hgnc_entries.sample.tsv"], cache_root=cache_dir)
