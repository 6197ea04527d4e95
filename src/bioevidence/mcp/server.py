"""The MCP server on the official SDK: tools with JSON-schema'd inputs and structured outputs,
resources, errors as tool errors, and the stdio and streamable HTTP transports.

Errors: a ``BioevidenceError`` raised by a tool comes back as a tool error (``isError``) whose
text is the one JSON line the CLI writes on stderr (``{"error": "input_error", "message": …}``);
arguments that do not fit a tool's input schema, or that it does not take, come back the same
way as a ``usage_error`` naming the fields (never echoing the values). Any other exception is
the SDK's generic "Error executing tool" (the traceback stays in the server's log). An error
result carries no structured content: no error path ever reports a verdict.

Text an agent reads: each tool's result text is its structured content written by
:func:`bioevidence.errors.llm_json` (the LLM-facing JSON policy), so a passage's control, bidi,
zero-width or tag characters (an invisible prompt-injection channel) come as ``\\uXXXX`` escapes
while the decoded strings, and the structured content, stay verbatim. Error lines too.
"""

from __future__ import annotations

import dataclasses
import functools
import hmac
import socket
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent
from pydantic import AnyHttpUrl, BaseModel, ValidationError

from .._version import __version__
from ..errors import BioevidenceError, ConfigurationError, llm_json, safe_message
from .services import Services
from .specs import INSTRUCTIONS, tool_list

T = TypeVar("T")

# -- errors -------------------------------------------------------------------------------------

def error_result(payload: dict[str, Any]) -> CallToolResult:
    """A tool error whose text is one JSON line, as the CLI writes errors on stderr."""
    return CallToolResult(content=[TextContent(type="text", text=llm_json(payload))], is_error=True)


def usage_error(message: str) -> CallToolResult:
    return error_result({"error": "usage_error", "message": safe_message(message)})


def _describe(exc: ValidationError, tool: str) -> str:
    problems = []
    for err in exc.errors():
        where = ".".join(str(part) for part in err["loc"]) or "arguments"
        problems.append(f"{where}: {err['msg']}")
    return f"invalid arguments for {tool}: " + "; ".join(problems[:10])


def tool_result(out: BaseModel) -> CallToolResult:
    """A tool's structured output as a result whose text is written by the LLM-facing JSON policy
    (the SDK would write it with invisible characters raw); the structured content is the same value.
    Keys left unset (optional, ``None``: e.g. what ``details`` adds) are left out, and the text is
    compact JSON: a model reads it, and every byte costs context."""
    data = out.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return CallToolResult(content=[TextContent(type="text", text=llm_json(data, compact=True))],
                          structured_content=data)


def as_tool_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` with a ``BioevidenceError`` returned as a tool error and its output as a
    :func:`tool_result` (the signature is kept for the SDK, which still checks the output schema)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            out = fn(*args, **kwargs)
        except BioevidenceError as exc:
            return error_result(exc.to_json())
        return tool_result(out) if isinstance(out, BaseModel) else out

    return wrapper


class BioevidenceMCP(MCPServer):
    """``MCPServer`` that refuses unknown arguments and words argument errors like the CLI."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tool_specs: dict[str, Tool] = {t.name: t for t in kwargs.get("tools") or ()}

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        spec = self.tool_specs.get(name)
        if spec is not None:
            known = list(spec.parameters.get("properties", {}))
            unknown = sorted(set(arguments) - set(known))
            if unknown:
                return usage_error(f"{name} takes no argument {', '.join(repr(u[:40]) for u in unknown[:5])}; "
                                   f"its arguments are {', '.join(known)}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc, UnexpectedToolError) and isinstance(exc.__cause__, ValidationError):
                return usage_error(_describe(exc.__cause__, name))
            raise


# -- resources ----------------------------------------------------------------------------------

def add_resources(server: MCPServer, services: Services) -> None:
    from ..gate.profiles import builtin_profiles, load_profile
    from ..gate.rules import CATALOGUE
    from ..resources import schema_file

    def profiles() -> dict[str, Any]:
        loaded = {name: load_profile(name) for name in builtin_profiles()}
        for name in services.profile_names():
            loaded.setdefault(name, services.profile(name))
        return {"default": services.default_profile.id if services.default_profile is not None else None,
                "profiles": {name: p.to_dict() for name, p in sorted(loaded.items())}}

    def profile_yaml(name: str) -> str:
        if name not in services.profile_names():
            raise ResourceNotFoundError(f"no profile {name[:40]!r}; see bioevidence://profiles")
        profile = services.profile(name)
        if profile.path is None:
            raise ResourceNotFoundError(f"profile {name!r} has no file")
        return profile.path.read_text(encoding="utf-8")

    def rules() -> list[dict[str, Any]]:
        return [dataclasses.asdict(rule) for rule in CATALOGUE]

    def record_schema() -> str:
        return schema_file("bioevidence_core.schema.json").read_text(encoding="utf-8")

    def about() -> dict[str, Any]:
        with services.gate_lock:
            grounders = [g.name for g in services.grounders]
        return {"name": "bioevidence", "version": __version__, "grounders": grounders, **services.config.summary()}

    server.resource("bioevidence://profiles", name="profiles", mime_type="application/json",
                    description="The profiles a record can be validated under, with each use's contract.")(profiles)
    server.resource("bioevidence://profiles/{name}", name="profile", mime_type="application/yaml",
                    description="One profile's YAML file.")(profile_yaml)
    server.resource("bioevidence://rules", name="rules", mime_type="application/json",
                    description="The rule catalogue: code, severity, scope, route and meaning.")(rules)
    server.resource("bioevidence://schema/record", name="record-schema", mime_type="application/schema+json",
                    description="The JSON Schema of evidence records.")(record_schema)
    server.resource("bioevidence://server", name="server", mime_type="application/json",
                    description="This server's configuration: store, grounders, profiles, index, model.")(about)


def build_server(services: Services, **settings: Any) -> BioevidenceMCP:
    """The MCP server over ``services`` (``settings`` go to ``MCPServer``: auth, token verifier)."""
    import logging

    # bm25s sets its own logger to DEBUG; under the SDK's log handler every add_to_index would fill the log
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    server = BioevidenceMCP("bioevidence", title="bioevidence", version=__version__, instructions=INSTRUCTIONS,
                            tools=tool_list(services, as_tool_errors), log_level="WARNING", **settings)
    add_resources(server, services)
    return server


# -- transports ---------------------------------------------------------------------------------

def run_stdio(services: Services) -> None:
    """Serve on stdin/stdout until the client closes them."""
    import anyio

    anyio.run(build_server(services).run_stdio_async)


class StaticToken:
    """A ``TokenVerifier`` for one bearer token from the environment (compared in constant time)."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token="bearer", client_id="bioevidence-mcp", scopes=[])
        return None


LOOPBACK = ("127.0.0.1", "localhost", "::1")
MIN_TOKEN = 16


def check_http(host: str, token: str | None) -> None:
    """Refuse an HTTP server reachable beyond this machine without a token, and short tokens."""
    from . import TOKEN_ENV

    if token is not None and len(token) < MIN_TOKEN:
        raise ConfigurationError(f"{TOKEN_ENV} holds {len(token)} characters; use at least {MIN_TOKEN} "
                                 "(e.g. `openssl rand -hex 32`)")
    if token is None and host not in LOOPBACK:
        raise ConfigurationError(f"--host {host} serves beyond this machine: set {TOKEN_ENV} to require a bearer "
                                 "token (or serve on 127.0.0.1)")


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port).

    Created with ``IPPROTO_TCP``: asyncio sets ``TCP_NODELAY`` only on accepted sockets whose
    protocol says TCP, and without it Nagle's algorithm meets the client's delayed ACK and every
    call waits ~40 ms (measured: 48 ms a ``validate_record`` over HTTP, 10 ms with it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigurationError(f"cannot listen on {host}:{port}: {exc.strerror}; choose another --port") from exc
    sock.listen(128)
    return sock


def run_http(services: Services, host: str, port: int, token: str | None, path: str = "/mcp") -> None:
    """Serve streamable HTTP on ``host:port`` (port 0: any free port); the URL goes to stderr."""
    import anyio
    import uvicorn

    check_http(host, token)
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}{path}"
    settings: dict[str, Any] = {}
    if token is not None:
        settings = {"auth": AuthSettings(issuer_url=AnyHttpUrl(f"http://{shown}:{bound}"), resource_server_url=None),
                    "token_verifier": StaticToken(token)}
    app = build_server(services, **settings).streamable_http_app(streamable_http_path=path, host=host)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"bioevidence mcp: streamable HTTP at {url} "
          f"({'bearer token required' if token else 'no token: loopback only'})", file=sys.stderr, flush=True)
    anyio.run(functools.partial(uvicorn.Server(config).serve, sockets=[sock]))
