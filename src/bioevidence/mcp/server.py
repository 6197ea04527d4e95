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
from typing import Annotated, Any, TypeVar

from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import AnyHttpUrl, BaseModel, Field, ValidationError

from .._version import __version__
from ..errors import BioevidenceError, ConfigurationError, llm_json, safe_message
from . import tools
from .models import AnswerOut, AskOut, GroundOut, PassagesOut, ReviseStepOut, ValidationOut
from .services import Services

T = TypeVar("T")

INSTRUCTIONS = """\
bioevidence checks evidence records against pinned sources. Before you answer with a claim, put it \
in a record and call validate_record: only an 'admitted' verdict means the gate confirmed it. \
Fixable findings come back as exact corrections from revise_step (send your revision with the \
earlier ones in 'previous'); other findings go to a person and cannot be fixed by rewording. \
Quote papers verbatim: get_passage returns the pinned text behind a locator. ask finds verbatim \
evidence in the local index; answer cites only evidence the gate verified. ground is the only \
tool that uses the network: it pins the papers a record cites. Resources: bioevidence://profiles, bioevidence://rules, bioevidence://schema/record."""

RECORD = "An evidence record (JSON object; schema: resource bioevidence://schema/record)."
PROFILE = ("A built-in profile name (resource bioevidence://profiles) or a profile the server was started "
           "with; default: the server's --profile, else the record's profile_id.")


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
    (the SDK would write it with invisible characters raw); the structured content is the same value."""
    data = out.model_dump(mode="json", by_alias=True)
    return CallToolResult(content=[TextContent(type="text", text=llm_json(data, indent=2))], structured_content=data)


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


# -- tools --------------------------------------------------------------------------------------

def _tool(fn: Callable[..., Any], title: str, *, read_only: bool = True, network: bool = False) -> Tool:
    spec = Tool.from_function(as_tool_errors(fn), name=fn.__name__, annotations=ToolAnnotations(
        # a tool that goes online is not idempotent: ground with refresh may pin newer bytes
        title=title, read_only_hint=read_only, destructive_hint=False, idempotent_hint=not network,
        open_world_hint=network), structured_output=True)
    spec.parameters["additionalProperties"] = False
    return spec


def tool_list(services: Services) -> list[Tool]:
    """The server's tools, each a thin shell over :mod:`.tools`."""

    def validate_record(
        record: Annotated[dict[str, Any] | None, Field(description=RECORD)] = None,
        path: Annotated[str | None, Field(description="Instead of 'record': a .json/.yaml record file, relative "
                                          "to the server's --workspace (never outside it).",
                                          min_length=1, max_length=4096)] = None,
        profile: Annotated[str | None, Field(description=PROFILE, max_length=200)] = None,
    ) -> ValidationOut:
        """Check one evidence record with the gate: the verdict per requested use (admitted, review_required,
        rejected) and every finding with its rule code, route and fix. Quotes are checked against the
        pinned papers; only 'admitted' means the gate confirmed the record."""
        return ValidationOut.model_validate(tools.validate_record(services, record, path, profile))

    def revise_step(
        record: Annotated[dict[str, Any], Field(description="This round's proposal: a record, or a draft "
                                                "(sources/evidence) built into one.")],
        previous: Annotated[list[dict[str, Any]] | None, Field(description="The earlier rounds' proposals, "
                                                               "oldest first (none for round 1).",
                                                               max_length=20)] = None,
        profile: Annotated[str | None, Field(description=PROFILE, max_length=200)] = None,
        rounds: Annotated[int | None, Field(description="Rounds in the loop (default: the server's --rounds).",
                                            ge=1, le=20)] = None,
    ) -> ReviseStepOut:
        """One round of the feedback loop revise(): validates the proposal (carrying evidence verified in
        earlier rounds), decides admitted / feedback / to a person, and returns the feedback lines revise()
        would send to the model (one per fixable finding, with the exact fix). Findings that need
        judgment are never fed back: they go to a person."""
        return ReviseStepOut.model_validate(tools.revise_step(services, record, previous, profile, rounds))

    def get_passage(
        work: Annotated[str, Field(description="pmid:N, pmcid:PMCN or doi:10.… of a pinned work.",
                                   min_length=1, max_length=300)],
        locator: Annotated[str, Field(description="Where in the paper: a passage id (#n88, pmid:1#p4), a part "
                                      "(abstract, title, references), a section (Results, Methods) or a label "
                                      "(Table 2, Figure 1).", min_length=1, max_length=500)],
        limit: Annotated[int, Field(description="Most passages returned.", ge=1, le=500)] = 20,
    ) -> PassagesOut:
        """The pinned text a locator names in one work: each passage's printed text (exactly what the gate
        checks quotes against), its id, part, section, label and the SHA-256 of the bytes it came from."""
        return PassagesOut.model_validate(tools.get_passage(services, work, locator, limit))

    def ground(
        record: Annotated[dict[str, Any], Field(description=RECORD)],
        refresh: Annotated[bool, Field(description="Resolve works again even when pinned (a retraction may "
                                       "have appeared).")] = False,
    ) -> GroundOut:
        """NETWORK: the one tool that goes online. Resolves the publications the record cites (NCBI
        E-utilities, Europe PMC, Crossref), pins their bytes into the server's snapshot folder, and returns
        the record with sha256, observed_sha256 and retrieved_at filled in. Validate it afterwards."""
        return GroundOut.model_validate(tools.ground(services, record, refresh))

    def ask(
        question: Annotated[str, Field(description="A question in plain language (read as a claim for stance).",
                                       min_length=1, max_length=2000)],
        top_k: Annotated[int, Field(description="Sentences returned (as `bioevidence ask --top-k`).", ge=1,
                                    le=200)] = 10,
        papers: Annotated[int | None, Field(description="Most papers the sentences come from (default: the "
                                            "librarian's).", ge=1, le=200)] = None,
        include_retracted: Annotated[bool, Field(description="Also return sentences of retracted papers "
                                                 "(flagged); by default they are withheld and listed.")] = False,
    ) -> AskOut:
        """Find evidence in the local index: the question's best verbatim sentences across the pinned papers,
        each with its stance (supports / contradicts / neutral / undetermined; neutral when it is not about the
        question), locator, offsets into its passage and the SHA-256 of its paper, plus source_artifacts and
        evidence_items ready for a record."""
        return AskOut.model_validate(tools.ask(services, question, top_k, papers, include_retracted))

    def answer(
        question: Annotated[str, Field(description="A question in plain language (read as a claim).", min_length=1,
                                       max_length=2000)],
        top_k: Annotated[int, Field(description="Sentences considered (as ask).", ge=1, le=200)] = 10,
        papers: Annotated[int | None, Field(description="Most papers considered (as ask).", ge=1, le=200)] = None,
        max_papers: Annotated[int, Field(description="Papers quoted per stance in the answer.", ge=1,
                                         le=20)] = 3,
    ) -> AnswerOut:
        """A cited answer to a question (as `bioevidence answer`): its direction (supports, contradicts, mixed,
        undetermined or insufficient) decided from the papers' stances, a verdict saying it in words, and the
        sentences that decided it grouped by paper; with the server's --model, a short synthesis. Every
        sentence cites item numbers, and the answer's evidence record is validated against the pinned papers
        first: only items the gate verified are cited, the others are left out and named. Returns the record
        and the gate's verdict on it too."""
        return AnswerOut.model_validate(tools.answer(services, question, top_k, papers, max_papers))

    config = services.config
    model = "llm" in (config.planner, config.judge, config.stance)  # ask talks to the model

    return [
        _tool(ask, "Find verbatim evidence", network=model),
        _tool(answer, "Answer with cited, gate-verified evidence", network=model or config.model is not None),
        _tool(validate_record, "Validate a record"),
        _tool(revise_step, "One round of the feedback loop"),
        _tool(get_passage, "Read a pinned passage"),
        _tool(ground, "Pin cited papers (network)", read_only=False, network=True),
    ]


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
    server = BioevidenceMCP("bioevidence", title="bioevidence", version=__version__, instructions=INSTRUCTIONS,
                            tools=tool_list(services), log_level="WARNING", **settings)
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
