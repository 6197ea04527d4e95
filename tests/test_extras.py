"""The core install is what `validate` needs; the rest are extras, and a missing one is one clear line
(issue 13, item 9).

The lean install is reproduced in a child process whose import system refuses every optional module
(as a venv without the extras would), so the real CLI runs without them: `validate` works, and a
command needing an extra prints one JSON line naming ``pip install 'bioevidence[EXTRA]'``, exit 3.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from bioevidence.extras import MODULES

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
TOOLING = {"test", "bench", "mutation", "all"}
# Optional modules, plus what linkml-runtime used to drag into the core at run time.
BLOCKED = sorted({*MODULES, "pytest", "rdflib", "linkml", "pydantic"})

LEAN = """
import sys
blocked = set(sys.argv[1].split(","))
class Refuse:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Refuse)
sys.argv = ["bioevidence", *sys.argv[2:]]
from bioevidence.cli import main
code = main(sys.argv[1:])
leaked = sorted(m for m in sys.modules if m.split(".")[0] in blocked)
assert not leaked, leaked
sys.exit(code)
"""


def lean(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LEAN, ",".join(BLOCKED), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=120)


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_every_extra_is_in_all_and_every_mapped_module_names_a_declared_extra() -> None:
    declared = set(EXTRAS) - TOOLING
    assert set(MODULES.values()) <= declared
    (meta,) = EXTRAS["all"]
    assert set(meta.split("[", 1)[1].rstrip("]").split(",")) == declared, "add the new extra to `all`"


def test_ci_installs_the_test_tools_and_every_extra() -> None:
    line = next(x for x in (REPO / ".ci" / "run").read_text().splitlines() if "pip install -q -e" in x)
    assert re.search(r"-e '\.\[test,all\]'", line), line


def test_ci_sets_ci_itself_before_running_the_tests() -> None:
    """CI=true makes missing real data, models and the reference validator fail instead of skip (item 11)."""
    script = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^export CI=true$", script, re.M)
    assert script.index("export CI=true") < script.index("-m pytest")


def test_the_core_dependencies_hold_no_optional_library() -> None:
    core = _names(PYPROJECT["project"]["dependencies"])
    optional = {n for extra, reqs in EXTRAS.items() if extra not in TOOLING for n in _names(reqs)}
    assert not core & optional
    assert not core & {"linkml-runtime", "openai", "numpy", "bm25s", "pystemmer", "rank-bm25", "jsonschema",
                       "pronto", "pytest"}


def test_validate_runs_without_any_extra() -> None:
    result = lean("validate", "examples/records", "--format", "text")
    assert result.returncode == 1, result.stderr  # one example is rejected
    assert "6 records: 3 admitted, 2 review required, 1 rejected, 0 input errors" in result.stdout


def test_validate_with_grounding_runs_without_any_extra(shared_data: Path) -> None:
    corpus = shared_data / "civic_corpus" / "snapshots"
    result = lean("validate", "examples/records", "--snapshot-dir", corpus, "--format", "jsonl")
    assert result.returncode in (1, 2), result.stderr
    assert all(json.loads(line)["grounding"] for line in result.stdout.splitlines())


@pytest.mark.parametrize(("args", "extra"), [
    pytest.param(["ask", "BRAF V600E and vemurafenib", "--index", "{tmp}/built"], "librarian", id="ask"),
    pytest.param(["search", "BRAF", "--index", "{tmp}/built"], "librarian", id="search"),
    pytest.param(["index", "build", "examples/papers", "--index", "{tmp}/idx"], "librarian", id="index-build"),
    pytest.param(["schema", "--generate"], "schema", id="schema-generate"),
    pytest.param(["validate", "examples/records", "--scheduler", "local:1"], "dask", id="scheduler"),
    pytest.param(["mcp", "--snapshot-dir", "examples"], "mcp", id="mcp"),
    pytest.param(["serve", "--queue", "{tmp}/q.sqlite"], "web", id="serve"),
    pytest.param(["users", "add", "alice", "--role", "admin", "--password-stdin", "--queue", "{tmp}/q.sqlite"],
                 "web", id="users-add"),
])
def test_a_command_needing_a_missing_extra_says_which_in_one_line(tmp_path: Path, args: list[str],
                                                                  extra: str) -> None:
    if "{tmp}/built" in args:  # an index built with the extras, then asked without them
        built = subprocess.run([sys.executable, "-m", "bioevidence", "index", "build", "examples/papers", "--index",
                                str(tmp_path / "built")], cwd=REPO, capture_output=True, text=True, check=False)
        assert built.returncode == 0, built.stderr
    result = lean(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert result.returncode == 3
    (line,) = result.stderr.splitlines()
    error = json.loads(line)
    assert f"pip install 'bioevidence[{extra}]'" in error["message"], error
    assert result.stdout == ""


def test_an_index_encoded_with_minilm_asked_without_the_minilm_extra_names_that_extra(tmp_path: Path) -> None:
    """The kb extra no longer brings PyTorch: an index whose vectors are all-MiniLM-L6-v2's (built before
    bge-small became the default) says which extra reads it, and nothing else is missing."""
    built = subprocess.run([sys.executable, "-m", "bioevidence", "index", "build", "examples/papers", "--index",
                            str(tmp_path / "ix"), "--dense", "--dense-model", "all-MiniLM-L6-v2"], cwd=REPO,
                           capture_output=True, text=True, check=False, timeout=600)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout.splitlines()[-1])["dense"]["model"] == "all-MiniLM-L6-v2"
    minilm_only = ",".join(m for m, extra in MODULES.items() if extra == "minilm")
    result = subprocess.run([sys.executable, "-c", LEAN, minilm_only, "ask", "BRAF V600E and vemurafenib",
                             "--index", str(tmp_path / "ix"), "--retriever", "dense"], cwd=REPO,
                            capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 3, result.stderr
    (line,) = result.stderr.splitlines()
    message = json.loads(line)["message"]
    assert "all-MiniLM-L6-v2" in message and "pip install 'bioevidence[minilm]'" in message, message
    assert result.stdout == ""
