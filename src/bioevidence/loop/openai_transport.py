"""The live transport: any OpenAI-compatible chat endpoint through the ``openai`` package
(imported lazily), and the one place where ``openai`` errors become ours."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from ..errors import BioevidenceError, ConfigurationError, ModelError, RetrievalError
from .wire import DEFAULT_TIMEOUT, ChatReply, ChatRequest

__all__ = ["OpenAITransport", "translate_openai_error"]


def translate_openai_error(exc: Exception, *, base_url: str, model: str, timeout: float) -> BioevidenceError:
    """Map an ``openai`` exception to ours; every upstream class has a case (tested one by one)."""
    import openai

    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.APITimeoutError):
        return RetrievalError(f"the model server at {base_url} did not answer within {timeout:g} s; "
                              "raise the timeout or use a smaller max_tokens", url=base_url, retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return RetrievalError(f"cannot reach the model server at {base_url}: {exc}; start the server or set "
                              "OPENAI_BASE_URL", url=base_url, retryable=True)
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return RetrievalError(f"the model server at {base_url} refused the credentials (HTTP {status}); set "
                              "OPENAI_API_KEY in the environment", url=base_url, status=status)
    if isinstance(exc, openai.NotFoundError):
        return RetrievalError(f"the model server at {base_url} does not serve model {model!r} (HTTP 404); "
                              "check --model against the server's /v1/models", url=base_url, status=status)
    if isinstance(exc, openai.RateLimitError):
        return RetrievalError(f"the model server at {base_url} is rate limiting (HTTP 429) after retries; "
                              "wait and run again (finished episodes are skipped)", url=base_url, status=status,
                              retryable=True)
    if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError | openai.ConflictError):
        return RetrievalError(f"the model server at {base_url} rejected the request (HTTP {status}): "
                              f"{_short(exc)}", url=base_url, status=status)
    if isinstance(exc, openai.InternalServerError):
        return RetrievalError(f"the model server at {base_url} failed (HTTP {status}) after retries: "
                              f"{_short(exc)}; check its log or try again", url=base_url, status=status,
                              retryable=True)
    if isinstance(exc, openai.APIStatusError):
        return RetrievalError(f"the model server at {base_url} answered HTTP {status}: {_short(exc)}",
                              url=base_url, status=status, retryable=status is not None and status >= 500)
    if isinstance(exc, openai.LengthFinishReasonError | openai.ContentFilterFinishReasonError):
        return ModelError(f"model {model!r} stopped before finishing its reply ({type(exc).__name__}); raise "
                          "max_tokens", model=model)
    if isinstance(exc, openai.APIResponseValidationError):
        return ModelError(f"the model server at {base_url} sent a reply that is not an OpenAI chat completion: "
                          f"{_short(exc)}", model=model)
    return RetrievalError(f"the model client failed talking to {base_url}: {type(exc).__name__}: {_short(exc)}",
                          url=base_url)


def _short(exc: Exception, limit: int = 300) -> str:
    text = str(exc).replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"


class OpenAITransport:
    """The live transport: ``openai.OpenAI(...).chat.completions.create``.

    ``base_url`` defaults to ``$OPENAI_BASE_URL``; the key is read from ``$OPENAI_API_KEY`` only
    (local servers accept any, so a placeholder is sent when it is unset). ``max_retries``
    are the client's own retries (with backoff, honouring ``Retry-After``) for connection
    errors, timeouts, 408/409/429 and 5xx. ``close()`` (or ``with``) releases its pooled
    connections; a long-lived agent should close it, as :meth:`LLM.close` does.
    """

    def __init__(self, base_url: str | None = None, *, timeout: float = DEFAULT_TIMEOUT, max_retries: int = 2,
                 env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        url = base_url or env.get("OPENAI_BASE_URL") or ""
        if not url:
            raise ConfigurationError("no model server: set OPENAI_BASE_URL (e.g. http://127.0.0.1:8080/v1)")
        self.base_url = url.rstrip("/")
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self._api_key = env.get("OPENAI_API_KEY") or "sk-no-key-required"
        self._client: Any = None

    def close(self) -> None:
        """Close the pooled connections (a new client is made if the transport is used again)."""
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> OpenAITransport:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAITransport(base_url={self.base_url!r}, timeout={self.timeout:g})"

    def _get_client(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(base_url=self.base_url, api_key=self._api_key, timeout=self.timeout,
                                         max_retries=self.max_retries)
        return self._client

    def send(self, request: ChatRequest) -> ChatReply:
        import openai

        kwargs: dict[str, Any] = {"model": request.model, "messages": list(request.messages),
                                  "temperature": request.temperature}
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        if request.seed is not None:
            kwargs["seed"] = request.seed
        start = time.perf_counter()
        try:
            completion = self._get_client().chat.completions.create(**kwargs)
        except openai.OpenAIError as exc:
            raise translate_openai_error(exc, base_url=self.base_url, model=request.model,
                                         timeout=self.timeout) from exc
        seconds = time.perf_counter() - start
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise ModelError(f"the model server at {self.base_url} returned no choices for model "
                             f"{request.model!r}", model=request.model)
        message = choices[0].message
        text = getattr(message, "content", None) or ""
        if not text and getattr(message, "refusal", None):
            text = str(message.refusal)
        usage = getattr(completion, "usage", None)
        return ChatReply(text=text, model=getattr(completion, "model", None) or request.model,
                         prompt_tokens=getattr(usage, "prompt_tokens", None),
                         completion_tokens=getattr(usage, "completion_tokens", None),
                         finish_reason=getattr(choices[0], "finish_reason", None), seconds=seconds)
