"""``bioevidence kb build | merge | list | stats | ask`` and ``bioevidence kg2bib``: thin shells over
:mod:`bioevidence.librarian.kb` and :mod:`bioevidence.librarian.kg2bib`.

Without the ``kb`` extra (numpy, onnxruntime, the model package, bibtexparser) every
``kb`` command prints one line naming ``pip install 'bioevidence[kb]'`` and exits 3.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigurationError, escape_text, llm_json, plural
from .cluster import scheduler_option
from .model import model_options, open_llm


def _require(what: str, *, model: bool = True) -> None:
    import importlib.util

    from ..librarian.dense import KB_EXTRA, require_kb_extra

    if importlib.util.find_spec("bibtexparser") is None:
        raise ConfigurationError(f"{what} needs the kb extra (bibtexparser is not installed): {KB_EXTRA}")
    if model:
        require_kb_extra(what)


def encode_index(index_dir: Path, scheduler: str | None, *, model: str | None = None) -> dict[str, Any]:
    """``index build --dense``: encode the index's chunks with a progress bar on a terminal."""
    from ..librarian.dense import DEFAULT_MODEL
    from ..librarian.kb.vectors import build_dense

    model = model or DEFAULT_MODEL
    with _bar("encoding chunks") as advance:
        stats = build_dense(index_dir, scheduler=scheduler, progress=advance, model=model)
    return {"model": model, "chunks": stats.chunks, "encoded": stats.encoded, "seconds": round(stats.seconds, 2),
            "chunks_per_s": round(stats.chunks_per_s, 1)}


@contextmanager
def _bar(label: str) -> Iterator[Callable[[int, int], None] | None]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _line(record: Any) -> str:
    why = record.why()
    line = f"{record.key}: {record.tier} via {record.via}" + (f" (better tiers: {why})" if why and
                                                              record.tier != "fulltext" else "")
    if record.format == "text":  # a local text or PDF: citable only with its paper's resolver record
        meta = [a for a in record.attempts if a.tier == "metadata"]
        ok = next((a for a in meta if a.ok), None)
        line += (f"; citable as {record.work} (resolver record via {ok.via})" if ok and record.work else
                 f"; searched, not citable: {meta[-1].reason}" if meta else "")
    return line


def _reporter(quiet: bool) -> tuple[Callable[[dict[str, Any]], None], Callable[[], None]]:
    """Per-entry lines on stderr, and a rich progress bar for entries and encoding on a terminal."""
    from rich.console import Console

    console = Console(stderr=True, highlight=False)
    state: dict[str, Any] = {}
    if console.is_terminal:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console,
                       transient=True)
        bar.start()
        state["bar"] = bar

    def emit(event: dict[str, Any]) -> None:
        bar = state.get("bar")
        kind = event["event"]
        if kind == "entry":
            rec = event["record"]
            if not quiet:
                prefix = "resumed " if event["resumed"] else ""
                (bar.console if bar else console).print(
                    escape_text(f"[{event['n']}/{event['total']}] {prefix}{_line(rec)}"), markup=False)
            if bar is not None:
                if "entries" not in state:
                    state["entries"] = bar.add_task("entries", total=event["total"])
                bar.update(state["entries"], completed=event["n"])
        elif kind == "unparsable":
            console.print(escape_text(f"{event['file']}:{event['line']}: skipped, not BibTeX: {event['reason']}"),
                          markup=False)
        elif kind == "encode" and bar is not None:
            if "encode" not in state:
                state["encode"] = bar.add_task("encoding chunks", total=event["total"])
            bar.update(state["encode"], completed=event["done"], total=event["total"])

    def stop() -> None:
        if "bar" in state:
            state["bar"].stop()

    return emit, stop


@click.group()
def kb() -> None:
    """Knowledge bases over your own bibliography (needs pip install 'bioevidence[kb]')."""


@kb.command("build")
@click.argument("bibliographies", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False,
                                                                           path_type=Path))
@click.option("--kb", "kb_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Knowledge base folder (created; an existing one gets the new entries).")
@click.option("--snapshot-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Already pinned works (literature.json), used first and without network.")
@click.option("--offline", is_flag=True, help="No network at all: entries not pinned stop at abstract/metadata.")
@click.option("--resolver", type=click.Choice(["europepmc", "ncbi"]), default="europepmc", show_default=True)
@click.option("--files-root", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The folder the entries' `file` fields may name files in (default: each .bib's own folder; "
                   "e.g. ~/Zotero/storage). Files elsewhere are refused.")
@click.option("--quiet", is_flag=True, help="No per-entry lines.")
@scheduler_option
def build(bibliographies: tuple[Path, ...], kb_dir: Path, snapshot_dir: Path | None, offline: bool, resolver: str,
          files_root: Path | None, quiet: bool, scheduler: str | None) -> None:
    """Build a knowledge base from BIBLIOGRAPHY... (.bib files, or text files of PMIDs/PMCIDs/DOIs).

    Per entry: full text from a local file named in the entry, else the pinned work in
    --snapshot-dir, else Europe PMC / PMC open full text, else the abstract, else metadata only;
    every tier pinned by SHA-256 in KB/snapshots. An interrupted build resumes where it stopped.
    --scheduler encodes the chunks on Dask workers (each loads the model once; docs/scale.md).

    \b
    Examples:
      bioevidence kb build refs.bib --kb mykb/
      bioevidence kb build refs.bib --kb mykb/ --snapshot-dir snapshots/   # pinned works first, no network
      bioevidence kb build pmids.txt --kb mykb/ --offline
      bioevidence kb build refs.bib --kb mykb/ --scheduler local:2
      bioevidence kb build zotero.bib --kb mykb/ --files-root ~/Zotero/storage   # PDFs Zotero keeps elsewhere
    """
    from ..librarian.kb.build import build_kb

    _require("kb build")
    emit, stop = _reporter(quiet)
    try:
        report = build_kb(list(bibliographies), kb_dir, snapshot_dir=snapshot_dir, offline=offline,
                          resolver=resolver, scheduler=scheduler, progress=emit, files_root=files_root)
    finally:
        stop()
    click.echo(json.dumps(report.to_json()))


@kb.command("merge")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--kb", "kb_dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@scheduler_option
def merge(sources: tuple[Path, ...], kb_dir: Path, scheduler: str | None) -> None:
    """Merge knowledge bases SOURCE... into --kb (pinned bytes copied, vectors reused).

    \b
    Examples:
      bioevidence kb merge kbA/ kbB/ --kb both/
    """
    from ..librarian.kb.build import merge_kbs

    _require("kb merge")
    click.echo(json.dumps(merge_kbs(list(sources), kb_dir, scheduler=scheduler).to_json()))


@kb.command("list")
@click.option("--kb", "kb_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON line per entry.")
def list_(kb_dir: Path, as_json: bool) -> None:
    """The entries of a knowledge base: tier, route, pinned hash, title.

    \b
    Examples:
      bioevidence kb list --kb mykb/
      bioevidence kb list --kb mykb/ --json   # with every failed tier and why
    """
    from ..librarian.kb.layout import KnowledgeBase

    for rec in KnowledgeBase(kb_dir).require():
        if as_json:
            click.echo(llm_json(rec.to_json()))
        else:
            click.echo(escape_text(f"{rec.tier:<9} {rec.via:<10} {rec.sha256[:12]}  {rec.key}  {rec.title[:70]}"))


@kb.command("stats")
@click.option("--kb", "kb_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object (for scripts).")
def stats(kb_dir: Path, as_json: bool) -> None:
    """Counts by tier and route, documents, chunks, size on disk.

    \b
    Examples:
      bioevidence kb stats --kb mykb/
      bioevidence kb stats --kb mykb/ --json
    """
    from ..librarian.kb.build import kb_stats

    data = kb_stats(kb_dir)
    if as_json:
        click.echo(json.dumps(data))
        return
    tiers = " ".join(f"{tier} {n}" for tier, n in data["tiers"].items())
    via = " ".join(f"{route} {n}" for route, n in data["via"].items()) or "none"
    click.echo(escape_text(f"{data['kb']}: {plural(data['entries'], 'entry', 'entries')}; tiers: {tiers}; "
                           f"via: {via}"))
    click.echo(escape_text(f"documents {data['docs']}, chunks {data['chunks']}, model {data['model']}, "
                           f"{data['bytes_on_disk']:,} bytes on disk, updated {data['updated_at']}"))


@kb.command("ask")
@click.argument("question")
@click.option("--kb", "kb_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--mode", type=click.Choice(["basic", "advanced", "agentic"]), default="basic", show_default=True)
@click.option("--retriever", type=click.Choice(["bm25", "dense", "hybrid"]), default="hybrid", show_default=True)
@click.option("--top-k", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option("--index", "index_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="agentic: also search this local index.")
@click.option("--europepmc", is_flag=True, help="agentic: also search Europe PMC (BIOEVIDENCE_EUROPEPMC_URL).")
@model_options("Model for a cited synthesis (as the server lists it at /v1/models) [default: none, the offline "
               "extractive answer].")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def ask(question: str, kb_dir: Path, mode: str, retriever: str, top_k: int, index_dir: Path | None,
        europepmc: bool, model: str | None, base_url: str | None, model_timeout: float, as_json: bool) -> None:
    """Answer QUESTION from a knowledge base: every cited sentence checked by the gate.

    The answer comes from the cited-answer path of `bioevidence answer`: offline extractive (a
    verdict and the best sentences) unless --model names a model for a cited synthesis.

    \b
    Examples:
      bioevidence kb ask "Do KRAS mutations cause resistance to EGFR inhibitors?" --kb mykb/
      bioevidence kb ask "..." --kb mykb/ --mode advanced --retriever hybrid
      bioevidence kb ask "..." --kb mykb/ --mode agentic --index ix/ --json
    """
    from ..librarian.kb.modes import ask_kb

    _require("kb ask", model=retriever != "bm25")
    llm = open_llm(model, base_url, model_timeout)
    result = ask_kb(question, kb_dir, mode=mode, retriever=retriever, top_k=top_k, index_dir=index_dir,
                    europepmc=europepmc, llm=llm)
    if as_json:
        click.echo(llm_json(result.to_json()))
        return
    click.echo(result.render())  # escaped line by line (the LLM text policy)


@click.command()
@click.argument("keywords")
@click.option("--source", type=click.Choice(["dblp", "europepmc"]), default="dblp", show_default=True)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The .bib file to write.")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@click.option("--year-from", type=int)
@click.option("--year-to", type=int)
def kg2bib(keywords: str, source: str, output: Path, limit: int, year_from: int | None, year_to: int | None) -> None:
    """From KEYWORDS to a bibliography: DBLP (SPARQL, BIOEVIDENCE_DBLP_SPARQL_URL) or Europe PMC.

    \b
    Examples:
      bioevidence kg2bib "biomedical language model" --source dblp -o refs.bib
      bioevidence kg2bib "KRAS lung cancer gefitinib" --source europepmc -o refs.bib --year-from 2010
      bioevidence kg2bib "BRAF melanoma" --source europepmc -o refs.bib && bioevidence kb build refs.bib --kb mykb/
    """
    from ..io import atomic_write_text
    from ..librarian.kg2bib import search_bib
    from ..sources.bibtex import to_bibtex

    _require("kg2bib", model=False)
    entries = search_bib(keywords, source=source, limit=limit, years=(year_from, year_to))
    atomic_write_text(output, to_bibtex(entries))
    click.echo(json.dumps({"output": str(output), "entries": len(entries), "source": source}))
    if not entries:
        click.echo("no works matched; try fewer or other keywords", err=True)
        sys.exit(1)
