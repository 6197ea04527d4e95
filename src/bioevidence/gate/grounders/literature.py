"""Literature grounder: cited papers exist, are not retracted, and say what the quotes say.

Which sources it grounds, whatever their declared ``source_type``: every ``publication``; every
source whose ``uri`` is a ``pmid:``/``pmcid:`` (or PubMed / PMC URL), or a ``doi:`` of a paper;
and every source whose ``sha256`` names a catalogued work's pinned file or pinned bytes that are a
paper (JATS, PubMed XML, resolver metadata). A paper declared ``web_page``, ``dataset_snapshot``
or ``local_file`` is BEV033 (rejected), and its quotes are still checked. A DOI of a non-paper
source whose pinned bytes are not a paper (a dataset on Zenodo) is left to the source-bytes grounder.

For each such source:

* identifier unparseable or not in the snapshot catalogue → BEV015 (pin it first); a pinned JATS
  article named only by its ``sha256`` is read, and its quotes checked, but stays BEV015 (its
  existence and retraction status are not pinned);
* pinned metadata missing → BEV015; its bytes do not hash to their name → BEV014;
* the resolver found no such work → BEV016; retracted → BEV019 naming the notice;
  expression of concern → BEV027 naming the notice (a person decides);
* ``title`` is not the pinned title (case, punctuation and Greek spelling ignored) → BEV017; when
  the title and every quote are another pinned work's, one BEV017 names that work instead
  (:mod:`.misattributed`);
* ``sha256`` is not the pinned full text (else abstract, else metadata) hash → BEV017.

A work's full text is JATS, or plain UTF-8 text when the catalogue says ``fulltext_format: text``
(a knowledge base's local text or PDF entry, catalogued with its pinned resolver record, see
:mod:`bioevidence.librarian.kb.acquire`): its paragraphs are read by :mod:`bioevidence.text.plain`.

Each evidence item citing it has its quote checked by :func:`.citing.check_quote` (every part of
the paper is quotable; locators help and never reject). Items are verified only when their source
had no error. Each pinned paper is parsed and tokenised once per process (and cached on disk by its
SHA-256); bytes are re-hashed by the store on first read in each grounder.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InputError, IntegrityError, SourceError, excerpt
from ...sources.catalogue import Catalogue, Work
from ...sources.identifiers import PublicationId, parse_identifier
from ...sources.metadata import Notice, WorkMetadata, parse_metadata
from ...sources.store import SHA256_RE, SnapshotStore
from ...text.jats import Article, Passage, is_jats, parse_jats
from ...text.jats_inline import match_form
from ...text.plain import plain_article
from ...text.tokens import plain_markers
from ..findings import Finding, Fix
from ..grounding import Grounding, QuoteLocation, finding
from ..rules import BLOCKING
from .cache import cached
from .citing import MIN_QUOTE_WORDS, check_quote
from .common import items, requested_uses
from .misattributed import misattributed
from .quotes import FORMAT_VERSION, PaperText, article_from_plain, article_to_plain, normalized_title

__all__ = ["MIN_QUOTE_WORDS", "LiteratureGrounder"]

FACTS_VERSION = 1

_PAPERS: dict[tuple[str, str], PaperText] = {}
_METADATA: dict[tuple[str, str], WorkMetadata] = {}


@dataclass(frozen=True, slots=True)
class _Subject:
    """A source the grounder grounds: its identifier, catalogued work, and why it is literature."""

    ident: PublicationId | None
    work: Work | None
    why: str
    article_sha: str | None = None  # pinned JATS bytes that no catalogued work names


class LiteratureGrounder:
    """Ground publication sources and their quotes against a snapshot folder and its catalogue."""

    grounds_literature = True

    def __init__(self, store: SnapshotStore, catalogue: Catalogue, *, label: str | None = None,
                 cache_root: Path | None = None) -> None:
        self.store = store
        self.catalogue = catalogue
        self.cache_root = cache_root
        self._by_hash: dict[str, Work] | None = None
        self._sniffed: dict[str, str | None] = {}
        self._titles: dict[tuple[str, ...], list[Work]] | None = None  # misattributed.py's index of pinned titles
        digest = hashlib.sha256(catalogue.dumps().encode()).hexdigest()[:12]
        self.name = f"literature:{label or store.root.name}@{digest}"

    @classmethod
    def from_directory(cls, folder: Path | str, *, cache_root: Path | None = None) -> LiteratureGrounder:
        folder = Path(folder)
        return cls(SnapshotStore(folder), Catalogue.load(folder), cache_root=cache_root)

    # -- pinned bytes ---------------------------------------------------------------------------
    def metadata(self, work: Work) -> WorkMetadata:
        """The facts of ``work``'s pinned metadata the grounder reads (title, abstract, existence,
        retraction and concern notices), after the store verified the bytes (once per process)."""
        self.store.read(work.metadata_sha256)
        return self._metadata_of(work)

    def _metadata_of(self, work: Work) -> WorkMetadata:
        """Parsed metadata facts, from memory, else the on-disk cache, else the (verified) bytes."""
        key = (work.metadata_sha256, work.key)
        meta = _METADATA.get(key)
        if meta is None:
            sha = work.metadata_sha256
            raw = cached("metadata", _keyed(sha, work.key), FACTS_VERSION, lambda: _facts(
                parse_metadata(self.store.read(sha), want=work.key, file=sha)), self.cache_root)
            meta = _METADATA[key] = _from_facts(raw)
        return meta

    def paper(self, work: Work, meta: WorkMetadata) -> PaperText | None:
        """The paper's passages (full text, plus the abstract from metadata), or ``None``.

        The full text and abstract bytes are read through the store every time (it re-hashes them
        on its first read in the process and keeps verified bytes), so a tampered file is caught
        even when its parse comes from the cache.
        """
        if work.fulltext_sha256:
            self.store.read(work.fulltext_sha256)
        if work.abstract_sha256:
            self.store.read(work.abstract_sha256)
        return self._paper_of(work, meta)

    def _paper_of(self, work: Work, meta: WorkMetadata) -> PaperText | None:
        key = (work.fulltext_sha256 or "", work.abstract_sha256 or work.metadata_sha256)
        paper = _PAPERS.get(key)
        if paper is not None:
            return paper
        extra: list[Passage] = []
        abstract = meta.abstract
        if work.abstract_sha256:
            sha = work.abstract_sha256
            abstract = cached("abstract", _keyed(sha, work.key), FACTS_VERSION, lambda: parse_metadata(
                self.store.read(sha), want=work.key, file=sha).abstract, self.cache_root) or abstract
        if abstract:
            extra.append(_abstract_passage(abstract))
        tokens = None
        if work.fulltext_sha256:
            full = work.fulltext_sha256
            article, tokens = self._article(full, text=work.extra.get("fulltext_format") == "text")
        elif extra:
            article = Article(meta.title, ())
        else:
            return None
        if meta.title and " ".join(meta.title.split()) != " ".join(article.title.split()) and article.passages:
            extra.append(_plain_passage("pubmed-title", "title", "title", meta.title))
        elif meta.title and not article.passages:
            extra.append(_plain_passage("title", "title", "title", meta.title))
        paper = _PAPERS[key] = PaperText(article, tuple(extra), tokens)
        return paper

    def _article(self, sha: str, *, text: bool = False) -> tuple[Article, list[Any]]:
        """The pinned full text as an article: JATS, or plain UTF-8 text when the work says so."""
        from ...text.fingerprint import reader_fingerprint

        keyed = _keyed(sha, reader_fingerprint())  # a reader fix never reads an older reader's parse
        if text:
            raw = cached("text", keyed, FORMAT_VERSION, lambda: article_to_plain(plain_article(
                _utf8(self.store.read(sha), sha))), self.cache_root)
        else:
            raw = cached("jats", keyed, FORMAT_VERSION,
                         lambda: article_to_plain(parse_jats(self.store.read(sha), source=sha)), self.cache_root)
        return article_from_plain(raw)

    def _paper_from_bytes(self, sha: str) -> PaperText:
        """A pinned JATS article no catalogued work names (re-hashed by the store on read)."""
        self.store.read(sha)
        key = (sha, "")
        paper = _PAPERS.get(key)
        if paper is None:
            article, tokens = self._article(sha)
            paper = _PAPERS[key] = PaperText(article, (), tokens)
        return paper

    def preload(self, *, verify: bool = False) -> int:
        """Index every catalogued paper now (for benchmarks and servers); returns how many have text.

        Parses come from the on-disk cache when warm. Pinned bytes are re-hashed lazily, on the
        first record that cites each paper (``verify=True`` re-hashes them all now instead).
        """
        count = 0
        for work in self.catalogue:
            try:
                if verify:
                    for sha in work.hashes:
                        self.store.read(sha)
                meta = self._metadata_of(work)
                if meta.found and self._paper_of(work, meta) is not None:
                    count += 1
            except SourceError:
                continue
        return count

    # -- which sources are papers ---------------------------------------------------------------
    def _work_by_hash(self, sha: str) -> Work | None:
        if self._by_hash is None:
            self._by_hash = {h: work for work in self.catalogue for h in work.hashes}
        return self._by_hash.get(sha)

    def _sniff(self, sha: str) -> str | None:
        """What pinned bytes are: ``jats``, ``metadata`` (a paper's resolver record), ``other``, or
        ``None`` when nothing readable is pinned under that hash (the bytes grounder says why)."""
        if sha in self._sniffed:
            return self._sniffed[sha]
        kind: str | None = None
        if self.store.has(sha):
            try:
                data = self.store.read(sha)
            except SourceError:
                data = None
            if data is not None:
                kind = "other"
                if is_jats(data):
                    kind = "jats"
                else:
                    try:
                        meta = parse_metadata(data, file=sha)
                        kind = "metadata" if meta.found and meta.title else "other"
                    except (InputError, ValueError):
                        kind = "other"
        self._sniffed[sha] = kind
        return kind

    def _subject(self, source: dict[str, Any]) -> _Subject | None:
        """The paper behind a source, whatever its declared type, or ``None`` if it is not a paper."""
        declared = source.get("source_type")
        ident = parse_identifier(source.get("uri"))
        raw_sha = source.get("sha256")
        sha = raw_sha if isinstance(raw_sha, str) and SHA256_RE.match(raw_sha) else None
        work = self.catalogue.get(ident) if ident is not None else None
        if work is None and sha is not None:
            work = self._work_by_hash(sha)
        if declared == "publication":
            article = sha if work is None and ident is None and sha and self._sniff(sha) == "jats" else None
            return _Subject(ident, work, "it is declared a publication", article)
        if work is not None:
            if ident is not None and ident in work.ids:
                return _Subject(ident, work, f"its identifier {ident} names a catalogued paper")
            return _Subject(ident, work, f"its sha256 is the pinned snapshot of {work.key}")
        if ident is not None and ident.scheme in ("pmid", "pmcid"):
            return _Subject(ident, None, f"its identifier {ident} names a paper")
        kind = self._sniff(sha) if sha is not None else None
        if kind == "jats":
            return _Subject(ident, None, "its pinned bytes are a JATS article", sha if ident is None else None)
        if kind == "metadata":
            return _Subject(ident, None, "its pinned bytes are a paper's bibliographic record")
        if ident is not None and kind is None:
            return _Subject(ident, None, f"its identifier {ident} names a paper")
        return None

    # -- grounding ------------------------------------------------------------------------------
    def ground(self, record: dict[str, Any]) -> Grounding:
        uses = requested_uses(record)
        found: list[Finding] = []
        verified: set[str] = set()
        located: list[QuoteLocation] = []
        sources = record.get("source_artifacts")
        for sindex, source in enumerate(sources if isinstance(sources, list) else []):
            if not isinstance(source, dict):
                continue
            subject = self._subject(source)
            if subject is None:
                continue
            path = f"$.source_artifacts[{sindex}]"
            cited = [(i, item) for i, item in items(record) if item.get("source_artifact_id") == source.get("id")]
            source_findings: list[Finding] = []
            declared = source.get("source_type")
            if declared != "publication":
                source_findings.append(finding(
                    "BEV033", f"source {source.get('id')!r} is declared {declared!r} but {subject.why}; declare "
                    "source_type 'publication' (its quotes are checked against the paper either way)",
                    f"{path}.source_type", uses, Fix("replace", f"{path}.source_type", "publication")))
            more, paper = self._source(source, path, uses, subject)
            wrong = misattributed(self, source, path, cited, more, subject.work, uses)
            if wrong is not None:  # the title and quotes are another pinned paper's
                more, paper = wrong, None
            source_findings.extend(more)
            found.extend(source_findings)
            source_ok = not any(f.severity == "error" or f.rule_id == "BEV015" for f in source_findings)
            for index, item in cited:
                item_findings, location = self._item(item, f"$.evidence_items[{index}]", paper, source_findings,
                                                     uses)
                found.extend(item_findings)
                if source_ok and paper is not None and location is not None and isinstance(item.get("id"), str) \
                        and not any(f.severity in BLOCKING for f in item_findings):
                    verified.add(item["id"])
                    located.append(location)
        return Grounding(found, frozenset(verified), tuple(located))

    def _source(self, source: dict[str, Any], path: str, uses: list[str],
                subject: _Subject) -> tuple[list[Finding], PaperText | None]:
        uri = source.get("uri")
        ident, work = subject.ident, subject.work
        if work is None and subject.article_sha is not None:
            try:
                paper = self._paper_from_bytes(subject.article_sha)
            except IntegrityError as exc:
                return [finding("BEV014", f"pinned full text {subject.article_sha} is corrupted: {exc.message}",
                                path, uses)], None
            except (SourceError, InputError) as exc:
                return [finding("BEV015", f"pinned full text {subject.article_sha} cannot be read: {exc.message}",
                                path, uses)], None
            return [finding("BEV015", "the sha256 names a pinned JATS article that no catalogued work lists, so "
                            "its existence and retraction status are not pinned; cite it by pmid:, pmcid: or doi: "
                            "and pin it with `bioevidence ground`", f"{path}.uri", uses)], paper
        if work is None:
            if ident is None:
                return [finding("BEV015", f"the publication's uri {uri!r} is not a pmid:, pmcid: or doi: "
                                "identifier, so it cannot be grounded", f"{path}.uri", uses)], None
            return [finding("BEV015", f"{ident} is not in the snapshot catalogue; pin it with "
                            "`bioevidence ground` before validating", f"{path}.uri", uses)], None
        if ident is not None and ident not in work.ids:
            return [finding("BEV017", f"the record's sha256 is the pinned snapshot of {work.key}, not of {ident}",
                            f"{path}.sha256", uses, Fix("replace", f"{path}.uri", work.key))], None
        if ident is None and uri is not None:  # the bytes are a pinned work's; the uri must name that work
            others = sorted(str(i) for i in work.ids if str(i) != work.key)
            also = f" (also {', '.join(others)})" if others else ""
            return [finding("BEV017", f"the source's uri {excerpt(str(uri), 80)} does not name the work its sha256 "
                            f"pins, {work.key}{also}; cite the work by its identifier", f"{path}.uri", uses,
                            Fix("replace", f"{path}.uri", work.key))], None
        ident = ident or work.id
        try:
            meta = self.metadata(work)
        except IntegrityError as exc:
            return [finding("BEV014", f"pinned metadata of {ident} is corrupted: {exc.message}", path, uses)], None
        except SourceError as exc:
            return [finding("BEV015", f"pinned metadata of {ident} is missing: {exc.message}", path, uses)], None
        if not meta.found:
            return [finding("BEV016", f"{ident} does not exist according to the pinned {meta.source} response"
                            + (f" ({meta.error})" if meta.error else ""), f"{path}.uri", uses,
                            Fix("remove", path, detail=f"cite an existing paper instead of {ident}"))], None
        out: list[Finding] = []
        if meta.retracted:
            notices = ", ".join(str(n) for n in meta.retraction_notices) or "see PubMed"
            out.append(finding("BEV019", f"{ident} ('{meta.title}') is retracted (notice: {notices})", path, uses,
                               Fix("remove", path, detail="cite evidence from a paper that is not retracted")))
        if meta.expression_of_concern:
            notices = ", ".join(str(n) for n in meta.concern_notices) or "see PubMed"
            out.append(finding("BEV027", f"{ident} carries an expression of concern (notice: {notices}); "
                               "a person must decide whether it can support the claim", path, uses))
        title = source.get("title")
        if isinstance(title, str) and meta.title and normalized_title(title) != normalized_title(meta.title):
            out.append(finding("BEV017", f"the title of {ident} is '{meta.title}', not '{title}'",
                               f"{path}.title", uses, Fix("replace", f"{path}.title", meta.title)))
        try:
            text = self.paper(work, meta)
        except IntegrityError as exc:
            out.append(finding("BEV014", f"pinned full text of {ident} is corrupted: {exc.message}", path, uses))
            return out, None
        except SourceError as exc:
            out.append(finding("BEV015", f"pinned full text of {ident} is missing: {exc.message}", path, uses))
            return out, None
        except InputError as exc:
            out.append(finding("BEV015", f"pinned full text of {ident} cannot be read: {exc.message}", path, uses))
            return out, None
        pinned = work.pinned_sha256
        if source.get("sha256") != pinned:
            out.append(finding("BEV017", f"the record's sha256 for {ident} is not the pinned snapshot {pinned}",
                               f"{path}.sha256", uses, Fix("replace", f"{path}.sha256", pinned)))
        return out, text

    def _item(self, item: dict[str, Any], path: str, paper: PaperText | None,
              source_findings: list[Finding], uses: list[str]) -> tuple[list[Finding], QuoteLocation | None]:
        if any(f.rule_id in ("BEV014", "BEV016") for f in source_findings):
            return [], None
        if paper is None:
            if any(f.rule_id in ("BEV015", "BEV017") for f in source_findings):
                return [], None
            return [finding("BEV015", "no open full text or abstract is pinned for this paper, so the quote "
                            "cannot be confirmed", f"{path}.extracted_text", uses)], None
        return check_quote(item, path, paper, uses)


def _utf8(data: bytes, sha: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"pinned full text {sha} is catalogued as plain text but is not UTF-8 ({exc.reason} at "
                         f"byte {exc.start}); re-pin it from its source", file=sha) from None


def _keyed(sha: str, key: str) -> str:
    """A cache key for facts parsed from ``sha`` for the work ``key`` (the parse depends on both)."""
    return hashlib.sha256(f"{sha}\0{key}".encode()).hexdigest()


def _facts(meta: WorkMetadata) -> dict[str, Any]:
    """The metadata facts the grounder reads, as plain values (for the marshal cache)."""
    return {"source": meta.source, "found": meta.found, "title": meta.title, "abstract": meta.abstract,
            "retracted": meta.retracted, "error": meta.error,
            "retraction_notices": tuple((n.kind, n.id, n.citation) for n in meta.retraction_notices),
            "expression_of_concern": meta.expression_of_concern,
            "concern_notices": tuple((n.kind, n.id, n.citation) for n in meta.concern_notices)}


def _from_facts(raw: dict[str, Any]) -> WorkMetadata:
    return WorkMetadata(
        source=raw["source"], found=raw["found"], title=raw["title"], abstract=raw["abstract"],
        retracted=raw["retracted"], error=raw["error"],
        retraction_notices=tuple(Notice(*n) for n in raw["retraction_notices"]),
        expression_of_concern=raw["expression_of_concern"],
        concern_notices=tuple(Notice(*n) for n in raw["concern_notices"]))


def _plain_passage(pid: str, kind: str, part: str, text: str) -> Passage:
    """A passage from pinned metadata text (the PubMed abstract or title)."""
    text = " ".join(text.split())
    markers = tuple(plain_markers(text))
    section = "Abstract" if part == "abstract" else ""
    return Passage(pid, kind, section, part, text, match_form(text, markers, ()), part, "", markers, (),
                   ("abstract-1",) if part == "abstract" else ())


def _abstract_passage(text: str) -> Passage:
    return _plain_passage("abstract", "abstract", "abstract", text)
