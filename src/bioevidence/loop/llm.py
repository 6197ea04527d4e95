"""The LLM adapter: any OpenAI-compatible chat endpoint, JSON replies parsed tolerantly.

Two layers, so tests and replays plug in at the wire and nothing of ours is mocked:

* a :class:`Transport` sends one :class:`ChatRequest` and returns one :class:`ChatReply`.
  :class:`OpenAITransport` is the live one (the ``openai`` package, imported lazily); it is the
  one place where ``openai`` errors become ours (:func:`translate_openai_error`).
* :class:`LLM` builds requests, constrains replies with a JSON Schema, parses them
  (:func:`parse_json_reply`: code fences, ``<think>`` blocks, trailing commas, leading and
  trailing prose), checks them against the schema, retries once on a malformed reply (at
  temperature 0, stating the error), and logs one line per call (model, tokens, seconds).

Structured output degrades by server: ``json_schema`` (OpenAI, vLLM, llama.cpp's server,
Ollama…) → ``json_object`` (with the schema under ``"schema"``, which llama-cpp-python's server
turns into a grammar) → plain prompting (the schema is then written into the prompt). A server
that refuses a format (an HTTP error naming ``response_format``/``json_schema``…, but not a
prompt over the context window) is asked again one step down, and the adapter remembers the
format that worked. Base URL and API key come from
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (the key never from a flag or a file); local servers
need no key.

>>> llm = LLM(OpenAITransport(), model="gemma-3-270m")          # doctest: +SKIP
>>> llm.complete_json([{"role": "user", "content": "..."}], schema).value  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from ..errors import ConfigurationError, ModelError, RetrievalError
from .openai_transport import OpenAITransport, translate_openai_error
from .wire import DEFAULT_TIMEOUT, ChatReply, ChatRequest, Message, Transport

__all__ = [
    "DEFAULT_TIMEOUT",
    "FORMATS",
    "LLM",
    "ChatReply",
    "ChatRequest",
    "JsonExchange",
    "MalformedReply",
    "OpenAITransport",
    "Transport",
    "Turn",
    "parse_json_reply",
    "translate_openai_error",
]

log = logging.getLogger("bioevidence.llm")

#: Structured-output modes, strongest first.
FORMATS = ("json_schema", "json_object", "text")


# ----------------------------------------------------------------------------- tolerant parsing
_THINK = re.compile(r"<(think|thinking|reasoning|thought)>.*?</\1\s*>", re.S | re.I)
_THINK_END = re.compile(r"</(think|thinking|reasoning|thought)\s*>", re.I)
_OPEN = re.compile(r"[{\[]")
_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*?)(?:```|$)", re.S)


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``}`` or ``]`` outside strings."""
    out: list[str] = []
    in_string = escape = False
    n = len(text)
    for i, ch in enumerate(text):
        if in_string:
            out.append(ch)
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                continue
        out.append(ch)
    return "".join(out)


def _decode_embedded(text: str) -> tuple[Any, str | None]:
    """JSON at the first ``{``/``[`` that decodes (prose before and after is ignored).

    After a start fails, the next one is looked for only past the point where decoding broke,
    so an object nested inside a broken (e.g. cut-off) one is never taken for the answer.
    """
    decoder = json.JSONDecoder()
    error: str | None = None
    at, tries = 0, 0
    while tries < 50:
        match = _OPEN.search(text, at)
        if match is None:
            break
        tries += 1
        try:
            value, _ = decoder.raw_decode(text, match.start())
            return value, None
        except json.JSONDecodeError as exc:
            if error is None:
                error = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
            at = max(exc.pos, match.start() + 1)
    return _NOTHING, error or "no JSON object or array found in the reply"


_NOTHING = object()


def parse_json_reply(text: str) -> Any:
    """The JSON value a model meant to send; :class:`ModelError` naming the problem if none.

    Tolerates reasoning blocks (``<think>…</think>``, also an unopened ``</think>`` prefix),
    Markdown code fences, prose before or after the JSON, and trailing commas. Nothing else is
    repaired: a reply that needs guessing is malformed and gets one retry.
    """
    if not text or not text.strip():
        raise ModelError("the reply was empty")
    cleaned = _THINK.sub("", text)
    ends = list(_THINK_END.finditer(cleaned))
    if ends:
        cleaned = cleaned[ends[-1].end():]
    candidates = [m.group(1) for m in _FENCE.finditer(cleaned) if "{" in m.group(1) or "[" in m.group(1)]
    candidates.append(cleaned)
    first_error: str | None = None
    for candidate in candidates:
        for variant in (candidate, _drop_trailing_commas(candidate)):
            stripped = variant.strip()
            try:
                return json.loads(stripped)
            except json.JSONDecodeError:
                pass
            value, error = _decode_embedded(stripped)
            if value is not _NOTHING:
                return value
            first_error = first_error or error
    raise ModelError(f"the reply is not valid JSON: {first_error}")


def schema_errors(value: Any, schema: Mapping[str, Any], limit: int = 5) -> list[str]:
    """Up to ``limit`` readable JSON Schema violations (path: message), best first."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: (len(list(e.absolute_path)), e.message))
    out = []
    for err in errors[:limit]:
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        message = err.message if len(err.message) <= 200 else err.message[:200] + "…"
        out.append(f"{path}: {message}")
    return out


# ----------------------------------------------------------------------------- the adapter
@dataclass(frozen=True)
class Turn:
    """One call of a JSON exchange: what was sent, what came back, and why it was refused."""

    messages: tuple[Message, ...]
    reply: ChatReply
    mode: str
    temperature: float
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        r = self.reply
        return {"mode": self.mode, "temperature": self.temperature, "reply": r.text, "model": r.model,
                "prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens,
                "finish_reason": r.finish_reason, "seconds": round(r.seconds, 3), "error": self.error}


@dataclass(frozen=True)
class JsonExchange:
    """A parsed JSON reply and every call it took (one, or two after a retry)."""

    value: Any
    turns: tuple[Turn, ...] = field(default_factory=tuple)


class MalformedReply(ModelError):
    """The model's reply was unusable after one retry; ``turns`` holds both attempts."""

    def __init__(self, message: str, *, turns: Sequence[Turn] = (), model: str | None = None) -> None:
        super().__init__(message, model=model)
        self.turns = tuple(turns)


_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "structured output", "guided")
_OVERFLOW_WORDS = ("context length", "context window", "maximum context", "too many tokens", "exceed")


def _refuses_format(exc: RetrievalError) -> bool:
    """Whether a server error says the structured-output format was refused (not, e.g., a long prompt).

    Servers answer 400/422 (OpenAI, vLLM) or 500 (llama-cpp-python) naming the field; a prompt
    over the context window is also a 400 and must not step the format down.
    """
    if exc.status is None:
        return False
    text = exc.message.lower()
    if any(word in text for word in _OVERFLOW_WORDS):
        return False
    return any(word in text for word in _FORMAT_WORDS)


def _fold_system(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """System messages merged into the first user message (for chat templates without a system role)."""
    system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if not system:
        return tuple(rest)
    for m in rest:
        if m.get("role") == "user":
            m["content"] = system + "\n\n" + m["content"]
            return tuple(rest)
    return ({"role": "user", "content": system}, *rest)


def _format_for(mode: str, schema: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema), "strict": True}}
    if mode == "json_object":
        # "schema" is the llama.cpp / Anyscale extension of JSON mode (a grammar from the schema);
        # servers without it ignore the key, and the schema is in the prompt as well.
        return {"type": "json_object", "schema": dict(schema)}
    return None


def _schema_instruction(schema: Mapping[str, Any]) -> str:
    return ("Answer with exactly one JSON object that matches this JSON Schema, and nothing else:\n"
            + json.dumps(schema, separators=(",", ":"), ensure_ascii=False))


class LLM:
    """Chat with one model through a transport; JSON replies constrained, parsed and retried once.

    ``mode`` is the strongest structured-output format to try (see :data:`FORMATS`); it steps
    down by itself when the server rejects one. ``seed`` is sent when set (servers that honour
    it make runs repeatable). ``fold_system`` merges system messages into the first user message,
    for chat templates that drop the system role (llama-cpp-python's ``gemma`` format does).
    """

    def __init__(self, transport: Transport, model: str, *, temperature: float = 0.2,
                 max_tokens: int | None = 1024, mode: str = "json_schema", seed: int | None = None,
                 fold_system: bool = False, logger: logging.Logger | None = None) -> None:
        if mode not in FORMATS:
            raise ConfigurationError(f"structured-output mode {mode!r} is not one of {', '.join(FORMATS)}")
        if not model:
            raise ConfigurationError("no model name: pass --model (the name the server lists at /v1/models)")
        self.transport = transport
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.mode = mode
        self.seed = seed
        self.fold_system = fold_system
        self.log = logger or log
        self.calls = 0

    def close(self) -> None:
        """Close the transport's connections, when it has any (``with LLM(...) as llm:`` does it)."""
        close = getattr(self.transport, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _send(self, request: ChatRequest, mode: str) -> ChatReply:
        reply = self.transport.send(request)
        self.calls += 1
        self.log.info("model call: model=%s mode=%s prompt_tokens=%s completion_tokens=%s seconds=%.2f finish=%s",
                      reply.model, mode, reply.prompt_tokens, reply.completion_tokens, reply.seconds,
                      reply.finish_reason)
        return reply

    def complete(self, messages: Sequence[Message], *, temperature: float | None = None,
                 max_tokens: int | None = None) -> ChatReply:
        """A plain-text reply (no format constraint)."""
        sent = tuple(dict(m) for m in messages)
        request = ChatRequest(self.model, _fold_system(sent) if self.fold_system else sent,
                              self.temperature if temperature is None else temperature,
                              max_tokens or self.max_tokens, None, self.seed)
        return self._send(request, "text")

    def _send_json(self, messages: tuple[Message, ...], schema: Mapping[str, Any], name: str,
                   temperature: float, max_tokens: int | None) -> tuple[ChatReply, str, tuple[Message, ...]]:
        """Send with the strongest accepted format, stepping down on HTTP 400/422."""
        if self.fold_system:
            messages = _fold_system(messages)
        while True:
            mode = self.mode
            sent = messages
            if mode != "json_schema":
                sent = (*messages[:-1], {**messages[-1],
                                         "content": messages[-1]["content"] + "\n\n" + _schema_instruction(schema)})
            request = ChatRequest(self.model, sent, temperature, max_tokens, _format_for(mode, schema, name),
                                  self.seed)
            try:
                return self._send(request, mode), mode, sent
            except RetrievalError as exc:
                if mode == "text" or not _refuses_format(exc):
                    raise
                self.mode = FORMATS[FORMATS.index(mode) + 1]
                self.log.warning("model server rejected response_format %s (HTTP %s); using %s from now on",
                                 mode, exc.status, self.mode)

    def complete_json(self, messages: Sequence[Message], schema: Mapping[str, Any], *, name: str = "reply",
                      temperature: float | None = None, max_tokens: int | None = None,
                      check: Callable[[Any], list[str]] | None = None) -> JsonExchange:
        """One JSON value matching ``schema``; one retry at temperature 0 naming the error.

        ``check`` may add problems of its own (returning readable lines) on top of the schema.
        Raises :class:`MalformedReply` (a :class:`ModelError`) when the retry fails too, and
        :class:`RetrievalError` when the server cannot be used.
        """
        base = tuple(dict(m) for m in messages)
        if not base:
            raise ConfigurationError("complete_json needs at least one message")
        temp = self.temperature if temperature is None else temperature
        limit = max_tokens or self.max_tokens
        turns: list[Turn] = []
        convo = base
        for attempt in range(2):
            reply, mode, sent = self._send_json(convo, schema, name, temp, limit)
            error = self._problem(reply, schema, check)
            turns.append(Turn(sent, reply, mode, temp, error))
            if error is None:
                return JsonExchange(parse_json_reply(reply.text), tuple(turns))
            if attempt == 1:
                break
            convo = (*base, {"role": "assistant", "content": reply.text[:4000]},
                     {"role": "user", "content": f"Your reply could not be used: {error}. Reply again with only "
                                                 "one JSON object that matches the schema: no prose, no code fences."})
            temp = 0.0
        raise MalformedReply(f"model {self.model!r} sent an unusable reply twice; last problem: {turns[-1].error}",
                             turns=turns, model=self.model)

    def _problem(self, reply: ChatReply, schema: Mapping[str, Any],
                 check: Callable[[Any], list[str]] | None) -> str | None:
        try:
            value = parse_json_reply(reply.text)
        except ModelError as exc:
            cut = " (the reply was cut off at max_tokens)" if reply.finish_reason == "length" else ""
            return exc.message + cut
        problems = schema_errors(value, schema)
        if not problems and check is not None:
            problems = check(value)
        if problems:
            return "the JSON does not match the schema: " + "; ".join(problems)
        return None
