"""Safe XML parsing for untrusted remote bytes (lxml imported lazily).

No entity resolution, no network, no huge trees, a size cap before parsing, and DOCTYPEs are
tolerated only as declarations (NCBI and JATS files carry one). Errors become ``InputError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from lxml import etree

MAX_XML_BYTES = 64 * 1024 * 1024

__all__ = ["MAX_XML_BYTES", "parse_xml"]


def parse_xml(data: bytes, *, file: str | None = None, limit: int = MAX_XML_BYTES) -> etree._Element:
    """Parse ``data`` into an element tree root, refusing entities, network access and huge trees."""
    from lxml import etree

    if len(data) > limit:
        raise InputError(f"XML is {len(data)} bytes, over the {limit} byte limit", file=file)
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        huge_tree=False,
        load_dtd=False,
        dtd_validation=False,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        root = etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise InputError(f"malformed XML: {exc}; the response was truncated or is not XML", file=file) from exc
    if root is None:
        raise InputError("empty XML document", file=file)
    return root


def text_of(element: etree._Element | None) -> str:
    """All text inside ``element``, whitespace collapsed."""
    if element is None:
        return ""
    return " ".join("".join(str(t) for t in element.itertext()).split())
