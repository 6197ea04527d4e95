"""The gate's verdict on quotes from every part of every pinned paper, and on faults made from them.

Papers: every full text in ``../shared/data`` — the CIViC snapshots (pinned with NCBI metadata)
and ``jats/`` (pinned here as local files, each its own metadata). Quotes are read from the JATS
bytes with plain lxml, by this script's own rules (never with bioevidence's parser), from every
part a reader can read: title, abstract, body paragraphs, section titles, boxed text, list items,
figure and table captions, table cells, table footnotes, footnotes and author notes, back matter
(with notes beside the front matter's article-meta and glossary definitions),
supplementary-material captions, and the titles of cited works in the reference list. Each true
quote is also written as a reader or a pipeline might copy it: citation markers left out,
``<xref>`` stripped by a pipeline (``AA,, has``), PDF hyphenation at any split point, Greek
letters written out, spacing around punctuation, the title as PubMed writes it.

Faults are derived from the true quotes: a start or end inside a word, a dropped negating prefix
(found in the papers: ``ineffective`` → ``effective``), a changed citation number or year, and
the families the grounder blocked before (stitched, a word dropped, a negation added or removed,
a number changed, an antonym). A fault that is, after all, verbatim text elsewhere in the paper is
discarded (checked here, independently).

Every case is a complete ``general`` record validated by ``bioevidence`` with the snapshot
grounders. Printed: per part and per family, true quotes admitted (target: all) and faults
admitted (target: none); for cut words, whether the finding names the whole word.

    .venv/bin/python tools/eval_quotes.py [--per-part 40] [--seed 7] [--markdown]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import sys
import tempfile
import unicodedata
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(os.environ.get("BIOEVIDENCE_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
GREEK = dict(zip("αβγδεζηθικλμνξοπρστυφχψω", ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
                                             "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho",
                                             "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega"], strict=True))
# Elements whose presence inside a candidate makes its printed text uncertain: not sampled.
UNSURE = {"fig", "table-wrap", "list", "disp-formula", "tex-math", "alternatives", "inline-formula", "disp-quote",
          "boxed-text", "fn", "sec", "table", "supplementary-material", "math", "inline-graphic", "graphic",
          "def-list", "chem-struct", "break", "media", "statement", "label"}
NEGATABLE = {"effective", "responsive", "significant", "detectable", "resectable", "reversible", "possible",
             "specific", "functional", "sensitive", "mutated", "treated", "small", "coding", "invasive",
             "selective", "stable", "known", "likely", "affected", "changed", "altered", "favorable", "favourable",
             "common", "dependent", "sufficient", "adequate", "complete", "correct", "active", "frequent", "equal",
             "appropriate", "similar", "regulated", "methylated", "expressed", "related", "responders", "smokers",
             "tumor", "tumour", "measurable", "operable", "metastatic", "amplified", "random", "able", "clear",
             "usual", "certain", "controlled", "resistant", "toxic", "synonymous", "canonical", "viable",
             "susceptible", "haematological", "hematological", "mucinous", "Hodgkin", "melanoma", "significantly"}
NEGATED = re.compile(r"(?<![\w-])(non-|non|un|in|im|ir|dis)([A-Za-z]{4,})(?![\w-])")
ANTONYMS = [("increased", "decreased"), ("higher", "lower"), ("positive", "negative"), ("sensitive", "resistant"),
            ("more", "less"), ("longer", "shorter"), ("better", "worse"), ("high", "low")]
SENTENCE = re.compile(r"(?<=[a-z0-9\)\]%][.!?])\s+(?=[A-Z])")
ABBREV = re.compile(r"(?:\b(?:al|Fig|Figs|e\.g|i\.e|vs|No|Ref|ca|approx|cf|Dr|St|Eq|Suppl)|\b[A-Z])\.$")

PART_XPATHS = {
    "title": ["//*[local-name()='article-meta']/*[local-name()='title-group']/*[local-name()='article-title']"],
    "abstract": ["//*[local-name()='article-meta']/*[local-name()='abstract']//*[local-name()='p']",
                 "//*[local-name()='article-meta']/*[local-name()='trans-abstract']//*[local-name()='p']"],
    "body": ["//*[local-name()='body']//*[local-name()='sec']/*[local-name()='p']",
             "//*[local-name()='body']/*[local-name()='p']"],
    "section title": ["//*[local-name()='body']//*[local-name()='sec']/*[local-name()='title']"],
    "boxed text": ["//*[local-name()='boxed-text']/*[local-name()='p']",
                   "//*[local-name()='boxed-text']/*[local-name()='sec']/*[local-name()='p']"],
    "list": ["//*[local-name()='body']//*[local-name()='list-item']/*[local-name()='p']"],
    "figure caption": ["//*[local-name()='fig']/*[local-name()='caption']/*[local-name()='p']",
                       "//*[local-name()='fig']/*[local-name()='caption']/*[local-name()='title']"],
    "table caption": ["//*[local-name()='table-wrap']/*[local-name()='caption']/*[local-name()='p']",
                      "//*[local-name()='table-wrap']/*[local-name()='caption']/*[local-name()='title']"],
    "table cell": ["//*[local-name()='table-wrap']//*[local-name()='td']"],
    "table footnote": ["//*[local-name()='table-wrap-foot']//*[local-name()='p']"],
    "footnote": ["//*[local-name()='back']/*[local-name()='fn-group']//*[local-name()='p']",
                 "//*[local-name()='author-notes']//*[local-name()='p']"],
    "back matter": ["//*[local-name()='back']/*[local-name()='ack']//*[local-name()='p']",
                    "//*[local-name()='back']/*[local-name()='sec']//*[local-name()='p']",
                    "//*[local-name()='funding-statement']", "//*[local-name()='back']/*[local-name()='notes']"
                    "//*[local-name()='p']", "//*[local-name()='front']/*[local-name()='notes']//*[local-name()='p']",
                    "//*[local-name()='def-item']/*[local-name()='def']/*[local-name()='p']"],
    "supplementary caption": ["//*[local-name()='supplementary-material']/*[local-name()='caption']"
                              "/*[local-name()='p']",
                              "//*[local-name()='supplementary-material']/*[local-name()='caption']"
                              "/*[local-name()='title']"],
    "reference list": ["//*[local-name()='ref']//*[local-name()='article-title']"],
}
WHOLE = {"title", "section title", "table cell", "reference list"}


@dataclass
class Paper:
    key: str  # pmid:… / doi:…
    sha: str
    title: str  # the pinned metadata title (what the source's title must be)
    retrieved_at: str
    root: Any
    pubmed_title: str | None = None
    flat: tuple[str, ...] = ()  # the paper's readable text (two joins), for the "verbatim elsewhere" guard


@dataclass
class Case:
    family: str  # "true" or a fault family
    part: str
    variant: str
    paper: Paper
    quote: str
    expect_word: str = ""  # for cut words: the whole word the finding must name
    meta: dict[str, Any] = field(default_factory=dict)


def _local(el: Any) -> str:
    return el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""


def canon(text: str) -> str:
    """This script's own comparison form: NFKC, dashes and quotes plain, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text).replace("\u00ad", "")
    text = re.sub(r"[\u2018\u2019]", "'", text)
    return " ".join(text.split())


def printed(el: Any) -> tuple[str, list[tuple[int, int]]] | None:
    """The element's text as printed (whitespace collapsed) and its citation-marker spans;
    ``None`` if it holds markup whose printed form is uncertain (figures, formulas, nested blocks)."""
    if any(_local(d) in UNSURE for d in el.iterdescendants()):
        return None
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    state = {"length": 0, "space": True}

    def add(text: str) -> None:
        for i, chunk in enumerate(re.split(r"\s+", text)):
            if i and not state["space"]:
                out.append(" ")
                state["length"] += 1
                state["space"] = True
            if chunk:
                out.append(chunk)
                state["length"] += len(chunk)
                state["space"] = False

    def walk(node: Any) -> None:
        add(node.text or "")
        for child in node:
            tag = _local(child)
            if tag == "xref" and child.get("ref-type") == "bibr":
                label = " ".join("".join(child.itertext()).split())
                start = state["length"]
                add(label)
                spans.append((start, state["length"]))
            elif tag:
                walk(child)
            add(child.tail or "")

    walk(el)
    text = "".join(out).rstrip()
    return text, [(a, b) for a, b in spans if a < b <= len(text)]


def _words(text: str) -> int:
    """Words as a reader counts them: whitespace-separated tokens holding a letter or digit."""
    return sum(1 for token in text.split() if re.search(r"\w", token))


def sentences(text: str) -> list[tuple[int, int]]:
    out, start = [], 0
    for m in SENTENCE.finditer(text):
        if ABBREV.search(text[start:m.start()]):
            continue
        out.append((start, m.start()))
        start = m.end()
    out.append((start, len(text)))
    return out


def load_papers(store: Path) -> list[Paper]:
    """Every pinned full text: CIViC snapshots as they are, ``jats/`` pinned into ``store``."""
    from lxml import etree

    from bioevidence.sources.local import pin_local

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True,
                             remove_pis=True)
    out: list[Paper] = []
    snapshots = DATA / "civic_corpus" / "snapshots"
    works = json.loads((snapshots / "literature.json").read_text())["works"]
    for key, work in sorted(works.items()):
        if not key.startswith("pmid:") or not work.get("fulltext_sha256") or work.get("retracted"):
            continue
        meta = json.loads(gzip.decompress((snapshots / f"{work['metadata_sha256']}.json.gz").read_bytes()))
        doc = meta.get("result", {}).get(key[5:], {})
        if not doc.get("title") or any("retract" in t.lower() for t in doc.get("pubtype", [])):
            continue
        root = etree.fromstring(gzip.decompress((snapshots / f"{work['fulltext_sha256']}.xml.gz").read_bytes()),
                                parser)
        out.append(Paper(key, work["fulltext_sha256"], doc["title"], work["retrieved_at"], root, doc["title"]))
    files = sorted(p for p in (DATA / "jats").rglob("*") if p.suffix in (".xml", ".nxml"))
    for path, work in zip(files, pin_local(files, store), strict=True):
        root = etree.fromstring(path.read_bytes(), parser)
        if root.xpath("//*[local-name()='article'][@article-type='retraction' or @article-type='correction']"):
            continue
        titles = root.xpath("//*[local-name()='article-meta']/*[local-name()='title-group']"
                            "/*[local-name()='article-title']")
        if not titles:
            continue
        title = " ".join("".join(titles[0].itertext()).split())
        out.append(Paper(work.key, work.fulltext_sha256 or "", title, work.retrieved_at, root))
    for paper in out:
        paper.flat = (canon(_block_text(paper.root)),)
    return out


def _without_markers(text: str, spans: list[tuple[int, int]], *, tidy: bool) -> str:
    """The text with its citation markers removed: as a pipeline strips ``<xref>`` (``tidy=False``:
    separators and brackets stay), or as a careful reader would write it (``tidy=True``)."""
    out, last = [], 0
    for a, b in spans:
        out.append(text[last:a])
        out.append("\x00")
        last = b
    out.append(text[last:])
    marked = "".join(out)
    if not tidy:
        return marked.replace("\x00", "")

    def clean(match: re.Match[str]) -> str:
        run = match.group(0)
        after = marked[match.end()] if match.end() < len(marked) else ""
        prefix, suffix = run[:run.index("\x00")], run[run.rindex("\x00") + 1:]  # the markers between go
        head, tail = prefix.rstrip(), suffix.lstrip()
        if head[-1:] in ("[", "(") and tail[:1] == {"[": "]", "(": ")"}[head[-1]]:
            prefix, suffix = head[:-1], tail[1:]  # brackets that held only markers
        if re.match(r"[.,;:)\]]", suffix.lstrip() or after):
            prefix = prefix.rstrip(" ,;-\u2013\u2014")  # the sentence's own punctuation follows
            suffix = suffix.lstrip()
        return prefix + suffix

    result = re.sub(r"[\s,;\-\u2013\u2014\[\]()\x00]*\x00[\s,;\-\u2013\u2014\[\]()\x00]*", clean, marked)
    return " ".join(result.split())


def true_quotes(paper: Paper, part: str, rng: random.Random, limit: int) -> Iterator[Case]:
    """True quotes of one part, each written every way that applies (variants under 6 words dropped)."""
    for case in _true_quotes(paper, part, rng, limit):
        if _words(case.quote) >= 6 or case.variant == "as printed":
            yield case


def _true_quotes(paper: Paper, part: str, rng: random.Random, limit: int) -> Iterator[Case]:
    elements = [el for xp in PART_XPATHS[part] for el in paper.root.xpath(xp)]
    rng.shuffle(elements)
    made = 0
    for el in elements:
        if made >= limit:
            return
        got = printed(el)
        if got is None:
            continue
        text, spans = got
        if part in WHOLE:
            bounds = [(0, len(text))]
        else:
            bounds = [s for s in sentences(text) if 6 <= len(text[s[0]:s[1]].split()) <= 60]
        bounds = [s for s in bounds if _words(text[s[0]:s[1]]) >= 6 and len(text[s[0]:s[1]].split()) <= 80]
        if not bounds:
            continue
        a, b = rng.choice(bounds)
        quote = text[a:b]
        inside = [(x - a, y - a) for x, y in spans if a <= x and y <= b]
        made += 1
        yield Case("true", part, "as printed", paper, quote, meta={"spans": inside})
        if inside:
            yield Case("true", part, "markers left out", paper, _without_markers(quote, inside, tidy=True))
            yield Case("true", part, "xref stripped by a pipeline", paper,
                       _without_markers(quote, inside, tidy=False))
        long_words = [m for m in re.finditer(r"[A-Za-z]{8,}", quote)]
        if long_words:
            m = rng.choice(long_words)
            k = rng.randint(2, len(m.group(0)) - 2)
            yield Case("true", part, "PDF hyphenation", paper,
                       quote[:m.start() + k] + "- " + quote[m.start() + k:])
        if any(ch in GREEK for ch in quote):
            yield Case("true", part, "Greek written out", paper, "".join(GREEK.get(ch, ch) for ch in quote))
        if re.search(r"[,;] |\. \(|\) ", quote):
            yield Case("true", part, "spacing around punctuation", paper,
                       re.sub(r"([,;]) ", r"\1", quote).replace(". (", ".("))
        if part == "title" and quote[:1].isalpha():
            yield Case("true", part, "first letter and full stop as PubMed", paper,
                       quote[0].swapcase() + quote[1:].rstrip(".") + ".")
    if part == "title" and paper.pubmed_title:
        yield Case("true", part, "PubMed title", paper, paper.pubmed_title)


INLINE = {"italic", "bold", "sup", "sub", "sc", "underline", "monospace", "xref", "ext-link", "named-content",
          "styled-content", "uri", "email", "abbrev", "inline-formula", "roman", "sans-serif", "strike", "overline",
          "break", "surname", "given-names", "source", "year", "volume", "fpage", "lpage", "pub-id"}


def _block_text(root: Any) -> str:
    """The whole article's text, a space at the edges of every non-inline element (this script's own)."""
    out: list[str] = []

    def walk(node: Any) -> None:
        block = _local(node) not in INLINE
        if block:
            out.append(" ")
        out.append(node.text or "")
        for child in node:
            if _local(child):
                walk(child)
            out.append(child.tail or "")
        if block:
            out.append(" ")

    walk(root)
    return "".join(out)


def _verbatim_elsewhere(paper: Paper, quote: str) -> bool:
    """Whether a "fault" is verbatim text of the paper after all (first letter in either case)."""
    text = canon(quote).rstrip(" .")
    if not text:
        return False
    first = re.escape(text[0]) if not text[0].isalpha() else f"[{text[0].lower()}{text[0].upper()}]"
    pattern = re.compile(r"(?<![\w-])" + first + re.escape(text[1:]) + r"(?![\w-])")
    return any(pattern.search(flat) for flat in paper.flat)


def faults(case: Case, other: str, rng: random.Random) -> Iterator[Case]:
    """Faults made from one true quote (``other`` is a sentence from elsewhere in the paper)."""
    q = case.quote.rstrip()
    words = q.split()
    make = lambda family, text, word="": Case(family, case.part, family, case.paper, text, word)  # noqa: E731
    strip = "()[]{}\"'.,;:!?"
    first = re.match(r"[A-Za-z]{5,}", q)
    if first:
        k = rng.randint(1, 2)
        yield make("start inside a word", q[k:], words[0].strip(strip))
    last = re.search(r"([A-Za-z]{6,})([.)\]]*)$", q)
    if last:
        k = rng.randint(2, 3)
        yield make("end inside a word", q[:last.start(1) + len(last.group(1)) - k], words[-1].strip(strip))
    yield make("stitched", q + " " + other)
    middle = next((i for i in range(len(words) // 2, len(words) - 1) if len(words[i]) > 3 and words[i].isalpha()),
                  None)
    if middle is not None:
        yield make("word dropped", " ".join(words[:middle] + words[middle + 1:]))
    verb = re.search(r"\b(is|was|were|are|did|does|could|can|may)\b", q)
    yield make("negation added", (q[:verb.end()] + " not" + q[verb.end():]) if verb else
               " ".join([*words[:3], "not", *words[3:]]))
    if re.search(r"\b(not|no)\b ", q):
        yield make("negation removed", re.sub(r"\b(not|no)\b ", "", q, count=1))
    digit = re.search(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])", q)
    spans = case.meta.get("spans") or []
    if digit and not any(a <= digit.start() < b for a, b in spans):
        d = digit.group(0)
        yield make("number changed", q[:digit.start()] + str(int(d[0]) % 9 + 1) + d[1:] + q[digit.end():])
    for a, b in ANTONYMS:
        for x, y in ((a, b), (b, a)):
            if re.search(rf"\b{x}\b", q):
                yield make("antonym swapped", re.sub(rf"\b{x}\b", y, q, count=1))
                return


def citation_faults(case: Case) -> Iterator[Case]:
    """A kept citation marker changed: one number (or a year) the paper does not cite there."""
    for a, b in case.meta.get("spans") or []:
        marker = case.quote[a:b]
        number = re.search(r"\d+", marker)
        if number is None:
            continue
        family = "changed citation year" if re.search(r"(19|20)\d\d", number.group(0)) else "changed citation number"
        changed = marker[:number.start()] + str(int(number.group(0)) + 1) + marker[number.end():]
        yield Case(family, case.part, family, case.paper, case.quote[:a] + changed + case.quote[b:])
        return


def negation_faults(paper: Paper, rng: random.Random, limit: int) -> Iterator[Case]:
    """Quotes that drop a negating prefix found in the paper (``ineffective`` → ``effective``)."""
    made = 0
    elements = [el for xp in PART_XPATHS["body"] + PART_XPATHS["abstract"] for el in paper.root.xpath(xp)]
    for el in elements:
        got = printed(el)
        if got is None:
            continue
        text = got[0]
        for m in NEGATED.finditer(text):
            if m.group(2) not in NEGATABLE or made >= limit:
                continue
            sentence = next(((a, b) for a, b in sentences(text) if a <= m.start() < b), None)
            if sentence is None:
                continue
            tail = text[m.start():sentence[1]]
            if len(tail.split()) < 6:
                continue
            made += 1
            word = m.group(0)
            yield Case("dropped negating prefix (quote starts in the word)", "body", "negation", paper,
                       tail[len(m.group(1)):], word, {"prefix": m.group(1)})
            head = text[sentence[0]:m.start()]
            if len(head.split()) >= 3:
                yield Case("dropped negating prefix (inside the quote)", "body", "negation", paper,
                           head + tail[len(m.group(1)):])
    return


def record(case: Case, n: int) -> dict[str, Any]:
    paper = case.paper
    return {
        "record_id": f"eval:{n}", "profile_id": "general", "requested_uses": ["research_summary"],
        "statement": {"id": "eval:statement", "statement_status": "proposed", "predicate": "associated_with",
                      "subject": {"id": "HGNC:6407", "label": "KRAS", "entity_type": "gene"},
                      "object": {"id": "MONDO:0005233", "label": "non-small cell lung carcinoma",
                                 "entity_type": "disease"},
                      "scope": ["NCBITaxon:9606"],
                      "evidence_lines": [{"id": "eval:line", "direction": "supports",
                                          "evidence_item_ids": ["eval:item"]}]},
        "source_artifacts": [{"id": "eval:source", "title": paper.title, "source_type": "publication",
                              "uri": paper.key, "version": "1", "retrieved_at": paper.retrieved_at,
                              "sha256": paper.sha, "observed_sha256": paper.sha}],
        "evidence_items": [{"id": "eval:item", "source_artifact_id": "eval:source", "locator": "full text",
                            "extracted_text": case.quote, "evidence_type": "publication_result",
                            "extraction_method": "manual_curation", "scope": ["NCBITaxon:9606"]}],
        "adjudications": [],
    }


def build_cases(store: Path, *, per_part: int = 40, seed: int = 7) -> list[Case]:
    rng = random.Random(seed)
    papers = load_papers(store)
    cases: list[Case] = []
    per_paper = max(1, per_part // 20)
    for paper in papers:
        body = [s for el in paper.root.xpath(PART_XPATHS["body"][0])[:40] if (got := printed(el))
                for s in [got[0][a:b] for a, b in sentences(got[0])] if len(s.split()) >= 8]
        for part in PART_XPATHS:
            for case in true_quotes(paper, part, rng, per_paper):
                cases.append(case)
                if case.variant == "as printed":
                    other = rng.choice(body) if body else ""
                    for fault in [*faults(case, other, rng), *citation_faults(case)]:
                        if not _verbatim_elsewhere(paper, fault.quote):
                            cases.append(fault)
        for fault in negation_faults(paper, rng, 2):
            if not _verbatim_elsewhere(paper, fault.quote):
                cases.append(fault)
    return cases


def evaluate(cases: list[Case], snapshot_dirs: list[Path]) -> list[dict[str, Any]]:
    """Validate every case; one row per case with its verdict and findings."""
    from bioevidence.gate.grounders.config import GrounderOptions, build_grounders
    from bioevidence.gate.validator import Validator

    validators = {str(d): Validator("general", grounders=build_grounders(GrounderOptions(snapshot_dir=d)))
                  for d in snapshot_dirs}
    civic = str(DATA / "civic_corpus" / "snapshots")
    local = next(k for k in validators if k != civic)
    rows = []
    for n, case in enumerate(cases):
        validator = validators[civic if case.paper.pubmed_title is not None else local]
        report = validator.validate(record(case, n))
        messages = " | ".join(f"{f.rule_id}: {f.message}" for f in report.findings)
        rows.append({"family": case.family, "part": case.part, "variant": case.variant, "paper": case.paper.key,
                     "quote": case.quote, "status": report.overall_status, "findings": messages,
                     "named": bool(case.expect_word) and f"'{case.expect_word}'".lower() in messages.lower(),
                     "reversal": "reverses" in messages,
                     "expect_word": case.expect_word})
    return rows


def table(rows: list[dict[str, Any]], *, markdown: bool = False) -> str:
    true = defaultdict(lambda: [0, 0])
    variants = defaultdict(lambda: [0, 0])
    fault = defaultdict(lambda: [0, 0, 0, 0, 0])
    for row in rows:
        admitted = row["status"] == "admitted"
        if row["family"] == "true":
            true[row["part"]][0] += 1
            true[row["part"]][1] += admitted
            variants[row["variant"]][0] += 1
            variants[row["variant"]][1] += admitted
        else:
            fault[row["family"]][0] += 1
            fault[row["family"]][1] += admitted
            if row["expect_word"]:
                fault[row["family"]][2] += 1
                fault[row["family"]][3] += row["named"]
            fault[row["family"]][4] += row["reversal"]
    lines = []
    sep = "|" if markdown else " "

    def emit(cells: list[str]) -> None:
        if markdown:
            lines.append("|" + "|".join(f" {c} " if c else " " for c in cells) + "|")
        else:
            lines.append("  ".join(f"{c:<44}" if i == 0 else f"{c:>10}" for i, c in enumerate(cells)))
    emit(["part (true quotes)", "quotes", "admitted"])
    if markdown:
        lines.append("|---|---:|---:|")
    for part in PART_XPATHS:
        if part in true:
            emit([part, str(true[part][0]), str(true[part][1])])
    emit(["all parts", str(sum(v[0] for v in true.values())), str(sum(v[1] for v in true.values()))])
    lines.append("")
    emit(["how the true quote is written", "quotes", "admitted"])
    if markdown:
        lines.append("|---|---:|---:|")
    for variant, (n, ok) in sorted(variants.items()):
        emit([variant, str(n), str(ok)])
    lines.append("")
    emit(["fault family", "faults", "admitted", "whole word named", "reversal named"])
    if markdown:
        lines.append("|---|---:|---:|---:|---:|")
    for family, (n, bad, expect, named, reversal) in sorted(fault.items()):
        emit([family, str(n), str(bad), f"{named}/{expect}" if expect else "-",
              str(reversal) if "negat" in family else "-"])
    emit(["all faults", str(sum(v[0] for v in fault.values())), str(sum(v[1] for v in fault.values())), "", ""])
    del sep
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-part", type=int, default=40, help="true quotes per part and 20 papers (default 40)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    parser.add_argument("--show", type=int, default=10, help="print up to N wrong verdicts")
    parser.add_argument("--dump", help="write every case and its verdict to this JSON file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "jats-store"
        cases = build_cases(store, per_part=args.per_part, seed=args.seed)
        rows = evaluate(cases, [DATA / "civic_corpus" / "snapshots", store])
    print(f"{len({r['paper'] for r in rows})} papers, {len(rows)} cases")
    if args.dump:
        Path(args.dump).write_text(json.dumps(rows))
    print(table(rows, markdown=args.markdown))
    wrong = [r for r in rows if (r["family"] == "true") != (r["status"] == "admitted")]
    for row in wrong[:args.show]:
        print(f"\n[{row['family']} / {row['part']} / {row['variant']}] {row['paper']} -> {row['status']}\n"
              f"  quote: {row['quote'][:300]}\n  findings: {row['findings'][:500]}")
    return 0 if not wrong else 1


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    raise SystemExit(main())
