"""Issue 24 item 10: install lines and refs that work today.

bioevidence is not published: the README says so and installs from the clone (or a Git URL) inside
an activated virtual environment; every GitHub Action or pre-commit snippet names a ref that exists
(``main`` until a release is tagged, or one of the repository's tags).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _tags() -> set[str]:
    done = subprocess.run(["git", "tag"], cwd=REPO, capture_output=True, text=True, timeout=60)
    return set(done.stdout.split()) if done.returncode == 0 else set()


def test_every_action_and_hook_snippet_names_a_ref_that_exists() -> None:
    refs = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        refs += [(doc.name, m) for m in re.findall(r"uses: [\w.-]+/bioevidence@([\w./-]+)", text)]
        refs += [(doc.name, m) for m in re.findall(r"repo: https://github\.com/[\w.-]+/bioevidence\n\s+rev: (\S+)",
                                                  text)]
    assert refs, "no snippet found: the README and docs/ci.md show the Action and the hook"
    known = {"main"} | _tags()
    assert [(name, ref) for name, ref in refs if ref not in known] == []


def test_the_readme_installs_what_exists_in_an_activated_venv() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    install = readme.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert "not on PyPI yet" in install
    assert ". .venv/bin/activate" in install and "pip install .\n" in install.replace("  ", "\n").replace("#", "\n")
    assert "git+https://github.com/" in install
    first = next(line for line in install.splitlines() if "pip install" in line)
    assert "pip install bioevidence" not in first  # the first instruction is one that works today
