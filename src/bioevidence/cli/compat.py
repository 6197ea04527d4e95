"""bioai-evidence-validator 0.8.0's command line, where ours differs (docs/migrating.md).

``generate-schema`` is a real alias. A 0.8.0 command we do not provide answers with one line naming
the command to use here (exit 3), never "no such command": a pipeline written for 0.8.0 learns what
to change from its first run.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ConfigurationError

#: 0.8.0 command → what to use here (the whole of the one-line answer after its name)
NOT_PROVIDED: dict[tuple[str, ...], str] = {
    ("review", "check"): "bioevidence review agreement ANNOTATIONS reads the annotation CSV strictly and prints "
                         "agreement per use",
    ("review", "score"): "score an audit sample with bioevidence review audit-score --manifest M --labels L",
    ("review", "adjudication-sheet"): "disagreements go to the review queue: bioevidence review add RECORDS, "
                                      "then review list and review decide",
    ("review", "freeze"): "pinned files are content-addressed: bioevidence sources pin-local FILES --snapshot-dir "
                          "DIR, then bioevidence sources verify DIR re-hashes them",
    ("canine-panel",): "the canine branches of 0.8.0 are not part of bioevidence",
    ("canine-capture",): "the canine branches of 0.8.0 are not part of bioevidence",
    ("canine-preflight",): "the canine branches of 0.8.0 are not part of bioevidence",
    ("export-canine-panel",): "the canine branches of 0.8.0 are not part of bioevidence",
}


def not_provided(name: tuple[str, ...]) -> ConfigurationError:
    """The one line a 0.8.0-only command or option answers with (exit 3)."""
    what = " ".join(name)
    return ConfigurationError(f"bioevidence has no {what} (a bioai-evidence-validator 0.8.0 command): "
                            f"{NOT_PROVIDED[name]} (docs/migrating.md)")


def _stand_in(name: tuple[str, ...]) -> click.Command:
    def callback(args: tuple[str, ...]) -> None:
        raise not_provided(name)

    return click.Command(name[-1], callback=callback, hidden=True, add_help_option=False,
                         params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
                         context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
                         help=f"0.8.0's {' '.join(name)}: not provided here (docs/migrating.md).")


def stand_ins(group: str | None = None) -> dict[str, click.Command]:
    """The hidden stand-ins for 0.8.0's commands under ``group`` (``None``: the top level)."""
    return {name[-1]: _stand_in(name) for name in NOT_PROVIDED
            if (name[:-1] == (group,) if group else len(name) == 1)}


@click.command("generate-schema", hidden=True)
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the JSON Schema.")
@click.option("--schema", "linkml", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The LinkML schema to compile. Default: the packaged one.")
def generate_schema(output: Path, linkml: Path | None) -> None:
    """0.8.0's generate-schema: compile a LinkML schema to JSON Schema (``schema --generate -o``)."""
    from ..gate.schemagen import render as render_schema
    from ..io import atomic_write_text
    from ..paths import refuse_overwrite
    from ..resources import schema_file

    source = linkml or schema_file("bioevidence_core.yaml")
    refuse_overwrite(output, [source, schema_file("bioevidence_core.yaml")])
    atomic_write_text(output, render_schema(source))
    click.echo(f"wrote {output}", err=True)


def check_schema_option(linkml: Path | None) -> None:
    """``validate --schema PATH``: accepted when it is the packaged LinkML schema (the same bytes);
    any other schema is a usage error, as records are checked against the packaged one only."""
    if linkml is None:
        return
    from ..resources import schema_file

    packaged = schema_file("bioevidence_core.yaml")
    try:
        same = linkml.read_bytes() == packaged.read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"--schema {linkml}: {exc.strerror or exc}") from None
    if not same:
        raise ConfigurationError(f"--schema {linkml} is not the packaged schema: bioevidence checks records against "
                               "its packaged schema only (bioevidence schema prints it); drop --schema "
                               "(docs/migrating.md)")
