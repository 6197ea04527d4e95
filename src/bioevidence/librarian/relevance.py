"""Relevance before stance: a sentence that is not about the question is never given a direction.

:func:`judge_relevance` is the one rule. A returned sentence is **not relevant**, and so is labelled
``neutral`` and never counts toward an answer's direction, when the first of these holds:

1. **where it is**: a methods section (a full text's, or a structured abstract's "Methods",
   "Patients", "Design" heading), back matter (references, acknowledgements, funding, …), a table
   cell, or a figure, table or box caption that states no finding (no finding verb, comparison or
   p-value: "EGFR and KRAS Mutation Status in Lung Adenocarcinomas Sensitive or Refractory to
   Gefitinib or Erlotinib" describes a table; "… were significantly higher in …" states a finding);
2. **what it does**: methods boilerplate ("We searched PUBMED, MEDLINE and EMBASE …", ethics
   approval, informed consent, trial registration, statistical software), a statement of aims
   ("The aim of this study was to …", "We investigated whether …") or a question;
3. **another gene**: the question names genes (HGNC, :class:`~.lexicon.Lexicon`) and the sentence
   names an approved gene symbol but none of the question's genes (by symbol, alias or previous
   symbol; a variant counts as its gene). Aliases in a sentence are read only as the question's
   genes, never as another gene: many are everyday abbreviations ("FISH", "EMT", "TNM");
4. **another disease**: the question names a cancer site or disease ("lung cancer", "NSCLC",
   "melanoma") and the sentence names one or more sites, none of them the question's
   ("in gastric cancer" for an ovarian-cancer question). Sites are compared in broad groups
   (lung = NSCLC = pulmonary; colorectal = colon = rectal; leukaemias together), so a narrower name
   of the same site is not "another disease".

A sentence that names no gene and no site is relevant: the stance model then decides between a
direction, ``neutral`` and ``undetermined``. The rule is deliberately conservative (it removes only
what it can name a reason for); figures on SciFact rationale sentences and the CIViC corpus are in
docs/librarian.md ("Relevance before stance").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .ranking import section_type

__all__ = ["Relevance", "Topic", "judge_relevance", "sites"]

# Back matter (text/jats.py BACK_MATTER) and the methods section: nothing there states the finding.
_NO_FINDING_SECTIONS = {
    "methods": "a methods section", "references": "the references", "acknowledgements": "the acknowledgements",
    "funding": "a funding statement", "competing-interests": "a competing-interests statement",
    "author-contributions": "the author contributions", "data-availability": "a data-availability statement",
    "supplementary-material": "supplementary material", "abbreviations": "a list of abbreviations",
    "notes": "the notes", "appendix": "an appendix", "footnotes": "a footnote",
}
_CAPTIONS = {"figure-caption": "a figure caption", "table-caption": "a table caption",
             "box-caption": "a box caption"}
# A caption that states a finding: a finding verb or comparison, or a p-value.
_CAPTION_FINDING = re.compile(
    r"\b(?:associat\w*|correlat\w*|significant\w*|increas\w*|decreas\w*|reduc\w*|improv\w*|higher|lower|"
    r"longer|shorter|better|worse|predict(?:s|ed)|respond(?:s|ed)|inhibit(?:s|ed)|induc(?:es|ed)|enhanc(?:es|ed)|"
    r"suppress(?:es|ed)|promot(?:es|ed)|prolong(?:s|ed)|abolish(?:es|ed)|confer(?:s|red))\b|\bp\s*[<=≤]", re.I)
_BOILERPLATE = re.compile(
    r"\bwe (?:systematically )?searched\b|\b(?:pubmed|medline|embase|web of science|cochrane library|"
    r"scopus)\b.{0,80}\b(?:searched|search(?:es)? (?:of|in|were)|databases?)\b|\bsearch(?:ed)? (?:strateg|terms?)\b|"
    r"\b(?:prisma|inclusion criteria|exclusion criteria|eligibility criteria)\b|"
    r"\b(?:ethics|ethical|institutional review) (?:committee|board)\b|\binformed consent\b|"
    r"\b(?:was|were) registered (?:at|with|in)\b|\bclinicaltrials\.gov\b|\bnct\d{6,}\b|"
    r"\bstatistical analys[ie]s (?:was|were) (?:performed|carried out|done)\b|"
    r"\b(?:spss|stata|graphpad|sas software|r software|r package)\b|"
    r"\b(?:was|were) (?:purchased|obtained) from\b|\bfunded by\b|\bconflicts? of interest\b", re.I)
_AIMS = re.compile(
    r"^\s*(?:the |our )?(?:aims?|purpose|objectives?|goals?)\b[^.]{0,40}\b(?:was|were|is|are)\b|"
    r"^\s*(?:in this|the present|this) (?:study|work|analysis|review|trial)\b[^.]{0,30}\b(?:we )?"
    r"(?:aimed|sought|set out|investigated whether|examined whether|evaluated whether|assessed whether)\b|"
    r"\bwe (?:aimed|sought|set out|wanted|hypothesi[sz]ed) to\b|"
    r"\bwe (?:investigated|examined|evaluated|assessed|tested|asked|explored|studied|determined) (?:whether|if)\b|"
    r"^\s*to (?:investigate|determine|assess|evaluate|examine|explore|test|compare|identify|characteri[sz]e)\b",
    re.I)

# Cancer sites and diseases, in broad groups: a mention of any word of a group is that group.
_SITE_GROUPS: dict[str, tuple[str, ...]] = {
    "lung": ("lung", "pulmonary", "nsclc", "sclc", "bronchial", "bronchogenic"),
    "colorectal": ("colorectal", "colon", "colonic", "rectal", "rectum", "crc", "bowel"),
    "breast": ("breast", "mammary", "tnbc"),
    "gastric": ("gastric", "stomach", "gastroesophageal", "gej"),
    "oesophageal": ("esophageal", "oesophageal", "esophagus", "oesophagus", "escc"),
    "ovarian": ("ovarian", "ovary", "fallopian"),
    "prostate": ("prostate", "prostatic", "crpc", "mcrpc"),
    "pancreatic": ("pancreatic", "pancreas", "pdac"),
    "liver": ("liver", "hepatocellular", "hepatic", "hcc", "cholangiocarcinoma", "biliary", "gallbladder"),
    "renal": ("renal", "kidney", "rcc"),
    "bladder": ("bladder", "urothelial"),
    "thyroid": ("thyroid",),
    "cervical": ("cervical", "cervix"),
    "endometrial": ("endometrial", "uterine", "endometrium"),
    "head_neck": ("hnscc", "oral", "laryngeal", "pharyngeal", "nasopharyngeal", "oropharyngeal"),
    "skin": ("melanoma", "melanomas", "cutaneous"),
    "brain": ("glioma", "gliomas", "glioblastoma", "glioblastomas", "gbm", "astrocytoma", "astrocytomas",
              "medulloblastoma", "brain", "oligodendroglioma"),
    "blood": ("leukemia", "leukaemia", "leukemias", "leukaemias", "lymphoma", "lymphomas", "myeloma", "aml",
              "cml", "cll", "mds", "myelodysplastic", "myeloproliferative", "dlbcl"),
    "sarcoma": ("sarcoma", "sarcomas", "gist", "gists", "osteosarcoma", "liposarcoma"),
    "neuroblastoma": ("neuroblastoma", "neuroblastomas"),
    "mesothelioma": ("mesothelioma",),
}
# Site words that name a disease only before a tumour noun ("lung cancer", "kidney, liver and colon
# cancers"; not "lung function", not "liver metastases" of a colorectal cancer).
_NEEDS_NOUN = frozenset({"lung", "pulmonary", "bronchial", "colon", "colonic", "rectal", "rectum", "bowel", "breast",
                         "mammary", "gastric", "stomach", "esophageal", "oesophageal", "esophagus", "oesophagus",
                         "ovarian", "ovary", "fallopian", "prostate", "prostatic", "pancreatic", "pancreas",
                         "liver", "hepatic", "renal", "kidney", "bladder", "urothelial", "thyroid", "cervical",
                         "cervix", "endometrial", "uterine", "endometrium", "oral", "laryngeal", "pharyngeal",
                         "nasopharyngeal", "oropharyngeal", "cutaneous", "brain", "hepatocellular", "biliary",
                         "colorectal", "gastroesophageal", "gallbladder"})
_TUMOUR_NOUNS = frozenset({"cancer", "cancers", "carcinoma", "carcinomas", "adenocarcinoma", "adenocarcinomas",
                           "tumor", "tumors", "tumour", "tumours", "neoplasm", "neoplasms", "malignancy",
                           "malignancies", "carcinogenesis", "tumorigenesis"})
# Words that may sit between a site word and its noun ("non-small cell lung cancer", "colon and rectal cancers").
_BETWEEN = frozenset({",", "/", "and", "or", "non", "small", "cell", "cells", "squamous", "clear", "transitional",
                      "basal", "germ", "primary", "metastatic", "advanced", "recurrent", "invasive", "ductal",
                      "lobular", "serous", "papillary", "follicular", "anaplastic", "medullary", "epithelial",
                      "mucinous", "type", "stage", "early", "late"})
_SITE_NAMES = {"head_neck": "head and neck cancer", "skin": "melanoma", "brain": "brain tumours",
               "blood": "blood cancers", "sarcoma": "sarcoma", "neuroblastoma": "neuroblastoma",
               "mesothelioma": "mesothelioma", "liver": "liver cancer", "oesophageal": "oesophageal cancer"}
_WORD_GROUP = {w: g for g, words in _SITE_GROUPS.items() for w in words}
_SITE_TOKEN = re.compile(r"[a-z0-9]+|[,/]")


def sites(text: str) -> frozenset[str]:
    """The cancer-site groups ``text`` names (see :data:`_SITE_GROUPS`)."""
    tokens = _SITE_TOKEN.findall(text.lower())
    found: set[str] = set()
    for i, token in enumerate(tokens):
        group = _WORD_GROUP.get(token)
        if group is None:
            continue
        if token in _NEEDS_NOUN:
            j = i + 1
            while j < len(tokens) and j - i <= 8 and (tokens[j] in _BETWEEN or tokens[j] in _WORD_GROUP):
                j += 1
            if j >= len(tokens) or tokens[j] not in _TUMOUR_NOUNS:
                continue
        found.add(group)
    return frozenset(found)


@dataclass(frozen=True)
class Topic:
    """What the question is about: its genes (HGNC ids and the names they go by) and its sites."""

    question: str
    genes: frozenset[str] = frozenset()  # HGNC ids of the genes (and variants' genes) the question names
    gene_names: frozenset[str] = frozenset()  # their symbols, aliases and previous symbols, upper-case
    gene_labels: tuple[str, ...] = ()  # approved symbols, for the reason a person reads
    sites: frozenset[str] = frozenset()
    lexicon: Any = None  # the Lexicon that recognised them (None: the gene rule is off)

    @classmethod
    def of(cls, question: str, lexicon: Any = None, entities: Iterable[Any] | None = None) -> Topic:
        """The topic of ``question``: entities recognised by ``lexicon`` (or ``entities``, e.g. a plan's)."""
        if entities is None:
            entities = lexicon.recognise(question) if lexicon is not None else []
        entities = list(entities)
        if lexicon is not None:  # an isoform written onto its symbol: "CD44v6", "AR-V7" is recognised already
            for m in _ISOFORM_SUFFIX.finditer(question):
                gene = lexicon.genes.get(m.group(1)) if m.group(1) in lexicon.approved else None
                if gene is not None:
                    entities.append(gene)
        ids: set[str] = set()
        names: set[str] = set()
        labels: list[str] = []
        for e in entities:
            if e.kind not in ("gene", "variant"):
                continue
            gid = _gene_id(e)
            ids.add(gid)
            gene = lexicon.genes.get(e.label.split(" ")[0].split("-")[0]) if lexicon is not None else None
            for name in (*e.synonyms, e.mention, e.label, *(gene.synonyms if gene is not None else ())):
                if 2 <= len(name) <= 20 and " " not in name:
                    names.add(name.upper())
            label = gene.label if gene is not None else e.label
            if label not in labels:
                labels.append(label)
        return cls(question, frozenset(ids), frozenset(names), tuple(labels), sites(question), lexicon)


def _gene_id(entity: Any) -> str:
    """The HGNC id of a gene entity, or of a variant's gene (``HGNC:6407:G12C`` → ``HGNC:6407``)."""
    return ":".join(str(entity.id).split(":")[:2]) if str(entity.id).startswith("HGNC:") else str(entity.id)


@dataclass(frozen=True)
class Relevance:
    relevant: bool
    reason: str = ""  # why not, in words a person reads ("" when relevant)


RELEVANT = Relevance(True)


def judge_relevance(sentence: str, row: Any, topic: Topic) -> Relevance:
    """Is ``sentence`` (a quote cut from passage ``row``, an index ``PassageRow``) about ``topic``?

    The rule is in the module docstring: where the sentence sits (methods, back matter, table
    cells, captions stating no finding), what it does (boilerplate, aims, a question), another gene
    than the question's, another disease than the question's. Pure: it reads only its arguments.
    """
    where = _where(sentence, row)
    if where:
        return Relevance(False, where)
    if _BOILERPLATE.search(sentence):
        return Relevance(False, "methods boilerplate, not a finding")
    if _AIMS.search(sentence):
        return Relevance(False, "a statement of the study's aims, not a finding")
    if sentence.rstrip().endswith("?"):
        return Relevance(False, "a question, not a finding")
    other = _other_gene(sentence, topic)
    if other:
        return Relevance(False, f"about {other}, not {' / '.join(topic.gene_labels)}")
    if topic.sites:
        named = sites(sentence)
        if named and not named & topic.sites:
            return Relevance(False, f"about {_site_words(named)}, not {_site_words(topic.sites)}")
    return RELEVANT


def _where(sentence: str, row: Any) -> str:
    kind = getattr(row, "kind", "")
    if kind == "table":
        return "a table cell, not a sentence stating a finding"
    if kind in _CAPTIONS and not _CAPTION_FINDING.search(sentence):
        return f"{_CAPTIONS[kind]} that states no finding"
    stype = section_type(row)
    if stype in _NO_FINDING_SECTIONS:
        return _NO_FINDING_SECTIONS[stype]
    return ""


_ISOFORM_SUFFIX = re.compile(r"\b([A-Z][A-Z0-9]{1,9}?)(?:v\d{1,2}|[a-z]{1,3}\d{0,2})\b")
_GENE_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]")


def _other_gene(sentence: str, topic: Topic) -> str:
    """The approved symbols ``sentence`` names when it names none of the topic's genes ("" otherwise)."""
    if topic.lexicon is None or not topic.genes:
        return ""
    tokens = {t.upper() for whole in _GENE_TOKEN.findall(sentence) for t in (whole, *whole.split("-"))}
    if tokens & topic.gene_names:
        return ""
    others: list[str] = []
    for e in topic.lexicon.recognise(sentence):
        if e.kind not in ("gene", "variant"):
            continue
        gid = _gene_id(e)
        symbol = e.label.split(" ")[0].split("-")[0]
        gene = topic.lexicon.genes.get(symbol)
        if gid in topic.genes or (gene is not None and _named_in(gene.synonyms, topic.question)):
            return ""
        named = e.kind == "variant" or e.mention in topic.lexicon.approved  # an alias is never another gene
        if named and symbol not in others:
            others.append(symbol)
    return " / ".join(others[:3])


def _named_in(names: Iterable[str], text: str) -> bool:
    """True when one of a gene's longer names is written in ``text`` ("fibroblast growth factor 21")."""
    low = text.lower()
    return any(len(n) >= 6 and " " in n and n.lower() in low for n in names)


def _site_words(groups: frozenset[str]) -> str:
    return " / ".join(sorted(_SITE_NAMES.get(g, f"{g} cancer") for g in groups))
