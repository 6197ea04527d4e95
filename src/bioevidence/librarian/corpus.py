"""Readers that turn pinned sources into :class:`Doc` records for the local index.

A SOURCE is one of:

* a folder of JATS files (``.xml``, ``.nxml``, optionally ``.gz``), read recursively;
* a snapshot folder holding ``literature.json`` (the catalogue) and content-addressed bytes;
* a JSONL corpus (optionally ``.gz``) of ``{doc_id, title, abstract}`` records, SciFact style,
  where ``abstract`` is a list of sentences (that segmentation is kept as sentence ids).

Passage text is the readable text as printed (:attr:`bioevidence.text.jats.Passage.text`,
citation markers, dashes and symbols as in the paper; a JSONL abstract's sentences joined by a
space, unchanged): every quote is a byte-exact slice of it, which the literature grounder finds
token by token. Sentence spans never cross a break (a table cell, a caption's label); BM25
analyses the canonical form without citation markers (``index_text``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from ..sources.catalogue import Work
    from ..sources.store import SnapshotStore

__all__ = ["Doc", "DocPassage", "Unit", "abstract_passage", "iter_source", "passage_spans", "read_jats", "read_unit",
           "source_units"]

_SECTION_FIELD = {"intro": "INTRO", "methods": "METHODS", "results": "RESULTS", "discussion": "DISCUSS",
                  "conclusions": "CONCL"}


@dataclass
class DocPassage:
    pid: str  # passage id (JATS id or n<position>, or "abstract" for JSONL and pinned abstracts)
    kind: str  # abstract | paragraph | list-item | figure-caption | table-caption | table | ...
    section: str
    fields: tuple[str, ...]  # search fields this passage feeds
    text: str  # the passage as printed (quotes are byte-exact slices of it)
    sentences: list[tuple[int, int]]  # sentence spans in ``text``
    index_text: str = ""  # what BM25 analyses (canonical, markers removed); ``text`` when empty
    breaks: tuple[int, ...] = ()  # offsets in ``text`` no quote crosses (table cells, a caption's label)
    section_type: str = ""  # intro | methods | results | discussion | conclusions | abstract | …
    scripts: tuple[tuple[int, int, str], ...] = ()  # printed super/subscript spans in ``text`` (for display)


@dataclass
class Doc:
    doc_id: str
    title: str
    source: str  # file path or store path
    sha256: str  # SHA-256 of the pinned bytes the passages come from
    kind: str  # "fulltext" | "abstract"
    pmid: str | None = None
    pmcid: str | None = None
    doi: str | None = None
    authors: list[str] = field(default_factory=list)
    journal: str = ""
    year: int | None = None
    keywords: list[str] = field(default_factory=list)
    retrieved_at: str | None = None
    passages: list[DocPassage] = field(default_factory=list)
    retracted: bool = False
    concern: bool = False  # an expression of concern
    notices: list[str] = field(default_factory=list)  # retraction / concern notices, as cited


def passage_spans(text: str, markers: tuple[tuple[int, int], ...] = (),
                  breaks: tuple[int, ...] = ()) -> list[tuple[int, int]]:
    """Sentence spans of a passage's printed text, never crossing a break.

    Citation markers are blanked for segmentation only ("information.20 In" ends a sentence
    after "information."); spans are trimmed to non-space text and index ``text`` itself.
    """
    from ..text.normalize import sentence_spans

    masked = list(text)
    for a, b in markers:
        for i in range(a, min(b, len(text))):
            masked[i] = " "
    blank = "".join(masked)
    out: list[tuple[int, int]] = []
    edges = [0, *sorted(b for b in breaks if 0 < b < len(text)), len(text)]
    for lo, hi in itertools.pairwise(edges):
        for a, b in sentence_spans(blank[lo:hi]):
            a, b = lo + a, lo + b
            while a < b and text[a].isspace():
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            if b > a:
                out.append((a, b))
    return out


_PASSAGE_KINDS = {"abstract", "paragraph", "list-item", "boxed-text", "quote", "definition", "figure-caption",
                  "table-caption", "box-caption", "table"}


def _itertext(el: Any) -> str:
    return "".join(str(t) for t in el.itertext())


def _meta_jats(data: bytes) -> dict[str, Any]:
    """Authors, journal, year, keywords from JATS front matter (passages come from text.jats)."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=True)
    root = etree.fromstring(data, parser)
    out: dict[str, Any] = {"authors": [], "keywords": [], "journal": "", "year": None}
    if root is None:
        return out

    def local(el: Any) -> str:
        return etree.QName(el).localname if isinstance(el.tag, str) else ""

    for el in root.iter():
        tag = local(el)
        if tag == "contrib" and el.get("contrib-type", "author") == "author":
            sur = next((c for c in el.iter() if local(c) == "surname"), None)
            given = next((c for c in el.iter() if local(c) == "given-names"), None)
            if sur is not None and sur.text:
                name = sur.text.strip() + (" " + "".join(w[0] for w in given.text.split()) if given is not None
                                           and given.text else "")
                out["authors"].append(name)
        elif tag == "journal-title" and not out["journal"]:
            out["journal"] = " ".join(_itertext(el).split())
        elif tag == "kwd":
            out["keywords"].append(" ".join(_itertext(el).split()))
        elif tag == "pub-date" and out["year"] is None:
            y = next((c for c in el if local(c) == "year"), None)
            if y is not None and (y.text or "").strip().isdigit():
                out["year"] = int(y.text.strip())  # type: ignore[union-attr]
    return out


def read_jats(data: bytes, *, source: str, sha256: str | None = None) -> Doc:
    """One JATS article as a :class:`Doc` (abstract, body paragraphs, captions, tables)."""
    from ..text.jats import parse_jats

    article = parse_jats(data, source=source)
    meta = _meta_jats(data)
    ids = article.ids
    pmcid = ids.get("pmcid") or ids.get("pmc")
    if pmcid and not pmcid.upper().startswith("PMC"):
        pmcid = "PMC" + pmcid
    doc = Doc(
        doc_id="", title=article.title, source=source, sha256=sha256 or hashlib.sha256(data).hexdigest(),
        kind="fulltext", pmid=ids.get("pmid"), pmcid=pmcid.upper() if pmcid else None,
        doi=(ids.get("doi") or "").lower() or None, authors=meta["authors"], journal=meta["journal"],
        year=meta["year"], keywords=meta["keywords"],
    )
    seen: set[str] = set()
    for p in article.passages_for(kinds=_PASSAGE_KINDS, parts=("abstract", "body", "caption", "table")):
        if not p.text or p.text in seen:
            continue
        seen.add(p.text)
        if p.part == "abstract":
            fields: tuple[str, ...] = ("ABSTRACT",)
            kind = "abstract"
        else:
            kind = p.kind
            extra = {"figure-caption": ("FIG",), "box-caption": ("FIG",), "table-caption": ("TABLE",),
                     "table": ("TABLE",)}.get(p.kind, ())
            sec = _SECTION_FIELD.get(p.section_type)
            fields = ("BODY", *extra, *((sec,) if sec and p.part == "body" else ()))
        doc.passages.append(DocPassage(p.id, kind, p.section, fields, p.text,
                                       passage_spans(p.text, p.markers, p.breaks), p.match, p.breaks,
                                       p.section_type, p.scripts))
    if not any(dp.kind != "abstract" for dp in doc.passages):
        doc.kind = "abstract"
    doc.doc_id = (f"pmid:{doc.pmid}" if doc.pmid else f"pmcid:{doc.pmcid}" if doc.pmcid else
                  f"doi:{doc.doi}" if doc.doi else Path(source).name.split(".")[0])
    return doc


def _jats_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        name = path.name.lower()
        if path.is_file() and name.endswith((".xml", ".nxml", ".xml.gz", ".nxml.gz")):
            yield path


def _read_bytes(path: Path) -> bytes:
    from ..io import gunzip_limited
    from ..limits import size_limit

    raw = path.read_bytes()
    return gunzip_limited(raw, size_limit("max_inflated"), name=str(path)) if path.name.endswith(".gz") else raw


@dataclass(frozen=True)
class Unit:
    """One document to read, small enough to send to another process: a JATS file (``path``), a
    work of a snapshot folder (``path`` is the folder), or one line of a JSONL corpus (its bytes).
    ``path`` is recorded as given; a relative one is read under ``base`` when that is set (the
    client's working folder, for a worker elsewhere)."""

    kind: str  # jats | snapshot | jsonl
    path: str
    work: Work | None = None
    line: int = 0
    data: bytes = b""
    base: str = ""

    @property
    def where(self) -> Path:
        return Path(self.base) / self.path if self.base else Path(self.path)


def source_units(source: Path, *, base: str = "") -> list[Unit]:
    """The documents of one SOURCE (see module docstring), in reading order; an unusable SOURCE is
    an ``InputError``. JSONL lines are read here; JATS files and pinned bytes where the unit is
    read (under ``base``, when given, for a relative SOURCE)."""
    if source.is_dir():
        if (source / "literature.json").is_file():
            from ..sources.catalogue import Catalogue

            return [Unit("snapshot", str(source), work=work, base=base)
                    for work in Catalogue.load(source / "literature.json")]
        files = [Unit("jats", str(path), base=base) for path in _jats_files(source)]
        if not files:
            raise InputError(f"{source} holds no .xml/.nxml JATS files and no literature.json; "
                             "point at a JATS folder, a snapshot folder or a JSONL corpus", file=str(source))
        return files
    if source.is_file() and source.name.endswith((".jsonl", ".jsonl.gz")):
        return [Unit("jsonl", str(source), line=n, data=line) for n, line in enumerate(_jsonl_lines(source), 1)
                if line.strip()]
    raise InputError(f"{source} is not a JATS folder, a snapshot folder or a .jsonl[.gz] corpus; "
                     "check the path", file=str(source))


def _jsonl_lines(source: Path) -> Iterator[bytes]:
    """The lines of a JSONL corpus; a ``.gz`` one inflated through the one capped reader
    (``io.iter_gunzip``, ``max_inflated``): a 1 MB bomb is refused, not inflated to gigabytes."""
    if not source.name.endswith(".gz"):
        with source.open("rb") as fh:
            yield from fh
        return
    from ..io import iter_gunzip
    from ..limits import size_limit

    rest = b""
    with source.open("rb") as fh:
        for chunk in iter_gunzip(fh, size_limit("max_inflated"), name=str(source)):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                yield line + b"\n"
    if rest:
        yield rest


def read_unit(unit: Unit, stores: dict[str, SnapshotStore] | None = None) -> Doc | None:
    """The document of one unit; ``None`` for a file that is not an article or a work with nothing
    pinned to index; a malformed JSONL line is an ``InputError``. ``stores`` keeps one
    ``SnapshotStore`` per folder across calls (one folder listing, bytes verified once)."""
    if unit.kind == "jats":
        try:
            return read_jats(_read_bytes(unit.where), source=unit.path)
        except InputError:
            return None  # not an article (e.g. a correction notice without <article>): skipped
    if unit.kind == "snapshot":
        assert unit.work is not None
        if stores is None:
            stores = {}
        if unit.path not in stores:
            from ..sources.store import SnapshotStore

            stores[unit.path] = SnapshotStore(unit.where)
        return _snapshot_doc(stores[unit.path], unit.work, Path(unit.path))
    return _jsonl_doc(Path(unit.path), unit.line, unit.data)


def _jsonl_doc(path: Path, lineno: int, line: bytes) -> Doc:
    from ..text.normalize import normalize

    try:
        rec = json.loads(line)
        doc_id, title, abstract = str(rec["doc_id"]), str(rec.get("title", "")), rec["abstract"]
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"line {lineno} is not a {{doc_id, title, abstract}} record ({exc}); "
                         "fix or drop the line", file=str(path), line=lineno) from exc
    sents = [str(s) for s in (abstract if isinstance(abstract, list) else [abstract])]  # verbatim
    text, spans, pos = "", [], 0
    for s in sents:
        if text:
            text += " "
            pos += 1
        spans.append((pos, pos + len(s)))
        text += s
        pos += len(s)
    doc = Doc(doc_id=doc_id, title=title, source=f"{path}#{lineno}",
              sha256=hashlib.sha256(line.rstrip(b"\r\n")).hexdigest(), kind="abstract")
    for key in ("pmid", "pmcid", "doi"):
        if rec.get(key):
            setattr(doc, key, str(rec[key]))
    doc.passages.append(DocPassage("abstract", "abstract", "Abstract", ("ABSTRACT",), text, spans,
                                   normalize(text), (), "abstract"))
    return doc


def abstract_passage(abstract: str) -> DocPassage:
    """The passage of a pinned abstract, as the literature grounder reads it (id ``abstract``)."""
    from ..text.jats_inline import match_form
    from ..text.tokens import plain_markers

    text = " ".join(abstract.split())
    markers = tuple(plain_markers(text))
    return DocPassage("abstract", "abstract", "Abstract", ("ABSTRACT",), text, passage_spans(text, markers),
                      match_form(text, markers, ()), (), "abstract")


def _named(folder: Path, store: SnapshotStore, sha: str) -> str:
    found = store.find(sha)
    return str(folder / found.name) if found is not None else str(folder / sha)


def _snapshot_doc(store: SnapshotStore, work: Work, folder: Path) -> Doc | None:
    """The document of one pinned work; its ``source`` names the file under ``folder`` as given."""
    from ..sources.metadata import parse_metadata

    meta = parse_metadata(store.read(work.metadata_sha256), want=work.id) \
        if store.has(work.metadata_sha256) else None
    if work.fulltext_sha256 and store.has(work.fulltext_sha256):
        data = store.read(work.fulltext_sha256)
        doc = read_jats(data, source=_named(folder, store, work.fulltext_sha256), sha256=work.fulltext_sha256)
    elif meta is not None and meta.found and meta.abstract:
        # No full text pinned: the abstract the grounder verifies against (passage id "abstract").
        doc = Doc(doc_id=work.key, title=meta.title, source=_named(folder, store, work.metadata_sha256),
                  sha256=work.pinned_sha256, kind="abstract")
        doc.passages.append(abstract_passage(meta.abstract))
    else:
        return None
    doc.retrieved_at = work.retrieved_at
    if meta is not None:
        doc.pmid = doc.pmid or meta.pmid
        doc.pmcid = doc.pmcid or meta.pmcid
        doc.doi = doc.doi or meta.doi
        doc.journal = doc.journal or meta.journal
        doc.year = doc.year or meta.year
        doc.authors = doc.authors or list(meta.authors)
        # The source's title must be the pinned metadata title: the grounder compares them.
        doc.title = meta.title or doc.title
        doc.retracted = meta.retracted
        doc.concern = meta.expression_of_concern
        doc.notices = [str(n) for n in (*meta.retraction_notices, *meta.concern_notices)]
    doc.doc_id = work.key
    return doc


def iter_source(source: Path) -> Iterator[Doc]:
    """Docs of one SOURCE (see module docstring), read in this process."""
    stores: dict[str, SnapshotStore] = {}
    for unit in source_units(source):
        doc = read_unit(unit, stores)
        if doc is not None:
            yield doc
