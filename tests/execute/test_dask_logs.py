"""Dask's own log lines stay out of our JSON error lines (issue 29 item 4): on stderr only Dask's
errors, each as one JSON object a line; everything else, with $BIOEVIDENCE_DASK_LOG, in that file."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from bioevidence.execute import cluster
from clusters import need_distributed


@pytest.fixture()
def dask_loggers() -> Iterator[None]:
    need_distributed()
    cluster._import_distributed()
    saved = {n: (list(logging.getLogger(n).handlers), logging.getLogger(n).level) for n in ("distributed", "dask",
                                                                                             "tornado")}
    yield
    for name, (handlers, level) in saved.items():
        for handler in logging.getLogger(name).handlers:
            if handler not in handlers:
                handler.close()  # the test's log file
        logging.getLogger(name).handlers[:] = handlers
        logging.getLogger(name).setLevel(level)


def test_dask_errors_are_json_lines_and_its_chatter_is_dropped(dask_loggers: None,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    logging.getLogger("distributed.client").info("Receive client connection")
    logging.getLogger("distributed.nanny").warning("Restarting worker")
    logging.getLogger("distributed.client").error("Connection to scheduler lost")
    lines = capsys.readouterr().err.splitlines()
    assert [json.loads(x) for x in lines] == [{"log": "dask", "logger": "distributed.client", "level": "ERROR",
                                               "message": "Connection to scheduler lost"}]


def test_with_a_log_file_everything_from_info_goes_there(dask_loggers: None, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "dask.log"
    monkeypatch.setenv(cluster.DASK_LOG_ENV, str(log))
    cluster._route_dask_logs()
    logging.getLogger("distributed.scheduler").info("Register worker")
    logging.getLogger("distributed.client").error("Connection to scheduler lost")
    for handler in logging.getLogger("distributed").handlers:
        handler.flush()
    assert capsys.readouterr().err == ""
    text = log.read_text(encoding="utf-8")
    assert "Register worker" in text and "Connection to scheduler lost" in text
