"""Shared test fixtures.

Real-data tests read ``../shared/data`` (or ``$BIOEVIDENCE_SHARED_DATA``). When that folder is
absent (a user's clone) they skip with a clear message; under CI (``CI=true``) a missing folder
is a failure, never a skip.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Test helper modules (builders, loopback) live in tests/ and are imported by name.
sys.path.insert(0, str(Path(__file__).resolve().parent))


def shared_data_dir() -> Path:
    env = os.environ.get("BIOEVIDENCE_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def skip_message(path: Path) -> str:
    """Why a real-data test skips, and how a contributor gets to run it."""
    return (f"real test data absent at {path}: put the project's shared data folder beside the clone "
            "(../shared/data) or set BIOEVIDENCE_SHARED_DATA=/path/to/data; its MANIFEST.tsv files name every "
            "file's source and sha256, and `python3 tools/test_data.py verify DIR` checks a copy")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of the real public data folder; skips (or fails under CI) when it is absent."""
    path = shared_data_dir()
    if not path.is_dir():
        message = skip_message(path)
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


# -- which rule codes the suite's runs emit ----------------------------------------------------------
# Rule ids of every finding of every report a test produced in this process (through
# ``Validator.validate``, which the CLI, batches, the loop and the Action all call), in ``emitted.EMITTED``.
# Read by ``tests/gate/test_rules.py::test_every_catalogue_code_is_emitted_by_some_test``, run last.
LAST = "test_every_catalogue_code_is_emitted_by_some_test"


@pytest.fixture(autouse=True, scope="session")
def _record_emitted_codes() -> object:
    """Observe (never change) every report: the validator runs as is, its findings' codes are noted."""
    from bioevidence.gate.validator import Validator
    from emitted import EMITTED

    original = Validator.validate

    def validate(self: Validator, *args: object, **kwargs: object) -> object:
        report = original(self, *args, **kwargs)  # type: ignore[arg-type]
        EMITTED.update(f.rule_id for f in report.findings)
        return report

    Validator.validate = validate  # type: ignore[method-assign,assignment]
    yield
    Validator.validate = original  # type: ignore[method-assign]


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """The emitted-codes check runs after every other test of the session. Under pytest-xdist no
    worker sees every report, so the workers drop that test and the controller runs its check over the
    merged codes instead (:func:`pytest_sessionfinish`): a missing code still fails the run."""
    if hasattr(config, "workerinput"):
        dropped = [item for item in items if item.name == LAST]
        if dropped:
            items[:] = [item for item in items if item.name != LAST]
            config.hook.pytest_deselected(items=dropped)
    items.sort(key=lambda item: (item.name == LAST, -_seconds(item)))


def _seconds(item: pytest.Item) -> float:
    """How long the item's file takes (its ``heavy`` mark), so the longest files start first."""
    mark = item.get_closest_marker("heavy")
    return float(mark.kwargs.get("seconds", 60)) if mark is not None else 0.0


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """xdist controller: merge the codes a finished worker's reports carried."""
    from emitted import EMITTED

    EMITTED.update(getattr(node, "workeroutput", {}).get("emitted", []))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """xdist worker: hand its codes to the controller. xdist controller: the emitted-codes check."""
    from emitted import EMITTED, missing

    config = session.config
    if hasattr(config, "workeroutput"):
        config.workeroutput["emitted"] = sorted(EMITTED)
        return
    if getattr(config.option, "numprocesses", None) and whole_suite(config) and exitstatus in (0, 1):
        absent = missing(EMITTED)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        where = f"{LAST} (run by the xdist controller over every worker's reports)"
        if absent:
            line = f"{where} FAILED: no test run emitted {absent}: add a test whose record gets these findings"
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        else:
            line = f"{where} passed: {len(EMITTED)} distinct codes emitted, every catalogue code among them"
        if reporter is not None:
            reporter.write_line(line, red=bool(absent), green=not absent)


def whole_suite(config: pytest.Config) -> bool:
    """Whether this session runs the whole suite (deselecting single tests is allowed), not a part of it."""
    tests = Path(__file__).resolve().parent
    args = [Path(str(a).split("::")[0]).resolve() for a in config.args]
    return args in ([tests], [tests.parent]) and not config.option.keyword and not config.option.markexpr
