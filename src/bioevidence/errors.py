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

The two escape policies every printer uses live here too: :func:`escape_text` for terminals and
plain-text reports, :func:`llm_json` and :func:`llm_text` for JSON and for text shown to or from a
model (see "the two escape policies" below).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import Any

EXCERPT_CHARS = 40
MESSAGE_CHARS = 1000

# -- the two escape policies --------------------------------------------------------------------
#
# Hostile text (a .bib key, a paper's sentence, a model's reply, a queued record) must not reach a
# terminal, a person or a model with characters they cannot see. One rule says which code points
# are "invisible" (:func:`unsafe_pattern`); two policies say how they are written:
#
# * terminal (:func:`escape_text`): each one as a visible escape (``\x1b``, ``\u200b``,
#   ``\U000e0041``), for every line a person reads on a terminal, in a log or a plain-text report;
#   newline and tab too, so a printer that needs them for layout escapes line by line.
# * LLM-facing (:func:`llm_json`, :func:`llm_text`): in JSON each one as a JSON ``\uXXXX`` escape
#   (a surrogate pair above U+FFFF), so the decoded string is still byte-exact (verbatim quotes
#   stay verbatim) while the bytes a model or a person reads hold none raw; in plain text or
#   Markdown shown to or from a model, the terminal policy plus Markdown images and links made inert.

# Code points no text is shown with raw, by Unicode general category: Cc (C0, DEL, C1 controls),
# Cf (format: zero-width, bidirectional controls, BOM, soft hyphen, invisible operators, the tag
# characters of plane 14, interlinear annotation...), Cs (surrogates), Zl and Zp (line and paragraph
# separators). Added by name: the whole tag block U+E0000-U+E007F (some of it unassigned) and the
# variation selectors U+FE00-U+FE0F and U+E0100-U+E01EF (an invisible channel, 256 values).
_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_ADDED = ((0xE0000, 0xE007F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF))
# Those code points as spans, written out (scanning unicodedata costs 20-90 ms, too much for every
# cold start). tests/security/test_escapes.py re-derives them from this interpreter's unicodedata
# and fails, naming the spans to add, when a newer Unicode adds a format character.
UNSAFE_SPANS = (
    (0x0, 0x1F), (0x7F, 0x9F), (0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C), (0x6DD, 0x6DD), (0x70F, 0x70F),
    (0x890, 0x891), (0x8E2, 0x8E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x2064),
    (0x2066, 0x206F), (0xD800, 0xDFFF), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE007F),
    (0xE0100, 0xE01EF),
)


def derived_unsafe_points() -> set[int]:
    """The rule above evaluated on this interpreter's ``unicodedata`` (planes 0, 1 and 14 hold every
    such code point): what :data:`UNSAFE_SPANS` must cover (checked by a test, not at run time)."""
    import unicodedata

    category = unicodedata.category
    scanned = (range(0x20000), range(0xE0000, 0xE1000))
    return ({c for plane in scanned for c in plane if category(chr(c)) in _CATEGORIES}
            | {c for lo, hi in _ADDED for c in range(lo, hi + 1)})


def _unsafe_points() -> tuple[int, ...]:
    return tuple(c for lo, hi in UNSAFE_SPANS for c in range(lo, hi + 1))


def _character_class(points: Iterable[int]) -> re.Pattern[str]:
    spans: list[list[int]] = []
    for c in points:
        if spans and spans[-1][1] == c - 1:
            spans[-1][1] = c
        else:
            spans.append([c, c])
    return re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" if hi > lo else f"\\U{lo:08x}"
                                    for lo, hi in spans) + "]")


@functools.cache
def unsafe_pattern() -> re.Pattern[str]:
    """The character class of every code point the escape policies write as an escape."""
    return _character_class(_unsafe_points())


@functools.cache
def _json_pattern() -> re.Pattern[str]:
    # json.dumps already escapes C0 controls inside strings; a raw one left is indent's newline
    return _character_class(c for c in _unsafe_points() if c >= 0x20)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escape_text(text: str) -> str:
    """The terminal policy: ``text`` with every control, format, separator, surrogate, tag and
    variation-selector character written as a visible escape (``\\x1b``, ``\\u202e``, ``\\U000e0041``).

    Newline and tab are escaped too: a printer that lays out lines escapes each line (or field)."""
    return unsafe_pattern().sub(_escape_char, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def llm_json(value: Any, *, indent: int | None = None, sort_keys: bool = False, compact: bool = False,
             angle_brackets: bool = False) -> str:
    """The LLM-facing JSON policy: ``json.dumps(value, ensure_ascii=False)`` with every code point
    :func:`escape_text` escapes written as a JSON ``\\uXXXX`` escape (surrogate pairs above U+FFFF).

    Ordinary non-ASCII text (é, µ, ≥, Greek) stays as it is; ``json.loads`` of the result gives
    back exactly ``value``, so a verbatim quote is still verbatim. ``compact``: no spaces after
    separators; ``angle_brackets``: ``<`` and ``>`` escaped too, for data put between ``<tag>``
    lines of a prompt. Safe as a post-pass: json.dumps escapes every C0 control inside a string, so
    the only raw one left is the newline of ``indent``, and every other raw code point matched is
    inside a string."""
    text = json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=sort_keys,
                      separators=(",", ":") if compact else None)
    text = _json_pattern().sub(_json_escape, text)
    return text.replace("<", "\\u003c").replace(">", "\\u003e") if angle_brackets else text


# An inline Markdown image or link: ``![alt](url "title")`` / ``[text](url)``.
_MD_LINK = re.compile(r"(!?)\[([^\[\]]*)\]\(([^()]*)\)")


def _inert_link(match: re.Match[str]) -> str:
    label = match.group(2).replace("`", "'")
    target = match.group(3).strip().replace("`", "%60") or " "
    return f"{label} (image not shown: `{target}`)" if match.group(1) else f"{label} (`{target}`)"


def llm_text(text: str) -> str:
    """The LLM-facing text policy, for plain text or Markdown sent to or shown from a model: the
    terminal policy (:func:`escape_text`), then Markdown images and links made inert.

    An inline image ``![alt](url)`` loses its ``!`` and brackets and shows its URL as code:
    ``alt (image not shown: `url`)``, so nothing is fetched when the text is rendered (a beacon);
    an inline link ``[text](url)`` becomes ``text (`url`)`` (where it leads is shown, not hidden).
    Any other ``![`` (reference-style images) has its bracket escaped, ``!\\[``. Raw HTML is the
    Markdown printer's to escape (it writes ``<`` as ``&lt;``)."""
    text = _MD_LINK.sub(_inert_link, escape_text(text))
    return text.replace("![", "!\\[")


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
    if len(text) <= limit and unsafe_pattern().search(text) is None:
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


def error_payload(exc: BaseException, **extra: Any) -> dict[str, Any]:
    """The JSON object the CLI writes on stderr for ``exc`` (one line, no traceback), with ``extra``
    (``file``, ``line``) added where given; a foreign exception is a ``usage_error``."""
    payload: dict[str, Any] = (exc.to_json() if isinstance(exc, BioevidenceError)
                               else {"error": "usage_error", "message": str(exc)})
    payload.update({k: v if type(v) is int else str(v) for k, v in extra.items() if v is not None})
    return payload


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
