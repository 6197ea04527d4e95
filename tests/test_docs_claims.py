"""Claims with tests (issue 30 item 3): every figure the docs state names what shows it, and what they
name exists.

**Sections with figures name a test or a tool.** README.md and every ``docs/**/*.md`` are cut into
sections at headings of level 1 to 4 (``#`` to ``####`` at the start of a line). A line of a section
holds a *figure* when it has a percentage, a rate (``N/s``, ``N records/s``, ``N pairs/s``), a time in
``ms``, a size in ``MB``, a factor (``1.77×``), ``nDCG``, or a decimal ``0.xx`` (two digits or more).
A section with a figure must *name* something that shows it: a path ``tools/….py`` or ``tests/….py``,
a test function or file (``test_…``), or a ``reproduce: STEP`` region marker (``tools/reproduce.py``
regenerates the region); or say plainly that nothing does, with the words ``not regenerated`` (a
record of a measurement made once, as docs/reproduce.md classifies such tables). The remedy for a
failure is a reference to what measures the figure or holds the limit, never to something unrelated.

Fenced code blocks (```` ``` ```` or ``~~~``) are skipped for figures and headings: a figure in a shell
example is not a claim, and a ``#`` comment in one is not a heading. A name inside a block counts (a
command that runs the tool names it), and so does one in an HTML comment. Heading lines are not read
for figures. A file that a ``tools/reproduce.py`` step writes whole (region ``None`` in
``tools/figures/steps.py``: the docs/cases/*.md tables) is named by its step and checked byte for byte
by tests/cases/, so it is not scanned (an edit there would be overwritten by the next ``--write``).

**What the docs name exists.** Every ``tools/….py`` and ``tests/….py`` path in README.md and the docs
exists in the repository, and every ``PATH.py::NAME`` names a function, class or assignment in that
file. Every bare ``test_…`` name (not part of a path) is a test function defined under tests/, or, when
it ends in ``.py``, a test file under tests/ or tools/. Two forms record files that left the tree and
are not checked: ``REV:tools/x.py`` (as in ``git show REV:tools/x.py``) and a path followed by the word
``removed``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

from figures.steps import STEPS  # noqa: E402

HEADING = re.compile(r"^#{1,4} ")
FENCE = re.compile(r"^\s*(```|~~~)")
FIGURE = re.compile(r"\d[\d,.]*\s?(%|[a-z]*/s\b|ms\b|MB\b|×)|nDCG|\b0\.\d{2,}")
NAMED = re.compile(r"tools/[\w/.-]+\.py|tests/[\w/.-]+\.py|\btest_\w+|reproduce: |\bnot regenerated\b")
# A cited path: not preceded by a word character, "/", "." or ":" (so ``../tools/x.py``, ``my_tools/x.py``
# and ``REV:tools/x.py`` are not read as citations of this repository's files).
CITED_PATH = re.compile(r"(?<![\w/.:-])((?:tools|tests)/[\w/.-]+?\.py)(?:::(\w+))?(?P<after>`? removed)?")
BARE_TEST = re.compile(r"(?<![\w/.:-])(test_\w+(?:\.py)?)")


@dataclass(frozen=True)
class Section:
    doc: str
    heading: str
    lines: tuple[str, ...]  # every line under the heading, fenced blocks included
    prose: tuple[str, ...]  # the lines outside fenced blocks, the heading excluded


def documents() -> list[Path]:
    """README.md and every markdown file under docs/, in a fixed order."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def generated_whole() -> set[Path]:
    """The docs a ``tools/reproduce.py`` step writes whole (no marked region)."""
    return {step.path.resolve() for step in STEPS if step.region is None}


def sections(text: str, doc: str) -> Iterator[Section]:
    """The markdown ``text`` of ``doc`` cut at headings of level 1 to 4 outside fenced blocks; the text
    before the first heading is a section with an empty heading."""
    heading, lines, prose, fenced = "", list[str](), list[str](), False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            lines.append(line)
            continue
        if not fenced and HEADING.match(line):
            if lines:
                yield Section(doc, heading, tuple(lines), tuple(prose))
            heading, lines, prose = line, [line], []
            continue
        lines.append(line)
        if not fenced:
            prose.append(line)
    if lines:
        yield Section(doc, heading, tuple(lines), tuple(prose))


def unnamed(text: str, doc: str) -> Iterator[tuple[Section, list[str]]]:
    """The sections of ``text`` with a figure outside code that name no test, tool or reproduce region,
    each with its lines holding figures."""
    for section in sections(text, doc):
        figures = [line for line in section.prose if FIGURE.search(line)]
        if figures and not any(NAMED.search(line) for line in section.lines):
            yield section, figures


def unnamed_claims() -> list[str]:
    """One line per section of the docs with a figure that names nothing that shows it."""
    skipped = generated_whole()
    found = []
    for path in documents():
        if path.resolve() in skipped:
            continue
        for section, figures in unnamed(path.read_text(encoding="utf-8"), str(path.relative_to(REPO))):
            found.append(f"{section.doc}: {section.heading or '(before the first heading)'!r}: "
                         f"{len(figures)} line(s) with figures, e.g. {figures[0].strip()[:100]!r}")
    return found


def defines(path: Path, name: str) -> bool:
    """Whether ``path`` defines ``name`` at any level (a function, a class or an assignment)."""
    pattern = re.compile(rf"^\s*(?:(?:async\s+)?def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*[:=]", re.M)
    return bool(pattern.search(path.read_text(encoding="utf-8")))


def missing_citations() -> list[str]:
    """One line per cited path, ``PATH::NAME`` or bare test name that is not in the repository."""
    test_functions = {m.group(1) for p in (REPO / "tests").rglob("*.py")
                      for m in re.finditer(r"^\s*(?:async\s+)?def\s+(test_\w+)", p.read_text(encoding="utf-8"), re.M)}
    test_files = {p.name for folder in ("tests", "tools") for p in (REPO / folder).rglob("test_*.py")}
    missing = []
    for path in documents():
        doc = str(path.relative_to(REPO))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in CITED_PATH.finditer(line):
                cited, name = REPO / m.group(1), m.group(2)
                if m.group("after"):
                    continue  # "`tools/x.py` removed": a record of a file that left the tree
                if not cited.is_file():
                    missing.append(f"{doc}:{number}: {m.group(1)} does not exist")
                elif name and not defines(cited, name):
                    missing.append(f"{doc}:{number}: {m.group(1)} defines no {name}")
            for m in BARE_TEST.finditer(line):
                word = m.group(1)
                known = test_files if word.endswith(".py") else test_functions
                if word not in known:
                    kind = "file" if word.endswith(".py") else "function"
                    missing.append(f"{doc}:{number}: {word} is no test {kind}")
    return missing


def test_every_section_with_figures_names_a_test_a_tool_or_a_reproduce_step() -> None:
    found = unnamed_claims()
    assert not found, ("sections state figures but name no tests/….py, tools/….py, test_… or reproduce: "
                       "region; name what shows them, or say they are not regenerated:\n" + "\n".join(found))


def test_every_cited_test_and_tool_exists() -> None:
    missing = missing_citations()
    assert not missing, "the docs cite what is not in the repository:\n" + "\n".join(missing)


def test_the_scan_reads_figures_outside_code_and_names_anywhere() -> None:
    """The heuristics on a small document: a figure in a fenced block or in a heading is not a claim; a
    ``#`` comment in a block is not a heading; a name in a block counts."""
    text = ("# Title\n\nNo figures here.\n\n## Fast\n\nIt runs at 1,200 records/s.\n\n"
            "## Shell only\n\n```bash\ntime run  # 35 ms\n# a comment, not a heading: 50 MB\n```\n\n"
            "## Named in a block\n\nIt takes 12 ms.\n\n```bash\n.venv/bin/python tools/bench_gate.py\n```\n\n"
            "## Heading with 0.75\n\nText.\n")
    assert [s.heading for s in sections(text, "example.md")] == [
        "# Title", "## Fast", "## Shell only", "## Named in a block", "## Heading with 0.75"]
    assert [s.heading for s, _ in unnamed(text, "example.md")] == ["## Fast"]
