"""A pytest plugin for ``tools/mutation.py``'s plain-code runs (issue 30): the cheapest tests first.

A mutant's tests run with ``-x``: they stop at the first failure, so a killed mutant costs the tests
before the one that fails. Most mutants are killed by a small exact test, while a real-data test pays
seconds of fixtures; running the tests in order of their measured cost makes a killed mutant cost
seconds instead of the whole file. The tests and what they check are unchanged: only their order.

``BIOEVIDENCE_MUTATION_DURATIONS=FILE``: record, as JSON, each test's own time (its call) and each
fixture's setup time (the run with no mutant). ``BIOEVIDENCE_MUTATION_ORDER=FILE``: run the collected
tests by their cost, cheapest first: a test's call plus the setup of every fixture it uses, so every test
that shares an expensive fixture waits with the one that first paid for it (a fixture is set up once a
scope, but which test pays depends on the order). A test or fixture the record lacks costs 0 (it is new);
ties keep pytest's collection order.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_calls: dict[str, float] = {}
_fixtures: dict[str, float] = {}


def cost(record: dict[str, dict[str, float]], nodeid: str, fixtures: list[str]) -> float:
    """A test's cost in ``record``: its call plus the setup of each fixture it uses."""
    return record.get("tests", {}).get(nodeid, 0.0) + sum(record.get("fixtures", {}).get(f, 0.0) for f in fixtures)


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    order = os.environ.get("BIOEVIDENCE_MUTATION_ORDER")
    if not order or not Path(order).is_file():
        return
    record = json.loads(Path(order).read_text(encoding="utf-8"))
    items.sort(key=lambda item: cost(record, item.nodeid, list(getattr(item, "fixturenames", ()))))  # stable


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Generator[None, None, None]:
    t0 = time.perf_counter()
    yield
    if os.environ.get("BIOEVIDENCE_MUTATION_DURATIONS"):
        name = fixturedef.argname
        _fixtures[name] = max(_fixtures.get(name, 0.0), time.perf_counter() - t0)


def pytest_runtest_logreport(report: Any) -> None:
    if os.environ.get("BIOEVIDENCE_MUTATION_DURATIONS") and report.when == "call":
        _calls[report.nodeid] = float(report.duration)


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    out = os.environ.get("BIOEVIDENCE_MUTATION_DURATIONS")
    if out and (_calls or _fixtures):
        Path(out).write_text(json.dumps({"tests": _calls, "fixtures": _fixtures}, indent=0, sort_keys=True),
                             encoding="utf-8")
