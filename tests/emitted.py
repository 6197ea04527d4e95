"""The rule ids the suite's reports carried, shared by tests/conftest.py (which records them) and
tests/gate/test_rules.py (which checks every catalogue code is among them). Imported by name (tests/
is on sys.path) so both see the one set.

Under pytest-xdist each worker process has its own set: the workers hand theirs to the controller
(``workeroutput``), which merges them and runs the same check (:func:`missing`) once every worker is
done (tests/conftest.py)."""

from __future__ import annotations

EMITTED: set[str] = set()


def missing(emitted: set[str]) -> list[str]:
    """Catalogue codes that some test should have emitted but none did (reserved codes excepted)."""
    from bioevidence.gate.rules import CATALOGUE

    emitters = [r for r in CATALOGUE if "built in" not in r.emitted_by]  # BEV018/BEV026: reserved, no emitter here
    return [r.code for r in emitters if r.code not in emitted]
