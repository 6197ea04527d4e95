"""``bioevidence validate | profiles | rules | schema``: the gate at the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigurationError
from . import emit_error
from .cluster import batch_progress, scheduler_option, stream_progress

FORMATS = ("json", "jsonl", "text", "markdown", "sarif")
#: options of the meaning checks: they override each record's profile and select no grounder
CHECK_FLAGS = ("cues", "direction")


def _grounding_options(f: Any) -> Any:
    options = [
        click.option("--snapshot-dir", type=click.Path(file_okay=False, path_type=Path),
                     help="Pinned snapshot folder (with literature.json): source bytes and literature grounders."),
        click.option("--ontology", "ontologies", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
                     help="OBO release (.obo or .obo.gz) for the ontology grounder; repeatable."),
        click.option("--term-root", "term_roots", multiple=True, metavar="KIND=CURIE",
                     help="Required ontology root for an entity type or locator key; repeatable."),
        click.option("--genes", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
                     help="HGNC complete set TSV (plain or .gz) for the gene grounder; repeatable."),
        click.option("--assembly-report", "assembly_reports", multiple=True,
                     type=click.Path(dir_okay=False, path_type=Path),
                     help="NCBI assembly report for the variant grounder; repeatable."),
        click.option("--tables", multiple=True, metavar="TYPE",
                     help="Evidence type checked against pinned TSV/CSV tables (needs --snapshot-dir); repeatable."),
        click.option("--reference", type=click.Path(dir_okay=False, path_type=Path),
                     help="Reference assertion table for the cross-check (BEV025)."),
        click.option("--cues/--no-cues", "cues", default=None,
                     help="Run the negation and animal-only cues on supporting quotes (BEV022), or none. "
                          "Default: the cues each record's profile names (negation in literature-claim; "
                          "--no-cues gives bioai-evidence-validator 0.8.0's decisions)."),
        click.option("--direction", type=click.Choice(["auto", "required", "off"]), default=None,
                     help="The stance model reads each verified quote against its evidence line's direction "
                          "(BEV034): auto runs it when the model runtime is installed (else a note, BEV036), "
                          "required sends the record to review when it cannot run (BEV035), off never runs it. "
                          "Default: as each record's profile says (auto in the built-ins)."),
        click.option("--max-inflated", "max_inflated", metavar="SIZE", callback=_size_option,
                     help="Most bytes a pinned file, ontology or gene set may inflate to (e.g. 512M; "
                          "default 256M, or $BIOEVIDENCE_MAX_INFLATED)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _size_option(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None
    from ..limits import parse_size

    try:
        return parse_size(value, what=f"--{(param.name or 'size').replace('_', '-')}")
    except ConfigurationError as exc:
        raise click.BadParameter(exc.message) from exc


def _grounder_options(profile: Any, options: dict[str, Any], *, grounding: bool = True) -> Any:
    """``GrounderOptions`` from the command-line flags, else from the profile's ``grounders:`` section,
    else the configured home store (``$BIOEVIDENCE_STORE`` / ``$BIOEVIDENCE_HOME/store``), with the
    checks ``--cues``/``--no-cues`` and ``--direction`` set; ``None`` when none asks for a grounder or
    a check, or ``grounding`` is off (``--no-grounding``; pass the checks with :func:`_check_flags`)."""
    max_inflated = options.get("max_inflated")
    flags = {k: v for k, v in options.items() if v and k not in ("max_inflated", *CHECK_FLAGS)}
    if not grounding:
        if flags:
            raise click.UsageError(f"--no-grounding turns grounding off; drop --{next(iter(flags)).replace('_', '-')}")
        return None
    from dataclasses import replace

    from ..gate.grounders.config import GrounderOptions, options_from_profile, parse_term_roots

    checks = {k: options[k] for k in CHECK_FLAGS if options.get(k) is not None}  # they select no grounder
    if not flags and not (profile is not None and profile.grounders):
        from ..sources.store import home_store

        home = home_store()
        if home is None:
            return GrounderOptions(**checks) if checks else None
        if not home.is_dir():
            raise ConfigurationError(f"BIOEVIDENCE_STORE={home} is not a folder; point it at a snapshot folder")
        return GrounderOptions(snapshot_dir=home, max_inflated=max_inflated, **checks)
    if flags:
        chosen = GrounderOptions(
            snapshot_dir=options.get("snapshot_dir"), ontologies=tuple(options.get("ontologies") or ()),
            term_roots=parse_term_roots(options.get("term_roots") or ()), genes=tuple(options.get("genes") or ()),
            assembly_reports=tuple(options.get("assembly_reports") or ()), tables=tuple(options.get("tables") or ()),
            reference=options.get("reference"))
    else:
        base = profile.path.parent if profile.path is not None else None
        chosen = options_from_profile(profile.grounders, base=base)
    return replace(chosen, max_inflated=max_inflated, **checks)


def _check_flags(options: dict[str, Any]) -> list[Any]:
    """The checks ``--cues``/``--no-cues`` and ``--direction`` set (none: each record's profile decides)."""
    from ..gate.grounders.config import GrounderOptions, build_checks

    return build_checks(GrounderOptions(cues=options.get("cues"), direction=options.get("direction")))


def _build_grounders(profile: Any, options: dict[str, Any], chosen: Any = None) -> list[Any]:
    """Grounders from the command-line flags, else from the profile's ``grounders:`` section, and the
    checks the flags set (under ``--no-grounding`` too)."""
    chosen = chosen if chosen is not None else _grounder_options(profile, options)
    if chosen is None:
        return _check_flags(options)
    from ..gate.grounders.config import build_grounders

    return build_grounders(chosen)


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--files-from", type=click.File("r", encoding="utf-8"), metavar="LIST",
              help="Also read record paths from LIST, one per line ('-' for stdin); for very long file lists.")
@click.option("--profile", "profile_name", metavar="NAME|FILE",
              help="Profile for every record (built-in name or YAML path). Default: each record's profile_id.")
@click.option("--format", "fmt", type=click.Choice(FORMATS),
              help="Output format. Default: json for one record file; jsonl (file, line) for a folder, a "
                   "JSONL file or several files.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the output here (atomically) instead of stdout.")
@click.option("--workers", type=click.IntRange(min=1), help="Worker processes (default: all cores for large batches).")
@click.option("--workspace", type=click.Path(file_okay=False, path_type=Path), envvar="BIOEVIDENCE_WORKSPACE",
              help="Refuse record files whose real location (symlinks followed) is outside this folder; "
                   "`ci run` passes its working directory. [BIOEVIDENCE_WORKSPACE]")
@click.option("--no-grounding", is_flag=True,
              help="Check no quote against its paper, as bioai-evidence-validator 0.8.0 without --snapshot-dir "
                   "(otherwise such evidence goes to review, BEV029); the report records it.")
@click.option("--schema", "linkml", hidden=True, type=click.Path(dir_okay=False, path_type=Path),
              help="0.8.0's: accepted when it is the packaged LinkML schema (docs/migrating.md).")
@click.option("--annotate-eco", is_flag=True, hidden=True, help="0.8.0's: not provided (docs/migrating.md).")
@click.option("--resume", is_flag=True,
              help="Continue an interrupted JSONL batch written with -o: the records already reported are "
                   "skipped and the output ends as an uninterrupted run's would (docs/performance.md).")
@click.option("--progress-every", type=click.FloatRange(min=0.1), metavar="SECONDS",
              help="When stderr is not a terminal (a batch job's log): a JSON progress line at most this often "
                   "(records done, records/s, share of the input read; with --scheduler: batches done, ETA, "
                   "and first the scheduler and its dashboard). On a terminal a bar is drawn instead.")
@click.option("--window", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="Records held in memory at once when a JSONL batch is streamed (the reports of one window).")
@scheduler_option
@_grounding_options
def validate(paths: tuple[Path, ...], files_from: Any, profile_name: str | None, fmt: str | None, output: Path | None,
             workers: int | None, workspace: Path | None, no_grounding: bool, linkml: Path | None,
             annotate_eco: bool, resume: bool, window: int, progress_every: float | None, scheduler: str | None,
             **grounding: Any) -> None:
    """Validate evidence records and decide each requested use.

    PATHS are record files (.json, .yaml, .yml), JSONL files of one record per line, or folders
    searched recursively. Exit code: 0 admitted, 1 rejected, 2 review required, 3 input error
    (for a batch: 3 if any input error, else 1 if any rejected, else 2 if any review).

    Quotes from papers are checked against the pinned papers of --snapshot-dir (or a profile's
    grounders, or $BIOEVIDENCE_STORE); with none, such evidence goes to review (BEV029) unless
    --no-grounding says to accept it unchecked.

    \b
    Examples:
      bioevidence validate record.json
      bioevidence validate claims/ --snapshot-dir snapshots/ --format text
      bioevidence validate records/ --profile literature-claim --format text
      bioevidence validate batch.jsonl --format markdown -o summary.md
      git diff --name-only main | bioevidence validate --files-from -
      bioevidence validate cells.json --ontology cl.obo.gz --term-root cell_type=CL:0000000
      bioevidence validate records/ --snapshot-dir /shared/snapshots --scheduler tcp://10.0.0.5:8786
    """
    from ..gate import render
    from ..gate.batch import run
    from ..gate.inputs import expand, read_jobs
    from ..gate.profiles import load_profile, resolve_profile_path
    from ..gate.validator import Validator
    from ..io import atomic_write_text
    from ..paths import refuse_output
    from ..resources import schema_file
    from .compat import check_schema_option

    check_schema_option(linkml)
    if annotate_eco:
        raise ConfigurationError("--annotate-eco is 0.8.0's: bioevidence does not rewrite evidence codes; "
                                 "drop it (docs/migrating.md)")
    listed = [Path(line.strip()) for line in files_from if line.strip()] if files_from is not None else []
    if not paths and files_from is None:
        raise click.UsageError("give record PATHS or --files-from LIST")
    files = expand([*paths, *listed])
    if not files:
        raise ConfigurationError("no record files found (looked for *.json, *.yaml, *.yml, *.jsonl)")
    profile = load_profile(profile_name) if profile_name else None
    chosen = _grounder_options(profile, grounding, grounding=not no_grounding)
    if output is not None:
        reads: list[Path] = [*files, schema_file("bioevidence_core.schema.json"), *([linkml] if linkml else [])]
        if files_from is not None and Path(getattr(files_from, "name", "-")).is_file():
            reads.append(Path(files_from.name))
        if profile_name:
            reads.append(resolve_profile_path(profile_name))
        if profile is not None and profile.path is not None:
            reads.append(profile.path)
        refuse_output(output, reads=[*reads, *(chosen.input_files() if chosen else [])],
                      folders=chosen.input_folders() if chosen else [])
    gate: Any
    if scheduler is not None:
        from ..gate.spec import GateSpec

        gate = GateSpec.of(profile, chosen, grounding=not no_grounding, cues=grounding.get("cues"),
                           direction=grounding.get("direction"))
    else:
        from ..gate.grounders.config import build_grounders

        gate = Validator(profile, grounders=build_grounders(chosen) if chosen else [], grounding=not no_grounding,
                         checks=_check_flags(grounding))
    if fmt is None:  # one JSON report for one record file named as such; JSONL (file, line) for any batch
        single = files_from is None and len(paths) == 1 and paths[0].is_file() and paths[0].suffix != ".jsonl"
        fmt = "json" if single else "jsonl"
    if resume and (fmt != "jsonl" or output is None):
        raise ConfigurationError("--resume continues a JSONL output written with -o FILE: give -o "
                                 "(and --format jsonl, the batch default)")
    if fmt == "jsonl" and scheduler is not None and output is not None:  # workers read shards, write parts
        sys.exit(_shard_jsonl(files, gate, output, scheduler, resume=resume, workspace=workspace,
                              every=progress_every))
    if fmt == "jsonl" and scheduler is None:  # streamed: memory bounded whatever the batch's size
        sys.exit(_stream_jsonl(files, gate, output, resume=resume, workers=workers, workspace=workspace,
                               window=window, every=progress_every))
    jobs = [job for f in files for job in read_jobs(f, workspace=workspace)]
    with batch_progress("validating", scheduler is not None, progress_every) as progress:
        results = run(jobs, gate, workers=workers, scheduler=scheduler, progress=progress)
    for r in results:
        if r.error is not None:
            emit_error(r.error, file=r.file, line=r.line)
    if fmt == "json" and len(results) == 1 and results[0].status == "error":
        text = ""  # one unreadable record: the error line on stderr is the whole answer
    elif fmt == "sarif":
        from ..ci.sarif import render_sarif

        text = render_sarif(results)
    elif fmt == "markdown":
        from ..ci.summary import rules_url

        text = render.render_markdown(results, rules_url())  # links only to an absolute address
    else:
        text = {"json": render.render_json, "jsonl": render.render_jsonl, "text": render.render_text}[fmt](results)
    if text:
        if output is not None:
            atomic_write_text(output, text)
        else:
            click.echo(text, nl=False)
    sys.exit(render.batch_exit_code(results))


def _fingerprint(files: list[Path]) -> str:
    """What a run was asked: the version, the command's options (but those that change no output
    byte: --resume, --window, --progress-every, --scheduler) and each input's size and modification time;
    ``--resume`` refuses a partial output made for anything else."""
    import hashlib

    from .._version import __version__

    quiet = {"resume", "window", "progress_every", "files_from", "scheduler"}  # files_from: its paths are in ``files``
    options = {k: v for k, v in click.get_current_context().params.items() if k not in quiet}

    seen = []
    for f in files:
        try:
            info = f.stat()
            seen.append([str(f.resolve()), info.st_size, info.st_mtime_ns])
        except OSError:
            seen.append([str(f), None, None])
    asked = {"version": __version__, "options": options, "files": seen}
    return hashlib.sha256(json.dumps(asked, sort_keys=True, default=str).encode()).hexdigest()


def _stream_jsonl(files: list[Path], gate: Any, output: Path | None, *, resume: bool, workers: int | None,
                  workspace: Path | None, window: int, every: float | None = None) -> int:
    """A JSONL batch validated as a stream (:mod:`bioevidence.gate.stream`); the exit code."""
    from collections import Counter

    from ..gate.inputs import read_jobs
    from ..gate.render import exit_code_of
    from ..gate.stream import status_of_line, stream
    from ..io import ResumableOutput

    out = ResumableOutput(output, _fingerprint(files), resume=resume) if output is not None else None
    counts: Counter[str] = Counter(status_of_line(line) for line in out.iter_kept()) if out is not None else Counter()
    read = [0, 0]  # bytes of the files finished, bytes of the file being read

    def advance(done: int) -> None:
        read[1] = done

    def jobs() -> Any:
        for f in files:
            yield from read_jobs(f, workspace=workspace, progress=advance)
            read[0], read[1] = read[0] + read[1], 0

    def write(text: str) -> None:
        if out is not None:
            out.write(text)
        else:
            click.echo(text, nl=False)

    def shown_error(r: Any) -> None:
        emit_error(r.error, file=r.file, line=r.line)

    total = sum(f.stat().st_size for f in files if f.is_file())
    try:
        with stream_progress(total, every) as progress:
            def report(done: int, rate: float) -> None:
                if progress is not None:
                    progress(read[0] + read[1], done, rate)

            counts += stream(jobs(), gate, write, workers=workers, skip=out.kept if out is not None else 0,
                             window=window, on_error=shown_error, progress=report)
    except BaseException:
        if out is not None:
            out.close()  # the partial stays: --resume continues it
        raise
    if out is not None:
        out.finish()
    return exit_code_of({status for status, n in counts.items() if n})


def _shard_jsonl(files: list[Path], gate: Any, output: Path, scheduler: str, *, resume: bool,
                 workspace: Path | None, every: float | None) -> int:
    """A JSONL batch on a Dask cluster sharing the output's filesystem (:mod:`bioevidence.gate.shards`):
    workers read their shard and write their part; the parts are appended in order. The exit code."""
    from ..errors import llm_json
    from ..execute import BatchFailed, open_executor
    from ..gate import shards
    from ..gate.render import exit_code_of
    from ..io import ResumableOutput

    fingerprint = _fingerprint(files)
    folder = shards.parts_folder(output)
    done_before = shards.start_parts(folder, fingerprint, resume=resume)
    planned = shards.plan(files, folder, workspace=workspace)
    out = ResumableOutput(output, fingerprint)  # rebuilt from the parts, which a resume keeps
    try:
        with batch_progress("validating", True, every) as progress, open_executor(scheduler) as executor:
            todo = [s for s in planned if s.index not in done_before]
            results = executor.map(shards.validate_shard, gate, todo, progress=progress)

            def outcomes() -> Any:
                for shard in planned:
                    if shard.index in done_before:
                        yield shards.PartDone.read(shard.summary)
                        continue
                    result = next(results)
                    yield result.message if isinstance(result, BatchFailed) else result

            counts = shards.merge(planned, outcomes(), out.append_file,
                                  lambda payload: click.echo(llm_json(payload), err=True))
    except BaseException:
        out.close()  # the parts stay: --resume runs only the shards without one
        raise
    out.finish()
    shards.finish_parts(folder)
    return exit_code_of({status for status, n in counts.items() if n})


@click.command()
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def profiles(fmt: str) -> None:
    """List the built-in profiles: their uses and each use's contract.

    \b
    Examples:
      bioevidence profiles
      bioevidence profiles --format json
    """
    from ..gate.profiles import builtin_profiles, load_profile

    loaded = [load_profile(name) for name in builtin_profiles()]
    if fmt == "json":
        click.echo(json.dumps([p.to_dict() for p in loaded], indent=2, ensure_ascii=False))
        return
    for p in loaded:
        click.echo(f"{p.id} {p.version}: {p.description}")
        for key in ("predicates", "subject_types", "object_types"):
            click.echo(f"  {key}: {', '.join(p.allowlist(key)) or '(any)'}")
        for use in p.uses.values():
            flags = [f"requires {', '.join(use.required_evidence_types)}" if use.required_evidence_types else
                     "any supporting evidence"]
            if use.require_human_acceptance:
                flags.append("human acceptance")
            if use.verified_evidence_types:
                flags.append(f"verified {', '.join(use.verified_evidence_types)}")
            if use.require_independent_review:
                flags.append("independent review")
            if use.allow_llm_only:
                flags.append("LLM-only allowed")
            if use.allow_string_match_only:
                flags.append("string-match-only allowed")
            click.echo(f"  use {use.name}: {'; '.join(flags)}")
        click.echo(f"  checks: cues {', '.join(p.checks.cues) or 'none'}, direction {p.checks.direction}")
        click.echo("")


@click.command()
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
              show_default=True)
def rules(fmt: str) -> None:
    """Print the rule catalogue: code, severity, scope, route and meaning.

    \b
    Examples:
      bioevidence rules
      bioevidence rules --format json
    """
    from ..gate.rules import CATALOGUE, render_markdown

    if fmt == "json":
        click.echo(json.dumps([{"code": r.code, "severity": r.severity, "scope": r.scope, "route": r.route,
                                "emitted_by": r.emitted_by, "message": r.message, "remedy": r.remedy}
                               for r in CATALOGUE], indent=2))
    elif fmt == "markdown":
        click.echo(render_markdown(), nl=False)
    else:
        for r in CATALOGUE:
            click.echo(f"{r.code:<17} {r.severity:<7} {r.scope:<4} {r.route:<15} {r.message}")


@click.command()
@click.option("--generate", is_flag=True,
              help="Regenerate the JSON Schema from the LinkML schema (needs linkml-runtime) instead of "
                   "printing the committed one.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write here instead of stdout.")
def schema(generate: bool, output: Path | None) -> None:
    """Print the JSON Schema of records (for LLM structured output and editors).

    \b
    Examples:
      bioevidence schema > record.schema.json
      bioevidence schema --generate -o schemas/bioevidence_core.schema.json
    """
    from ..io import atomic_write_text
    from ..paths import refuse_overwrite
    from ..resources import schema_file

    if generate:
        from ..gate.schemagen import render as render_schema

        text = render_schema(schema_file("bioevidence_core.yaml"))
    else:
        text = schema_file("bioevidence_core.schema.json").read_text(encoding="utf-8")
    if output is not None:
        refuse_overwrite(output, [schema_file("bioevidence_core.yaml")])
        atomic_write_text(output, text)
    else:
        click.echo(text, nl=False)
