"""The executor layer itself: batches in order, a failing batch kept in its place, the
``--scheduler`` values, Dask's errors translated to ours, and Dask as an optional extra."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bioevidence.errors import ClusterError, ConfigurationError, InputError
from bioevidence.execute import BatchFailed, Ready, cut, open_executor
from bioevidence.execute.cluster import _run_remote, parse_scheduler, translate
from clusters import need_distributed


def square_unless_seven(offset: int, batch: list[int]) -> list[int]:
    if 7 in batch:
        raise InputError("seven is not allowed", line=7)
    return [offset + x * x for x in batch]


@pytest.mark.parametrize("workers", [1, 2], ids=["serial", "fork"])
def test_results_come_back_in_batch_order_and_a_failing_batch_keeps_its_place(workers: int) -> None:
    batches = cut(list(range(20)), 3)
    with open_executor(None, workers) as executor:
        out = list(executor.map(square_unless_seven, Ready(100), batches))
    assert executor.name == ("serial" if workers == 1 else "fork")
    assert out[:2] == [[100, 101, 104], [109, 116, 125]] and out[3:] == [
        [100 + x * x for x in b] for b in batches[3:]]
    failed = out[2]
    assert isinstance(failed, BatchFailed) and failed.index == 2
    assert "seven is not allowed" in failed.message and isinstance(failed.error, InputError)


def test_cut_keeps_every_item_in_order() -> None:
    assert cut([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]] and cut([], 4) == []


@pytest.mark.parametrize(("value", "parsed"), [
    ("local", ("local", None)), ("local:2", ("local", 2)), (" local:16 ", ("local", 16)),
    ("tcp://10.0.0.5:8786", ("address", None)), ("tls://scheduler.example.org:8786", ("address", None)),
    ("node17:8786", ("address", None)),
], ids=["local", "local-2", "local-spaces", "tcp", "tls", "host-port"])
def test_scheduler_values_that_are_accepted(value: str, parsed: tuple[str, int | None]) -> None:
    assert parse_scheduler(value) == parsed


@pytest.mark.parametrize("value", ["local:0", "local:x", "somewhere", "tcp:/x", ""],
                         ids=["zero-workers", "not-a-number", "no-port", "bad-url", "empty"])
def test_scheduler_values_that_are_refused_name_the_forms(value: str) -> None:
    with pytest.raises(ConfigurationError, match=r"local|scheduler address"):
        parse_scheduler(value)


def test_without_dask_the_flag_says_how_to_install_it_in_one_line(repo: Path) -> None:
    """``distributed`` made unimportable (as in an install without the extra): exit 3, one line."""
    probe = ("import sys; sys.modules['distributed'] = None; sys.modules['dask'] = None\n"
             "from bioevidence.cli import main\n"
             "sys.exit(main(['validate', 'examples/records', '--scheduler', 'local:2']))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=repo, check=False)
    assert done.returncode == 3 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["message"].endswith("pip install 'bioevidence[dask]'")


def test_a_worker_of_another_bioevidence_version_refuses_the_batch() -> None:
    with pytest.raises(ConfigurationError, match="install the same version on every worker"):
        _run_remote(square_unless_seven, Ready(0), [1], "0.0.0-other")


def test_each_upstream_dask_error_is_translated(client: Any) -> None:
    distributed = need_distributed()
    lost = translate(distributed.KilledWorker("bioevidence-x-0", "tcp://127.0.0.1:1", 3), 4, client)
    assert isinstance(lost, BatchFailed) and lost.index == 4 and "was lost with every worker" in lost.message
    ours = translate(ConfigurationError("shared folder missing; mount it"), 0, client)
    assert isinstance(ours.error, ConfigurationError) and ours.message.endswith("shared folder missing; mount it")
    other = translate(MemoryError("no room"), 1, client)
    assert other.error is None and "MemoryError: no room" in other.message
    closed = distributed.Client(client.scheduler.address, set_as_default=False)
    closed.close()
    with pytest.raises(ClusterError, match="lost the Dask scheduler") as gone:
        translate(OSError("stream closed"), 2, closed)
    assert gone.value.retryable


def test_a_scheduler_without_workers_is_a_cluster_error_after_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    distributed = need_distributed()
    monkeypatch.setenv("BIOEVIDENCE_DASK_WAIT", "1")
    with distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=":0") as empty, \
            pytest.raises(ClusterError, match="no Dask worker joined") as raised, \
            open_executor(empty.scheduler_address):
        pass
    assert raised.value.retryable


def test_a_user_client_is_used_as_is_and_left_open(client: Any) -> None:
    with open_executor(client) as executor:
        assert executor.name == "dask" and executor.workers == 2
        assert list(executor.map(square_unless_seven, _Constant(), [[1, 2], [3]])) == [[1, 4], [9]]
    assert client.status == "running"


class _Constant:
    """A recipe: plain data that any worker loads (its key names it)."""

    key = "constant-zero"

    def load(self) -> int:
        return 0

