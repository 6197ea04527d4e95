"""The job summary: Markdown a reviewer reads at a glance (``$GITHUB_STEP_SUMMARY``).

A headline with the verdict and the totals, one table row per record (file, record id, status,
each use's decision with its reason codes), then the findings of every record that was not
admitted, each at its line, with codes linked to the rule catalogue (``docs/rules.md``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ..errors import plural
from ..gate.batch import Result
from ..gate.render import counts
from .lines import Locator, error_line

RULES_DOC = "docs/rules.md"
STATUS = {"admitted": "✅ admitted", "review_required": "🟡 review required", "rejected": "❌ rejected",
          "error": "⛔ input error"}


def rules_url(env: Mapping[str, str] | None = None) -> str:
    """Where ``docs/rules.md`` of the running revision lives (absolute on GitHub, else relative).

    ``BIOEVIDENCE_RULES_URL`` wins; then the action's own repository and ref (from the runner's
    variables, or from the action path ``…/_actions/OWNER/REPO/REF``); then the workflow's
    repository at its commit (an action used from its own repository, ``uses: ./``).
    """
    env = os.environ if env is None else env
    if env.get("BIOEVIDENCE_RULES_URL"):
        return env["BIOEVIDENCE_RULES_URL"]
    server = (env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    repo, ref = env.get("GITHUB_ACTION_REPOSITORY"), env.get("GITHUB_ACTION_REF")
    if not (repo and ref):
        parts = (env.get("BIOEVIDENCE_ACTION_PATH") or "").replace("\\", "/").rstrip("/").split("/")
        if len(parts) >= 4 and parts[-4] == "_actions":
            repo, ref = f"{parts[-3]}/{parts[-2]}", parts[-1]
    if not (repo and ref) and env.get("GITHUB_REPOSITORY") and env.get("GITHUB_SHA"):
        repo, ref = env["GITHUB_REPOSITORY"], env["GITHUB_SHA"]
    if repo and ref:
        return f"{server}/{repo}/blob/{ref}/{RULES_DOC}"
    return RULES_DOC


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def code_link(code: str, url: str) -> str:
    return f"[{code}]({url}#{code.lower()})"


def _uses(result: Result, url: str) -> str:
    report = result.report
    if report is None:
        return "–"
    parts = []
    for d in report.use_decisions:
        codes = f" ({', '.join(code_link(c, url) for c in d.reason_codes)})" if d.reason_codes else ""
        parts.append(f"`{d.use}`: {d.admission_status}{codes}")
    return "<br>".join(parts) or "–"


MAX_BYTES = 1_000_000  # GitHub refuses a step summary over 1 MiB


def render_summary(results: Sequence[Result], locator: Locator | None = None, *, url: str = RULES_DOC,
                   fail_on: str = "review", failed: bool | None = None, max_bytes: int = MAX_BYTES) -> str:
    """The Markdown summary of one gate run, kept under ``max_bytes``.

    When the full summary is too large, admitted records and then the findings tables are left
    out (the headline says so and points at the report), and as a last resort the rows are cut.
    """
    locator = locator or Locator()
    text = _summary(results, locator, url, fail_on, failed, rows="all", details=True)
    for rows, details in (("not-admitted", True), ("not-admitted", False)):
        if len(text.encode("utf-8")) <= max_bytes:
            return text
        text = _summary(results, locator, url, fail_on, failed, rows=rows, details=details)
    while len(text.encode("utf-8")) > max_bytes and text.count("\n") > 8:
        lines = text.split("\n")
        text = "\n".join([*lines[:len(lines) * 3 // 4], "", "_Rows cut to fit GitHub's summary limit._", ""])
    return text


def _summary(results: Sequence[Result], locator: Locator, url: str, fail_on: str, failed: bool | None, *,
             rows: str, details: bool) -> str:
    tally = counts(results)
    if failed is None:
        failed = bool(tally["error"] or tally["rejected"] or (fail_on == "review" and tally["review_required"]))
    verdict = "❌ failed" if failed else "✅ passed"
    lines = [
        f"## bioevidence gate: {verdict}",
        "",
        f"**{len(results)} records**: {tally['admitted']} admitted, {tally['review_required']} review required, "
        f"{tally['rejected']} rejected, {tally['error']} input errors (fail-on: `{fail_on}`).",
        "",
        "| file | record | status | uses (reason codes) |",
        "|---|---|---|---|",
    ]
    if rows != "all":
        cut = "only records not admitted are listed" + ("" if details else "; their findings are in the report")
        lines[3:3] = [f"_Shortened to fit GitHub's summary limit: {cut}._", ""]
    for r in results:
        if rows != "all" and r.status == "admitted":
            continue
        where = locator.shown(r.file) + (f":{r.line}" if r.line is not None else "")
        report = r.report
        record = cell(report.record_id) if report is not None and report.record_id else "–"
        lines.append(f"| `{cell(where)}` | {record} | {STATUS.get(r.status, r.status)} | {_uses(r, url)} |")
    blocks = [_details(r, locator, url) for r in results if r.status != "admitted"] if details else []
    if blocks:
        lines += ["", "### Findings", "", *blocks]
    lines += ["", f"Reason codes are explained in [the rule catalogue]({url})."]
    return "\n".join(lines) + "\n"


def _details(r: Result, locator: Locator, url: str) -> str:
    shown = locator.shown(r.file)
    report = r.report
    if report is None:
        message = r.error.message if r.error is not None else "the file could not be read"
        line = r.line if r.line is not None else error_line(message)
        at = f" line {line}" if line is not None and r.file not in locator.sources else ""
        return f"- `{cell(shown)}`{at}: **input error**: {cell(message)}\n"
    rows = [f"<details><summary><code>{cell(shown)}</code> {report.record_id or ''}: "
            f"{plural(len(report.findings), 'finding')}</summary>", "",
            "| line | code | severity | field | blocks | message |", "|---|---|---|---|---|---|"]
    for f in report.findings:
        line = locator.line(r.file, f.field_path, r.line)
        rows.append(f"| {line if line is not None else '–'} | {code_link(f.rule_id, url)} | {f.severity} "
                    f"| `{cell(f.field_path)}` | {cell(', '.join(f.blocking_uses)) or '–'} "
                    f"| {cell(f.message)} |")
    rows += ["", "</details>", ""]
    return "\n".join(rows)
