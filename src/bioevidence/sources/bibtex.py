"""Bibliographies in: BibTeX files (bibtexparser) and plain lists of identifiers; BibTeX out.

:func:`read_bibliography` gives :class:`BibEntry` values for a ``.bib`` file or a text file of
identifiers (one PMID, PMCID or DOI a line, ``#`` comments). Each entry carries its
identifiers (``doi``, ``pmid``, ``pmcid`` fields, an ``eprint`` of type pubmed, a doi.org
``url``, or a bare identifier line), title, authors, year, journal, abstract and the local
files it names (``file`` in Zotero ``desc:path:mime``, JabRef/Mendeley ``:path:PDF`` or plain
``a.pdf;b.xml`` form, relative paths against the ``.bib``'s folder). A block bibtexparser cannot
parse is reported in ``Bibliography.failed`` (line and reason), never silently dropped.

:func:`to_bibtex` writes entries as valid BibTeX (special characters braced, keys unique), which
:func:`read_bibliography` reads back.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigurationError, InputError
from .identifiers import PublicationId, parse_identifier

__all__ = ["BibEntry", "Bibliography", "read_bibliography", "to_bibtex"]


@dataclass(frozen=True)
class BibEntry:
    key: str
    entry_type: str = "article"
    title: str = ""
    authors: tuple[str, ...] = ()
    year: int | None = None
    journal: str = ""
    abstract: str = ""
    ids: tuple[PublicationId, ...] = ()
    files: tuple[str, ...] = ()
    files_root: str = ""  # the folder every file of ``files`` must lie in (symlinks followed): the .bib's
    url: str = ""
    line: int = 0
    extra: dict[str, str] = field(default_factory=dict)

    def identifier(self, scheme: str) -> PublicationId | None:
        return next((i for i in self.ids if i.scheme == scheme), None)


@dataclass
class Bibliography:
    source: str
    entries: list[BibEntry]
    failed: list[tuple[int, str]] = field(default_factory=list)  # (line, reason)


_FILE_SPLIT = re.compile(r"(?<!\\);")


def parse_file_field(value: str, base: Path) -> list[str]:
    """Paths named by a ``file`` field: Zotero ``desc:path:mime``, JabRef ``:path:PDF``, plain paths."""
    out: list[str] = []
    for part in _FILE_SPLIT.split(value):
        part = part.strip().replace("\\;", ";").replace("\\:", ":")
        if not part:
            continue
        pieces = part.split(":")
        # desc:path:mime (a Windows drive letter kept), else a plain path
        path = ":".join(pieces[1:-1]) if len(pieces) >= 3 and not re.match(r"^[A-Za-z]$", pieces[0] or "-") else part
        if path:
            p = Path(path).expanduser()
            out.append(str(p if p.is_absolute() else base / p))
    return out


def _clean(value: str) -> str:
    return " ".join(value.replace("{", "").replace("}", "").split())


def _year(value: str) -> int | None:
    m = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", value)
    return int(m.group(1)) if m else None


def _ids(fields: dict[str, str]) -> tuple[PublicationId, ...]:
    found: list[PublicationId] = []
    candidates = [fields.get("doi", ""), f"pmid:{fields['pmid']}" if fields.get("pmid") else "",
                  fields.get("pmcid", ""), fields.get("url", "")]
    if fields.get("eprinttype", "").lower() == "pubmed" and fields.get("eprint"):
        candidates.append(f"pmid:{fields['eprint']}")
    if fields.get("archiveprefix", "").lower() == "pubmed" and fields.get("eprint"):
        candidates.append(f"pmid:{fields['eprint']}")
    for raw in candidates:
        parsed = parse_identifier(raw.strip()) if raw and raw.strip() else None
        if parsed is not None and parsed not in found:
            found.append(parsed)
    order = ("doi", "pmid", "pmcid")
    return tuple(sorted(found, key=lambda i: order.index(i.scheme)))


def _read_bib(text: str, path: Path, files_root: Path) -> Bibliography:
    import bibtexparser
    import bibtexparser.middlewares as mw

    library = bibtexparser.parse_string(text, append_middleware=[mw.LatexDecodingMiddleware()])
    entries: list[BibEntry] = []
    seen: set[str] = set()
    for e in library.entries:
        fields = {k.lower(): _clean(str(f.value)) for k, f in e.fields_dict.items()}
        key = e.key
        if key in seen:
            raise InputError(f"entry key {key!r} is used twice; give each entry its own key", file=str(path),
                             line=(e.start_line or 0) + 1)
        seen.add(key)
        authors = tuple(a.strip() for a in re.split(r"\s+and\s+", fields.get("author", "")) if a.strip())
        files = tuple(parse_file_field(str(e.fields_dict["file"].value), path.parent)) if "file" in fields else ()
        entries.append(BibEntry(
            key=key, entry_type=e.entry_type.lower(), title=fields.get("title", ""), authors=authors,
            year=_year(fields.get("year", "") or fields.get("date", "")),
            journal=fields.get("journal", "") or fields.get("journaltitle", "") or fields.get("booktitle", ""),
            abstract=fields.get("abstract", ""), ids=_ids(fields), files=files, files_root=str(files_root),
            url=fields.get("url", ""),
            line=(e.start_line or 0) + 1,
            extra={k: v for k, v in fields.items() if k in ("volume", "pages", "number", "publisher", "note")}))
    failed = [((b.start_line or 0) + 1, " ".join(str(b.error).split())[:200]) for b in library.failed_blocks]
    return Bibliography(str(path), entries, failed)


def _read_list(text: str, path: Path) -> Bibliography:
    entries: list[BibEntry] = []
    failed: list[tuple[int, str]] = []
    seen: set[PublicationId] = set()
    for lineno, line in enumerate(text.splitlines(), 1):
        raw = line.split("#", 1)[0].strip()
        if not raw:
            continue
        parsed = parse_identifier(raw) or (parse_identifier(f"pmid:{raw}") if raw.isdigit() else None)
        if parsed is None:
            failed.append((lineno, f"{raw[:60]!r} is not a PMID, PMCID or DOI"))
            continue
        if parsed in seen:
            continue
        seen.add(parsed)
        entries.append(BibEntry(key=parsed.key, ids=(parsed,), line=lineno))
    return Bibliography(str(path), entries, failed)


def read_bibliography(path: Path | str, *, files_root: Path | str | None = None) -> Bibliography:
    """Entries of a ``.bib`` file, or of a file of identifiers (any other name), in file order.

    The files an entry names are read only inside ``files_root`` (default: the ``.bib``'s own
    folder; symlinks followed), whatever the ``file`` field says (``../``, absolute, Zotero's
    ``desc:path:mime``): a bibliography from elsewhere cannot make a knowledge base pin
    ``~/.ssh/id_rsa``. A Zotero storage folder is given explicitly (``kb build --files-root``)."""
    from ..io import decode_utf8, read_limited

    path = Path(path)
    if not path.is_file():
        raise ConfigurationError(f"{path} is not a file; give a .bib file or a text file of PMIDs/DOIs")
    root = Path(files_root) if files_root is not None else path.parent
    if not root.is_dir():
        raise ConfigurationError(f"--files-root {root} is not a folder")
    text = decode_utf8(read_limited(path), file=str(path))
    is_bib = path.suffix.lower() in (".bib", ".bibtex") or re.search(r"^\s*@\w+\s*[{(]", text, re.M) is not None
    bib = _read_bib(text, path, root.resolve()) if is_bib else _read_list(text, path)
    if not bib.entries and not bib.failed:
        raise InputError("the bibliography holds no entries", file=str(path))
    return bib


_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "~": r"\textasciitilde{}",
            "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def _escape(value: str) -> str:
    """A field value safe inside ``{…}``: LaTeX specials escaped, braces dropped (a ``}`` from a
    service's answer would close the field and plant another, e.g. ``file = {/etc/passwd}``)."""
    out = "".join(_SPECIAL.get(ch, ch) for ch in value.replace("{", "").replace("}", ""))
    return " ".join(out.split())


_URL_SAFE = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")


def _escape_url(value: str) -> str:
    """A URL for a ``url = {…}`` field: every character outside RFC 3986's set (braces, backslash,
    spaces, controls, non-ASCII) percent-encoded, so the field cannot end early."""
    return "".join(ch if _URL_SAFE.fullmatch(ch) else "".join(f"%{b:02X}" for b in ch.encode("utf-8"))
                   for ch in value.strip())


def _key_for(entry: BibEntry, used: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_:\-]", "", entry.key) or "entry"
    key, n = base, 1
    while key in used:
        n += 1
        key = f"{base}_{n}"
    used.add(key)
    return key


def to_bibtex(entries: Iterable[BibEntry]) -> str:
    """Entries as BibTeX text (``@article{key, field = {value}, ...}``), keys made unique."""
    used: set[str] = set()
    blocks: list[str] = []
    for e in entries:
        fields: list[tuple[str, str]] = [("title", e.title)]
        if e.authors:
            fields.append(("author", " and ".join(e.authors)))
        if e.year:
            fields.append(("year", str(e.year)))
        if e.journal:
            fields.append(("booktitle" if e.entry_type == "inproceedings" else "journal", e.journal))
        for ident in e.ids:
            fields.append((ident.scheme, ident.value))
        if e.url:
            fields.append(("url", e.url))
        if e.abstract:
            fields.append(("abstract", e.abstract))
        fields.extend(sorted(e.extra.items()))
        body = ",\n".join(f"  {k} = {{{_escape(v) if k != 'url' else _escape_url(v)}}}" for k, v in fields if v)
        entry_type = re.sub(r"[^a-z]", "", e.entry_type.lower()) or "misc"
        blocks.append(f"@{entry_type}{{{_key_for(e, used)},\n{body}\n}}\n")
    return "\n".join(blocks)


# Letters NFKD does not take apart into an ASCII letter and a mark.
_TRANSLITERATE = str.maketrans({"ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ø": "o",
                                "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th",
                                "Þ": "Th", "ı": "i", "ħ": "h", "Ħ": "H"})


def ascii_letters(text: str) -> str:
    """``text`` with accented Latin letters written in ASCII (Müller -> Muller, Ørsted -> Orsted,
    Groß -> Gross); other characters are left as they are."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_TRANSLITERATE))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def cite_key(authors: Sequence[str], year: int | None, fallback: str) -> str:
    """``Surname2020`` from the first author, else ``fallback`` made key-safe."""
    if authors:
        first = authors[0]
        tokens = first.split()
        if "," in first:
            surname = first.split(",")[0]
        elif len(tokens) > 1 and tokens[-1].isupper() and len(tokens[-1]) <= 3:  # PubMed "Pao W"
            surname = tokens[0]
        else:
            surname = tokens[-1] if tokens else ""
        surname = re.sub(r"[^A-Za-z]", "", ascii_letters(surname))
        if surname:
            return f"{surname}{year or ''}"
    return re.sub(r"[^A-Za-z0-9]", "_", fallback)


def snapshot_entries(folder: Path | str, *, full_text_only: bool = False) -> list[BibEntry]:
    """The works of a snapshot folder as bibliography entries (title, authors, year, journal from
    the pinned metadata; every identifier), e.g. to build a knowledge base of them."""
    from .catalogue import Catalogue
    from .metadata import parse_metadata
    from .store import SnapshotStore

    store, catalogue = SnapshotStore(folder), Catalogue.load(folder)
    out: list[BibEntry] = []
    used: set[str] = set()
    for work in catalogue:
        if full_text_only and not work.fulltext_sha256:
            continue
        meta = parse_metadata(store.read(work.metadata_sha256), want=work.key)
        ids = list(work.ids)
        for ident in meta.ids:
            if ident not in ids:
                ids.append(ident)
        key = cite_key(meta.authors, meta.year, work.key)
        base, n = key, 1
        while key in used:
            n += 1
            key = f"{base}{chr(96 + n)}" if n <= 26 else f"{base}_{n}"
        used.add(key)
        out.append(BibEntry(key=key, title=meta.title, authors=tuple(meta.authors), year=meta.year,
                            journal=meta.journal, ids=tuple(ids)))
    return out
