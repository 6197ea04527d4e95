"""Synonym lexicon from pinned releases: HGNC complete set (genes) and the Cell Ontology (cell types),
plus therapy and disease names from a pinned CIViC export (:meth:`Lexicon.add_vocabulary`).

Read once per process from local files (no network); where they live is a parameter, with the
shared data folder's pinned releases as the default.

Recognised in a question: genes written as symbols; a gene with its variant or isoform
(``EGFR T790M``, ``BRAF V600E``, ``AR-V7``, ``EGFR exon 19 deletion``, ``EML4-ALK``, histone
``H3 K27M``); cell types by name; therapies and diseases by name (case-insensitive, longest
first) and diseases by the initials of a multi-word name written in capitals (``NSCLC``, ``AML``).
Approved symbols are gene mentions (a hyphen is read through: ``GATA-3`` is GATA3, ``IL-6`` IL6).
A previous symbol or alias (``HER2``, ``ROS``, ``B12``) is one only when the question is about a
gene and the token has no stronger reading (:mod:`.alias_gate`): a variant after it, a gene word
near it ("mutation", "expression", "amplification" …) or another gene in the question; and never
a clinical abbreviation (``ALL``, ``ER``, ``CML``), unit, vitamin, a letter and digits (``B12``,
``E2``), a Cell Ontology abbreviation (``HSC``), or a short form the indexed corpus defines as
something else (``ROS``: "reactive oxygen species").
"""

from __future__ import annotations

import csv
import io
import itertools
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigurationError
from ..gate.grounders.cache import cached
from .alias_gate import NOT_GENE_ALIASES, GeneMention, Readings, alias_verdict, gene_tokens, name_keys, pick_gene

__all__ = ["Entity", "Lexicon", "Readings", "default_lexicon"]

HGNC_FILE = "hgnc_complete_set_2026-09-30.tsv.gz"
CL_FILE = "cl_2026-06-08.obo.gz"
# Symbols that are also everyday words or statistics/abbreviations in abstracts.
_AMBIGUOUS = frozenset(
    [
        "AND", "ARE", "CAN", "FOR", "HAS", "MAX", "SET", "NOT", "WAS", "ITS", "CAT", "ANY", "BAD", "CAR",
        "CAMP", "CELL", "COPD", "DNA", "RNA", "MRI", "CT", "PCR", "PET", "AIDS", "HIV", "IV", "II", "III",
        "IL", "CI", "OR", "HR", "RR", "SD", "SE", "MS", "ATP", "GTP", "ADP", "IMPACT", "SHE", "TIP", "END",
        "AGE", "MET", "CT", "NO", "TO", "ON", "ME", "LUNG", "COX", "REST", "SARS", "MIR", "GC", "CD", "PI",
        "TOP", "BMI", "ICU", "HDL", "LDL", "PRP",
    ]
)


_PROTEIN_CHANGE = re.compile(r"^(?:p\.)?[ACDEFGHIKLMNPQRSTVWY](\d{1,4})(?:[ACDEFGHIKLMNPQRSTVWY*]|fs\*?\d*|del|dup|"
                             r"ins[A-Z]+|X)$")
_ISOFORM = re.compile(r"\b([A-Z][A-Z0-9]{1,9})-(V\d{1,2})\b")
_FUSION = re.compile(r"\b([A-Z][A-Z0-9]{1,9})[-:/]([A-Z][A-Z0-9]{1,9})\s+fusion|"
                     r"\b([A-Z][A-Z0-9]{2,9})-([A-Z][A-Z0-9]{2,9})\b")
_EXON = re.compile(r"\b([A-Z][A-Z0-9]{1,9})\s+exon\s+(\d{1,3})\s+(deletion|insertion|skipping|mutation)s?\b", re.I)
_TERM_WORD = re.compile(r"[a-z0-9][a-z0-9+-]*")
# the HGNC complete set's columns the lexicon reads, in the order _hgnc_rows unpacks them
_HGNC_COLUMNS = ("status", "symbol", "hgnc_id", "name", "prev_symbol", "alias_symbol", "locus_group", "alias_name",
                 "prev_name")
# what _hgnc_rows and _cl_terms return: a change to either must bump this (a cached read is keyed by it)
_READ_VERSION = 1
_HISTONE = re.compile(r"\b(H3(?:\.[13])?)\s*(K27M|G34[RVW]|K36M)\b")



def _read(path: Path) -> bytes:
    """A release or vocabulary file's bytes through the one capped reader (its size bounded before reading)."""
    from ..io import read_limited
    from ..sources.releases import MAX_RELEASE_BYTES

    return read_limited(path, MAX_RELEASE_BYTES)


def _text(path: Path, data: bytes) -> str:
    """The file's text; a gzip file is inflated with its size bounded while inflating (a bomb is refused)."""
    from ..io import gunzip_limited
    from ..limits import size_limit

    if path.name.endswith(".gz"):
        data = gunzip_limited(data, size_limit("max_inflated"), name=str(path))
    return data.decode("utf-8")


def _inflate(path: Path) -> str:
    """A release or vocabulary file (plain or gzip) as text, through the capped reader."""
    return _text(path, _read(path))


def _hgnc_rows(path: Path, data: bytes) -> list[tuple[str, str, str, tuple[str, ...], tuple[str, ...], bool, str, str]]:
    """The approved genes of an HGNC complete set, as plain values (cached): symbol, HGNC id, name,
    previous symbols, aliases, protein-coding or not, alias names, previous names."""
    reader = csv.reader(io.StringIO(_text(path, data)), delimiter="\t")
    header = next(reader, [])
    missing = [c for c in _HGNC_COLUMNS if c not in header]
    if missing:
        raise ConfigurationError(f"{path} has no column {', '.join(missing)}; pass the HGNC complete set "
                                 f"(hgnc_complete_set_*.tsv[.gz]) as published")
    at = [header.index(c) for c in _HGNC_COLUMNS]
    width = max(at) + 1
    rows = []
    for row in reader:
        if len(row) < width:
            row += [""] * (width - len(row))
        status, sym, hgnc_id, name, prev, alias, locus, alias_name, prev_name = (row[i] for i in at)
        if status == "Approved":
            rows.append((sym, hgnc_id, name, tuple(s for s in prev.split("|") if s), tuple(
                s for s in alias.split("|") if s), locus == "protein-coding gene", alias_name, prev_name))
    return rows


def _cl_terms(path: Path, data: bytes) -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    """The live terms of a Cell Ontology release, as plain values (cached): id, name, exact synonyms,
    and the synonyms written as abbreviations (2-10 letters, digits or hyphens, one capital at least)."""
    terms = []
    for block in _text(path, data).split("\n[Term]\n")[1:]:
        block = block.split("\n[", 1)[0]
        m_id = re.search(r"^id: (CL:\d+)$", block, re.M)
        m_name = re.search(r"^name: (.+)$", block, re.M)
        if not m_id or not m_name or "\nis_obsolete: true" in block:
            continue
        syns = tuple(re.findall(r'^synonym: "([^"]+)" EXACT', block, re.M))
        abbreviations = tuple(a for a in re.findall(r'^synonym: "([A-Za-z0-9-]{2,10})" ', block, re.M)
                              if any(c.isupper() for c in a))
        terms.append((m_id.group(1), m_name.group(1), syns, abbreviations))
    return terms


@dataclass(frozen=True)
class Entity:
    kind: str  # "gene" | "variant" | "cell_type" | "therapy" | "disease"
    id: str
    label: str
    synonyms: tuple[str, ...] = ()
    mention: str = ""


@dataclass
class Lexicon:
    genes: dict[str, Entity] = field(default_factory=dict)  # symbol/alias/prev (exact case) -> entity
    cells: dict[str, Entity] = field(default_factory=dict)  # lower-case name/exact synonym -> entity
    max_cell_words: int = 1
    terms: dict[str, Entity] = field(default_factory=dict)  # lower-case therapy / disease name -> entity
    acronyms: dict[str, Entity] = field(default_factory=dict)  # disease initials (NSCLC) -> entity
    max_term_words: int = 1
    approved: set[str] = field(default_factory=set)
    cell_abbreviations: set[str] = field(default_factory=set)  # Cell Ontology synonyms written as "HSC"
    shared: dict[str, tuple[Entity, ...]] = field(default_factory=dict)  # an alias of several protein-coding genes
    releases: list[dict[str, str]] = field(default_factory=list)  # what it was read from (name, version, sha256)
    _name_fields: dict[str, tuple[str, str, str]] = field(default_factory=dict, repr=False)  # name, alias, prev
    _name_words: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)  # name_words, as asked for

    def name_words(self, hgnc_id: str) -> tuple[str, ...]:
        """The gene's names (HGNC ``name``, ``alias_name``, ``prev_name``) as word keys
        (:func:`.alias_gate.name_keys`), worked out the first time they are asked for: only genes
        sharing an alias are ever asked about, so loading the release does not pay for 45,000."""
        words = self._name_words.get(hgnc_id)
        if words is None:
            fields = self._name_fields.get(hgnc_id)
            words = name_keys(*fields) if fields is not None else ()
            self._name_words[hgnc_id] = words
        return words

    @classmethod
    def load(cls, hgnc: Path | None, cl: Path | None) -> Lexicon:
        """The lexicon of these releases. What is read from each file (the columns and terms the
        lexicon uses, before any rule of its own) is cached by the file's SHA-256
        (:mod:`..gate.grounders.cache`), so a process after the first does not parse 17 MB of HGNC."""
        lex = cls()
        if hgnc is not None:
            data = _read(hgnc)
            lex.releases.append(_release("HGNC complete set", hgnc, data))
            lex._load_hgnc(cached("lexicon-hgnc", lex.releases[-1]["sha256"], _READ_VERSION,
                                  lambda: _hgnc_rows(hgnc, data)))
        if cl is not None:
            data = _read(cl)
            lex.releases.append(_release("Cell Ontology", cl, data))
            lex._load_cl(cached("lexicon-cl", lex.releases[-1]["sha256"], _READ_VERSION, lambda: _cl_terms(cl, data)))
        return lex

    def _load_hgnc(self, rows: list[tuple[str, str, str, tuple[str, ...], tuple[str, ...], bool, str, str]]) -> None:
        approved: dict[str, Entity] = {}
        aliases: list[tuple[str, Entity]] = []
        coding: set[str] = set()
        for sym, hgnc_id, name, prev, alias, protein_coding, alias_name, prev_name in rows:
            ent = Entity("gene", hgnc_id, sym, tuple(dict.fromkeys([sym, *prev, *alias, name])))
            approved[sym] = ent
            if protein_coding:
                coding.add(ent.id)
            self._name_fields[ent.id] = (name, alias_name, prev_name)
            aliases.extend((s, ent) for s in (*prev, *alias))
        listed: dict[str, dict[str, Entity]] = {}
        for s, ent in aliases:  # an approved symbol always wins over someone else's alias
            if s not in approved and s.upper() not in NOT_GENE_ALIASES:
                listed.setdefault(s, {})[ent.id] = ent
        for s, ents in listed.items():  # an alias of several genes: the protein-coding ones, if any
            preferred = [e for e in ents.values() if e.id in coding] or list(ents.values())
            self.genes[s] = preferred[0]
            if len(preferred) > 1:
                self.shared[s] = tuple(preferred)
        self.genes.update(approved)
        self.approved.update(approved)

    def _load_cl(self, terms: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]) -> None:
        for term_id, label, syns, abbreviations in terms:
            self.cell_abbreviations.update(abbreviations)
            ent = Entity("cell_type", term_id, label, tuple(dict.fromkeys([label, *syns])))
            for s in ent.synonyms:
                key = s.lower()
                if len(key) >= 4:
                    self.cells.setdefault(key, ent)
                    self.max_cell_words = max(self.max_cell_words, min(6, len(key.split())))

    def add_vocabulary(self, path: Path) -> None:
        """Therapy and disease names from a pinned CIViC export: ``civic-evidence.jsonl[.gz]``
        (``therapies``, ``disease``, ``doid``) or a CIViC evidence TSV (``drug_names``,
        ``disease_name``, ``disease_ontology_id``)."""
        import json

        data = _read(path)
        self.releases.append(_release("CIViC vocabulary", path, data))
        with io.StringIO(_text(path, data)) as fh:
            if ".jsonl" in path.name:
                rows = [json.loads(line) for line in fh if line.strip()]
                pairs = [(r.get("therapies", ""), r.get("disease", ""), r.get("doid", "")) for r in rows]
            else:
                reader = csv.DictReader(fh, delimiter="\t")
                pairs = [(r.get("drug_names", ""), r.get("disease_name", ""), r.get("disease_ontology_id", ""))
                         for r in reader]
        for therapies, disease, doid in pairs:
            for name in re.split(r"[,;]", therapies or ""):
                name = name.strip()
                if len(name) >= 4 and name.upper() != "NA":
                    self._term(Entity("therapy", f"therapy:{name.lower()}", name, (name,)))
            disease = (disease or "").strip()
            if len(disease) >= 4 and disease.upper() != "NA":
                ent = Entity("disease", f"DOID:{doid}" if doid and doid != "NA" else f"disease:{disease.lower()}",
                             disease, (disease,))
                self._term(ent)
                words = re.findall(r"[A-Za-z]+", disease)
                if len(words) >= 3:
                    self.acronyms.setdefault("".join(w[0] for w in words).upper(), ent)

    def _term(self, ent: Entity) -> None:
        # keyed by the words a question is read as ("Paget's" -> "paget s", "A/B" -> "a b")
        key = " ".join(_TERM_WORD.findall(ent.label.lower()))
        if key and key not in self.terms:
            self.terms[key] = ent
            self.max_term_words = max(self.max_term_words, min(20, len(key.split())))

    def _variants(self, question: str, found: dict[str, Entity]) -> None:
        tokens = re.findall(r"[A-Za-z0-9.*]+", question)
        for a, b in itertools.pairwise(tokens):
            gene = self.genes.get(a) if a in self.approved else None
            if gene is not None and _PROTEIN_CHANGE.match(b):
                self._variant(found, gene, f"{gene.label} {b}", (b,))
        for m in _ISOFORM.finditer(question):
            gene = self.genes.get(m.group(1)) if m.group(1) in self.approved else None
            if gene is not None:
                self._variant(found, gene, f"{gene.label}-{m.group(2)}", (f"{m.group(1)}-{m.group(2)}",))
        for m in _EXON.finditer(question):
            gene = self.genes.get(m.group(1)) if m.group(1) in self.approved else None
            if gene is not None:
                self._variant(found, gene, f"{gene.label} exon {m.group(2)} {m.group(3).lower()}",
                              (f"exon {m.group(2)} {m.group(3).lower()}",))
        for m in _FUSION.finditer(question):
            left, right = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            if left in self.approved and right in self.approved:
                self._variant(found, self.genes[right], f"{left}-{right}", (f"{left}-{right}", f"{left}/{right}"))
        for m in _HISTONE.finditer(question):
            found.setdefault(f"variant:H3 {m.group(2)}", Entity("variant", f"variant:H3 {m.group(2)}",
                                                                f"H3 {m.group(2)}", (f"H3 {m.group(2)}",
                                                                                     m.group(2)), m.group(0)))

    @staticmethod
    def _variant(found: dict[str, Entity], gene: Entity, label: str, extra: tuple[str, ...]) -> None:
        key = f"variant:{label}"
        found.setdefault(key, Entity("variant", f"{gene.id}:{label.split(' ', 1)[-1]}", label,
                                     tuple(dict.fromkeys((label, *extra))), label))

    def gene_mentions(self, question: str, readings: Readings | None = None) -> list[GeneMention]:
        """Every token of ``question`` the HGNC release lists (approved symbol, previous symbol or
        alias), with whether it is read as that gene and why (:mod:`.alias_gate`)."""
        out: list[GeneMention] = []
        approved: set[str] = set()
        later: list[tuple[str, str, int]] = []
        for tok, written, pos in gene_tokens(question, self.approved, self.genes):
            if tok in _AMBIGUOUS or not (tok.isupper() or any(c.isdigit() for c in tok)) or len(tok) < 3:
                continue
            ent = self.genes.get(tok)
            if ent is None or not any(c.isalpha() for c in tok):
                continue
            if tok in self.approved:
                approved.add(ent.id)
                out.append(GeneMention(written, ent, True, "approved symbol"))
            else:
                later.append((tok, written, pos))
        for tok, written, pos in later:
            ent = self.genes[tok]
            if tok in self.shared:  # several genes: the one the corpus defines it as, else none
                chosen = pick_gene(tok, self.shared[tok], self, readings)
                if chosen is None:
                    out.append(GeneMention(written, ent, False, f"alias of {len(self.shared[tok])} genes"))
                    continue
                ent = chosen
            ok, why = alias_verdict(tok, pos, question, ent, approved - {ent.id}, self, readings)
            out.append(GeneMention(written, ent, ok, why))
        return out

    def recognise(self, question: str, readings: Readings | None = None) -> list[Entity]:
        """Genes (symbols written as such; aliases in a gene context only), variants, cell types
        (longest name match), therapies and diseases mentioned in ``question`` (see module
        docstring). ``readings`` is what the indexed corpus says a short form stands for
        (:meth:`.abbreviations.Synonyms.readings`)."""
        found: dict[str, Entity] = {}
        self._variants(question, found)
        for m in self.gene_mentions(question, readings):
            if m.gene:
                found.setdefault(m.entity.id, Entity(m.entity.kind, m.entity.id, m.entity.label, m.entity.synonyms,
                                                     m.token))
        words = re.findall(r"[a-z0-9][a-z0-9+-]*", question.lower())
        i = 0
        while i < len(words):
            for n in range(min(self.max_cell_words, len(words) - i), 0, -1):
                phrase = " ".join(words[i : i + n])
                key = phrase if phrase in self.cells else phrase[:-1] if phrase.endswith("s") else ""
                ent = self.cells.get(key) if key else None
                if ent is not None and (n > 1 or len(phrase) > 5):
                    found.setdefault(ent.id, Entity(ent.kind, ent.id, ent.label, ent.synonyms, phrase))
                    i += n - 1
                    break
            i += 1
        if self.terms:
            words = _TERM_WORD.findall(question.lower())
            i = 0
            while i < len(words):
                for n in range(min(self.max_term_words, len(words) - i), 0, -1):
                    phrase = " ".join(words[i: i + n])
                    ent = self.terms.get(phrase)
                    if ent is not None:
                        found.setdefault(ent.id, Entity(ent.kind, ent.id, ent.label, ent.synonyms, phrase))
                        i += n - 1
                        break
                i += 1
            for token in re.findall(r"\b[A-Z]{3,6}\b", question):
                ent = self.acronyms.get(token)
                if ent is not None:
                    found.setdefault(ent.id, Entity(ent.kind, ent.id, ent.label, (*ent.synonyms, token), token))
        return list(found.values())


_cache: dict[tuple[str, ...], Lexicon] = {}
_lock = threading.Lock()


def _release(name: str, path: Path, data: bytes) -> dict[str, str]:
    """A release as a reader cites it: its name, the date in its file name, the SHA-256 of the file."""
    import hashlib

    dated = re.search(r"\d{4}-\d{2}-\d{2}", path.name)
    return {"name": name, "version": dated.group(0) if dated else "", "file": path.name,
            "sha256": hashlib.sha256(data).hexdigest()}


def default_lexicon(references: Path | str | None = None, vocabularies: tuple[Path | str, ...] = ()) -> Lexicon:
    """The lexicon from ``references`` (default: ``$BIOEVIDENCE_SHARED_DATA/references``) and the
    therapy and disease ``vocabularies`` (pinned CIViC exports), cached per process."""
    if references is None:
        env = os.environ.get("BIOEVIDENCE_SHARED_DATA")
        base = Path(env) if env else Path(__file__).resolve().parents[3].parent / "shared" / "data"
        references = base / "references"
    root = Path(references)
    hgnc, cl = root / HGNC_FILE, root / CL_FILE
    if not hgnc.is_file() and not cl.is_file() and not vocabularies:
        raise ConfigurationError(f"no HGNC or Cell Ontology release in {root}; pass references= the folder "
                                 f"holding {HGNC_FILE} and {CL_FILE}")
    paths = tuple(Path(v) for v in vocabularies)
    for path in paths:
        if not path.is_file():
            raise ConfigurationError(f"vocabulary {path} is not a file; pass a CIViC evidence export "
                                     "(civic-evidence.jsonl[.gz] or a CIViC evidence TSV)")
    key = (str(hgnc), str(cl), *map(str, paths))
    with _lock:
        if key not in _cache:
            lex = Lexicon.load(hgnc if hgnc.is_file() else None, cl if cl.is_file() else None)
            for path in paths:
                lex.add_vocabulary(path)
            _cache[key] = lex
        return _cache[key]
