"""Fixtures for the loop tests: real releases and the pinned CIViC corpus, loaded once per session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def loop_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("loop-cache")


@pytest.fixture(scope="session")
def civic_snapshots(shared_data: Path) -> Path:
    return shared_data / "civic_corpus" / "snapshots"


@pytest.fixture(scope="session")
def cl_grounder(shared_data: Path, loop_cache: Path) -> Any:
    from bioevidence.gate.grounders.obo import load_ontology
    from bioevidence.gate.grounders.ontology import OntologyGrounder

    cl = load_ontology(shared_data / "references" / "cl_2026-06-08.obo.gz", cache_root=loop_cache)
    return OntologyGrounder([cl], {"cell_type": "CL:0000000"})


@pytest.fixture(scope="session")
def literature(civic_snapshots: Path, loop_cache: Path) -> Any:
    from bioevidence.gate.grounders.literature import LiteratureGrounder

    return LiteratureGrounder.from_directory(civic_snapshots, cache_root=loop_cache)
