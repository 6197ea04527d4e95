"""``tools/mutation.py``'s plain-code runs (issue 30): each mutant written into a copy of today's tree as
plain code (mutmut's trampolines slow hot loops tens of times) and the tests run on it.

``--plain`` narrows each mutant to the tests that reach its function. The run with no mutant records, with
``tools/mutation_order.py``, which tests reach each function of the group's modules: a call made while a
fixture is set up counts for every test that uses the fixture. For a group whose tests share a grounder
cache, the run with no mutant runs twice, first with an empty cache (the cache is built) and then with the
cache it built: a function that some test reached (itself, or code nested in it such as ``load_genes``'s
``build()``) only in the first run builds what the cache holds, and its mutants run with an empty cache of
their own, so the mutated code builds it. A function reached outside any test, or
reached by none, runs every test of the group (code run at import or while collecting).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mutation import PKG, ROOT, Group, copy_tree, equivalents, outcome
from mutation_log import (
    CRASHED,
    _applied_log,
    _applied_rows,
    _apply_by_lines,
    _cap_memory,
    _tests_version,
    diff,
    diffs,
)
from mutation_order import TIMED_OUT

Plan = dict[str, tuple[list[str] | None, bool]]


def plan_from(group: Group, empty: dict[str, list[str]], warm: dict[str, list[str]] | None) -> Plan:
    """Per function (mutmut's name): the node ids of the tests its mutants run (None: every test) and whether
    they run with a grounder cache of their own. ``empty``: what each function's tests were in the run with
    no mutant (with an empty cache); ``warm``: the same with the cache that run built (None: no shared
    cache). A function gets a cache of its own when some test reached it, or code nested in it (listed as
    ``NAME::QUALNAME``), only while the cache was built."""
    plan: Plan = {}
    # a test that reached it only while the cache was built: with the cache warm, the mutant would not run
    builders = {key.split("::", 1)[0] for key, tests in empty.items()
                if warm is not None and set(tests) - set(warm.get(key, []))}
    found = [empty, warm or {}]
    for key in sorted({k for part in found for k in part if "::" not in k}):
        selected = sorted({t for part in found for t in part.get(key, [])})
        plan[key] = (None if "" in selected or not selected else selected, key in builders)
    return plan


def reached(group: Group, work: Path, name: str, run: Callable[[dict[str, str]], tuple[int | str, str]],
            tree: Path, durations: Path) -> Plan:
    """The run (or two, for a shared cache) with no mutant, recording durations and each function's tests;
    the tests must pass. Returns :func:`plan_from`'s plan."""
    watch = ";".join(f"bioevidence.{m[:-3].replace('/', '.')}={tree / PKG / m}" for m in group.modules)
    cache = work / f"{name}-applied-cache"
    shutil.rmtree(cache, ignore_errors=True)  # built afresh from today's sources
    found: list[dict[str, list[str]]] = []
    for when in ("empty", "warm") if group.shared_cache else ("empty",):
        record = work / f"{name}-reach-{when}.json"
        variables = {"BIOEVIDENCE_MUTATION_REACH": str(record), "BIOEVIDENCE_MUTATION_WATCH": watch}
        if when == "empty":
            variables["BIOEVIDENCE_MUTATION_DURATIONS"] = str(durations)
        code, out = run(variables)
        if code != 0:
            raise SystemExit(f"the tests fail with no mutant (exit {code}): {out[-1500:]}")
        found.append(json.loads(record.read_text(encoding="utf-8")))
    return plan_from(group, found[0], found[1] if len(found) > 1 else None)


def recheck_applied(name: str, group: Group, work: Path, tests: list[str], match: str = "",
                    keyword: str = "", fresh: bool = False, unchecked: bool = False,
                    jobs: int = 1, skip_listed: bool = False,
                    deselect: tuple[str, ...] = (), narrow: bool = False) -> list[dict[str, object]]:
    """Each survivor of the last run of ``name`` written into a copy of today's tree as plain code (its
    hunk applied by :func:`_apply_by_lines`; no trampoline: mutmut's trampolines slow hot loops tens of
    times), then ``tests`` run (``-x``, ``-k keyword``): killed when they fail; "not applicable" when its
    lines are no longer in the source. The grounder cache is shared when the group allows it (one cache a
    job). ``unchecked``: the mutants the run did not reach too. ``jobs`` copies of the tree run mutants side
    by side. Each result is appended to ``<work>/<name>-applied.jsonl`` as it comes (a stopped recheck keeps
    what it did; mutants already run there with the same tests are not run again), and the group's table
    counts them. ``narrow`` (``--plain``): each mutant runs only the tests that reach its function in the run
    with no mutant (:func:`reached`; every test for a function reached outside any test or not at all)."""

    found = outcome(work / name, group).values()
    kinds = ("survivors", "unchecked") if unchecked else ("survivors",)
    listed = equivalents() if skip_listed else {}
    survivors = [m for module in found for kind in kinds for m in module[kind]  # type: ignore[attr-defined]
                 if match in m and m not in listed]
    log = _applied_log(work / name)
    # what was run: the tests' content, the selection, and whether each run built its own grounder cache
    selected = keyword + "".join(f" --deselect {t}" for t in deselect)
    version = _tests_version(tests, selected) + ("+fresh" if fresh and group.shared_cache else "") + \
        ("+narrowed" if narrow else "")
    done = {(r["mutant"], r.get("tests_sha", "")) for r in _applied_rows(work / name)}
    # a stopped recheck resumes; with tests changed since, every survivor runs again
    todo = [m for m in survivors if (m, version) not in done]
    shown = diffs(work / name, todo) if todo else {}  # every diff read at once, not a mutmut process each
    pending = iter(todo)
    trees = [copy_tree(work / f"{name}-applied{'' if i == 0 else f'-{i}'}") for i in range(max(1, jobs))]
    selection = (["-k", keyword] if keyword else []) + [a for t in deselect for a in ("--deselect", t)]
    # the run with no mutant records each test's duration; every mutant's run then takes the cheapest first
    # (tools/mutation_order.py: with -x a killed mutant stops at its first failing test)
    durations = work / f"{name}-durations.json"
    lock = threading.Lock()
    rows: list[dict[str, object]] = []

    plugin = work / "pytest-plugin"  # on PYTHONPATH alone: the rest of tools/ could shadow a module
    plugin.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "tools" / "mutation_order.py", plugin / "mutation_order.py")

    limit = [600.0]  # seconds a test run may take; then five times the run with no mutant, plus 30 s (as mutmut)
    spent: dict[str, dict[str, float]] = {}  # the run with no mutant's durations, once recorded

    def allowed(only: list[str] | None) -> float:
        """Twice what the tests took in the run with no mutant (the chosen tests' calls and every fixture's
        setup, as recorded under the reach trace, which runs them about three times slower: so about five
        times their plain time, mutmut's rule), plus 30 s; the whole run's time for every test. At five
        times the traced time, each mutant of the quotes group that loops forever held a job for 305 s
        where the same 114 tests pass in 19 s."""
        if only is None or not spent:
            return limit[0]
        calls = spent.get("tests", {})
        return min(limit[0], 2 * (sum(calls.get(t, 0.0) for t in only) + sum(spent.get("fixtures", {}).values())) + 30)

    def cache(job: int) -> Path:
        return work / f"{name}-applied-cache{'' if job == 0 else f'-{job}'}"

    def run_tests(job: int, record: dict[str, str] | None = None, only: list[str] | None = None,
                  own_cache: bool = False) -> tuple[int | str, str]:
        """The tests in tree ``job`` (``only``: just these node ids); ``record``: the run with no mutant,
        recording what the plugin records (the variables given); ``own_cache``: a grounder cache of its own."""
        # no plugin loaded by entry point but xdist (for -n 0): hypothesis's alone costs 2 s of every run
        env = {**os.environ, "PYTHONPATH": f"{trees[job] / 'src'}:{plugin}", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
               **(record if record is not None else {"BIOEVIDENCE_MUTATION_ORDER": str(durations)})}
        if group.shared_cache and not fresh and not own_cache:
            env["BIOEVIDENCE_TEST_CACHE"] = str(cache(job))
        chosen = tests
        if only is not None:
            (trees[job] / "selected.txt").write_text("\n".join(only) + "\n", encoding="utf-8")
            env["BIOEVIDENCE_MUTATION_SELECT"] = str(trees[job] / "selected.txt")
            chosen = sorted({nodeid.split("::", 1)[0] for nodeid in only})  # collect only their files
        alarm = trees[job] / "timed-out.json"  # a test past its own limit names itself here (mutation_order)
        alarm.unlink(missing_ok=True)
        if record is None:
            env["BIOEVIDENCE_MUTATION_ALARM"] = str(alarm)
        try:  # each test process capped at 6 GB: a mutant that loops appending fails with MemoryError
            run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                  "-p", "xdist.plugin", "-n", "0", "-p", "mutation_order", *selection, *chosen],
                                 cwd=trees[job], capture_output=True, text=True, timeout=allowed(only), env=env,
                                 preexec_fn=_cap_memory)
        except subprocess.TimeoutExpired:
            return "timeout", ""
        if run.returncode == TIMED_OUT and alarm.is_file():
            stopped = json.loads(alarm.read_text(encoding="utf-8"))
            return "timeout", f"TIMEOUT {stopped['test']} past its limit of {stopped['limit']} s\n"
        return run.returncode, run.stdout

    def one(job: int, mutant: str) -> dict[str, object]:
        module = mutant.split(".x")[0].replace(".", "/").removeprefix("bioevidence/")
        target = trees[job] / PKG / f"{module}.py"
        original = target.read_text(encoding="utf-8")
        patched = _apply_by_lines(original, shown.get(mutant) or diff(work / name, mutant))
        if patched is None:
            return {"mutant": mutant, "killed": False, "exit": "not applicable", "by": []}
        target.write_text(patched, encoding="utf-8")
        only, own = plan.get(mutant.rsplit("__mutmut_", 1)[0], (None, False)) if narrow else (None, False)
        t0 = time.perf_counter()
        try:
            code, out = run_tests(job, only=only, own_cache=own)
        finally:
            target.write_text(original, encoding="utf-8")
        by = [line for line in out.splitlines() if line.startswith(("FAILED", "ERROR", "TIMEOUT"))][:1]
        # exit 2 with an ERROR line: the mutant breaks the import of the tests' modules (every test errors);
        # pytest's other exit-2 causes (an interrupt, a usage error) print no ERROR line and stay unkilled
        errored = code == 2 and bool(by) and by[0].startswith("ERROR")
        return {"mutant": mutant, "killed": code in (1, "timeout", *CRASHED) or errored, "exit": code, "tests": tests,
                "keyword": keyword, "tests_sha": version, "by": by, "seconds": round(time.perf_counter() - t0, 1),
                **({"selected": len(only), "own_cache": own} if only is not None else {})}

    def worker(job: int) -> None:
        while True:
            with lock:
                mutant = next(pending, None)
            if mutant is None:
                return
            row = one(job, mutant)
            with lock:
                rows.append(row)
                if row["exit"] != "not applicable":
                    with log.open("a", encoding="utf-8") as fh:
                        fh.write(json.dumps(row) + "\n")

    plan: Plan = {}
    t0 = time.perf_counter()
    if narrow:
        plan = reached(group, work, name, lambda variables: run_tests(0, record=variables), trees[0], durations)
        for job in range(1, len(trees)):  # every job starts from the cache the run with no mutant built
            if group.shared_cache and cache(0).is_dir():
                shutil.rmtree(cache(job), ignore_errors=True)
                shutil.copytree(cache(0), cache(job))
    else:  # first no mutant: the tests must pass on today's sources
        code, out = run_tests(0, record={"BIOEVIDENCE_MUTATION_DURATIONS": str(durations)})
        if code != 0:
            raise SystemExit(f"the tests fail with no mutant (exit {code}): {out[-1500:]}")
    limit[0] = 5 * (time.perf_counter() - t0) + 30
    if narrow and durations.is_file():
        spent.update(json.loads(durations.read_text(encoding="utf-8")))
    with ThreadPoolExecutor(len(trees)) as pool:
        list(pool.map(worker, range(len(trees))))
    return sorted(rows, key=lambda r: str(r["mutant"]))
