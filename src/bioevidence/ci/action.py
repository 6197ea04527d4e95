"""The step of the GitHub Action (``action.yml``): ``bioevidence ci run``.

1. Resolve the ``files`` input (whitespace-separated globs, ``**`` recursive, folders searched
   for record files, ``!pattern`` excludes); no match is a configuration error (exit 3), and so
   is a glob that is absolute or climbs out with ``..``: only the workspace is gated. A matched
   file whose real location is outside the workspace (a symlink to ``/etc/passwd`` committed in
   a pull request) is refused unread, as an input error of that file (``validate --workspace``).
2. For ``format: draft``, build each draft into a record in a temporary folder with
   ``bioevidence build DRAFT -o RECORD``; a draft that does not build is an input error.
3. Run ONE ``bioevidence validate`` process over all files (JSONL report), with the profile
   and the grounding inputs as flags (none: the profile's own ``grounders:`` section).
4. Report to the runner: annotations on stdout at the line of each finding, a Markdown job
   summary appended to ``$GITHUB_STEP_SUMMARY``, counts and report paths appended to
   ``$GITHUB_OUTPUT``, and a SARIF file beside the JSONL report.
5. Exit 0 unless the batch fails under ``fail-on`` (``review``: anything not admitted fails;
   ``rejected``: only rejected records and input errors fail); then the batch exit code
   (3 input error, 1 rejected, 2 review required).

Everything the runner provides comes in through ``env`` and ``cwd`` so tests run the step
with temporary files for ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

import glob
import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..errors import ConfigurationError, InputError, excerpt
from ..gate.batch import Result
from ..gate.inputs import RECORD_SUFFIXES
from ..gate.render import batch_exit_code, counts
from .annotations import annotation_lines, command
from .lines import Locator
from .sarif import render_sarif
from .summary import render_summary, rules_url

FORMATS = ("record", "draft")
FAIL_ON = ("review", "rejected")
SHOWN_PER_STEP = 10  # annotations of each kind GitHub displays for one step
OUTPUTS = ("admitted", "review_required", "rejected", "error", "total", "report", "sarif")
DRAFTS_NEED_BUILD = ("format: draft needs `bioevidence build` (the draft builder, bioevidence.loop), which this "
                     "installed bioevidence does not have; validate built records with format: record")


def _words(value: str | None) -> list[str]:
    return (value or "").split()


@dataclass(frozen=True, slots=True)
class ActionInputs:
    """The action's inputs; multi-valued ones are whitespace-separated strings, as in YAML."""

    files: str
    profile: str | None = None
    format: str = "record"
    fail_on: str = "review"
    snapshot_dir: str | None = None
    ontology: str | None = None
    term_root: str | None = None
    genes: str | None = None
    tables: str | None = None
    output_dir: str | None = None
    no_grounding: bool = False

    def check(self) -> None:
        if self.format not in FORMATS:
            raise ConfigurationError(f"format must be one of {', '.join(FORMATS)}, not {self.format!r}")
        if self.fail_on not in FAIL_ON:
            raise ConfigurationError(f"fail-on must be one of {', '.join(FAIL_ON)}, not {self.fail_on!r}")
        if not _words(self.files):
            raise ConfigurationError("the files input is empty; give whitespace-separated globs such as "
                                     "'records/**/*.json'")

    def validate_flags(self) -> list[str]:
        """``bioevidence validate`` flags for the profile and the grounding inputs."""
        flags: list[str] = []
        if self.profile:
            flags += ["--profile", self.profile]
        if self.snapshot_dir:
            flags += ["--snapshot-dir", self.snapshot_dir]
        for option, value in (("--ontology", self.ontology), ("--term-root", self.term_root),
                              ("--genes", self.genes), ("--tables", self.tables)):
            for word in _words(value):
                flags += [option, word]
        if self.no_grounding:
            flags.append("--no-grounding")
        return flags


def resolve_files(patterns: str, cwd: Path) -> list[str]:
    """Record files matched by whitespace-separated globs, in sorted order, without repeats.

    ``**`` matches any depth; a folder matches every record file below it; ``!glob`` removes
    matches of an earlier pattern. Only ``.json``, ``.yaml``, ``.yml`` and ``.jsonl`` files count.
    """
    chosen: dict[str, None] = {}
    for pattern in _words(patterns):
        _check_pattern(pattern)
        exclude = pattern.startswith("!")
        matched: list[str] = []
        for hit in sorted(glob.glob(pattern[1:] if exclude else pattern, root_dir=cwd, recursive=True)):
            path = Path(hit) if Path(hit).is_absolute() else cwd / hit
            if path.is_dir():
                matched += sorted(str(Path(hit) / p.relative_to(path)) for p in path.rglob("*")
                                  if p.is_file() and p.suffix.lower() in RECORD_SUFFIXES)
            elif path.is_file() and path.suffix.lower() in RECORD_SUFFIXES:
                matched.append(hit)
        for name in matched:
            key = Path(name).as_posix()
            if exclude:
                chosen.pop(key, None)
            else:
                chosen[key] = None
    return sorted(chosen)


def _check_pattern(pattern: str) -> None:
    """A glob must stay in the workspace: not absolute, no ``..`` part, no ``~``."""
    body = pattern[1:] if pattern.startswith("!") else pattern
    parts = body.replace("\\", "/").split("/")
    if body.startswith(("/", "~")) or Path(body).is_absolute() or ".." in parts or (len(body) > 1 and body[1] == ":"):
        raise ConfigurationError(f"the files input {excerpt(pattern)} reaches outside the workspace (absolute, '~' "
                                 "or '..'); write globs relative to the repository root, e.g. 'records/**/*.json'")


def _outside_error(name: str, cwd: Path) -> Result | None:
    """An error result for a file whose real location is outside ``cwd``, else ``None``."""
    from ..paths import confine

    try:
        confine(cwd / name, cwd)
    except InputError as exc:
        error = InputError(exc.message, file=name)
        text = json.dumps({"file": name, "line": 1, "error": error.kind, "message": error.message},
                          ensure_ascii=False, separators=(",", ":"))
        return Result(name, None, "error", text, error)
    return None


def _error_message(stderr: str) -> str:
    """The message of the last JSON error line on stderr (or its last line)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        try:
            payload = json.loads(line)
        except ValueError:
            continue
        if isinstance(payload, dict) and "message" in payload:
            return str(payload["message"])
    return lines[-1] if lines else "no message"


def _bioevidence(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bioevidence", *args], cwd=cwd, capture_output=True,
                          text=True, encoding="utf-8", check=False)


def build_available() -> bool:
    """Whether this installation has ``bioevidence build`` (drafts to records)."""
    import click

    from ..cli import cli

    with click.Context(cli) as ctx:
        return cli.get_command(ctx, "build") is not None


def build_drafts(drafts: Sequence[str], folder: Path, cwd: Path,
                 flags: Sequence[str] = ()) -> tuple[dict[str, str], list[Result]]:
    """Build each draft into ``folder``: ``({record file: draft}, [error results for drafts that fail])``.

    ``flags`` go to every ``bioevidence build`` (``--snapshot-dir`` fills publication hashes)."""
    if not build_available():
        raise ConfigurationError(DRAFTS_NEED_BUILD)
    built: dict[str, str] = {}
    failed: list[Result] = []
    for number, draft in enumerate(drafts, start=1):
        outside = _outside_error(draft, cwd)
        if outside is not None:
            failed.append(outside)
            continue
        target = folder / f"{number:04d}-{Path(draft).stem}.json"
        done = _bioevidence("build", draft, "-o", str(target), *flags, cwd=cwd)
        if done.returncode == 0 and target.is_file():
            built[str(target)] = draft
            continue
        error = InputError(f"draft does not build: {_error_message(done.stderr)}", file=draft)
        text = json.dumps({"file": draft, "line": 1, "error": error.kind, "message": error.message},
                          ensure_ascii=False, separators=(",", ":"))
        failed.append(Result(draft, None, "error", text, error))
    return built, failed


def read_report(path: Path) -> list[Result]:
    """Batch results from a JSONL report written by ``bioevidence validate --format jsonl``."""
    out: list[Result] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        data = json.loads(raw)
        file = str(data.get("file"))
        # a result's line is its JSONL line; a whole file's report says line 1 (or its parser's line)
        line = data.get("line") if file.casefold().endswith(".jsonl") else None
        if "error" in data:
            error = InputError(str(data.get("message", "")), file=file, line=line)
            out.append(Result(file, line, "error", raw, error))
        else:
            out.append(Result(file, line, str(data["overall_status"]), raw))
    return out


def run_validate(files: Sequence[str], flags: Sequence[str], report: Path, cwd: Path, log: TextIO,
                 workspace: Path | None = None) -> list[Result]:
    """One ``bioevidence validate`` process over ``files``; its results, or an error when it could not run.

    With ``workspace``, files whose real location is outside it are refused unread."""
    report.unlink(missing_ok=True)
    listing = report.with_suffix(".files")
    listing.write_text("".join(f"{name}\n" for name in files), encoding="utf-8")  # no command-line length limit
    confined = ["--workspace", str(workspace)] if workspace is not None else []
    done = _bioevidence("validate", "--files-from", str(listing), "--format", "jsonl", "--output", str(report),
                        *confined, *flags, cwd=cwd)
    if done.stderr.strip():
        log.write("::group::bioevidence validate messages\n" + done.stderr.rstrip("\n") + "\n::endgroup::\n")
    if done.returncode not in (0, 1, 2, 3) or not report.is_file():
        raise ConfigurationError(f"bioevidence validate did not run (exit {done.returncode}): "
                                 f"{_error_message(done.stderr)}")
    return read_report(report)


def _as_draft(result: Result, sources: Mapping[str, str]) -> str:
    """A report line naming the draft as its file (and the record built from it)."""
    if result.file not in sources:
        return result.text
    data = result.located()
    data["file"], data["built_record"] = sources[result.file], result.file
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def output_folder(inputs: ActionInputs, env: Mapping[str, str]) -> Path:
    if inputs.output_dir:
        folder = Path(inputs.output_dir)
        folder.mkdir(parents=True, exist_ok=True)
        return folder.resolve()
    base = env.get("RUNNER_TEMP") or None
    return Path(tempfile.mkdtemp(prefix="bioevidence-gate-", dir=base)).resolve()


def failed(results: Sequence[Result], fail_on: str) -> bool:
    tally = counts(results)
    return bool(tally["error"] or tally["rejected"] or (fail_on == "review" and tally["review_required"]))


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)


def run_gate(inputs: ActionInputs, *, cwd: Path, env: Mapping[str, str], out: TextIO) -> int:
    """Run the action's step (see the module docstring); returns the step's exit code."""
    inputs.check()
    files = resolve_files(inputs.files, cwd)
    if not files:
        message = (f"no file matches {inputs.files.strip()!r} (looked under {cwd}; record files end in "
                   f"{', '.join(RECORD_SUFFIXES)}); check the files input")
        out.write(command("error", message, title="bioevidence: no files") + "\n")
        raise ConfigurationError(message)
    folder = output_folder(inputs, env)
    sources: dict[str, str] = {}
    failures: list[Result] = []
    targets = list(files)
    if inputs.format == "draft":
        records = folder / "records"
        records.mkdir(exist_ok=True)
        build_flags = ["--snapshot-dir", inputs.snapshot_dir] if inputs.snapshot_dir else []
        sources, failures = build_drafts(files, records, cwd, build_flags)
        targets = list(sources)
    report = folder / "report.jsonl"
    validated = run_validate(targets, inputs.validate_flags(), report, cwd, out,
                             workspace=cwd if inputs.format == "record" else None) if targets else []
    if inputs.format == "draft":
        by_file = {r.file: r for r in validated}
        failing = {r.file: r for r in failures}
        record_of = {draft: record for record, draft in sources.items()}
        results = [by_file[record_of[f]] if f in record_of else failing[f] for f in files]
        report.write_text("".join(_as_draft(r, sources) + "\n" for r in results), encoding="utf-8")
    else:
        results = validated
    locator = Locator(base=cwd, sources=sources)
    url = rules_url(env)
    shown = {"error": 0, "warning": 0}
    for line in annotation_lines(results, locator):
        out.write(line + "\n")
        shown[line[2:line.index(" ")]] += 1
    if max(shown.values()) > SHOWN_PER_STEP:
        out.write(command("notice", f"{shown['error']} error and {shown['warning']} warning annotations; GitHub "
                          f"shows {SHOWN_PER_STEP} of each kind per step: the job summary and the SARIF file list "
                          "them all", title="bioevidence: more findings") + "\n")
    sarif = folder / "report.sarif"
    sarif.write_text(render_sarif(results, locator=locator, rules_url=url), encoding="utf-8")
    failing_run = failed(results, inputs.fail_on)
    _append(env.get("GITHUB_STEP_SUMMARY"),
            render_summary(results, locator, url=url, fail_on=inputs.fail_on, failed=failing_run))
    tally = counts(results)
    values = {**{k: str(tally[k]) for k in ("admitted", "review_required", "rejected", "error")},
              "total": str(len(results)), "report": str(report), "sarif": str(sarif)}
    _append(env.get("GITHUB_OUTPUT"), "".join(f"{k}={values[k]}\n" for k in OUTPUTS))
    verdict = f"failing (fail-on: {inputs.fail_on})" if failing_run else "passing"
    out.write(f"bioevidence gate: {len(results)} records: {tally['admitted']} admitted, {tally['review_required']} "
              f"review required, {tally['rejected']} rejected, {tally['error']} input errors; {verdict}. "
              f"Report: {report}\n")
    return batch_exit_code(results) if failing_run else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bioevidence.ci``: the same as ``bioevidence ci``."""
    from ..cli import main as cli_main

    return cli_main(["ci", *(sys.argv[1:] if argv is None else argv)])

