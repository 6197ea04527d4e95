"""Planners turn a question into up to N complementary Europe PMC subqueries.

The offline planner (the embedded default) needs no model: it recognises genes and cell types
with :class:`~bioevidence.librarian.lexicon.Lexicon`, expands them with pinned synonyms, adds the
other names the index's corpus gives a drug or an abbreviation (:mod:`.abbreviations`: a drug's
code and brand names join the broad query; an abbreviation's long form, or a long form's short
one, is credited by the judge, and searched too when the ``abbreviation`` weight is set), and
builds the reference project's tier mix: broad plain-text queries, synonym-expanded fielded
queries (at most one AND), and high-precision phrase queries.
Every subquery it emits is validated by :func:`~bioevidence.librarian.query.validate` (so it is
valid by construction and checked anyway); if all were rejected the planned ones would be
searched unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from .abbreviations import Synonyms
from .analysis import STOPWORDS, raw_tokens
from .lexicon import Entity, Lexicon
from .query import validate

__all__ = ["DEFAULT_WEIGHTS", "MAX_SUBQUERIES", "OfflinePlanner", "Plan", "SubQuery"]

MAX_SUBQUERIES = 7
DEFAULT_WEIGHTS = {"broad": 1.0, "synonym": 0.15, "phrase": 0.0, "title": 0.1, "abbreviation": 0.0}
_QUESTION_WORDS = frozenset(
    [
        "does", "do", "is", "are", "can", "could", "what", "which", "how", "why", "when", "whether", "role",
        "effect", "effects", "associated", "association", "evidence", "studies", "study", "show", "shows",
        "shown", "report", "reported", "literature", "paper", "papers",
    ]
)


@dataclass(frozen=True)
class SubQuery:
    query: str
    tier: str  # broad | synonym | precise
    weight: float = 1.0


@dataclass
class Plan:
    question: str
    subqueries: list[SubQuery]
    entities: list[Entity] = field(default_factory=list)
    expansions: list[str] = field(default_factory=list)  # synonym words the judge may also credit
    rejected: list[tuple[str, list[str]]] = field(default_factory=list)
    fallback: str | None = None
    model_calls: int = 0  # LLM calls the plan took (0 for the offline planner)

    def to_json(self) -> dict[str, object]:
        return {
            "question": self.question,
            "subqueries": [{"query": s.query, "tier": s.tier, "weight": s.weight} for s in self.subqueries],
            "entities": [{"kind": e.kind, "id": e.id, "label": e.label, "mention": e.mention}
                         for e in self.entities],
            "rejected": [{"query": q, "errors": e} for q, e in self.rejected],
            "fallback": self.fallback,
            "model_calls": self.model_calls,
        }


def _q(text: str) -> str:
    text = text.replace('"', " ").strip()
    return f'"{text}"' if re.search(r"[^0-9A-Za-z]", text) else text


def content_words(question: str) -> list[str]:
    """Question words worth searching for, in order, without duplicates."""
    words = raw_tokens(question)
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS and w not in _QUESTION_WORDS
                              and (len(w) > 1 or w.isdigit())))


@dataclass
class OfflinePlanner:
    lexicon: Lexicon | None = None
    max_subqueries: int = MAX_SUBQUERIES
    fields: tuple[str, ...] = ("TITLE_ABS",)
    #: Fusion weight per subquery kind (scores are max-normalised per subquery, then summed).
    #: Tuned on SciFact *train* only (docs/librarian.md): a title subquery at 0.1 and synonyms at
    #: 0.15 beat plain BM25; the word-pair phrase subquery hurt there (-0.007), so it is off (0), as
    #: is the corpus-abbreviation subquery (-0.0015 at 0.15; the judge still credits long forms).
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    #: Abbreviation and name pairs kept with the index (``LocalIndex.synonyms()``); None: none.
    synonyms: Synonyms | None = None

    def plan(self, question: str) -> Plan:
        words = content_words(question)
        readings = self.synonyms.readings if self.synonyms is not None else None
        entities = self.lexicon.recognise(question, readings) if self.lexicon is not None else []
        found = self.synonyms.expand(question) if self.synonyms is not None else []
        names = [alt for _, kind, alts in found if kind == "name" for alt in alts]
        subs: list[SubQuery] = []
        if words:
            broad = list(dict.fromkeys([*map(_q, words), *map(_q, names)]))
            subs.append(SubQuery(" OR ".join(broad), "broad", self.weights["broad"]))
        mention_words = {w for e in entities for w in raw_tokens(e.mention)}
        others = [w for w in words if w not in mention_words]
        expansions: list[str] = list(names)
        field_name = self.fields[0]
        for ent in entities:
            syns = [s for s in ent.synonyms if 2 <= len(s) <= 60][:8]
            expansions.extend(syns)
            group = " OR ".join(_q(s) for s in syns)
            rest = " OR ".join(_q(w) for w in others[:12])
            query = f"{field_name}:({group})" + (f" AND ({rest})" if rest else "")
            if self.weights.get("synonym", 0) > 0:
                subs.append(SubQuery(query, "synonym", self.weights["synonym"]))
        # High precision: the question's words in the title, and its adjacent word pairs as phrases.
        if words and self.weights.get("title", 0) > 0:
            subs.append(SubQuery("TITLE:(" + " OR ".join(_q(w) for w in words) + ")", "precise",
                                 self.weights["title"]))
        pairs = [f"{a} {b}" for a, b in pairwise(words)]
        if pairs and self.weights.get("phrase", 0) > 0:
            subs.append(SubQuery(f"{field_name}:(" + " OR ".join(_q(p) for p in pairs[:10]) + ")", "precise",
                                 self.weights["phrase"]))
        # One subquery for the question's abbreviations with their long forms (and long forms with
        # their abbreviations), as the corpus defines them; a gene's are its HGNC names above.
        named = {e.mention.lower() for e in entities}
        abbreviated = [(m, alts) for m, kind, alts in found if kind == "abbreviation" and m.lower() not in named]
        expansions.extend(a for _, alts in abbreviated for a in alts)
        if abbreviated and self.weights.get("abbreviation", 0) > 0:
            own = {w for m, _ in abbreviated for w in raw_tokens(m)}
            group = " OR ".join(dict.fromkeys(_q(t) for m, alts in abbreviated for t in (m, *alts)))
            rest = " OR ".join(_q(w) for w in [w for w in words if w not in own][:12])
            subs.append(SubQuery(f"{field_name}:({group})" + (f" AND ({rest})" if rest else ""), "synonym",
                                 self.weights["abbreviation"]))
        subs = list({s.query: s for s in subs}.values())[: self.max_subqueries]
        plan = Plan(question, [], entities, expansions)
        for s in subs:
            res = validate(s.query)
            if res.valid:
                plan.subqueries.append(s)
            else:
                plan.rejected.append((s.query, res.errors))
        if not plan.subqueries and subs:
            plan.subqueries = subs  # every subquery rejected: search the planned ones unchanged
            plan.fallback = "all subqueries rejected by the validator; searched unchanged"
        if not subs:
            plan.subqueries = [SubQuery(_q(question.strip()) if question.strip() else '""', "broad", 1.0)]
            plan.fallback = "no searchable words in the question; searched the raw question"
        return plan
