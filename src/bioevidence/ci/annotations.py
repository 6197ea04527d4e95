"""GitHub workflow-command annotations for batch results.

One line per finding: ``::error file=records/a.json,line=12,title=BEV017::message`` for
findings of severity ``error`` and ``::warning`` for ``review`` findings, at the line of the
field the finding names, its exact fix, when known, on a second line (as the text report writes
it). A file that could not be read gets one ``::error`` titled ``input error`` at the line its
parser named. Values are escaped as the runner expects (``%``, CR and LF in messages; also ``:``
and ``,`` in properties)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..gate.batch import Result
from ..gate.render import how_to_fix
from .lines import Locator, error_line

LEVELS = {"error": "error", "review": "warning", "warning": "warning", "info": "notice"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, *, file: str | None = None, line: int | None = None,
            title: str | None = None) -> str:
    """One workflow command line, e.g. ``::warning file=a.json,line=3,title=BEV008::…``."""
    props = []
    if file is not None:
        props.append(f"file={escape_property(file)}")
    if line is not None:
        props.append(f"line={line}")
    if title is not None:
        props.append(f"title={escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return f"{head}::{escape_data(message)}"


def annotation_lines(results: Sequence[Result], locator: Locator | None = None) -> Iterator[str]:
    """The annotation lines for ``results``, in input order, errors and warnings interleaved."""
    locator = locator or Locator()
    for r in results:
        shown = locator.shown(r.file)
        report = r.report
        if report is None:
            message = r.error.message if r.error is not None else "the file could not be read"
            line = r.line if r.line is not None else error_line(message)
            if r.file in locator.sources:
                line = None
            yield command("error", message, file=shown, line=line, title="input error")
            continue
        record = f" (record {report.record_id})" if report.record_id and r.line is not None else ""
        for finding in report.findings:
            blocks = f"; blocks {', '.join(finding.blocking_uses)}" if finding.blocking_uses else ""
            message = f"{finding.message} [{finding.field_path}{blocks}]{record}"
            if finding.fix is not None:  # the exact fix (what SARIF carries as a property), as an instruction
                message += f"\nfix: {how_to_fix(finding)}"
            yield command(LEVELS.get(finding.severity, "warning"), message, file=shown,
                          line=locator.line(r.file, finding.field_path, r.line), title=finding.rule_id)
