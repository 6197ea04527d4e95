"""The human formats of ``validate`` (text, markdown) say, per finding, what is wrong and how to fix it,
warnings and notes included and marked as blocking nothing, with one summary line per record
(issue 13, item 1). Run over the real CIViC corpus, so BEV030, BEV031 and BEV029 come from real checks."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.gate.grounders.config import GrounderOptions, build_grounders
from builders import claim_record, record


@pytest.fixture(scope="module")
def records(papers: dict[str, dict[str, Any]], corpus_dir: Path, cache_dir: Path) -> dict[str, dict[str, Any]]:
    """A quote at the wrong locator (BEV030), one from the reference list (BEV031), a misquote (BEV017),
    and a record with a schema error, all from the first good paper of the corpus."""
    from bioevidence.gate.grounders.literature import LiteratureGrounder

    grounders = build_grounders(GrounderOptions(snapshot_dir=corpus_dir, cache_root=cache_dir))
    literature = next(g for g in grounders if isinstance(g, LiteratureGrounder))
    pmid = sorted(p for p, v in papers.items() if not v["retracted"])[0]
    paper, work = papers[pmid], literature.catalogue.get(f"pmid:{pmid}")
    parsed = literature.paper(work, literature.metadata(work))
    assert parsed is not None
    body = next(p for p in parsed.passages if p.part == "body" and len(p.text.split()) > 15)
    sentence = re.split(r"(?<=[a-z0-9]\.) (?=[A-Z])", body.text)[0]
    ref = next(p for p in parsed.passages if p.part == "references" and p.cited
               and len(p.text[p.cited[0]:p.cited[1]].split()) >= 6)
    slip = claim_record(0, pmid, paper["sha"], paper["title"], sentence)
    slip["evidence_items"][0]["locator"] = "abstract"
    note = claim_record(1, pmid, paper["sha"], paper["title"], ref.text[ref.cited[0]:ref.cited[1]])
    words = sentence.split()
    wrong = claim_record(2, pmid, paper["sha"], paper["title"],
                         " ".join([*words[:3], "never", *words[4:]]))
    broken = copy.deepcopy(slip)
    broken["record_id"] = "civic:schema"
    broken["source_artifacts"][0]["source_type"] = "paper"
    return {"slip": slip, "note": note, "wrong": wrong, "broken": broken}


def _validate(tmp_path: Path, recs: dict[str, dict[str, Any]], *args: str) -> Any:
    folder = tmp_path / "records"
    folder.mkdir(exist_ok=True)
    for name, rec in recs.items():
        (folder / f"{name}.json").write_text(json.dumps(rec), encoding="utf-8")
    return CliRunner().invoke(cli, ["validate", str(folder), *args],
                              env={"BIOEVIDENCE_STORE": "", "BIOEVIDENCE_HOME": str(tmp_path),
                                   "BIOEVIDENCE_RULES_URL": ""})


def test_text_gives_one_summary_line_per_record_then_each_finding_with_its_fix(
        records: dict[str, dict[str, Any]], corpus_dir: Path, tmp_path: Path) -> None:
    result = _validate(tmp_path, records, "--snapshot-dir", str(corpus_dir), "--format", "text")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    summaries = [line for line in lines if not line.startswith(" ")]
    assert len(summaries) == len(records) + 2 and summaries[-2].startswith("4 records:")
    assert summaries[-1].startswith("checked: quotes against pinned papers (literature:")  # what ran, what did not
    text = result.stdout
    # the warning and the note are shown, marked, on records that are still admitted
    slip = text.split("slip.json", 1)[1].split("\n", 1)[1]
    assert next(s for s in summaries if "slip.json" in s).startswith("ADMITTED")
    assert re.search(r"^  warning BEV030 at \$\.evidence_items\[0\]\.locator.*\n\s+fix: .+", slip, re.M)
    assert re.search(r"^  note    BEV031 at .+: .*reference list", text, re.M)
    # the misquote says what the paper says and how to fix it
    misquote = re.search(r"^  error   BEV017 at (\S+): (.+)\n\s+fix: (.+)$", text, re.M)
    assert misquote is not None and "never" in misquote.group(2)
    assert misquote.group(3).startswith('quote the passage verbatim: "') and misquote.group(2) not in misquote.group(3)
    # a schema error names the allowed values and the fix, not a bare [SCHEMA]
    schema = re.search(r"^  error   SCHEMA at \$\.source_artifacts\[0\]\.source_type: (.+)\n\s+fix: (.+)$", text,
                       re.M)
    assert schema is not None and "publication" in schema.group(1) and "other candidates" not in schema.group(1)
    assert schema.group(2).startswith("set the source type to one of: ") and "publication" in schema.group(2)


def test_markdown_lists_every_finding_with_message_and_fix_and_links_nothing_relative(
        records: dict[str, dict[str, Any]], corpus_dir: Path, tmp_path: Path) -> None:
    result = _validate(tmp_path, records, "--snapshot-dir", str(corpus_dir), "--format", "markdown")
    text = result.stdout
    assert "](" not in text  # no address known: no links (a relative one breaks outside the repository)
    assert re.search(r"^- \*\*warning\*\* `BEV030` at `\$\.evidence_items\[0\]\.locator`: .+\n  \*Fix:\* .+", text,
                     re.M)
    assert re.search(r"^- \*\*note\*\* `BEV031` at ", text, re.M)
    assert re.search(r"^- \*\*error\*\* `SCHEMA` at `\$\.source_artifacts\[0\]\.source_type`: .*allowed: .*"
                     r"publication", text, re.M)
    assert sum(line.startswith("| `") for line in text.splitlines()) == len(records)  # one table row per record


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_unchecked_quotes_read_as_plain_sentences_with_the_fix(
        records: dict[str, dict[str, Any]], tmp_path: Path, fmt: str) -> None:
    """BEV029 without any literature source: the message and the fix are sentences, no stray Markdown."""
    result = _validate(tmp_path, {"slip": records["slip"]}, "--format", fmt)
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.stdout.splitlines() if re.search(r"BEV029`? at ", x)]
    assert "1 quote was not checked against its paper: no literature source was given" in line
    assert "`bioevidence" not in result.stdout
    # the instruction is said once, in the finding's own line (issue 24 item 12), not repeated as a remedy
    assert "bioevidence ground" in line and "--snapshot-dir" in line and "--no-grounding" in line
    assert result.stdout.count("bioevidence ground") == 1


def test_admitted_records_without_findings_are_one_line(tmp_path: Path) -> None:
    result = _validate(tmp_path, {"ok": record()}, "--format", "text")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("ADMITTED") and len(lines) == 3  # the record, the totals, what was checked
    assert lines[1] == "1 record: 1 admitted, 0 review required, 0 rejected, 0 input errors"
    assert lines[2].startswith("checked: the record's structure and profile only; not checked: ")
