"""Synonym lexicon from pinned releases: HGNC complete set (genes) and the Cell Ontology (cell types).

Read once per process from local files (no network); where they live is a parameter, with the
shared data folder's pinned releases as the default.
"""

from __future__ import annotations

import csv
import gzip
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigurationError

__all__ = ["Entity", "Lexicon", "default_lexicon"]

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


@dataclass(frozen=True)
class Entity:
    kind: str  # "gene" | "cell_type"
    id: str
    label: str
    synonyms: tuple[str, ...] = ()
    mention: str = ""


@dataclass
class Lexicon:
    genes: dict[str, Entity] = field(default_factory=dict)  # symbol/alias/prev (exact case) -> entity
    cells: dict[str, Entity] = field(default_factory=dict)  # lower-case name/exact synonym -> entity
    max_cell_words: int = 1

    @classmethod
    def load(cls, hgnc: Path | None, cl: Path | None) -> Lexicon:
        lex = cls()
        if hgnc is not None:
            lex._load_hgnc(hgnc)
        if cl is not None:
            lex._load_cl(cl)
        return lex

    def _load_hgnc(self, path: Path) -> None:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            reader = csv.DictReader(fh, delimiter="\t")
            approved: dict[str, Entity] = {}
            aliases: list[tuple[str, Entity]] = []
            for row in reader:
                if row.get("status") != "Approved":
                    continue
                sym = row["symbol"]
                prev = [s for s in (row.get("prev_symbol") or "").split("|") if s]
                alias = [s for s in (row.get("alias_symbol") or "").split("|") if s]
                ent = Entity("gene", row[
                    "hgnc_id"], sym, tuple(dict.fromkeys([sym, *prev, *alias, row["name"],
                ])))
                approved[sym] = ent
                aliases.extend((s, ent) for s in (*prev, *alias))
        for s, ent in aliases:  # an approved symbol always wins over someone else's alias
            if s not in approved and s not in self.genes:
                self.genes[s] = ent
        self.genes.update(approved)

    def _load_cl(self, path: Path) -> None:
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
        for block in text.split("\n[Term]\n")[1:]:
            block = block.split("\n[", 1)[0]
            m_id = re.search(r"^id: (CL:\d+)$", block, re.M)
            m_name = re.search(r"^name: (.+)$", block, re.M)
            if not m_id or not m_name or "\nis_obsolete: true" in block:
                continue
            syns = re.findall(r'^synonym: "([^"]+)" EXACT', block, re.M)
            ent = Entity("cell_type", m_id.group(1), m_name.group(1), tuple(dict.fromkeys([
                m_name.group(1), *syns,
            ])))
            for s in ent.synonyms:
                key = s.lower()
                if len(key) >= 4:
                    self.cells.setdefault(key, ent)
                    self.max_cell_words = max(self.max_cell_words, min(6, len(key.split())))

    def recognise(self, question: str) -> list[Entity]:
        """Genes (symbols written as such) and cell types (longest name match) mentioned in ``question``."""
        found: dict[str, Entity] = {}
        raw = re.findall(r"[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]", question)
        for tok in dict.fromkeys(t for whole in raw for t in (whole, *whole.split("-"))):
            if tok in _AMBIGUOUS or not (tok.isupper() or any(c.isdigit() for c in tok)) or len(tok) < 3:
                continue
            ent = self.genes.get(tok)
            if ent is not None and any(c.isalpha() for c in tok):
                found.setdefault(ent.id, Entity(ent.kind, ent.id, ent.label, ent.synonyms, tok))
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
        return list(found.values())


_cache: dict[tuple[str, str], Lexicon] = {}
_lock = threading.Lock()


def default_lexicon(references: Path | str | None = None) -> Lexicon:
    """The lexicon from ``references`` (default: ``$BIOEVIDENCE_SHARED_DATA/references``), cached."""
    if references is None:
        env = os.environ.get("BIOEVIDENCE_SHARED_DATA")
        base = Path(env) if env else Path(__file__).resolve().parents[3].parent / "shared" / "data"
        references = base / "references"
    root = Path(references)
    hgnc, cl = root / HGNC_FILE, root / CL_FILE
    if not hgnc.is_file() and not cl.is_file():
        raise ConfigurationError(f"no HGNC or Cell Ontology release in {root}; pass references= the folder "
                                 f"holding {HGNC_FILE} and {CL_FILE}")
    key = (str(hgnc), str(cl))
    with _lock:
        if key not in _cache:
            _cache[key] = Lexicon.load(hgnc if hgnc.is_file() else None, cl if cl.is_file() else None)
        return _cache[key]

