"""Regenerate the tables of figures in README.md and docs/ and compare each with the committed text.

    .venv/bin/python tools/reproduce.py --list               # every step: doc, kind, cost, quick or not
    .venv/bin/python tools/reproduce.py                      # the quick steps, checked (what CI runs)
    .venv/bin/python tools/reproduce.py STEP [STEP ...]      # these steps, checked (all: every quality step)
    .venv/bin/python tools/reproduce.py all --timings        # every step, timing steps included
    .venv/bin/python tools/reproduce.py STEP --write         # rewrite the step's region of its doc
    .venv/bin/python tools/reproduce.py STEP --print         # print the regenerated markdown
    .venv/bin/python tools/reproduce.py STEP --json          # one JSON object per step (status, figures)

Each step owns a region of a doc, between ``<!-- reproduce: STEP -->`` and ``<!-- /reproduce: STEP -->``
(the docs/cases/*.md steps own their whole file). Quality figures are compared byte for byte; timing
steps run only with ``--timings`` and pass when every number is within the step's tolerance of the
committed one. Inputs: the committed files, ``../shared/data`` (``$BIOEVIDENCE_SHARED_DATA``) and
bioai-evidence-validator 0.8.0's unpacked sdist (``$BIOEVIDENCE_REFERENCE_SDIST``, else
.ci/cache/reference-sdist). Steps and the classification of every table: docs/reproduce.md.

Exit codes: 0 every region as committed (or written), 1 a region differs or a generator failed,
3 an input is missing, a step name is unknown or a region's markers are broken (one line on stderr).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import regions
from figures.compare import timing_differences, unified_diff
from figures.steps import (
    EXTRA_OF,
    PEER_PYTHON,
    PEER_SDIST,
    QUICK_SECONDS,
    SHARED_DATA,
    STEPS,
    Context,
    Figures,
    Step,
    StepFailed,
    StepUnavailable,
    by_name,
    shared_data_dir,
)


def choose(names: list[str], timings: bool) -> list[Step]:
    """The steps to run: the quick ones when none is named, every quality step (and, with
    ``timings``, every timing step) for ``all``, else the named ones."""
    if not names:
        return [step for step in STEPS if step.quick]
    if names == ["all"]:
        return [step for step in STEPS if step.kind == "quality" or timings]
    known = by_name()
    unknown = [name for name in names if name not in known]
    if unknown:
        raise StepUnavailable(f"unknown step {unknown[0]!r}: reproduce.py --list shows {', '.join(known)}")
    chosen = [known[name] for name in names]
    untimed = [step.name for step in chosen if step.kind == "timing" and not timings]
    if untimed:
        raise StepUnavailable(f"{untimed[0]} is a timing step: it runs only with --timings")
    return chosen


def require(steps: list[Step], data: Path, context: Context) -> None:
    """Exit-3 early, before any work, when an input a chosen step needs is missing or a region's markers
    are broken."""
    if any(SHARED_DATA in step.needs for step in steps) and not data.is_dir():
        raise StepUnavailable(f"no shared data at {data}: put the project's data folder at ../shared/data "
                              "beside the clone or set BIOEVIDENCE_SHARED_DATA")
    if any(PEER_SDIST in step.needs for step in steps):
        context.sdist()
    if any(PEER_PYTHON in step.needs for step in steps):
        context.peer_python()
    for step in steps:
        if step.region is not None:  # broken markers stop the run before any work
            regions.read(step.path.read_text(encoding="utf-8") if step.path.is_file() else "", step.region, step.doc)
        for need in step.needs:
            module = need.removeprefix("module:")
            if need.startswith("module:") and importlib.util.find_spec(module) is None:
                raise StepUnavailable(f"{step.name} needs the Python module {module}: "
                                      f"pip install -e '.[{EXTRA_OF.get(module, 'all')}]'")
            if need.startswith("file:") and not Path(need.removeprefix("file:")).exists():
                raise StepUnavailable(f"{step.name} needs {need.removeprefix('file:')}: install it (.ci/run shows how)")


def list_steps(as_json: bool) -> None:
    if as_json:
        print(json.dumps([{"name": s.name, "doc": s.doc, "region": s.region or "whole file", "kind": s.kind,
                           "cost_s": s.cost, "quick": s.quick, "needs": list(s.needs), "command": s.command,
                           **({"tolerance": s.tolerance} if s.kind == "timing" else {})} for s in STEPS], indent=1))
        return
    print(f"{'step':<20} {'doc':<35} {'kind':<12} {'cost':>6}  run by")
    for s in STEPS:
        kind = s.kind if s.kind == "quality" else f"timing ±{100 * s.tolerance:.0f}%"
        runs = ("reproduce.py (quick)" if s.quick else "reproduce.py all / STEP (slow)" if s.kind == "quality"
                else "--timings")
        print(f"{s.name:<20} {s.doc:<35} {kind:<12} {s.cost:>5.0f}s  {runs}")
    print(f"quick: a quality step of at most {QUICK_SECONDS:.0f} s; `reproduce.py` with no step runs those")


def run_step(step: Step, context: Context, mode: str) -> dict[str, object]:
    """Regenerate one step's region and check, write or print it; the outcome for --json."""
    started = time.perf_counter()
    figures = step.produce(context)
    outcome = settle(step, figures, mode)
    return {**outcome, "seconds": round(time.perf_counter() - started, 1)}


def settle(step: Step, figures: Figures, mode: str) -> dict[str, object]:
    """Compare ``figures`` with the step's committed region (``check``), rewrite the region (``write``)
    or print the markdown (``print``)."""
    committed_doc = step.path.read_text(encoding="utf-8") if step.path.is_file() else ""
    committed = regions.read(committed_doc, step.region, step.doc) if committed_doc else ""
    outcome: dict[str, object] = {"step": step.name, "doc": step.doc, "kind": step.kind}
    if mode == "print":
        sys.stdout.write(figures.markdown)
        return {**outcome, "status": "printed"}
    if mode == "write":
        if committed == figures.markdown:
            return {**outcome, "status": "unchanged"}
        regions.write_atomically(step.path, regions.replace(committed_doc, step.region, figures.markdown, step.doc))
        return {**outcome, "status": "written", "diff": unified_diff(committed, figures.markdown, step.doc)}
    if step.kind == "timing":
        problems = timing_differences(committed, figures.markdown, step.tolerance)
        return {**outcome, "status": "differs" if problems else "within tolerance", "problems": problems,
                "tolerance": step.tolerance, "regenerated": figures.markdown,
                "diff": unified_diff(committed, figures.markdown, step.doc)}
    status = "unchanged" if committed == figures.markdown else "differs"
    return {**outcome, "status": status, "summary": figures.summary,
            "diff": unified_diff(committed, figures.markdown, step.doc) if status == "differs" else ""}


def report(outcome: dict[str, object], as_json: bool) -> None:
    if as_json:
        print(json.dumps(outcome, sort_keys=True, default=str))
        return
    if outcome["status"] == "failed":
        return  # its one line is already on stderr
    where = f"{outcome['step']}: {outcome['doc']}"
    if outcome["status"] == "differs":
        sys.stdout.write(str(outcome.get("diff", "")))
        for problem in outcome.get("problems", []) or []:  # type: ignore[attr-defined]
            print(f"  {problem}")
    elif outcome["status"] == "within tolerance":
        sys.stdout.write(str(outcome["regenerated"]))
    if outcome["status"] != "printed":
        extra = f", tolerance ±{100 * float(outcome['tolerance']):.0f}%" if "tolerance" in outcome else ""  # type: ignore[arg-type]
        print(f"{where} {outcome['status']} ({outcome['seconds']} s{extra})", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("steps", nargs="*", metavar="STEP", help="step names, or all; none: the quick steps")
    parser.add_argument("--list", action="store_true", help="list every step and exit")
    parser.add_argument("--timings", action="store_true", help="include the timing steps")
    parser.add_argument("--json", action="store_true", help="one JSON object per step")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare with the committed text (the default)")
    mode.add_argument("--write", action="store_true", help="rewrite each step's region (atomically)")
    mode.add_argument("--print", action="store_true", help="print the regenerated markdown, compare nothing")
    args = parser.parse_args(argv)
    if args.list:
        list_steps(args.json)
        return 0
    chosen_mode = "write" if args.write else "print" if args.print else "check"
    data = shared_data_dir()
    failed = 0
    try:
        steps = choose(args.steps, args.timings)
        with tempfile.TemporaryDirectory(prefix="bioevidence-reproduce-") as work:
            context = Context(data=data, work=Path(work))
            require(steps, data, context)
            for step in steps:
                try:
                    outcome = run_step(step, context, chosen_mode)
                except StepFailed as exc:
                    outcome = {"step": step.name, "doc": step.doc, "kind": step.kind, "status": "failed",
                               "error": str(exc)}
                    print(f"{step.name}: {exc}", file=sys.stderr)
                report(outcome, args.json)
                failed += outcome["status"] in ("differs", "failed")
    except (StepUnavailable, regions.RegionError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
