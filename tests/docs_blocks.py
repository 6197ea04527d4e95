"""The examples of README.md and docs/*.md, read as a reader reads them (used by tests/test_docs_examples.py).

* :func:`blocks`: the fenced blocks of a document, with the skip marker on the line before a fence
  (``<!-- docs-test: skip (why) -->``);
* :func:`commands`: a shell block cut into the commands a reader types (a command ends where bash
  would run it: continuation lines, ``&&`` at a line's end, quotes and here-documents stay whole);
* :class:`Command` ``.exits`` / ``.prints``: what its trailing comment promises. ``exit 1`` or
  ``exit 0/1/2`` anywhere in the comment is the set of exit codes it may end with (else 0);
  ``prints "TEXT"`` is text it must print (stdout or stderr; ``…`` stands for any text);
* :func:`invocations`: the ``bioevidence`` and ``tools/*.py`` calls in a command with their ``--options``
  (blocks that cannot run are still checked option by option against each command's ``--help``).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHELLS = ("bash", "sh", "shell", "console")
PYTHONS = ("python", "py")
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<why>[^)]+)\)\s*-->")
FENCE = re.compile(r"^(?P<fence>```+|~~~+)(?P<info>.*)$")
EXIT = re.compile(r"\bexit (?P<codes>\d+(?:/\d+)*)\b")
PRINTS = re.compile(r'\bprints "(?P<text>[^"]+)"')
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    info: str
    text: str
    skip: str | None

    @property
    def kind(self) -> str:
        word = self.info.split()[0] if self.info.split() else ""
        return "shell" if word in SHELLS else "python" if word in PYTHONS else ""


@dataclass(frozen=True)
class Command:
    doc: str
    line: int  # of the command's first line in the document
    text: str
    comments: tuple[str, ...] = field(default=())

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def exits(self) -> frozenset[int]:
        found = [m for c in self.comments for m in EXIT.finditer(c)]
        return frozenset(int(x) for m in found for x in m.group("codes").split("/")) if found else frozenset({0})

    @property
    def prints(self) -> tuple[str, ...]:
        return tuple(m.group("text") for c in self.comments for m in PRINTS.finditer(c))


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


def _complete(chunk: str) -> bool:
    """Whether bash would run ``chunk`` as it stands (not waiting for more lines)."""
    if chunk.rstrip().endswith("\\"):
        return False
    checked = subprocess.run(["bash", "-n"], input=chunk + "\n", capture_output=True, text=True, check=False)
    return checked.returncode == 0 and "here-document" not in checked.stderr


def _comments(text: str) -> tuple[str, ...]:
    """The shell comments in ``text``: from a ``#`` starting a word outside quotes to the line's end."""
    found: list[str] = []
    quote, i = "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch == "\\":
            i += 1
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t\n;"):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            found.append(text[i + 1:end])
            i = end
        i += 1
    return tuple(found)


def commands(block: Block) -> list[Command]:
    """The commands of a shell block in order (a console block's ``$`` lines; its other lines are output)."""
    lines = block.text.splitlines()
    if block.info.startswith("console"):
        lines = [line[2:] if line.startswith("$ ") else "" for line in lines]
    out: list[Command] = []
    start, chunk = 0, []
    for n, line in enumerate(lines):
        if not chunk and (not line.strip() or line.lstrip().startswith("#")):
            continue  # blank lines and comment lines between commands
        if not chunk:
            start = n
        chunk.append(line)
        if _complete("\n".join(chunk)):
            comments = _comments("\n".join(chunk))
            out.append(Command(block.doc, block.line + 1 + start, "\n".join(chunk), comments))
            chunk = []
    if chunk:
        raise AssertionError(f"{block.doc}:{block.line + 1 + start}: the block ends inside a command:\n"
                             + "\n".join(chunk))
    return out


@dataclass(frozen=True)
class Invocation:
    program: str  # "bioevidence" or "tools/NAME.py"
    words: tuple[str, ...]  # the words after the program (subcommands, arguments, options)

    @property
    def options(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(w.strip("[]").split("=")[0] for w in self.words
                                   if w.strip("[]").startswith("--") and len(w.strip("[]")) > 2))


def _without_substitutions(text: str) -> str:
    """``$(…)`` (nested or not) replaced by one word: its inside is another command, not arguments."""
    while (start := text.find("$(")) >= 0:
        depth, end = 0, start + 1
        for end in range(start + 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
        text = text[:start] + "SUBSTITUTED" + text[end + 1:]
    return text


def invocations(command: Command) -> list[Invocation]:
    """Each ``bioevidence …`` or ``… tools/X.py …`` call in ``command`` (split at ``&&``, ``|``, ``;``)."""
    text = _without_substitutions("\n".join(line.split(" #")[0] if " #" in line else line
                                            for line in command.text.splitlines()))
    try:
        words = shlex.split(text.replace("\\\n", " "), comments=True)
    except ValueError as exc:  # pragma: no cover - a doc with unbalanced quotes
        raise AssertionError(f"{command.where}: {exc}") from exc
    out: list[Invocation] = []
    current: list[str] | None = None
    program = ""
    at_start = True
    for raw in [*words, "&&"]:
        ends = raw in ("&&", "||", "|", ";", "&") or raw.endswith(";")
        word = raw.rstrip(";") if raw.endswith(";") and raw != ";" else "" if ends else raw
        if word and current is not None:
            current.append(word)
        elif word and at_start and (Path(word).name == "bioevidence"
                                    or (word.startswith("tools/") and word.endswith(".py"))):
            program, current = ("bioevidence" if Path(word).name == "bioevidence" else word), []
        # a command starts a segment, after VAR=value words, after a python launcher, or after ``--``
        at_start = ends or word == "--" or (at_start and (ASSIGNMENT.match(word) is not None
                                                           or Path(word).name.startswith("python")))
        if ends:
            if current is not None:
                out.append(Invocation(program, tuple(current)))
            current = None
    return out


def unknown_options(call: Invocation) -> list[str]:
    """The ``--options`` of ``call`` its command does not declare (click for ours, ``--help`` for a tool)."""
    if call.program == "bioevidence":
        import click

        from bioevidence.cli import cli

        command: click.Command = cli
        path = ["bioevidence"]
        for word in call.words:
            found = command.get_command(click.Context(command), word) if isinstance(command, click.Group) else None
            if found is None:
                break
            command = found
            path.append(word)
        declared = {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
        return [f"{' '.join(path)} {o}" for o in call.options if o not in declared]
    shown = subprocess.run([sys.executable, str(REPO / call.program), "--help"], capture_output=True, text=True,
                           check=False, timeout=60, cwd=REPO)
    if shown.returncode != 0:
        return [f"{call.program} --help failed: {shown.stderr.strip()[-300:]}"]
    return [f"{call.program} {o}" for o in call.options if not re.search(re.escape(o) + r"\b", shown.stdout)]
