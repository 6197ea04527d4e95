"""Attacks the gate already withstood when issue 12 was filed, kept here so none regresses.

YAML and JSON tricks, XML entity bombs and external entities, path escapes in drafts, a
``kill -9`` in the middle of an atomic write, and a hostile HTTP server's usual faults.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bioevidence.errors import InputError, RetrievalError
from bioevidence.sources.http import HttpClient, HttpConfig
from bioevidence.sources.store import SnapshotStore
from bioevidence.sources.xmlsafe import parse_xml
from loopback import Fault, LoopbackServer, RecordingSleep
from security.harness import run_cli


@pytest.mark.parametrize("name, text", [
    ("tag.yaml", "record_id: !!python/object/apply:os.system ['touch {pwned}']\n"),
    ("new.yaml", "record_id: !!python/object/new:os.system ['touch {pwned}']\n"),
    ("dup.json", '{"record_id": "a", "record_id": "b"}'),
    ("nan.json", '{"record_id": NaN}'),
    ("big-number.json", '{"record_id": 1e99999}'),
    ("deep.json", "[" * 5000 + "]" * 5000),
    ("bad-utf8.json", '{"record_id": "\udcff"}'),
], ids=["yaml-apply", "yaml-new", "json-duplicate", "json-nan", "json-infinity", "json-deep", "bad-utf8"])
def test_hostile_record_syntax_is_an_input_error(tmp_path: Path, name: str, text: str) -> None:
    pwned = tmp_path / "pwned"
    path = tmp_path / name
    path.write_bytes(text.replace("{pwned}", str(pwned)).encode("utf-8", "surrogateescape"))
    run = run_cli(["validate", name], cwd=tmp_path, cpu_seconds=20)
    assert run.code == 3 and not run.traceback, run.stderr
    assert not pwned.exists()


def test_xml_entity_bombs_and_external_entities_are_not_expanded() -> None:
    from lxml import etree

    entities = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    bomb = f'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY l0 "lol">{entities}]><a>&l9;</a>'.encode()
    started = time.process_time()
    with pytest.raises(InputError, match="amplification"):
        parse_xml(bomb)
    assert time.process_time() - started < 2
    xxe = b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'
    root = parse_xml(xxe)
    assert "root:" not in (root.text or "") and b"root:" not in etree.tostring(root)


@pytest.mark.parametrize("target", ["../../etc/passwd", "/etc/passwd", "sub/../../outside.txt"],
                         ids=["dotdot", "absolute", "climb"])
def test_a_draft_cannot_hash_a_file_outside_its_folder(tmp_path: Path, target: str) -> None:
    (tmp_path / "outside.txt").write_text("secret")
    folder = tmp_path / "drafts"
    (folder / "sub").mkdir(parents=True)
    draft = (Path(__file__).resolve().parents[2] / "examples" / "drafts" / "curated_note.yaml").read_text()
    (folder / "d.yaml").write_text(draft.replace("file: lab_note.txt", f"file: {target}"), encoding="utf-8")
    run = run_cli(["build", "d.yaml", "-o", "r.json"], cwd=folder)
    assert run.code == 3 and "escapes its folder" in run.stderr and not (folder / "r.json").exists()


WRITER = """
import sys
from pathlib import Path
from bioevidence.io import atomic_write_bytes
atomic_write_bytes(Path(sys.argv[1]), b"new" * (100 * 1024 * 1024))
"""


def test_kill_9_in_the_middle_of_an_atomic_write_leaves_the_old_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "report.jsonl"
    target.write_bytes(b"old report\n")
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)])
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".report.jsonl.*.tmp")) and time.monotonic() < deadline:
        time.sleep(0.005)
    assert proc.poll() is None, "the writer finished before it could be killed; make it write more"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert target.read_bytes() == b"old report\n"
    store = SnapshotStore(tmp_path)
    assert list(store.entries()) == []  # the leftover temporary file is never taken for a snapshot


@pytest.mark.parametrize("fault, reason", [
    (Fault.reset(), "connection"), (Fault.truncate(5), "truncated"), (Fault.oversize(10_000), "too_large"),
    (Fault.wrong_type("text/html"), "content_type"),
], ids=["reset", "truncate", "oversize", "login-page"])
def test_a_hostile_server_ends_in_one_clear_error(fault: Fault, reason: str) -> None:
    with LoopbackServer() as server:
        server.route("/x", b'{"ok": true}', content_type="application/json")
        server.fail("/x", *[fault] * 5)
        config = HttpConfig(max_attempts=2, max_bytes=1000, backoff_base=0.01)
        with HttpClient(config, sleep=RecordingSleep()) as client, pytest.raises(RetrievalError) as info:
            client.get(f"{server.url}/x", accept=("application/json",))
    assert info.value.context["reason"] == reason
    assert json.dumps(info.value.to_json())  # one line a pipeline can read
