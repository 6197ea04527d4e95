"""Text out of a local PDF for the knowledge base's first tier (pypdf, in the ``kb`` extra).

A PDF is not text: what a knowledge base quotes from it is the text pypdf extracts, and that
text is what gets pinned (``.txt``, beside the PDF itself), so every chunk sentence is a verbatim
slice of pinned bytes and the gate checks quotes against them. The entry records both hashes and
the extractor (``pdf_sha256``, ``extractor``): the same PDF and pypdf version give the same text.

What the extraction does, and nothing more: pages are read in order (at most ``MAX_PAGES``) and
separated by a blank line (one passage per page); a word broken across a line end with a hyphen
between two lower-case letters ("resis-" / "tance") is joined without the hyphen; other line
breaks stay (the passage reader collapses whitespace). A PDF that is encrypted, unreadable, larger
than the input limit or without a text layer (a scan: fewer than ``MIN_WORDS`` words) is refused
with the reason, and the ladder goes on to the next tier.
"""

from __future__ import annotations

import io
import re

from ...errors import ConfigurationError, InputError

__all__ = ["MAX_PAGES", "MIN_WORDS", "extractor", "pdf_text"]

MAX_PAGES = 2000
MIN_WORDS = 20
_SOFT_HYPHEN = re.compile(r"(?<=[a-z])-\n(?=[a-z])")


def _pypdf() -> object:
    try:
        import pypdf
    except ImportError as exc:
        raise ConfigurationError("reading a PDF needs pypdf: pip install 'bioevidence[kb]'") from exc
    return pypdf


def extractor() -> str:
    """The extractor and its version, recorded with every entry read from a PDF."""
    import pypdf

    return f"pypdf {pypdf.__version__}"


def pdf_text(data: bytes, *, name: str) -> str:
    """The text of the PDF ``data`` (see module docstring); ``name`` appears in the reasons."""
    from ...limits import size_limit

    pypdf = _pypdf()
    if not data.lstrip()[:5] == b"%PDF-":
        raise InputError(f"{name} does not start with %PDF-: not a PDF")
    errors = (pypdf.errors.PyPdfError, ValueError, KeyError, TypeError, RecursionError)  # type: ignore[attr-defined]
    try:
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)  # type: ignore[attr-defined]
        if reader.is_encrypted:
            raise InputError(f"{name} is encrypted: give an unencrypted copy, the article's JATS or a .txt")
        if len(reader.pages) > MAX_PAGES:
            raise InputError(f"{name} has {len(reader.pages)} pages, more than {MAX_PAGES}: give the article's "
                             "JATS or a .txt")
        pages: list[str] = []
        size = 0
        for page in reader.pages:
            text = (page.extract_text() or "").replace("\r\n", "\n").replace("\r", "\n")
            size += len(text)
            if size > size_limit("max_inflated"):
                raise InputError(f"{name}: its text is larger than the inflated-size limit "
                                 "(BIOEVIDENCE_MAX_INFLATED); give the article's JATS or a .txt")
            pages.append(_SOFT_HYPHEN.sub("", text).strip())
    except InputError:
        raise
    except errors as exc:
        raise InputError(f"{name} is not a readable PDF ({type(exc).__name__}: {str(exc)[:120]})") from exc
    text = "\n\n".join(p for p in pages if p)
    if len(text.split()) < MIN_WORDS:
        raise InputError(f"{name} has no text layer (a scan?): run OCR on it, or give the article's JATS or a .txt")
    return text + "\n"
