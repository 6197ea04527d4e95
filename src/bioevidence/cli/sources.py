"""``bioevidence sources …`` and ``bioevidence ground``: thin shells over bioevidence.sources."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigurationError, InputError, escape_text, llm_json, plural
from .cluster import scheduler_option


@click.group()
def sources() -> None:
    """Pinned sources: verify a snapshot folder, pull reference releases, list what is pinned."""


@sources.command("verify")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--max-inflated", metavar="SIZE", help="Most bytes one pinned file may inflate to (e.g. 512M; "
              "default 256M, or $BIOEVIDENCE_MAX_INFLATED).")
def verify(directory: Path, max_inflated: str | None) -> None:
    """Re-hash every file in DIRECTORY (streaming); list missing, corrupted, truncated, too_large or
    unreadable files (exit 1 on any).

    \b
    Examples:
      bioevidence sources verify snapshots/
      bioevidence sources verify snapshots/ --max-inflated 1G
    """
    from ..limits import parse_size
    from ..sources.catalogue import Catalogue
    from ..sources.store import SnapshotStore

    if not directory.is_dir():
        raise InputError("no such snapshot folder; pass the folder given to --snapshot-dir", file=str(directory))
    cap = parse_size(max_inflated, what="--max-inflated") if max_inflated is not None else None
    store = SnapshotStore(directory, max_inflated=cap)
    catalogue = Catalogue.load(directory)
    problems = store.verify(expected=sorted(catalogue.hashes()))
    count = sum(1 for _ in store.entries())
    for problem in problems:
        click.echo("\t".join(escape_text(str(v)) for v in (problem.kind, Path(problem.path).name, problem.detail)))
    if problems:
        click.echo(f"{plural(len(problems), 'problem')} in {directory} ({plural(count, 'file')} checked)", err=True)
        sys.exit(1)
    click.echo(f"ok: {plural(count, 'file')} verified, {plural(len(catalogue), 'work')} in the catalogue")


@sources.command("pin-local")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--snapshot-dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Snapshot folder to pin into (created if absent; literature.json updated atomically).")
def pin_local_command(files: tuple[Path, ...], snapshot_dir: Path) -> None:
    """Pin local JATS FILES (plain or .gz) into a snapshot folder, each its own metadata (no network).

    A work is catalogued under the article's own identifiers (doi, else pmid, else pmcid). What a
    resolver knows later, such as a retraction, is not in the file: pin works that have an
    identifier with `bioevidence ground` instead when you can reach the network.

    \b
    Examples:
      bioevidence sources pin-local papers/*.xml --snapshot-dir snapshots/
      bioevidence validate claims/ --snapshot-dir snapshots/
    """
    from ..sources.local import pin_local

    works = pin_local(files, snapshot_dir)
    for path, work in zip(files, works, strict=True):
        click.echo("\t".join(escape_text(str(v)) for v in (work.key, work.fulltext_sha256, path)))
    click.echo(f"{plural(len(works), 'work')} pinned in {snapshot_dir}", err=True)


@sources.command("pull")
@click.argument("name")
@click.option(
    "--from", "from_dir", type=click.Path(path_type=Path),
    help="Import from a local mirror: a folder holding the release (pinned or upstream name, e.g. cl.obo) or the file."
)
def pull_command(name: str, from_dir: Path | None) -> None:
    """Download (or import with --from) the release NAME and verify its sha256.

    \b
    Examples:
      bioevidence sources pull cl
      bioevidence sources pull hgnc --from downloads/
    """
    from ..sources.releases import pull

    path = pull(name, from_dir=from_dir)
    click.echo(f"{name}: verified and pinned at {path}")


@sources.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def list_command(fmt: str) -> None:
    """Show the declared releases and where each is pinned.

    \b
    Examples:
      bioevidence sources list
    """
    from ..errors import SourceError
    from ..sources.releases import load_releases, release_path

    rows: list[dict[str, Any]] = []
    for name, rel in sorted(load_releases().items()):
        try:
            where: str | None = str(release_path(name))
        except SourceError:
            where = None
        rows.append(
            {
                "name": name,
                "version": rel.version,
                "licence": rel.licence,
                "format": rel.format,
                "sha256": rel.sha256,
                "path": where,
            }
        )
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        click.echo(f"{row['name']}\t{row['version']}\t{row['licence']}\t{row['path'] or 'not pinned'}")


def _read_record(path: Path) -> Any:
    from ..io import parse_json, parse_yaml, read_limited

    data = read_limited(path)
    if path.suffix.lower() in (".yaml", ".yml"):
        return parse_yaml(data, file=str(path), what="record")
    return parse_json(data, file=str(path))


@click.command()
@click.argument("records", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--snapshot-dir",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="The content-addressed folder to pin into (holds literature.json).",
)
@click.option("--refresh", is_flag=True, help="Resolve again even when pinned (retraction status changes).")
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False), help="Write the one grounded record here.")
@click.option("--output-dir", type=click.Path(path_type=Path, file_okay=False), help="Write grounded records here.")
@click.option("--email", help="Contact email for NCBI and Crossref (else $BIOEVIDENCE_EMAIL).")
@click.option("--resolver", type=click.Choice(["ncbi", "europepmc"]), default="ncbi", show_default=True)
@click.option("--workers", type=click.IntRange(1, 64), default=8, show_default=True,
              help="Requests in flight while pinning (each service's rate limit still applies).")
@click.option("--http-deadline", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Total time for one HTTP request, retries and waits included (default 120, or "
                   "$BIOEVIDENCE_HTTP_DEADLINE).")
@scheduler_option
def ground(
    records: tuple[Path, ...],
    snapshot_dir: Path,
    refresh: bool,
    output: Path | None,
    output_dir: Path | None,
    email: str | None,
    resolver: str,
    workers: int,
    http_deadline: float | None,
    scheduler: str | None,
) -> None:
    """Pin every publication the RECORDS cite and write them with sha256 / retrieved_at pinned.

    \b
    Examples:
      bioevidence ground record.json --snapshot-dir snapshots/ --output grounded.json
      bioevidence ground records/*.json --snapshot-dir snapshots/ --output-dir grounded/ --refresh
      bioevidence ground records/*.json --snapshot-dir /shared/snapshots --output-dir grounded/ --scheduler local:2

    Pinning runs here; with --scheduler, writing the pins into the records runs on Dask workers.
    """
    from rich.console import Console
    from rich.progress import Progress

    from ..io import atomic_write_text
    from ..paths import refuse_output
    from ..sources.catalogue import Catalogue
    from ..sources.ground import ground as run_ground
    from ..sources.http import HttpClient, HttpConfig
    from ..sources.pin import Pinner
    from ..sources.store import SnapshotStore

    if output and output_dir:
        raise ConfigurationError("use either --output or --output-dir, not both")
    if output and len(records) > 1:
        raise ConfigurationError("--output takes one record; use --output-dir for several")
    targets = [output] if output else [output_dir / p.name for p in records] if output_dir else []
    for target in targets:
        refuse_output(target, reads=records, folders=[snapshot_dir], what="--output" if output else "--output-dir")
    loaded = [(str(p), _read_record(p)) for p in records]
    store = SnapshotStore(snapshot_dir)
    catalogue = Catalogue.load(snapshot_dir)
    console = Console(stderr=True)
    with (
        HttpClient(HttpConfig.from_env(email=email, deadline=http_deadline)) as http,
        Progress(console=console, disable=not console.is_terminal, transient=True) as progress,
    ):
        pinner = Pinner(store, catalogue, http, resolver=resolver)
        task = progress.add_task("pinning", total=None)
        grounded, summary = run_ground(
            loaded, pinner, refresh=refresh, workers=workers, progress=lambda _r: progress.advance(task),
            scheduler=scheduler,
        )
    catalogue.save(snapshot_dir)
    if targets:
        for target, (_, record) in zip(targets, grounded, strict=True):
            atomic_write_text(target, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    else:
        for _, record in grounded:
            click.echo(llm_json(record, indent=2))
    report = summary.to_json()
    click.echo(
        f"pinned {len(report['pinned'])}, already pinned {len(report['known'])}, "
        f"no open full text {len(report['no_fulltext'])}, not found {len(report['not_found'])}, "
        f"failed {len(report['failed'])}" + (f", earlier pin kept {len(report['kept'])}" if report["kept"] else ""),
        err=True,
    )
    for ident, reason in report["kept"].items():
        click.echo(escape_text(f"kept {ident}: {reason}"), err=True)
    for ident, reason in report["failed"].items():
        click.echo(escape_text(f"failed {ident}: {reason}"), err=True)
    for ident in report["not_found"]:
        click.echo(escape_text(f"not found {ident}"), err=True)
    if report["failed"]:
        # nothing else succeeded (no work pinned, known, found without full text or kept): the run's
        # answer is an error, exit 3, as for every command; else exit 1 names the publications that failed
        others = any(report[k] for k in ("pinned", "known", "no_fulltext", "not_found", "kept"))
        sys.exit(1 if others else 3)
