"""A compact index of one OBO release (``.obo`` or ``.obo.gz``), cached on disk by the release's SHA-256.

Only what the ontology grounder needs is kept: per term its name, obsolete flag, EXACT
synonyms, ``is_a`` parents, ``replaced_by`` and ``consider``; plus a label index (normalised
name or EXACT synonym → terms). The full Cell Ontology (17 MB, ~60,000 stanzas) takes about
two seconds to index and a few tens of milliseconds to load back from the cache.

Why not pronto: pronto 2.7 (fastobo) cannot load the full Cell Ontology 2026-06-08. It rejects
``xref: http://neurolex.org/wiki/Category\\:Embryonic_organism`` (line 201561) as a syntax error
and, with such lines removed, fails in ``symmetrize_lineage`` with ``KeyError: 'BFO:0000015'``
(a parent referenced but not declared). This reader is tolerant of both and reads only the
tags listed above; unknown tags are skipped.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError, InputError
from .cache import cached

INDEX_VERSION = 1
_RELEASE_DATE = re.compile(r"v?\d{4}-\d{2}-\d{2}")
_SYNONYM = re.compile(r'^"((?:[^"\\]|\\.)*)"\s+(EXACT|BROAD|NARROW|RELATED)\b')
_PUNCT = re.compile(r"[^0-9a-z]+")


def label_key(label: str) -> str:
    """How labels are compared: case-folded, punctuation as spaces, a plain plural ``s`` dropped.

    The plural rule applies to the last word only, when it is longer than three letters and
    does not end in ``ss`` (``T cells`` → ``t cell``; ``class`` stays ``class``).
    """
    from ...text.normalize import normalize

    text = _PUNCT.sub(" ", normalize(label).casefold()).strip()
    if len(text) > 3 and text.endswith("s") and not text.endswith("ss"):
        last = text.rsplit(" ", 1)[-1]
        if len(last) > 3:
            text = text[:-1]
    return text


#: :func:`label_key` memoised for the labels records cite (a pure function of the label; a knowledge
#: base names the same few thousand cell types again and again); the index is built with the plain one
cited_key = functools.lru_cache(maxsize=8192)(label_key)


def _unescape(value: str) -> str:
    return value.replace('\\"', '"').replace("\\\\", "\\")


def _strip_comment(value: str) -> str:
    """Drop a trailing ``! comment`` and ``{qualifiers}`` from a tag value."""
    value = value.split(" ! ", 1)[0]
    if value.endswith("}") and " {" in value:
        value = value[: value.rindex(" {")]
    return value.strip()


def build_index(data: bytes) -> dict[str, Any]:
    """Index OBO bytes into plain values (see module docstring)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"OBO file is not UTF-8 (byte {exc.start}); re-download the release") from exc
    header: dict[str, str] = {}
    terms: dict[str, tuple[Any, ...]] = {}
    in_header = True
    stanza: str | None = None
    current: dict[str, Any] = {}

    def flush() -> None:
        if stanza == "Term" and current.get("id"):
            terms[current["id"]] = (
                current.get("name", ""), bool(current.get("obsolete")), tuple(current.get("exact", ())),
                tuple(current.get("is_a", ())), tuple(current.get("replaced_by", ())),
                tuple(current.get("consider", ())),
            )

    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("!"):
            continue
        if line.startswith("["):
            flush()
            in_header = False
            stanza = line[1:-1]
            current = {}
            continue
        tag, sep, value = line.partition(":")
        if not sep:
            continue
        value = value.strip()
        if in_header:
            header.setdefault(tag, value)
            continue
        if stanza != "Term":
            continue
        if tag == "id":
            current["id"] = value
        elif tag == "name":
            current["name"] = value
        elif tag == "is_obsolete":
            current["obsolete"] = value.lower() == "true"
        elif tag == "synonym":
            match = _SYNONYM.match(value)
            if match and match.group(2) == "EXACT":
                current.setdefault("exact", []).append(_unescape(match.group(1)))
        elif tag in ("is_a", "replaced_by", "consider"):
            current.setdefault(tag, []).append(_strip_comment(value))
    flush()
    labels: dict[str, list[str]] = {}
    for term_id, (name, obsolete, exact, *_rest) in terms.items():
        if obsolete:
            continue
        for label in (name, *exact):
            if label:
                owners = labels.setdefault(label_key(label), [])
                if term_id not in owners:
                    owners.append(term_id)
    version = header.get("data-version", "")
    return {"header": header, "version": version, "terms": terms,
            "labels": {k: tuple(v) for k, v in labels.items()}}


@dataclass(frozen=True, slots=True)
class Term:
    id: str
    name: str
    obsolete: bool
    exact_synonyms: tuple[str, ...]
    parents: tuple[str, ...]
    replaced_by: tuple[str, ...]
    consider: tuple[str, ...]


@dataclass
class Ontology:
    """One loaded OBO release: terms by id, label index, ancestors on demand."""

    prefix: str
    version: str
    sha256: str
    terms: dict[str, tuple[Any, ...]]
    labels: dict[str, tuple[str, ...]]
    _ancestors: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)

    @property
    def release(self) -> str:
        """``CL@2026-06-08``: the prefix and the release date. The OBO Foundry writes ``data-version:
        releases/2026-06-08`` or, for a variant or subset, ``cl/releases/2022-12-15/cl-basic.owl``: the date
        is the path part that is one (``v`` allowed); a data-version without a date gives its last part,
        and a file without one is named by its SHA-256."""
        dated = [part for part in self.version.split("/") if _RELEASE_DATE.fullmatch(part)]
        return f"{self.prefix}@{dated[-1] if dated else self.version.rsplit('/', 1)[-1] or self.sha256[:12]}"

    def term(self, term_id: str) -> Term | None:
        raw = self.terms.get(term_id)
        return None if raw is None else Term(term_id, *raw)

    def owners(self, label: str) -> tuple[str, ...]:
        """Non-obsolete terms whose name or EXACT synonym is ``label`` (see :func:`label_key`)."""
        return self.labels.get(cited_key(label), ())

    def ancestors(self, term_id: str) -> frozenset[str]:
        """``term_id`` and every term above it through ``is_a``."""
        done = self._ancestors.get(term_id)
        if done is not None:
            return done
        seen = {term_id}
        stack = [term_id]
        while stack:
            raw = self.terms.get(stack.pop())
            if raw is None:
                continue
            for parent in raw[3]:
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        result = frozenset(seen)
        self._ancestors[term_id] = result
        return result

    def close_labels(self, label: str, n: int = 3) -> list[tuple[str, str]]:
        """Up to ``n`` (id, name) pairs whose labels are closest to ``label``."""
        import difflib

        key = label_key(label)
        hits = difflib.get_close_matches(key, list(self.labels), n=n, cutoff=0.6)
        out: list[tuple[str, str]] = []
        for hit in hits:
            for term_id in self.labels[hit]:
                if all(term_id != t for t, _ in out):
                    out.append((term_id, self.terms[term_id][0]))
        return out[:n]


def load_ontology(path: Path | str, *, cache_root: Path | None = None, max_inflated: int | None = None) -> Ontology:
    """Load an OBO release (``.obo`` or ``.obo.gz``) through the on-disk index cache.

    The cache is keyed by the SHA-256 of the file as stored (every byte is hashed, so a changed
    file never reuses an index); a ``.gz`` file is decompressed (as a stream, at most
    ``max_inflated`` bytes, see :mod:`bioevidence.limits`) only to build the index.
    """
    import zlib

    from ...io import gunzip_limited
    from ...limits import size_limit

    path = Path(path)
    try:
        stored = path.read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"cannot read ontology {path}: {exc.strerror}; check --ontology",
                                 path=str(path)) from exc

    def build() -> dict[str, Any]:
        raw = stored
        if path.suffix == ".gz" or raw[:2] == b"\x1f\x8b":
            try:
                raw = gunzip_limited(raw, size_limit("max_inflated", max_inflated), name=str(path))
            except (OSError, EOFError, zlib.error) as exc:
                raise ConfigurationError(f"ontology {path} is not valid gzip; re-download it",
                                         path=str(path)) from exc
        try:
            index = build_index(raw)
        except InputError as exc:
            raise ConfigurationError(f"ontology {path}: {exc.message}; check --ontology", path=str(path)) from exc
        index["sha256"] = hashlib.sha256(raw).hexdigest()
        return index

    index = cached("obo-file", hashlib.sha256(stored).hexdigest(), INDEX_VERSION, build, cache_root)
    header = index["header"]
    # `ontology: cl` or, for a variant or subset, `ontology: cl/cl-basic`: the id space is its first part
    prefix = (header.get("ontology") or "").split("/", 1)[0].upper() or _majority_prefix(index["terms"])
    if not index["terms"]:
        raise ConfigurationError(f"{path} holds no [Term] stanzas; is it an OBO file?", path=str(path))
    return Ontology(prefix, index["version"], index["sha256"], index["terms"], index["labels"])


def _majority_prefix(terms: dict[str, Any]) -> str:
    counts: dict[str, int] = {}
    for term_id in terms:
        pre = term_id.split(":", 1)[0]
        counts[pre] = counts.get(pre, 0) + 1
    return max(counts, key=lambda k: counts[k]) if counts else ""
