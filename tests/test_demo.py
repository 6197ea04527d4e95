"""``bioevidence demo``, the README's first command: the whole loop offline on the bundled corpus,
with no ``../shared`` and no network (issue 11, point 9)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.resources import data_dir
from model_server import ChatReplayServer


def test_demo_runs_the_loop_offline_without_shared_data(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BIOEVIDENCE_", "OPENAI_"))}
    env.update(BIOEVIDENCE_SHARED_DATA=str(tmp_path / "no-shared-data"), BIOEVIDENCE_HOME=str(tmp_path / "home"),
               HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")  # any network use would fail
    out = tmp_path / "demo"
    run = subprocess.run([sys.executable, "-m", "bioevidence", "demo", "--out", str(out)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert f"report: {out / 'report.html'}" in run.stdout
    summary = json.loads((out / "demo.json").read_text())
    assert summary["status"] == "admitted"
    assert summary["outcomes"] == ["feedback", "to_person"]  # the misquote fixed, the knowledge-base use for a person
    record = json.loads(Path(summary["record"]).read_text())
    assert record["profile_id"] == "librarian-evidence" and record["evidence_items"]
    with sqlite3.connect(out / "review.sqlite") as con:
        assert con.execute("select count(*) from entries").fetchone()[0] == 1
    page = (out / "report.html").read_text()
    assert "Withheld: 1 retracted" in page and "admitted" in page and "to_person" in page
    # the record the demo wrote is admitted by a plain validate against the demo's snapshots
    again = subprocess.run([sys.executable, "-m", "bioevidence", "validate", summary["record"], "--snapshot-dir",
                            str(out / "snapshots")], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr


def test_the_bundled_corpus_is_pinned_and_attributed() -> None:
    import gzip
    import hashlib

    folder = data_dir("demo")
    works = json.loads((folder / "snapshots" / "literature.json").read_text())["works"]
    assert len(works) == 6
    attribution = (folder / "ATTRIBUTION.md").read_text()
    for key, work in works.items():
        (path,) = (folder / "snapshots").glob(f"{work['fulltext_sha256']}*")
        assert hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest() == work["fulltext_sha256"]
        assert work["license"].lower().startswith("cc by") and key.split(":")[1] in attribution


def test_demo_with_a_model_proposer_over_the_loopback_server(tmp_path: Path) -> None:
    """The model gets the gate's feedback and replies with the corrected quote it was given."""

    def fix(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        found = re.search(r'evidence (\d+) .*?quote the passage verbatim: "(.*?)"(?= \(|$)', prompt, re.M)
        assert found, prompt
        return json.dumps({"quotes": [{"item": int(found.group(1)), "text": found.group(2)}]})

    with ChatReplayServer([fix]) as server:
        res = CliRunner().invoke(cli, ["demo", "--out", str(tmp_path / "d"), "--model", "replay", "--base-url",
                                       server.base_url])
        asked = len(server.bodies)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "d" / "demo.json").read_text())
    assert asked == 1 and summary["outcomes"] == ["feedback", "to_person"]
    assert "Proposer: a model" in (tmp_path / "d" / "report.html").read_text()
