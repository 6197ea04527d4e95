"""Every shell example in README.md and docs/*.md runs as written from a fresh clone (issue 13, item 8).

Which blocks: fenced blocks whose info string starts with ``bash``, ``sh``, ``shell`` or ``console``,
in README.md and every ``docs/*.md`` found when the tests run (so the docs of features merged later are
run too). A block that cannot run here says why on the line before its fence::

    <!-- docs-test: skip (needs a Dask cluster at 10.0.0.5) -->

and an untagged block holding a ``bioevidence`` command is an error (tag it so it is run, or mark it).

How: each document gets a fresh copy of the checkout (its tracked and new files: what a clone has),
and its blocks run in order in one ``bash`` there, as a reader would type them, with this
interpreter's ``bioevidence`` first on ``PATH``, an empty ``HOME``, and the network replaced by
loopback servers replaying the recorded real responses (NCBI E-utilities for ``ground``, the
release mirrors for ``sources pull``). A command exiting 0, 1 or 2 (the gate's decisions) is fine;
any other exit code, or a Python traceback through bioevidence, fails the test and names the line. ``pip install`` is
checked, not run: every extra it names must be declared in pyproject.toml (``.ci/run`` installs them).
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from loopback import LoopbackServer
from sources.replay import serve_civic_ncbi, serve_pubmed_efetch

pytestmark = pytest.mark.heavy(seconds=180)  # started first under xdist (tests/conftest.py)

REPO = Path(__file__).resolve().parents[1]
SHELLS = ("bash", "sh", "shell", "console")
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<why>[^)]+)\)\s*-->")
FENCE = re.compile(r"^(?P<fence>```+|~~~+)(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    info: str
    text: str
    skip: str | None


def blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i].strip())
        if not match:
            i += 1
            continue
        fence, info = match.group("fence"), match.group("info").strip()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence)), len(lines))
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        skip = SKIP.search(previous)
        out.append(Block(str(path.relative_to(REPO)), i + 1, info, "\n".join(lines[i + 1:end]),
                         skip.group("why") if skip else None))
        i = end + 1
    return out


DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def runnable(block: Block) -> bool:
    return block.info.split()[:1] != [] and block.info.split()[0] in SHELLS


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(REPO)) for d in DOCS])
def test_commands_sit_in_runnable_blocks(doc: Path) -> None:
    """An example command in an untagged block would never be run: tag it bash (or mark it skipped)."""
    hidden = [f"{b.doc}:{b.line}" for b in blocks(doc) if not b.info and b.skip is None
              and any(re.match(r"\s*(\.venv/bin/)?(bioevidence|python3?|pip) ", line) for line in b.text.splitlines())]
    assert hidden == [], f"commands in untagged blocks (tag them ```bash): {hidden}"


def test_every_skip_marker_says_why_and_sits_on_a_block() -> None:
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in re.finditer(r"<!--\s*docs-test:.*?-->", text):
            assert SKIP.fullmatch(match.group()), f"{doc.name}: {match.group()} (write: <!-- docs-test: skip (why) -->)"


# -- the fresh clone and its world ----------------------------------------------------------------------

def clone(into: Path) -> Path:
    """The files a fresh clone has: tracked plus new, not ignored (else the tree minus local state)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True,
                            check=False)
    target = into / "clone"
    if listed.returncode == 0 and listed.stdout:
        for name in filter(None, listed.stdout.decode().split("\0")):
            source = REPO / name
            if source.is_file():
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name)
    else:  # pragma: no cover - an unpacked source tree without git
        shutil.copytree(REPO, target, ignore=shutil.ignore_patterns(".git", ".venv", ".ci", "__pycache__"))
    return target


PIP = """#!/bin/sh
# docs test stand-in: checks that every extra named exists, installs nothing (.ci/run installed them)
[ "$1" = install ] || { echo "pip stand-in: only 'pip install' appears in the docs" >&2; exit 9; }
shift
for arg in "$@"; do
  case "$arg" in
    -*|.|-e) ;;
    *bioevidence\\[*|.\\[*) extras=$(echo "$arg" | sed 's/.*\\[\\(.*\\)\\].*/\\1/' | tr ',' ' ')
      for e in $extras; do
        grep -q "^$e = " "$DOCS_PYPROJECT" || { echo "no extra $e in pyproject.toml" >&2; exit 9; }
      done ;;
    dask-jobqueue) ;;
    *) echo "pip stand-in: $arg is not a package the docs should install" >&2; exit 9 ;;
  esac
done
"""


@pytest.fixture(scope="module")
def world(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Loopback servers standing in for NCBI and the release mirrors, and the environment pointing at them."""
    root = tmp_path_factory.mktemp("docs-world")
    ncbi, releases = LoopbackServer(), LoopbackServer()
    with ncbi, releases:
        serve_civic_ncbi(ncbi, shared_data / "civic_corpus" / "snapshots")
        serve_pubmed_efetch(ncbi, shared_data)
        declarations = root / "grounders"
        declarations.mkdir()
        for decl in sorted((REPO / "grounders").glob("*.yaml")):
            text = decl.read_text(encoding="utf-8")
            url = re.search(r"^url: (\S+)$", text, re.M)
            name = re.search(r"^file: (\S+)$", text, re.M)
            assert url and name, decl
            data = (shared_data / "references" / name.group(1)).read_bytes()
            served = gzip.decompress(data) if not url.group(1).endswith(".gz") else data
            releases.route(urlsplit(url.group(1)).path, served, content_type="application/octet-stream")
            (declarations / decl.name).write_text(text.replace(url.group(1), releases.url.rstrip("/")
                                                               + urlsplit(url.group(1)).path), encoding="utf-8")
        bin_dir = root / "bin"
        bin_dir.mkdir()
        (bin_dir / "pip").write_text(PIP)
        (bin_dir / "pip").chmod(0o755)
        yield {
            "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin",
                                     "/bin"]),
            "BIOEVIDENCE_EUTILS_URL": ncbi.url,
            "BIOEVIDENCE_GROUNDERS_DIR": str(declarations),
            "DOCS_PYPROJECT": str(REPO / "pyproject.toml"),
            "LANG": "C.UTF-8",
        }


PRELUDE = r"""
set -o pipefail
trap 'rc=$?; if [ $rc -gt 2 ]; then
  echo "DOCS-TEST FAILED (exit $rc) at line $LINENO: $BASH_COMMAND" >&2; exit $rc; fi' ERR
"""


def script(runs: list[Block]) -> str:
    parts = [PRELUDE]
    for b in runs:
        body = "\n".join(line[2:] if b.info.startswith("console") and line.startswith("$ ") else line
                         for line in b.text.splitlines()
                         if not (b.info.startswith("console") and line and not line.startswith("$ ")))
        parts.append(f"# ---- {b.doc}:{b.line}\n{body}\n")
    return "\n".join(parts)


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(REPO)) for d in DOCS])
def test_the_shell_examples_run_as_written_from_a_fresh_clone(doc: Path, world: dict[str, str],
                                                             tmp_path: Path) -> None:
    runs = [b for b in blocks(doc) if runnable(b) and b.skip is None]
    if not runs:
        return  # nothing to run in this document
    where = clone(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = {**world, "HOME": str(home)}  # a new user: every cache, store and release under ~/.cache
    done = subprocess.run(["bash", "-c", script(runs)], cwd=where, env=env, capture_output=True, text=True,
                          check=False, timeout=600)
    # a traceback through our code (Dask's own shutdown logging is not ours)
    assert not re.search(r'File "[^"]*(src|site-packages)/bioevidence/', done.stderr), done.stderr[-3000:]
    assert done.returncode in (0, 1, 2), f"{doc.name}: exit {done.returncode}\n{done.stderr[-3000:]}"


def test_the_runner_catches_a_failing_example_and_an_undeclared_extra(world: dict[str, str], tmp_path: Path) -> None:
    """The harness itself: an example exiting 3 fails with its line; pip of an extra nobody declared fails."""
    for text, needle in (("bioevidence validate no-such-file.json\necho after", "DOCS-TEST FAILED (exit 3)"),
                         ("pip install 'bioevidence[nope]'", "no extra nope in pyproject.toml")):
        done = subprocess.run(["bash", "-c", script([Block("x.md", 1, "bash", text, None)])], cwd=tmp_path,
                              env={**world, "HOME": str(tmp_path)}, capture_output=True, text=True, check=False)
        assert done.returncode > 2 and needle in done.stderr, done.stderr
        assert "after" not in done.stdout
    ok = subprocess.run(["bash", "-c", script([Block("x.md", 1, "bash", "pip install 'bioevidence[dask,llm]'", None)])],
                        cwd=tmp_path, env={**world, "HOME": str(tmp_path)}, capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
