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


def entries(repo: Path) -> dict[str, list[str]]:
    """docs/reproduce.md's entries, per doc, as written."""
    text = (repo / "docs" / "reproduce.md").read_text(encoding="utf-8")
    out: dict[str, list[str]] = {}
    doc = None
    for line in text[text.index(SECTION):].splitlines():
        heading = _DOC.match(line)
        if heading:
            doc = heading.group(1)
            out.setdefault(doc, [])
            continue
        entry = _ENTRY.match(line)
        if entry and doc is not None:
            out[doc].append(entry.group(2))
    return out


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
