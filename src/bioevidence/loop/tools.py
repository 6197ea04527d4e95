"""Tools the agent harness runs for a model: search the literature, read a pinned paper.

Both are read-only and bounded, and both read only pinned bytes:

* ``search`` — a plain-language query. With a local index (``bioevidence index build``) the
  librarian answers (ranked verbatim sentences with paragraph ids); without one, the titles
  and abstracts of the pinned corpus (a snapshot folder and its catalogue) are ranked by BM25.
* ``read`` — one pinned paper by identifier (``pmid:…``, ``pmcid:…``, ``doi:…``): its
  passages with their paragraph ids (``#p12``), best first for an optional ``focus``, cut to
  a character budget.

A result is data. The harness wraps it in a JSON string under a header saying so, and nothing
in it is ever executed or followed: instructions inside a paper change nothing the pipeline
does (whatever the model makes of them, its draft still goes through the gate).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BioevidenceError, ConfigurationError

__all__ = ["ToolResult", "Toolbox", "tool_schemas"]

_WORD = re.compile(r"[0-9a-z]+")


def _focus_words(text: str) -> list[str]:
    """Words for picking the passages of a paper a ``read`` shows first (exact words, not stems: a
    focus names the words the model is looking for)."""
    from ..librarian.analysis import STOPWORDS

    return [w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS]


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + " …"


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned (``content``) or why it could not (``error``), and how long it took."""

    name: str
    args: Mapping[str, Any]
    content: Any = None
    error: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.name, "args": dict(self.args), "ok": self.ok, "content": self.content,
                "error": self.error, "seconds": round(self.seconds, 3)}


def tool_schemas() -> dict[str, dict[str, Any]]:
    """Argument schemas of the tools, keyed by tool name (closed objects)."""
    text = {"type": "string", "minLength": 1, "maxLength": 300}
    return {
        "search": {"type": "object", "additionalProperties": False, "required": ["query"],
                   "properties": {"query": {**text, "description": "Plain-language search of the pinned papers."}}},
        "read": {"type": "object", "additionalProperties": False, "required": ["paper"],
                 "properties": {"paper": {**text, "description": "pmid:…, pmcid:… or doi:… of a pinned paper."},
                                "focus": {**text, "description": "Words to rank the paper's paragraphs by."}}},
    }


TOOL_HELP = {
    "search": "search {\"query\": TEXT}: find pinned papers and sentences about TEXT (ids, titles, snippets).",
    "read": "read {\"paper\": \"pmid:N\", \"focus\": TEXT}: paragraphs of one pinned paper with their ids "
            "(#p…), best matches for focus first. Quote them verbatim in evidence.text and end the "
            "locator with #<paragraph id>.",
}


@dataclass
class Toolbox:
    """The tools over one pinned corpus (``snapshot_dir``) and optionally a local index."""

    snapshot_dir: Path | None = None
    index: Path | None = None
    max_hits: int = 5
    max_chars: int = 2400
    snippet_chars: int = 320
    _grounder: Any = field(default=None, repr=False)
    _librarian: Any = field(default=None, repr=False)
    _bm25: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.snapshot_dir is None and self.index is None:
            raise ConfigurationError("the agent's tools need a corpus: pass --snapshot-dir DIR and/or --index DIR")
        if self.snapshot_dir is not None and not (Path(self.snapshot_dir) / "literature.json").is_file():
            raise ConfigurationError(f"{self.snapshot_dir} has no literature.json catalogue; pass the snapshot "
                                     "folder written by `bioevidence ground` or `bioevidence sources pull`")

    @property
    def names(self) -> tuple[str, ...]:
        return ("search", "read") if self.snapshot_dir is not None else ("search",)

    def call(self, name: str, args: Mapping[str, Any]) -> ToolResult:
        """Run one tool; a bad call or a corpus problem is an error result, never an exception."""
        start = time.perf_counter()
        try:
            if name == "search":
                content: Any = self.search(str(args.get("query") or ""))
            elif name == "read" and "read" in self.names:
                content = self.read(str(args.get("paper") or ""), str(args.get("focus") or ""))
            else:
                raise ConfigurationError(f"there is no tool {name!r}; use one of: {', '.join(self.names)}")
        except BioevidenceError as exc:
            return ToolResult(name, dict(args), error=exc.message, seconds=time.perf_counter() - start)
        return ToolResult(name, dict(args), content=content, seconds=time.perf_counter() - start)

    # -- search ----------------------------------------------------------------------------------
    def search(self, query: str) -> list[dict[str, Any]]:
        if not query.strip():
            raise ConfigurationError("search needs a non-empty query")
        if self.index is not None:
            return self._search_index(Path(self.index), query)
        return self._search_corpus(query)

    def _search_index(self, index: Path, query: str) -> list[dict[str, Any]]:
        if self._librarian is None:
            from ..librarian.librarian import Librarian

            self._librarian = Librarian(index)
        answer = self._librarian.ask(query, top_k=self.max_hits)
        return [{"paper": item["locator"].rsplit("#", 1)[0], "title": _clip(item.get("title") or "", 160),
                 "paragraph": item.get("paragraph_id"), "text": _clip(item["text"], self.snippet_chars)}
                for item in answer.items()[: self.max_hits]]

    def _grounder_for(self) -> Any:
        if self._grounder is None:
            from ..gate.grounders.literature import LiteratureGrounder

            self._grounder = LiteratureGrounder.from_directory(self.snapshot_dir)  # type: ignore[arg-type]
        return self._grounder

    def _search_corpus(self, query: str) -> list[dict[str, Any]]:
        grounder = self._grounder_for()
        if self._bm25 is None:
            import bm25s

            from ..librarian.analysis import analyze
            from ..librarian.index import K1, B

            docs: list[tuple[str, str, str]] = []
            for work in grounder.catalogue:
                try:
                    meta = grounder.metadata(work)
                except BioevidenceError:
                    continue
                if not meta.found:
                    continue
                docs.append((str(work.id), meta.title or "", meta.abstract or ""))
            if not docs:
                raise ConfigurationError(f"the pinned corpus in {self.snapshot_dir} has no readable papers")
            # The librarian's engine and analyser (bm25s, Snowball stems), the title counted twice.
            tokens = [analyze(f"{t} {t} {a}") or ["\u0000"] for _, t, a in docs]
            vocab = {token: i for i, token in enumerate(sorted({w for toks in tokens for w in toks}))}
            retriever = bm25s.BM25(k1=K1, b=B)
            retriever.index(([[vocab[w] for w in toks] for toks in tokens], vocab), show_progress=False)
            self._bm25 = (retriever, docs)
        from ..librarian.analysis import analyze

        bm25, docs = self._bm25
        terms = [t for t in analyze(query) if t in bm25.vocab_dict]
        if not terms:
            return []
        scores = bm25.get_scores(terms)
        ranked = sorted(range(len(docs)), key=lambda i: (-float(scores[i]), i))[: self.max_hits]
        return [{"paper": docs[i][0], "title": _clip(docs[i][1], 160), "text": _clip(docs[i][2], self.snippet_chars)}
                for i in ranked if scores[i] > 0]

    # -- read ------------------------------------------------------------------------------------
    def read(self, paper: str, focus: str = "") -> dict[str, Any]:
        from ..sources.identifiers import parse_identifier

        grounder = self._grounder_for()
        ident = parse_identifier(paper.strip())
        if ident is None:
            raise ConfigurationError(f"{paper!r} is not a paper id; write pmid:N, pmcid:PMCN or doi:10.…")
        work = grounder.catalogue.get(ident)
        if work is None:
            raise ConfigurationError(f"{ident} is not in the pinned corpus; cite only papers that search returns")
        meta = grounder.metadata(work)
        if not meta.found:
            raise ConfigurationError(f"{ident} does not exist according to its pinned metadata; do not cite it")
        text = grounder.paper(work, meta)
        if text is None:
            return {"paper": str(work.id), "title": meta.title, "retracted": bool(meta.retracted),
                    "passages": [], "note": "no open full text or abstract is pinned for this paper"}
        passages = [p for p in text.passages if not p.back_matter and p.kind not in ("title", "section-title")]
        wanted = set(_focus_words(focus))
        if wanted:
            def score(p: Any) -> float:
                words = _focus_words(p.text)
                return sum(1 for w in words if w in wanted) / (len(words) ** 0.5 or 1.0)

            order = sorted(range(len(passages)), key=lambda i: (-score(passages[i]), i))
        else:
            order = sorted(range(len(passages)), key=lambda i: (passages[i].kind != "abstract", i))
        shown: list[dict[str, Any]] = []
        budget = self.max_chars
        for i in order:
            p = passages[i]
            clip = _clip(p.text, min(budget, 900))
            if budget < 120:
                break
            shown.append({"id": p.id, "section": p.section, "text": clip})
            budget -= len(clip)
        return {"paper": str(work.id), "title": meta.title, "retracted": bool(meta.retracted), "passages": shown}
