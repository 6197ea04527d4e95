"""Issue 25, cause 11: the MCP HTTP server is locked by default, and its inputs are bounded.

Any local user could call ``ground`` (which writes and goes online) on a server started without a
token; ``--workspace /`` and ``--snapshot-dir /etc`` were accepted; a 3 MiB ``record_id`` was admitted;
a record nested 900 deep got no answer. A real server process over streamable HTTP.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_harness import HttpServer, server_env

from security.harness import run_cli


@pytest.fixture(scope="module")
def locked(corpus: Path, workspace: Path, mcp_cache: Path,
           tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A server started with no token in the environment: it makes one and prints it once."""
    home = tmp_path_factory.mktemp("home")
    server = HttpServer(["--snapshot-dir", str(corpus), "--profile", "literature-claim", "--workspace",
                         str(workspace)], server_env(home, mcp_cache), home / "server.log")
    found = re.findall(r"bearer token for this server \(shown once[^)]*\): (\S+)", server.log.read_text())
    yield server, found
    server.close()


def _initialize(url: str, headers: dict[str, str]) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    return httpx.post(url, json=body, headers={"Accept": "application/json, text/event-stream", **headers},
                      timeout=30)


def _raw_call(url: str, token: str, body: str) -> dict[str, Any]:
    """One JSON-RPC request over streamable HTTP by hand (initialize, initialized, the request): its reply."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "Authorization": f"Bearer {token}"}
    init = _initialize(url, {"Authorization": f"Bearer {token}"})
    session = init.headers.get("mcp-session-id")
    if session:
        headers["mcp-session-id"] = session
    httpx.post(url, content='{"jsonrpc": "2.0", "method": "notifications/initialized"}', headers=headers,
               timeout=30)
    answer = httpx.post(url, content=body, headers=headers, timeout=120)
    assert answer.status_code in (200, 400), (answer.status_code, answer.text[:500])
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        datas = [line[5:].strip() for line in answer.text.splitlines() if line.startswith("data:")]
        return dict(json.loads(datas[-1]))
    return dict(answer.json())


def test_a_server_started_without_a_token_makes_one_and_refuses_callers_without_it(locked: Any) -> None:
    server, found = locked
    assert len(found) == 1 and len(found[0]) >= 32, server.log.read_text()[-2000:]
    assert _initialize(server.url, {}).status_code == 401
    assert _initialize(server.url, {"Authorization": "Bearer wrong-token-of-some-length"}).status_code == 401
    assert _initialize(server.url, {"Authorization": f"Bearer {found[0]}"}).status_code == 200
    assert server.log.read_text().count(found[0]) == 1  # printed once, never logged again


def test_identifiers_are_bounded_and_deep_records_get_an_error(locked: Any, civic: dict[str, Any]) -> None:
    from mcp_harness import civic_record

    server, found = locked
    client = server.client(found[0])
    try:
        record = civic_record(civic)
        huge = copy.deepcopy(record)
        huge["record_id"] = "x" * (3 * 1024 * 1024)
        out = client.ok("validate_record", {"record": huge, "details": True})
        assert out["report"]["overall_status"] == out["overall_status"] == "rejected"
        assert any(f["rule_id"] == "RECORD_INTEGRITY" and "at most 1,000 characters" in f["message"]
                   for f in out["report"]["findings"])
    finally:
        client.close()
    # 900 levels: the SDK client refuses to send it, so the JSON-RPC goes over HTTP by hand
    nested = json.dumps(record).replace('"label": "' + record["statement"]["subject"]["label"] + '"',
                                        '"label": ' + "[" * 900 + '"x"' + "]" * 900, 1)
    reply = _raw_call(server.url, found[0], '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": '
                      '{"name": "validate_record", "arguments": {"record": ' + nested + "}}}")
    # a JSON-RPC error: the parse error (-32700, id null as the spec says) or the tool's own refusal
    assert reply.get("id") == 7 or reply.get("error", {}).get("code") == -32700, reply
    said = json.dumps(reply)
    assert "error" in reply or reply["result"].get("isError"), said[:500]
    assert "deeper" in said or "depth" in said or "recursion" in said, said[:500]


@pytest.mark.parametrize(("flag", "folder"), [("--workspace", "/"), ("--snapshot-dir", "/etc"),
                                              ("--workspace", "/proc/self"), ("--workspace", "~")])
def test_system_folders_are_refused_as_the_servers_folders(flag: str, folder: str, tmp_path: Path) -> None:
    target = str(Path(folder).expanduser())
    run = run_cli(["mcp", flag, target], cwd=tmp_path, env={"HOME": str(Path.home())})
    assert run.code == 3 and not run.traceback, run.stderr[-1000:]
    message = json.loads(run.stderr.splitlines()[-1])["message"]
    assert message.startswith(f"{flag} {target} is "), message
