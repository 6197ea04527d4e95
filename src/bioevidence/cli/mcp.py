"""``bioevidence mcp``: the librarian, the gate and the loop as an MCP server (``bioevidence[mcp]``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from .gate import _grounder_options, _grounding_options
from .model import model_options


@click.command()
@click.option("--http", "use_http", is_flag=True,
              help="Serve streamable HTTP instead of stdio, behind a bearer token: $BIOEVIDENCE_MCP_TOKEN, else one "
                   "generated and printed once on stderr.")
@click.option("--no-token", is_flag=True,
              help="--http on 127.0.0.1 without a token: any local user can then call every tool, ground included.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address for --http; anything but loopback needs $BIOEVIDENCE_MCP_TOKEN.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port for --http (0: any free port; the URL is printed on stderr).")
@click.option("--profile", "profiles", multiple=True, metavar="NAME|FILE",
              help="Profile for records (built-in name or YAML path); repeatable, the first is the default. "
                   "Tools may name these or a built-in, never a path.")
@click.option("--no-grounding", is_flag=True,
              help="Check no quote against its paper, as `validate --no-grounding` (the report records it).")
@click.option("--index", "index_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Local librarian index for the ask tool (bioevidence index build).")
@click.option("--references", type=click.Path(file_okay=False, path_type=Path),
              help="Folder holding the pinned HGNC and Cell Ontology releases for the librarian.")
@click.option("--planner", type=click.Choice(["offline", "llm"]), default="offline", show_default=True)
@click.option("--judge", type=click.Choice(["offline", "llm"]), default="offline", show_default=True)
@click.option("--stance", type=click.Choice(["offline", "llm"]), default="offline", show_default=True,
              help="offline: the stance model after the relevance rule (no weights ship today: undetermined); "
                   "llm: the model labels the sentences ask returns that are about the question.")
@click.option("--vocabulary", "vocabularies", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Extra planner vocabulary (as `bioevidence ask --vocabulary`); repeatable.")
@model_options("Model for --planner llm / --judge llm / --stance llm and the answer tool's synthesis (as the "
               "server lists it at /v1/models).")
@click.option("--workspace", type=click.Path(file_okay=False, path_type=Path), envvar="BIOEVIDENCE_WORKSPACE",
              help="Folder whose record files validate_record may read by path (none: records inline only). "
                   "[BIOEVIDENCE_WORKSPACE]")
@click.option("--rounds", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Rounds of the loop revise_step plays (a call may ask for fewer or more).")
@click.option("--queue", "queue_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Review queue (SQLite, as `bioevidence review --queue`) queue_for_review writes and review_status "
                   "reads (none: those tools are off).")
@click.option("--email", help="Contact email for NCBI and Crossref in the ground tool (else $BIOEVIDENCE_EMAIL).")
@click.option("--resolver", type=click.Choice(["ncbi", "europepmc"]), default="ncbi", show_default=True,
              help="Resolver the ground tool pins with.")
@click.option("--http-deadline", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Total time for one HTTP request of the ground tool (default 120, or $BIOEVIDENCE_HTTP_DEADLINE).")
@_grounding_options
@click.pass_context
def mcp(ctx: click.Context, use_http: bool, no_token: bool, host: str, port: int, profiles: tuple[str, ...],
        no_grounding: bool,
        index_dir: Path | None, references: Path | None, planner: str, judge: str, stance: str,
        vocabularies: tuple[Path, ...], model: str | None,
        base_url: str | None, model_timeout: float, workspace: Path | None, rounds: int, queue_path: Path | None,
        email: str | None, resolver: str, http_deadline: float | None, **grounding: Any) -> None:
    """Serve the librarian, the gate and the loop to agents over MCP (stdio, or --http).

    Tools: ask, answer, validate_record, revise_step, get_passage, corpus, add_to_index, queue_for_review,
    review_status, and find, pin and ground (the tools that use the network). Resources:
    bioevidence://profiles, bioevidence://rules, bioevidence://schema/record.
    The store, grounders, profiles, index and model are configured as for validate, ground and ask
    (--snapshot-dir, else $BIOEVIDENCE_STORE or $BIOEVIDENCE_HOME/store). Needs
    pip install 'bioevidence[mcp]'. Client configurations: docs/mcp.md.

    \b
    Examples:
      bioevidence mcp --snapshot-dir snapshots/ --index index/ --profile literature-claim
      bioevidence mcp --snapshot-dir snapshots/ --index index/ --queue review-queue.sqlite
      BIOEVIDENCE_MCP_TOKEN=$(openssl rand -hex 32) bioevidence mcp --http --port 8765
    """
    from ..mcp import TOKEN_ENV, require_sdk

    require_sdk()
    if not use_http:
        for name in ("host", "port"):
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT:
                raise click.UsageError(f"--{name} is for --http; stdio needs no address")
    from ..gate.profiles import load_profile
    from ..mcp.config import ServerConfig
    from ..mcp.services import Services
    from ..paths import refuse_system_folder

    if workspace is not None:
        refuse_system_folder(workspace, what="--workspace")
    if grounding.get("snapshot_dir") is not None:
        refuse_system_folder(grounding["snapshot_dir"], what="--snapshot-dir")
    if no_token and not use_http:
        raise click.UsageError("--no-token is for --http; stdio needs no token")

    first = load_profile(profiles[0]) if profiles else None
    chosen = _grounder_options(first, grounding, grounding=not no_grounding)
    config = ServerConfig(grounders=chosen, grounding=not no_grounding, profiles=profiles, index=index_dir,
                          references=references, planner=planner, judge=judge, stance=stance,
                          vocabularies=vocabularies, model=model, base_url=base_url,
                          model_timeout=model_timeout, workspace=workspace, email=email, resolver=resolver,
                          http_deadline=http_deadline, rounds=rounds, queue=queue_path)
    services = Services(config)
    if use_http:
        from ..mcp.server import check_http, run_http

        token = None if no_token else os.environ.get(TOKEN_ENV) or None
        check_http(host, token)  # beyond loopback: a token you chose ($BIOEVIDENCE_MCP_TOKEN), never a printed one
        if token is None and not no_token:
            token = _new_token()
        run_http(services, host, port, token)
    else:
        from ..mcp.server import run_stdio

        run_stdio(services)


def _new_token() -> str:
    """A bearer token for this server's life, printed once on stderr (never logged again)."""
    import secrets
    import sys

    from ..mcp import TOKEN_ENV

    token = secrets.token_urlsafe(32)
    print(f"bearer token for this server (shown once; set ${TOKEN_ENV} to choose it): {token}", file=sys.stderr,
          flush=True)
    return token
