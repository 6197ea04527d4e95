"""Workflow-command escaping, the annotation cap notice, and the job summary's size limit."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

from bioevidence.ci.action import ActionInputs, run_gate
from bioevidence.ci.annotations import annotation_lines, command, escape_data, escape_property
from bioevidence.ci.lines import Locator
from bioevidence.ci.summary import cell, render_summary
from bioevidence.gate.batch import run
from bioevidence.gate.inputs import iter_jobs
from bioevidence.gate.validator import Validator

FIXTURES = Path(__file__).parent / "fixtures" / "records"


@pytest.mark.parametrize(("value", "data", "prop"), [
    pytest.param("50% done", "50%25 done", "50%25 done", id="percent"),
    pytest.param("a\r\nb", "a%0D%0Ab", "a%0D%0Ab", id="newlines"),
    pytest.param("x: 1, y", "x: 1, y", "x%3A 1%2C y", id="colon-comma"),
])
def test_values_are_escaped_as_the_runner_expects(value: str, data: str, prop: str) -> None:
    assert escape_data(value) == data
    assert escape_property(value) == prop


def test_a_command_without_properties_has_no_space() -> None:
    assert command("notice", "hello") == "::notice::hello"
    expected = "::error file=a%2Cb.json,line=3,title=T%3A1::m"
    assert command("error", "m", file="a,b.json", line=3, title="T:1") == expected


def test_annotations_follow_input_order_with_severity_levels(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "records")
    results = run(list(iter_jobs([tmp_path / "records"])), Validator())
    lines = list(annotation_lines(results, Locator(base=tmp_path)))
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::error", "::error", "::warning"]
    assert [line.split("title=", 1)[1].split("::", 1)[0] for line in lines] == [
        "input error", "SCHEMA", "RECORD_INTEGRITY", "BEV012"]


def test_more_annotations_than_github_shows_add_a_notice(tmp_path: Path) -> None:
    folder = tmp_path / "records"
    folder.mkdir()
    for n in range(11):
        shutil.copy(FIXTURES / "review.json", folder / f"review-{n:02d}.json")
    out = io.StringIO()
    code = run_gate(ActionInputs(files="records", fail_on="rejected"), cwd=tmp_path, env={}, out=out)
    lines = out.getvalue().splitlines()
    assert code == 0
    assert sum(line.startswith("::warning ") for line in lines) == 11
    assert lines[-2] == ("::notice title=bioevidence%3A more findings::0 error and 11 warning annotations; GitHub "
                         "shows 10 of each kind per step: the job summary and the SARIF file list them all")


def test_summary_cells_survive_pipes_and_newlines() -> None:
    assert cell("a | b\nc") == "a \\| b c"


def test_a_summary_too_large_for_github_drops_admitted_rows_then_findings_then_rows(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "records")
    results = run(list(iter_jobs([tmp_path / "records"])), Validator())
    locator = Locator(base=tmp_path)
    full = render_summary(results, locator)
    assert "records/admitted.json" in full and "### Findings" in full
    size = len(full.encode("utf-8"))
    smaller = render_summary(results, locator, max_bytes=size - 1)
    assert "records/admitted.json" not in smaller and "### Findings" in smaller
    assert "only records not admitted are listed._" in smaller
    no_details = render_summary(results, locator, max_bytes=len(smaller.encode("utf-8")) - 1)
    assert "### Findings" not in no_details and "their findings are in the report" in no_details
    cut = render_summary(results, locator, max_bytes=len(no_details.encode("utf-8")) - 1)
    assert len(cut.encode("utf-8")) < len(no_details.encode("utf-8"))
    assert "Rows cut to fit" in cut and cut.startswith("## bioevidence gate: ❌ failed")


def test_each_annotation_carries_its_fix_as_an_instruction(tmp_path: Path) -> None:
    """Issue 24 item 12: the annotation on the failing line says what to do, not only SARIF properties."""
    shutil.copytree(FIXTURES, tmp_path / "records")
    results = run(list(iter_jobs([tmp_path / "records"])), Validator())
    lines = list(annotation_lines(results, Locator(base=tmp_path)))
    findings = [f for r in results if r.report is not None for f in r.report.findings]
    assert [("%0Afix: " in line) for line in lines[1:]] == [f.fix is not None for f in findings]
    schema = next(line for line in lines if "title=SCHEMA" in line)
    message, fix = schema.split("::", 2)[2].split("%0Afix: ")
    assert re.match(r"set the [a-z ]+ to one of: \"", fix) and fix not in message, fix
