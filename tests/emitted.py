"""The rule ids the suite's reports carried, shared by tests/conftest.py (which records them) and
tests/gate/test_rules.py (which checks every catalogue code is among them). Imported by name (tests/
is on sys.path) so both see the one set."""

from __future__ import annotations

EMITTED: set[str] = set()
