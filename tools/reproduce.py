"""Regenerate the figures the docs state, one step each, byte for byte.

Steps (the reference validator's real-data cases, docs/cases.md):

    clinvar-germline     ClinVar 2023-09 submissions: policy reproduction, controlled faults, trust boundary
    vbo-canine           VBO dog names: real-source labels, controlled faults, forged sources
    singlecell-celltype  CELLxGENE clusters: marker tables, Cell Ontology label/ID mismatches
    civic-literature     CIViC papers: literature negative controls, whole-paper quotes

    .venv/bin/python tools/reproduce.py STEP [STEP ...]          # print each step's table
    .venv/bin/python tools/reproduce.py STEP --json              # the step's figures as JSON
    .venv/bin/python tools/reproduce.py STEP --check             # exit 1 if docs/cases/STEP.md differs
    .venv/bin/python tools/reproduce.py STEP --write             # rewrite docs/cases/STEP.md
    .venv/bin/python tools/reproduce.py all --check

The peer's inputs are read in place from its unpacked sdist ($BIOEVIDENCE_REFERENCE_SDIST, else
.ci/cache/reference-sdist, which .ci/run fills). Exit codes: 0 done (and, with --check, every table
unchanged), 1 a table differs, 3 the sdist is missing or a step name is unknown.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases.common import REPO, CaseResult, CaseUnavailable, peer_sdist

STEPS = {
    "clinvar-germline": "cases.clinvar_germline",
    "vbo-canine": "cases.vbo_canine",
    "singlecell-celltype": "cases.singlecell_celltype",
    "civic-literature": "cases.civic_literature",
}
TABLES = REPO / "docs" / "cases"


def table_path(step: str) -> Path:
    return TABLES / f"{step}.md"


def run_step(step: str, sdist: Path | None = None) -> CaseResult:
    """Run one step on the peer's sdist and return its table and figures."""
    if step not in STEPS:
        raise CaseUnavailable(f"unknown step {step!r}: choose from {', '.join(STEPS)} or all")
    module = importlib.import_module(STEPS[step])
    result: CaseResult = module.run(sdist if sdist is not None else peer_sdist())
    return result


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("steps", nargs="+", metavar="STEP", help=f"one of {', '.join(STEPS)}, or all")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--json", action="store_true", help="print the figures as JSON (one object per step)")
    mode.add_argument("--check", action="store_true", help="compare each table with docs/cases/STEP.md")
    mode.add_argument("--write", action="store_true", help="rewrite docs/cases/STEP.md")
    args = parser.parse_args(argv)
    steps = list(STEPS) if args.steps == ["all"] else args.steps
    changed = 0
    try:
        sdist = peer_sdist()
        for step in steps:
            started = time.perf_counter()
            result = run_step(step, sdist)
            seconds = time.perf_counter() - started
            if args.json:
                print(json.dumps(result.summary if len(steps) == 1 else {step: result.summary}, sort_keys=True))
            elif args.write:
                _write(table_path(step), result.table)
                print(f"{step}: wrote {table_path(step).relative_to(REPO)} ({seconds:.1f} s)", file=sys.stderr)
            elif args.check:
                path = table_path(step)
                committed = path.read_text(encoding="utf-8") if path.is_file() else ""
                if committed == result.table:
                    print(f"{step}: {path.relative_to(REPO)} unchanged ({seconds:.1f} s)", file=sys.stderr)
                else:
                    changed += 1
                    diff = difflib.unified_diff(committed.splitlines(True), result.table.splitlines(True),
                                                str(path.relative_to(REPO)), "regenerated")
                    sys.stdout.writelines(diff)
                    print(f"{step}: {path.relative_to(REPO)} differs from the regenerated table", file=sys.stderr)
            else:
                sys.stdout.write(result.table)
    except CaseUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
