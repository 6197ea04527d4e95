"""The local index: a SQLite database of documents and passages plus bm25s BM25 structures.

Layout of an index folder::

    index.sqlite        docs, passages (printed text, sentence spans, breaks), meta
    bm25/<FIELD>/       one bm25s index per searchable field (NumPy arrays + JSON vocabulary)
    synonyms.tsv        abbreviation and drug-name pairs mined from the indexed sentences, plus any
                        pinned vocabulary given to the build (:mod:`.abbreviations`); its SHA-256 is
                        in ``meta`` (``files``) and checked when it is read

Fields: TITLE, ABSTRACT, TITLE_ABS, BODY, INTRO, METHODS, RESULTS, DISCUSS, CONCL, FIG, TABLE,
AUTH, JOURNAL, KW, ``_ALL`` (every text field: what an unfielded term searches) and ``_P`` (one
entry per passage: paragraph ranking with corpus-wide statistics). bm25s was chosen by
``tools/bench_bm25.py`` (see docs/librarian.md): same nDCG as rank-bm25 and tantivy on SciFact,
the fastest queries, and dense per-field score vectors, which the AST executor combines.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ClusterError, ConfigurationError, InputError
from ..execute import BatchFailed, map_batches
from .abbreviations import SYNONYMS_FILE, Pair, Synonyms, mine, pinned_vocabulary
from .analysis import analyze
from .corpus import Doc, Unit, read_unit, source_units

__all__ = ["DOC_FIELDS", "BuildStats", "LocalIndex", "build_index", "index_sources"]

DOC_FIELDS = ("TITLE", "ABSTRACT", "TITLE_ABS", "BODY", "INTRO", "METHODS", "RESULTS", "DISCUSS", "CONCL",
              "FIG", "TABLE", "AUTH", "JOURNAL", "KW", "_ALL")
SCHEMA_VERSION = 4
K1, B = 1.2, 0.75

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE docs (
  idx INTEGER PRIMARY KEY, doc_id TEXT UNIQUE NOT NULL, pmid TEXT, pmcid TEXT, doi TEXT,
  title TEXT NOT NULL, authors TEXT NOT NULL, journal TEXT NOT NULL, year INTEGER, keywords TEXT NOT NULL,
  sha256 TEXT NOT NULL, source TEXT NOT NULL, kind TEXT NOT NULL, retrieved_at TEXT,
  retracted INTEGER NOT NULL, concern INTEGER NOT NULL, notices TEXT NOT NULL);
CREATE TABLE passages (
  pidx INTEGER PRIMARY KEY, doc INTEGER NOT NULL REFERENCES docs(idx), ord INTEGER NOT NULL,
  pid TEXT NOT NULL, kind TEXT NOT NULL, section TEXT NOT NULL, fields TEXT NOT NULL, text TEXT NOT NULL,
  sentences TEXT NOT NULL, breaks TEXT NOT NULL, section_type TEXT NOT NULL, scripts TEXT NOT NULL);
CREATE INDEX passages_doc ON passages(doc, ord);
CREATE INDEX docs_pmid ON docs(pmid); CREATE INDEX docs_pmcid ON docs(pmcid); CREATE INDEX docs_doi ON docs(doi);
"""


@dataclass(frozen=True)
class BuildStats:
    docs: int
    passages: int
    input_bytes: int
    seconds: float
    synonyms: int = 0  # abbreviation and name pairs kept with the index (mined + vocabulary)

    @property
    def mb_per_s(self) -> float:
        return self.input_bytes / 1e6 / self.seconds if self.seconds else 0.0


def _field_tokens(doc: Doc, passage_tokens: list[list[str]]) -> dict[str, list[str]]:
    """Analysed tokens per field; each passage is analysed once (``passage_tokens``)."""
    out: dict[str, list[str]] = {f: [] for f in DOC_FIELDS}
    out["TITLE"] = analyze(doc.title)
    out["AUTH"] = analyze(" ".join(doc.authors), keep_stopwords=True)
    out["JOURNAL"] = analyze(doc.journal)
    out["KW"] = analyze(" ; ".join(doc.keywords))
    for p, toks in zip(doc.passages, passage_tokens, strict=True):
        for f in p.fields:
            out[f].extend(toks)
    out["TITLE_ABS"] = out["TITLE"] + out["ABSTRACT"]
    out["_ALL"] = out["TITLE"] + out["ABSTRACT"] + out["KW"] + out["BODY"]
    return out


UNITS_PER_BATCH = 16  # documents per batch on one machine (a cluster's batches are larger)


@dataclass
class Shard:
    """One batch of documents read and analysed (by a worker): each ``Doc`` with its passages'
    analysed tokens, in input order; or the ``InputError`` that stopped the batch."""

    docs: list[tuple[Doc, list[list[str]]]]
    error: InputError | None = None


@dataclass
class _Readers:
    """A worker's reading context: one ``SnapshotStore`` per snapshot folder, kept across batches."""

    stores: dict[str, Any]


@dataclass(frozen=True)
class _ReadersRecipe:
    key: str = "librarian-readers"

    def load(self) -> _Readers:
        return _Readers({})


def _analyse(readers: _Readers, units: Sequence[Unit]) -> Shard:
    """The task: read and analyse a batch of documents (deterministic input errors are returned,
    not raised, so they are not retried)."""
    out: list[tuple[Doc, list[list[str]]]] = []
    for unit in units:
        try:
            doc = read_unit(unit, readers.stores)
        except InputError as exc:
            return Shard(out, exc)
        if doc is not None:
            out.append((doc, [analyze(p.index_text or p.text) for p in doc.passages]))
    return Shard(out)


def _analysed(units: list[Unit], scheduler: Any) -> Iterator[tuple[Doc, list[list[str]]]]:
    """Every unit's document with its analysed passages, in input order: read here, or in shards
    on a Dask cluster and merged back in order."""
    for _, shard in map_batches(_analyse, _ReadersRecipe(), units, scheduler=scheduler, base=UNITS_PER_BATCH):
        if isinstance(shard, BatchFailed):
            raise shard.error or ClusterError(f"{shard.message}; the index was not written")
        yield from shard.docs
        if shard.error is not None:
            raise shard.error


EMPTY = "EMPTY"  # marker file of a field no document has (a knowledge base of metadata-only entries)


class _EmptyField:
    """What :meth:`LocalIndex.retriever` gives for a field with no rows: no terms, no scores."""

    def __init__(self) -> None:
        self.vocab_dict: dict[str, int] = {}
        self.scores: dict[str, Any] = {"indptr": [0], "num_docs": 0}

    def get_scores(self, _terms: list[str]) -> Any:
        import numpy as np

        return np.zeros(0, dtype=np.float32)


def _bm25_index(per_doc: list[list[str]], where: Path) -> None:
    """A bm25s index over ``per_doc`` with its vocabulary numbered in sorted order, so the same
    documents always give the same bytes (bm25s numbers tokens in set order, which varies)."""
    import bm25s

    if not per_doc:  # bm25s cannot index nothing: a marker, read back as _EmptyField
        where.mkdir(parents=True, exist_ok=True)
        (where / EMPTY).write_text("no document has this field\n")
        return
    docs = [t or ["\u0000"] for t in per_doc]
    vocab = {token: i for i, token in enumerate(sorted({t for toks in docs for t in toks}))}
    retriever = bm25s.BM25(k1=K1, b=B)
    retriever.index(([[vocab[t] for t in toks] for toks in docs], vocab), show_progress=False)
    retriever.save(str(where))


def _sentences(doc: Doc) -> Iterator[str]:
    for p in doc.passages:
        for a, b in p.sentences:
            yield p.text[a:b]


def build_index(sources: Sequence[Path | str], index_dir: Path | str, *,
                progress: Callable[[str], None] | None = None, docs: Iterable[Doc] = (),
                scheduler: Any = None, vocabularies: Sequence[Path | str] = ()) -> BuildStats:
    """Build (or rebuild) the index in ``index_dir`` from ``sources`` (and ready-made ``docs``:
    the live backend indexes the pool of one question this way).

    Abbreviation and drug-name pairs are mined from the indexed sentences and written beside the
    index (``synonyms.tsv``) with the pairs of each pinned ``vocabularies`` file (``name<TAB>synonym``
    a line); their SHA-256s are recorded in the index's ``meta`` table.

    With ``scheduler`` (``"local[:N]"``, a Dask scheduler address or a ``distributed.Client``) the
    documents are read and analysed in shards on Dask workers (which read the sources from the
    same paths) and merged here in input order: the index is the same, byte for byte, as one built
    in one process. Nothing is written until every shard is in."""
    extra = list(docs)
    if not sources and not extra:
        raise ConfigurationError("no SOURCE given; name a JATS folder, a snapshot folder or a JSONL corpus")
    start = time.perf_counter()
    vocab = [(Path(v), *pinned_vocabulary(Path(v))) for v in vocabularies]  # refused before anything is built
    # Snapshot folders first: a paper pinned in a catalogue is indexed from its pinned bytes (the
    # hash and title the literature grounder checks), and a copy in a plain JATS folder is skipped.
    # absolute: the index names where each paper's bytes are (records and answers pin from there)
    ordered = sorted((Path(s).resolve() for s in sources), key=lambda p: not (p / "literature.json").is_file())
    base = os.getcwd() if scheduler is not None else ""  # workers elsewhere read relative paths under it
    units = [unit for path in ordered for unit in source_units(path, base=base)]
    out = Path(index_dir)
    out.mkdir(parents=True, exist_ok=True)
    db_path = out / "index.sqlite"
    tmp = out / "index.sqlite.tmp"
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(tmp)
    con.executescript(_SCHEMA)
    tokens: dict[str, list[list[str]]] = {f: [] for f in (*DOC_FIELDS, "_P")}
    seen: set[str] = set()
    identities: set[str] = set()
    n_bytes = 0
    n_pass = 0
    defined: list[list[str]] = []  # each indexed document's sentences holding a parenthesis

    def all_docs() -> Iterable[tuple[Doc, list[list[str]]]]:
        for doc in extra:
            yield doc, [analyze(p.index_text or p.text) for p in doc.passages]
        yield from _analysed(units, scheduler)

    try:
        for doc, ptoks in all_docs():
            keys = {f"pmid:{doc.pmid}" if doc.pmid else "",
                    f"pmcid:{(doc.pmcid or '').upper()}" if doc.pmcid else "",
                    f"doi:{doc.doi.lower()}" if doc.doi else "", f"id:{doc.doc_id}"} - {""}
            if keys & identities:
                continue
            identities |= keys
            defined.append([s for s in _sentences(doc) if "(" in s])
            seen.add(doc.doc_id)
            idx = len(seen) - 1
            n_bytes += sum(len(p.text) for p in doc.passages) + len(doc.title)
            con.execute("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", (
                idx, doc.doc_id, doc.pmid, doc.pmcid, doc.doi, doc.title, json.dumps(doc.authors),
                doc.journal, doc.year, json.dumps(doc.keywords), doc.sha256, doc.source, doc.kind,
                doc.retrieved_at, int(doc.retracted), int(doc.concern), json.dumps(doc.notices)))
            for ord_, p in enumerate(doc.passages):
                con.execute("INSERT INTO passages VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", (
                    n_pass, idx, ord_, p.pid, p.kind, p.section, " ".join(p.fields), p.text,
                    json.dumps(p.sentences), json.dumps(list(p.breaks)), p.section_type,
                    json.dumps([list(s) for s in p.scripts])))
                tokens["_P"].append(ptoks[ord_])
                n_pass += 1
            for f, toks in _field_tokens(doc, ptoks).items():
                tokens[f].append(toks)
            if progress and len(seen) % 500 == 0:
                progress(f"indexed {len(seen)} documents")
        if not seen:
            raise InputError("the sources held no documents; check the paths", file=", ".join(map(str, sources)))
        synonyms, record = _synonyms(defined, vocab)
        con.execute("INSERT INTO meta VALUES ('schema', ?), ('sources', ?), ('files', ?), ('synonyms', ?)",
                    (str(SCHEMA_VERSION), json.dumps([str(s) for s in ordered]),  # resolved: rebuilt from anywhere
                     json.dumps({SYNONYMS_FILE: record.pop("sha256")}), json.dumps(record)))
        con.commit()
    except BaseException:
        con.close()
        tmp.unlink(missing_ok=True)
        raise
    con.close()
    for f, per_doc in tokens.items():
        _bm25_index(per_doc, out / "bm25" / f)
    from ..io import atomic_write_bytes

    atomic_write_bytes(out / SYNONYMS_FILE, synonyms)
    tmp.replace(db_path)
    return BuildStats(len(seen), n_pass, n_bytes, time.perf_counter() - start, record["pairs"])


def index_sources(index_dir: Path | str) -> list[Path]:
    """The SOURCE paths ``index_dir`` was built from (absolute since they are recorded resolved; an
    index built earlier may hold them as given), for rebuilding it with more; ``[]`` when there is
    no index there yet."""
    db = Path(index_dir) / "index.sqlite"
    if not db.is_file():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = con.execute("SELECT value FROM meta WHERE key='sources'").fetchone()
    finally:
        con.close()
    return [Path(s) for s in json.loads(row[0])] if row else []


def _synonyms(defined: list[list[str]], vocab: list[tuple[Path, list[Pair], str]]) -> tuple[bytes, dict[str, Any]]:
    """The ``synonyms.tsv`` bytes and what ``meta`` records of them (pairs mined, each vocabulary
    file's name, SHA-256 and pairs, the table's SHA-256)."""
    import hashlib

    pairs = dict(mine(defined))
    for _, given, _ in vocab:
        for p in given:
            pairs[p] = pairs.get(p, 0) + 1
    data = Synonyms.of(pairs).text().encode("utf-8")
    record: dict[str, Any] = {
        "pairs": len(pairs), "mined": sum(1 for p in pairs if p.kind != "vocabulary"),
        "vocabularies": [{"file": path.name, "sha256": sha, "pairs": len(given)} for path, given, sha in vocab],
        "sha256": hashlib.sha256(data).hexdigest()}
    return data, record


@dataclass(frozen=True)
class DocInfo:
    idx: int
    doc_id: str
    pmid: str | None
    pmcid: str | None
    doi: str | None
    title: str
    authors: list[str]
    journal: str
    year: int | None
    keywords: list[str]
    sha256: str
    source: str
    kind: str
    retrieved_at: str | None
    retracted: bool = False
    concern: bool = False
    notices: tuple[str, ...] = ()


@dataclass(frozen=True)
class PassageRow:
    pidx: int
    doc: int
    ord: int
    pid: str
    kind: str
    section: str
    fields: tuple[str, ...]
    text: str  # as printed: every quote is a byte-exact slice
    sentences: list[tuple[int, int]]
    breaks: tuple[int, ...] = ()  # offsets no quote crosses (table cells, a caption's label)
    section_type: str = ""
    scripts: tuple[tuple[int, int, str], ...] = ()  # printed super/subscript spans in ``text`` (display only)


ROWS_CACHED = 128  # documents whose decoded passages a LocalIndex keeps (LocalIndex.passages)


class LocalIndex:
    """A read-only view of an index folder; safe to share between threads."""

    def __init__(self, index_dir: Path | str) -> None:
        self.path = Path(index_dir)
        db = self.path / "index.sqlite"
        if not db.is_file():
            raise ConfigurationError(f"{self.path} is not a bioevidence index (no index.sqlite); "
                                     "build one with `bioevidence index build SOURCE... --index DIR`")
        self._db_path = db
        self._local = threading.local()
        self._lock = threading.Lock()
        self._bm25: dict[str, Any] = {}
        self._synonyms: Synonyms | None = None
        self._rows: OrderedDict[int, tuple[PassageRow, ...]] = OrderedDict()  # doc -> its passages (LRU)
        schema = self._con().execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if schema is None or schema[0] != str(SCHEMA_VERSION):
            raise ConfigurationError(f"index {self.path} was built by another version (schema "
                                     f"{schema[0] if schema else '?'}, need {SCHEMA_VERSION}); rebuild it with "
                                     "`bioevidence index build SOURCE... --index DIR`")
        rows = self._con().execute("SELECT * FROM docs ORDER BY idx").fetchall()
        self.docs = [DocInfo(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7], r[8],
                             json.loads(r[9]), r[10], r[11], r[12], r[13], bool(r[14]), bool(r[15]),
                             tuple(json.loads(r[16]))) for r in rows]
        self.by_doc_id = {d.doc_id: d.idx for d in self.docs}
        self.n = len(self.docs)
        pr = self._con().execute("SELECT doc, pidx FROM passages ORDER BY pidx").fetchall()
        self.passage_doc = [r[0] for r in pr]

    def meta(self, key: str) -> Any:
        """A JSON value of the index's ``meta`` table (None when the index has none)."""
        row = self._con().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def synonyms(self) -> Synonyms:
        """The abbreviation and name pairs built with this index (empty for an index built before
        they were), read once; the file must hash to the SHA-256 recorded at build time."""
        with self._lock:
            if self._synonyms is None:
                self._synonyms = self._read_synonyms()
            return self._synonyms

    def _read_synonyms(self) -> Synonyms:
        import hashlib

        from ..errors import IntegrityError
        from ..io import read_limited

        files = self.meta("files") or {}
        expected = files.get(SYNONYMS_FILE) if isinstance(files, dict) else None
        if expected is None:
            return Synonyms()
        path = self.path / SYNONYMS_FILE
        data = read_limited(path) if path.is_file() else b""
        if hashlib.sha256(data).hexdigest() != expected:
            raise IntegrityError(f"{path} does not hash to the SHA-256 the index recorded; rebuild the index with "
                                 "`bioevidence index build SOURCE... --index DIR`", sha256=expected, path=str(path))
        return Synonyms.read(path)

    def _con(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(f"file:{self._db_path}?mode=ro", uri=True, check_same_thread=False)
            self._local.con = con
        return con

    def close(self) -> None:
        """Close this thread's database connection (other threads' close when they end)."""
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    def retriever(self, field: str) -> Any:
        """The bm25s index of ``field`` (loaded on first use, memory-mapped)."""
        with self._lock:
            r = self._bm25.get(field)
            if r is None:
                import bm25s

                where = self.path / "bm25" / field
                if not where.is_dir():
                    raise ConfigurationError(f"field {field} is missing from index {self.path}; rebuild it")
                r = _EmptyField() if (where / EMPTY).is_file() else bm25s.BM25.load(str(where), mmap=False)
                self._bm25[field] = r
            return r

    def scores(self, field: str, terms: Iterable[str]) -> Any:
        """BM25 scores of every doc (or passage, for ``_P``) for analysed ``terms``; unknown terms score 0."""
        import numpy as np

        r = self.retriever(field)
        known = [t for t in terms if t in r.vocab_dict]
        size = len(self.passage_doc) if field == "_P" else self.n
        if not known:
            return np.zeros(size, dtype=np.float32)
        return r.get_scores(known)

    def vocabulary(self, field: str) -> dict[str, int]:
        return dict(self.retriever(field).vocab_dict)

    def passages(self, doc_idx: int) -> list[PassageRow]:
        """The document's passages in reading order. The last ``ROWS_CACHED`` documents read are kept
        decoded: a batch of questions judges the same papers again and again."""
        with self._lock:
            cached = self._rows.get(doc_idx)
            if cached is not None:
                self._rows.move_to_end(doc_idx)
                return list(cached)
        rows = self._con().execute("SELECT * FROM passages WHERE doc=? ORDER BY ord", (doc_idx,)).fetchall()
        decoded = tuple(_prow(r) for r in rows)
        with self._lock:
            self._rows[doc_idx] = decoded
            if len(self._rows) > ROWS_CACHED:
                self._rows.popitem(last=False)
        return list(decoded)

    def passage(self, pidx: int) -> PassageRow:
        r = self._con().execute("SELECT * FROM passages WHERE pidx=?", (pidx,)).fetchone()
        return _prow(r)

    def field_text(self, doc_idx: int, field: str) -> str:
        d = self.docs[doc_idx]
        if field == "TITLE":
            return d.title
        if field == "AUTH":
            return "\n".join(d.authors)
        if field == "JOURNAL":
            return d.journal
        if field == "KW":
            return "\n".join(d.keywords)
        parts = [d.title] if field in ("TITLE_ABS", "_ALL") else []
        if field == "_ALL":
            parts.extend(d.keywords)
        want = {"TITLE_ABS": {"ABSTRACT"}, "_ALL": {"ABSTRACT", "BODY"}}.get(field, {field})
        parts.extend(p.text for p in self.passages(doc_idx) if want & set(p.fields))
        return "\n".join(parts)


def _prow(r: Sequence[Any]) -> PassageRow:
    return PassageRow(r[0], r[1], r[2], r[3], r[4], r[5], tuple(r[6].split()), r[7],
                      [(int(a), int(b)) for a, b in json.loads(r[8])], tuple(json.loads(r[9])), r[10],
                      tuple((int(a), int(b), str(k)) for a, b, k in json.loads(r[11])))


def idf_table(index: LocalIndex, field: str = "_P") -> dict[str, float]:
    """Term -> BM25 idf over ``field`` (corpus-wide statistics), from the bm25s document frequencies."""
    import math

    r = index.retriever(field)
    indptr = r.scores["indptr"]
    n = int(r.scores.get("num_docs", len(index.passage_doc) if field == "_P" else index.n))
    out: dict[str, float] = {}
    for term, tid in r.vocab_dict.items():
        if tid + 1 >= len(indptr):
            continue
        df = int(indptr[tid + 1] - indptr[tid])
        out[term] = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return out
