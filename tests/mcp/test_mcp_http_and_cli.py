"""``bioevidence mcp`` as a command: the bearer token over HTTP, what it refuses to start with,
the missing extra, and that ``import bioevidence`` never loads the SDK."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx2
from mcp_harness import TOKEN, HttpServer, server_env

REPO = Path(__file__).resolve().parents[2]
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "0"}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _post(url: str, **headers: str) -> httpx2.Response:
    return httpx2.post(url, json=INITIALIZE, headers={**HEADERS, **headers}, timeout=30)


def test_http_needs_the_bearer_token_from_the_environment(http_server: HttpServer) -> None:
    assert http_server.url.startswith("http://127.0.0.1:") and http_server.url.endswith("/mcp")
    assert "bearer token required" in http_server.log.read_text()
    for headers in ({}, {"Authorization": "Bearer wrong-token-of-forty-characters-xxxxxx"},
                    {"Authorization": TOKEN}):
        refused = _post(http_server.url, **headers)
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
    assert _post(http_server.url, Authorization=f"Bearer {TOKEN}").status_code == 200
    # DNS rebinding: a page on another origin cannot reach the loopback server, even holding the token
    foreign = _post(http_server.url, Authorization=f"Bearer {TOKEN}", Host="attacker.example")
    assert foreign.status_code in (400, 403, 421)


def test_the_token_verifier_accepts_the_configured_token_only() -> None:
    """What the SDK's bearer middleware asks on every request (the 401s above come from a None here)."""
    from bioevidence.mcp.server import StaticToken

    verifier = StaticToken(TOKEN)
    accepted = asyncio.run(verifier.verify_token(TOKEN))
    assert accepted is not None and accepted.client_id == "bioevidence-mcp"
    for wrong in (TOKEN[:-1], TOKEN + "0", TOKEN.upper(), "", "é" * len(TOKEN)):
        assert asyncio.run(verifier.verify_token(wrong)) is None


def _mcp(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bioevidence", "mcp", *args], capture_output=True, text=True,
                          env=env, timeout=120, stdin=subprocess.DEVNULL, check=False)


def test_it_will_not_serve_beyond_loopback_without_a_token_or_with_a_short_one(tmp_path: Path) -> None:
    env = server_env(tmp_path / "home", tmp_path / "cache")
    store = tmp_path / "store"
    store.mkdir()
    (store / "literature.json").write_text('{"version": 1, "works": {}}')
    for args, extra, words in [
        # the review queue is written by queue_for_review: never inside the pinned store (paths.refuse_output)
        (["--snapshot-dir", str(store), "--queue", str(store / "q.sqlite")], {}, "--queue"),
        (["--queue", str(tmp_path / "no-such-folder" / "q.sqlite")], {}, "--queue"),
        (["--http", "--host", "0.0.0.0"], {}, "BIOEVIDENCE_MCP_TOKEN"),
        (["--http"], {"BIOEVIDENCE_MCP_TOKEN": "short"}, "at least 16"),
        (["--port", "9999"], {}, "--port is for --http"),
        (["--index", str(tmp_path / "no-such-index")], {}, "--index"),
        (["--profile", "/etc/passwd"], {}, "profile"),
    ]:
        done = _mcp(args, {**env, **extra})
        assert done.returncode == 3 and done.stdout == "", (args, done.stderr)
        line = done.stderr.strip().splitlines()[0]
        assert words in json.loads(line)["message"], (args, line)


def test_without_the_extra_it_prints_one_line_naming_it(tmp_path: Path) -> None:
    probe = ("import sys; sys.modules['mcp'] = None; from bioevidence.cli import main; "
             "sys.exit(main(['mcp']))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False,
                          cwd=REPO)
    assert done.returncode == 3 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert "pip install 'bioevidence[mcp]'" in json.loads(line)["message"]


SDK = {"mcp", "mcp_types", "starlette", "uvicorn", "sse_starlette"}


def _loaded_after(code: str) -> set[str]:
    probe = f"import sys; {code}; print('MODULES', ' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False, cwd=REPO,
                         timeout=60).stdout
    return {name.split(".")[0] for name in out.rsplit("MODULES", 1)[1].split()}


def test_import_bioevidence_and_the_cli_never_load_the_sdk() -> None:
    assert _loaded_after("import bioevidence") & SDK == set()
    assert _loaded_after("import bioevidence.mcp, bioevidence.mcp.config") & SDK == set()
    assert _loaded_after("from bioevidence.cli import main; main(['--help'])") & SDK == set()
    assert _loaded_after("from bioevidence.cli import main; main(['validate', 'examples/records'])") & SDK == set()


def test_connections_to_the_http_socket_get_tcp_nodelay() -> None:
    """Regression: a socket made without IPPROTO_TCP left Nagle on, +40 ms a call over HTTP."""
    from bioevidence.mcp.server import listen

    async def accepted_nodelay() -> int:
        sock = listen("127.0.0.1", 0)
        got: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            got.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            value = await asyncio.wait_for(got, 10)
            writer.close()
        return value

    assert asyncio.run(accepted_nodelay()) == 1


def test_a_lone_surrogate_sent_by_a_raw_client_never_reaches_a_tool(http_server: HttpServer) -> None:
    """The SDK's Python client cannot even send "\\ud800"; another client can, as a JSON escape: the
    SDK's JSON parser refuses it as a JSON-RPC parse error (the tools check again behind it)."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with httpx2.Client(timeout=60, headers={**HEADERS, **auth}) as client:
        opened = client.post(http_server.url, json=INITIALIZE)
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        client.post(http_server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        body = '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "validate_record", ' \
               '"arguments": {"record": {"record_id": "x\\ud800"}}}}'
        reply = client.post(http_server.url, content=body.encode(), headers=session)
    assert reply.status_code == 400 and reply.json()["error"]["code"] == -32700
    assert "result" not in reply.json()
