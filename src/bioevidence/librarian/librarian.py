"""The librarian: a question in, ranked verbatim evidence out, every sentence pinned.

Pipeline (one pass): plan subqueries → search each (local index) → fuse and deduplicate by
identity (PMID, PMCID, DOI, normalised title) → passages per paper (full text: BM25 paragraph
ranking with corpus-wide statistics into an excerpt; abstracts: their sentences) → judge
sentences → caps (30 full-text + 30 abstract-only papers, ~250 words per paper) → contiguous
spans in reading order, each an evidence item whose quote is a substring of the canonical
paragraph text the literature grounder verifies against. When the judge rejects everything,
the unfiltered pool is returned and ``fallback`` says so.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BioevidenceError, ConfigurationError
from .backend import Backend, Hit, LocalBackend, Scoring
from .index import DocInfo, LocalIndex, PassageRow, idf_table
from .judge import LexicalJudge, QueryTerms
from .lexicon import Lexicon, default_lexicon
from .llm_judge import Bundle, JudgeReport, LLMJudge
from .planner import OfflinePlanner, Plan

__all__ = ["Answer", "Librarian", "Paper", "Settings", "Span"]


@dataclass(frozen=True)
class Settings:
    """Knobs, with the reference project's values as defaults."""

    top_k: int = 60
    max_fulltext_papers: int = 30
    max_abstract_papers: int = 30
    words_per_paper: int = 250
    excerpt_words: int = 2304
    per_subquery: int = 50
    judge_weight: float = 0.1  # tuned on SciFact train
    scope: tuple[str, ...] = ("literature",)


@dataclass
class Span:
    passage: PassageRow
    sentences: list[int]
    text: str
    score: float


@dataclass
class Paper:
    doc: DocInfo
    fused: float
    subquery: str
    score: float = 0.0
    spans: list[Span] = field(default_factory=list)
    accepted: bool = False


@dataclass
class Answer:
    question: str
    plan: Plan
    papers: list[Paper]
    fallback: str | None = None
    debug: dict[str, Any] = field(default_factory=dict)
    scope: tuple[str, ...] = ("literature",)

    def items(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for paper in self.papers:
            d = paper.doc
            for span in paper.spans:
                out.append({
                    "rank": len(out) + 1, "doc_id": d.doc_id, "pmid": d.pmid, "pmcid": d.pmcid, "doi": d.doi,
                    "title": d.title, "authors": d.authors, "journal": d.journal, "year": d.year,
                    "text": span.text, "sentences": span.sentences, "paragraph_id": span.passage.pid,
                    "start": span.passage.sentences[span.sentences[0]][0],
                    "end": span.passage.sentences[span.sentences[-1]][1],
                    "section": span.passage.section, "locator": f"{_uri(d)}#{span.passage.pid}",
                    "sha256": d.sha256, "subquery": paper.subquery, "score": round(paper.score, 4),
                    "sentence_score": round(span.score, 4), "source_artifact_id": _artifact_id(d),
                    "retracted": d.retracted, "expression_of_concern": d.concern, "notices": list(d.notices),
                })
        return out

    def to_json(self) -> dict[str, Any]:
        items = self.items()
        artifacts: dict[str, dict[str, Any]] = {}
        evidence: list[dict[str, Any]] = []
        for paper in self.papers:
            d = paper.doc
            artifacts.setdefault(_artifact_id(d), {
                "id": _artifact_id(d), "title": d.title or d.doc_id, "source_type": "publication",
                "uri": _uri(d), "version": f"sha256:{d.sha256[:12]}",
                "retrieved_at": d.retrieved_at or "1970-01-01T00:00:00Z", "sha256": d.sha256,
            })
        for it in items:
            evidence.append({
                "id": f"ev:{it['rank']}", "source_artifact_id": it["source_artifact_id"],
                "locator": it["locator"], "extracted_text": it["text"], "evidence_type": "literature_quote",
                "extraction_method": "normalized_string_match", "scope": list(self.scope),
            })
        return {"question": self.question, "fallback": self.fallback, "plan": self.plan.to_json(),
                "items": items, "source_artifacts": list(artifacts.values()), "evidence_items": evidence,
                "debug": self.debug}


def _uri(d: DocInfo) -> str:
    if d.pmid:
        return f"pmid:{d.pmid}"
    if d.pmcid:
        return f"pmcid:{d.pmcid}"
    if d.doi:
        return f"doi:{d.doi}"
    return d.doc_id if ":" in d.doc_id else f"doc:{d.doc_id}"


def _artifact_id(d: DocInfo) -> str:
    return f"src:{_uri(d)}"


def _title_key(title: str) -> str:
    return " ".join(re.findall(r"[0-9a-z]+", title.lower()))


def identity_keys(d: DocInfo) -> list[str]:
    """Every identity a paper has: PMID, PMCID, DOI (lower-case) and normalised title."""
    keys = []
    if d.pmid:
        keys.append(f"pmid:{d.pmid.strip()}")
    if d.pmcid:
        keys.append(f"pmcid:{d.pmcid.strip().upper()}")
    if d.doi:
        keys.append(f"doi:{d.doi.strip().lower()}")
    t = _title_key(d.title)
    if len(t) > 20:
        keys.append(f"title:{t}")
    return keys


def fuse(results: list[tuple[str, float, list[Hit]]]) -> list[Paper]:
    """Weighted, max-normalised score fusion across subqueries, deduplicated by any shared identity."""
    papers: list[Paper] = []
    owner: dict[str, int] = {}
    for query, weight, hits in results:
        if not hits:
            continue
        top = max(h.score for h in hits) or 1.0
        for h in hits:
            contribution = weight * (h.score / top if top > 0 else 1.0)
            keys = identity_keys(h.doc) or [f"doc:{h.doc.doc_id}"]
            slot = next((owner[k] for k in keys if k in owner), None)
            if slot is None:
                slot = len(papers)
                papers.append(Paper(h.doc, 0.0, query))
            paper = papers[slot]
            paper.fused += contribution
            for k in keys:
                owner.setdefault(k, slot)
    papers.sort(key=lambda p: (-p.fused, p.doc.idx))
    return papers


class Librarian:
    """``Librarian(index_dir).ask(question)``: offline planner, local backend, lexical judge.

    ``planner="llm"`` / ``judge="llm"`` with ``llm=LLM(OpenAITransport(base_url), model)`` use the
    LLM planner (:class:`~.llm_planner.LLMPlanner`, fields limited to the local index's when the
    backend is local) and the LLM judge (:class:`~.llm_judge.LLMJudge`); pass configured
    instances instead of the strings to change their knobs.

    ``backend=`` swaps the search backend (e.g. :class:`~.europepmc_backend.EuropePMCBackend`):
    a backend with ``materialise(docs, folder)`` gets the question's pool indexed in a temporary
    folder, so ranking and evidence work the same way as over a local index.
    """

    def __init__(self, index: str | Path | LocalIndex | None = None, *, backend: Backend | None = None,
                 lexicon: Lexicon | None = None, references: str | Path | None = None, use_lexicon: bool = True,
                 settings: Settings | None = None, scoring: Scoring | None = None,
                 judge: LexicalJudge | LLMJudge | str | None = None, planner: Any = None, llm: Any = None,
                 progress: Callable[[str], None] | None = None) -> None:
        if index is None and backend is None:
            raise ConfigurationError("give a local index folder or a backend; build an index with "
                                     "`bioevidence index build SOURCE... --index DIR`")
        self.index = None if index is None else index if isinstance(index, LocalIndex) else LocalIndex(index)
        self.backend: Backend = backend if backend is not None else LocalBackend(self.index or "", scoring=scoring)
        self.settings = settings or Settings()
        if lexicon is None and use_lexicon:
            try:
                lexicon = default_lexicon(references)
            except ConfigurationError:
                if references is not None:
                    raise
                lexicon = None
        if (planner == "llm" or judge == "llm") and llm is None:
            raise ConfigurationError("planner or judge 'llm' needs llm=LLM(OpenAITransport(base_url), model) "
                                     "(bioevidence.loop.llm); or use 'offline'")
        if planner == "llm":
            from .llm_planner import LLMPlanner

            planner = LLMPlanner(llm, local_only=backend is None)
        elif planner in (None, "offline"):
            planner = OfflinePlanner(lexicon)
        if judge == "llm":
            judge = LLMJudge(llm)
        elif judge in (None, "offline"):
            judge = LexicalJudge()
        if isinstance(planner, str) or isinstance(judge, str):
            raise ConfigurationError(f"planner {planner!r} / judge {judge!r}: use 'offline', 'llm' or an object")
        self.planner = planner
        self.judge: LexicalJudge | LLMJudge = judge
        self.progress = progress or (lambda message: None)
        self._idf: dict[str, float] | None = None

    @property
    def idf(self) -> dict[str, float]:
        if self.index is None:
            raise ConfigurationError("this librarian has no local index; idf is computed per question")
        if self._idf is None:
            self._idf = idf_table(self.index, "_P")
        return self._idf

    def _search(self, plan: Plan) -> tuple[list[tuple[str, float, list[Hit]]], list[str]]:
        """Every subquery; a failing subquery contributes nothing. Remote backends run in parallel
        (8 threads); the local one inline (CPU-bound: threads would only add overhead)."""
        from concurrent.futures import ThreadPoolExecutor

        def one(sq: Any) -> tuple[str, float, list[Hit]] | str:
            try:
                return sq.query, sq.weight, self.backend.search(sq.query, limit=self.settings.per_subquery)
            except BioevidenceError as exc:
                return f"{sq.query}: {exc.message}"

        if not hasattr(self.backend, "materialise"):
            out = [one(sq) for sq in plan.subqueries]
        else:
            with ThreadPoolExecutor(max_workers=8) as pool:
                out = list(pool.map(one, plan.subqueries))
        return [r for r in out if not isinstance(r, str)], [r for r in out if isinstance(r, str)]

    def ask(self, question: str, *, top_k: int | None = None) -> Answer:
        t0 = time.perf_counter()
        self.progress("planning subqueries")
        plan = self.planner.plan(question)
        self.progress(f"searching · {len(plan.subqueries)} subqueries")
        results, errors = self._search(plan)
        pool = fuse(results)
        self.progress(f"found {len(pool)} candidate papers")
        materialise = getattr(self.backend, "materialise", None)
        if materialise is None:
            assert self.index is not None
            answer = self._rank(question, plan, pool, self.index, self.idf, top_k)
        else:
            import tempfile

            with tempfile.TemporaryDirectory(prefix="bioevidence-pool-") as tmp:
                index = materialise([p.doc for p in pool], Path(tmp)) if pool else None
                if index is None:
                    answer = Answer(question, plan, [], None, {}, self.settings.scope)
                else:
                    try:
                        kept = [p for p in pool if p.doc.doc_id in index.by_doc_id]
                        for p in kept:
                            p.doc = index.docs[index.by_doc_id[p.doc.doc_id]]
                        answer = self._rank(question, plan, kept, index, idf_table(index, "_P"), top_k)
                    finally:
                        index.close()
        answer.debug = {"subqueries": [q for q, _, _ in results], "errors": errors, "candidates": len(pool),
                        **answer.debug, "seconds": round(time.perf_counter() - t0, 4)}
        self.progress(f"done · {len(answer.papers)} papers")
        return answer

    def _rank(self, question: str, plan: Plan, pool: list[Paper], index: LocalIndex, idf: dict[str, float],
              top_k: int | None) -> Answer:
        import numpy as np

        s = self.settings
        self.progress(f"judging · {len(pool)} papers")
        terms = QueryTerms.build(question, plan.expansions, idf)
        qtoks = list(terms.weights)
        pscores = index.scores("_P", qtoks) if pool else np.zeros(0)
        debug: dict[str, Any] = {}
        if isinstance(self.judge, LLMJudge):
            report = self._judge_llm(question, index, pool, pscores)
            debug["judge"] = report.to_json()
            rejected = ("the LLM judge gave no usable reply for any batch" if pool and not report.usable
                        else "the LLM judge rejected every candidate")
        else:
            top_fused = max((p.fused for p in pool), default=1.0) or 1.0
            for paper in pool:
                self._judge_paper(index, paper, terms, pscores)
                best = max((sp.score for sp in paper.spans), default=0.0)
                paper.score = paper.fused / top_fused + s.judge_weight * best
            rejected = "the judge rejected every candidate"
        accepted = sorted((p for p in pool if p.accepted), key=lambda p: (-p.score, p.doc.idx))
        fallback = None
        if pool and not accepted:
            fallback = f"{rejected}; returning the unfiltered pool"
            for paper in pool:
                self._lead(index, paper)
            chosen = pool[: top_k or s.top_k]
        else:
            n_ft = n_ab = 0
            chosen = []
            for p in accepted:
                if p.doc.kind == "fulltext" and n_ft < s.max_fulltext_papers:
                    n_ft += 1
                    chosen.append(p)
                elif p.doc.kind != "fulltext" and n_ab < s.max_abstract_papers:
                    n_ab += 1
                    chosen.append(p)
            chosen = chosen[: top_k or s.top_k]
        debug.update(accepted=len(accepted), final=len(chosen))
        return Answer(question, plan, chosen, fallback, debug, s.scope)

    # ------------------------------------------------------------ per paper
    def _excerpt(self, index: LocalIndex, paper: Paper, pscores: Any) -> list[PassageRow]:
        rows = index.passages(paper.doc.idx)
        if paper.doc.kind != "fulltext":
            return [r for r in rows if r.kind == "abstract"] or rows
        ranked = sorted(rows, key=lambda r: (-float(pscores[r.pidx]) if len(pscores) else 0.0, r.ord))
        chosen: list[PassageRow] = []
        words = 0
        for r in ranked:
            if len(pscores) and pscores[r.pidx] <= 0 and chosen:
                break
            chosen.append(r)
            words += len(r.text.split())
            if words >= self.settings.excerpt_words:
                break
        return sorted(chosen, key=lambda r: r.ord)

    def _judge_llm(self, question: str, index: LocalIndex, pool: list[Paper], pscores: Any) -> JudgeReport:
        """Bundles (full text: abstract + BM25 excerpt; else the abstract) to the LLM judge; each cited
        paper is accepted with its RRF score and its cited sentences (judge order, ~250 words)."""
        assert isinstance(self.judge, LLMJudge)
        bundles = []
        for key, paper in enumerate(pool[: self.judge.max_papers] if self.judge.max_papers else pool):
            rows = self._excerpt(index, paper, pscores)
            if paper.doc.kind == "fulltext":
                seen = {r.pidx for r in rows}
                rows = sorted([*rows, *(r for r in index.passages(paper.doc.idx)
                                        if r.kind == "abstract" and r.pidx not in seen)], key=lambda r: r.ord)
            sentences = tuple((r, i) for r in rows for i in range(len(r.sentences)))
            bundles.append(Bundle(key, "fulltext" if paper.doc.kind == "fulltext" else "abstract",
                                  paper.doc.title, paper.doc.journal, paper.doc.year, sentences))
        report = self.judge.judge(question, bundles)
        for key, ruling in report.rulings.items():
            paper = pool[key]
            keep, words = [], 0
            for n, (row, i) in enumerate(ruling.cited):
                keep.append((1.0 / (n + 1), row, i))
                words += len(row.text[row.sentences[i][0]: row.sentences[i][1]].split())
                if words >= self.settings.words_per_paper:
                    break
            paper.spans = _spans(keep)
            paper.accepted = bool(paper.spans)  # cited sentences too short to quote leave nothing to return
            paper.score = ruling.score
        return report

    def _judge_paper(self, index: LocalIndex, paper: Paper, terms: QueryTerms, pscores: Any) -> None:
        scored: list[tuple[float, PassageRow, int]] = []
        judge = self.judge
        assert isinstance(judge, LexicalJudge)
        for row in self._excerpt(index, paper, pscores):
            for i, (a, b) in enumerate(row.sentences):
                scored.append((judge.score(row.text[a:b], terms), row, i))
        good = [x for x in scored if judge.accepts(x[0])]
        if not good:
            return
        paper.accepted = True
        best = max(x[0] for x in good)
        good = [x for x in good if x[0] >= judge.keep_ratio * best]
        good.sort(key=lambda x: (-x[0], x[1].ord, x[2]))
        keep, words = [], 0
        for x in good:
            keep.append(x)
            words += len(x[1].text[x[1].sentences[x[2]][0]: x[1].sentences[x[2]][1]].split())
            if words >= self.settings.words_per_paper:
                break
        paper.spans = _spans(keep)

    def _lead(self, index: LocalIndex, paper: Paper) -> None:
        rows = self._excerpt(index, paper, [])
        keep, words = [], 0
        for row in rows:
            for i, (a, b) in enumerate(row.sentences):
                keep.append((0.0, row, i))
                words += len(row.text[a:b].split())
                if words >= self.settings.words_per_paper:
                    break
            if words >= self.settings.words_per_paper:
                break
        paper.spans = _spans(keep)


MIN_QUOTE_WORDS = 5  # the literature grounder's minimum; shorter quotes cannot be confirmed


def _same_line(row: PassageRow, i: int, j: int) -> bool:
    """Sentences ``i < j`` of ``row`` lie between the same breaks (a quote never crosses a table
    cell or a caption's label)."""
    a, b = row.sentences[i][0], row.sentences[j][1]
    return not any(a < cut < b for cut in row.breaks)


def _words(row: PassageRow, lo: int, hi: int) -> int:
    from ..text.normalize import word_count

    return word_count(row.text[row.sentences[lo][0]: row.sentences[hi][1]])


def _spans(selected: list[tuple[float, PassageRow, int]]) -> list[Span]:
    """Group selected sentences into contiguous spans within one line of a paragraph, in reading
    order; a span under :data:`MIN_QUOTE_WORDS` words grows by its neighbours on the same line
    (next first) or is dropped, so every quote can be confirmed by the grounder."""
    selected = sorted(selected, key=lambda x: (x[1].ord, x[2]))
    spans: list[Span] = []
    for score, row, i in selected:
        last = spans[-1] if spans else None
        if (last is not None and last.passage.pidx == row.pidx and i - 1 <= last.sentences[-1] < i
                and _same_line(row, last.sentences[-1], i)):
            last.sentences.append(i)
            last.score = max(last.score, score)
        elif last is not None and last.passage.pidx == row.pidx and i in last.sentences:
            continue
        else:
            spans.append(Span(row, [i], "", score))
    out: list[Span] = []
    for sp in spans:
        row = sp.passage
        lo, hi = sp.sentences[0], sp.sentences[-1]
        while _words(row, lo, hi) < MIN_QUOTE_WORDS:
            if hi + 1 < len(row.sentences) and _same_line(row, hi, hi + 1):
                hi += 1
            elif lo > 0 and _same_line(row, lo - 1, lo):
                lo -= 1
            else:
                break
        if _words(row, lo, hi) < MIN_QUOTE_WORDS:
            continue
        if out and out[-1].passage.pidx == row.pidx and out[-1].sentences[-1] >= lo:
            prev = out[-1]  # grown into the previous span: merge
            prev.sentences = list(range(prev.sentences[0], max(hi, prev.sentences[-1]) + 1))
            prev.score = max(prev.score, sp.score)
        else:
            out.append(Span(row, list(range(lo, hi + 1)), "", sp.score))
    for sp in out:
        a = sp.passage.sentences[sp.sentences[0]][0]
        b = sp.passage.sentences[sp.sentences[-1]][1]
        sp.text = sp.passage.text[a:b]
    return out
