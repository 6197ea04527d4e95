"""SARIF 2.1.0 output (``bioevidence validate --format sarif``) for code scanning.

One run whose driver lists every rule of the catalogue (id, name, short and full description,
``helpUri`` to its anchor in ``docs/rules.md``, default level: ``error`` for error rules,
``warning`` for review rules) plus ``INPUT_ERROR`` for files that could not be read. Each
finding becomes a result at the file and line of the field it names (``bioevidence.ci.lines``),
with the JSON path as its logical location and a stable fingerprint that does not move with
the line. No timestamps: the same batch gives the same bytes.

``helpUri`` must be an absolute URI; it is written when one is known (``rules_url``: the
argument, ``BIOEVIDENCE_RULES_URL`` or the GitHub runner's variables), else left out and
the rule's help text names ``docs/rules.md``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .._version import __version__
from ..gate.batch import Result
from ..gate.rules import CATALOGUE, Rule
from .lines import Locator, error_line
from .summary import rules_url as default_rules_url

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "review": "warning", "warning": "warning", "info": "note"}
INPUT_ERROR = Rule("INPUT_ERROR", "error", "all", "operational", "input",
                   "The file could not be read as a record (invalid JSON or YAML, bad encoding, too large).")
BASE_ID = "%SRCROOT%"


def _absolute(url: str | None) -> str | None:
    return url if url and "://" in url else None


def rule_descriptor(rule: Rule, rules_url: str | None) -> dict[str, Any]:
    doc = "docs/ci.md#input-errors" if rule is INPUT_ERROR else f"docs/rules.md#{rule.code.lower()}"
    out: dict[str, Any] = {
        "id": rule.code,
        "name": rule.code,
        "shortDescription": {"text": rule.message.split(". ")[0].rstrip(".") + "."},
        "fullDescription": {"text": rule.message},
        "help": {"text": f"{rule.message} Severity {rule.severity}, scope {rule.scope}, route {rule.route}, "
                         f"emitted by {rule.emitted_by}. See {doc}."},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"severity": rule.severity, "scope": rule.scope, "route": rule.route,
                       "emitted_by": rule.emitted_by, "tags": ["bioevidence", rule.route]},
    }
    base = _absolute(rules_url)
    if base is not None and rule is not INPUT_ERROR:
        out["helpUri"] = f"{base}#{rule.code.lower()}"
    return out


def _location(shown: str, line: int | None, field_path: str | None) -> dict[str, Any]:
    path = Path(shown)
    artifact = ({"uri": path.as_uri()} if path.is_absolute() else {"uri": quote(shown), "uriBaseId": BASE_ID})
    physical: dict[str, Any] = {"artifactLocation": artifact}
    if line is not None and line >= 1:
        physical["region"] = {"startLine": line}
    out: dict[str, Any] = {"physicalLocation": physical}
    if field_path:
        out["logicalLocations"] = [{"fullyQualifiedName": field_path, "kind": "member"}]
    return out


def _fingerprint(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()


def sarif_log(results: Sequence[Result], *, locator: Locator | None = None,
              rules_url: str | None = None) -> dict[str, Any]:
    """The SARIF log as a dict (see the module docstring)."""
    locator = locator or Locator(base=Path.cwd())
    url = rules_url if rules_url is not None else default_rules_url()
    rules = [*CATALOGUE, INPUT_ERROR]
    index = {r.code: i for i, r in enumerate(rules)}
    out: list[dict[str, Any]] = []
    for r in results:
        shown = locator.shown(r.file)
        report = r.report
        if report is None:
            message = r.error.message if r.error is not None else "the file could not be read"
            line = None if r.file in locator.sources else (r.line if r.line is not None else error_line(message))
            out.append({"ruleId": INPUT_ERROR.code, "ruleIndex": index[INPUT_ERROR.code], "level": "error",
                        "message": {"text": message}, "locations": [_location(shown, line, None)],
                        "partialFingerprints": {"bioevidence/v1": _fingerprint(shown, r.line, "INPUT_ERROR")}})
            continue
        for f in report.findings:
            blocks = f" Blocks: {', '.join(f.blocking_uses)}." if f.blocking_uses else ""
            result: dict[str, Any] = {
                "ruleId": f.rule_id,
                "level": LEVELS.get(f.severity, "warning"),
                "message": {"text": f"{f.message}{blocks}"},
                "locations": [_location(shown, locator.line(r.file, f.field_path, r.line), f.field_path)],
                "partialFingerprints": {"bioevidence/v1": _fingerprint(shown, r.line, report.record_id,
                                                                       f.rule_id, f.field_path, f.message)},
                "properties": {"record_id": report.record_id, "overall_status": report.overall_status,
                               "blocking_uses": list(f.blocking_uses)},
            }
            if f.rule_id in index:
                result["ruleIndex"] = index[f.rule_id]
            if f.fix is not None:
                result["properties"]["fix"] = f.fix.to_dict()
            out.append(result)
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "bioevidence",
            "version": __version__,
            "semanticVersion": __version__,
            "rules": [rule_descriptor(rule, url) for rule in rules],
        }},
        "originalUriBaseIds": {BASE_ID: {"uri": (locator.base or Path.cwd().resolve()).as_uri() + "/"}},
        "results": out,
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(results: Sequence[Result], *, locator: Locator | None = None,
                 rules_url: str | None = None) -> str:
    """``sarif_log`` as indented JSON text (what ``validate --format sarif`` prints)."""
    return json.dumps(sarif_log(results, locator=locator, rules_url=rules_url), indent=2, ensure_ascii=False) + "\n"
