"""Issue 25, cause 1: no command writes onto, or inside, anything its run reads or pins.

The class, not the case: every command of the CLI runs :func:`bioevidence.cli.guard.check_outputs`
before its own code (checked over the whole command tree), and each kind of output (``-o``,
``--output-dir``, ``--records``, a folder a command rewrites) is aimed at a real input of the same run
(a copy of the pinned CIViC corpus, an index built from it, a review queue) and must exit 3 with
every byte of that input unchanged.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from bioevidence.cli import cli
from bioevidence.cli.guard import OUTPUTS, REWRITES
from security.harness import run_cli

REPO = Path(__file__).resolve().parents[2]
RECORDS = REPO / "examples" / "records"
QUESTION = "Do KRAS mutations predict resistance to EGFR inhibitors?"


def leaves(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from leaves(command, (*path, name))
        elif command is not None:
            yield " ".join((*path, name)), command


def test_every_command_that_writes_runs_the_guard_first() -> None:
    writers = []
    for name, command in leaves(cli):
        outputs = {p.name for p in command.params} & (OUTPUTS | REWRITES.get(name, frozenset()))
        if outputs:
            writers.append(name)
            assert getattr(command.callback, "__bioevidence_guarded__", False), f"{name} writes {outputs} unguarded"
    # the commands the issue names are among them (a rename would silently drop one)
    assert {"ask", "answer", "validate", "ground", "build", "ci run", "review decide", "kb build",
            "index build"} <= set(writers), writers


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    for p in sorted(path.rglob("*")) if path.is_dir() else [path]:
        if p.is_file():
            sha.update(str(p.relative_to(path) if path.is_dir() else p.name).encode())
            sha.update(hashlib.sha256(p.read_bytes()).digest())
    return sha.hexdigest()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """A copy of the pinned CIViC corpus, an index built from it and a review queue with entries."""
    root = tmp_path_factory.mktemp("guard")
    shutil.copytree(shared_data / "civic_corpus" / "snapshots", root / "snaps")
    built = run_cli(["index", "build", "snaps", "--index", "ix"], cwd=root, cpu_seconds=600)
    assert built.code == 0, built.stderr
    queued = run_cli(["review", "add", str(RECORDS), "--queue", "q.sqlite"], cwd=root)
    assert queued.code in (0, 2), queued.stderr
    return root


def _refused(world: Path, args: list[str], *watched: str) -> str:
    before = {w: _digest(world / w) for w in watched}
    run = run_cli(args, cwd=world, cpu_seconds=300)
    assert run.code == 3 and not run.traceback, (args, run.code, run.stderr[-2000:])
    assert {w: _digest(world / w) for w in watched} == before, f"{args} changed an input"
    return str(json.loads(run.stderr.splitlines()[-1])["message"])


def test_ask_and_answer_never_write_into_the_pinned_papers_or_the_index(world: Path) -> None:
    pinned = next(p.name for p in sorted((world / "snaps").iterdir()) if p.name.endswith(".xml.gz"))
    for command, target in (("ask", "snaps/literature.json"), ("answer", f"snaps/{pinned}"),
                            ("ask", "ix/index.sqlite"), ("answer", "snaps/new.txt")):
        message = _refused(world, [command, QUESTION, "--index", "ix", "-o", target], "snaps", "ix")
        assert message.startswith(f"--output {target} is inside"), message
    message = _refused(world, ["ask", QUESTION, "--index", "ix", "--records", "snaps/records"], "snaps")
    assert "--records" in message and "snapshot folder" in message
    assert not (world / "snaps" / "new.txt").exists() and not (world / "snaps" / "records").exists()


def test_folders_a_command_fills_stay_out_of_pinned_folders(world: Path) -> None:
    bib = REPO / "examples" / "refs.bib"
    assert "snapshot folder" in _refused(world, ["kb", "build", str(bib), "--kb", "snaps/kb", "--offline"], "snaps")
    assert "snapshot folder" in _refused(world, ["kb", "build", str(bib), "--kb", "snaps", "--offline"], "snaps")
    assert "snapshot folder" in _refused(world, ["index", "build", "snaps", "--index", "snaps/ix"], "snaps")
    # a knowledge base that would rewrite the snapshot folder it reads from
    (world / "kb2" / "snapshots").mkdir(parents=True)
    shutil.copy(world / "snaps" / "literature.json", world / "kb2" / "snapshots" / "literature.json")
    message = _refused(world, ["kb", "build", str(bib), "--kb", "kb2", "--snapshot-dir", "kb2/snapshots",
                               "--offline"], "kb2")
    assert message.startswith("--kb kb2 holds"), message
    assert "snapshot folder" in _refused(world, ["ci", "run", "--files", str(RECORDS / "*.json"), "--snapshot-dir",
                                                 "snaps", "--output-dir", "snaps/out"], "snaps")


def test_review_decide_onto_its_queue_is_refused_before_the_decision_is_appended(world: Path) -> None:
    before = run_cli(["review", "list", "--queue", "q.sqlite", "--status", "all", "--format", "json"], cwd=world)
    for target in ("q.sqlite", "q.sqlite-wal"):
        (world / target).touch(exist_ok=True)
        message = _refused(world, ["review", "decide", "1", "accept", "--reviewer", "orcid:0000-0002-1825-0097",
                                   "--rationale", "r", "--queue", "q.sqlite", "-o", target], "q.sqlite")
        assert "overwrite an input" in message
    after = run_cli(["review", "list", "--queue", "q.sqlite", "--status", "all", "--format", "json"], cwd=world)
    assert after.stdout == before.stdout  # no decision was appended


def test_validate_output_inside_a_folder_it_reads_is_refused(world: Path) -> None:
    shutil.copytree(RECORDS, world / "records", dirs_exist_ok=True)
    message = _refused(world, ["validate", "records", "-o", "records/reports.jsonl"], "records")
    assert "inside the folder records" in message
    ok = run_cli(["validate", "records", "-o", "reports.jsonl"], cwd=world)  # beside it is fine
    assert ok.code == 1 and (world / "reports.jsonl").is_file(), ok.stderr
