"""Publication identifiers: parse anything a record may cite, return one canonical form.

Canonical keys (the ones ``literature.json`` uses):

* ``pmid:<digits>`` without leading zeros (``PMID: 0012345`` -> ``pmid:12345``);
* ``pmcid:PMC<digits>`` upper-case (``pmc12345``, ``PMCID:PMC12345`` -> ``pmcid:PMC12345``);
* ``doi:10.<registrant>/<suffix>`` lower-case; ``https://doi.org/…``, ``http://dx.doi.org/…``,
  ``doi:…`` and bare ``10.…`` DOIs are accepted, percent-escapes in URLs are decoded.

:func:`parse_identifier` returns a :class:`PublicationId` or ``None`` for anything else, never
raises on odd input.
A bare number is *not* taken as a PMID (write ``pmid:123``): it is too easy to confuse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

Scheme = Literal["pmid", "pmcid", "doi"]

__all__ = ["PublicationId", "Scheme", "canonical", "parse_identifier"]

_PMID_RE = re.compile(r"^(?:pmid|pubmed)\s*:?\s*0*([0-9]{1,12})$", re.IGNORECASE)
_PMCID_RE = re.compile(r"^(?:pmcid\s*:?\s*|pmc\s*:\s*)?pmc\s*0*([0-9]{1,12})$", re.IGNORECASE)
_DOI_BODY = re.compile(r"^10\.[0-9]{4,9}(?:\.[0-9]+)*/\S+$")
_C0 = re.compile(r"[\x00-\x1f]")  # a C0 control character: never part of an identifier
_DOI_PREFIX = re.compile(r"^(?:doi\s*:\s*|https?://(?:dx\.)?doi\.org/|(?:dx\.)?doi\.org/|info:doi/)", re.IGNORECASE)
_PUBMED_URL = re.compile(
    r"^https?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed|"
    r"europepmc\.org/(?:article|abstract)/MED)/0*([0-9]{1,12})/?$",
    re.IGNORECASE,
)
_PMC_URL = re.compile(
    r"^https?://(?:www\.)?(?:ncbi\.nlm\.nih\.gov/pmc/articles|pmc\.ncbi\.nlm\.nih\.gov/articles|"
    r"europepmc\.org/(?:article/PMC|abstract/PMC))/(?:PMC)?0*([0-9]{1,12})/?$",
    re.IGNORECASE,
)


@dataclass(frozen=True, order=True)
class PublicationId:
    """A canonical publication identifier; ``str()`` gives the catalogue key."""

    scheme: Scheme
    value: str

    def __str__(self) -> str:
        return f"{self.scheme}:{self.value}"

    @property
    def key(self) -> str:
        return str(self)

    @property
    def url(self) -> str:
        """A human-facing URL for the identifier."""
        if self.scheme == "pmid":
            return f"https://pubmed.ncbi.nlm.nih.gov/{self.value}/"
        if self.scheme == "pmcid":
            return f"https://pmc.ncbi.nlm.nih.gov/articles/{self.value}/"
        return f"https://doi.org/{self.value}"

    @property
    def number(self) -> str:
        """The digits of a PMID or PMCID (``PMC123`` -> ``123``); the DOI itself for DOIs."""
        return self.value[3:] if self.scheme == "pmcid" else self.value


def _pmid(digits: str) -> PublicationId | None:
    value = digits.lstrip("0")
    return PublicationId("pmid", value) if value else None


def _pmcid(digits: str) -> PublicationId | None:
    value = digits.lstrip("0")
    return PublicationId("pmcid", "PMC" + value) if value else None


def _doi(body: str) -> PublicationId | None:
    body = body.strip().rstrip(".")
    if not _DOI_BODY.match(body) or any(ch.isspace() for ch in body):
        return None
    return PublicationId("doi", body.lower())


def parse_identifier(text: object) -> PublicationId | None:
    """Parse ``text`` as a PMID, PMCID or DOI in any common spelling; ``None`` when it is none."""
    if isinstance(text, PublicationId):
        return text
    if not isinstance(text, str):
        return None
    raw = text.strip()
    if not raw or len(raw) > 2048 or _C0.search(raw):
        return None
    if match := _PMID_RE.match(raw):
        return _pmid(match.group(1))
    if match := _PMCID_RE.match(raw):
        return _pmcid(match.group(1))
    if match := _PUBMED_URL.match(raw):
        return _pmid(match.group(1))
    if match := _PMC_URL.match(raw):
        return _pmcid(match.group(1))
    if match := _DOI_PREFIX.match(raw):
        body = raw[match.end() :]
        if raw[: match.end()].lower().startswith(("http", "doi.org", "dx.")):
            body = unquote(body.split("?", 1)[0].split("#", 1)[0])
        return _doi(body)
    if raw.startswith("10."):
        return _doi(raw)
    return None


def canonical(text: object) -> str | None:
    """The canonical catalogue key of ``text`` (``pmid:123``) or ``None``."""
    parsed = parse_identifier(text)
    return None if parsed is None else parsed.key
