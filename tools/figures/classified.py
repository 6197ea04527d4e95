"""Every table of README.md and docs/*.md is classified in docs/reproduce.md: the check.

docs/reproduce.md lists, under a bold ``**doc**`` line per doc, one entry per table by its header row
(``- `| a | b | c |` — (a) …``); an entry may stop early with a ``…`` cell (``| a | b | … |`` names any
table whose header starts ``| a | b |``). Bold marks and backticks inside cells are ignored. A table in
a fenced code block is an example, not a table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SECTION = "## Every table of the docs, classified"
_DOC = re.compile(r"\*\*(README\.md|docs/[\w/.-]+\.md)\*\*")
_ENTRY = re.compile(r"- (`+) ?(\|.*?\|) ?\1")
_CLASS = re.compile(r"— \((a, no generator[^)]*|a|b|c|r)\)")
#: The rows of the counts table, in order: (key, what the class means).
CLASSES = (
    ("a-step", "(a) figures a step of `tools/reproduce.py` regenerates and checks"),
    ("a-todo", "(a) figures a maintained tool prints, no step yet (to do, with the reason)"),
    ("a-other", "(a) figures measured by hand with no generator, or a summary of the steps"),
    ("b", "(b) the record of an experiment not adopted"),
    ("r", "(r) a dated record of adopted code that has changed since"),
    ("c", "(c) not figures: reference tables"),
)


@dataclass(frozen=True)
class Table:
    doc: str
    line: int
    header: str


def cells(row: str) -> list[str]:
    return [cell.strip().replace("**", "").replace("`", "") for cell in row.strip().strip("|").split("|")]


def tables(repo: Path) -> list[Table]:
    """The header row of every markdown table of README.md and docs/*.md (code blocks skipped)."""
    found: list[Table] = []
    for path in [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]:
        fenced = False
        previous = ""
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced and line.startswith("|") and not previous.startswith("|"):
                found.append(Table(str(path.relative_to(repo)), number, line))
            previous = "" if fenced else line
    return found


def _lines(repo: Path) -> list[tuple[str, str | None, str]]:
    """docs/reproduce.md's classification section, line by line: (doc, the entry's header row or None, the
    line), from the first bold doc heading on."""
    text = (repo / "docs" / "reproduce.md").read_text(encoding="utf-8")
    out: list[tuple[str, str | None, str]] = []
    doc = None
    for line in text[text.index(SECTION):].splitlines():
        heading = _DOC.match(line)
        if heading:
            doc = heading.group(1)
            out.append((doc, None, line))
        elif doc is not None:
            entry = _ENTRY.match(line)
            out.append((doc, entry.group(2) if entry else None, line))
    return out


def entries(repo: Path) -> dict[str, list[str]]:
    """docs/reproduce.md's entries, per doc, as written."""
    out: dict[str, list[str]] = {}
    for doc, entry, _ in _lines(repo):
        out.setdefault(doc, [])
        if entry is not None:
            out[doc].append(entry)
    return out


def entry_classes(repo: Path) -> dict[tuple[str, str], str]:
    """Each entry's class key (``CLASSES``), by (doc, entry): ``(a)`` split by whether its text names a
    step of reproduce.py, says "to do", or neither."""
    out: dict[tuple[str, str], str] = {}
    for doc, entry, line in _lines(repo):
        if entry is None:
            continue
        found = _CLASS.search(line)
        if found is None:
            raise ValueError(f"docs/reproduce.md: the entry {entry} of {doc} names no class "
                             "((a), (b), (c), (r))")
        kind = found.group(1)
        if kind == "a":
            tail = line[found.end():]
            kind = "a-todo" if "to do" in tail else "a-step" if re.search(r"\bsteps? `", tail) else "a-other"
        elif kind.startswith("a, no generator"):
            kind = "a-other"
        out[(doc, entry)] = kind
    return out


def counts(repo: Path) -> dict[str, int]:
    """How many tables of README.md and docs/*.md each class holds (a table counts under the first entry
    naming it)."""
    listed = entries(repo)
    kinds = entry_classes(repo)
    out = {key: 0 for key, _ in CLASSES}
    for table in tables(repo):
        hit = next((entry for entry in listed.get(table.doc, []) if names(entry, table.header)), None)
        if hit is not None:
            out[kinds[(table.doc, hit)]] += 1
    return out


def counts_table(repo: Path) -> str:
    """The counts as docs/reproduce.md shows them (the step ``reproduce-classes``)."""
    found = counts(repo)
    rows = ["| class | tables |", "|---|---|"]
    rows += [f"| {label} | {found[key]} |" for key, label in CLASSES]
    rows.append(f"| every table of README.md and docs/*.md | {sum(found.values())} |")
    return "\n".join(rows) + "\n"


def names(entry: str, header: str) -> bool:
    """Whether a classification entry names a table with this header row."""
    wanted, got = cells(entry), cells(header)
    if "…" in wanted:
        cut = wanted.index("…")
        return got[:cut] == wanted[:cut]
    return got == wanted


def check(repo: Path) -> tuple[list[Table], list[tuple[str, str]]]:
    """Tables no entry names, and entries that name no table (stale)."""
    listed = entries(repo)
    missing: list[Table] = []
    used: set[tuple[str, str]] = set()
    for table in tables(repo):
        hits = [entry for entry in listed.get(table.doc, []) if names(entry, table.header)]
        if not hits:
            missing.append(table)
        used.update((table.doc, entry) for entry in hits)
    stale = [(doc, entry) for doc, rows in listed.items() for entry in rows if (doc, entry) not in used]
    return missing, stale
