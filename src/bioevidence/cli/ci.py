"""``bioevidence ci``: the steps of the GitHub Action (``action.yml``), runnable anywhere.

Each option also reads the ``INPUT_*`` variable the action sets from its input of the same name,
so the action calls ``bioevidence ci run`` with no arguments and no input is interpolated into
shell code.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from ..errors import ConfigurationError


@click.group()
def ci() -> None:
    """Steps of the GitHub Action: gate globs of record files and report to the runner.

    \b
    Examples:
      bioevidence ci run --files 'records/**/*.json records/**/*.yaml' --fail-on rejected
      INPUT_FILES='records/**' bioevidence ci run
    """


@ci.command("run")
@click.option("--files", envvar="INPUT_FILES", metavar="GLOBS",
              help="Whitespace-separated globs ('**' recursive; folders searched; '!glob' excludes). [INPUT_FILES]")
@click.option("--profile", envvar="INPUT_PROFILE", metavar="NAME|FILE",
              help="Profile for every record (default: each record's profile_id). [INPUT_PROFILE]")
@click.option("--format", "fmt", envvar="INPUT_FORMAT", default="record", show_default=True,
              help="record, or draft (each built with `bioevidence build` first). [INPUT_FORMAT]")
@click.option("--fail-on", envvar="INPUT_FAIL_ON", default="review", show_default=True,
              help="review: fail unless all admitted; rejected: fail only on rejected or input errors. [INPUT_FAIL_ON]")
@click.option("--snapshot-dir", envvar="INPUT_SNAPSHOT_DIR", type=click.Path(file_okay=False),
              help="Pinned snapshot folder. [INPUT_SNAPSHOT_DIR]")
@click.option("--ontology", envvar="INPUT_ONTOLOGY", help="OBO releases, whitespace-separated. [INPUT_ONTOLOGY]")
@click.option("--term-root", envvar="INPUT_TERM_ROOT", help="KIND=CURIE roots, whitespace-separated. [INPUT_TERM_ROOT]")
@click.option("--genes", envvar="INPUT_GENES", help="HGNC complete-set files, whitespace-separated. [INPUT_GENES]")
@click.option("--tables", envvar="INPUT_TABLES", help="Evidence types checked against pinned tables. [INPUT_TABLES]")
@click.option("--output-dir", envvar="INPUT_OUTPUT_DIR", type=click.Path(file_okay=False),
              help="Folder for report.jsonl and report.sarif (default: a new folder in $RUNNER_TEMP).")
@click.option("--no-grounding", envvar="INPUT_NO_GROUNDING", default="false", show_default=True,
              help="true: accept quotes from papers unchecked, as bioai-evidence-validator 0.8.0 did (else they "
                   "need snapshot-dir, or go to review, BEV029). [INPUT_NO_GROUNDING]")
def run(files: str | None, profile: str | None, fmt: str, fail_on: str, snapshot_dir: str | None,
        ontology: str | None, term_root: str | None, genes: str | None, tables: str | None,
        output_dir: str | None, no_grounding: str) -> None:
    """Validate the matching files in one process and report to GitHub (annotations, summary, outputs).

    Exit code: 0 when the batch passes under --fail-on, else the batch code (1 rejected, 2 review
    required, 3 input error); 3 also when no file matches or an input is wrong.

    \b
    Examples:
      bioevidence ci run --files 'records/**/*.json' --profile literature-claim --snapshot-dir snapshots/
      INPUT_FILES='examples/records/*.json' INPUT_FAIL_ON=rejected bioevidence ci run
    """
    from ..ci.action import ActionInputs, run_gate

    inputs = ActionInputs(files=files or "", profile=profile or None, format=(fmt or "record").strip(),
                          fail_on=(fail_on or "review").strip(), snapshot_dir=snapshot_dir or None,
                          ontology=ontology, term_root=term_root, genes=genes, tables=tables,
                          output_dir=output_dir or None, no_grounding=_flag(no_grounding, "no-grounding"))
    code = run_gate(inputs, cwd=Path.cwd(), env=os.environ, out=sys.stdout)
    sys.stdout.flush()
    sys.exit(code)


def _flag(value: str | None, name: str) -> bool:
    """An action input that is ``true`` or ``false`` (YAML spelling); anything else is a usage error."""
    text = (value or "false").strip().lower()
    if text not in ("true", "false"):
        raise ConfigurationError(f"{name} must be true or false, not {value!r}")
    return text == "true"
