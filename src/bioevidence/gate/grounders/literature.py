"""Literature grounder: cited papers exist, are not retracted, and say what the quotes say.

For each ``publication`` source of a record (identifier in ``uri``: ``pmid:``, ``pmcid:``,
``doi:`` or a doi.org / PubMed / PMC URL):

* identifier unparseable or not in the snapshot catalogue → BEV015 (pin it first);
* pinned metadata missing → BEV015; its bytes do not hash to their name → BEV014;
* the resolver found no such work → BEV016; retracted → BEV019 naming the notice;
  expression of concern → BEV027 naming the notice (a person decides);
* ``title`` is not the pinned title (case, punctuation and Greek spelling ignored) → BEV017;
* ``sha256`` is not the pinned full text (else abstract, else metadata) hash → BEV017.

For each evidence item citing that source, its quote (``extracted_text``):

* no pinned full text and no abstract → BEV015; under five words → BEV015;
* found (at the ``#paragraph-id`` of the locator when that names a passage) → verified, unless
  the quote stops mid-sentence just before a negation or restriction → BEV028 naming the rest
  of the sentence;
* in the paper but not at the named passage → BEV017 (fix: the right anchor);
* not in the paper → BEV017 naming the closest passage and what differs (fix: ``requote``).

Items are verified only when their source had no error. Each pinned paper is parsed and
normalised once per process (and cached on disk by its SHA-256); bytes are re-hashed by the
store on first read in each grounder.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ...errors import IntegrityError, SourceError
from ...sources.catalogue import Catalogue, Work
from ...sources.identifiers import parse_identifier
from ...sources.metadata import Notice, WorkMetadata, parse_metadata
from ...sources.store import SnapshotStore
from ...text.jats import Article, Passage, parse_jats
from ...text.normalize import normalize, word_count
from ..findings import Finding, Fix
from ..grounding import Grounding, finding
from .cache import cached
from .common import items, requested_uses
from .quotes import FORMAT_VERSION, PaperText, article_from_plain, article_to_plain, normalized_title

MIN_QUOTE_WORDS = 5
FACTS_VERSION = 1

_PAPERS: dict[tuple[str, str], PaperText] = {}
_METADATA: dict[tuple[str, str], WorkMetadata] = {}


class LiteratureGrounder:
    """Ground publication sources and their quotes against a snapshot folder and its catalogue."""

    def __init__(self, store: SnapshotStore, catalogue: Catalogue, *, label: str | None = None,
                 cache_root: Path | None = None) -> None:
        self.store = store
        self.catalogue = catalogue
        self.cache_root = cache_root
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
        if work.fulltext_sha256:
            full = work.fulltext_sha256
            raw = cached("jats", full, FORMAT_VERSION,
                         lambda: article_to_plain(parse_jats(self.store.read(full), source=full)), self.cache_root)
            article = article_from_plain(raw)
        elif extra:
            article = Article(meta.title, ())
        else:
            return None
        paper = _PAPERS[key] = PaperText(article, tuple(extra))
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

    # -- grounding ------------------------------------------------------------------------------
    def ground(self, record: dict[str, Any]) -> Grounding:
        uses = requested_uses(record)
        found: list[Finding] = []
        verified: set[str] = set()
        sources = record.get("source_artifacts")
        for sindex, source in enumerate(sources if isinstance(sources, list) else []):
            if not isinstance(source, dict) or source.get("source_type") != "publication":
                continue
            cited = [(i, item) for i, item in items(record) if item.get("source_artifact_id") == source.get("id")]
            source_findings, paper = self._source(source, f"$.source_artifacts[{sindex}]", uses)
            found.extend(source_findings)
            source_ok = not any(f.severity == "error" or f.rule_id == "BEV015" for f in source_findings)
            for index, item in cited:
                item_findings = self._item(item, f"$.evidence_items[{index}]", paper, source_findings, uses)
                found.extend(item_findings)
                if source_ok and paper is not None and not item_findings and isinstance(item.get("id"), str):
                    verified.add(item["id"])
        return Grounding(found, frozenset(verified))

    def _source(self, source: dict[str, Any], path: str,
                uses: list[str]) -> tuple[list[Finding], PaperText | None]:
        uri = source.get("uri")
        ident = parse_identifier(uri)
        if ident is None:
            return [finding("BEV015", f"the publication's uri {uri!r} is not a pmid:, pmcid: or doi: identifier, "
                            "so it cannot be grounded", f"{path}.uri", uses)], None
        work = self.catalogue.get(ident)
        if work is None:
            return [finding("BEV015", f"{ident} is not in the snapshot catalogue; pin it with "
                            "`bioevidence ground` before validating", f"{path}.uri", uses)], None
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
            paper = self.paper(work, meta)
        except IntegrityError as exc:
            out.append(finding("BEV014", f"pinned full text of {ident} is corrupted: {exc.message}", path, uses))
            return out, None
        except SourceError as exc:
            out.append(finding("BEV015", f"pinned full text of {ident} is missing: {exc.message}", path, uses))
            return out, None
        pinned = work.pinned_sha256
        if source.get("sha256") != pinned:
            out.append(finding("BEV017", f"the record's sha256 for {ident} is not the pinned snapshot {pinned}",
                               f"{path}.sha256", uses, Fix("replace", f"{path}.sha256", pinned)))
        return out, paper

    def _item(self, item: dict[str, Any], path: str, paper: PaperText | None,
              source_findings: list[Finding], uses: list[str]) -> list[Finding]:
        if any(f.rule_id in ("BEV014", "BEV016") for f in source_findings):
            return []
        quote = item.get("extracted_text")
        quote = quote if isinstance(quote, str) else ""
        text_path = f"{path}.extracted_text"
        if paper is None:
            if any(f.rule_id == "BEV015" for f in source_findings):
                return []
            return [finding("BEV015", "no open full text or abstract is pinned for this paper, so the quote "
                            "cannot be confirmed", text_path, uses)]
        canonical = normalize(quote)
        if word_count(canonical, canonical=True) < MIN_QUOTE_WORDS:
            return [finding("BEV015", f"the quote has fewer than {MIN_QUOTE_WORDS} words, too short to confirm; "
                            "quote at least one full clause", text_path, uses)]
        raw_locator = item.get("locator")
        locator = raw_locator if isinstance(raw_locator, str) else ""
        anchor = locator.rsplit("#", 1)[1] if "#" in locator else None
        target = paper.passage(anchor) if anchor else None
        hit = paper.find(quote, target, canonical=canonical)
        if hit is None and target is not None:
            elsewhere = paper.find(quote, canonical=canonical)
            if elsewhere is not None:
                fixed = locator.rsplit("#", 1)[0] + "#" + elsewhere.passage.id
                return [finding("BEV017", f"the quote is not in passage #{anchor} but in #{elsewhere.passage.id}",
                                f"{path}.locator", uses, Fix("replace", f"{path}.locator", fixed))]
        if hit is None:
            closest = paper.closest(quote)
            if closest is None or closest.ratio < 0.5:
                return [finding("BEV017", "the quote is not in the paper, and no passage is close to it",
                                text_path, uses, Fix("remove", path, detail="quote a passage of the paper"))]
            detail = closest.describe()
            return [finding("BEV017", f"the quote is not in the paper: {detail}", text_path, uses,
                            Fix("requote", text_path, closest.excerpt, detail))]
        rest = paper.cut_before_cue(hit)
        if rest:
            return [finding("BEV028", f"the quote stops mid-sentence just before '{rest}'; the full sentence "
                            "may restrict or negate it", text_path, uses,
                            Fix("requote", text_path, canonical.rstrip(" .") + " " + rest,
                                f"the sentence continues '{rest}'"))]
        return []


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


def _abstract_passage(text: str) -> Passage:
    return Passage("abstract", "abstract", "Abstract", "abstract", " ".join(text.split()), normalize(text))
