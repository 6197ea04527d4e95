"""Fixtures for the pin stage: a loopback server and HTTP clients pointed at it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bioevidence.sources.http import HostLimit, HttpClient, HttpConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loopback import LoopbackServer, RecordingSleep


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def sleeps() -> RecordingSleep:
    return RecordingSleep()


@pytest.fixture
def make_config(server: LoopbackServer, tmp_path: Path) -> Callable[..., HttpConfig]:
    def make(**overrides: Any) -> HttpConfig:
        values: dict[str, Any] = {
            "email": "tests@example.org",
            "urls": {"europepmc": server.url, "eutils": server.url, "crossref": server.url},
            "connect_timeout": 2.0,
            "read_timeout": 2.0,
            "backoff_base": 0.01,
            "backoff_max": 0.05,
            "max_attempts": 4,
            "cache_dir": tmp_path / "http-cache",
            "limits": {name: HostLimit(None, 4) for name in ("eutils", "europepmc", "crossref", "default")},
        }
        values.update(overrides)
        return HttpConfig(**values)

    return make


@pytest.fixture
def make_client(make_config: Callable[..., HttpConfig], sleeps: RecordingSleep) -> Iterator[Callable[..., HttpClient]]:
    clients: list[HttpClient] = []

    def make(**overrides: Any) -> HttpClient:
        client = HttpClient(make_config(**overrides), sleep=sleeps, rng=lambda: 0.5)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
