"""One exception root for everything bioevidence raises on purpose.

::

    BioevidenceError                       exit code 3 at the command line
    ├── InputError(ValueError)             a record, draft or input file is malformed
    ├── ConfigurationError(ValueError)     a profile, flag, grounder declaration or setting is wrong
    ├── SourceError(OSError)               pinned bytes are missing or do not hash to their name
    │   └── IntegrityError                 bytes present but corrupted or truncated
    ├── RetrievalError(OSError)            a remote service failed (``retryable`` says if trying later may help)
    ├── ModelError(RuntimeError)           a language model's reply could not be used
    └── ClusterError(RuntimeError)         a Dask scheduler or its workers could not run the work

Validation problems never raise: they become findings in a report. These exceptions are for
input that cannot be judged at all, and each message names the fix. Third-party errors are
translated at the boundary (``raise ... from exc``).
"""

from __future__ import annotations

from typing import Any


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
        out.update({k: str(v) for k, v in self.context.items()})
        return out


class InputError(BioevidenceError, ValueError):
    """A record, draft or other input file cannot be read as the strict format demands."""

    kind = "input_error"

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, **context: Any):
        super().__init__(message, file=file, line=line, **context)
        self.file = file
        self.line = line


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


class BioevidenceWarning(UserWarning):
    """Root of recoverable oddities; ``--strict`` and the test suite turn them into errors."""
