"""Cluster fixtures: one LocalCluster of two worker processes on loopback per session, a client
per test, and the CIViC records (see tests/clusters.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import clusters


@pytest.fixture(scope="session")
def cluster() -> Iterator[Any]:
    """Two worker processes (with nannies) and a scheduler on 127.0.0.1."""
    with clusters.start_cluster() as running:
        yield running


@pytest.fixture()
def client(cluster: Any) -> Iterator[Any]:
    distributed = clusters.need_distributed()
    with distributed.Client(cluster, set_as_default=False) as c:
        c.wait_for_workers(2, timeout=60)
        yield c


@pytest.fixture(scope="session")
def snapshots(shared_data: Path) -> Path:
    return shared_data / "civic_corpus" / "snapshots"


@pytest.fixture(scope="session")
def civic_records(shared_data: Path, snapshots: Path) -> list[dict[str, Any]]:
    return clusters.civic_records(shared_data, snapshots)
