"""``bioevidence build | draft-schema | review``: drafts, the review queue and audits at the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigurationError, escape_text, llm_json, plural
from .gate import _build_grounders, _grounding_options

METHODS = ("deterministic_parser", "manual_curation", "normalized_string_match", "llm_extraction")
DEFAULT_QUEUE = Path("review-queue.sqlite")


def _emit(text: str, output: Path | None, protected: list[Path], folders: list[Path] | None = None) -> None:
    from ..io import atomic_write_text
    from ..paths import refuse_output

    if output is None:
        click.echo(text, nl=False)
        return
    refuse_output(output, reads=protected, folders=folders or [])
    atomic_write_text(output, text)


def _hashed_files(value: Any, base: Path) -> list[Path]:
    """The local files a draft's sources name (``file:``), which the build hashes: inputs, never outputs."""
    from ..errors import BioevidenceError
    from ..paths import safe_child

    out: list[Path] = []
    sources = value.get("sources") if isinstance(value, dict) else None
    for row in sources if isinstance(sources, list) else []:
        name = row.get("file") if isinstance(row, dict) else None
        if isinstance(name, str):
            try:
                out.append(safe_child(base, name))
            except BioevidenceError:
                continue  # the builder refuses it with a clear message
    return out


@click.command()
@click.argument("draft", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the record here (atomically) instead of stdout; never over the draft.")
@click.option("--method", type=click.Choice(METHODS),
              help="Extraction method for evidence that does not state one (set by the pipeline, not the model).")
@click.option("--snapshot-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Pinned snapshot folder: fills publication sha256, retrieved_at, version and title.")
@click.option("--model", "model_output", is_flag=True,
              help="The draft is model output: refuse method, reviews, file, id and status in it.")
@click.option("--record-id", help="Record id when the draft has none (default: derived from its content).")
def build(draft: Path, output: Path | None, method: str | None, snapshot_dir: Path | None, model_output: bool,
          record_id: str | None) -> None:
    """Expand a compact YAML/JSON draft into a full evidence record.

    Ids are derived deterministically; `file:` sources are hashed relative to the draft's
    folder. Exit 3 names the first malformed field.

    \b
    Examples:
      bioevidence build examples/drafts/curated_note.yaml -o record.json
      bioevidence build answer.json --model --method llm_extraction --snapshot-dir snapshots/
    """
    from ..loop.draft import DraftBuilder, load_draft
    from ..paths import refuse_output

    value = load_draft(draft)
    base = draft.resolve().parent
    protected, folders = [draft, *_hashed_files(value, base)], [snapshot_dir] if snapshot_dir is not None else []
    if output is not None:
        refuse_output(output, reads=protected, folders=folders)  # before any work: a wrong -o costs nothing
    builder = DraftBuilder(method=method, base_dir=base, snapshot_dir=snapshot_dir,
                           model=model_output, record_id=record_id)
    record = builder.build(value)
    _emit(llm_json(record, indent=2) + "\n", output, protected, folders)


@click.command("draft-schema")
@click.option("--profile", "profile_name", default="general", show_default=True, metavar="NAME|FILE",
              help="Profile whose allowed values become enums.")
@click.option("--full", is_flag=True, help="The authoring schema, with the keys only the pipeline sets "
                                          "(method, reviews, file, id, status).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write here instead of stdout.")
def draft_schema(profile_name: str, full: bool, output: Path | None) -> None:
    """Print the closed JSON Schema of drafts under a profile (for structured model output).

    \b
    Examples:
      bioevidence draft-schema --profile literature-claim
      bioevidence draft-schema --profile dataset-label --full -o draft.schema.json
    """
    from ..gate.profiles import load_profile, resolve_profile_path
    from ..loop.draft import draft_json_schema

    profile = load_profile(profile_name)
    text = json.dumps(draft_json_schema(profile, model=not full), indent=2, ensure_ascii=False) + "\n"
    _emit(text, output, [resolve_profile_path(profile_name)])


# -- review ------------------------------------------------------------------------------------

@click.group()
def review() -> None:
    """The review queue (records sent to a person), human decisions, audits and agreement.

    \b
    Examples:
      bioevidence review list --queue review-queue.sqlite
      bioevidence review show 3
      bioevidence review decide 3 accept --reviewer orcid:0000-0002-1825-0097 --rationale "Quote supports it."
      bioevidence review audit-sample --predictions preds.csv --target 0.01 --seed 7 --output-dir audit/
      bioevidence review audit-score --manifest audit/audit_manifest.json --labels labels.csv
    """


def _add_stand_ins() -> None:
    from .compat import stand_ins

    for command in stand_ins("review").values():  # 0.8.0's review check, score, … (docs/migrating.md)
        review.add_command(command)


_add_stand_ins()

_queue_option = click.option("--queue", "queue_path", type=click.Path(dir_okay=False, path_type=Path),
                             default=DEFAULT_QUEUE, show_default=True, help="The review queue (a SQLite file).")


def _open_queue(path: Path, *, must_exist: bool = True, verify: bool = True) -> Any:
    from ..loop.queue import ReviewQueue

    if must_exist and not path.exists():
        raise ConfigurationError(f"no review queue at {path}; pass --queue FILE (records arrive through revise "
                                 "or `bioevidence review add`)")
    return ReviewQueue(path, verify=verify)


@review.command("add")
@click.argument("records", nargs=-1, required=True, type=click.Path(path_type=Path))
@_queue_option
@click.option("--profile", "profile_name", metavar="NAME|FILE", help="Profile to validate with (default: each "
              "record's profile_id).")
@_grounding_options
def review_add(records: tuple[Path, ...], queue_path: Path, profile_name: str | None, **grounding: Any) -> None:
    """Validate records and queue those that are not admitted for a person.

    RECORDS are record files (.json, .yaml, .yml), JSONL files or folders searched recursively,
    as for `bioevidence validate`.

    \b
    Examples:
      bioevidence review add examples/records/ --queue review-queue.sqlite
      bioevidence review add claims/ --snapshot-dir snapshots/
    """
    from ..gate.inputs import expand, read_jobs
    from ..gate.profiles import load_profile
    from ..gate.validator import Validator

    files = expand(list(records))
    if not files:
        raise ConfigurationError("no record files found (looked for *.json, *.yaml, *.yml, *.jsonl)")
    profile = load_profile(profile_name) if profile_name else None
    validator = Validator(profile, grounders=_build_grounders(profile, grounding))
    jobs = [job for path in files for job in read_jobs(path)]
    parsed = [(job, job.parse()[0]) for job in jobs]  # every input read before the queue changes
    with _open_queue(queue_path, must_exist=False) as queue:
        for job, value in parsed:
            where = job.file if job.line is None else f"{job.file}:{job.line}"
            report = validator.validate(value)
            if report.admitted:
                click.echo(escape_text(f"{where}: admitted, not queued"))
                continue
            entry = queue.add(value, report, reason=report.overall_status, profile=profile_name)
            click.echo(escape_text(f"{where}: {report.overall_status}, queued as entry {entry} "
                                   f"({', '.join(report.reason_codes())})"))


@review.command("list")
@_queue_option
@click.option("--status", type=click.Choice(["open", "accept", "reject", "defer", "all"]), default="open",
              show_default=True, help="Which entries: open (no decision yet), by last decision, or all.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def review_list(queue_path: Path, status: str, fmt: str) -> None:
    """List queued records: entry, latest decision, where the record stands now, why it was queued, codes.

    A record that only waits for a person's acceptance (BEV010) stands "awaiting your acceptance";
    the codes are explained under the table.

    \b
    Examples:
      bioevidence review list --queue q.sqlite
      bioevidence review list --queue q.sqlite --status all --format json
    """
    with _open_queue(queue_path) as queue:
        entries = queue.list(status)
    from .review import list_entries

    list_entries(entries, status, queue_path, fmt)


@review.command("show")
@click.argument("entry", type=int)
@_queue_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def review_show(entry: int, queue_path: Path, fmt: str) -> None:
    """Show one queued record: its claim, findings, feedback history and decisions.

    \b
    Examples:
      bioevidence review show 1 --queue q.sqlite
      bioevidence review show 1 --queue q.sqlite --format json
    """
    with _open_queue(queue_path) as queue:
        item = queue.get(entry)
    if fmt == "json":
        click.echo(llm_json(item.to_dict(full=True), indent=2))
        return
    from ..loop.listing import render_entry

    click.echo(render_entry(item), nl=False)


@review.command("decide")
@click.argument("entry", type=int)
@click.argument("decision", type=click.Choice(["accept", "reject", "defer"]))
@click.option("--reviewer", required=True, help="Reviewer id (e.g. orcid:0000-0002-1825-0097).")
@click.option("--name", help="Reviewer name.")
@click.option("--rationale", required=True, help="Why: what in the sources supports the decision.")
@click.option("--use", "uses", multiple=True, help="Use(s) the decision applies to (default: the requested uses).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the decided record here.")
@_queue_option
@click.option("--profile", "profile_name", metavar="NAME|FILE", help="Profile to validate with (default: the one "
              "the entry was queued with).")
@_grounding_options
def review_decide(entry: int, decision: str, reviewer: str, name: str | None, rationale: str, uses: tuple[str, ...],
                  output: Path | None, queue_path: Path, profile_name: str | None, **grounding: Any) -> None:
    """Record a human decision: it becomes an adjudication in the record, which is validated again.

    Decisions are appended, never edited; each keeps who decided and when. When the record is
    still not admitted, the findings that still block it are listed.

    \b
    Examples:
      bioevidence review decide 1 accept --reviewer orcid:0000-0002-1825-0097 --rationale "Row 1 supports it."
      bioevidence review decide 2 reject --reviewer orcid:0000-0002-1825-0097 --rationale "Wrong paper." \\
        --use knowledge_base -o decided.json
    """
    from ..gate.profiles import load_profile
    from ..gate.validator import Validator

    with _open_queue(queue_path) as queue:
        item = queue.get(entry)
        chosen = profile_name or item.profile or item.record.get("profile_id")
        profile = load_profile(chosen) if chosen else None
        validator = Validator(profile, grounders=_build_grounders(profile, grounding))
        result = queue.decide(entry, decision, reviewer=reviewer, name=name, rationale=rationale,
                              uses=list(uses) or None, validator=validator)
    click.echo(f"entry {entry}: {decision} by {reviewer}; record now {result.report.overall_status}")
    if not result.report.admitted:
        from ..gate.render import how_to_fix

        for f in result.report.findings:
            if f.severity in ("error", "review"):
                blocked = f" (use {', '.join(f.blocking_uses)})" if f.blocking_uses else ""
                click.echo(escape_text(f"  still blocking: {f.severity} {f.rule_id} at {f.field_path}{blocked}: "
                                       f"{f.message}"))
                if fix := how_to_fix(f):
                    click.echo(escape_text(f"    fix: {fix}"))
    if output is not None:
        snapshots = grounding.get("snapshot_dir")
        _emit(llm_json(result.record, indent=2) + "\n", output, [queue_path],
              [snapshots] if snapshots else [])
    sys.exit(result.report.exit_code)




@review.command("verify")
@_queue_option
@click.option("--expect-head", metavar="SHA256", help="A ledger head written down earlier: the chain must still "
              "pass through it (catches a rewritten history).")
def review_verify(queue_path: Path, expect_head: str | None) -> None:
    """Check that the queue is intact: every entry and decision matches its hash-chained ledger row.

    Prints the head of the chain (write it down: `--expect-head` checks a later file against it).
    Exit 1 and one line per problem when the file was altered outside bioevidence.

    \b
    Examples:
      bioevidence review verify --queue q.sqlite
      bioevidence review verify --queue q.sqlite --expect-head 3f1c…   # a head written down earlier
    """
    if expect_head is not None:
        from ..sources.store import check_sha256

        check_sha256(expect_head.strip().lower(), what="--expect-head")
    with _open_queue(queue_path, verify=False) as queue:
        state = queue.verify(expect_head=expect_head.strip().lower() if expect_head else None)
    from ..loop.queue import wide_modes

    for problem in state.problems:
        click.echo(escape_text(f"problem: {problem}"))
    for warning in wide_modes(queue_path):
        click.echo(f"warning: {warning}", err=True)
    if state.problems:
        click.echo(f"{plural(len(state.problems), 'problem')} in {queue_path}; restore it from a backup", err=True)
        sys.exit(1)
    click.echo(f"ok: {state.rows} entries and decisions chained; head {state.head}")


# -- audits and agreement ----------------------------------------------------------------------

def _csv(path: Path, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> list[dict[str, str]]:
    from ..io import read_limited
    from ..loop.audit import read_csv

    return read_csv(read_limited(path), file=str(path), required=required, optional=optional)


@review.command("predictions")
@click.option("--method", required=True, help="Name of the pipeline, model or team whose records these are.")
@click.option("--reports", "report_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Validation reports (bioevidence validate -o reports.jsonl; JSON or JSONL); repeatable.")
@click.option("--queue", "queue_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also every entry of this review queue (with the route the gate gave it when queued).")
@click.option("--subset", default="", help="A label written in the subset column (a batch, a month).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the CSV here (atomically) instead of stdout.")
def review_predictions(method: str, report_files: tuple[Path, ...], queue_path: Path | None, subset: str,
                       output: Path | None) -> None:
    """Write the predictions CSV that audit-sample reads: one row per record and use, with the route.

    Columns: case_id, requested_use, record_sha256, profile_sha256, method, predicted_status
    (admitted, review_required or rejected), subset. See docs/loop.md.

    \b
    Examples:
      bioevidence validate records/ -o reports.jsonl
      bioevidence review predictions --method curation-v1 --reports reports.jsonl -o preds.csv
      bioevidence review predictions --method gemma --reports reports.jsonl --queue q.sqlite -o preds.csv
    """
    from ..io import parse_json, read_limited
    from ..loop.audit import write_csv
    from ..loop.predictions import COLUMNS, prediction_rows, reports_from_lines

    if not report_files and queue_path is None:
        raise click.UsageError("give --reports FILE and/or --queue FILE")
    reports = []
    for path in report_files:
        text = read_limited(path).decode("utf-8")
        stripped = text.lstrip()
        if stripped.startswith("["):
            values = parse_json(text, file=str(path))
        elif stripped.startswith("{") and "\n{" not in stripped.rstrip():
            values = [parse_json(text, file=str(path))]
        else:
            values = [parse_json(line, file=str(path), line=n) for n, line in enumerate(text.splitlines(), 1)
                      if line.strip()]
        reports += reports_from_lines(values if isinstance(values, list) else [values], file=str(path))
    if queue_path is not None:
        with _open_queue(queue_path) as queue:
            reports += [queue.get(entry.id).original_report for entry in queue.list("all")]
    rows = prediction_rows(reports, method=method, subset=subset)
    _emit(write_csv(rows, COLUMNS), output, [*report_files, *([queue_path] if queue_path else [])])


@review.command("audit-sample")
@click.option("--predictions", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="CSV: case_id, requested_use, record_sha256, profile_sha256, method, predicted_status[, subset] "
                   "(bioevidence review predictions writes it; docs/loop.md).")
@click.option("--method", help="Which method's predictions (needed when the file holds several).")
@click.option("--use", help="Only this requested use.")
@click.option("--size", type=click.IntRange(min=1), help="Number of admitted records to audit.")
@click.option("--target", type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
              help="Audit enough admitted records to bound their error below this rate if none is found.")
@click.option("--confidence", type=click.FloatRange(min=0, max=1, min_open=True, max_open=True), default=0.95,
              show_default=True)
@click.option("--controls", type=click.IntRange(min=0), default=0, show_default=True,
              help="Records from the other routes mixed in, blinded.")
@click.option("--seed", type=int, required=True, help="Random seed (same seed, same sample).")
@click.option("--output-dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for audit_sheet.csv (for auditors) and audit_manifest.json (kept from them).")
@click.option("--profile-id", hidden=True, help="0.8.0's: accepted, not needed (the predictions name the profile).")
@click.option("--split", hidden=True, help="0.8.0's: filter the predictions CSV instead (docs/migrating.md).")
def review_audit_sample(predictions: Path, method: str | None, use: str | None, size: int | None,
                        target: float | None, confidence: float, controls: int, seed: int, output_dir: Path,
                        profile_id: str | None, split: str | None) -> None:
    """Draw a seeded, blinded audit sample of admitted records (plus controls from other routes).

    \b
    Examples:
      bioevidence review audit-sample --predictions preds.csv --size 30 --controls 10 --seed 7 --output-dir audit/
      bioevidence review audit-sample --predictions preds.csv --target 0.01 --seed 7 --output-dir audit/
    """
    from ..io import atomic_write_text
    from ..loop.audit import LABEL_COLUMNS, PREDICTION_COLUMNS, SHEET_COLUMNS, audit_sample, write_csv

    if split is not None:
        raise ConfigurationError("--split is 0.8.0's: keep only that split's rows in the --predictions CSV "
                                 "(its subset column) and drop --split (docs/migrating.md)")
    if profile_id is not None:
        click.echo("note: --profile-id is not needed here (each prediction row carries its profile_sha256)", err=True)

    sheet_path, manifest_path = output_dir / "audit_sheet.csv", output_dir / "audit_manifest.json"
    for path in (sheet_path, manifest_path):
        if path.exists():
            raise ConfigurationError(f"{path} exists; an audit is never overwritten, choose another --output-dir")
    rows = _csv(predictions, PREDICTION_COLUMNS, ("subset",))
    sheet, manifest = audit_sample(rows, seed=seed, size=size, target=target, confidence=confidence,
                                   controls=controls, method=method, use=use)
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(sheet_path, write_csv(sheet, (*SHEET_COLUMNS, *LABEL_COLUMNS)))
    bound = manifest["if_no_errors_admitted_error_below"]
    note = f"; no errors would bound the admitted error below {bound:.4%}" if bound else ""
    click.echo(f"sampled {manifest['sample']['admitted']} admitted + {manifest['sample']['controls']} controls "
               f"into {sheet_path}{note}")


@review.command("audit-score")
@click.option("--manifest", "manifest_path", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--labels", "--annotations", "labels", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The filled-in audit sheet (one row per auditor and record): reviewer_id, admission_label "
                   "(admitted, review_required, rejected), mapping_label (correct, incorrect, uncertain), rationale, "
                   "minutes_spent.")
@click.option("--confidence", type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
              help="Default: the manifest's.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--adjudications", hidden=True, help="0.8.0's: not supported (docs/migrating.md).")
@click.option("--min-reviewers", hidden=True, help="0.8.0's: not supported (docs/migrating.md).")
def review_audit_score(manifest_path: Path, labels: Path, confidence: float | None, fmt: str,
                       output: Path | None, adjudications: str | None, min_reviewers: str | None) -> None:
    """Per-route error rates with Wilson intervals and exact one-sided upper bounds.

    \b
    Examples:
      bioevidence review audit-score --manifest audit/audit_manifest.json --labels audit/audit_sheet.csv
    """
    from ..io import parse_json, read_limited
    from ..loop.audit import LABEL_COLUMNS, SHEET_COLUMNS, audit_score, render_audit

    for flag, value in (("--adjudications", adjudications), ("--min-reviewers", min_reviewers)):
        if value is not None:
            raise ConfigurationError(f"{flag} is 0.8.0's: here every auditor's row of --labels counts and "
                                     f"disagreements are reported, not adjudicated; drop {flag} (docs/migrating.md)")

    manifest = parse_json(read_limited(manifest_path), file=str(manifest_path))
    if not isinstance(manifest, dict):
        raise ConfigurationError(f"{manifest_path} is not an audit manifest")
    rows = [r for r in _csv(labels, SHEET_COLUMNS, LABEL_COLUMNS) if r.get("admission_label")]
    score = audit_score(manifest, rows, confidence=confidence)
    text = json.dumps(score, indent=2) + "\n" if fmt == "json" else render_audit(score)
    _emit(text, output, [manifest_path, labels])


@review.command("agreement")
@click.argument("annotations", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--column", "columns", multiple=True, help="Label column(s) to compare (default: admission_label and "
              "mapping_label).")
@click.option("--unit", "unit_columns", default="case_id,requested_use", show_default=True,
              help="Comma-separated columns that identify one rated unit.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the JSON here (atomically) instead of stdout.")
def review_agreement(annotations: Path, columns: tuple[str, ...], unit_columns: str, output: Path | None) -> None:
    """Inter-reviewer agreement: percent, Cohen's kappa (two reviewers), Krippendorff's alpha (nominal).

    \b
    Examples:
      bioevidence review agreement annotations.csv
      bioevidence review agreement annotations.csv --column admission_label --unit case_id
    """
    from ..io import read_limited
    from ..loop.audit import agreement, read_csv

    data = read_limited(annotations)
    header = data.decode("utf-8-sig").splitlines()[0].split(",") if data.strip() else []
    unit = tuple(c.strip() for c in unit_columns.split(",") if c.strip())
    wanted = columns or ("admission_label", "mapping_label")
    rows = read_csv(data, file=str(annotations), required=("reviewer_id", *unit, *wanted),
                    optional=tuple(c for c in header if c not in {"reviewer_id", *unit, *wanted}))
    _emit(json.dumps(agreement(rows, wanted, unit=unit), indent=2) + "\n", output, [annotations])
