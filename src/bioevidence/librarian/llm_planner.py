"""The LLM planner: a question in, up to N complementary Europe PMC subqueries out.

One schema-constrained call (``{"queries": [...]}``) whose prompt carries the field sheet
generated from :data:`~bioevidence.librarian.fields.FIELDS` (``prompt_reference``), the same
catalogue the validator and the local backend use, so the three cannot disagree; with
``local_only`` the sheet lists only the fields the local index executes and subqueries using
any other field are rejected with that reason.

What happens to the reply, in order (the reference project's behaviour, its defects fixed):

1. the adapter parses it tolerantly; unparseable or off-schema → one retry at temperature 0
   (stating the problem) → still unusable → the raw question (made query-safe) is the only
   subquery, and ``plan.fallback`` says so;
2. queries are stripped, de-duplicated in order and cut to ``max_subqueries`` (the prompt states
   the same N: the budget text is generated from the knob, not hard-coded);
3. relative dates in the question ("last 5 years", "past decade", "since 2019", "this year")
   are resolved against today's date (injectable ``clock``) into ``PUB_YEAR:[a TO b]``, given
   to the model, and appended to every subquery that came back without a PUB_YEAR clause;
4. every subquery is validated (:func:`~bioevidence.librarian.query.validate`, AND budget 2 as
   a warning); rejected ones are logged with their reasons and kept in ``plan.rejected``;
5. if every subquery is rejected, the planned ones are searched unchanged (as the study
   specifies), and ``plan.fallback`` says so.

Only the question reaches the model: no paper text is ever in the planner prompt.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ..errors import ConfigurationError, ModelError
from .fields import get_field, prompt_reference
from .planner import MAX_SUBQUERIES, Plan, SubQuery
from .query import Term, fields_used, terms, validate

__all__ = ["PLAN_SCHEMA", "DateWindow", "LLMPlanner", "plan_schema", "raw_query", "resolve_dates"]

log = logging.getLogger("bioevidence.librarian.planner")

MAX_ANDS = 2


def plan_schema(n: int) -> dict[str, Any]:
    """The reply schema: ``{"queries": [non-empty strings]}``. More than ``n`` queries is not an
    error (the list is cut to ``n``, as the reference does), so it costs no retry."""
    del n  # the budget is stated in the prompt; kept in the signature for callers that vary it
    return {
        "type": "object", "additionalProperties": False, "required": ["queries"],
        "properties": {"queries": {"type": "array", "minItems": 1,
                                   "items": {"type": "string", "minLength": 1, "maxLength": 500}}},
    }


PLAN_SCHEMA = plan_schema(MAX_SUBQUERIES)


# ----------------------------------------------------------------------------- relative dates
@dataclass(frozen=True)
class DateWindow:
    """An explicit publication-year window resolved from a relative phrase in the question."""

    phrase: str
    start: int
    end: int

    @property
    def clause(self) -> str:
        return f"PUB_YEAR:[{self.start} TO {self.end}]"


_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "a": 1, "an": 1}
_NUM = r"(\d{1,3}|" + "|".join(_NUMBERS) + r")"
_SPAN = re.compile(rf"\b(?:last|past|previous|recent)\s+(?:{_NUM}\s+)?(years?|decades?|months?)\b", re.I)
_SINCE = re.compile(r"\b(?:since|after|from)\s+((?:19|20)\d{2})\b(?!\s*(?:to|-|–)\s*\d)", re.I)
_THIS_YEAR = re.compile(r"\b(?:this|the current)\s+year\b", re.I)


def resolve_dates(question: str, today: date) -> DateWindow | None:
    """The publication-year window a relative time phrase names, anchored to ``today``.

    "last N years" → ``[Y−N TO Y]`` (the current year included, so a window of N years back from
    today is covered whatever today's month); "past decade" → N = 10; "last N months" → the
    years those months touch; "since 2019" → ``[2019 TO Y]``; "this year" → ``[Y TO Y]``.
    """
    y = today.year
    m = _SPAN.search(question)
    if m:
        raw, unit = (m.group(1) or "1").lower(), m.group(2).lower()
        n = int(raw) if raw.isdigit() else _NUMBERS[raw]
        if unit.startswith("decade"):
            return DateWindow(m.group(0), y - 10 * n, y)
        if unit.startswith("month"):
            back = (today.month - 1 - n) // 12  # years crossed going n months back
            return DateWindow(m.group(0), y + min(back, 0), y)
        return DateWindow(m.group(0), y - n, y)
    m = _SINCE.search(question)
    if m and int(m.group(1)) <= y:
        return DateWindow(m.group(0), int(m.group(1)), y)
    m = _THIS_YEAR.search(question)
    if m:
        return DateWindow(m.group(0), y, y)
    return None


def raw_query(question: str) -> str:
    """The question as a plain-text query that parses: words only (no ``?``/``*`` wildcards,
    quotes, brackets or colons), upper-case operator words lower-cased so they stay words."""
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9.+/_-]*[A-Za-z0-9]|[A-Za-z0-9]", question)
    out = [w.lower() if w in ("AND", "OR", "NOT", "TO") else w for w in words]
    return " ".join(out)


# ----------------------------------------------------------------------------- the prompt
SYSTEM = """You are a biomedical librarian. You turn a user's question into Europe PMC search queries.
Your job is recall: a later step checks relevance, so find every paper that could answer the question.

Rules:
- Write AT MOST {n} queries, most useful first, each different from the others.
- Mix three kinds: about 40% broad plain-text queries without field tags (at least one);
  about 40% fielded queries with OR-synonym groups for one concept, e.g. TITLE_ABS:("lung cancer" OR NSCLC);
  about 20% high-precision queries (phrases, section or keyword fields).
- Use OR between synonyms of one concept. Use AND only between concepts that must both appear;
  at most {ands} ANDs per query.
- Operators AND, OR, NOT are upper-case. Quote multi-word phrases with double quotes.
  Write FIELD:value with no space after the colon.
- Use only the fields listed below.
{dates}
Fields you may use:
{fields}

Example for the question "{example_question}":
{example}

Reply with one JSON object and nothing else: {{"queries": [...]}}"""


EXAMPLE_QUESTION = "Which drugs overcome imatinib resistance in chronic myeloid leukemia?"
EXAMPLE = json.dumps({"queries": [
    "imatinib resistance chronic myeloid leukemia",
    'TITLE_ABS:("imatinib resistance" OR "imatinib-resistant") AND TITLE_ABS:(CML OR "chronic myeloid leukemia")',
    'TITLE:(ponatinib OR dasatinib OR nilotinib) AND TITLE_ABS:"T315I"',
]})

_EXAMPLE_QUERIES = frozenset(json.loads(EXAMPLE)["queries"])


def _date_text(today: date, window: DateWindow | None) -> str:
    text = (f"- Today is {today.isoformat()}. Turn relative time (\"last 5 years\", \"recent\") into explicit "
            "PUB_YEAR ranges.")
    if window is not None:
        text += f"\n- This question's time window (\"{window.phrase}\") is {window.clause}: add it to every query."
    return text


@dataclass
class LLMPlanner:
    """``LLMPlanner(llm).plan(question) -> Plan``; ``llm`` is a :class:`bioevidence.loop.llm.LLM`."""

    llm: Any
    max_subqueries: int = MAX_SUBQUERIES
    local_only: bool = False  # the local index executes only some fields: show and accept only those
    temperature: float = 0.3
    max_tokens: int = 8192  # generous: a truncated reply breaks the JSON and collapses the plan
    clock: Callable[[], date] = field(default=date.today)
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not 1 <= self.max_subqueries <= 50:
            raise ConfigurationError(f"max_subqueries must be 1..50, not {self.max_subqueries}")

    def messages(self, question: str, today: date, window: DateWindow | None) -> list[dict[str, str]]:
        system = SYSTEM.format(n=self.max_subqueries, ands=MAX_ANDS, dates=_date_text(today, window),
                               fields=prompt_reference(local_only=self.local_only),
                               example_question=EXAMPLE_QUESTION, example=EXAMPLE)
        # One user turn: some chat templates (llama.cpp's "gemma") silently drop system messages.
        return [{"role": "user", "content": f"{system}\n\nQuestion: {question.strip()}"}]

    def plan(self, question: str) -> Plan:
        today = self.clock()
        window = resolve_dates(question, today)
        plan = Plan(question, [])
        try:
            exchange = self.llm.complete_json(self.messages(question, today, window),
                                              plan_schema(self.max_subqueries), name="search_plan",
                                              temperature=self.temperature, max_tokens=self.max_tokens)
            queries = [str(q) for q in exchange.value["queries"]]
            plan.model_calls = len(exchange.turns)
        except ModelError as exc:  # MalformedReply after the retry at temperature 0, or no usable reply
            log.warning("planner reply unusable (%s); searching the raw question", exc.message)
            turns = getattr(exc, "turns", ())
            plan.model_calls = len(turns) or 1
            query = _with_window(raw_query(question) or '""', window)
            plan.subqueries = [SubQuery(query, "broad", self.weight)]
            plan.fallback = f"the planner's reply was unusable twice ({exc.message}); searched the raw question"
            return plan
        planned = list(dict.fromkeys(q.strip() for q in queries if q and q.strip()))[: self.max_subqueries]
        copied = {_with_window(q, window) for q in planned if q in _EXAMPLE_QUERIES}
        planned = [_with_window(q, window) for q in planned]
        for query in planned:
            reasons = (["copied from the prompt's example, not planned for this question"] if query in copied
                       else self.check(query))
            if reasons:
                log.warning("planner subquery rejected: %s: %s", query, "; ".join(reasons))
                plan.rejected.append((query, reasons))
            else:
                plan.subqueries.append(SubQuery(query, _tier(query), self.weight))
        if not plan.subqueries:
            plan.subqueries = [SubQuery(q, _tier(q), self.weight) for q in planned]
            plan.fallback = "all subqueries rejected by the validator; searched unchanged"
        return plan

    def check(self, query: str) -> list[str]:
        """Reasons to reject ``query`` (none: accept); warnings are logged."""
        result = validate(query, max_ands=MAX_ANDS)
        if not result.valid or result.ast is None:
            return result.errors
        leaves = terms(result.ast)
        if not any(not isinstance(t, Term) or re.search(r"[A-Za-z0-9]", t.text) for t in leaves):
            return ["no search words, only punctuation"]
        for warning in result.warnings:
            log.info("planner subquery %s: %s", query, warning)
        if self.local_only:
            off = sorted(f for f in fields_used(result.ast) if (g := get_field(f)) is None or not g.local)
            if off:
                return [f"field {', '.join(off)} is not available in the local index"]
        return []


def _with_window(query: str, window: DateWindow | None) -> str:
    if window is None or "PUB_YEAR" in query.upper():
        return query
    return f"({query}) AND {window.clause}"


def _tier(query: str) -> str:
    if ":" not in query:
        return "broad"
    return "synonym" if " OR " in query else "precise"
