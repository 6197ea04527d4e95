"""``bioevidence validate --scheduler`` and ``run(..., scheduler=)`` on a real LocalCluster of two
worker processes on loopback, over records citing the real CIViC corpus (literature grounder on)."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.errors import ConfigurationError
from bioevidence.gate.batch import run
from bioevidence.gate.grounders.config import GrounderOptions
from bioevidence.gate.inputs import Job, read_jobs
from bioevidence.gate.spec import GateSpec
from bioevidence.gate.validator import Validator
from clusters import need_distributed, start_cluster, without_timestamps, write_jsonl

pytestmark = pytest.mark.heavy(seconds=30)


def _validate(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["validate", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stderr


def test_cluster_reports_are_byte_identical_to_one_process_apart_from_timestamps(
        cluster: Any, civic_records: list[dict[str, Any]], snapshots: Path, tmp_path: Path) -> None:
    batch = write_jsonl(tmp_path / "records.jsonl", civic_records, broken_line=100)
    common = [str(batch), "--profile", "literature-claim", "--snapshot-dir", str(snapshots), "--format", "jsonl"]
    code_one, err_one = _validate([*common, "--workers", "1", "-o", str(tmp_path / "one.jsonl")])
    code_dask, err_dask = _validate([*common, "--scheduler", cluster.scheduler_address,
                                     "-o", str(tmp_path / "dask.jsonl")])
    one = (tmp_path / "one.jsonl").read_text()
    dask = (tmp_path / "dask.jsonl").read_text()
    assert without_timestamps(dask) == without_timestamps(one)
    assert (code_dask, err_dask) == (code_one, err_one) == (3, err_one)  # the broken line: an input error
    reports = [json.loads(line) for line in one.splitlines()]
    assert len(reports) == len(civic_records) + 1 and reports[100]["error"] == "input_error"
    statuses = {r.get("overall_status") for r in reports}
    assert {"admitted", "rejected"} <= statuses  # real grounding outcomes, not one uniform answer


def test_local_n_starts_a_cluster_for_the_run_and_answers_like_one_process(repo: Path, tmp_path: Path) -> None:
    need_distributed()
    examples = str(repo / "examples" / "records")
    code_one, _ = _validate([examples, "--format", "json", "--workers", "1", "-o", str(tmp_path / "one.json")])
    code_dask, _ = _validate([examples, "--format", "json", "--scheduler", "local:2", "-o", str(tmp_path / "d.json")])
    assert code_one == code_dask
    assert without_timestamps((tmp_path / "d.json").read_text()) == without_timestamps(
        (tmp_path / "one.json").read_text())


def test_in_order_over_many_batches_and_each_worker_loads_the_gate_once(
        client: Any, civic_records: list[dict[str, Any]], snapshots: Path, tmp_path: Path) -> None:
    jobs = list(read_jobs(write_jsonl(tmp_path / "r.jsonl", civic_records)))
    spec = GateSpec.of("literature-claim", GrounderOptions(snapshot_dir=snapshots))
    local = run(jobs, spec, workers=1)
    seen: list[tuple[int, int]] = []
    first = run(jobs, spec, scheduler=client, batch_size=25, progress=lambda done, total: seen.append((done, total)))
    assert [without_timestamps(r.text) for r in first] == [without_timestamps(r.text) for r in local]
    assert seen[-1] == (16, 16) and [d for d, _ in seen] == list(range(1, 17))

    def gate_id(key: str) -> int | None:
        from bioevidence.execute import _LOADED  # the worker's own cache (imported there)

        return id(_LOADED[key]) if key in _LOADED else None

    loaded_before = client.run(gate_id, key=spec.key)
    assert len(loaded_before) == 2 and None not in loaded_before.values()  # each worker loaded the gate
    run(jobs, spec, scheduler=client, batch_size=25)
    assert client.run(gate_id, key=spec.key) == loaded_before  # the same objects: not loaded again


def test_a_killed_workers_batches_are_retried_and_the_reports_are_unchanged(
        civic_records: list[dict[str, Any]], snapshots: Path, tmp_path: Path) -> None:
    distributed = need_distributed()
    jobs = list(read_jobs(write_jsonl(tmp_path / "r.jsonl", civic_records)))
    spec = GateSpec.of("literature-claim", GrounderOptions(snapshot_dir=snapshots))
    expected = [without_timestamps(r.text) for r in run(jobs, spec, workers=1)]
    killed: dict[str, Any] = {}
    with start_cluster() as cluster, distributed.Client(cluster, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
        pids = client.run(os.getpid)

        def kill_one_busy_worker(done: int, total: int) -> None:
            if killed:
                return
            busy = {addr: keys for addr, keys in client.processing().items() if keys}
            if not busy:
                return
            addr, keys = next(iter(busy.items()))
            killed.update(addr=addr, keys=list(keys))
            os.kill(pids[addr], signal.SIGKILL)

        results = run(jobs, spec, scheduler=client, batch_size=12, progress=kill_one_busy_worker)

        def processing_count(dask_scheduler: Any, keys: list[str]) -> dict[str, int]:
            return {k: sum(1 for t in dask_scheduler.story(k) if t[2] == "processing") for k in keys}

        counts = client.run_on_scheduler(processing_count, keys=killed["keys"])
        survivors = set(client.run(os.getpid).values())
    assert killed, "no worker was busy when the first batch came back"
    assert pids[killed["addr"]] not in survivors  # the worker really died (its nanny started a new one)
    assert max(counts.values()) >= 2, counts  # the batch it held was scheduled again
    assert [without_timestamps(r.text) for r in results] == expected
    assert all(r.status != "error" for r in results)


def test_a_batch_no_worker_can_run_is_an_error_for_each_of_its_records(
        client: Any, civic_records: list[dict[str, Any]], snapshots: Path, tmp_path: Path) -> None:
    """The workers cannot see the snapshot folder (gone after the gate was described): every record
    of every batch is an error naming the cause, none is dropped or admitted; exit code 3."""
    shared = tmp_path / "shared-snapshots"
    shutil.copytree(snapshots, shared)
    jobs = list(read_jobs(write_jsonl(tmp_path / "r.jsonl", civic_records[:60])))
    spec = GateSpec.of("literature-claim", GrounderOptions(snapshot_dir=shared))
    assert spec.key  # described (and hashed) while the folder was there
    shutil.rmtree(shared)
    results = run(jobs, spec, scheduler=client, batch_size=25)
    assert len(results) == 60 and {r.status for r in results} == {"error"}
    assert [(r.file, r.line) for r in results] == [(j.file, j.line) for j in jobs]
    first = json.loads(results[0].text)
    assert first["error"] == "cluster_error" and "is not a folder" in first["message"]
    assert "after 3 tries" in first["message"]


def test_a_loaded_validator_cannot_be_sent_to_a_cluster(client: Any) -> None:
    job = Job("x.json", None, b"{}")
    with pytest.raises(ConfigurationError, match="GateSpec"):
        run([job], Validator(), scheduler=client)
