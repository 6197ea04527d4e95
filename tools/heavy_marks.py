"""Check the ``heavy(seconds=N)`` marks of the test files against measured durations (issue 30 item 4).

tests/conftest.py starts the files marked ``heavy`` first, longest first, so that no pytest-xdist
worker finishes alone with a long file at the end; a mark far from the file's real cost defeats that.
This reads a JUnit XML of a whole run (``pytest --junitxml FILE``; under ``.ci/run`` pass it through
``PYTEST_ADDOPTS``), sums each file's test times (setup, call and teardown, as JUnit reports them),
and prints one row per file that is marked or takes at least ``--floor`` seconds: its mark, the
measured time and the verdict. Exit 1 when a mark is off by more than ``--factor`` (either way) or a
file over the floor has none; ``--write`` sets each flagged mark to the measured time (rounded to
5 s) and adds none (marking a file is a choice: it reorders the suite).

    PYTEST_ADDOPTS="--junitxml=/tmp/junit.xml" CI=true bash .ci/run
    .venv/bin/python tools/heavy_marks.py /tmp/junit.xml [--factor 2.5] [--floor 30] [--write]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

from lxml import etree

REPO = Path(__file__).resolve().parents[1]
MARK = re.compile(r"heavy\(seconds=(\d+(?:\.\d+)?)\)")


def measured(junit: Path) -> dict[str, float]:
    """Seconds per test file (repository-relative path) in a JUnit XML report."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    root = etree.parse(str(junit), parser).getroot()
    out: dict[str, float] = defaultdict(float)
    for case in root.iter("testcase"):
        name = case.get("classname") or ""
        # "tests.gate.test_stream" (a module's tests) or "tests.gate.test_stream.TestX" (a class's)
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            path = Path(*parts[:cut]).with_suffix(".py")
            if (REPO / path).is_file():
                out[str(path)] += float(case.get("time") or 0)
                break
    return dict(out)


def marks() -> dict[str, tuple[float, Path]]:
    out = {}
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        found = MARK.search(path.read_text(encoding="utf-8"))
        if found:
            out[str(path.relative_to(REPO))] = (float(found.group(1)), path)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("junit", type=Path)
    parser.add_argument("--factor", type=float, default=2.5, help="a mark this far from the measure is off")
    parser.add_argument("--floor", type=float, default=30.0, help="files at least this long should be marked")
    parser.add_argument("--write", action="store_true", help="set each flagged mark to the measured time")
    args = parser.parse_args(argv)
    if not args.junit.is_file():
        print(f"no JUnit report {args.junit}; run the suite with --junitxml {args.junit}", file=sys.stderr)
        return 3
    took, marked = measured(args.junit), marks()
    rows, flagged = [], 0
    for name in sorted(set(marked) | {n for n, s in took.items() if s >= args.floor},
                       key=lambda n: -took.get(n, 0.0)):
        mark = marked.get(name, (None, None))[0]
        seconds = took.get(name)
        if seconds is None:
            verdict = "not run"
        elif mark is None:
            verdict = "unmarked"
            flagged += 1
        elif seconds > mark * args.factor or seconds < mark / args.factor:
            verdict = "re-mark"
            flagged += 1
            if args.write:
                path = marked[name][1]
                new = max(5, int(round(seconds / 5) * 5))
                path.write_text(MARK.sub(f"heavy(seconds={new})", path.read_text(encoding="utf-8"), count=1),
                                encoding="utf-8")
                verdict = f"re-marked {new}"
        else:
            verdict = "ok"
        rows.append((name, mark, seconds, verdict))
    print("| file | mark (s) | measured (s) | verdict |\n|---|---|---|---|")
    for name, mark, seconds, verdict in rows:
        shown = "–" if seconds is None else f"{seconds:.0f}"
        print(f"| {name} | {'–' if mark is None else f'{mark:g}'} | {shown} | {verdict} |")
    total = sum(took.values())
    print(f"\n{len(took)} files, {total:.0f} s of test time in all; {flagged} flagged")
    return 1 if flagged and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
