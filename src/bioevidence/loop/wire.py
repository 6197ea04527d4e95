"""What an LLM call sends and gets back, independent of any client library (:mod:`.llm` builds
requests, :mod:`.openai_transport` sends them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["DEFAULT_TIMEOUT", "ChatReply", "ChatRequest", "Message", "Transport"]

DEFAULT_TIMEOUT = 120.0
Message = dict[str, str]


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion request, independent of any client library."""

    model: str
    messages: tuple[Message, ...]
    temperature: float = 0.2
    max_tokens: int | None = None
    response_format: dict[str, Any] | None = None
    seed: int | None = None


@dataclass(frozen=True)
class ChatReply:
    """The text of the first choice plus what the log line needs."""

    text: str
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    seconds: float = 0.0


class Transport(Protocol):
    """Sends one request; raises :class:`~bioevidence.errors.RetrievalError` (or
    :class:`~bioevidence.errors.ModelError`) on failure. A transport holding connections may also
    have ``close()``; :meth:`bioevidence.loop.llm.LLM.close` calls it when present."""

    def send(self, request: ChatRequest) -> ChatReply: ...
