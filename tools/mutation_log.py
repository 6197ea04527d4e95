"""The bookkeeping of ``tools/mutation.py --recheck`` (issue 30): the log each recheck appends to, what it
counts as killed, and applying a mutant that ``mutmut show`` prints to today's source as plain code."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _applied_log(where: Path) -> Path:
    """Where ``--recheck --applied`` records each mutant it ran (one JSON object a line, appended)."""
    return where.parent / f"{where.name}-applied.jsonl"


def _tests_version(tests: list[str], keyword: str = "") -> str:
    """SHA-256 of the named tests' files as they are now, with the selection: what a recheck ran."""
    digest = hashlib.sha256(keyword.encode())
    for name in tests:
        path = ROOT / name.split("::", 1)[0]
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(file.relative_to(ROOT)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def _applied_rows(where: Path) -> list[dict[str, object]]:
    log = _applied_log(where)
    if not log.is_file():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


#: exits of a test process a mutant crashed: killed by the kernel (out of memory: SIGKILL), a segfault, an abort.
#: SIGTERM and SIGINT are not here: they are how a recheck is stopped by hand.
CRASHED = (-9, -11, -6)


def killed_by_recheck(where: Path) -> set[str]:
    """The mutants of the run in ``where`` that a later ``--recheck --applied`` killed (the tests failed, timed
    out, or their process crashed: a mutant that makes the tests run out of memory is detected)."""
    return {str(r["mutant"]) for r in _applied_rows(where) if r.get("killed") or r.get("exit") in CRASHED}


def rechecked_alive(where: Path) -> set[str]:
    """The mutants a ``--recheck --applied`` ran to the end with every test passing (exit 0)."""
    return {str(r["mutant"]) for r in _applied_rows(where) if not r.get("killed") and r.get("exit") == 0}


def _apply_by_lines(source: str, shown: str) -> str | None:
    """``source`` with ``mutmut show``'s hunk applied line by line, compared without indentation (mutmut
    shows a method dedented, but not its continuation lines); None unless the hunk's old lines occur
    exactly once. Context lines stay as in ``source``; an added line takes the indentation of the line it
    replaces (inside brackets or after a backslash, indentation is free)."""
    full = [(line[0], line[1:]) for line in shown.splitlines()
            if line[:1] in (" ", "-", "+") and not line.startswith(("---", "+++"))]
    changed = [i for i, (tag, _) in enumerate(full) if tag != " "]
    if not any(tag == "-" for tag, _ in full):
        return None
    lines = source.split("\n")
    stripped = [line.strip() for line in lines]
    # the whole hunk first, then with fewer context lines (code added since the run around the change)
    for before, after in sorted({(b, a) for b in range(4) for a in range(4)}, key=lambda ba: -sum(ba)):
        hunk = full[max(0, changed[0] - before): changed[-1] + 1 + after]
        old = [text.strip() for tag, text in hunk if tag != "+"]
        starts = [i for i in range(len(lines) - len(old) + 1) if stripped[i:i + len(old)] == old]
        if len(starts) == 1:
            break
    else:
        return None
    at, out, pad, previous = starts[0], [], "", " "
    for tag, text in hunk:
        if tag == " ":
            out.append(lines[at])
            at += 1
        elif tag == "-":
            if previous != "-":  # a run of removed lines: the added ones take its first line's indentation
                pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
            at += 1
        else:
            out.append(pad + text.strip())
        previous = tag
    begin = starts[0]
    return "\n".join(lines[:begin] + out + lines[begin + len(old):])


def _cap_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))


def diff(where: Path, mutant: str) -> str:
    shown = subprocess.run([sys.executable, "-m", "mutmut", "show", mutant], cwd=where, capture_output=True,
                           text=True)
    return shown.stdout.strip()


#: what ``mutmut show`` prints for each mutant named on stdin (a JSON list), as one JSON object on stdout,
#: every source file's mutation data loaded once
_SHOW_ALL = """
import json, sys
from mutmut.mutation.data import SourceFileMutationData
from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code
from mutmut.utils.file_utils import walk_mutatable_files
wanted, out = set(json.load(sys.stdin)), {}
for path in walk_mutatable_files():
    data = SourceFileMutationData(path=path)
    data.load()
    for name, code in data.exit_code_by_key.items():
        if name in wanted:
            shown = f"# {name}: {status_by_exit_code[code]}\\n" + get_diff_for_mutant(name, path=data.path)
            out[name] = shown.strip()
json.dump(out, sys.stdout)
"""


def diffs(where: Path, mutants: list[str]) -> dict[str, str]:
    """:func:`diff` of each mutant in one process: ``mutmut show`` once a mutant costs a Python start and
    mutmut's import, about 0.65 s, nine minutes of the quotes group's run. A mutant mutmut does not list
    is left out (:func:`diff` then says so)."""
    run = subprocess.run([sys.executable, "-c", _SHOW_ALL], cwd=where, input=json.dumps(mutants),
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"reading the mutants' diffs failed in {where}: {run.stderr.strip()[-800:]}")
    found: dict[str, str] = json.loads(run.stdout)
    return found
