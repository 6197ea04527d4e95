"""Issue 25, cause 5: two writers into one folder never lose an entry.

Two ``sources pin-local`` runs into one snapshot folder both reported 97 works pinned while the
catalogue kept 76; two ``kb build`` runs into one knowledge base lost 40 of 80 entries and one died
with a traceback. Now a catalogue save merges under the folder's lock (both runs' works are kept)
and a knowledge base has one writer at a time (the other is refused at once, exit 3, naming why).
Real processes started together, on the real JATS articles of ../shared/data/jats. The kb builds
take the 24 smallest articles: each build encodes every chunk with the dense model (about 0.14 s a
chunk on 2 cores), and what is tested is the lock, which both builds meet within a second.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bioevidence.sources.catalogue import Catalogue

pytestmark = pytest.mark.heavy(seconds=20)


def _articles(shared_data: Path) -> list[Path]:
    found = sorted((shared_data / "jats").rglob("*.xml"))
    assert len(found) >= 80, len(found)
    return found


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "bioevidence", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_two_pin_local_runs_into_one_folder_keep_every_work(shared_data: Path, tmp_path: Path) -> None:
    articles = _articles(shared_data)
    halves = [articles[0::2], articles[1::2]]
    runs = [_start(["sources", "pin-local", *map(str, half), "--snapshot-dir", "snaps"], tmp_path) for half in halves]
    outs = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err[-1500:] for _, err in outs]
    pinned = {line.split("\t")[0] for out, _ in outs for line in out.splitlines() if "\t" in line}
    catalogue = Catalogue.load(tmp_path / "snaps")
    assert {w.key for w in catalogue} == pinned and len(pinned) >= len(articles) - 5  # (a few may share an id)
    check = subprocess.run([sys.executable, "-m", "bioevidence", "sources", "verify", "snaps"], cwd=tmp_path,
                           capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout[-1500:]


def _bib(folder: Path, articles: list[Path], prefix: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for n, article in enumerate(articles):
        (folder / article.name).write_bytes(article.read_bytes())
        lines.append(f"@article{{{prefix}{n},\n  title = {{{prefix} {n}}},\n  year = {{2020}},\n"
                     f"  file = {{{article.name}}}\n}}\n")
    (folder / "refs.bib").write_text("\n".join(lines), encoding="utf-8")
    return folder / "refs.bib"


def test_two_kb_builds_into_one_knowledge_base_lose_nothing(shared_data: Path, tmp_path: Path) -> None:
    articles = sorted(_articles(shared_data), key=lambda path: path.stat().st_size)[:24]
    bibs = [_bib(tmp_path / "a", articles[:12], "a"), _bib(tmp_path / "b", articles[12:], "b")]
    runs = [_start(["kb", "build", str(bib), "--kb", "kb", "--offline", "--quiet"], tmp_path) for bib in bibs]
    outs = [run.communicate(timeout=900) for run in runs]
    codes = [run.returncode for run in runs]
    assert all("Traceback" not in err for _, err in outs), [err[-1500:] for _, err in outs]
    assert sorted(codes) in ([0, 0], [0, 3]), (codes, [err[-800:] for _, err in outs])
    for code, (_, err) in zip(codes, outs, strict=True):
        if code == 3:
            assert "another bioevidence process is writing the knowledge base" in err
    # the refused one (if any) runs again once the first is done: nothing is lost either way
    for code, bib in zip(codes, bibs, strict=True):
        if code == 3:
            again = subprocess.run([sys.executable, "-m", "bioevidence", "kb", "build", str(bib), "--kb", "kb",
                                    "--offline", "--quiet"], cwd=tmp_path, capture_output=True, text=True,
                                   check=False, timeout=900)
            assert again.returncode == 0, again.stderr[-1500:]
    keys = {json.loads(line)["key"] for line in (tmp_path / "kb" / "entries.jsonl").read_text().splitlines()
            if line.strip()}
    assert keys == {f"a{n}" for n in range(12)} | {f"b{n}" for n in range(12)}
