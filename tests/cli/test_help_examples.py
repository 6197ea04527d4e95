"""Every command's help has examples, and every example names a real command and real options
(issue 13, item 7): walking the whole command tree, so a command added later without examples fails."""

from __future__ import annotations

import re
import shlex

import click
import pytest

from bioevidence.cli import cli

CTX = click.Context(cli)


def leaves(group: click.Group = cli, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    out = []
    for name in group.list_commands(CTX):
        command = group.get_command(CTX, name)
        assert command is not None, name
        if command.hidden:  # 0.8.0's names (docs/migrating.md, tests/cli/test_migrating.py): not in any help
            continue
        if isinstance(command, click.Group):
            out += leaves(command, (*path, name))
        else:
            out.append(((*path, name), command))
    return out


LEAVES = leaves()


def examples(command: click.Command) -> list[str]:
    text = (command.help or "").split("Examples:", 1)[-1] if "Examples:" in (command.help or "") else ""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [line.strip() for line in joined.splitlines() if "bioevidence " in line]


def resolve(tokens: list[str]) -> tuple[click.Command, list[str]]:
    command: click.Command = cli
    rest = tokens[tokens.index("bioevidence") + 1:]
    while isinstance(command, click.Group) and rest and (sub := command.get_command(CTX, rest[0])) is not None:
        command, rest = sub, rest[1:]
    return command, rest


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=[" ".join(p) for p, _ in LEAVES])
def test_help_shows_examples_that_use_real_options(path: tuple[str, ...], command: click.Command) -> None:
    shown = examples(command)
    assert shown, f"bioevidence {' '.join(path)} --help has no Examples: section"
    for line in shown:
        for part in re.split(r"&&|;|\|", line.split("  #")[0]):  # each command of a pipeline or a chain
            tokens = shlex.split(part)
            if "bioevidence" not in tokens:
                continue
            target, rest = resolve(tokens)
            assert not isinstance(target, click.Group), line
            known = {opt for p in target.params for opt in (*p.opts, *p.secondary_opts)}
            for token in rest:
                if token.startswith("--"):
                    assert token.split("=", 1)[0] in known, f"{line}: {token} is not an option of {target.name}"
