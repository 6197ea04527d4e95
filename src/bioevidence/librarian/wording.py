"""A search plan in words, for the people who read an answer.

:func:`describe` turns one Europe PMC query (:mod:`bioevidence.librarian.query`) into a phrase a
curator reads without knowing the syntax::

    TITLE_ABS:(KRAS OR KRAS2) AND (resistance OR lung)
    -> KRAS or KRAS2 in the title or abstract, and resistance or lung anywhere

Fields are named as a reader says them (``the title or abstract``, ``Methods sections``); long
alternatives are cut after :data:`SHOWN` terms with "and N more". A query that does not parse is
returned as it is (it was never run). :func:`describe_plan` gives one line per subquery, with its tier.
"""

from __future__ import annotations

from .fields import get_field
from .query import Node, Not, Or, QuerySyntaxError, Range, Term, parse

__all__ = ["SHOWN", "describe", "describe_plan"]

SHOWN = 6  # alternatives named before "and N more"
_PLACES = {"TITLE": "the title", "ABSTRACT": "the abstract", "TITLE_ABS": "the title or abstract",
           "BODY": "the body text", "KW": "the keywords", "AUTH": "the authors", "JOURNAL": "the journal name",
           "PUB_YEAR": "the publication year"}
_TIERS = {"broad": "broad search", "synonym": "with synonyms", "precise": "precise search"}


def _place(name: str | None) -> str:
    if not name:
        return "anywhere"
    known = _PLACES.get(name.upper())
    if known:
        return f"in {known}"
    found = get_field(name)
    return f"in {found.description[0].lower() + found.description[1:]}" if found is not None else f"in {name}"


def _word(term: Term) -> str:
    text = term.text
    return f"“{text}”" if term.phrase or any(ch in text for ch in " ,;") else text


def _alternatives(words: list[str]) -> str:
    if len(words) > SHOWN:
        return "any of " + ", ".join(words[:SHOWN]) + f" and {len(words) - SHOWN} more"
    if len(words) == 1:
        return words[0]
    return ("any of " if len(words) > 2 else "") + ", ".join(words[:-1]) + f" or {words[-1]}"


def _describe(node: Node) -> str:
    if isinstance(node, Term):
        found = get_field(node.field) if node.field else None
        if found is not None and found.kind in ("flag", "fixed", "identifier"):
            return f"{node.field} is {node.text}"
        return f"{_word(node)} {_place(node.field)}"
    if isinstance(node, Range):
        return f"{_place(node.field)[3:] if node.field else 'date'} from {node.lo} to {node.hi}"
    if isinstance(node, Not):
        return f"not ({_describe(node.child)})"
    if isinstance(node, Or):
        fields = {c.field for c in node.children if isinstance(c, Term)}
        if all(isinstance(c, Term) for c in node.children) and len(fields) == 1:
            words = [_word(c) for c in node.children if isinstance(c, Term)]
            return f"{_alternatives(words)} {_place(next(iter(fields)))}"
        return " or ".join(_describe(c) for c in node.children)
    parts = [_describe(c) for c in node.children]
    return ", and ".join(parts)


def describe(query: str) -> str:
    """``query`` in words (see the module docstring); unparsable queries come back unchanged."""
    try:
        return _describe(parse(query))
    except QuerySyntaxError:
        return query


def describe_plan(plan: dict[str, object]) -> list[str]:
    """One line per subquery of ``Plan.to_json()``: its tier in words, then the query in words."""
    out = []
    subqueries = plan.get("subqueries")
    for sub in subqueries if isinstance(subqueries, list) else []:
        tier = _TIERS.get(str(sub.get("tier", "")), str(sub.get("tier", "")))
        out.append(f"{tier}: {describe(str(sub.get('query', '')))}" if tier else describe(str(sub.get("query", ""))))
    return out
