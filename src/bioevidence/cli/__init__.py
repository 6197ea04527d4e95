"""The ``bioevidence`` command line: thin click shells over library calls.

Subcommands live in one module per stage and are imported only when invoked, so
``bioevidence --help`` and ``bioevidence validate`` stay fast. Exit codes: 0 admitted or
success, 1 rejected, 2 review required, 3 input, usage or configuration error (never 2 for a
usage error: 2 means "review").
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from ..errors import BioevidenceError, error_payload, llm_json

# command name -> "module:attribute" (relative to bioevidence.cli); one line per command.
COMMANDS: dict[str, str] = {
    "validate": "gate:validate",
    "profiles": "gate:profiles",
    "rules": "gate:rules",
    "schema": "gate:schema",
    "sources": "sources:sources",
    "ground": "sources:ground",
    "index": "librarian:index",
    "search": "librarian:search",
    "ask": "librarian:ask",
    "demo": "demo:demo",
    "answer": "librarian:answer_command",
    "kb": "kb:kb",
    "kg2bib": "kb:kg2bib",
    "build": "loop:build",
    "draft-schema": "loop:draft_schema",
    "agent": "agent:agent",
    "review": "loop:review",
    "ci": "ci:ci",
    "mcp": "mcp:mcp",
    "serve": "web:serve",
    "stance": "meaning:stance",
    "users": "web:users",
    "generate-schema": "compat:generate_schema",  # 0.8.0's name (docs/migrating.md)
}

EXIT_USAGE = 3


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(f"{__name__}.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("bioevidence"):
                return None
            raise
        command = getattr(module, attr, None)
        if not isinstance(command, click.Command):
            return None
        from .guard import guarded

        return guarded(command)  # no output onto or inside what the run reads (one guard, every command)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                            list[str]]:
        name = args[0] if args else ""
        if args and not name.startswith("-") and self.get_command(ctx, name) is None:
            from .compat import stand_ins

            stand_in = stand_ins().get(name)
            if stand_in is not None:
                return name, stand_in, args[1:]
            ctx.fail(f"No such command {name!r}{did_you_mean(name, self.list_commands(ctx))}")
        return super().resolve_command(ctx, args)


def did_you_mean(name: str, choices: list[str]) -> str:
    """``; did you mean validate?`` for the closest of ``choices`` (or nothing when none is close)."""
    import difflib

    close = difflib.get_close_matches(name, choices, n=2, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else ""


class EntryGroup(LazyGroup):
    """The top-level group: in standalone mode (console script, CliRunner) it maps errors to exit codes."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                                standalone_mode=False, **extra)
        sys.exit(main(list(args) if args is not None else sys.argv[1:]))



@click.group(cls=EntryGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="bioevidence", prog_name="bioevidence")
def cli() -> None:
    """Find, pin, check and fix evidence records for life-science AI.

    \b
    Examples:
      bioevidence validate examples/records/ --format text
      bioevidence validate record.json --profile literature-claim --snapshot-dir snapshots/
      bioevidence profiles
      bioevidence rules --format json
    """


def emit_error(exc: BioevidenceError | Exception, **extra: Any) -> None:
    """One JSON line on stderr, no traceback."""
    click.echo(llm_json(error_payload(exc, **extra)), err=True)  # stderr: invisible characters as \\uXXXX


def main(argv: list[str] | None = None) -> int:
    """Run the CLI without exiting; returns the process exit code (0/1/2 decisions, 3 errors)."""
    try:
        result = cli.main(args=argv, prog_name="bioevidence", standalone_mode=False)
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.UsageError as exc:
        if not _is_bare_group(exc):
            return _usage_error(exc)
        assert exc.ctx is not None
        click.echo(exc.ctx.get_help())  # a group with no command: its help, on stdout, exit 0 (click's way)
        return 0
    except click.Abort:
        click.echo("Aborted.", err=True)
        return EXIT_USAGE
    except BioevidenceError as exc:
        emit_error(exc)
        return exc.exit_code
    except click.ClickException as exc:
        emit_error(exc)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except ImportError as exc:
        from ..extras import missing_extra

        missing = missing_extra(exc)
        if missing is None:
            raise
        emit_error(missing)  # an optional dependency: one line naming the extra, exit 3
        return missing.exit_code
    return int(result or 0) if isinstance(result, int) else 0




def run() -> None:  # pragma: no cover - console script shim
    sys.exit(main())


def _is_bare_group(exc: click.UsageError) -> bool:
    """Whether ``exc`` is click's "no subcommand given" (``bioevidence``, ``bioevidence sources``);
    click before 8.2 prints the help and exits 0 itself."""
    no_args = getattr(click.exceptions, "NoArgsIsHelpError", None)
    return no_args is not None and isinstance(exc, no_args) and exc.ctx is not None


def _usage_error(exc: click.UsageError) -> int:
    # click.UsageError also covers BadParameter/NoSuchOption; exit 3, never 2 (2 means "review").
    # One line, the hint inside it: a pipeline reading stderr gets one JSON object per error.
    hint = f"; see {exc.ctx.command_path} --help" if exc.ctx is not None else ""
    emit_error(click.UsageError(exc.format_message().rstrip(".") + hint))
    return EXIT_USAGE

