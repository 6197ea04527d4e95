"""``bioevidence demo``: the whole loop offline on the bundled corpus (a thin shell over bioevidence.demo)."""

from __future__ import annotations

from pathlib import Path

import click

from .model import model_options, open_llm


@click.command()
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=Path("bioevidence-demo"),
              show_default=True, help="Folder for the index, the record, the review queue and report.html.")
@model_options("A model for the loop's proposer (OpenAI protocol); default: a scripted proposer.", timeout=False)
def demo(out: Path, model: str | None, base_url: str | None) -> None:
    """Run find → pin → check → fix offline on six bundled open-access papers.

    A question goes to the librarian; its ranked, verbatim sentences become an evidence record
    that the gate checks against the pinned papers; revise() sends a misquote's exact
    correction back to the proposer and routes what needs a person to the review queue; the
    whole run is written to OUT/report.html.

    \b
    Examples:
      bioevidence demo
      bioevidence demo --out /tmp/demo --model gemma-3-270m --base-url http://127.0.0.1:8080/v1
    """
    from ..demo import run_demo

    llm = open_llm(model, base_url)
    result = run_demo(out, llm=llm, echo=lambda line: click.echo(line, err=True))
    click.echo(f"report: {result.report}")
    click.echo(f"record: {result.record} ({result.status}); check it again with: bioevidence validate "
               f"{result.record} --snapshot-dir {result.folder / 'snapshots'}")
