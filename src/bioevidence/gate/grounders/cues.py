"""Semantic cues (review only, BEV022): negated, hedged or animal-only quotes for a positive human claim.

English regular expressions over supporting items' quotes; known blind spots (``nonresponsive``,
negation far from the verb) are accepted. Findings go to a person, never back to the model.
"""

from __future__ import annotations

import re
from typing import Any

from ..findings import Finding
from ..grounding import Grounding, finding
from .common import items, requested_uses, scope_tokens

NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|without|failed to|did not|does not|lack(?:s|ed)? of)\b", re.I)
HEDGE = re.compile(r"\b(?:may|might|could|possibly|potentially|suggests?|appears? to|hypothesi[sz]e)\b", re.I)
ANIMAL = re.compile(r"\b(?:mice|mouse|murine|rats?|zebrafish|xenografts?|in vitro|cell lines?)\b", re.I)
HUMAN = re.compile(r"\b(?:patients?|human|humans|subjects|participants|women|men|children|cohort)\b", re.I)


class CueChecker:
    name = "semantic-cues"

    def __init__(self, negative_predicates: tuple[str, ...] = ("not_associated_with", "does_not_support"),
                 human_scope: tuple[str, ...] = ("NCBITaxon:9606",), hedges: bool = False) -> None:
        self.negative_predicates = negative_predicates
        self.human_scope = human_scope
        self.hedges = hedges

    def ground(self, record: dict[str, Any]) -> Grounding:
        uses = requested_uses(record)
        raw = record.get("statement")
        statement: dict[str, Any] = raw if isinstance(raw, dict) else {}
        positive = str(statement.get("predicate")) not in self.negative_predicates
        human = any(t in self.human_scope for t in scope_tokens(record))
        supporting: set[str] = set()
        for line in statement.get("evidence_lines") or []:
            if isinstance(line, dict) and line.get("direction") == "supports":
                supporting.update(line.get("evidence_item_ids") or [])
        found: list[Finding] = []
        for index, item in items(record):
            quote = item.get("extracted_text")
            if not isinstance(quote, str) or item.get("id") not in supporting:
                continue
            path = f"$.evidence_items[{index}].extracted_text"
            if positive and (m := NEGATION.search(quote)):
                found.append(finding("BEV022", f"the quote is negated ('{m.group(0)}') but supports a positive claim",
                                     path, uses))
            if self.hedges and (m := HEDGE.search(quote)):
                found.append(finding("BEV022", f"the quote is hedged ('{m.group(0)}')", path, uses))
            if human and (m := ANIMAL.search(quote)) and not HUMAN.search(quote):
                found.append(finding("BEV022", f"the quote is about '{m.group(0)}' only, for a human-scoped claim",
                                     path, uses))
        return Grounding(found)
