"""``index build --scheduler`` and ``ground --scheduler`` on a real LocalCluster (two worker
processes on loopback), over the real SciFact corpus, the CIViC snapshots and the JATS folders."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.errors import InputError
from bioevidence.librarian.backend import search_local
from bioevidence.librarian.index import build_index

QUERIES = ["KRAS mutation gefitinib resistance", "TITLE:(lung adenocarcinoma)", "BRAF AND melanoma",
           "ABSTRACT:vitamin D", "\"tumour suppressor\"", "insulin resistance NOT mice", "AUTH:Pao",
           "TABLE:survival", "FIG:immunohistochemistry", "T cell exhaustion"]


@pytest.fixture(scope="module")
def sources(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """1,500 SciFact abstracts (JSONL), the CIViC snapshot folder and one JATS folder."""
    corpus = tmp_path_factory.mktemp("scifact") / "corpus.jsonl"
    with gzip.open(shared_data / "claims" / "scifact" / "corpus.jsonl.gz", "rt") as fh:
        corpus.write_text("".join(next(fh) for _ in range(1500)))
    return [corpus, shared_data / "civic_corpus" / "snapshots", shared_data / "jats" / "pmc_oa"]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_index_built_in_shards_is_the_same_bytes_and_answers_as_one_built_in_one_process(
        cluster: Any, sources: list[Path], tmp_path: Path) -> None:
    one = build_index(sources, tmp_path / "one")
    result = CliRunner().invoke(cli, ["index", "build", *map(str, sources), "--index", str(tmp_path / "sharded"),
                                      "--scheduler", cluster.scheduler_address])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout.splitlines()[-1])
    assert (stats["docs"], stats["passages"]) == (one.docs, one.passages) and one.docs > 1600
    assert _files(tmp_path / "sharded") == _files(tmp_path / "one")  # SQLite rows and every bm25s array
    for query in QUERIES:
        hits = search_local(str(tmp_path / "sharded"), query, limit=20)
        assert hits == search_local(str(tmp_path / "one"), query, limit=20), query
    assert any(search_local(str(tmp_path / "one"), q, limit=5) for q in QUERIES)


def test_a_malformed_corpus_line_stops_a_sharded_build_with_the_same_error_and_writes_nothing(
        client: Any, sources: list[Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    lines = sources[0].read_text().splitlines()
    lines.insert(700, '{"doc_id": "x"}')  # no abstract
    broken.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as local:
        build_index([broken], tmp_path / "one")
    with pytest.raises(InputError) as sharded:
        build_index([broken], tmp_path / "sharded", scheduler=client)
    assert (sharded.value.message, sharded.value.line) == (local.value.message, local.value.line) == (
        local.value.message, 701)
    assert not (tmp_path / "sharded" / "index.sqlite").exists()
    assert not (tmp_path / "sharded" / "index.sqlite.tmp").exists()


def _records(snapshots: Path, n: int) -> list[dict[str, Any]]:
    """Records citing CIViC papers by PMID, without pins or titles (ground fills them in)."""
    works = json.loads((snapshots / "literature.json").read_text())["works"]
    pmids = sorted(k.split(":", 1)[1] for k in works if k.startswith("pmid:"))[:n]
    return [{"record_id": f"r{i}", "source_artifacts": [
        {"id": "s1", "source_type": "publication", "uri": f"pmid:{pmid}"},
        {"id": "s2", "source_type": "publication", "uri": f"pmid:{pmids[(i + 1) % len(pmids)]}"}]}
        for i, pmid in enumerate(pmids)]


def test_ground_on_a_cluster_writes_the_same_records_as_one_process(
        cluster: Any, snapshots: Path, tmp_path: Path) -> None:
    """Every cited paper is already pinned (no network): the workers read the shared catalogue and
    store to write the pins and titles into the records."""
    records = _records(snapshots, 200)  # every pinned PMID (about 170): three batches on the cluster
    paths = []
    for i, record in enumerate(records):
        paths.append(tmp_path / "in" / f"r{i}.json")
        paths[-1].parent.mkdir(exist_ok=True)
        paths[-1].write_text(json.dumps(record))
    outputs = {}
    for name, extra in (("one", []), ("dask", ["--scheduler", cluster.scheduler_address])):
        store = tmp_path / f"store-{name}"
        shutil.copytree(snapshots, store)
        result = CliRunner().invoke(cli, ["ground", *map(str, paths), "--snapshot-dir", str(store),
                                          "--output-dir", str(tmp_path / name), *extra])
        assert result.exit_code == 0, result.output
        assert f"already pinned {len(records)}," in result.stderr
        outputs[name] = _files(tmp_path / name)
    assert outputs["dask"] == outputs["one"] and len(outputs["one"]) == len(records) > 150
    grounded = json.loads(outputs["one"]["r0.json"])
    assert grounded["source_artifacts"][0]["sha256"] and grounded["source_artifacts"][0]["title"]
