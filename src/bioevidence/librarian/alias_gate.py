"""When a gene's alias in a question is that gene (issue 28, item 1).

HGNC lists 58,000 previous symbols and aliases, many of them everyday abbreviations: ``B12``
(NDUFB3), ``BAT`` (BAAT), ``ROS`` (ROS1), ``HSC`` (FUT1), ``GATA`` (QRSL1), ``PCP`` (PRCP). An
approved symbol is always read as its gene; an alias or previous symbol only when both hold:

1. **the question is about a gene near the token**: a protein change right after it (``HER2
   V777L``), ``-positive`` / ``-negative`` on it, a gene word within :data:`WINDOW` words of it
   ("mutation", "expression", "amplification", "fusion", "knockdown" …: :data:`GENE_WORDS`), or
   another gene's approved symbol in the question;
2. **the token has no stronger reading**: it is not a clinical abbreviation or unit
   (:data:`NOT_GENE_ALIASES`), not a letter and digits (``B12``, ``E2``, ``C4``, ``K2``: vitamins,
   hormones, complement, figure panels), not after "vitamin", not a Cell Ontology synonym
   (``HSC``: haematopoietic stem cell), and not a short form the indexed corpus defines, more often
   than not, as something that is not this gene (``ROS`` → "reactive oxygen species": the
   index's mined abbreviations, :meth:`.abbreviations.Synonyms.readings`).

A hyphen inside an approved symbol is read through before any alias is looked up: ``GATA-3`` is
GATA3 and ``IL-6`` is IL6, not the aliases ``GATA`` (QRSL1) or ``IL``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .lexicon import Entity

__all__ = ["GENE_WORDS", "NOT_GENE_ALIASES", "WINDOW", "GeneMention", "alias_verdict", "gene_tokens", "name_keys",
           "names_gene", "pick_gene"]

#: Aliases and previous symbols that are clinical abbreviations or units, never read as genes.
NOT_GENE_ALIASES = frozenset(
    [
        "ALL", "AML", "CML", "CLL", "MDS", "ER", "PR", "OS", "PFS", "DFS", "RFS", "ORR", "CR", "SD", "PD", "HCC",
        "CRC", "MM", "NHL", "DLBCL", "GIST", "RCC", "TNBC", "SCLC", "NSCLC", "GBM", "HNSCC", "ESCC", "OR", "AR",
    ]
)
_UNITS = frozenset(["PM", "HRS", "CAL"])  # the units HGNC lists as aliases
#: Words that make a question about a gene when they stand near an alias.
GENE_WORDS = frozenset(
    [
        # a change to the gene
        "mutation", "mutations", "mutant", "mutants", "mutated", "variant", "variants", "polymorphism",
        "polymorphisms", "snp", "snps", "allele", "alleles", "germline", "somatic", "missense", "nonsense",
        "frameshift", "truncating", "inactivating", "inactivation", "biallelic", "activating", "wild-type",
        "wildtype", "loss", "loss-of-function", "gain-of-function", "deletion", "deletions", "deleted",
        "duplication", "insertion", "insertions", "itd", "exon", "skipping", "amplification", "amplifications",
        "amplified", "copy", "fusion", "fusions", "rearrangement", "rearrangements", "rearranged", "translocation",
        "translocations", "status", "wild",
        # its expression and products
        "expression", "expressed", "overexpression", "overexpressed", "overexpressing", "underexpression",
        "methylation", "hypermethylation", "promoter", "transcript", "transcripts", "mrna", "splice", "splicing",
        "isoform", "isoforms", "protein", "proteins", "gene", "genes", "locus", "oncogene", "kinase",
        "phosphorylation", "phosphorylated",
        # experiments on it, and its place in signalling
        "knockdown", "knock-down", "knockout", "knock-out", "knock-in", "silencing", "sirna", "shrna",
        "transgenic", "pathway", "signaling", "signalling", "activation", "inhibitor", "inhibitors", "inhibition",
        "blockade", "receptor", "ligand", "binding",
    ]
)
WINDOW = 3  # words either side of an alias searched for a gene word
# a variant written after the gene: V600E, V600, G12/G13, M774INSAYVM, P968FS, rs3814960, SNP309, DEL4-11
_VARIANT = re.compile(r"^(?:p\.)?[ACDEFGHIKLMNPQRSTVWY]\d{1,4}"
                      r"(?:[ACDEFGHIKLMNPQRSTVWY*X]|fs\*?\d*|del\w*|dup\w*|ins\w*)?(?:/[A-Z]?\d{0,4}[A-Z*]?)*$"
                      r"|^rs\d{3,}$|^snp\d+$|^del\d*|^v(?:ii|iii|iv)$", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]")
_WORDS = re.compile(r"[A-Za-z0-9][A-Za-z0-9.*/-]*")
_LETTER_DIGITS = re.compile(r"^[A-Z]\d{1,3}$")
_VITAMIN = re.compile(r"\bvitamins?\s*$", re.IGNORECASE)
_STATUS = re.compile(r"^[-\s](?:positive|negative|amplified|mutant|mutated)\b|^-(?:high|low|null)\b|^\+", re.IGNORECASE)
_NAME_STOP = frozenset(["of", "the", "and", "a", "an", "in", "for", "to", "with", "by", "on", "like", "type",
                        "family", "member", "protein", "subunit", "domain", "containing", "homolog", "gene",
                        "human", "factor", "1", "2", "3", "4", "5", "a", "b", "alpha", "beta"])
_KEY = re.compile(r"[0-9a-z]+")

Readings = Callable[[str], Mapping[str, int]]


@dataclass(frozen=True)
class GeneMention:
    token: str  # as written in the question ("GATA-3", "HER2")
    entity: Entity  # the gene HGNC lists it for
    gene: bool  # read as that gene
    reason: str  # why (or why not): "approved symbol", "alias: mutation nearby", "vitamin" …


def gene_tokens(question: str, approved: Collection[str], listed: Collection[str]) -> list[tuple[str, str, int]]:
    """``(token looked up, token as written, offset)`` for each word of ``question`` that may be a
    gene symbol: a hyphenated word is looked up joined when that is an approved symbol (``GATA-3``
    → ``GATA3``), else whole, and by its parts only when HGNC does not list it whole and every part
    holds a letter (``EML4-ALK`` → ``EML4``, ``ALK``; not ``ARS-853``, ``TIM-3``)."""
    out: list[tuple[str, str, int]] = []
    seen: set[str] = set()
    for m in _TOKEN.finditer(question):
        whole = m.group(0)
        joined = whole.replace("-", "")
        forms = [(joined, whole, m.start())] if "-" in whole and joined in approved else [(whole, whole, m.start())]
        if "-" in whole and joined not in approved and whole not in listed and all(
                any(c.isalpha() for c in part) for part in whole.split("-")):
            at = m.start()
            for part in whole.split("-"):
                forms.append((part, part, at))
                at += len(part) + 1
        for form in forms:
            if form[0] and form[0] not in seen:
                seen.add(form[0])
                out.append(form)
    return out


def name_keys(*fields: str) -> tuple[str, ...]:
    """A gene's names (HGNC ``name``, ``alias_name``, ``prev_name``; ``|``-separated) as word keys."""
    names = [n for f in fields for n in f.split("|") if n.strip()]
    return tuple(dict.fromkeys(" ".join(_KEY.findall(n.lower())) for n in names))


def _content(words: str) -> set[str]:
    return set(words.split()) - _NAME_STOP


def names_gene(long_form: str, entity: Entity, names: tuple[str, ...]) -> bool:
    """Does ``long_form`` (a corpus definition) name this gene: half its content words in one of the
    gene's names, the same letters as one of them ("multi drug resistance 1", "multidrug
    resistance 1"), or one of its symbols as a word?"""
    spelled = " ".join(_KEY.findall(long_form.lower()))
    words = _content(spelled)
    if not words:
        return False
    if any(s.lower() in words for s in entity.synonyms[:20] if len(s) >= 3 and " " not in s):
        return True
    joined = spelled.replace(" ", "")
    return any(n.replace(" ", "") == joined or (c and len(words & c) / len(words) >= 0.5)
               for n, c in ((n, _content(n)) for n in names))


def pick_gene(token: str, candidates: tuple[Entity, ...], lexicon: Any, readings: Readings | None) -> Entity | None:
    """Of the genes sharing the alias ``token``, the one the corpus defines it as most often (None
    when the corpus does not say, or names none of them)."""
    defined = readings(token) if readings is not None else {}
    votes = {e.id: sum(n for long, n in defined.items() if names_gene(long, e, lexicon.name_words(e.id)))
             for e in candidates}
    best = max(candidates, key=lambda e: votes[e.id])
    return best if votes[best.id] > 0 and sum(v == votes[best.id] for v in votes.values()) == 1 else None


def _near(question: str, pos: int, token: str) -> tuple[list[str], str]:
    """The words around ``token`` at ``pos`` (lower-case) and the word right after it."""
    words = [(m.start(), m.group(0)) for m in _WORDS.finditer(question)]
    at = next((i for i, (start, w) in enumerate(words) if start <= pos < start + len(w)), -1)
    if at < 0:
        return [], ""
    lo, hi = max(0, at - WINDOW), at + WINDOW + 1
    near = [w.lower().strip(".*") for _, w in words[lo:at] + words[at + 1: hi]]
    nxt = words[at + 1][1] if at + 1 < len(words) else ""
    return near, nxt


def alias_verdict(token: str, pos: int, question: str, entity: Entity, other_genes: Collection[str],
                  lexicon: Any, readings: Readings | None) -> tuple[bool, str]:
    """Is the alias ``token`` at ``pos`` in ``question`` the gene ``entity``? ``(verdict, reason)``."""
    if token.upper() in NOT_GENE_ALIASES or token in _UNITS:
        return False, "clinical abbreviation or unit"
    if _LETTER_DIGITS.match(token):
        return False, "a letter and digits (vitamin, hormone, complement, panel)"
    if _VITAMIN.search(question[:pos]):
        return False, "vitamin"
    if token in lexicon.cell_abbreviations:
        return False, "cell type (Cell Ontology)"
    if readings is not None:
        defined = readings(token)
        if defined:
            gene = sum(n for long, n in defined.items() if names_gene(long, entity, lexicon.name_words(entity.id)))
            if sum(defined.values()) - gene > gene:
                best = max(defined.items(), key=lambda kv: (kv[1], kv[0]))[0]
                return False, f"the corpus defines it as {best!r}"
    near, nxt = _near(question, pos, token)
    after = question[pos + len(token):]
    if _VARIANT.match(nxt.rstrip(".,;:?")):
        return True, f"alias: variant {nxt}"
    if _STATUS.match(after):
        return True, "alias: status (-positive, -negative, …)"
    cue = next((w for w in near if w in GENE_WORDS), None)
    if cue:
        return True, f"alias: {cue!r} nearby"
    if other_genes:
        return True, "alias: another gene in the question"
    return False, "alias without a gene context"
