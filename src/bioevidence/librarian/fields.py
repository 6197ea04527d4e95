"""The one catalogue of Europe PMC search fields.

Every consumer reads this table: the planner prompt (:func:`prompt_reference`), the query
validator (:mod:`bioevidence.librarian.query`) and the local backend (which says, through
:attr:`Field.local`, which fields it can execute). They therefore cannot disagree.

Kinds:

``text``        free text (wildcards allowed, phrases allowed)
``flag``        ``Y`` / ``N`` (case-insensitive)
``date``        ``YYYY`` (``PUB_YEAR``) or ``YYYY[-MM-DD]``, and ``[a TO b]`` ranges
``identifier``  a value matching :attr:`Field.pattern` when one is given
``fixed``       one of :attr:`Field.values`
``entity``      annotated entity (text, but a wildcard-only presence check is refused)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["text", "flag", "date", "identifier", "fixed", "entity"]

__all__ = ["FIELDS", "LOCAL_FIELDS", "Field", "Kind", "get_field", "prompt_reference"]


@dataclass(frozen=True)
class Field:
    """One Europe PMC search field."""

    name: str
    kind: Kind
    description: str
    pattern: re.Pattern[str] | None = None
    values: frozenset[str] = field(default_factory=frozenset)
    wildcards: bool = True
    local: bool = False  # the local index can execute it
    group: str = "metadata"

    def allows(self, value: str) -> bool:
        """Case-insensitive membership for fixed-value fields."""
        return _fold(value) in {_fold(v) for v in self.values}


def _fold(value: str) -> str:
    return re.sub(r"[\s_]+", " ", value.strip().lower())


_SRC = frozenset({"MED", "PMC", "AGR", "ETH", "PPR", "CTX", "NBK", "CBA", "HIR", "PAT"})
_ACCESSION_TYPES = frozenset(
    [
        "alphafold", "arrayexpress", "bia", "bioimage", "biomodels", "biosample", "bioproject",
        "biostudies", "cath", "cellosaurus", "chebi", "chembl", "complexportal", "dbgap", "dbsnp", "doi",
        "ebisc", "efo", "ega", "emdb", "empiar", "ena", "ensembl", "eudract", "gca", "gen", "geo", "go",
        "hgnc", "hipsci", "igsr", "intact", "interpro", "kegg", "metabolights", "mint", "nct", "omim",
        "orphanet", "pdb", "pfam", "pride", "pxd", "reactome", "refseq", "refsnp", "rfam", "rnacentral",
        "rrid", "treefam", "uniparc", "uniprot",
    ]
)
_ANNOTATION_TYPES = frozenset(
    {
        "Accession Numbers", "Cell", "Cell Line", "Chemicals", "Clinical Drug", "Diseases",
        "Experimental Methods", "Gene Mutations", "Gene Ontology", "Gene_Proteins", "Genes",
        "Organisms", "Phenotype", "Protein Interactions", "Resources", "Sample-Material",
        "Species", "Tissue", "Transcription factor - Targets", "Biological Process",
        "Molecular Function", "Cellular Component", "Gene Disease Relationship",
    }
)
_CREDIT_ROLES = frozenset(
    {
        "Conceptualization", "Data curation", "Formal analysis", "Funding acquisition",
        "Investigation", "Methodology", "Project administration", "Resources", "Software",
        "Supervision", "Validation", "Visualization", "Writing - original draft",
        "Writing - review & editing",
    }
)
_LANGS = frozenset(
    [
        "afrikaans", "albanian", "arabic", "armenian", "azerbaijani", "bosnian", "bulgarian", "catalan",
        "chinese", "croatian", "czech", "danish", "dutch", "english", "esperanto", "estonian", "finnish",
        "french", "georgian", "german", "greek", "hebrew", "hindi", "hungarian", "icelandic", "indonesian",
        "irish", "italian", "japanese", "kinyarwanda", "korean", "latin", "latvian", "lithuanian",
        "macedonian", "malay", "maori", "multiple", "norwegian", "persian", "polish", "portuguese",
        "romanian", "russian", "sanskrit", "serbian", "slovak", "slovenian", "spanish", "swedish", "thai",
        "turkish", "ukrainian", "undetermined", "urdu", "vietnamese", "welsh", "eng", "fre", "ukr",
    ]
)
_LICENSES = frozenset({"CC", "CC0", "CC BY", "CC BY-SA", "CC BY-ND", "CC BY-NC", "CC BY-NC-SA", "CC BY-NC-ND"})

_ORCID = re.compile(r"^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$")
_CITES = re.compile(r"^[A-Za-z0-9]+_(?:" + "|".join(sorted(_SRC)) + r")$", re.IGNORECASE)
_PMCID = re.compile(r"^PMC\d+$", re.IGNORECASE)
_ISSN = re.compile(r"^\d{4}-\d{3}[\dXx]$")
_ISBN = re.compile(r"^(?:\d{9}[\dXx]|\d{13}|[\d-]{13}|[\d-]{17})$")
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_BOOK = re.compile(r"^NBK\d+$", re.IGNORECASE)
_AUTH_MAN_ID = re.compile(r"^(?:EMS|NIHMS|PMC|HHMIMS)?\d+$", re.IGNORECASE)

_FLAGS = [
    "HAS_ABSTRACT", "HAS_ARXPR", "HAS_BOOK", "HAS_CHEBI", "HAS_CHEMBL", "HAS_DATA", "HAS_DOI", "HAS_EMBL",
    "HAS_FREE_FULLTEXT", "HAS_FT", "HAS_INTACT", "HAS_INTERPRO", "HAS_LABSLINKS", "HAS_OMIM", "HAS_PDB",
    "HAS_PDF", "HAS_PREPRINT", "HAS_PUBLISHED_VERSION", "HAS_REFLIST", "HAS_SUPPL", "HAS_TM", "HAS_UNIPROT",
    "HAS_VERSION_EVALUATIONS", "HAS_XREFS", "OPEN_ACCESS", "IN_EPMC", "IN_PMC", "AUTH_MAN", "EPMC_AUTH_MAN",
    "NIH_AUTH_MAN", "EMBARGOED_MAN",
]
_DATES = [
    "PUB_YEAR", "E_PDATE", "P_PDATE", "UPDATE_DATE", "CREATION_DATE", "FIRST_PDATE", "FIRST_IDATE",
    "EMBARGO_DATE",
]
_ENTITIES = ["GENE_PROTEIN", "DISEASE", "ORGANISM", "CHEBITERM", "GOTERM", "CHEM", "MESH"]
_SECTIONS = {
    "INTRO": "Introduction / background sections",
    "METHODS": "Methods sections",
    "RESULTS": "Results sections",
    "DISCUSS": "Discussion sections",
    "CONCL": "Conclusion sections",
    "FIG": "figure captions",
    "TABLE": "table captions and cells",
    "BODY": "the whole body text",
    "SUPPL": "supplementary material",
    "APPENDIX": "appendices",
    "ACK_FUND": "acknowledgements and funding",
    "AUTH_CON": "author contributions",
    "COMP_INT": "competing interests",
    "CASE": "case reports",
    "REF": "reference list",
    "OTHER": "other sections",
    "DATA_AVAILABILITY": "data availability statements",
}
_TEXT = {
    "TITLE": "article title",
    "ABSTRACT": "abstract",
    "TITLE_ABS": "title or abstract",
    "KW": "author keywords",
    "KEYWORD": "author keywords (alias of KW)",
    "AUTH": "author name, e.g. AUTH:\"Smith J\"",
    "AUTH_FIRST": "first author",
    "AUTH_LAST": "last author",
    "AUTH_COLLECTIVE_LIST": "collective (group) author",
    "INVESTIGATOR": "investigator of a collective author",
    "AFF": "author affiliation",
    "JOURNAL": "journal title or abbreviation",
    "PUBLISHER": "publisher",
    "PUB_TYPE": "publication type, e.g. review",
    "ED": "editor",
    "GRANT_AGENCY": "funder",
    "GRANT_ID": "grant number",
    "ORG_ID": "organisation id",
    "ACCESSION_ID": "database accession, e.g. ACCESSION_ID:P12345",
    "EXT_ID": "identifier in its source, e.g. EXT_ID:12345678 SRC:MED",
    "VOLUME": "journal volume",
    "ISSUE": "journal issue",
    "CITED": "times cited",
    "ARXPR_PUBS": "ArrayExpress-linked publications",
    "CHEBI_PUBS": "ChEBI-linked publications",
    "EMBL_PUBS": "ENA-linked publications",
    "INTACT_PUBS": "IntAct-linked publications",
    "INTERPRO_PUBS": "InterPro-linked publications",
    "LABS_PUBS": "Lab-links publications",
    "PDB_PUBS": "PDB-linked publications",
    "UNIPROT_PUBS": "UniProt-linked publications",
}
_IDENTIFIERS: dict[str, tuple[str, re.Pattern[str] | None, bool]] = {
    # name: (description, pattern, wildcards allowed)
    "AUTHORID": ("author ORCID, e.g. 0000-0002-1825-0097", _ORCID, False),
    "CITES": ("papers citing id_SRC, e.g. CITES:8521067_MED", _CITES, False),
    "REFFED_BY": ("papers cited by id_SRC", _CITES, False),
    "PMCID": ("PubMed Central id, e.g. PMC1234567", _PMCID, True),
    "ISSN": ("print ISSN NNNN-NNNX", _ISSN, False),
    "ESSN": ("electronic ISSN NNNN-NNNX", _ISSN, False),
    "ISBN": ("ISBN-10 or ISBN-13", _ISBN, False),
    "DOI": ("DOI, e.g. 10.1038/nature12373", _DOI, False),
    "BOOK_ID": ("NCBI Bookshelf id NBK…", _BOOK, False),
    "AUTH_MAN_ID": ("author manuscript id", _AUTH_MAN_ID, False),
}
_FIXED: dict[str, tuple[str, frozenset[str]]] = {
    "SRC": ("record source", _SRC),
    "ACCESSION_TYPE": ("type of linked database accession", _ACCESSION_TYPES),
    "ANNOTATION_TYPE": ("text-mined annotation type", _ANNOTATION_TYPES),
    "AUTHORID_TYPE": ("author id type", frozenset({"ORCID"})),
    "AUTHOR_ROLES": ("CRediT contributor role", _CREDIT_ROLES),
    "LANG": ("language", _LANGS),
    "LICENSE": ("licence of the full text", _LICENSES),
}
# What the local index can execute (see backend.LocalBackend).
LOCAL_FIELDS = frozenset(
    [
        "TITLE", "ABSTRACT", "TITLE_ABS", "BODY", "INTRO", "METHODS", "RESULTS", "DISCUSS", "CONCL", "FIG",
        "TABLE", "AUTH", "JOURNAL", "PUB_YEAR", "DOI", "PMCID", "EXT_ID", "KW", "KEYWORD", "SRC", "HAS_FT",
        "HAS_ABSTRACT", "OPEN_ACCESS", "IN_PMC", "HAS_DOI",
    ]
)


def _build() -> dict[str, Field]:
    out: dict[str, Field] = {}

    def add(f: Field) -> None:
        out[f.name] = Field(
            f.name, f.kind, f.description, f.pattern, f.values, f.wildcards, f.name in LOCAL_FIELDS, f.group
        )

    for name in _FLAGS:
        add(Field(name, "flag", f"Y/N: {name.lower().replace('_', ' ')}", wildcards=False, group="flags"))
    for name in _DATES:
        desc = "publication year YYYY, ranges [2015 TO 2020]" if name == "PUB_YEAR" else "date YYYY-MM-DD"
        add(Field(name, "date", desc, wildcards=False, group="dates"))
    for name in _ENTITIES:
        add(Field(name, "entity", f"text-mined {name.lower().replace('_', ' ')} annotation", group="entities"))
    for name, desc in _SECTIONS.items():
        add(Field(name, "text", desc, group="sections"))
    for name, desc in _TEXT.items():
        add(Field(name, "text", desc, group="text"))
    for name, (desc, pattern, wild) in _IDENTIFIERS.items():
        add(Field(name, "identifier", desc, pattern=pattern, wildcards=wild, group="identifiers"))
    for name, (desc, values) in _FIXED.items():
        add(Field(name, "fixed", desc, values=values, wildcards=False, group="fixed"))
    return dict(sorted(out.items()))


FIELDS: dict[str, Field] = _build()


def get_field(name: str) -> Field | None:
    """The field named ``name`` (case-insensitive), or ``None``."""
    return FIELDS.get(name.upper())


def prompt_reference(*, local_only: bool = False) -> str:
    """The field sheet shown to an LLM planner, generated from :data:`FIELDS`."""
    lines: list[str] = []
    groups: dict[str, list[Field]] = {}
    for f in FIELDS.values():
        if local_only and not f.local:
            continue
        groups.setdefault(f.group, []).append(f)
    for group, members in groups.items():
        lines.append(f"## {group}")
        for f in members:
            extra = ""
            if f.kind == "fixed":
                extra = " one of: " + ", ".join(sorted(f.values)[:12]) + ("…" if len(f.values) > 12 else "")
            elif f.kind == "flag":
                extra = " (Y or N)"
            lines.append(f"- {f.name}: {f.description}{extra}")
    return "\n".join(lines)
