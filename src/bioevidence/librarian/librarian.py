"""The librarian: a question in, ranked verbatim evidence out, every sentence pinned.

Pipeline (one pass): plan subqueries → search each (local index) → fuse and deduplicate by
identity (PMID, PMCID, DOI, normalised title) → passages per paper (full text: BM25 paragraph
ranking with corpus-wide statistics into an excerpt; abstracts: their sentences) → judge
papers and sentences → caps (30 full-text + 30 abstract-only papers) → retracted papers left
out unless asked for → every sentence of every kept paper ranked across the pool
(:mod:`.ranking`: its own relevance, its paper's score, a section prior, diversity across
papers) → the first ``top_k`` sentences from at most ``max_papers`` papers, each a byte-exact
slice of its pinned passage (:mod:`.spans`), judged relevant or not (:mod:`.relevance`) and, when
relevant, labelled by the stance model (:mod:`.stance`). When the judge rejects everything, the
unfiltered pool is returned and ``fallback`` says so.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BioevidenceError, ConfigurationError
from .analysis import analyze
from .backend import Backend, Hit, LocalBackend, Scoring
from .feedback import Feedback, feed_back
from .hybrid import CHOICES, DenseRetriever, choose
from .index import DocInfo, LocalIndex, PassageRow, idf_table
from .judge import LexicalJudge, QueryTerms
from .lexicon import Lexicon, default_lexicon
from .llm_judge import Bundle, JudgeReport, LLMJudge
from .planner import OfflinePlanner, Plan
from .ranking import DEFAULT, Candidate, Weights, cues, rank, relevance, section_type, sectioned
from .results import Answer, Paper, Span
from .spans import grow

__all__ = ["Answer", "Librarian", "Paper", "Settings", "Span"]


@dataclass(frozen=True)
class Settings:
    """Knobs, with the reference project's values as defaults."""

    top_k: int = 10  # sentences returned
    max_papers: int = 10  # papers they come from
    max_fulltext_papers: int = 30
    max_abstract_papers: int = 30
    words_per_paper: int = 250
    excerpt_words: int = 2304
    per_subquery: int = 50
    judge_weight: float = 0.1  # tuned on SciFact train
    scope: tuple[str, ...] = ("literature",)
    include_retracted: bool = False  # retracted papers' sentences are left out unless asked for
    weights: Weights = DEFAULT


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
                 vocabularies: tuple[str | Path, ...] = (),
                 settings: Settings | None = None, scoring: Scoring | None = None,
                 judge: LexicalJudge | LLMJudge | str | None = None, planner: Any = None, llm: Any = None,
                 progress: Callable[[str], None] | None = None, retriever: str = "auto",
                 fusion: Any = None, stance_model: Any = None, feedback: Feedback | str | None = "auto") -> None:
        if index is None and backend is None:
            raise ConfigurationError("give a local index folder or a backend; build an index with "
                                     "`bioevidence index build SOURCE... --index DIR`")
        self.index = None if index is None else index if isinstance(index, LocalIndex) else LocalIndex(index)
        self.backend: Backend = backend if backend is not None else LocalBackend(self.index or "", scoring=scoring)
        self.settings = settings or Settings()
        if lexicon is None and use_lexicon:
            try:
                lexicon = default_lexicon(references, tuple(vocabularies))
            except ConfigurationError:
                if references is not None or vocabularies:
                    raise
                lexicon = None
        self.lexicon = lexicon  # genes and diseases of a question, for relevance (librarian.relevance)
        self.stance_model = stance_model  # None: the shipped stance model (bioevidence.meaning), loaded once
        if (planner == "llm" or judge == "llm") and llm is None:
            raise ConfigurationError("planner or judge 'llm' needs llm=LLM(OpenAITransport(base_url), model) "
                                     "(bioevidence.loop.llm); or use 'offline'")
        if planner == "llm":
            from .llm_planner import LLMPlanner

            planner = LLMPlanner(llm, local_only=backend is None)
        elif planner in (None, "offline"):  # with the abbreviation and drug-name pairs kept with the index
            planner = OfflinePlanner(lexicon, synonyms=self.index.synonyms() if self.index is not None else None)
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
        self._candidates: list[Candidate] = []
        self._terms: QueryTerms | None = None
        if retriever not in CHOICES:
            raise ConfigurationError(f"retriever {retriever!r} is not one of {', '.join(CHOICES)}")
        # auto (the default): hybrid where the index has dense vectors and their model is installed
        self.retriever, self.retriever_why = (choose(self.index) if retriever == "auto"
                                              else (retriever, "asked for"))
        self.dense: Any = None  # hybrid.DenseRetriever for --retriever dense|hybrid (issue 14)
        if self.retriever != "bm25":
            if self.index is None:
                raise ConfigurationError(f"--retriever {retriever} needs a local index with dense vectors")
            self.dense = DenseRetriever(self.index, **({"spec": fusion} if fusion is not None else {}))
        # RM3 over the fused lexical pool (.feedback), local index only. "auto" (the default): on for
        # bm25 over a local index, where it was measured (docs/librarian.md); None: off
        if feedback == "auto":
            feedback = Feedback() if self.retriever == "bm25" and isinstance(self.backend, LocalBackend) else None
        elif isinstance(feedback, str):
            raise ConfigurationError(f"feedback {feedback!r}: use 'auto', None or a Feedback(...)")
        self.feedback: Feedback | None = feedback

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

    def ask(self, question: str, *, top_k: int | None = None, papers: int | None = None,
            include_retracted: bool | None = None) -> Answer:
        """Ranked verbatim sentences for ``question``: ``top_k`` sentences from at most ``papers``
        papers (defaults from :class:`Settings`); retracted papers only with ``include_retracted``."""
        t0 = time.perf_counter()
        self.progress("planning subqueries")
        plan = self.planner.plan(question)
        self.progress(f"searching · {len(plan.subqueries)} subqueries")
        results, errors = self._search(plan)
        pool = fuse(results)
        if self.feedback is not None and isinstance(self.backend, LocalBackend) and pool:
            results, feedback_terms = feed_back(self.backend, plan, results, pool, self.feedback,
                                            limit=self.settings.per_subquery)
            base = {p.doc.idx: p.fused for p in pool}
            pool = fuse(results)
            for paper in pool:
                paper.base = base.get(paper.doc.idx, 0.0)
        else:
            feedback_terms = {}
        if self.dense is not None:
            pool = self.dense.apply(question, pool, self.retriever)
        self.progress(f"found {len(pool)} candidate papers")
        materialise = getattr(self.backend, "materialise", None)
        if materialise is None:
            assert self.index is not None
            answer = self._rank(question, plan, pool, self.index, self.idf, top_k, papers, include_retracted)
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
                        answer = self._rank(question, plan, kept, index, idf_table(index, "_P"), top_k, papers,
                                            include_retracted)
                    finally:
                        index.close()
        answer.debug = {"subqueries": [q for q, _, _ in results], "errors": errors, "candidates": len(pool),
                        **({"feedback": {t: round(w, 4) for t, w in feedback_terms.items()}}
                           if feedback_terms else {}),
                        **answer.debug, "seconds": round(time.perf_counter() - t0, 4)}
        answer.provenance = self.provenance()
        self.progress(f"done · {len(answer.papers)} papers")
        return answer

    def provenance(self) -> dict[str, Any]:
        """What an answer was made with: the tool's version, the index (or service) searched, and the
        releases the planner and relevance read (name, version, SHA-256 of the file)."""
        from .._version import __version__

        where = (f"a local index of {self.index.n} papers ({self.index.path.name}/)" if self.index is not None
                 else "Europe PMC" if "EuropePMC" in type(self.backend).__name__ else type(self.backend).__name__)
        return {"tool": f"bioevidence {__version__}", "searched": where,
                "retriever": self.retriever, "retriever_why": self.retriever_why,
                "feedback": (None if self.feedback is None else
                             f"RM3 from the first {self.feedback.docs} paper(s), {self.feedback.terms} terms, "
                             f"original weight {self.feedback.original_weight}"),
                "releases": list(self.lexicon.releases) if self.lexicon is not None else []}

    def _rank(self, question: str, plan: Plan, pool: list[Paper], index: LocalIndex, idf: dict[str, float],
              top_k: int | None, papers: int | None, include_retracted: bool | None) -> Answer:
        import numpy as np

        s = self.settings
        self.progress(f"judging · {len(pool)} papers")
        terms = QueryTerms.build(question, plan.expansions, idf)
        self._terms = terms
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
            top_base = max((p.fused if p.base is None else p.base for p in pool), default=1.0) or 1.0
            for paper in pool:
                self._judge_paper(index, paper, terms, pscores)
                best = max((x[0] for x in paper.scored), default=0.0)
                paper.score = paper.fused / top_fused + s.judge_weight * best
                paper.prior = (paper.score if paper.base is None
                               else paper.base / top_base + s.judge_weight * best)
            rejected = "the judge rejected every candidate"
        accepted = sorted((p for p in pool if p.accepted), key=lambda p: (-p.score, p.doc.idx))
        fallback = None
        if pool and not accepted:
            fallback = f"{rejected}; returning the unfiltered pool"
            for paper in pool:
                self._lead(index, paper, terms)
            chosen = list(pool)
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
        keep_retracted = s.include_retracted if include_retracted is None else include_retracted
        withheld = [] if keep_retracted else [p for p in chosen if p.doc.retracted]
        chosen = [p for p in chosen if keep_retracted or not p.doc.retracted]
        ranked = self._sentences(chosen, top_k or s.top_k, papers or s.max_papers)
        debug.update(accepted=len(accepted), final=len(chosen), sentences=len(ranked), withheld=len(withheld))
        answer = Answer(question, plan, chosen, fallback, debug, s.scope, ranked, withheld, self._candidates)
        from .relevance import Topic
        from .stance import label_stance

        lexicon = getattr(self.planner, "lexicon", None) or self.lexicon
        entities = None if lexicon is not None else plan.entities
        label_stance(answer, Topic.of(question, lexicon, entities), self.stance_model)
        return answer

    def _sentences(self, chosen: list[Paper], limit: int, max_papers: int) -> list[Span]:
        """Every scored sentence of the chosen papers ranked across the pool (:func:`.ranking.rank`),
        each grown to a quotable span; a sentence is shown once."""
        candidates = []
        weights = self._terms.weights if self._terms is not None else {}
        for n, paper in enumerate(chosen):
            for judged, row, i in paper.scored:
                a, b = row.sentences[i]
                terms = analyze(row.text[a:b])
                finding, number, background = cues(terms)
                last = max(1, len(row.sentences) - 1)
                # the LLM judge's order (judged) when it ranked; else BM25 of the question's terms
                score = judged if isinstance(self.judge, LLMJudge) else relevance(terms, weights)
                candidates.append(Candidate(n, paper.prior, row, i, score, section_type(row), i / last,
                                            sectioned(row), finding, number, background))
        self._candidates = candidates
        out: list[Span] = []
        used: set[tuple[int, int]] = set()
        for c in rank(candidates, self.settings.weights, max_papers=max_papers):
            if len(out) >= limit:
                break
            if (c.row.pidx, c.sentence) in used:
                continue
            bounds = grow(c.row, c.sentence)
            if bounds is None:
                continue
            lo, hi = bounds
            if any((c.row.pidx, i) in used for i in range(lo, hi + 1)):
                continue
            used.update((c.row.pidx, i) for i in range(lo, hi + 1))
            text = c.row.text[c.row.sentences[lo][0]: c.row.sentences[hi][1]]
            span = Span(c.row, list(range(lo, hi + 1)), text, round(c.score, 4), c.paper)
            chosen[c.paper].spans.append(span)
            out.append(span)
        return out

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
            paper.scored = [(1.0 / (n + 1), row, i) for n, (row, i) in enumerate(ruling.cited)]
            paper.accepted = bool(paper.scored)
            paper.score = paper.prior = ruling.score
        return report

    def _judge_paper(self, index: LocalIndex, paper: Paper, terms: QueryTerms, pscores: Any) -> None:
        """Score every sentence of the paper's excerpt; the paper is accepted when one sentence is, and
        then all its sentences are candidates (a finding may share no word with the question)."""
        judge = self.judge
        assert isinstance(judge, LexicalJudge)
        scored: list[tuple[float, PassageRow, int]] = []
        for row in self._excerpt(index, paper, pscores):
            for i, (a, b) in enumerate(row.sentences):
                scored.append((judge.score(row.text[a:b], terms), row, i))
        paper.accepted = any(judge.accepts(x[0]) for x in scored)
        paper.scored = scored if paper.accepted else []  # every sentence of an accepted paper is a candidate

    def _lead(self, index: LocalIndex, paper: Paper, terms: QueryTerms) -> None:
        """The unfiltered pool: the paper's first ~250 words are its candidates, scored anyway."""
        judge = self.judge if isinstance(self.judge, LexicalJudge) else LexicalJudge()
        scored, words = [], 0
        for row in self._excerpt(index, paper, []):
            for i, (a, b) in enumerate(row.sentences):
                scored.append((judge.score(row.text[a:b], terms), row, i))
                words += len(row.text[a:b].split())
                if words >= self.settings.words_per_paper:
                    break
            if words >= self.settings.words_per_paper:
                break
        paper.scored = scored

