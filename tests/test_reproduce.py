"""``tools/reproduce.py`` (issue 29, item 5): every step listed; the quick steps regenerate their committed
regions byte for byte; an edited region is caught (checked on a copy, never by editing the real doc).

The quick steps read ``../shared/data`` and bioai-evidence-validator 0.8.0's unpacked sdist: outside CI
the check skips, saying which is missing; under CI it fails.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import reproduce
from figures import regions
from figures.compare import timing_differences
from figures.steps import QUICK_SECONDS, REPO, STEPS, Context, Figures, Step, StepUnavailable, by_name, markdown_tables

TOOL = REPO / "tools" / "reproduce.py"

pytestmark = pytest.mark.heavy(seconds=190)


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), *args], cwd=REPO, capture_output=True, text=True,
                          check=False, env=env, timeout=900)


def test_list_shows_every_step_with_its_doc_kind_cost_and_whether_it_is_quick() -> None:
    done = _run("--list")
    assert done.returncode == 0, done.stderr
    for step in STEPS:
        line = next(line for line in done.stdout.splitlines() if line.startswith(step.name + " "))
        assert step.doc in line and f"{step.cost:.0f}s" in line
        assert ("quick" in line) == step.quick
    listed = json.loads(_run("--list", "--json").stdout)
    assert [row["name"] for row in listed] == [step.name for step in STEPS]
    assert {row["kind"] for row in listed} == {"quality", "timing"}
    assert all(row["quick"] == (row["kind"] == "quality" and row["cost_s"] <= QUICK_SECONDS) for row in listed)


def test_every_step_owns_one_marked_region_of_an_existing_doc() -> None:
    assert len(by_name()) == len(STEPS)
    for step in STEPS:
        text = step.path.read_text(encoding="utf-8")
        body = regions.read(text, step.region, step.doc)
        assert markdown_tables(body), f"{step.name}: no table in its region of {step.doc}"
    assert "reproduce.py" in (REPO / "docs" / "reproduce.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def quick_outcomes() -> list[dict[str, object]]:
    """``reproduce.py --json`` (the quick steps, checked) once; skipped outside CI when an input is missing."""
    done = _run("--json")
    if done.returncode == 3:
        message = done.stderr.strip()
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    outcomes = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, "\n".join(str(o.get("diff") or o.get("error") or o) for o in outcomes)[-4000:]
    return outcomes


def test_the_quick_steps_regenerate_their_committed_regions(quick_outcomes: list[dict[str, object]]) -> None:
    assert [o["step"] for o in quick_outcomes] == [s.name for s in STEPS if s.quick]
    assert {o["status"] for o in quick_outcomes} == {"unchanged"}
    assert all(o["kind"] == "quality" for o in quick_outcomes)


def _edited(text: str, region: str | None) -> str:
    """``text`` with the first digit of its region's first table row (after the header) changed."""
    body = regions.read(text, region)
    row = next(line for line in body.splitlines()[2:] if any(ch.isdigit() for ch in line))
    digit = next(ch for ch in row if ch.isdigit())
    changed = row.replace(digit, "7" if digit != "7" else "8", 1)
    return regions.replace(text, region, body.replace(row, changed, 1))


def test_an_edited_region_is_a_difference_and_write_restores_it(tmp_path: Path, shared_data: Path) -> None:
    """The real steps-table step regenerated once, then checked against an edited copy of docs/reproduce.md
    (the cheapest step that owns a region of a larger doc; the quick steps' own check above runs the rest)."""
    step = by_name()["reproduce-steps"]
    assert step.region is not None
    figures = step.produce(Context(data=shared_data, work=tmp_path))
    copy = tmp_path / "reproduce.md"
    original = step.path.read_text(encoding="utf-8")
    copy.write_text(_edited(original, step.region), encoding="utf-8")
    on_copy = dataclasses.replace(step, doc=str(copy))
    assert reproduce.settle(step, figures, "check")["status"] == "unchanged"
    outcome = reproduce.settle(on_copy, figures, "check")
    assert outcome["status"] == "differs" and str(outcome["diff"]).count("\n-|") == 1
    assert reproduce.settle(on_copy, figures, "write")["status"] == "written"
    assert copy.read_text(encoding="utf-8") == original  # only the region was rewritten, back to the figures


def test_a_whole_file_step_catches_an_edited_copy(tmp_path: Path) -> None:
    step = by_name()["vbo-canine"]
    copy = tmp_path / "vbo-canine.md"
    copy.write_text(_edited(step.path.read_text(encoding="utf-8"), None), encoding="utf-8")
    committed = Figures(step.path.read_text(encoding="utf-8"))
    assert reproduce.settle(dataclasses.replace(step, doc=str(copy)), committed, "check")["status"] == "differs"


def test_a_timing_region_passes_within_its_tolerance_and_not_beyond(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("text\n<!-- reproduce: t -->\n| figure | s |\n|---|---|\n| **build** | 1.00 |\n"
                   "<!-- /reproduce: t -->\nmore\n", encoding="utf-8")
    step = Step("t", str(doc), "t", "timing", 1, (), "none", lambda _: Figures(""), tolerance=0.25)
    near = Figures("| figure | s |\n|---|---|\n| build | 1.20 |\n")
    far = Figures("| figure | s |\n|---|---|\n| build | 1.30 |\n")
    assert reproduce.settle(step, near, "check")["status"] == "within tolerance"
    assert reproduce.settle(step, far, "check")["status"] == "differs"
    words = timing_differences("| a | 2 |\n", "| b | 2 |\n", 0.25)
    assert words == ["line 1: the words differ: '| a | 2 |' → '| b | 2 |'"]
    reproduce.settle(step, far, "write")
    assert doc.read_text(encoding="utf-8").splitlines()[4] == "| build | 1.30 |"
    assert doc.read_text(encoding="utf-8").endswith("<!-- /reproduce: t -->\nmore\n")


def test_a_missing_input_or_unknown_step_is_one_line_and_exit_3(tmp_path: Path) -> None:
    env = {**os.environ, "BIOEVIDENCE_SHARED_DATA": str(tmp_path / "none")}
    done = _run("aliases", env=env)
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "no shared data at" in done.stderr
    unknown = _run("no-such-step")
    assert unknown.returncode == 3 and "unknown step 'no-such-step'" in unknown.stderr
    with pytest.raises(StepUnavailable, match="timing step"):
        reproduce.choose(["bm25-engines"], timings=False)
    assert [s.name for s in reproduce.choose(["all"], timings=False)] == [s.name for s in STEPS if s.kind == "quality"]


def test_a_step_needing_a_program_that_is_not_here_is_unavailable(tmp_path: Path, shared_data: Path) -> None:
    """web-curator drives /usr/bin/chromium: where a needed file is missing the run stops before any
    work, naming it (exit 3 from the command line); where it is there, the need is met."""
    step = dataclasses.replace(by_name()["web-curator"], needs=(f"file:{tmp_path / 'chromium'}",))
    with pytest.raises(StepUnavailable, match=f"web-curator needs {tmp_path / 'chromium'}: install it"):
        reproduce.require([step], shared_data, Context(data=shared_data, work=tmp_path))
    (tmp_path / "chromium").write_text("")
    reproduce.require([step], shared_data, Context(data=shared_data, work=tmp_path))
    assert "file:/usr/bin/chromium" in by_name()["web-curator"].needs


def test_broken_markers_are_a_region_error() -> None:
    text = "a\n<!-- reproduce: x -->\n| t |\n|---|\n"
    with pytest.raises(regions.RegionError, match="expected one"):
        regions.read(text, "x")
    with pytest.raises(regions.RegionError, match="comes before"):
        regions.read("<!-- /reproduce: x -->\n<!-- reproduce: x -->\n", "x")
    assert regions.read(text + "<!-- /reproduce: x -->\n", "x") == "| t |\n|---|\n"


def test_every_table_of_the_docs_is_classified(tmp_path: Path) -> None:
    from figures import classified

    missing, stale = classified.check(REPO)
    assert not missing, "tables docs/reproduce.md does not classify: " + "; ".join(
        f"{t.doc}:{t.line} {t.header}" for t in missing)
    assert not stale, f"lines of docs/reproduce.md that name no table: {stale}"
    # the check itself: a new table in a copy of a doc is caught, and so is a table that went away
    copy = tmp_path / "repo"
    (copy / "docs").mkdir(parents=True)
    (copy / "README.md").write_text((REPO / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    for doc in (REPO / "docs").glob("*.md"):
        (copy / "docs" / doc.name).write_text(doc.read_text(encoding="utf-8"), encoding="utf-8")
    perf = copy / "docs" / "performance.md"
    perf.write_text(perf.read_text(encoding="utf-8") + "\n| new figure | value |\n|---|---|\n| x | 1 |\n",
                    encoding="utf-8")
    missing, _ = classified.check(copy)
    assert [t.header for t in missing] == ["| new figure | value |"]
    stance = copy / "docs" / "stance.md"
    stance.write_text("```\n| run | settings |\n```\n", encoding="utf-8")  # its table gone; a fenced one is no table
    _, stale = classified.check(copy)
    assert stale and {doc for doc, _ in stale} == {"docs/stance.md"}


def test_the_readme_summary_is_built_from_the_performance_tables(tmp_path: Path) -> None:
    """README's performance table copies docs/performance.md's regions: a figure changed there changes the
    copy (and the ratio computed from it); a row gone is a StepFailed naming it."""
    from figures.derived import SourceTableError, readme_performance

    perf = (REPO / "docs" / "performance.md").read_text(encoding="utf-8")
    gate = regions.read(perf, "gate-throughput")
    one_row = next(line for line in gate.splitlines() if line.startswith("| batch, one process"))
    rate = one_row.split("→ ")[1].split(" records/s")[0]
    peer = one_row.split("|")[5].strip().split(" records/s")[0]
    committed = readme_performance(REPO)
    ratio = float(rate.replace(",", "")) / float(peer.replace(",", ""))
    assert f"**{rate} records/s** ({ratio:.1f}×)" in committed
    assert committed == regions.read((REPO / "README.md").read_text(encoding="utf-8"), "performance")
    (tmp_path / "docs").mkdir()
    doubled = f"{2 * int(rate.replace(',', '')):,}"
    edited = regions.replace(perf, "gate-throughput", gate.replace(f"→ {rate} records/s", f"→ {doubled} records/s", 1))
    (tmp_path / "docs" / "performance.md").write_text(edited, encoding="utf-8")
    copy = readme_performance(tmp_path)
    assert f"**{doubled} records/s** ({2 * ratio:.1f}×)" in copy and copy.count("\n") == committed.count("\n")
    gone = regions.replace(perf, "grounder-throughput", "| figure | x |\n|---|---|\n")
    (tmp_path / "docs" / "performance.md").write_text(gone, encoding="utf-8")
    with pytest.raises(SourceTableError, match="throughput once loaded"):
        readme_performance(tmp_path)


def test_the_counts_follow_the_entries_and_an_entry_without_a_class_is_refused(tmp_path: Path) -> None:
    """Counts are per table: a new table named by a "to do" entry adds one to that row and to the total;
    turning its entry into a step moves it; an entry with no class is an error naming it."""
    from figures import classified

    copy = tmp_path / "repo"
    (copy / "docs").mkdir(parents=True)
    (copy / "README.md").write_text((REPO / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    for doc in (REPO / "docs").glob("*.md"):
        (copy / "docs" / doc.name).write_text(doc.read_text(encoding="utf-8"), encoding="utf-8")
    before = classified.counts(copy)
    assert sum(before.values()) == len(classified.tables(REPO))
    assert before["a-step"] >= len([s for s in STEPS if s.region is not None])  # each region holds a table
    web = copy / "docs" / "web.md"
    web.write_text(web.read_text(encoding="utf-8") + "\n| fresh figure | value |\n|---|---|\n| x | 1 |\n",
                   encoding="utf-8")
    listing = copy / "docs" / "reproduce.md"
    text = listing.read_text(encoding="utf-8")
    anchor = "**docs/web.md**\n\n"
    listing.write_text(text.replace(anchor, anchor + "- `| fresh figure | value |` — (a) timing, a tool: to do.\n"),
                       encoding="utf-8")
    after = classified.counts(copy)
    assert after["a-todo"] == before["a-todo"] + 1 and sum(after.values()) == sum(before.values()) + 1
    listing.write_text(text.replace(anchor, anchor + "- `| fresh figure | value |` — (a) step `fresh`.\n"),
                       encoding="utf-8")
    assert classified.counts(copy)["a-step"] == before["a-step"] + 1
    listing.write_text(text.replace(anchor, anchor + "- `| fresh figure | value |` — measured once.\n"),
                       encoding="utf-8")
    with pytest.raises(ValueError, match="fresh figure"):
        classified.counts(copy)


def test_the_fusion_table_names_the_winner_and_says_whether_it_is_the_default() -> None:
    """tools/eval_fusion.py's doc rows: the best SW-RRF and the best RRF k at weight 0.5 are found by
    their tune score, and the winner is called the `hybrid` default only when it is."""
    from eval_fusion import configs, doc_rows

    grid = configs()
    scores = {label: (0.5 + i / 1000, 0.4 + i / 1000) for i, (label, _) in enumerate(grid)}
    scores["SW-RRF k 60 thr 0.7 steep 10"] = (0.9, 0.1)  # the best SW-RRF on tune, whatever its held-out
    scores["RRF k 30 dense weight 0.5"] = (0.95, 0.2)
    table = [(label, cfg, *scores[label]) for label, cfg in grid]
    winner = next(row for row in table if row[0] == "convex dense weight 0.6")
    lines = doc_rows(table, winner, default_weight=0.6)
    assert lines[2].startswith("| bm25 (the lexical pool, today's `ask`) |")
    assert "| SW-RRF k 60, threshold 0.7, steepness 10 (best SW-RRF on tune) | 0.9000 | 0.1000 |" in lines
    assert "| RRF k 30, dense weight 0.5 (best k at weight 0.5 on tune) | 0.9500 | 0.2000 |" in lines
    assert lines[-1].startswith("| **convex, dense weight 0.6 (winner on tune; the `hybrid` default for bge-small)** |")
    assert len(lines) == 2 + 8
    other = doc_rows(table, winner, default_weight=0.7)
    assert "not the `hybrid` default" in other[-1]


def test_the_install_table_has_a_row_for_every_user_extra() -> None:
    """tools/bench_install.py measures every extra a user installs (pyproject's, less the developers'
    test, bench and mutation), and README's words exist for each, naming only figures it measures."""
    import string
    import tomllib

    import bench_install

    extras = set(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
                 ["optional-dependencies"]) - {"test", "bench", "mutation"}
    assert set(bench_install.EXTRAS) == extras | {"core"} == set(bench_install.LABELS)
    source = (REPO / "tools" / "bench_install.py").read_text(encoding="utf-8")
    for extra, (_, _, how) in bench_install.LABELS.items():
        for _, key, _, _ in string.Formatter().parse(how):
            if key is not None:
                assert key == "validate_s" or f'row["{key}"]' in source, (extra, key)
