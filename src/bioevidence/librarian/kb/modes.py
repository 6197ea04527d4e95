"""``kb ask --mode basic|advanced|agentic``: answers over a knowledge base, every cited sentence
checked by the gate.

* **basic** — retrieve (``--retriever``, hybrid by default) and answer.
* **advanced** — the question and up to 3 rephrasings, each retrieved, fused by SW-RRF exactly as
  Perspicacité does (``σ((s − 0.8)·30)/(60 + r)`` over each query's min-max normalised scores),
  then answered. Offline rephrasings are deterministic: the content words, the content words with
  the lexicon's synonyms (HGNC, Cell Ontology), and the longest content words.
* **agentic** — plan (the question and its ``and``/``;`` parts), search (the knowledge base, a
  local index with ``--index``, Europe PMC with ``--europepmc``), reason (which of the question's
  content words no verified sentence covers yet), replan up to 3 times with queries for the missing
  words; every step is logged in ``steps``.

Answers come from the librarian's cited-answer path (:func:`bioevidence.librarian.answering.answer_question`,
offline extractive unless a model is given): the evidence record of the ranked sentences is
validated by the gate against the papers' pinned bytes (the knowledge base's snapshots, or a
folder they are pinned into when they come from several stores), only items the gate verified are
cited, and the others are listed with the reason. Advanced and agentic modes fuse their runs into
one ranked answer first (SW-RRF over each run's ranked sentences, by paper, passage and sentence
range), so the same gate sees every sentence they cite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError, llm_text
from ..fusion import minmax, sw_rrf
from .layout import KnowledgeBase

__all__ = ["KbAnswer", "KbAsker", "ask_kb", "rephrasings"]

MAX_REPLANS = 3
_STOP = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "been", "by", "can", "do", "does", "for", "from", "has", "have",
    "how", "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "their", "there", "these", "this",
    "those", "to", "was", "were", "what", "when", "where", "which", "who", "why", "with", "whether", "than",
    "then", "not", "no", "associated", "association", "effect", "effects", "role", "roles"
])


@dataclass
class KbAnswer:
    question: str
    mode: str
    retriever: str
    text: str  # the verdict, then the cited sentences, each followed by its [n]
    citations: list[dict[str, Any]]  # {"n", "item"}: what the answer cites, all verified by the gate
    items: list[dict[str, Any]]  # every evidence item retrieved, ranked
    dropped: list[dict[str, Any]] = field(default_factory=list)  # {"item", "reason"}
    steps: list[dict[str, Any]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    gate: dict[str, Any] = field(default_factory=dict)
    cited: dict[str, Any] = field(default_factory=dict)  # the librarian's CitedAnswer, as JSON

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "mode": self.mode, "retriever": self.retriever, "answer": self.text,
                "citations": self.citations, "dropped": self.dropped, "queries": self.queries, "steps": self.steps,
                "gate": self.gate, "cited_answer": self.cited, "items": self.items}

    def render(self) -> str:
        lines = [self.text or "No verified evidence found.", ""]
        for c in self.citations:
            it = c["item"]
            lines.append(f"[{c['n']}] {it['title'][:90]} ({it.get('year') or 'n.d.'}) {it['locator']} "
                         f"sha256:{it['sha256'][:12]}")
        for d in self.dropped[:5]:
            lines.append(f"not cited: {d['item']['locator']}: {d['reason']}")
        return "\n".join(llm_text(line) for line in lines)  # titles, locators and a model's text: input


def _content(question: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9\-]*", question) if w.lower() not in _STOP and len(w) > 2]


def rephrasings(question: str, lexicon: Any = None, limit: int = 3) -> list[str]:
    """Up to ``limit`` deterministic rephrasings (see module docstring), distinct from the question."""
    words = _content(question)
    out = [" ".join(words)]
    if lexicon is not None:
        extra: list[str] = []
        for entity in lexicon.recognise(question):
            for syn in getattr(entity, "synonyms", ())[:3]:
                extra.append(str(syn))
            if getattr(entity, "label", ""):
                extra.append(str(entity.label))
        if extra:
            out.append(" ".join(dict.fromkeys([*words, *extra])))
    out.append(" ".join(sorted(words, key=lambda w: (-len(w), w))[: max(3, len(words) // 2)]))
    seen = {question.strip().lower()}
    unique = []
    for q in out:
        if q and q.lower() not in seen:
            seen.add(q.lower())
            unique.append(q)
    return unique[:limit]


def _fuse_answers(question: str, answers: list[Any], top_k: int, scope: tuple[str, ...]) -> Any:
    """One answer from several runs: their ranked sentences fused by SW-RRF (keyed by paper,
    passage and sentence range, each run's scores min-max normalised), papers in order of their
    best sentence; each sentence keeps the span of the run that ranked it best."""
    from ..results import Answer

    def key(a: Any, span: Any) -> tuple[str, int, tuple[int, ...]]:
        return a.papers[span.paper].doc.doc_id, span.passage.pidx, tuple(span.sentences)

    lists = [minmax([(key(a, sp), sp.score) for sp in a.ranked]) for a in answers]
    best: dict[Any, tuple[Any, Any]] = {}
    for a in answers:
        for sp in a.ranked:
            best.setdefault(key(a, sp), (a, sp))
    papers: list[Any] = []
    where: dict[str, int] = {}
    ranked = []
    for k, _ in sw_rrf(lists)[:top_k]:
        a, sp = best[k]
        paper = a.papers[sp.paper]
        if paper.doc.doc_id not in where:
            where[paper.doc.doc_id] = len(papers)
            papers.append(paper)
        ranked.append(replace(sp, paper=where[paper.doc.doc_id]))
    first = answers[0]
    return Answer(question, first.plan, papers, first.fallback, {"runs": len(answers)}, scope, ranked=ranked)


class KbAsker:
    """A loaded knowledge base to ask many questions (index, vectors, model, lexicon and the gate's
    literature grounders loaded once)."""

    def __init__(self, kb_dir: Path | str, *, retriever: str = "hybrid", top_k: int = 10,
                 index_dir: Path | None = None, europepmc: bool = False, references: Path | None = None) -> None:
        from ..librarian import Librarian, Settings

        self.kb = KnowledgeBase(kb_dir).require()
        self.retriever, self.top_k, self.index_dir, self.europepmc = retriever, top_k, index_dir, europepmc
        self.references = references
        self.settings = Settings(top_k=top_k)
        self.llm: Any = None  # an LLM (bioevidence.loop.llm) for a model-written cited synthesis
        self.lib = Librarian(self.kb.index, references=references, retriever=retriever, settings=self.settings)
        self._others: list[tuple[str, Any]] | None = None
        self._local: dict[str, Any] | None = None  # local text/PDF entries by pinned hash (_why_not)

    def _why_not(self, item: dict[str, Any], why: str) -> str:
        """The gate's reason, and for a local text or PDF entry with no pinned resolver record what it
        means: its existence and retraction are not pinned, so it is searched, never cited."""
        if self._local is None:
            self._local = {r.sha256: r for r in self.kb if r.format == "text" and not r.work}
        rec = self._local.get(str(item.get("sha256")))
        if rec is None:
            return why
        kind = "a PDF's extracted text" if rec.via == "local-pdf" else "a local text file"
        return (f"{why} (entry {rec.key} is {kind} with no pinned resolver record, so the paper's existence and "
                "retraction are not checked: give the entry a PMID or DOI pinned in --snapshot-dir, or build it "
                "without --offline)")

    def others(self) -> list[tuple[str, Any]]:
        """The agentic mode's other sources: a local index, Europe PMC (built on first use)."""
        if self._others is None:
            from ..librarian import Librarian

            self._others = []
            if self.index_dir is not None:
                self._others.append(("index", Librarian(self.index_dir, references=self.references,
                                                        settings=self.settings)))
            if self.europepmc:
                import os

                from ..europepmc_backend import EuropePMCBackend

                live = EuropePMCBackend.from_env(self.kb.snapshots, cache_dir=os.environ.get("BIOEVIDENCE_HTTP_CACHE"))
                self._others.append(("europepmc", Librarian(backend=live, references=self.references,
                                                            settings=self.settings)))
        return self._others

    def ask(self, question: str, mode: str = "basic") -> KbAnswer:
        from ..answering import answer_question

        top_k, lib = self.top_k, self.lib
        steps: list[dict[str, Any]] = []
        queries = [question]
        if mode == "basic":
            answer = lib.ask(question, top_k=top_k)
        elif mode == "advanced":
            queries += rephrasings(question, getattr(lib.planner, "lexicon", None))
            answer = _fuse_answers(question, [lib.ask(q, top_k=top_k) for q in queries], top_k, self.settings.scope)
        elif mode == "agentic":
            runs, queries, steps = _agentic(question, [("kb", lib), *self.others()], top_k)
            answer = _fuse_answers(question, runs, top_k, self.settings.scope)
        else:
            raise ConfigurationError(f"--mode {mode!r} is not basic, advanced or agentic")
        cited, _record, report = answer_question(answer, llm=self.llm)
        items = answer.items()
        citations = [{"n": n, "item": items[n - 1]} for n in dict.fromkeys(c for s in cited.sentences for c in s.cites)]
        text = " ".join([cited.verdict, *(f"{s.text} [{', '.join(map(str, s.cites))}]" for s in cited.sentences)])
        dropped = [{"item": items[n - 1], "reason": self._why_not(items[n - 1], why)} for n, why in cited.left_out]
        gate = {"status": cited.status or None, "checked": len(items), "verified": len(cited.admitted),
                "rules": sorted({f.rule_id for f in report.findings}) if report is not None else []}
        steps.append({"step": len(steps) + 1, "action": "answer", "cited": len(citations), "dropped": len(dropped)})
        return KbAnswer(question, mode, self.retriever, text, citations, items, dropped, steps, queries, gate,
                        cited.to_json())


def ask_kb(question: str, kb_dir: Path | str, *, mode: str = "basic", retriever: str = "hybrid", top_k: int = 10,
           index_dir: Path | None = None, europepmc: bool = False, references: Path | None = None,
           llm: Any = None) -> KbAnswer:
    """Answer ``question`` from the knowledge base in ``kb_dir`` (see module docstring); ``llm`` (a
    :class:`bioevidence.loop.llm.LLM`) writes a cited synthesis instead of the extractive answer."""
    asker = KbAsker(kb_dir, retriever=retriever, top_k=top_k, index_dir=index_dir, europepmc=europepmc,
                    references=references)
    asker.llm = llm
    return asker.ask(question, mode)


def _agentic(question: str, searchers: list[tuple[str, Any]], top_k: int
             ) -> tuple[list[Any], list[str], list[dict[str, Any]]]:
    from ..analysis import analyze

    parts = [p.strip() for p in re.split(r";|\band\b|\bversus\b|\bvs\.?\b", question) if len(_content(p)) >= 2]
    plan = list(dict.fromkeys([question, *parts]))[:4]
    facets = {stem for w in _content(question) for stem in analyze(w)}
    steps: list[dict[str, Any]] = [{"step": 1, "action": "plan", "queries": plan, "facets": sorted(facets)}]
    runs: list[Any] = []
    queries: list[str] = []
    covered: set[str] = set()
    todo = plan
    for round_ in range(MAX_REPLANS + 1):
        for q in todo:
            queries.append(q)
            for name, searcher in searchers:
                run = searcher.ask(q, top_k=top_k)
                runs.append(run)
                steps.append({"step": len(steps) + 1, "action": "search", "source": name, "query": q,
                              "papers": len(run.papers)})
        for run in runs:
            for span in run.ranked:
                covered |= facets & set(analyze(span.text))
        missing = sorted(facets - covered)
        steps.append({"step": len(steps) + 1, "action": "reason", "covered": sorted(covered), "missing": missing})
        if not missing or round_ == MAX_REPLANS:
            break
        core = [w for w in _content(question) if not set(analyze(w)) & set(missing)][:3]
        words = [w for w in _content(question) if set(analyze(w)) & set(missing)]
        todo = [" ".join([*words, *core])]
        steps.append({"step": len(steps) + 1, "action": "replan", "round": round_ + 1, "queries": todo})
    return runs, queries, steps
