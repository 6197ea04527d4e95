"""A pytest plugin for ``tools/mutation.py``'s plain-code runs (issue 30): only the tests that reach the
mutated function, the cheapest first.

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

``BIOEVIDENCE_MUTATION_REACH=FILE`` with ``BIOEVIDENCE_MUTATION_WATCH=MODULE=PATH;...``: record, as JSON,
which tests reach each function of the watched source files, named as mutmut names a mutant's function
(``module.x_name``, ``module.xǁClassǁmethod``; a nested function or comprehension counts as the function
around it, and is listed on its own too, as ``NAME::QUALNAME``). A call made while a fixture is set up
counts for every test that uses the fixture (a session fixture is set up once, but each of its users reads
what it built); a call outside any test (collection, the end of the session) is listed under ``""``: the
tool runs every test for such a function.
``BIOEVIDENCE_MUTATION_SELECT=FILE``: run only the tests named in FILE (node ids, one a line).

``BIOEVIDENCE_MUTATION_ALARM=FILE`` (with ``..._ORDER``): each test (its setup, call and teardown) gets
:data:`FACTOR` times its recorded cost plus :data:`SLACK` seconds (10, or
``BIOEVIDENCE_MUTATION_ALARM_SLACK``); a test still running then (a mutant that
loops) writes its node id and limit to FILE and ends the process at once with exit :data:`TIMED_OUT`. A
mutant that loops in its first test so costs seconds instead of the whole run's limit. The costs were
recorded under the reach trace, about three times slower than plain code: the limit is about six times
a test's plain time. Code stuck inside C (a regular expression backtracking) is not interrupted: the
tool's limit for the whole run stays the backstop.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_calls: dict[str, float] = {}
_fixtures: dict[str, float] = {}
_context = [""]  # a stack: the test being run, then any fixture being set up inside it
_hits: set[tuple[str, str, str]] = set()  # (context, file, code's qualified name)
_uses: dict[str, list[str]] = {}  # test node id -> the fixtures it uses
_watched: dict[str, str] = {}  # source file -> its module's dotted name
_record: dict[str, dict[str, float]] = {}  # BIOEVIDENCE_MUTATION_ORDER's durations, once read

FACTOR = 2.0  # a test's limit: FACTOR times its recorded (traced) cost plus SLACK seconds
SLACK = float(os.environ.get("BIOEVIDENCE_MUTATION_ALARM_SLACK", "10"))  # a test of this plugin sets it lower
TIMED_OUT = 124  # the exit status of a run stopped by a test's limit (as timeout(1))


def function_key(module: str, qualname: str) -> str | None:
    """mutmut's name for the function a code object belongs to (``module.x_f``, ``module.xǁCǁm``); None for
    code outside any function (a class body, a module-level lambda)."""
    parts = qualname.split(".<locals>.", 1)[0].split(".")
    if parts[-1].startswith("<"):
        return None
    if len(parts) == 1:
        return f"{module}.x_{parts[0]}"
    return f"{module}.x\u01c1{parts[0]}\u01c1{parts[1]}" if len(parts) == 2 else None


def _trace(frame: Any, event: str, arg: Any) -> None:
    """The global trace function: called on each call into Python code (a new frame); returning None turns
    line tracing off, so the code runs at nearly full speed."""
    code = frame.f_code
    if code.co_filename in _watched and code.co_flags & 1:  # CO_OPTIMIZED: a function, not a class body
        _hits.add((_context[-1], code.co_filename, code.co_qualname))


def pytest_configure(config: Any) -> None:
    watch = os.environ.get("BIOEVIDENCE_MUTATION_WATCH", "")
    if not os.environ.get("BIOEVIDENCE_MUTATION_REACH") or not watch:
        return
    for entry in watch.split(";"):
        module, _, path = entry.partition("=")
        _watched[str(Path(path).resolve())] = module
    sys.settrace(_trace)
    threading.settrace(_trace)  # a grounder's worker threads


def _alarm(nodeid: str, limit: float, where: str) -> None:
    """Arm the alarm for one test: past ``limit`` seconds, name it in ``where`` and end the process."""

    def ring(signum: int, frame: Any) -> None:
        Path(where).write_text(json.dumps({"test": nodeid, "limit": round(limit, 1)}), encoding="utf-8")
        os._exit(TIMED_OUT)  # not an exception: the mutated code could catch it and loop on

    signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, limit)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Generator[None, None, None]:
    _context.append(item.nodeid)
    where = os.environ.get("BIOEVIDENCE_MUTATION_ALARM")
    armed = bool(where and _record)  # a limit needs the file to name the test in and the recorded costs
    if armed:
        _alarm(item.nodeid, FACTOR * cost(_record, item.nodeid, list(getattr(item, "fixturenames", ()))) + SLACK,
               str(where))
    try:
        yield
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
        _context.pop()


def cost(record: dict[str, dict[str, float]], nodeid: str, fixtures: list[str]) -> float:
    """A test's cost in ``record``: its call plus the setup of each fixture it uses."""
    return record.get("tests", {}).get(nodeid, 0.0) + sum(record.get("fixtures", {}).get(f, 0.0) for f in fixtures)


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    for item in items:
        _uses[item.nodeid] = list(getattr(item, "fixturenames", ()))
    chosen = os.environ.get("BIOEVIDENCE_MUTATION_SELECT")
    if chosen:
        wanted = set(Path(chosen).read_text(encoding="utf-8").splitlines())
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in wanted])
        items[:] = [item for item in items if item.nodeid in wanted]
    order = os.environ.get("BIOEVIDENCE_MUTATION_ORDER")
    if not order or not Path(order).is_file():
        return
    record = json.loads(Path(order).read_text(encoding="utf-8"))
    _record.update(record)
    items.sort(key=lambda item: cost(record, item.nodeid, list(getattr(item, "fixturenames", ()))))  # stable


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Generator[None, None, None]:
    t0 = time.perf_counter()
    _context.append(f"fixture:{fixturedef.argname}")
    try:
        yield
    finally:
        _context.pop()
    if os.environ.get("BIOEVIDENCE_MUTATION_DURATIONS"):
        name = fixturedef.argname
        _fixtures[name] = max(_fixtures.get(name, 0.0), time.perf_counter() - t0)


def pytest_runtest_logreport(report: Any) -> None:
    if os.environ.get("BIOEVIDENCE_MUTATION_DURATIONS") and report.when == "call":
        _calls[report.nodeid] = float(report.duration)


def reach() -> dict[str, list[str]]:
    """Per function (mutmut's name), the node ids of the tests that reach it ("" for outside any test); per
    code nested in it (a nested function, a comprehension), under ``NAME::QUALNAME``, the tests that reach
    that code (a function's nested ``build()`` may run only while a cache is built)."""
    users: dict[str, list[str]] = {}
    for nodeid, fixtures in _uses.items():
        for name in fixtures:
            users.setdefault(name, []).append(nodeid)
    out: dict[str, set[str]] = {}
    for context, path, qualname in _hits:
        key = function_key(_watched[path], qualname)
        if key is not None:
            tests = users.get(context[8:], []) if context.startswith("fixture:") else [context]
            out.setdefault(key, set()).update(tests)
            if "<locals>" in qualname:
                out.setdefault(f"{key}::{qualname}", set()).update(tests)
    return {key: sorted(tests) for key, tests in sorted(out.items())}


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    record = os.environ.get("BIOEVIDENCE_MUTATION_REACH")
    if record and _watched:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
        Path(record).write_text(json.dumps(reach(), indent=0, ensure_ascii=False), encoding="utf-8")
    out = os.environ.get("BIOEVIDENCE_MUTATION_DURATIONS")
    if out and (_calls or _fixtures):
        Path(out).write_text(json.dumps({"tests": _calls, "fixtures": _fixtures}, indent=0, sort_keys=True),
                             encoding="utf-8")
