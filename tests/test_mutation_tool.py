"""tools/mutation.py's bookkeeping (issue 30; the recheck's log and applying a mutant are in
tools/mutation_log.py): applying a mutant shown by mutmut to today's source, and
counting what later re-checks killed. mutmut itself is not needed: its outputs are written here in the
forms mutmut 3.8 writes them (a method shown dedented, with continuation lines as they are in the file;
``<module>.py.meta`` with ``exit_code_by_key``)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

import mutation  # noqa: E402
import mutation_log  # noqa: E402

SOURCE = '''class Grounder:
    def check(self, see, path):
        if see:
            fix = Fix("replace", path, see[0]) \\
                if len(see) == 1 else None
            return [finding("BEV023", "merged", path, fix)]
        close = self.close(path)
        return []
'''

# mutmut shows the method at the top level; the continuation line keeps its indentation in the file
SHOWN = '''# x.check__mutmut_1: survived
--- src/x.py
+++ src/x.py
@@ -3,7 +3,7 @@
     if see:
         fix = Fix("replace", path, see[0]) \\
                 if len(see) == 1 else None
-        return [finding("BEV023", "merged", path, fix)]
+        return [finding(None, "merged", path, fix)]
     close = self.close(path)
     return []
'''


def test_a_dedented_method_s_mutant_is_applied_at_its_own_indentation() -> None:
    out = mutation_log._apply_by_lines(SOURCE, SHOWN)
    assert out == SOURCE.replace('finding("BEV023"', "finding(None")
    compile(out, "x.py", "exec")


def test_a_mutant_still_applies_when_code_was_added_beside_it_since_the_run() -> None:
    grown = SOURCE.replace("        close = self.close(path)\n",
                           "        if path is None:  # added since the run\n            return []\n"
                           "        close = self.close(path)\n")
    out = mutation_log._apply_by_lines(grown, SHOWN)
    assert out == grown.replace('finding("BEV023"', "finding(None")


def test_a_mutant_whose_lines_are_not_there_or_not_once_is_not_applied() -> None:
    assert mutation_log._apply_by_lines(SOURCE.replace('"merged"', '"gone"'), SHOWN) is None
    twice = SOURCE + SOURCE.replace("class Grounder", "class Other")
    assert mutation_log._apply_by_lines(twice, SHOWN) is None  # ambiguous: applied nowhere


def test_removed_lines_are_replaced_at_the_indentation_of_the_first() -> None:
    shown = """@@ -3,6 +3,5 @@
     if see:
-        fix = Fix("replace", path, see[0]) \\
-                if len(see) == 1 else None
+        fix = None
         return [finding("BEV023", "merged", path, fix)]
     close = self.close(path)
"""
    out = mutation_log._apply_by_lines(SOURCE, shown)
    assert out == SOURCE.replace("""Fix("replace", path, see[0]) \\
                if len(see) == 1 else None""", "None")
    compile(out, "x.py", "exec")


def test_the_table_counts_what_a_later_recheck_killed(tmp_path: Path) -> None:
    run = tmp_path / "quotes"
    meta = run / "mutants" / "src" / "bioevidence" / "gate" / "grounders" / "align.py.meta"
    meta.parent.mkdir(parents=True)
    keys = {"m.a_1": 1, "m.a_2": 0, "m.a_3": 0, "m.a_4": None, "m.a_5": 33, "m.a_6": None}
    meta.write_text(json.dumps({"exit_code_by_key": keys}), encoding="utf-8")
    rows = [{"mutant": "m.a_2", "killed": True}, {"mutant": "m.a_4", "killed": True},
            {"mutant": "m.a_5", "killed": True}, {"mutant": "m.a_3", "killed": False, "exit": 0}]
    (tmp_path / "quotes-applied.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    group = mutation.Group(0.9, ("gate/grounders/align.py",), ())
    counted = mutation.outcome(run, group)["gate/grounders/align.py"]
    assert (counted["killed"], counted["killed since"], counted["survived"], counted["not checked"]) == (1, 3, 1, 1)
    assert counted["survivors"] == ["m.a_3"] and counted["unchecked"] == ["m.a_6"]
    assert counted["killed_share"] == pytest.approx(4 / 5)  # of the five checked, the unchecked one aside


def test_a_recheck_is_keyed_by_the_tests_content(tmp_path: Path) -> None:
    one = mutation._tests_version(["tests/test_mutation_tool.py"])
    assert one == mutation._tests_version(["tests/test_mutation_tool.py"])
    assert one != mutation._tests_version(["tests/test_mutation_tool.py"], keyword="not slow")
    assert one != mutation._tests_version(["tests/test_mutation_tool.py", "tests/test_io.py"])


def test_a_mutant_the_run_never_reached_counts_as_survived_once_a_recheck_ran_it(tmp_path: Path) -> None:
    run = tmp_path / "text"
    meta = run / "mutants" / "src" / "bioevidence" / "text" / "tokens.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {"t_1": None, "t_2": None, "t_3": None}}), encoding="utf-8")
    rows = [{"mutant": "t_1", "killed": True, "exit": 1}, {"mutant": "t_2", "killed": False, "exit": 0},
            {"mutant": "t_3", "killed": False, "exit": "not applicable"}]
    (tmp_path / "text-applied.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    counted = mutation.outcome(run, mutation.Group(0.9, ("text/tokens.py",), ()))["text/tokens.py"]
    assert (counted["killed since"], counted["survived"], counted["not checked"]) == (1, 1, 1)
    assert counted["killed_share"] == pytest.approx(1 / 2)


def test_a_mutant_mutmut_saw_no_test_for_is_rechecked_and_then_counted(tmp_path: Path) -> None:
    # gate/rules.py builds its catalogue at import, before mutmut switches a mutant on: mutmut finds no test
    # for those functions ("no tests", exit 33), so only a recheck as plain code can run them
    run = tmp_path / "gate"
    meta = run / "mutants" / "src" / "bioevidence" / "gate" / "rules.py.meta"
    meta.parent.mkdir(parents=True)
    keys = {"r_1": 33, "r_2": 33, "r_3": 33, "r_4": 1}
    meta.write_text(json.dumps({"exit_code_by_key": keys}), encoding="utf-8")
    before = mutation.outcome(run, mutation.Group(0.9, ("gate/rules.py",), ()))["gate/rules.py"]
    assert before["unchecked"] == ["r_1", "r_2", "r_3"] and before["killed_share"] == 1.0
    rows = [{"mutant": "r_1", "killed": True, "exit": 1}, {"mutant": "r_2", "killed": False, "exit": 0}]
    (tmp_path / "gate-applied.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    after = mutation.outcome(run, mutation.Group(0.9, ("gate/rules.py",), ()))["gate/rules.py"]
    assert (after["killed"], after["killed since"], after["survived"], after["no tests"]) == (1, 1, 1, 1)
    assert after["survivors"] == ["r_2"] and after["unchecked"] == ["r_3"]
    assert after["killed_share"] == pytest.approx(2 / 3)


def test_listed_equivalent_survivors_are_left_out_of_the_score_only(tmp_path: Path) -> None:
    run = tmp_path / "quotes"
    meta = run / "mutants" / "src" / "bioevidence" / "gate" / "grounders" / "quotes.py.meta"
    meta.parent.mkdir(parents=True)
    keys = {"q_1": 1, "q_2": 1, "q_3": 0, "q_4": 0, "q_5": 0}
    meta.write_text(json.dumps({"exit_code_by_key": keys}), encoding="utf-8")
    listed = {"q_3": "a split limit that leaves the same first part", "q_1": "killed anyway: not counted"}
    counted = mutation.outcome(run, mutation.Group(0.9, ("gate/grounders/quotes.py",), ()), listed)
    m = counted["gate/grounders/quotes.py"]
    assert (m["killed"], m["survived"], m["equivalent"]) == (2, 3, 1)
    assert m["killed_share"] == pytest.approx(2 / 5) and m["score"] == pytest.approx(2 / 4)
    # q_1 is listed yet killed: the listing is wrong (a test kills it, or the name now names another mutant)
    assert m["listed_but_killed"] == ["q_1"]


def test_the_equivalents_list_gives_a_reason_for_each_and_names_real_mutants(tmp_path: Path) -> None:
    listed = mutation.equivalents()
    assert listed and all(len(why) > 10 for why in listed.values())
    modules = {m for g in mutation.GROUPS.values() for m in g.modules}
    for name in listed:  # bioevidence.<dotted module>.x<function>__mutmut_<n>
        dotted = name.split(".x", 1)[0].removeprefix("bioevidence.").replace(".", "/") + ".py"
        assert dotted in modules and "__mutmut_" in name, name
    bad = tmp_path / "equivalent.tsv"
    bad.write_text("# comment\nbioevidence.text.normalize.x_fold__mutmut_1\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="has no reason"):
        mutation.equivalents(bad)


def test_a_mutant_that_crashes_the_test_process_counts_as_killed_and_a_stop_by_hand_does_not(tmp_path: Path) -> None:
    run = tmp_path / "text"
    meta = run / "mutants" / "src" / "bioevidence" / "text" / "tokens.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {"g_1": 0, "g_2": 0, "g_3": 0}}), encoding="utf-8")
    rows = [{"mutant": "g_1", "killed": False, "exit": -9},  # out of memory: the kernel's SIGKILL
            {"mutant": "g_2", "killed": False, "exit": -15},  # stopped by hand
            {"mutant": "g_3", "killed": False, "exit": -11}]  # a segfault
    (tmp_path / "text-applied.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    counted = mutation.outcome(run, mutation.Group(0.9, ("text/tokens.py",), ()))["text/tokens.py"]
    assert (counted["killed since"], counted["survived"], counted["survivors"]) == (2, 1, ["g_2"])


def _run_plugin(where: Path, test_file: str, extra: dict[str, str]) -> list[str]:
    """``test_file`` in ``where`` under tools/mutation_order.py with ``extra`` variables set (none of the
    plugin's inherited): the test names in the order they ran."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("BIOEVIDENCE_MUTATION_")}
    env["PYTHONPATH"] = f"{REPO / 'tools'}:{where}"
    done = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-p", "mutation_order", test_file],
                          cwd=where, capture_output=True, text=True, env={**env, **extra})
    assert done.returncode == 0, done.stdout + done.stderr
    return [line.split("::")[1].split()[0] for line in done.stdout.splitlines() if "::test_" in line]


def test_the_order_plugin_records_durations_then_runs_the_cheapest_tests_first(tmp_path: Path) -> None:
    """tools/mutation_order.py: the run with no mutant records each test's call and each fixture's setup; a
    mutant's run takes the tests by their call plus their fixtures' setup (so every user of an expensive
    fixture waits), what the record lacks costing 0, ties in collection order."""

    (tmp_path / "test_five.py").write_text(
        "import pytest\n\n@pytest.fixture(scope='module')\ndef big():\n    return 1\n\n"
        "def test_a():\n    pass\n\ndef test_b():\n    pass\n\ndef test_c(big):\n    pass\n\n"
        "def test_d():\n    pass\n\ndef test_e(big):\n    pass\n", encoding="utf-8")
    durations = tmp_path / "durations.json"

    def run(extra: dict[str, str]) -> list[str]:
        return _run_plugin(tmp_path, "test_five.py", extra)

    assert run({"BIOEVIDENCE_MUTATION_DURATIONS": str(durations)}) == [f"test_{x}" for x in "abcde"]
    recorded = json.loads(durations.read_text(encoding="utf-8"))
    assert sorted(recorded["tests"]) == [f"test_five.py::test_{x}" for x in "abcde"]
    assert "big" in recorded["fixtures"]
    assert all(isinstance(v, float) and v >= 0 for part in recorded.values() for v in part.values())
    # made-up costs: a 2, b 3, c 0.5 + big 5; d and e are not in the record (written since): d 0, e 0 + big 5
    durations.write_text(json.dumps({"tests": {"test_five.py::test_a": 2.0, "test_five.py::test_b": 3.0,
                                               "test_five.py::test_c": 0.5},
                                     "fixtures": {"big": 5.0}}), encoding="utf-8")
    assert run({"BIOEVIDENCE_MUTATION_ORDER": str(durations)}) == ["test_d", "test_a", "test_b", "test_e", "test_c"]
    assert run({}) == [f"test_{x}" for x in "abcde"]  # neither variable: pytest's own order


def test_a_test_past_its_own_limit_ends_the_run_and_names_itself(tmp_path: Path) -> None:
    """tools/mutation_order.py: with BIOEVIDENCE_MUTATION_ALARM each test may take twice its recorded cost
    plus the slack; a mutant that loops, even one whose loop swallows every exception, ends the run with
    exit 124 within that, the looping test and its limit written to the alarm's file; the tests that ran
    before it passed."""
    import os
    import subprocess
    import time

    (tmp_path / "test_loop.py").write_text(
        "def test_a():\n    pass\n\ndef test_b():\n    while True:\n        try:\n            pass\n"
        "        except BaseException:\n            pass\n\ndef test_c():\n    pass\n", encoding="utf-8")
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"tests": {"test_loop.py::test_a": 0.1, "test_loop.py::test_b": 0.5,
                                               "test_loop.py::test_c": 1.0}, "fixtures": {}}), encoding="utf-8")
    alarm = tmp_path / "timed-out.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIOEVIDENCE_MUTATION_")}
    env.update(PYTHONPATH=f"{REPO / 'tools'}:{tmp_path}", BIOEVIDENCE_MUTATION_ORDER=str(durations),
               BIOEVIDENCE_MUTATION_ALARM=str(alarm), BIOEVIDENCE_MUTATION_ALARM_SLACK="1")
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-v", "-x", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-p", "mutation_order", "test_loop.py"],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    took = time.perf_counter() - t0
    assert done.returncode == 124, done.stdout + done.stderr
    assert json.loads(alarm.read_text(encoding="utf-8")) == {"test": "test_loop.py::test_b", "limit": 2.0}
    assert "test_loop.py::test_a PASSED" in done.stdout and "test_c" not in done.stdout
    assert 2.0 <= took < 20, took
    # without the variable the alarm never rings: a test_b that takes 2.5 s (past its 2 s limit) passes
    (tmp_path / "test_loop.py").write_text("import time\n\ndef test_a():\n    pass\n\n"
                                           "def test_b():\n    time.sleep(2.5)\n", encoding="utf-8")
    alarm.unlink()
    assert _run_plugin(tmp_path, "test_loop.py", {"BIOEVIDENCE_MUTATION_ORDER": str(durations)}) == ["test_a", "test_b"]
    assert not alarm.exists()


def test_the_order_plugin_records_which_tests_reach_each_function_and_runs_only_those_chosen(tmp_path: Path) -> None:
    """tools/mutation_order.py: a call counts for the test that makes it, a call in a fixture's setup for
    every user of the fixture (set up once, read by each), a call at import for no test (""); functions
    are named as mutmut names them; BIOEVIDENCE_MUTATION_SELECT runs only the node ids listed."""

    (tmp_path / "mod.py").write_text(
        "def a():\n    return 1\n\ndef b():\n    def inner():\n        return [i for i in range(2)]\n"
        "    return inner()\n\ndef c():\n    return 3\n\ndef never():\n    return 4\n\n"
        "class C:\n    def m(self):\n        return 5\n", encoding="utf-8")
    (tmp_path / "test_mod.py").write_text(
        "import pytest\nimport mod\n\nmod.c()\n\n@pytest.fixture(scope='session')\ndef built():\n    return mod.b()\n\n"
        "def test_one():\n    assert mod.a() == 1\n\ndef test_two(built):\n    assert built == [0, 1]\n\n"
        "def test_three(built):\n    assert mod.C().m() == 5\n\ndef test_four():\n    pass\n", encoding="utf-8")
    record = tmp_path / "reach.json"

    def run(extra: dict[str, str]) -> list[str]:
        return _run_plugin(tmp_path, "test_mod.py", extra)

    watch = f"pkg.mod={tmp_path / 'mod.py'}"
    ran = run({"BIOEVIDENCE_MUTATION_REACH": str(record), "BIOEVIDENCE_MUTATION_WATCH": watch})
    assert ran == ["test_one", "test_two", "test_three", "test_four"]
    assert json.loads(record.read_text(encoding="utf-8")) == {
        "pkg.mod.x_a": ["test_mod.py::test_one"],
        "pkg.mod.x_b": ["test_mod.py::test_three", "test_mod.py::test_two"],
        "pkg.mod.x_b::b.<locals>.inner": ["test_mod.py::test_three", "test_mod.py::test_two"],
        "pkg.mod.x_b::b.<locals>.inner.<locals>.<listcomp>": ["test_mod.py::test_three", "test_mod.py::test_two"],
        "pkg.mod.x_c": [""],
        "pkg.mod.xǁCǁm": ["test_mod.py::test_three"]}
    chosen = tmp_path / "chosen.txt"
    chosen.write_text("test_mod.py::test_three\ntest_mod.py::test_one\n", encoding="utf-8")
    assert run({"BIOEVIDENCE_MUTATION_SELECT": str(chosen)}) == ["test_one", "test_three"]


def test_a_function_a_test_reached_only_while_the_cache_was_built_runs_with_a_cache_of_its_own() -> None:
    """tools/mutation_plain.py's plan: the tests that reached a function with an empty cache or a warm one; a
    function some test reached only with the empty cache builds what the cache holds (its own cache); reached
    outside any test: every test (None), with a cache of its own when the warm run did not reach it."""
    import mutation_plain

    group = mutation.Group(0.9, ("m.py",), ("tests",), shared_cache=True)
    empty = {"x_f": ["t1"], "x_g": ["t2"], "x_h": ["", "t3"], "x_b": ["t6", "t7"],
             "x_n": ["t8"], "x_n::n.<locals>.build": ["t8"]}
    # t6 reached x_b only while building the cache; x_n ran with the cache warm too, but not its nested build()
    warm = {"x_g": ["t2", "t4"], "x_k": ["t5"], "x_b": ["t7"], "x_n": ["t8"]}
    assert mutation_plain.plan_from(group, empty, warm) == {
        "x_f": (["t1"], True), "x_g": (["t2", "t4"], False), "x_h": (None, True), "x_k": (["t5"], False),
        "x_b": (["t6", "t7"], True), "x_n": (["t8"], True)}
    # no shared cache: one run, nothing has a cache of its own
    assert mutation_plain.plan_from(replace(group, shared_cache=False), empty, None) == {
        "x_f": (["t1"], False), "x_g": (["t2"], False), "x_h": (None, False), "x_b": (["t6", "t7"], False),
        "x_n": (["t8"], False)}
