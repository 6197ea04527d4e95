"""Every example in README.md and docs/*.md does what the docs say, from a fresh clone.

(Issue 13 item 8; issue 24 item 17.)

Which blocks: fenced blocks whose info string starts with ``bash``, ``sh``, ``shell`` or ``console`` (shell)
or ``python``, in README.md and every ``docs/*.md`` found when the tests run (so the docs of features
merged later are run too). A block that cannot run here says why on the line before its fence::

    <!-- docs-test: skip (needs a Dask cluster at 10.0.0.5) -->

and an untagged block holding a ``bioevidence`` command is an error (tag it so it is run, or mark it).

How: each document gets a fresh copy of the checkout (its tracked and new files: what a clone has), and
its blocks run in order in one ``bash`` there, as a reader would type them: shell blocks command by
command (tests/docs_blocks.py cuts them), Python blocks as scripts, with this interpreter's
``bioevidence`` first on ``PATH``, an empty ``HOME``, and the network replaced by loopback servers
replaying the recorded real responses (NCBI E-utilities for ``ground``, the release mirrors for ``sources
pull``, an OpenAI-compatible model server). Each command must end with the exit code its comment states
(``# … exit 1 …``, ``exit 0/1/2``; 0 when it states none) and print what it says it prints (``prints
"ok: … verified"``); a Python traceback through bioevidence fails it. ``pip install`` is checked, not run
(every extra it names must be declared in pyproject.toml; ``.ci/run`` installs them), and ``python3 -m
venv`` makes a stand-in venv whose ``bioevidence`` is this one. A skipped block is still checked: every
``--option`` of each ``bioevidence`` or ``tools/*.py`` call in it must be one that command declares.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from docs_blocks import REPO, Block, Command, blocks, commands, invocations, unknown_options
from docs_blocks import SKIP as DOCS_SKIP
from loopback import LoopbackServer
from model_server import ChatReplayServer
from sources.replay import serve_civic_ncbi, serve_pubmed_efetch

pytestmark = pytest.mark.heavy(seconds=60)  # started first under xdist (tests/conftest.py)

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
IDS = [str(d.relative_to(REPO)) for d in DOCS]


@pytest.mark.parametrize("doc", DOCS, ids=IDS)
def test_commands_sit_in_runnable_blocks(doc: Path) -> None:
    """An example command in an untagged block would never be run: tag it bash (or mark it skipped)."""
    hidden = [f"{b.doc}:{b.line}" for b in blocks(doc) if not b.info and b.skip is None
              and any(re.match(r"\s*(\.venv/bin/)?(bioevidence|python3?|pip) ", line) for line in b.text.splitlines())]
    assert hidden == [], f"commands in untagged blocks (tag them ```bash): {hidden}"


def test_every_skip_marker_says_why_and_sits_on_a_block() -> None:
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in re.finditer(r"<!--\s*docs-test:.*?-->", text):
            assert DOCS_SKIP.fullmatch(match.group()), \
                f"{doc.name}: {match.group()} (write: <!-- docs-test: skip (why) -->)"


@pytest.mark.parametrize("doc", DOCS, ids=IDS)
def test_every_option_a_skipped_example_uses_exists(doc: Path) -> None:
    """Blocks that cannot run here (servers, benchmarks, clusters) still name only real options."""
    unknown = [f"{c.where}: {u}" for b in blocks(doc) if b.kind == "shell" and b.skip is not None
               for c in commands(b) for call in invocations(c) for u in unknown_options(call)]
    assert unknown == [], f"options no command declares: {unknown}"


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

# ``python3 -m venv DIR``: a venv whose python, pip (the stand-in) and bioevidence are this run's; any other
# python3 call is this interpreter
PYTHON3 = """#!/bin/sh
if [ "$1" = -m ] && [ "$2" = venv ] && [ -n "$3" ]; then
  mkdir -p "$3/bin" || exit 1
  for name in python python3; do printf '#!/bin/sh\\nexec "%s" "$@"\\n' "$DOCS_PYTHON" > "$3/bin/$name"; done
  printf '#!/bin/sh\\nexec "%s" "$@"\\n' "$DOCS_BIOEVIDENCE" > "$3/bin/bioevidence"
  cp "$DOCS_PIP" "$3/bin/pip"
  printf 'PATH="%s/bin:$PATH"; export PATH\\n' "$(cd "$3" && pwd)" > "$3/bin/activate"
  chmod +x "$3/bin/python" "$3/bin/python3" "$3/bin/bioevidence" "$3/bin/pip"
  exit 0
fi
exec "$DOCS_PYTHON" "$@"
"""


def _tool(folder: Path, name: str, text: str) -> Path:
    (folder / name).write_text(text, encoding="utf-8")
    (folder / name).chmod(0o755)
    return folder / name


@pytest.fixture(scope="module")
def world(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Loopback servers standing in for NCBI, the release mirrors and a model server; the environment."""
    root = tmp_path_factory.mktemp("docs-world")
    ncbi, releases = LoopbackServer(), LoopbackServer()
    model = ChatReplayServer([json.dumps({"gene": "BRAF"})])  # the reply of docs/agent.md's example
    with ncbi, releases, model:
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
        pip = _tool(bin_dir, "pip", PIP)
        _tool(bin_dir, "python3", PYTHON3)
        here = Path(sys.executable).parent
        yield {
            "PATH": os.pathsep.join([str(bin_dir), str(here), "/usr/local/bin", "/usr/bin", "/bin"]),
            "BIOEVIDENCE_EUTILS_URL": ncbi.url,
            "BIOEVIDENCE_GROUNDERS_DIR": str(declarations),
            "OPENAI_BASE_URL": model.base_url,
            "DOCS_PYPROJECT": str(REPO / "pyproject.toml"),
            "DOCS_PYTHON": sys.executable,
            "DOCS_BIOEVIDENCE": str(here / "bioevidence"),
            "DOCS_PIP": str(pip),
            "LANG": "C.UTF-8",
        }


# -- running a document ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Ran:
    command: Command
    exit: int | None  # None: never reached (the script stopped before it)
    out: str
    err: str

    def problems(self) -> list[str]:
        c = self.command
        if self.exit is None:
            return [f"{c.where}: never ran (the script stopped before it)"]
        found = []
        if self.exit not in c.exits:
            found.append(f"{c.where}: exit {self.exit}, the docs say exit {'/'.join(map(str, sorted(c.exits)))}")
        shown = self.out + self.err
        found += [f"{c.where}: does not print {text!r}" for text in c.prints
                  if not re.search(".*?".join(map(re.escape, text.split("…"))), shown, re.S)]
        if re.search(r'File "[^"]*(src|site-packages)/bioevidence/', self.err):  # ours (not Dask's shutdown log)
            found.append(f"{c.where}: a traceback through bioevidence")
        return [f"{p}\n  $ {c.text}\n  {self.err.strip()[-1500:]}" for p in found]


def python_command(block: Block, log: Path, n: int) -> Command:
    """A Python block as one command: the block saved as a script, run by the clone's ``python``."""
    script = log / f"{n}.py"
    script.write_text(block.text + "\n", encoding="utf-8")
    return Command(block.doc, block.line + 1, f"python {shlex.quote(str(script))}")


def run_document(runs: list[Block], where: Path, env: dict[str, str], log: Path) -> list[Ran]:
    """Every command of ``runs`` in one bash in ``where``, each one's exit and output kept apart."""
    log.mkdir(exist_ok=True)
    todo: list[Command] = []
    for b in runs:
        todo += commands(b) if b.kind == "shell" else [python_command(b, log, len(todo))]
    parts = ["set -o pipefail"]
    for n, c in enumerate(todo):
        parts.append(f"# ---- {c.where}\n{{ {c.text}\n}} >{log}/{n}.out 2>{log}/{n}.err </dev/null\n"
                     f"__rc=$?; echo $__rc >{log}/{n}.rc; (exit $__rc)")
    subprocess.run(["bash", "-c", "\n".join(parts)], cwd=where, env=env, capture_output=True, text=True,
                   check=False, timeout=900)
    def read(p: Path) -> str:
        return p.read_text(encoding="utf-8", errors="replace") if p.exists() else ""

    done = []
    for n, c in enumerate(todo):
        rc = log / f"{n}.rc"
        done.append(Ran(c, int(rc.read_text()) if rc.exists() else None, read(log / f"{n}.out"),
                        read(log / f"{n}.err")))
    return done


@pytest.mark.parametrize("doc", DOCS, ids=IDS)
def test_the_examples_do_what_the_docs_say_from_a_fresh_clone(doc: Path, world: dict[str, str],
                                                              tmp_path: Path) -> None:
    runs = [b for b in blocks(doc) if b.kind and b.skip is None]
    if not runs:
        return  # nothing to run in this document
    where = clone(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = {**world, "HOME": str(home)}  # a new user: every cache, store and release under ~/.cache
    ran = run_document(runs, where, env, tmp_path / "log")
    problems = [p for r in ran for p in r.problems()]
    assert problems == [], "\n".join(problems)


def test_the_runner_catches_a_wrong_exit_a_failure_before_and_a_missing_output(world: dict[str, str],
                                                                               tmp_path: Path) -> None:
    """The harness itself, on examples that are wrong in each way it must catch."""
    def check(text: str, kind: str = "bash") -> list[str]:
        ran = run_document([Block("x.md", 1, kind, text, None)], tmp_path, {**world, "HOME": str(tmp_path)},
                           tmp_path / f"log{len(list(tmp_path.iterdir()))}")
        return [p for r in ran for p in r.problems()]

    assert check("bioevidence validate no-such-file.json")[0].startswith("x.md:2: exit 3, the docs say exit 0")
    assert "exit 3, the docs say exit 0" in check("bioevidence validate no-such-file.json && echo after")[0]
    assert check("bioevidence validate no-such-file.json   # one clear line, exit 3") == []
    assert "does not print 'ok: … verified'" in check('echo ok: 3 files   # prints "ok: … verified"')[0]
    assert check('echo ok: 3 files verified   # prints "ok: … verified"') == []
    assert "no extra nope in pyproject.toml" in check("pip install 'bioevidence[nope]'")[0]
    assert check("pip install 'bioevidence[dask,llm]'") == []
    assert check("false") and check("cd /nonexistent") and check("import sys; sys.exit(4)", "python")
    assert check("python3 -m venv v && . v/bin/activate && bioevidence --version | grep -q bioevidence") == []
    # ``echo $?`` sees the previous example's exit, as a reader's shell does
    assert check("bioevidence validate no-such-file.json  # exit 3\n[ $? = 3 ]") == []
