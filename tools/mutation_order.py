"""A pytest plugin for ``tools/mutation.py``'s plain-code runs (issue 30): the cheapest tests first.

A mutant's tests run with ``-x``: they stop at the first failure, so a killed mutant costs the tests
before the one that fails. Most mutants are killed by a small exact test, while a real-data test pays
seconds of fixtures; running the tests in order of their measured cost makes a killed mutant cost
seconds instead of the whole file. The tests and what they check are unchanged: only their order.

``BIOEVIDENCE_MUTATION_DURATIONS=FILE``: record each test's duration (setup, call and teardown) as JSON
(the run with no mutant). ``BIOEVIDENCE_MUTATION_ORDER=FILE``: run the collected tests by those
durations, cheapest first (a test not in the file first of all, in collection order: it is new).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

_durations: dict[str, float] = {}


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    order = os.environ.get("BIOEVIDENCE_MUTATION_ORDER")
    if not order or not Path(order).is_file():
        return
    cost = json.loads(Path(order).read_text(encoding="utf-8"))
    items.sort(key=lambda item: cost.get(item.nodeid, 0.0))  # stable: ties keep collection order


def pytest_runtest_logreport(report: Any) -> None:
    if os.environ.get("BIOEVIDENCE_MUTATION_DURATIONS"):
        _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + float(report.duration)


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    out = os.environ.get("BIOEVIDENCE_MUTATION_DURATIONS")
    if out and _durations:
        Path(out).write_text(json.dumps(_durations, indent=0, sort_keys=True), encoding="utf-8")
