"""Issue 25, cause 2: the cost of parsing is bounded, not only the size of the file.

Under the 50 MB cap a YAML list of 375,000 items (1.5 MB) took 13 s and 300 MB and a 30 MB JSON
array of 10 million integers aborted Python under a 4 GB address-space cap. Values are now counted
before they are built (``json_max_nodes``, ``yaml_max_nodes`` in :mod:`bioevidence.limits`): each
shape of oversized document below, in every input format a command reads, is refused with exit 3
and a line naming the limit, within a small, measured budget; a document just under the limit and
the real record files still validate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bioevidence.errors import LimitError
from bioevidence.io import parse_json, parse_yaml
from bioevidence.limits import limit
from security.harness import run_cli

REPO = Path(__file__).resolve().parents[2]
RECORD = REPO / "examples" / "records" / "01_admitted_curated_claim.json"


def _yaml_list(n: int) -> str:
    return "\n".join(f"- {i % 10}" for i in range(n)) + "\n"


# the shapes of a document with too many values: long lists, wide objects, keys, nesting in width
DOCUMENTS = {
    "yaml block list (375,000 items, 1.5 MB)": ("r.yaml", _yaml_list(375_000)),
    "yaml flow list": ("r.yaml", "[" + ",".join("1" for _ in range(300_000)) + "]\n"),
    "yaml mapping of 200,000 keys": ("r.yaml", "".join(f"k{i}: {i}\n" for i in range(200_000))),
    "json array of 10 million integers (30 MB)": ("r.json", "[" + ",".join("7" for _ in range(10_000_000)) + "]"),
    "json object of 2.1 million keys (4.2 million values)":
        ("r.json", "{" + ",".join(f'"{i}":0' for i in range(2_100_000)) + "}"),
    "jsonl line of 5 million empty lists": ("r.jsonl", "[" + "[]," * 4_999_999 + "[]]\n"),
}


@pytest.mark.parametrize("name", list(DOCUMENTS))
def test_a_document_with_too_many_values_is_refused_before_it_is_built(name: str, tmp_path: Path) -> None:
    file, text = DOCUMENTS[name]
    (tmp_path / file).write_text(text, encoding="utf-8")
    run = run_cli(["validate", file, str(RECORD)], cwd=tmp_path, cpu_seconds=30, address_space_mb=4096)
    assert run.code == 3 and not run.traceback and not run.killed, (run.code, run.stderr[-800:])
    errors = [json.loads(line) for line in run.stderr.splitlines() if line.startswith("{")]
    assert any("values" in e["message"] and "MAX_NODES" in e["message"] for e in errors), errors
    assert '"overall_status": "admitted"' in run.stdout or "admitted" in run.stdout  # the good record still reported
    assert run.peak_rss_mb < 400, run.peak_rss_mb  # was 300 MB for the YAML list, an abort for the JSON


def test_string_contents_do_not_count_and_a_document_under_the_limit_parses() -> None:
    # commas, brackets and colons inside strings are text, not values
    text = json.dumps({"a": ",[{:" * 2_000_000})
    assert parse_json(text)["a"].startswith(",[{:")
    allowed = int(limit("json_max_nodes"))
    just_under = "[" + ",".join("0" for _ in range(allowed - 1)) + "]"
    assert len(parse_json(just_under)) == allowed - 1
    with pytest.raises(LimitError, match="BIOEVIDENCE_JSON_MAX_NODES"):
        parse_json("[" + ",".join("0" for _ in range(allowed + 1)) + "]")
    nodes = int(limit("yaml_max_nodes"))
    assert len(parse_yaml(_yaml_list(nodes - 2))) == nodes - 2  # the list itself is a node
    with pytest.raises(LimitError, match="BIOEVIDENCE_YAML_MAX_NODES"):
        parse_yaml(_yaml_list(nodes + 1))


def test_the_limits_are_the_environments_to_raise(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(_yaml_list(2_000), encoding="utf-8")
    refused = run_cli(["validate", "r.yaml"], cwd=tmp_path, env={"BIOEVIDENCE_YAML_MAX_NODES": "1000"})
    assert refused.code == 3 and "more than 1,000 values" in refused.stderr
    allowed = run_cli(["validate", "r.yaml"], cwd=tmp_path)
    assert allowed.code == 3 and "MAX_NODES" not in allowed.stderr  # parsed; refused as not a record object
