"""A fix is exact: doing what it says makes its finding go away.

``revise()`` sends each fixable finding back to a model as its ``fix`` (docs/records.md: ``replace`` sets
the field to the value, ``choose`` picks one of the values). Over the policy corpus of tests/builders.py
(every use of every built-in profile, each with the faults the contracts and the integrity check answer
with a fix: a foreign profile_id, an unknown use, an unresolved source, repeated scope tokens, an
adjudication of another statement, scope and allowlist faults), every ``replace`` and ``choose`` fix is
applied here by a small JSON-path setter of this file's own, the record is validated again, and the
finding (same rule, field and message: two items' scope findings share their field) must be gone. An ``add`` fix for
missing evidence types must name exactly the types the message lists, at the field the finding names.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import Any

import pytest

from bioevidence import Validator
from builders import policy_corpus

_STEP = re.compile(r"\.([A-Za-z_][\w]*)|\[(\d+)\]")


def _steps(path: str) -> list[str | int]:
    assert path.startswith("$"), path
    rest, steps = path[1:], []
    while rest:
        match = _STEP.match(rest)
        assert match, f"not a plain JSON path: {path}"
        steps.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        rest = rest[match.end():]
    return steps


def _set(record: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(record)
    *parents, last = _steps(path)
    node: Any = out
    for step in parents:
        node = node[step]
    node[last] = value
    return out


def _get(record: dict[str, Any], path: str) -> Any:
    node: Any = record
    for step in _steps(path):
        node = node[step]
    return node


def _jobs() -> list[tuple[str, dict[str, Any]]]:
    return list(policy_corpus())


@pytest.fixture(scope="module")
def fixed() -> list[tuple[str, str, str, str, bool]]:
    """(rule, action, path, record excerpt, gone after the fix) for every replace/choose fix found."""
    validators: dict[str, Validator] = {}
    out = []
    for profile, rec in _jobs():
        validator = validators.setdefault(profile, Validator(profile, grounding=False))
        for finding in validator.validate(rec).findings:
            fix = finding.fix
            if finding.rule_id == "SCHEMA" or fix is None or fix.action not in ("replace", "choose"):
                continue
            value = fix.value
            if fix.action == "choose":
                assert isinstance(value, list) and value, (finding, fix)
                value = [value[0]] if isinstance(_get(rec, fix.field_path), list) else value[0]
            again = validator.validate(_set(rec, fix.field_path, value))
            # gone, and nothing new wrong at that field (a fix that writes null or junk is a SCHEMA error there)
            gone = not any((f.rule_id, f.field_path, f.message) == (finding.rule_id, finding.field_path,
                                                                    finding.message)
                           or (f.rule_id == "SCHEMA" and f.field_path.startswith(fix.field_path))
                           for f in again.findings)
            out.append((finding.rule_id, fix.action, fix.field_path, str(rec.get("record_id"))[:40], gone))
    return out


def test_every_replace_and_choose_fix_removes_its_finding(fixed: list[tuple[str, str, str, str, bool]]) -> None:
    failures = [row for row in fixed if not row[4]]
    assert failures == [], f"{len(failures)} of {len(fixed)} fixes leave their finding: {failures[:5]}"
    reached = Counter((rule, action) for rule, action, *_ in fixed)
    # the corpora reach the fixes of the integrity check and of the contracts that carry one
    assert {("RECORD_INTEGRITY", "replace"), ("RECORD_INTEGRITY", "choose"), ("BEV003", "choose"),
            ("BEV005", "replace")} <= set(reached), sorted(reached)
    paths = {path.split("[")[0] + path.rsplit("]", 1)[-1] if "[" in path else path for _, _, path, *_ in fixed}
    assert {"$.profile_id", "$.requested_uses", "$.evidence_items.source_artifact_id", "$.statement.scope",
            "$.evidence_items.scope", "$.adjudications.statement_id"} <= paths, sorted(paths)


def test_an_add_fix_names_the_missing_types_the_message_lists() -> None:
    seen = 0
    validators: dict[str, Validator] = {}
    for profile, rec in policy_corpus():
        validator = validators.setdefault(profile, Validator(profile, grounding=False))
        for finding in validator.validate(rec).findings:
            if finding.rule_id != "BEV007":
                continue
            seen += 1
            listed = finding.message.split(": ", 1)[1].split(", ")
            assert finding.fix is not None and finding.fix.action == "add"
            assert finding.fix.field_path == finding.field_path == "$.evidence_items"
            assert finding.fix.value == listed
            assert finding.fix.detail == "add supporting evidence items of these types"
    assert seen >= 5
