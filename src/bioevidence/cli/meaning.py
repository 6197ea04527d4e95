"""``bioevidence stance PAIRS.jsonl``: the stance model on claim–sentence pairs (bioevidence.meaning)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import InputError, escape_text, llm_json
from ..io import decode_utf8, parse_json, read_limited, read_stdin

MAX_TEXT = 20_000  # characters of a claim or a sentence (the model reads its first 128 tokens)


def _pairs(text: str, file: str) -> tuple[list[tuple[int, str, str, str]], list[InputError]]:
    """Each good line as (line number, id, claim, sentence); each bad line as its one error."""
    good: list[tuple[int, str, str, str]] = []
    bad: list[InputError] = []
    seen: set[str] = set()
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec: Any = parse_json(line, file=file, line=lineno)
            if not isinstance(rec, dict):
                raise InputError('not a JSON object; write {"id", "claim", "sentence"}', file=file, line=lineno)
            missing = [k for k in ("id", "claim", "sentence") if k not in rec]
            if missing:
                raise InputError(f"missing {', '.join(missing)}; each line is {{\"id\", \"claim\", \"sentence\"}}",
                                 file=file, line=lineno)
            pid, claim, sentence = rec["id"], rec["claim"], rec["sentence"]
            if not isinstance(pid, str | int) or isinstance(pid, bool):
                raise InputError("id must be a string or an integer", file=file, line=lineno)
            for name, value in (("claim", claim), ("sentence", sentence)):
                if not isinstance(value, str) or not value.strip():
                    raise InputError(f"{name} must be a non-empty string", file=file, line=lineno)
                if len(value) > MAX_TEXT:
                    raise InputError(f"{name} is {len(value)} characters, over {MAX_TEXT}; give one sentence",
                                     file=file, line=lineno)
            if str(pid) in seen:
                raise InputError(f"id {str(pid)[:40]!r} is used by an earlier line; give each pair its own id",
                                 file=file, line=lineno)
            seen.add(str(pid))
            good.append((lineno, str(pid), claim, sentence))
        except InputError as exc:
            bad.append(exc)
    return good, bad


@click.command("stance")
@click.argument("pairs", type=click.Path(path_type=Path, allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "text"]), default="jsonl", show_default=True,
              help='jsonl: one {"id", "stance", "confidence"} a line on stdout; text: a table.')
@click.option("--probabilities", is_flag=True, help="Also give the calibrated P(supports, contradicts, neutral).")
def stance(pairs: Path, fmt: str, probabilities: bool) -> None:
    """Label claim–sentence pairs: supports, contradicts, neutral or undetermined.

    PAIRS is a JSONL file (or - for stdin), one {"id", "claim", "sentence"} a line. The offline stance
    model (a cross-encoder, no network) labels each pair with a calibrated confidence; a direction it
    is not sure of is "undetermined". No weights ship today: without them the command says so
    (exit 3) and labels nothing (docs/stance.md). A bad line gets one error line on
    stderr and the rest are still labelled (exit 3 when any line was bad).

    \b
    Examples:
      bioevidence stance pairs.jsonl --format text
      bioevidence stance pairs.jsonl --probabilities > labels.jsonl
      echo '{"id": 1, "claim": "BRAF V600E predicts response.", "sentence": "It responded."}' | bioevidence stance -
    """
    from ..meaning import load_model
    from . import emit_error

    file = "<stdin>" if str(pairs) == "-" else str(pairs)
    raw = read_stdin() if str(pairs) == "-" else read_limited(pairs)
    good, bad = _pairs(decode_utf8(raw, file=file), file)
    for exc in bad:
        emit_error(exc)
    if good:
        model = load_model()
        labels = model.label_pairs([(claim, sentence) for _, _, claim, sentence in good])
        if fmt == "text":
            click.echo(f"{'id':<20} {'stance':<13} confidence  (model {model.name}, threshold {model.threshold})")
        for (_, pid, _, _), label in zip(good, labels, strict=True):
            if fmt == "jsonl":
                row: dict[str, Any] = {"id": pid, **label.as_dict()}
                if probabilities:
                    row["probabilities"] = dict(zip(("supports", "contradicts", "neutral"),
                                                    (round(p, 4) for p in label.probabilities), strict=True))
                click.echo(llm_json(row, compact=True))
            else:
                click.echo(escape_text(f"{pid[:20]:<20} {label.stance:<13} {label.confidence:.3f}"))
    if bad:
        sys.exit(3)
