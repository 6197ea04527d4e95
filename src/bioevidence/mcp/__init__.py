"""The agent-facing server: the librarian, the gate and the loop as MCP tools (``bioevidence mcp``).

An interface, like ``cli/``: it owns no logic. Every tool calls the stage API a Python user
calls (``Validator``, ``feedback_lines``/``revision_flow``, ``LiteratureGrounder`` with
``locators.target``, ``sources.ground`` and ``Pinner``, ``build_index``, ``Librarian`` over the
local index or Europe PMC, ``ReviewQueue``), over the settings the CLI uses.

::

    config.py    ServerConfig: store, grounders, profiles, index, model, workspace, queue (no SDK import)
    services.py  Services: the loaded gate, literature grounder and librarian, behind locks; the HTTP client
    tools.py     the gate, the loop, passages, ground, ask, find, answer: values in, plain JSON values out
    corpus.py    pin, add_to_index, corpus: papers an agent found, into the store and the index
    review.py    queue_for_review, review_status: a record handed to a person, and the decision
    views.py     what a result holds by default, and what ``details: true`` adds
    models.py    the tools' structured outputs (pydantic models; their JSON Schemas are published)
    specs.py     the tools as published: argument schemas, descriptions, annotations
    server.py    the MCP server on the official SDK: resources, errors, stdio and HTTP

A tool function raises ``BioevidenceError`` on bad input. The SDK (``pip install
'bioevidence[mcp]'``) is imported only by ``models.py``, ``specs.py`` and ``server.py``;
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
