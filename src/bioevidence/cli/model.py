"""The model options the commands that can use an LLM share, and the one place they become an LLM.

``--model`` (the name the server lists at /v1/models), ``--base-url`` (default
``$OPENAI_BASE_URL``; the key comes from ``$OPENAI_API_KEY`` only) and ``--model-timeout``.
:func:`open_llm` builds the :class:`~bioevidence.loop.llm.LLM` and closes its pooled connections
when the command ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

__all__ = ["model_options", "open_llm"]

BASE_URL_HELP = ("OpenAI-compatible server for --model [default: $OPENAI_BASE_URL]; the key comes from "
                 "$OPENAI_API_KEY only.")


def model_options(model_help: str, *, timeout: bool = True) -> Callable[[Any], Any]:
    """``--model`` (with ``model_help``), ``--base-url`` and, unless ``timeout=False``, ``--model-timeout``."""
    options = [click.option("--model", help=model_help), click.option("--base-url", help=BASE_URL_HELP)]
    if timeout:
        options.append(click.option("--model-timeout", type=click.FloatRange(1, 3600), default=120.0,
                                    show_default=True, help="Seconds to wait for one model reply."))

    def apply(f: Any) -> Any:
        for option in reversed(options):
            f = option(f)
        return f

    return apply


def open_llm(model: str | None, base_url: str | None, timeout: float = 120.0, **options: Any) -> Any:
    """The LLM for ``--model`` (``None`` without one), closed when the current command ends."""
    if not model:
        return None
    from ..loop.llm import LLM, OpenAITransport

    llm = LLM(OpenAITransport(base_url, timeout=timeout), model, **options)
    click.get_current_context().call_on_close(llm.close)
    return llm
