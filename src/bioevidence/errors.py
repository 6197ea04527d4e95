"""One exception root for everything bioevidence raises on purpose.

::

    BioevidenceError                       exit code 3 at the command line
    ├── InputError(ValueError)             a record, draft or input file is malformed
    │   └── LimitError                     ... or over a configured limit (size, inflated size, YAML aliases)
    ├── ConfigurationError(ValueError)     a profile, flag, grounder declaration or setting is wrong
    │   └── MissingExtraError              an optional dependency is absent (``bioevidence.extras``)
    ├── SourceError(OSError)               pinned bytes are missing or do not hash to their name
    │   └── IntegrityError                 bytes present but corrupted or truncated
    ├── SourceAccessError(OSError)         pinned bytes are there but cannot be read (permissions, I/O)
    ├── RetrievalError(OSError)            a remote service failed (``retryable`` says if trying later may help)
    ├── ModelError(RuntimeError)           a language model's reply could not be used
    ├── ClusterError(RuntimeError)         a Dask scheduler or its workers could not run the work
    └── BusyError(RuntimeError)            a shared file kept changing under a write (``retryable``)

Validation problems never raise: they become findings in a report. These exceptions are for
input that cannot be judged at all, and each message names the fix. Third-party errors are
translated at the boundary (``raise ... from exc``). A message never quotes more of an input
than :func:`excerpt` gives: a short, escaped piece, so a hostile file cannot pour its content
(or terminal escapes) into logs, annotations and reports.
"""

from __future__ import annotations

import json
import re
from typing import Any

EXCERPT_CHARS = 40
MESSAGE_CHARS = 1000
# Characters a message never carries raw: C0/C1 controls, DEL, zero-width and bidirectional
# formatting, line/paragraph separators, BOM, lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_text(text: str) -> str:
    """``text`` with every control, formatting and surrogate character written as an escape."""
    return _UNSAFE.sub(_escape_char, text)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 record``, ``2 records`` (``many`` when the plural is not ``word + 's'``): every count a person reads."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """A short, escaped, quoted piece of an input value for a message.

    Strings show at most ``limit`` characters; other values their compact JSON, cut the same way.
    A cut value says how long it was: ``"root:x:0:0:root:/root:/bin/bash\\ndaemon:x…" (1204 characters)``.
    """
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
        except (TypeError, ValueError):
            text = repr(value)
    cut = text[:limit]
    shown = escape_text(json.dumps(cut, ensure_ascii=False)[1:-1]) if isinstance(value, str) else escape_text(cut)
    if len(text) > limit:
        return (f'"{shown}…" ({len(text)} characters)' if isinstance(value, str)
                else f"{shown}… ({len(text)} characters)")
    return f'"{shown}"' if isinstance(value, str) else shown


def safe_message(text: str, limit: int = MESSAGE_CHARS) -> str:
    """A message fit for logs and annotations: unsafe characters escaped, at most ``limit`` characters."""
    if len(text) <= limit and _UNSAFE.search(text) is None:
        return text  # the usual case, on the hot path of every finding
    text = escape_text(text)
    if len(text) > limit:
        text = text[:limit] + f"… (message cut at {limit} characters)"
    return text


class BioevidenceError(Exception):
    """Root of every deliberate bioevidence error; the CLI turns it into exit code 3."""

    kind = "error"
    exit_code = 3

    def __init__(self, message: str, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.context = {k: v for k, v in context.items() if v is not None}

    def to_json(self) -> dict[str, Any]:
        """The one-line JSON error object written to stderr by the CLI."""
        out: dict[str, Any] = {"error": self.kind, "message": self.message}
        out.update({k: v if type(v) is int else str(v) for k, v in self.context.items()})  # line: a number
        return out


class InputError(BioevidenceError, ValueError):
    """A record, draft or other input file cannot be read as the strict format demands."""

    kind = "input_error"

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, **context: Any):
        super().__init__(message, file=file, line=line, **context)
        self.file = file
        self.line = line


class LimitError(InputError):
    """An input is over a configured limit (file size, inflated size, YAML aliases); the message
    names the limit and the flag or environment variable that raises it. Written out as an
    ``input_error`` (as it is, whichever process of a batch met it)."""


class ConfigurationError(BioevidenceError, ValueError):
    """A profile, command-line option, grounder declaration or setting is invalid."""

    kind = "configuration_error"


class SourceError(BioevidenceError, OSError):
    """Pinned source bytes are missing from the store."""

    kind = "source_error"

    def __init__(self, message: str, *, sha256: str | None = None, path: str | None = None, **context: Any):
        super().__init__(message, sha256=sha256, path=path, **context)
        self.sha256 = sha256
        self.path = path


class IntegrityError(SourceError):
    """Pinned bytes are present but do not hash to their name (corrupted or truncated)."""

    kind = "integrity_error"


class SourceAccessError(BioevidenceError, OSError):
    """Pinned bytes are in the store but cannot be read (permissions, I/O error): an operator fixes it.

    Deliberately not a :class:`SourceError`: code that reads ``SourceError`` as "not pinned" (a
    reviewer's "cannot confirm") must not mistake an operator's fault for missing evidence, so
    this error propagates and the gate reports it as an operational failure (fail closed).
    """

    kind = "source_access_error"

    def __init__(self, message: str, *, sha256: str | None = None, path: str | None = None, **context: Any):
        super().__init__(message, sha256=sha256, path=path, **context)
        self.sha256 = sha256
        self.path = path


class RetrievalError(BioevidenceError, OSError):
    """A remote service (Europe PMC, NCBI, Crossref, a model server) could not be used."""

    kind = "retrieval_error"

    def __init__(self, message: str, *, url: str | None = None, status: int | None = None,
                 retryable: bool = False, **context: Any):
        super().__init__(message, url=url, status=status, **context)
        self.url = url
        self.status = status
        self.retryable = retryable


class ModelError(BioevidenceError, RuntimeError):
    """A language model's reply could not be parsed or used, even after a retry."""

    kind = "model_error"


class ClusterError(BioevidenceError, RuntimeError):
    """A Dask scheduler could not be reached, had no workers, or was lost mid-run (``retryable``)."""

    kind = "cluster_error"

    def __init__(self, message: str, *, retryable: bool = False, **context: Any) -> None:
        super().__init__(message, **context)
        self.retryable = retryable


class BusyError(BioevidenceError, RuntimeError):
    """A write to a shared file (the review queue) kept meeting other writers; trying again may help."""

    kind = "busy_error"

    def __init__(self, message: str, *, retryable: bool = True, **context: Any) -> None:
        super().__init__(message, **context)
        self.retryable = retryable


class BioevidenceWarning(UserWarning):
    """Root of recoverable oddities; ``--strict`` and the test suite turn them into errors."""
