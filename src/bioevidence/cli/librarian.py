"""``bioevidence index | search | ask``: thin shells over :mod:`bioevidence.librarian`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigurationError, InputError
from .cluster import scheduler_option


@click.group()
def index() -> None:
    """Build a local search index over pinned corpora."""


@index.command("build")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--index", "index_dir", required=True, type=click.Path(path_type=Path),
              help="Folder to write the index to.")
@scheduler_option
def build(sources: tuple[Path, ...], index_dir: Path, scheduler: str | None) -> None:
    """Index SOURCE... (JATS folders, snapshot folders with literature.json, JSONL corpora).

    With --scheduler, documents are read and analysed in shards on Dask workers (which must see
    the SOURCE paths) and merged here into the same index a single process builds.
    """
    from ..librarian.index import build_index

    stats = build_index(list(sources), index_dir, progress=lambda m: click.echo(m, err=True), scheduler=scheduler)
    click.echo(json.dumps({"index": str(index_dir), "docs": stats.docs, "passages": stats.passages,
                           "seconds": round(stats.seconds, 2), "mb_per_s": round(stats.mb_per_s, 3)}))


@click.command()
@click.argument("query")
@click.option("--index", "index_dir", required=True, type=click.Path(path_type=Path))
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10000))
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def search(query: str, index_dir: Path, limit: int, as_json: bool) -> None:
    """Run one Europe PMC-syntax QUERY against a local index."""
    from ..librarian.backend import search_local

    hits = search_local(str(index_dir), query, limit=limit)
    if as_json:
        click.echo(json.dumps({"query": query, "hits": hits}, ensure_ascii=False))
        return
    for h in hits:
        click.echo(f"{h['rank']:>3}  {h['score']:8.3f}  {h['doc_id']}  {h['title'][:90]}")


def _progress(interactive: bool) -> tuple[Callable[[str], None], Callable[[], None]]:
    """A rich status line on an interactive terminal (stderr); silent otherwise. The library only
    emits messages; rendering stays here."""
    if not interactive:
        return (lambda message: None), (lambda: None)
    from rich.console import Console

    status = Console(stderr=True).status("asking…")
    status.start()
    return (lambda message: status.update(message)), status.stop


def _questions(path: Path) -> list[tuple[str, str]]:
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            out.append((str(rec["id"]), str(rec["question"])))
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"line {lineno} is not {{\"id\", \"question\"}} JSON ({exc}); fix the line",
                             file=str(path), line=lineno) from exc
    return out


def _llm_parts(planner: str, judge: str, llm: Any, *, local: bool, context: int | None, papers: int | None,
               workers: int) -> tuple[Any, Any]:
    """The planner and judge objects the flags ask for (the strings "offline" pass through)."""
    from ..librarian.llm_judge import LLMJudge
    from ..librarian.llm_planner import LLMPlanner

    plan_with: Any = planner
    judge_with: Any = judge
    if planner == "llm":
        plan_with = LLMPlanner(llm, local_only=local, max_tokens=min(8192, context // 4) if context else 8192)
    if judge == "llm":
        # About 2 tokens per word of paper text once wrapped as JSON with ids; a quarter for the reply.
        judge_with = LLMJudge(llm, max_papers=papers, max_tokens=min(4096, context // 4) if context else 4096,
                              max_batch_words=context // 4 if context else None, workers=workers)
    return plan_with, judge_with


@click.command()
@click.argument("question", required=False)
@click.option("--questions", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="JSONL file of {\"id\", \"question\"}; one JSON line out per question.")
@click.option("--backend", type=click.Choice(["local", "europepmc"]), default="local", show_default=True)
@click.option("--index", "index_dir", type=click.Path(path_type=Path), help="Local index folder.")
@click.option("--planner", type=click.Choice(["offline", "llm"]), default="offline", show_default=True)
@click.option("--judge", type=click.Choice(["offline", "llm"]), default="offline", show_default=True)
@click.option("--top-k", type=click.IntRange(1, 1000), default=60, show_default=True)
@click.option("--store", "store_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Snapshot folder the europepmc backend pins full texts and search pages into.")
@click.option("--references", type=click.Path(path_type=Path),
              help="Folder holding the pinned HGNC and Cell Ontology releases.")
@click.option("--model", help="Model name for --planner llm / --judge llm (as the server lists it at /v1/models).")
@click.option("--base-url", help="OpenAI-compatible server for the model [default: $OPENAI_BASE_URL]; the key "
                                 "comes from $OPENAI_API_KEY only.")
@click.option("--model-timeout", type=click.FloatRange(1, 3600), default=120.0, show_default=True,
              help="Seconds to wait for one model reply.")
@click.option("--model-context", type=click.IntRange(1024, 10_000_000),
              help="The model's context window in tokens: sizes judge batches, papers and reply budgets to fit "
                   "(for small local models) [default: the reference sizes, no cap].")
@click.option("--judge-papers", type=click.IntRange(1, 100_000),
              help="Send only the first N candidates (retrieval order) to the LLM judge [default: all].")
@click.option("--judge-workers", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Judge batches sent at once (1 for a local server that answers one request at a time).")
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout.")
def ask(question: str | None, questions: Path | None, backend: str, index_dir: Path | None, planner: str,
        judge: str, top_k: int, store_dir: Path | None, references: Path | None, model: str | None,
        base_url: str | None, model_timeout: float, model_context: int | None, judge_papers: int | None,
        judge_workers: int, as_json: bool) -> None:
    """Ask QUESTION in plain language; get ranked verbatim evidence.

    With --backend europepmc the base URL comes from BIOEVIDENCE_EUROPEPMC_URL (default: the
    public service) and responses are cached under BIOEVIDENCE_HTTP_CACHE (default STORE/http-cache).
    --planner llm / --judge llm talk to an OpenAI-compatible server (--base-url or OPENAI_BASE_URL,
    key from OPENAI_API_KEY) with --model.
    """
    from ..librarian.librarian import Librarian

    llm = None
    if planner == "llm" or judge == "llm":
        if not model:
            raise ConfigurationError("--planner llm / --judge llm need --model NAME (the name the server lists "
                                     "at /v1/models)")
        from ..loop.llm import LLM, OpenAITransport

        llm = LLM(OpenAITransport(base_url, timeout=model_timeout), model)
    plan_with, judge_with = _llm_parts(planner, judge, llm, local=backend == "local", context=model_context,
                                       papers=judge_papers, workers=judge_workers)
    if (question is None) == (questions is None):
        raise ConfigurationError("give either a QUESTION or --questions FILE.jsonl")
    interactive = sys.stderr.isatty() and not as_json and questions is None
    progress, done = _progress(interactive)
    if backend == "europepmc":
        import os

        from ..librarian.europepmc_backend import EuropePMCBackend

        if store_dir is None:
            raise ConfigurationError("--store DIR is required with --backend europepmc: the folder where "
                                     "full texts and search pages are pinned")
        live = EuropePMCBackend.from_env(store_dir, cache_dir=os.environ.get("BIOEVIDENCE_HTTP_CACHE"),
                                         progress=progress)
        lib = Librarian(backend=live, references=references, progress=progress, planner=plan_with,
                        judge=judge_with, llm=llm)
    else:
        if index_dir is None:
            raise ConfigurationError("--index DIR is required with --backend local; build one with "
                                     "`bioevidence index build SOURCE... --index DIR`")
        lib = Librarian(index_dir, references=references, progress=progress, planner=plan_with,
                        judge=judge_with, llm=llm)
    batch = _questions(questions) if questions is not None else [("", question or "")]
    try:
        for qid, text in batch:
            try:
                answer = lib.ask(text, top_k=top_k).to_json()
            finally:
                done()
            if questions is not None:
                answer = {"id": qid, **answer}
            if as_json or questions is not None:
                click.echo(json.dumps(answer, ensure_ascii=False))
                continue
            if answer["fallback"]:
                click.echo(f"note: {answer['fallback']}")
            for it in answer["items"]:
                click.echo(f"[{it['rank']}] {it['title'][:80]} ({it['year']}) {it['locator']}")
                click.echo(f"    {it['text']}")
    finally:
        if backend == "europepmc":
            live.client.http.close()  # its connection pool: no socket left for the garbage collector
