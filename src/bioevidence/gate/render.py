"""Batch output formats for ``bioevidence validate``: json, jsonl, text and markdown.

Each takes the batch results in input order (``bioevidence.gate.batch.Result``); a result whose
status is ``error`` could not be read and its ``error`` says why.

The human formats (text, markdown) give one summary line per record (status, place, record id,
each use's decision), then one entry per finding: its severity (``error`` and ``review`` decide;
``warning`` and ``note`` block nothing and say so), rule code, field path, message, and how to fix
it: the finding's exact ``fix`` when the check knows it, else the rule's remedy from the
catalogue. Markdown links a code to the rule docs only when the docs' address is absolute
(``rules_link``), so a report read outside this repository has no broken links.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Sequence

from ..errors import escape_text, excerpt, plural
from .batch import Result
from .findings import Finding, Fix, fix_sentence
from .rules import RULES

RULES_DOC = "docs/rules.md"
STATUS = {"admitted": "ADMITTED", "review_required": "REVIEW", "rejected": "REJECTED", "error": "ERROR"}
#: How a severity is labelled in the human formats; warnings and notes say they block nothing.
SEVERITY_LABELS = {"error": "error", "review": "review", "warning": "warning", "info": "note"}
VALUE_CHARS = 160


def where(result: Result) -> str:
    return result.file if result.line is None else f"{result.file}:{result.line}"


def counts(results: Sequence[Result]) -> Counter[str]:
    tally: Counter[str] = Counter({"admitted": 0, "review_required": 0, "rejected": 0, "error": 0})
    tally.update(r.status for r in results)
    return tally


def totals(results: Sequence[Result]) -> str:
    tally = counts(results)
    return (f"{plural(len(results), 'record')}: {tally['admitted']} admitted, {tally['review_required']} review "
            f"required, {tally['rejected']} rejected, {plural(tally['error'], 'input error')}")


#: what a grounder (by its name's prefix) checks, and the option that adds the three a user most
#: often leaves out; a report names the checks that ran and those that did not
CHECKED = {"literature": "quotes against pinned papers", "ontology": "ontology terms", "genes": "gene identifiers",
           "source-bytes": "source bytes", "tables": "table values", "variants": "variant coordinates",
           "reference": "a reference resource", "semantic-cues": "semantic cues", "direction": "quote direction"}
UNCHECKED = (("literature", "quotes against pinned papers", "--snapshot-dir"),
             ("ontology", "ontology terms", "--ontology or the profile's release"),
             ("genes", "gene identifiers", "--genes or the profile's release"))


def checks_line(results: Sequence[Result]) -> str:
    """``checked: …; not checked: …`` over the batch's reports (the union of the grounders that ran)."""
    reports = [r.report for r in results if r.report is not None]
    if not reports:
        return ""
    if all(r.grounding_off for r in reports):
        return "not checked: anything against sources (--no-grounding was asked for)"
    ran: dict[str, str] = {}
    for report in reports:
        for name in report.grounding or ():
            ran.setdefault(name.split(":", 1)[0], name)
    checked = [f"{CHECKED.get(kind, kind)} ({name})" if name != kind else CHECKED.get(kind, kind)
               for kind, name in ran.items() if kind != "source-bytes"]
    missing = [f"{what} ({flag})" for kind, what, flag in UNCHECKED if kind not in ran]
    parts = [f"checked: {', '.join(checked)}" if checked else "checked: the record's structure and profile only"]
    if missing:
        parts.append(f"not checked: {', '.join(missing)}")
    return "; ".join(parts)


def render_json(results: Sequence[Result]) -> str:
    if len(results) == 1:
        report = results[0].report
        if report is not None:
            return report.to_json() + "\n"
    return json.dumps([r.located() for r in results], indent=2, ensure_ascii=False) + "\n"


def render_jsonl(results: Sequence[Result]) -> str:
    return "".join(r.text + "\n" for r in results)


def _value(value: object) -> str:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(excerpt(v, VALUE_CHARS) for v in value)
    return excerpt(value, VALUE_CHARS)


def describe_fix(fix: Fix, message: str = "", finding_path: str | None = None) -> str:
    """A finding's machine-readable fix as one instruction (:func:`~.findings.fix_sentence`; values
    bounded for a report, its detail left out when the finding's ``message`` already says it)."""
    return fix_sentence(fix, finding_path or fix.field_path, message, value=_value)


#: rules whose every message already says what to do: their remedy is not repeated under it
INSTRUCTING = frozenset({"BEV029"})


def how_to_fix(finding: Finding) -> str:
    """The finding's exact fix when known, else what its rule says to do (nothing for a note, or
    for a rule whose message says it)."""
    if finding.fix is not None:
        return describe_fix(finding.fix, finding.message, finding.field_path)
    if finding.rule_id in INSTRUCTING:
        return ""
    rule = RULES.get(finding.rule_id)
    return rule.remedy if rule is not None and finding.severity != "info" else ""


def _uses_text(result: Result) -> str:
    report = result.report
    assert report is not None
    return " ".join(f"{d.use}={d.admission_status}" + (f"[{','.join(d.reason_codes)}]" if d.reason_codes else "")
                    for d in report.use_decisions)


def summary_line(result: Result) -> str:
    """The one line a record gets: status, place, record id and each use's decision."""
    report = result.report
    if report is None:
        return f"{STATUS['error']:<9} {where(result)}  {result.error.message if result.error else 'unreadable'}"
    return f"{STATUS[result.status]:<9} {where(result)}  {report.record_id or '-'}  {_uses_text(result)}".rstrip()


def _finding_lines(finding: Finding) -> list[str]:
    label = SEVERITY_LABELS.get(finding.severity, finding.severity)
    rule = RULES.get(finding.rule_id)
    # a use-scoped rule names the use it blocks; the others block every requested use
    uses = f" (use {', '.join(finding.blocking_uses)})" if rule is not None and rule.scope == "use" else ""
    lines = [f"  {label:<7} {finding.rule_id} at {finding.field_path}{uses}: {finding.message}"]
    fix = how_to_fix(finding)
    if fix:
        lines.append(f"          fix: {fix}")
    return lines


def render_text(results: Sequence[Result]) -> str:
    lines: list[str] = []
    for r in results:
        lines.append(summary_line(r))
        if r.report is not None:
            for finding in r.report.findings:
                lines.extend(_finding_lines(finding))
    lines.append(totals(results))
    if checked := checks_line(results):
        lines.append(checked)
    return "\n".join(escape_text(line) for line in lines) + "\n"  # record ids and file names are input


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell or list item: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    """Inline code that input cannot break out of (no backticks inside)."""
    return "`" + _cell(text).replace("`", "'") + "`"


def absolute_link(url: str | None) -> str | None:
    return url if url and "://" in url else None


def _rule_md(code: str, rules_link: str | None) -> str:
    return f"[{code}]({rules_link}#{code.lower()})" if rules_link else f"`{code}`"


def render_markdown(results: Sequence[Result], rules_link: str | None = None) -> str:
    """A summary table (one row per record), then each record's findings with message and fix.

    ``rules_link``: the absolute address of ``docs/rules.md``; codes are links only when it is
    given (a relative link breaks wherever the report is read outside this repository)."""
    link = absolute_link(rules_link)
    lines = ["| file | record | status | uses | reasons |", "|---|---|---|---|---|"]
    detailed: list[Result] = []
    for r in results:
        report = r.report
        if report is None:
            message = r.error.message if r.error else "unreadable"
            lines.append(f"| {_code(where(r))} | – | **input error** | – | {_cell(message)} |")
            continue
        uses = "<br>".join(_cell(f"{d.use}: {d.admission_status}") for d in report.use_decisions) or "–"
        reasons = ", ".join(_rule_md(c, link) for c in report.reason_codes()) or "–"
        record_id = _code(report.record_id) if report.record_id else "–"
        lines.append(f"| {_code(where(r))} | {record_id} | {r.status} | {uses} | {reasons} |")
        if report.findings:
            detailed.append(r)
    head, _, tail = totals(results).partition(":")
    lines += ["", f"**{head}**:{tail}."]
    if checked := checks_line(results):
        lines += ["", f"*{_cell(checked)}.*"]
    for r in detailed:
        report = r.report
        assert report is not None
        lines += ["", f"### {_code(where(r))}: {r.status.replace('_', ' ')}", ""]
        for f in report.findings:
            label = SEVERITY_LABELS.get(f.severity, f.severity)
            lines.append(f"- **{label}** {_rule_md(f.rule_id, link)} at {_code(f.field_path)}: {_cell(f.message)}")
            fix = how_to_fix(f)
            if fix:
                lines.append(f"  *Fix:* {_cell(fix)}")
    return "\n".join(escape_text(line) for line in lines) + "\n"  # record ids and file names are input


def batch_exit_code(results: Sequence[Result]) -> int:
    """3 if any input error, else 1 if any rejected, else 2 if any review, else 0."""
    return exit_code_of({r.status for r in results})


def exit_code_of(statuses: Collection[str]) -> int:
    """The batch exit code from the statuses that occurred (see :func:`batch_exit_code`)."""
    if "error" in statuses:
        return 3
    if "rejected" in statuses:
        return 1
    if "review_required" in statuses:
        return 2
    return 0
