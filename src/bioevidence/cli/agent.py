"""``bioevidence agent TASKS.jsonl``: run a model over tasks through the tools, the gate and the loop."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigurationError, escape_text
from .gate import _build_grounders, _grounding_options


@click.command()
@click.argument("tasks_file", metavar="TASKS.jsonl", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--profile", "profile_name", metavar="NAME|FILE", required=True,
              help="Profile of the drafts (a task may name its own).")
@click.option("--model", required=True, help="Model name as the server lists it at /v1/models.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder of episode files (one JSONL per task); finished episodes are skipped on a rerun.")
@click.option("--index", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Local librarian index for the search tool (bioevidence index build).")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True,
              help="Revision rounds per task.")
@click.option("--max-tool-calls", type=click.IntRange(min=0), default=3, show_default=True,
              help="Tool calls per round before the model must submit.")
@click.option("--max-tokens", type=click.IntRange(min=16), default=1024, show_default=True,
              help="Token limit of one model reply.")
@click.option("--temperature", type=click.FloatRange(min=0.0, max=2.0), default=0.2, show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0.1), default=120.0, show_default=True,
              help="Seconds to wait for one model reply.")
@click.option("--format", "mode", type=click.Choice(["json_schema", "json_object", "text"]), default="json_schema",
              show_default=True, help="Strongest structured-output format to ask for (steps down when rejected).")
@click.option("--seed", type=int, help="Sampling seed sent to the server (when it honours one).")
@click.option("--fold-system", is_flag=True,
              help="Merge the system prompt into the first user message (chat templates without a system role).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON instead of a table.")
@click.option("-v", "--verbose", is_flag=True, help="Log one line per model call on stderr.")
@_grounding_options
def agent(tasks_file: Path, profile_name: str, model: str, out_dir: Path, index: Path | None, rounds: int,
          max_tool_calls: int, max_tokens: int, temperature: float, timeout: float, mode: str, seed: int | None,
          fold_system: bool, as_json: bool, verbose: bool, **grounding: Any) -> int:
    """Answer each task with an evidence draft, checked by the gate and revised from its feedback.

    The model server comes from OPENAI_BASE_URL (and OPENAI_API_KEY when it needs one).
    Exit code 0 when no episode failed, 3 otherwise.

    \b
    Examples:
      OPENAI_BASE_URL=http://127.0.0.1:8080/v1 bioevidence agent tasks.jsonl \\
        --profile literature-claim --model gemma-3-270m --snapshot-dir snapshots/ --out runs/gemma
    """
    from ..gate.profiles import load_profile
    from ..gate.validator import Validator
    from ..loop.agent import Agent, load_tasks, render_summary, summarize
    from ..loop.llm import LLM, OpenAITransport
    from ..loop.tools import Toolbox

    if verbose:
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    tasks = load_tasks(tasks_file)
    profile = load_profile(profile_name)
    snapshot_dir = grounding.get("snapshot_dir")
    if snapshot_dir is None and index is None:
        raise ConfigurationError("the agent needs a corpus for its tools: pass --snapshot-dir DIR and/or --index DIR")
    validator = Validator(profile, grounders=_build_grounders(profile, grounding))
    llm = LLM(OpenAITransport(timeout=timeout), model, temperature=temperature, max_tokens=max_tokens, mode=mode,
              seed=seed, fold_system=fold_system)
    click.get_current_context().call_on_close(llm.close)  # its pooled connections
    runner = Agent(llm, validator, Toolbox(snapshot_dir, index), out_dir, profile=profile_name, rounds=rounds,
                   max_tool_calls=max_tool_calls, snapshot_dir=snapshot_dir,
                   progress=lambda message: click.echo(escape_text(message), err=True))
    results = runner.run(tasks)
    summary = summarize(results)
    out_dir.mkdir(parents=True, exist_ok=True)
    from ..io import atomic_write_text

    atomic_write_text(out_dir / "summary.json", json.dumps(
        {"summary": summary, "episodes": [r.to_json() for r in results]}, indent=2, ensure_ascii=False) + "\n")
    click.echo(json.dumps(summary) if as_json else render_summary(results))
    return 3 if summary["failed"] else 0
