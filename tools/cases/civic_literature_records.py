"""The CIViC literature case's inputs, rebuilt from the peer's pinned folder with our own reading.

Read in place from ``examples/civic_literature/sources`` of bioai-evidence-validator 0.8.0's sdist:
the CIViC projection (hash-checked against the manifest), the ``literature.json`` catalogue and the
gzip JATS snapshots (through our :class:`bioevidence.SnapshotStore`, which re-hashes every file it reads).

Two kinds of records are built here, both as the peer's ``pipeline.py`` documents them but with this
module's own code:

* the **negative controls**: per corpus paper (keyed-hash order), a base record quoting one sentence of
  12-60 words of a paragraph or title (one naming the CIViC item's gene first, then keyed-hash order) at
  its ``#paragraph`` locator, and five changed copies (a PMID that does not exist, another corpus paper's
  PMID, the middle word dropped, ``not`` added after the first auxiliary verb or removed, a species word
  swapped); retracted papers get base records of their own;
* the **whole-paper quotes**: sentences of every part of every corpus paper, read with lxml (no entity
  resolution, no DTD, no network), in base-like records that cite the paper by its PMID alone.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import random
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bioevidence import Catalogue, SnapshotStore

from .common import CaseUnavailable

KEY = "bioai-civic-literature-v1"  # the peer's selection key (sources/manifest.json "selection.key")
SCOPE = "NCBITaxon:9606"
CONTROLS = ("fabricated_identifier", "real_identifier_wrong_paper", "altered_quote", "negation_flip",
            "species_swap")
AUXILIARY = ("was", "were", "is", "are", "did", "does", "do", "could", "can", "may", "might", "would", "will",
             "had", "has", "have")
SPECIES_SWAP = {"patients": "mice", "patient": "mouse", "humans": "mice", "human": "murine", "mice": "patients",
                "mouse": "human", "murine": "human", "rats": "patients", "rat": "human"}
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_TYPOGRAPHIC = {ord("\u2018"): "'", ord("\u2019"): "'", ord("\u201c"): '"', ord("\u201d"): '"',
                ord("\u2013"): "-", ord("\u2014"): "-", ord("\u2212"): "-"}
_SPACE_BEFORE = re.compile(r"\s+(?=[)\],.;:])")
_SPACE_AFTER = re.compile(r"(?<=[(\[])\s+")


def keyed(text: str) -> str:
    """The peer's keyed-hash order: SHA-256 of ``KEY:text``."""
    return hashlib.sha256(f"{KEY}:{text}".encode()).hexdigest()


def flatten(text: str) -> str:
    """0.8.0's comparison form, as its README states it: Unicode NFKC, plain quotes and dashes, single
    spaces, no space after an opening or before a closing bracket or punctuation."""
    text = " ".join(unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHIC).split())
    return _SPACE_AFTER.sub("", _SPACE_BEFORE.sub("", text))


def parse_xml(data: bytes) -> Any:
    """JATS bytes to an lxml tree, safely: no entities resolved, no DTD loaded, no network."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    return etree.fromstring(data, parser=parser)


def local(element: Any) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


@dataclass(frozen=True)
class Paper:
    pmid: str
    title: str
    pinned: str  # the sha256 a record pins (full text, else metadata)
    jats: bytes


class Corpus:
    """The peer's pinned CIViC corpus, read in place."""

    def __init__(self, folder: Path) -> None:
        self.sources = folder / "sources"
        self.snapshots = self.sources / "snapshots"
        for path in (self.sources / "manifest.json", self.sources / "civic-evidence.jsonl.gz",
                     self.snapshots / "literature.json"):
            if not path.is_file():
                raise CaseUnavailable(f"{path} is missing from the peer's sdist")
        self.manifest: dict[str, Any] = json.loads((self.sources / "manifest.json").read_text(encoding="utf-8"))
        projection = gzip.decompress((self.sources / "civic-evidence.jsonl.gz").read_bytes())
        if hashlib.sha256(projection).hexdigest() != self.manifest["civic"]["projection_sha256"]:
            raise CaseUnavailable("the CIViC projection does not hash to the manifest's projection_sha256")
        self.items: dict[str, list[dict[str, str]]] = {}
        for line in projection.decode("utf-8").splitlines():
            row = json.loads(line)
            self.items.setdefault(row["citation_id"], []).append(row)
        self.store = SnapshotStore(self.snapshots)
        self.catalogue = Catalogue.load(self.snapshots)
        self.papers = sorted(self.manifest["corpus"], key=keyed)
        self.retracted = sorted(self.manifest["retracted"], key=keyed)
        self.fakes: list[str] = list(self.manifest["nonexistent_pmids"])
        self._papers: dict[str, Paper] = {}

    def paper(self, pmid: str) -> Paper:
        cached = self._papers.get(pmid)
        if cached is None:
            work = self.catalogue[f"pmid:{pmid}"]
            summary = json.loads(self.store.read(work.metadata_sha256))["result"][pmid]
            jats = self.store.read(work.fulltext_sha256) if work.fulltext_sha256 else b""
            cached = self._papers[pmid] = Paper(pmid, str(summary["title"]), work.pinned_sha256, jats)
        return cached

    def pin(self, record: dict[str, Any]) -> dict[str, Any]:
        """What ``bioevidence ground`` writes for a work already catalogued: sha256, observed_sha256 and
        retrieved_at of the pinned work (a uri the catalogue does not know keeps the placeholder)."""
        out = copy.deepcopy(record)
        for source in out["source_artifacts"]:
            work = self.catalogue.get(source.get("uri"))
            if work is not None:
                source["sha256"] = source["observed_sha256"] = work.pinned_sha256
                source["retrieved_at"] = work.retrieved_at
        return out


# -- the negative controls ---------------------------------------------------------------------------

def paragraphs(jats: bytes) -> list[tuple[str, str]]:
    """(id, text) of every paragraph and title in document order, numbered as 0.8.0 numbers them: the
    element's id, else ``n`` and its position among all elements; text in 0.8.0's comparison form."""
    out = []
    elements = (e for e in parse_xml(jats).iter() if isinstance(e.tag, str))
    for position, element in enumerate(elements):
        if local(element) in ("p", "title", "article-title"):
            out.append((element.get("id") or f"n{position}", flatten("".join(element.itertext()))))
    return out


def chosen_sentence(jats: bytes, gene: str | None) -> tuple[str, str] | None:
    """The base record's quote: a sentence of 12-60 words, one naming the gene first, then keyed order."""
    best: tuple[bool, str, str, str] | None = None
    naming = re.compile(rf"\b{re.escape(gene)}\b") if gene else None
    for pid, text in paragraphs(jats):
        for sentence in SENTENCE_END.split(text):
            if 12 <= len(sentence.split()) <= 60 and sentence in text:
                candidate = (not (naming and naming.search(sentence)), keyed(pid + sentence), pid, sentence)
                if best is None or candidate < best:
                    best = candidate
    return None if best is None else (best[2], best[3])


def base_record(paper: Paper, item: dict[str, str], locator: str, quote: str) -> dict[str, Any]:
    """A CIViC evidence item as a record of the peer's civic-literature profile, resting on one quote."""
    direction = "supports" if item["evidence_direction"] == "Supports" else "does_not_support"
    label = f"{item['significance']} in {item['disease']}" + (f" ({item['therapies']})" if item["therapies"] else "")
    return {
        "record_id": f"bioev:civic-{item['evidence_id']}", "profile_id": "civic-literature",
        "statement": {
            "id": f"bioev:civic-statement-{item['evidence_id']}",
            "subject": {"id": f"civic.mp:{item['molecular_profile_id']}", "label": item["molecular_profile"],
                        "entity_type": "molecular_profile"},
            "predicate": f"{direction}_significance",
            "object": {"id": f"civic.eid:{item['evidence_id']}", "label": label,
                       "entity_type": "clinical_significance"},
            "scope": [SCOPE], "statement_status": "proposed",
            "evidence_lines": [{"id": "bioev:quote-line", "direction": "supports",
                                "evidence_item_ids": ["bioev:quote-1"]}]},
        "source_artifacts": [{"id": "bioev:paper", "title": paper.title, "source_type": "publication",
                              "uri": f"pmid:{paper.pmid}", "version": "PMC JATS",
                              "retrieved_at": "2026-01-01T00:00:00Z", "sha256": "0" * 64}],
        "evidence_items": [{"id": "bioev:quote-1", "source_artifact_id": "bioev:paper", "locator": locator,
                            "extracted_text": quote, "evidence_type": "publication_quote",
                            "extraction_method": "manual_curation", "scope": [SCOPE]}],
        "adjudications": [], "requested_uses": ["research_summary"],
    }


def negation_flipped(text: str) -> str | None:
    """Remove the first ``not`` (with the space before it), else add one after the first auxiliary verb."""
    if re.search(r"\bnot\b", text):
        return re.sub(r"\s*\bnot\b", "", text, count=1)
    verb = re.search(r"\b(?:" + "|".join(AUXILIARY) + r")\b", text)
    return None if verb is None else f"{text[:verb.end()]} not{text[verb.end():]}"


def species_swapped(text: str) -> str | None:
    hit = re.search(r"\b(?:" + "|".join(SPECIES_SWAP) + r")\b", text, flags=re.IGNORECASE)
    if hit is None:
        return None
    new = SPECIES_SWAP[hit.group(0).lower()]
    return text[:hit.start()] + (new.capitalize() if hit.group(0)[0].isupper() else new) + text[hit.end():]


def middle_word_dropped(text: str) -> str:
    words = text.split()
    return " ".join(words[:len(words) // 2] + words[len(words) // 2 + 1:])


def derived(base: dict[str, Any], other: str, fake: str) -> dict[str, dict[str, Any] | None]:
    """The five controls of one base record (None where the sentence does not allow it)."""
    quote = base["evidence_items"][0]["extracted_text"]

    def cited(pmid: str) -> dict[str, Any]:
        out = copy.deepcopy(base)
        out["source_artifacts"][0]["uri"] = f"pmid:{pmid}"
        return out

    def quoted(text: str | None) -> dict[str, Any] | None:
        if text is None:
            return None
        out = copy.deepcopy(base)
        out["evidence_items"][0]["extracted_text"] = text
        return out

    return {"fabricated_identifier": cited(fake), "real_identifier_wrong_paper": cited(other),
            "altered_quote": quoted(middle_word_dropped(quote)), "negation_flip": quoted(negation_flipped(quote)),
            "species_swap": quoted(species_swapped(quote))}


@dataclass(frozen=True)
class Case:
    pmid: str
    control: str  # base, one of CONTROLS, retracted_source; or a part for whole-paper quotes
    record: dict[str, Any]


def control_cases(corpus: Corpus) -> tuple[list[Case], dict[str, int]]:
    """Base records, their controls and the retracted papers' records (pinned), and the skipped counts."""
    cases: list[Case] = []
    skipped: dict[str, int] = {}
    for n, pmid in enumerate(corpus.papers):
        paper = corpus.paper(pmid)
        item = min(corpus.items[pmid], key=lambda row: int(row["evidence_id"]))
        quote = chosen_sentence(paper.jats, item["molecular_profile"].split()[0])
        if quote is None:
            skipped["no_usable_sentence"] = skipped.get("no_usable_sentence", 0) + 1
            continue
        base = base_record(paper, item, f"#{quote[0]}", quote[1])
        cases.append(Case(pmid, "base", corpus.pin(base)))
        others = derived(base, corpus.papers[(n + 1) % len(corpus.papers)], corpus.fakes[n % len(corpus.fakes)])
        for control in CONTROLS:
            changed = others[control]
            if changed is None:
                skipped[control] = skipped.get(control, 0) + 1
            else:
                cases.append(Case(pmid, control, corpus.pin(changed)))
    for pmid in corpus.retracted:
        paper = corpus.paper(pmid)
        quote = chosen_sentence(paper.jats, None)
        if quote is None:
            skipped["retracted_no_sentence"] = skipped.get("retracted_no_sentence", 0) + 1
            continue
        item = {"evidence_id": f"retracted-{pmid}", "molecular_profile_id": "0",
                "molecular_profile": "Retracted-source control", "evidence_direction": "Supports",
                "significance": "Control", "disease": "control", "therapies": ""}
        cases.append(Case(pmid, "retracted_source", corpus.pin(base_record(paper, item, f"#{quote[0]}", quote[1]))))
    return cases, dict(sorted(skipped.items()))


# -- whole-paper quotes ------------------------------------------------------------------------------

PARTS = ("title", "abstract", "body", "section title", "figure caption", "table caption", "table cell",
         "footnote", "back matter", "supplementary caption", "reference title")
# Elements that start a new run of text: a reader never reads across them as one sentence.
_BLOCKS = frozenset({"p", "list", "list-item", "table-wrap", "table", "fig", "caption", "label", "title", "sec",
                     "disp-formula", "disp-quote", "boxed-text", "def-list", "fn", "ref-list", "graphic", "media",
                     "inline-formula", "tex-math", "math", "alternatives", "break", "supplementary-material",
                     "statement", "fig-group", "table-wrap-foot", "attrib", "inline-graphic"})
_IN_FLOATS = frozenset({"fig", "table-wrap", "boxed-text", "supplementary-material", "fn", "table-wrap-foot",
                        "caption"})
_BACK_SKIP = frozenset({"ref-list", "fn-group"})


def runs(element: Any) -> Iterator[str]:
    """The element's text as a reader reads it, cut into runs at nested blocks (paragraphs, lists,
    formulas, line breaks, labels), each run with its whitespace collapsed."""
    pieces: list[str] = []

    def walk(node: Any, top: bool) -> Iterator[str]:
        if not top and local(node) in _BLOCKS:
            yield " ".join("".join(pieces).split())
            pieces.clear()
            return
        pieces.append(node.text or "")
        for child in node:
            if isinstance(child.tag, str):
                yield from walk(child, False)
            pieces.append(child.tail or "")

    yield from walk(element, True)
    yield " ".join("".join(pieces).split())


def sentences(element: Any, whole: bool = False) -> Iterator[str]:
    """Sentences of at most 60 words, at least 5 of them with a letter (so a row label such as
    ``All patients N = 498`` is not taken for a quote); the whole run when ``whole`` (titles, cells)."""
    for run in runs(element):
        for sentence in ([run] if whole else SENTENCE_END.split(run)):
            words = sentence.split()
            if len(words) <= 60 and sum(any(ch.isalpha() for ch in word) for word in words) >= 5:
                yield sentence


def _inside(element: Any, names: frozenset[str], stop: Any) -> bool:
    parent = element.getparent()
    while parent is not None and parent is not stop:
        if local(parent) in names:
            return True
        parent = parent.getparent()
    return False


def part_sentences(jats: bytes) -> dict[str, list[str]]:
    """Every part's sentences in one article (the first ``article`` element; sub-articles left out)."""
    root = parse_xml(jats)
    article = next((e for e in root.iter() if local(e) == "article"), root)
    found: dict[str, list[str]] = {part: [] for part in PARTS}

    def each(name: str) -> Iterator[Any]:
        return (e for e in article.iter() if local(e) == name and not _inside(e, frozenset({"sub-article"}), article))

    meta = next(each("article-meta"), None)
    body = next(each("body"), None)
    back = next(each("back"), None)
    if meta is not None:
        for group in (e for e in meta if local(e) == "title-group"):
            for title in (e for e in group if local(e) == "article-title"):
                found["title"] += sentences(title, whole=True)
        for abstract in (e for e in meta.iter() if local(e) in ("abstract", "trans-abstract")):
            for p in (e for e in abstract.iter() if local(e) == "p"):
                found["abstract"] += sentences(p)
        for note in (e for e in meta.iter() if local(e) == "author-notes"):
            for p in (e for e in note.iter() if local(e) == "p"):
                found["footnote"] += sentences(p)
        for funding in (e for e in meta.iter() if local(e) == "funding-statement"):
            found["back matter"] += sentences(funding)
    for e in article.iter():
        if not isinstance(e.tag, str) or _inside(e, frozenset({"sub-article"}), article):
            continue
        name = local(e)
        if name == "caption":
            owner = local(e.getparent())
            part = {"fig": "figure caption", "table-wrap": "table caption",
                    "supplementary-material": "supplementary caption"}.get(owner)
            if part:
                for block in (c for c in e if local(c) in ("title", "p")):
                    found[part] += sentences(block, whole=local(block) == "title")
        elif name in ("td", "th"):
            found["table cell"] += sentences(e, whole=True)
        elif name == "fn" and (_inside(e, frozenset({"table-wrap-foot", "fn-group"}), article)):
            for p in (c for c in e.iter() if local(c) == "p"):
                found["footnote"] += sentences(p)
        elif name == "ref":
            for title in (c for c in e.iter() if local(c) == "article-title"):
                found["reference title"] += sentences(title, whole=True)
    if body is not None:
        for e in body.iter():
            if not isinstance(e.tag, str) or _inside(e, _IN_FLOATS, body):
                continue
            if local(e) == "p":
                found["body"] += sentences(e)
            elif local(e) == "title" and local(e.getparent()) == "sec":
                found["section title"] += sentences(e, whole=True)
    if back is not None:
        for section in (c for c in back if isinstance(c.tag, str) and local(c) not in _BACK_SKIP):
            for p in (e for e in section.iter() if local(e) == "p" and not _inside(e, _IN_FLOATS, section)):
                found["back matter"] += sentences(p)
    return found


def whole_paper_cases(corpus: Corpus, per_part: int, seed: int) -> list[Case]:
    """A seeded sample of up to ``per_part`` true sentences per part over every corpus paper, each in a
    base-like record citing the paper by its PMID alone (the locator names the whole work)."""
    pool: dict[str, list[tuple[str, str]]] = {part: [] for part in PARTS}
    for pmid in sorted(corpus.papers, key=int):
        for part, found in part_sentences(corpus.paper(pmid).jats).items():
            pool[part] += sorted({(pmid, s) for s in found})
    cases: list[Case] = []
    for part in PARTS:
        chosen = random.Random(f"{seed}:{part}").sample(pool[part], min(per_part, len(pool[part])))
        for pmid, sentence in sorted(chosen, key=lambda c: (int(c[0]), c[1])):
            item = min(corpus.items[pmid], key=lambda row: int(row["evidence_id"]))
            record = base_record(corpus.paper(pmid), item, f"pmid:{pmid}", sentence)
            cases.append(Case(pmid, part, corpus.pin(record)))
    return cases
