"""The agent-facing server: the librarian, the gate and the loop as MCP tools (``bioevidence mcp``).

An interface, like ``cli/``: it owns no logic. Every tool calls the stage API a Python user
calls (``Validator``, ``feedback_lines``/``revision_flow``, ``LiteratureGrounder`` with
``locators.target``, ``sources.ground``, ``Librarian``), over the settings the CLI uses.

::

    config.py    ServerConfig: store, grounders, profiles, index, model, workspace (no SDK import)
    services.py  Services: the loaded gate, literature grounder and librarian, behind locks
    tools.py     one function per tool: values in, plain JSON values out; BioevidenceError on bad input
    models.py    the tools' structured outputs (pydantic models; their JSON Schemas are published)
    server.py    the MCP server on the official SDK: tools, resources, errors, stdio and HTTP

The SDK (``pip install 'bioevidence[mcp]'``) is imported only by ``models.py`` and ``server.py``;
``import bioevidence`` never imports it.
"""

from __future__ import annotations

from ..extras import MissingExtraError

TOKEN_ENV = "BIOEVIDENCE_MCP_TOKEN"

__all__ = ["TOKEN_ENV", "require_sdk"]


def require_sdk() -> None:
    """Raise :class:`MissingExtraError` (exit 3, one line naming ``pip install 'bioevidence[mcp]'``) when
    the MCP SDK is not installed."""
    try:
        import mcp.server  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("mcp", "mcp", what="bioevidence mcp needs the MCP SDK, which") from exc
