"""The full-text ladder for one bibliography entry, every tier pinned in the KB's store.

Tiers, best first; the first that gives text wins, and every attempt is recorded with the reason
it failed:

1. **full text, local file** named in the entry's ``file`` field: JATS (``.xml``, ``.nxml``,
   ``.gz``), plain text (``.txt``, ``.md``) or a PDF (``.pdf``: its text extracted by pypdf is
   pinned as ``.txt`` beside the PDF, see :mod:`.pdf`; a scan or an encrypted PDF is refused
   with the reason). A local text or PDF is catalogued under the entry's identifier with that
   work's resolver record (from ``--snapshot-dir``, else fetched when the build has network) when
   the text shows that record's title or abstract, so the gate checks its quotes and the paper's
   existence and retraction; without one (no identifier, offline and not pinned, or a text that
   may be another paper) it is searched but never cited, and the attempt says why;
2. **already pinned** (``--snapshot-dir``): the work as pinned there (full text, else abstract),
   copied byte for byte, no network;
3. **full text, Europe PMC / PMC** by PMCID, PMID or DOI through the pin stage's
   :class:`~bioevidence.sources.pin.Pinner` (metadata page pinned too; its abstract is the
   abstract tier when there is no open full text);
4. **abstract** from the entry's ``abstract`` field, pinned as UTF-8 text;
5. **metadata only**: the entry itself, pinned as BibTeX-ish JSON (title and identifiers are
   searchable; there is nothing to quote).

Only tier 3 touches the network (through ``sources``), and only when ``network`` is given.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ...errors import BioevidenceError, InputError
from ...sources.bibtex import BibEntry
from ...sources.catalogue import Catalogue, Work
from ...sources.store import SnapshotStore
from .layout import Attempt, EntryRecord, fingerprint

__all__ = ["Acquirer", "entry_fingerprint"]

JATS_SUFFIXES = (".xml", ".nxml", ".xml.gz", ".nxml.gz")
TEXT_SUFFIXES = (".txt", ".md", ".text")


def entry_fingerprint(entry: BibEntry) -> str:
    return fingerprint(entry.key, [i.key for i in entry.ids], entry.title, list(entry.files), entry.abstract)


@dataclass
class Acquirer:
    """Runs the ladder for entries into ``store`` / ``catalogue`` (the KB's ``snapshots/``).

    ``pinned``: an already pinned snapshot folder (store, catalogue) to use first; ``network``: a
    zero-argument callable giving a :class:`~bioevidence.sources.pin.Pinner` on the KB's store
    (called only when an entry needs it), or ``None`` for no network."""

    store: SnapshotStore
    catalogue: Catalogue
    pinned: tuple[SnapshotStore, Catalogue] | None = None
    network: Callable[[], Any] | None = None
    resolver: str = "europepmc"
    clock: Callable[[], str] | None = None
    _learned: bool = field(default=False, init=False, repr=False)

    def acquire(self, entry: BibEntry, source: str = "") -> EntryRecord:
        attempts: list[Attempt] = []
        base = dict(key=entry.key, fingerprint=entry_fingerprint(entry), ids=[i.key for i in entry.ids],
                    title=entry.title, authors=list(entry.authors), year=entry.year, journal=entry.journal,
                    source=source)
        for step in (self._local, self._snapshot, self._remote, self._abstract):
            found = step(entry, attempts)
            if found is not None:
                return EntryRecord(**base, **found, attempts=attempts)  # type: ignore[arg-type]
        data = json.dumps({"key": entry.key, "type": entry.entry_type, "title": entry.title,
                           "authors": list(entry.authors), "year": entry.year, "journal": entry.journal,
                           "ids": [i.key for i in entry.ids], "url": entry.url}, sort_keys=True,
                          ensure_ascii=False).encode()
        sha = self.store.put(data, ext="json")
        return EntryRecord(**base, tier="metadata", via="bibtex", sha256=sha, format="bibtex",  # type: ignore[arg-type]
                           attempts=attempts)

    # -- tiers -------------------------------------------------------------------------------
    def _local(self, entry: BibEntry, attempts: list[Attempt]) -> dict[str, Any] | None:
        if not entry.files:
            attempts.append(Attempt("fulltext", "local-file", False, "no file named in the entry"))
            return None
        from ...paths import inside

        for name in entry.files:
            path = Path(name)
            lower = path.name.lower()
            if entry.files_root and not inside(path, entry.files_root):
                attempts.append(Attempt("fulltext", "local-file", False,
                                        f"{path.name}: outside the bibliography's folder {entry.files_root}; refused "
                                        "(move it there, or give kb build --files-root FOLDER)"))
                continue
            if not path.is_file():
                attempts.append(Attempt("fulltext", "local-file", False, f"{name} does not exist"))
                continue
            try:
                found = self._local_pdf(entry, path) if lower.endswith(".pdf") else self._local_file(entry, path, lower)
            except (InputError, OSError, UnicodeDecodeError) as exc:
                reason = exc.message if isinstance(exc, BioevidenceError) else str(exc)
                attempts.append(Attempt("fulltext", "local-file", False, f"{path.name}: {reason}"))
                continue
            if found is None:
                attempts.append(Attempt("fulltext", "local-file", False,
                                        f"{path.name} is neither JATS ({', '.join(JATS_SUFFIXES)}) nor text "
                                        f"({', '.join(TEXT_SUFFIXES)})"))
                continue
            attempts.append(Attempt("fulltext", "local-file", True, str(path)))
            return self._citable(entry, found, path, attempts) if found["format"] == "text" else found
        return None

    def _citable(self, entry: BibEntry, found: dict[str, Any], path: Path, attempts: list[Attempt]
                 ) -> dict[str, Any]:
        """A local text or PDF catalogued under the entry's identifier with that work's pinned resolver
        record (existence, retraction), its text as the full text, so the gate can check its quotes."""
        record = self._resolver_record(entry, attempts)
        if record is None:
            return found
        try:
            mismatch = self._other_paper(found["sha256"], record)
        except (InputError, UnicodeDecodeError) as exc:
            reason = exc.message if isinstance(exc, InputError) else str(exc)
            mismatch = f"the resolver record of {record.key} cannot be compared with the text ({reason})"
        if mismatch:
            attempts.append(Attempt("metadata", "resolver", False, f"{mismatch}: its text is searched but the gate "
                                    "cannot cite it"))
            return found
        own = {i.scheme for i in record.ids}  # as for a local JATS: no alias of a kind the record has
        ids = [i.key for i in record.ids[1:]] + [i.key for i in entry.ids if i.scheme not in own]
        work = Work(key=record.key, resolver=record.resolver, metadata_sha256=record.metadata_sha256,
                    fulltext_sha256=found["sha256"], license=None, retrieved_at=record.retrieved_at,
                    urls=(path.resolve().as_uri(),), abstract_sha256=record.abstract_sha256,
                    extra={**({"ids": ids} if ids else {}), "fulltext_format": "text", "fulltext_via": found["via"]})
        self.catalogue.add(work)
        return {**found, "work": work.key}

    def _other_paper(self, text_sha: str, record: Work) -> str:
        """Why the local text may be another paper than ``record`` (``""`` when it shows the record's
        title, or the first sentence of its abstract): a PDF filed under the wrong PMID must not lend
        its sentences to that paper."""
        import re

        from ...sources.metadata import parse_metadata
        from ...text.normalize import normalize

        def words(text: str) -> str:
            return " " + " ".join(re.findall(r"[a-z0-9]+", normalize(text).lower())) + " "

        meta = parse_metadata(self.store.read(record.metadata_sha256), want=record.key)
        abstract = ""
        if record.abstract_sha256:
            abstract = parse_metadata(self.store.read(record.abstract_sha256), want=record.key).abstract or ""
        abstract = abstract or meta.abstract or ""
        first = re.split(r"(?<=[.!?])\s+", abstract.strip(), maxsplit=1)[0] if abstract.strip() else ""
        probes = [p for p in (meta.title or "", first) if len(p.split()) >= 4]
        if not probes:
            return ""  # the record gives nothing to compare with
        body = words(self.store.read(text_sha).decode("utf-8"))
        if any(words(p) in body for p in probes):
            return ""
        return (f"the text shows neither the title nor the abstract's first sentence of {record.key} "
                f"('{(meta.title or first)[:80]}'): it may be another paper")

    def _resolver_record(self, entry: BibEntry, attempts: list[Attempt]) -> Work | None:
        """The work's pinned resolver record: from ``--snapshot-dir``, else fetched (when the build has
        network), its bytes pinned in the KB's store; ``None`` (with the reason) when there is none."""
        why = "its text is searched but the gate cannot cite it"
        if not entry.ids:
            attempts.append(Attempt("metadata", "resolver", False, f"no PMID, PMCID or DOI in the entry: {why}"))
            return None
        if self.pinned is not None:
            store, work = self._pinned_work(entry)
            if work is not None:
                for sha in (work.metadata_sha256, work.abstract_sha256):
                    if sha:
                        self._copy(store, sha)
                attempts.append(Attempt("metadata", "snapshot", True, work.key))
                return work
        if self.network is None:
            attempts.append(Attempt("metadata", self.resolver, False, "not pinned in --snapshot-dir and no network "
                                    f"for this build (--offline): {why}"))
            return None
        result = self.network().pin(entry.ids[0])
        if result.status == "failed" or result.work is None:
            attempts.append(Attempt("metadata", self.resolver, False, f"{result.error} (retryable: run the build "
                                    f"again): {why}"))
            return None
        attempts.append(Attempt("metadata", self.resolver, True, result.work.key))
        return cast(Work, result.work)

    def _pinned_work(self, entry: BibEntry) -> tuple[SnapshotStore, Work | None]:
        """The entry's work in ``--snapshot-dir`` by any of its identifiers. On the first miss the pinned
        catalogue learns the identifiers its works' own metadata name (a 0.8.0 catalogue is keyed by PMID
        only), so a DOI-only entry finds a work pinned by PMID instead of going to the network."""
        assert self.pinned is not None
        store, catalogue = self.pinned
        work = next((w for w in (catalogue.get(i) for i in entry.ids) if w is not None), None)
        if work is None and entry.ids and not self._learned:
            self._learned = True
            if catalogue.learn_ids(store):
                work = next((w for w in (catalogue.get(i) for i in entry.ids) if w is not None), None)
        return store, work

    def _copy(self, store: SnapshotStore, sha: str) -> None:
        """Pinned bytes of another store copied into the KB's, byte for byte (re-hashed on both sides)."""
        found = store.find(sha)
        ext = found.name[64:].removesuffix(".gz").lstrip(".") if found is not None else ""
        got = self.store.put(store.read(sha), ext=ext)
        if got != sha:  # pragma: no cover - put re-hashes what read verified
            raise InputError(f"pinned bytes {sha} re-hash to {got}", file=str(found))

    def _local_pdf(self, entry: BibEntry, path: Path) -> dict[str, Any]:
        from ...io import read_limited
        from .pdf import extractor, pdf_text

        data = read_limited(path, within=Path(entry.files_root) if entry.files_root else None)
        text = pdf_text(data, name=path.name)
        pdf_sha = self.store.put(data, ext="pdf")
        return {"tier": "fulltext", "via": "local-pdf", "sha256": self.store.put(text.encode("utf-8"), ext="txt"),
                "format": "text", "pdf_sha256": pdf_sha, "extractor": extractor()}

    def _local_file(self, entry: BibEntry, path: Path, lower: str) -> dict[str, Any] | None:
        from ...io import read_limited

        data = read_limited(path, within=Path(entry.files_root) if entry.files_root else None)
        if lower.endswith(".gz"):
            from ...io import gunzip_limited
            from ...limits import size_limit

            data = gunzip_limited(data, size_limit("max_inflated"), name=str(path))
            lower = lower[:-3]
        if lower.endswith(JATS_SUFFIXES):
            from ...sources.jats_meta import parse_jats_metadata
            from ...sources.pin import jats_access

            meta = parse_jats_metadata(data, file=str(path))
            _open, licence = jats_access(data)
            sha = self.store.put(data, ext="xml")
            # the entry's identifiers join the article's own only where it has none of that kind: a
            # JATS file filed under another paper's PMID must not become that paper in the catalogue
            own = {i.scheme for i in meta.ids}
            ids = [*meta.ids, *(i for i in entry.ids if i.scheme not in own)]
            ids.sort(key=lambda i: ("doi", "pmid", "pmcid").index(i.scheme))
            if not ids:
                return {"tier": "fulltext", "via": "local-file", "sha256": sha, "format": "jats"}
            work = Work(key=ids[0].key, resolver="local", metadata_sha256=sha, fulltext_sha256=sha, license=licence,
                        retrieved_at=self._now(), urls=(path.resolve().as_uri(),),
                        extra={"ids": [i.key for i in ids[1:]]} if len(ids) > 1 else {})
            self.catalogue.add(work)
            return {"tier": "fulltext", "via": "local-file", "sha256": sha, "format": "snapshot", "work": work.key}
        if lower.endswith(TEXT_SUFFIXES):
            data.decode("utf-8")  # a text file must be UTF-8 (UnicodeDecodeError is the reason otherwise)
            return {"tier": "fulltext", "via": "local-file", "sha256": self.store.put(data, ext="txt"),
                    "format": "text"}
        return None

    def _snapshot(self, entry: BibEntry, attempts: list[Attempt]) -> dict[str, Any] | None:
        if self.pinned is None:
            return None
        store, work = self._pinned_work(entry)
        if work is None:
            attempts.append(Attempt("fulltext", "snapshot", False, "not pinned in --snapshot-dir"
                                    if entry.ids else "no identifier to look up in --snapshot-dir"))
            return None
        for sha in work.hashes:
            self._copy(store, sha)
        self.catalogue.add(work)
        tier = "fulltext" if work.fulltext_sha256 else "abstract"
        if tier != "fulltext":
            attempts.append(Attempt("fulltext", "snapshot", False, "pinned without open full text"))
        attempts.append(Attempt(tier, "snapshot", True, work.key))
        return {"tier": tier, "via": "snapshot", "sha256": work.pinned_sha256, "format": "snapshot", "work": work.key}

    def _remote(self, entry: BibEntry, attempts: list[Attempt]) -> dict[str, Any] | None:
        via = self.resolver
        if self.network is None:
            if entry.ids:
                attempts.append(Attempt("fulltext", via, False, "no network for this build (--offline)"))
            return None
        if not entry.ids:
            attempts.append(Attempt("fulltext", via, False, "the entry has no PMID, PMCID or DOI to look up"))
            return None
        from ...sources.metadata import parse_metadata

        pinner = self.network()
        result = pinner.pin(entry.ids[0])
        if result.status == "failed" or result.work is None:
            attempts.append(Attempt("fulltext", via, False, f"{result.error} (retryable: run the build again)"))
            return None
        work: Work = result.work
        self.catalogue.add(work)
        if work.fulltext_sha256:
            attempts.append(Attempt("fulltext", via, True, work.key))
            return {"tier": "fulltext", "via": via, "sha256": work.fulltext_sha256, "format": "snapshot",
                    "work": work.key}
        meta = parse_metadata(self.store.read(work.metadata_sha256), want=work.key)
        if not meta.found:
            attempts.append(Attempt("fulltext", via, False, f"{work.key} not found"))
            return None
        reason = ("not in PubMed Central (no PMCID)" if not meta.pmcid else
                  "not open access" if meta.open_access is False else "no open JATS full text served")
        attempts.append(Attempt("fulltext", via, False, reason))
        if meta.abstract:
            attempts.append(Attempt("abstract", via, True, work.key))
            return {"tier": "abstract", "via": via, "sha256": work.pinned_sha256, "format": "snapshot",
                    "work": work.key}
        attempts.append(Attempt("abstract", via, False, "the pinned record has no abstract"))
        return None

    def _abstract(self, entry: BibEntry, attempts: list[Attempt]) -> dict[str, Any] | None:
        if not entry.abstract.strip():
            attempts.append(Attempt("abstract", "bibtex", False, "no abstract field in the entry"))
            return None
        sha = self.store.put(entry.abstract.encode("utf-8"), ext="txt")
        attempts.append(Attempt("abstract", "bibtex", True, "abstract field"))
        return {"tier": "abstract", "via": "bibtex", "sha256": sha, "format": "abstract-text"}

    def _now(self) -> str:
        if self.clock is not None:
            return self.clock()
        from datetime import UTC, datetime

        return datetime.now(UTC).replace(microsecond=0).isoformat()
