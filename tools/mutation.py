"""Mutation testing where decisions are made (issue 30): mutmut 3 over one module group at a time.

    .venv/bin/pip install -e '.[mutation]'            # mutmut 3.8
    .venv/bin/python tools/mutation.py                 # every group, one after another (about 3 hours on 2 cores)
    .venv/bin/python tools/mutation.py gate ranking    # some groups (each from 8 to 50 minutes on 2 cores)
    .venv/bin/python tools/mutation.py --list          # the groups, their modules and tests

Each group mutates its modules only and runs only the tests that cover them (listed below; each mutant
then runs only the tests that reach its function). A group runs in a copy of the
working tree (the files git tracks or would track) under ``--work`` (default ``/tmp/bioevidence-mutation``), with
the copy's pytest options set for one process (mutmut runs its own workers) and ``[tool.mutmut]``
written into the copy's pyproject.toml, so the checkout is never touched. Printed: one table row per
module (mutants, killed, survived, timed out, no tests, killed share against the group's target, and
the mutation score: the share with the survivors ``tools/mutation_equivalent.tsv`` lists as equivalent,
each with its reason, left out) and, for each surviving mutant, its name (and the listed reason) and
diff (``--diffs``) so a test can be written for it.
``--json`` gives the same as one object. Not part of CI. By default (``--plain``, tools/mutation_plain.py)
mutmut only generates the mutants and each runs as plain code with only the tests that reach its function,
cheapest first, ``--jobs`` side by side; ``--mutmut`` runs mutmut's own runner instead (trampolines, much
slower). The figures of each group's run are in docs/mutation.md. Run the groups you changed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the recheck's log and applying a mutant: tools/mutation_log.py
from mutation_log import (
    _applied_log,
    _tests_version,
    diff,
    killed_by_recheck,
    rechecked_alive,
)

ROOT = Path(__file__).resolve().parents[1]
PKG = "src/bioevidence"
#: mutants read as equivalent (no input can tell them from the code), one a line: name, tab, the reason
EQUIVALENT = ROOT / "tools" / "mutation_equivalent.tsv"


def equivalents(path: Path = EQUIVALENT) -> dict[str, str]:
    """Mutant name -> why it is equivalent; a line without a reason is refused (each must say why)."""
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, _, reason = line.partition("\t")
        if not reason.strip():
            raise SystemExit(f"{path.name}:{number}: {name.strip()!r} has no reason; write NAME<TAB>WHY")
        out[name.strip()] = reason.strip()
    return out


@dataclass(frozen=True)
class Group:
    target: float  # killed share asked for by issue 30
    modules: tuple[str, ...]  # under src/bioevidence
    tests: tuple[str, ...]  # test files or folders that cover them
    # tests left out because one run costs more than a mutant can afford (every mutant re-runs its
    # tests with their fixtures in a fresh process); each is named with its cost, measured
    slow: tuple[str, ...] = ()
    # one grounder cache (parsed papers, ontologies) shared by every mutant's tests: only for modules
    # that do not build what the cache holds, or a mutant would read the unmutated build
    shared_cache: bool = False


_WHOLE_PAPER = "tests/gate/grounders/test_whole_paper.py"  # 77 s fixture: every shared paper parsed
_ROW_INDEX = ("tests/gate/grounders/test_tables.py::"
              "test_the_row_index_finds_exactly_what_a_scan_finds_on_every_real_key")  # 11 s
_EVERY_ELEMENT = "tests/text/test_jats_every_element.py"  # 6 s: every element of every article

# the tests about quotes (the other grounders' files run 1-6 s of fixtures each and check no quote)
_QUOTE_TESTS = ("tests/text", "tests/gate/grounders/test_decisions_quotes.py",
                "tests/gate/grounders/test_decisions_align.py", "tests/gate/grounders/test_decisions_cues.py",
                "tests/gate/grounders/test_decisions_closest.py", "tests/gate/grounders/test_decisions_order.py",
                "tests/gate/grounders/test_literature_grounder.py", "tests/gate/grounders/test_misattributed.py",
                "tests/gate/grounders/test_human_formats.py", "tests/gate/grounders/test_lists_in_paragraphs.py",
                "tests/gate/grounders/test_crosscheck_bytes.py", "tests/gate/grounders/test_no_way_around.py",
                "tests/gate/grounders/test_uri_and_locators.py", "tests/gate/grounders/test_end_to_end.py")

GROUPS: dict[str, Group] = {
    "gate": Group(0.90, ("gate/rules.py", "gate/checks.py", "gate/validator.py"),
                  ("tests/gate/test_rules.py", "tests/gate/test_custom_grounders.py", "tests/gate/test_profiles.py",
                   "tests/gate/test_builtin_grounded_profile.py", "tests/gate/test_unchecked_identifiers.py",
                   "tests/gate/test_spec.py", "tests/gate/grounders/test_direction.py",
                   "tests/gate/grounders/test_codes_reach_the_report.py", "tests/gate/test_decisions_checks.py",
                   "tests/gate/test_decisions_validator.py", "tests/gate/grounders/test_no_way_around.py",
                   "tests/gate/test_reference_parity.py", "tests/gate/test_fixes_are_exact.py",
                   "tests/gate/test_report_envelope.py"),
                  slow=("tests/gate/test_reference_parity.py::"  # 50 s: 5,310 records through 0.8.0
                        "test_same_decisions_and_codes_as_the_reference_over_a_mutation_corpus",
                        "tests/gate/test_reference_parity.py::"  # 20 s: the same records, ours only (0.8.0's cached)
                        "test_findings_over_the_mutation_corpus_name_the_fields_the_reference_names")),
    # quote location and diagnosis, in two groups: the matching (run against the grounder cache the
    # unmutated reader built) and the text forms the reader builds (each mutant reads every paper again)
    "quotes": Group(0.90, ("gate/grounders/quotes.py", "gate/grounders/align.py"), _QUOTE_TESTS,
                    slow=(_WHOLE_PAPER, _ROW_INDEX, _EVERY_ELEMENT), shared_cache=True),
    "text": Group(0.90, ("text/normalize.py", "text/tokens.py"), _QUOTE_TESTS,
                  slow=(_WHOLE_PAPER, _ROW_INDEX, _EVERY_ELEMENT)),
    # the grounder cache is shared: genes.py's index building (build_index, _lookups, load_genes) then
    # runs only in mutmut's first pass, so its survivors are re-checked with --fresh-cache
    "identifiers": Group(0.90, ("gate/grounders/ontology.py", "gate/grounders/genes.py"),
                         ("tests/gate/grounders/test_ontology_genes.py",
                          "tests/gate/grounders/test_crosscheck_bytes.py",
                          "tests/gate/grounders/test_codes_reach_the_report.py",
                          "tests/gate/grounders/test_end_to_end.py", "tests/gate/test_unchecked_identifiers.py",
                          "tests/gate/test_builtin_grounded_profile.py", "tests/gate/grounders/test_decisions_genes.py",
                          "tests/gate/grounders/test_decisions_ontology.py", "tests/gate/grounders/test_genes_files.py",
                          "tests/gate/grounders/test_every_obo_release.py"),
                         shared_cache=True),
    "meaning": Group(0.80, ("meaning/labels.py", "librarian/direction.py"),
                     ("tests/meaning", "tests/librarian/test_relevance_and_direction.py"),
                     slow=("tests/librarian/test_relevance_and_direction.py::"
                           "test_the_verdict_never_disagrees_with_the_badges",)),  # 12 s
    "ranking": Group(0.80, ("librarian/ranking.py", "librarian/fusion.py"),
                     ("tests/librarian/test_fusion.py", "tests/librarian/test_verbatim.py",
                      "tests/librarian/test_decisions_ranking.py"),
                     slow=("tests/librarian/test_verbatim.py::"  # 69 s: every CIViC statement asked
                           "test_every_item_for_every_civic_statement_is_printed_text_with_markers_and_dashes",
                           "tests/librarian/test_verbatim.py::"  # 6 s: every JATS passage re-read
                           "test_every_indexed_jats_passage_is_the_pinned_papers_readable_text")),
}

# The three mutations an outside audit made by hand, each of which left every test green (issue 30):
# (name, file under src/bioevidence, text, its replacement, the tests that must now fail)
NAMED: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    ("stance always supports", "meaning/labels.py",
     '    ps, pc, pn = (float(x) for x in probabilities)\n',
     '    ps, pc, pn = (float(x) for x in probabilities)\n    return StanceLabel("supports", 1.0, (ps, pc, pn))\n',
     ("tests/meaning", "tests/librarian/test_relevance_and_direction.py")),
    ("stance inverted (supports <-> contradicts)", "meaning/labels.py",
     'direction, p = ("supports", ps) if ps >= pc else ("contradicts", pc)',
     'direction, p = ("contradicts", ps) if ps >= pc else ("supports", pc)',
     ("tests/meaning", "tests/librarian/test_relevance_and_direction.py")),
    ("hybrid without its dense half", "librarian/hybrid.py",
     "fused = fuse_lists([(p.doc.idx, p.fused) for p in pool], dense, self.spec)",
     "fused = fuse_lists([(p.doc.idx, p.fused) for p in pool], [], self.spec)",
     ("tests/librarian/test_hybrid_guard.py", "tests/librarian/test_fusion.py")),
)

STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped",
          36: "timeout", 24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout", 37: "killed"}


def _toml_list(values: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def copy_tree(where: Path) -> Path:
    """A fresh copy of the working tree's files (tracked, or untracked and not ignored) at ``where``."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        source = ROOT / rel
        if source.is_file():
            (where / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, where / rel)
    return where


def prepare(name: str, group: Group, work: Path) -> Path:
    """A fresh copy of the working tree for ``group``, its pyproject set up for mutmut. The log of the last
    run's rechecks goes: mutmut numbers mutants within a function, so after a change one name can be another
    mutant."""
    _applied_log(work / name).unlink(missing_ok=True)
    where = copy_tree(work / name)
    pyproject = where / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    # one process: mutmut forks its own workers; xdist inside a mutant run would fork again
    lines = [line for line in text.splitlines() if not line.startswith("addopts")]
    addopts = 'addopts = "-q -p no:cacheprovider -p no:xdist --import-mode=importlib"'
    text = "\n".join(lines).replace("[tool.pytest.ini_options]", f"[tool.pytest.ini_options]\n{addopts}", 1)
    left_out = [a for t in group.slow for a in ("--deselect" if "::" in t else "--ignore", t)]
    text += ("\n\n[tool.mutmut]\n"
             f'source_paths = ["src"]\n'
             f"only_mutate = {_toml_list([f'{PKG}/{m}' for m in group.modules])}\n"
             f"pytest_add_cli_args_test_selection = {_toml_list(group.tests)}\n"
             f"pytest_add_cli_args = {_toml_list(left_out)}\n"
             f"also_copy = {_toml_list(['profiles', 'schemas', 'grounders', 'examples', 'docs', 'tools'])}\n"
             "timeout_multiplier = 5.0\ntimeout_constant = 30.0\n")
    pyproject.write_text(text, encoding="utf-8")
    return where


def generate(where: Path) -> None:
    """mutmut's mutant generation alone, in a tree :func:`prepare` set up: the mutated sources and each module's
    ``.meta`` with every mutant "not checked". mutmut's own test runs (coverage stats, trampolines) are left out:
    ``--plain`` runs each mutant as plain code instead (:func:`recheck_applied`)."""
    script = ("import os\n"
              "from mutmut.__main__ import create_mutants\n"
              "from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, setup_source_paths\n"
              "os.makedirs('mutants', exist_ok=True)\n"
              "copy_src_dir()\ncopy_also_copy_files()\nsetup_source_paths()\ncreate_mutants(2)\n")
    run = subprocess.run([sys.executable, "-c", script], cwd=where, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"mutmut's mutant generation failed in {where} (mutmut 3.8 is what this calls): "
                         f"{run.stderr[-1500:]}")


def outcome(where: Path, group: Group, equivalent: dict[str, str] | None = None) -> dict[str, dict[str, object]]:
    """Per module: counts by status and the surviving and unchecked mutants' names (from mutmut's .meta
    files); a survivor or unchecked mutant that a later ``--recheck --applied`` killed counts as "killed
    since" (and as killed in the share). A survivor listed in ``equivalent`` (:data:`EQUIVALENT`) is
    still a survivor in ``killed_share``; ``score`` leaves the listed ones out (the mutation score)."""
    out: dict[str, dict[str, object]] = {}
    killed_since, rechecked = killed_by_recheck(where), rechecked_alive(where)
    listed = equivalents() if equivalent is None else equivalent
    for module in group.modules:
        meta = where / "mutants" / PKG / f"{module}.meta"
        codes: dict[str, int | None] = {}
        if meta.is_file():
            codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
        counts: dict[str, int] = {}
        survivors, unchecked = [], []
        for key, code in codes.items():
            status = "not checked" if code is None else STATUS.get(code, "suspicious")
            if status in ("survived", "not checked", "no tests") and key in killed_since:
                status = "killed since"
            elif status in ("not checked", "no tests") and key in rechecked:  # run by a recheck only, alive
                status = "survived"
            counts[status] = counts.get(status, 0) + 1
            if status == "survived":
                survivors.append(key)
            elif status in ("not checked", "no tests"):  # "no tests": code run at import (gate/rules.py)
                unchecked.append(key)
        total = len(codes)
        counted = total - counts.get("no tests", 0) - counts.get("not checked", 0)
        killed = counts.get("killed", 0) + counts.get("timeout", 0) + counts.get("killed since", 0)
        same = sum(key in listed for key in survivors)
        # listed, yet killed: a test now tells it from the code, or a change renumbered the function's mutants
        # so the name names another one; either way the line is wrong and must go (or move to the new name)
        wrong = sorted(key for key in codes if key in listed and key not in survivors and key not in unchecked)
        out[module] = {"mutants": total, **counts, "survivors": sorted(survivors), "unchecked": sorted(unchecked),
                       "listed_but_killed": wrong,
                       "equivalent": same, "killed_share": killed / counted if counted else 0.0,
                       "score": killed / (counted - same) if counted - same else 0.0}
    return out


def named(work: Path) -> list[dict[str, object]]:
    """Apply each of :data:`NAMED` alone to a copy of the tree and run its tests: killed when they fail."""
    rows = []
    for name, module, text, replacement, tests in NAMED:
        where = copy_tree(work / "named")
        target = where / PKG / module
        source = target.read_text(encoding="utf-8")
        if source.count(text) != 1:
            raise SystemExit(f"{name}: the text to mutate is not once in {module}; update NAMED")
        target.write_text(source.replace(text, replacement), encoding="utf-8")
        t0 = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-n", "0",
                              *tests], cwd=where, capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(where / "src")})
        failed = [line for line in run.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
        rows.append({"mutation": name, "module": module, "tests": list(tests),
                     "killed": run.returncode == 1, "exit": run.returncode, "by": failed[:3],
                     "seconds": round(time.perf_counter() - t0, 1)})
    return rows


def recheck(name: str, group: Group, work: Path, tests: list[str], match: str = "",
            fresh: bool = False) -> list[dict[str, object]]:
    """Each survivor of the last run of ``name`` switched on alone (mutmut's trampoline reads
    ``MUTANT_UNDER_TEST``) in that run's ``mutants/`` tree, with the tests as they are now copied into it,
    then ``tests`` run (``-x``): killed when they fail. Shows which survivors the tests written since the run
    kill, without a whole new run (the mutated sources are the run's; only the tests are new). ``fresh``:
    without the group's shared grounder cache (for code that builds what the cache holds). Each result is
    appended to the same log as ``--applied``'s, so the group's table counts what it killed."""
    found = outcome(work / name, group).values()
    survivors = [m for module in found for m in module["survivors"] if match in m]  # type: ignore[attr-defined]
    mutants = work / name / "mutants"
    shutil.copytree(ROOT / "tests", mutants / "tests", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    rows: list[dict[str, object]] = []
    shared = {"BIOEVIDENCE_TEST_CACHE": str(work / name / "grounder-cache")} if group.shared_cache and not fresh \
        else {}
    for mutant in ["", *survivors]:  # first no mutant: the tests must pass on the run's sources
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
                             cwd=mutants, capture_output=True, text=True,
                             env={**os.environ, **shared, "PYTHONPATH": str(mutants / "src"),
                                  "MUTANT_UNDER_TEST": mutant})
        if not mutant:
            if run.returncode != 0:
                raise SystemExit(f"the tests fail with no mutant switched on (exit {run.returncode}): "
                                 f"{run.stdout[-1500:]}")
            continue
        row: dict[str, object] = {
            "mutant": mutant, "killed": run.returncode == 1, "exit": run.returncode, "tests": tests,
            "tests_sha": _tests_version(tests) + "+trampoline", "via": "trampoline",
            "by": [line for line in run.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))][:1]}
        rows.append(row)
        with _applied_log(work / name).open("a", encoding="utf-8") as fh:  # the table counts it, as --applied
            fh.write(json.dumps(row) + "\n")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("groups", nargs="*", help=f"default: all ({', '.join(GROUPS)})")
    ap.add_argument("--work", default="/tmp/bioevidence-mutation", type=Path)
    ap.add_argument("--children", type=int, default=len(os.sched_getaffinity(0)),
                    help="mutmut's workers [default: the CPUs this process may use]")
    ap.add_argument("--diffs", action="store_true", help="print each surviving mutant's diff")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--markdown", action="store_true", help="with --named: the table without timings")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--reuse", action="store_true", help="report the last run's results, do not run")
    ap.add_argument("--recheck", nargs="+", metavar="TEST",
                    help="switch each survivor of the group's last run on alone, with today's tests, and run these "
                         "tests: which survivors they kill")
    ap.add_argument("--module", action="append", default=[], metavar="MODULE",
                    help="mutate only this module of the group (under src/bioevidence; repeatable); the "
                         "group's tests stay")
    ap.add_argument("--applied", action="store_true",
                    help="with --recheck: write each survivor into a copy of today's tree as plain code (much "
                         "faster than mutmut's trampolines on hot loops)")
    ap.add_argument("--keyword", default="", help="with --recheck --applied: pytest -k")
    ap.add_argument("--unchecked", action="store_true",
                    help="with --recheck --applied: also the mutants the run did not reach, and those "
                         "mutmut saw no test for (code run at import, such as gate/rules.py's catalogue)")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="mutants run side by side, each in its own copy of the tree (a plain run, or --recheck "
                         "--applied) [default: the CPUs this process may use]")
    ap.add_argument("--skip-equivalent", action="store_true",
                    help="with --recheck --applied: leave out the survivors listed in tools/mutation_equivalent.tsv")
    ap.add_argument("--fresh-cache", action="store_true",
                    help="with --recheck: every test run builds its own grounder cache (for the code that builds it)")
    ap.add_argument("--match", default="", help="with --recheck: only survivors whose name holds this text")
    ap.add_argument("--plain", action="store_true",
                    help="the default: mutmut generates the mutants; each runs as plain code in a copy of the tree "
                         "(no trampolines), the group's tests cheapest first with -x, --jobs side by side")
    ap.add_argument("--mutmut", action="store_true",
                    help="mutmut's own runner instead of --plain (its trampolines and coverage pass: hours for the "
                         "quotes and identifiers groups; --children workers)")
    ap.add_argument("--named", action="store_true",
                    help="only the three hand-made mutations of issue 30 (stance always supports, stance "
                         "inverted, hybrid without dense): each must fail a test")
    args = ap.parse_args()
    if args.named:
        rows = named(args.work)
        if args.json:
            print(json.dumps(rows, indent=1))
        elif args.markdown:  # no seconds: the table docs/mutation.md keeps (tools/reproduce.py named-mutations)
            print("| mutation | module | killed | first failing test |\n|---|---|---|---|")
            for row in rows:
                first = row["by"][0] if row["by"] else f"none (exit {row['exit']})"  # type: ignore[index]
                print(f"| {row['mutation']} | `{row['module']}` | {'yes' if row['killed'] else 'NO'} | "
                      f"`{str(first).removeprefix('FAILED ').split(' - ')[0]}` |")
        else:
            print("| mutation | module | killed | by | seconds |\n|---|---|---|---|---|")
            for row in rows:
                by = "; ".join(str(b) for b in row["by"]) or f"exit {row['exit']}"  # type: ignore[attr-defined]
                print(f"| {row['mutation']} | {row['module']} | {'yes' if row['killed'] else 'NO'} | {by} | "
                      f"{row['seconds']} |")
        return 0 if all(row["killed"] for row in rows) else 1
    unknown = [g for g in args.groups if g not in GROUPS]
    if unknown:
        print(f"unknown group(s): {', '.join(unknown)}; choose from {', '.join(GROUPS)}", file=sys.stderr)
        return 3
    if args.recheck:
        if len(args.groups) != 1:
            print("--recheck takes one group", file=sys.stderr)
            return 3
        if args.applied:
            from mutation_plain import recheck_applied  # it imports this module

            rows = recheck_applied(args.groups[0], GROUPS[args.groups[0]], args.work, args.recheck, args.match,
                                   args.keyword, args.fresh_cache, args.unchecked, args.jobs,
                                   args.skip_equivalent)
        else:
            rows = recheck(args.groups[0], GROUPS[args.groups[0]], args.work, args.recheck, args.match,
                           args.fresh_cache)
        if args.json:
            print(json.dumps(rows, indent=1))
        else:
            for row in rows:
                state = "killed" if row["killed"] else "survives" if row["exit"] == 0 else f"exit {row['exit']}"
                print(f"{state:20} {row['mutant']}")
            print(f"killed now: {sum(bool(r['killed']) for r in rows)} of {len(rows)} survivors")
        return 0
    if args.list:
        for name, group in GROUPS.items():
            print(f"{name} (target {group.target:.0%}): {', '.join(group.modules)}")
            print(f"    tests: {', '.join(group.tests)}")
        return 0
    report: dict[str, dict[str, object]] = {}
    for name in args.groups or list(GROUPS):
        group = GROUPS[name]
        if args.module:
            stray = [m for m in args.module if m not in group.modules]
            if stray:
                print(f"{', '.join(stray)} is not a module of {name} ({', '.join(group.modules)})", file=sys.stderr)
                return 3
            group = replace(group, modules=tuple(args.module))
        where = args.work / name
        seconds = None
        if not args.mutmut and not args.reuse:  # --plain, the default
            from mutation_plain import recheck_applied

            where = prepare(name, group, args.work)
            t0 = time.perf_counter()
            generate(where)
            recheck_applied(name, group, args.work, list(group.tests), unchecked=True, jobs=args.jobs,
                            deselect=group.slow, narrow=True)
            seconds = time.perf_counter() - t0
        elif not args.reuse:
            where = prepare(name, group, args.work)
            t0 = time.perf_counter()
            env = dict(os.environ)
            if group.shared_cache:  # tests/gate/grounders/conftest.py reads it
                env["BIOEVIDENCE_TEST_CACHE"] = str(where / "grounder-cache")
            run = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(args.children)],
                                 cwd=where, capture_output=True, text=True, env=env)
            seconds = time.perf_counter() - t0
            (where / "mutmut-run.log").write_text(run.stdout + run.stderr, encoding="utf-8")
            if run.returncode != 0:
                print(f"{name}: mutmut run exited {run.returncode}; see {where / 'mutmut-run.log'}", file=sys.stderr)
        modules = outcome(where, group)
        report[name] = {"target": group.target, "seconds": seconds, "modules": modules}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print("| group | module | mutants | killed | killed since (recheck) | survived | of which listed equivalent | "
          "timed out | no tests | not checked | killed share (of the checked) | score (listed equivalents "
          "left out) | target |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, entry in report.items():
        for module, m in entry["modules"].items():  # type: ignore[attr-defined]
            print(f"| {name} | {module} | {m['mutants']} | {m.get('killed', 0)} | {m.get('killed since', 0)} | "
                  f"{m.get('survived', 0)} | {m['equivalent']} | {m.get('timeout', 0)} | {m.get('no tests', 0)} | "
                  f"{m.get('not checked', 0)} | {m['killed_share']:.1%} | {m['score']:.1%} | {entry['target']:.0%} |")
    listed = equivalents()
    for entry in report.values():
        for m in entry["modules"].values():  # type: ignore[attr-defined]
            for mutant in m["listed_but_killed"]:
                print(f"listed as equivalent but killed (a test tells it apart, or the name now names another "
                      f"mutant): take it off {EQUIVALENT.name} or move its reason: {mutant}", file=sys.stderr)
    for name, entry in report.items():
        if entry["seconds"] is not None:
            print(f"{name}: {entry['seconds']:.0f} s")
        for m in entry["modules"].values():  # type: ignore[attr-defined]
            for mutant in m["survivors"]:
                why = listed.get(mutant)
                print(f"\nsurvived: {mutant}" + (f" (equivalent: {why})" if why else ""))
                if args.diffs:
                    print(diff(args.work / name, mutant))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
