"""Search backends behind one interface; the local one executes the query AST over a :class:`LocalIndex`.

Semantics (as Europe PMC): a term matches when every analysed token of it occurs in the field;
AND intersects, OR unites, NOT excludes; a phrase also needs its words contiguous in the field
text. Scores are BM25 per field, summed over the matching clauses (Lucene style). An unfielded
term searches ``_ALL`` (title, abstract, keywords, body) plus a title boost.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import InputError
from .analysis import analyze, raw_tokens, stem
from .fields import LOCAL_FIELDS, get_field
from .index import DocInfo, LocalIndex
from .query import And, Node, Not, Or, Range, Term, parse, validate

__all__ = ["Backend", "Hit", "LocalBackend", "Scoring"]


@dataclass(frozen=True)
class Scoring:
    """Ranking knobs for unfielded terms (tuned on SciFact *train* only; see docs/librarian.md)."""

    title_boost: float = 0.0
    max_wildcard_terms: int = 200


@dataclass
class Hit:
    doc: DocInfo
    score: float
    query: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Backend(Protocol):
    def search(self, query: str, *, limit: int = 50) -> list[Hit]: ...


_TEXT_FIELDS = {"TITLE", "ABSTRACT", "TITLE_ABS", "BODY", "INTRO", "METHODS", "RESULTS", "DISCUSS", "CONCL",
                "FIG", "TABLE", "AUTH", "JOURNAL", "KW"}


class LocalBackend:
    """Run Europe PMC queries against a local index."""

    def __init__(self, index: LocalIndex | str, *, scoring: Scoring | None = None) -> None:
        self.index = index if isinstance(index, LocalIndex) else LocalIndex(index)
        self.scoring = scoring or Scoring()

    def search(self, query: str, *, limit: int = 50) -> list[Hit]:
        """Validate, parse and execute ``query``; an invalid query is an ``InputError`` with the reasons."""
        import numpy as np

        result = validate(query)
        if not result.valid or result.ast is None:
            raise InputError(f"invalid query {query!r}: " + "; ".join(result.errors), query=query)
        mask, scores = self.execute(result.ast)
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return []
        order = idx[np.lexsort((idx, -scores[idx]))][:limit]
        return [Hit(self.index.docs[int(i)], float(scores[i]), query) for i in order]

    # ------------------------------------------------------------ execution
    def execute(self, node: Node) -> tuple[Any, Any]:
        """(boolean mask, float scores) over all docs for ``node``."""
        import numpy as np

        n = self.index.n
        if isinstance(node, Term):
            return self._term(node)
        if isinstance(node, Range):
            return self._range(node)
        if isinstance(node, Not):
            m, _ = self.execute(node.child)
            return ~m, np.zeros(n, dtype=np.float32)
        parts = [self.execute(c) for c in node.children]
        scores = np.sum([s for _, s in parts], axis=0).astype(np.float32)
        if isinstance(node, And):
            mask = np.logical_and.reduce([m for m, _ in parts])
        else:
            assert isinstance(node, Or)
            mask = np.logical_or.reduce([m for m, _ in parts])
        return mask, np.where(mask, scores, 0).astype(np.float32)

    def _term(self, t: Term) -> tuple[Any, Any]:
        import numpy as np

        n = self.index.n
        name = (t.field or "_ALL").upper()
        f = get_field(name) if t.field else None
        if t.field and (f is None or not f.local):
            raise InputError(f"field {name} is not available in the local index; use one of: "
                             + ", ".join(sorted(LOCAL_FIELDS)), query=t.text)
        if name in _TEXT_FIELDS or name in ("_ALL", "KEYWORD"):
            name = "KW" if name == "KEYWORD" else name
            return self._text(name, t)
        value = t.text.strip()
        docs = self.index.docs
        if name in ("DOI", "PMCID", "EXT_ID"):
            v = value.lower()
            if name == "DOI":
                hit = [d.doi is not None and d.doi.lower() == v for d in docs]
            elif name == "PMCID":
                hit = [d.pmcid is not None and d.pmcid.lower() == v for d in docs]
            else:
                hit = [v in (d.pmid or "", d.doc_id.lower(), d.doc_id.split(":")[-1].lower()) for d in docs]
        elif name == "PUB_YEAR":
            hit = [d.year is not None and str(d.year) == value for d in docs]
        elif name == "SRC":
            v = value.upper()
            hit = [(v == "MED" and bool(d.pmid)) or (v == "PMC" and bool(d.pmcid)) for d in docs]
        else:  # flags
            yes = value.upper() == "Y"
            have = {
                "HAS_FT": lambda d: d.kind == "fulltext", "OPEN_ACCESS": lambda d: d.kind == "fulltext",
                "IN_PMC": lambda d: bool(d.pmcid), "HAS_DOI": lambda d: bool(d.doi),
                "HAS_ABSTRACT": lambda d: True,
            }[name]
            hit = [have(d) == yes for d in docs]
        mask = np.array(hit, dtype=bool) if n else np.zeros(0, dtype=bool)
        return mask, np.zeros(n, dtype=np.float32)

    def _expand(self, field_name: str, pattern: str) -> list[str]:
        vocab = self.index.vocabulary(field_name)
        rx = re.compile("^" + re.escape(pattern.lower()).replace(r"\*", ".*").replace(r"\?", ".") + "$")
        prefix = re.split(r"[*?]", pattern.lower())[0]
        stem_prefix = stem(prefix) if prefix else ""
        out = [w for w in vocab if rx.match(w) or (prefix and w.startswith(stem_prefix) and "*" in pattern)]
        return sorted(out)[: self.scoring.max_wildcard_terms]

    def _text(self, field_name: str, t: Term) -> tuple[Any, Any]:
        import numpy as np

        n = self.index.n
        if t.wildcard and not t.phrase:
            words = [w for w in re.split(r"[^0-9A-Za-z*?]+", t.text) if w]
            mask = np.ones(n, dtype=bool)
            scores = np.zeros(n, dtype=np.float32)
            for w in words:
                if "*" in w or "?" in w:
                    expansions = self._expand(field_name, w)
                    s = (self.index.scores(field_name, expansions) if expansions
                         else np.zeros(n, dtype=np.float32))
                else:
                    s = self._field_scores(field_name, analyze(w, keep_stopwords=True))
                mask &= s > 0
                scores += s
            return mask, np.where(mask, scores, 0).astype(np.float32)
        toks = analyze(t.text)
        if not toks:
            toks = analyze(t.text, keep_stopwords=True)
        if not toks:
            return np.zeros(n, dtype=bool), np.zeros(n, dtype=np.float32)
        mask = np.ones(n, dtype=bool)
        scores = np.zeros(n, dtype=np.float32)
        for tok in dict.fromkeys(toks):
            s = self._field_scores(field_name, [tok])
            mask &= s > 0
            scores += s
        if field_name == "_ALL" and self.scoring.title_boost:
            scores += self.scoring.title_boost * self.index.scores("TITLE", list(dict.fromkeys(toks)))
        if t.phrase and len(raw_tokens(t.text)) > 1:
            mask = self._phrase_filter(field_name, t.text, mask)
        return mask, np.where(mask, scores, 0).astype(np.float32)

    def _field_scores(self, field_name: str, toks: Sequence[str]) -> Any:
        return self.index.scores(field_name, toks)

    def _phrase_filter(self, field_name: str, phrase: str, mask: Any) -> Any:
        import numpy as np

        needle = " ".join(raw_tokens(phrase))
        out = np.zeros_like(mask)
        for i in np.flatnonzero(mask):
            hay = " ".join(raw_tokens(self.index.field_text(int(i), field_name)))
            out[i] = f" {needle} " in f" {hay} "
        return out

    def _range(self, r: Range) -> tuple[Any, Any]:
        import numpy as np

        if r.field.upper() != "PUB_YEAR":
            raise InputError(f"range on {r.field} is not available in the local index; use PUB_YEAR")
        lo = -(10**9) if r.lo == "*" else int(r.lo)
        hi = 10**9 if r.hi == "*" else int(r.hi)
        mask = np.array([d.year is not None and lo <= d.year <= hi for d in self.index.docs], dtype=bool)
        return mask, np.zeros(self.index.n, dtype=np.float32)


def search_local(index_dir: str, query: str, *, limit: int = 20) -> list[dict[str, Any]]:
    """One fielded query as JSON-ready dicts (what ``bioevidence search --json`` prints)."""
    backend = LocalBackend(index_dir)
    return [
        {"rank": i, "doc_id": h.doc.doc_id, "score": round(h.score, 4), "title": h.doc.title,
         "pmid": h.doc.pmid, "pmcid": h.doc.pmcid, "doi": h.doc.doi, "year": h.doc.year,
         "journal": h.doc.journal}
        for i, h in enumerate(backend.search(query, limit=limit), 1)
    ]


_ = parse  # re-exported for callers that hold an AST
