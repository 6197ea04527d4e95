"""Semantic cues (review only, BEV022): negated, hedged or animal-only quotes for a positive human claim.

English regular expressions over supporting items' quotes; known blind spots (``nonresponsive``,
negation far from the verb) are accepted. Findings go to a person, never back to the model.

Three cues, by name: ``negation`` (a negated finding supporting a positive claim), ``animal`` (a
quote only about a non-human organism for a human-scoped claim) and ``hedge`` (``may``, ``suggests``).
The built-in literature profile runs ``negation`` on every record (``checks.cues: [negation]``);
``--cues`` runs ``negation`` and ``animal`` (as before), ``--no-cues`` none. The figures behind the
rules (genuine whole-paper CIViC quotes each cue sends to review): docs/grounders.md "Cues".
"""

from __future__ import annotations

import re
from typing import Any

from ..findings import Finding
from ..grounding import CheckContext, Grounding, finding
from .common import items, requested_uses, scope_tokens

# A negated *finding*, not any "no" or "not": a negator, at most two words, then a word that states a
# result ("was not associated", "did not predict", "not significantly improved", "failed to respond"),
# or "no" before a result noun ("no association", "no significant difference"). Boilerplate ("no
# competing interests", "the funders had no role", "not applicable", "No. 3090", PLOS's "does not alter
# the authors' adherence", "no evidence of disease"), "data not shown",
# "not only", "whether or not", "with or without" and "lack of" (resistance, a direction) are not
# negations of a finding. Measured on genuine whole-paper CIViC quotes (tools/eval_direction.py).
_RESULT = (r"(?:associat\w*|correlat\w*|relat(?:ed|ion\w*)|linked|predict\w*|signific\w*|differ\w*|"
           r"affect\w*|improv\w*|increas\w*|decreas\w*|reduc\w*|prolong\w*|respon\w*|benefi\w*|"
           r"influenc\w*|impact\w*|effect\w*|confer\w*|sensiti[sz]\w*|contribut\w*|prognos\w*|superior|"
           r"better|worse|detect\w*|observ\w*|found|demonstrat\w*|support\w*|confirm\w*|chang\w*|alter(?:s|ed)?)")
_NOUN = (r"(?:associations?|correlations?|relationships?|relations?|links?|differences?|effects?|impacts?|"
         r"benefits?|improvements?|changes?|increases?|decreases?|responses?|evidence|influences?|"
         r"prognostic|predictive|survival)")
NEGATION = re.compile(
    r"\b(?<!whether )(?<!or )(?:not|never|nor|cannot|failed to|fails? to|unable to|(?:did|does|do|was|were|is|are|"
    r"could|has|have|had)n[o\u2019']t)(?!\s+(?:only|shown|applicable|known|available|determined|done|evaluable|"
    r"assessed|tested|performed|included|reported|alter the authors)\b)(?:\s+[\w-]+){0,2}?\s+" + _RESULT + r"\b"
    r"|\bno(?:\s+(?:statistically|significant|significantly|clear|apparent|obvious|evident|meaningful|major|"
    r"further|additional|direct|strong|consistent|overall|such))*\s+" + _NOUN + r"\b(?!\s+of\s+disease)", re.I)
# The same pattern, case-sensitive, for ASCII text lower-cased first (every letter of it is lower case):
# on ASCII text that is exactly what IGNORECASE matches, at the same offsets, at about half the cost.
_NEGATION_LOWER = re.compile(NEGATION.pattern)
# Every match of NEGATION starts with a word holding one of these (lower-cased): "not", "nor" ("cannot",
# "didnot"), "never", "fail", "unable", "n't" ("didn't"), or "no" before whitespace (what ``\s`` matches in
# ASCII); in other text "no" stands for the first two and the last, and "n\u2019t" is added.
_NEGATION_NEEDLES_ANY = ("no", "never", "fail", "unable", "n't", "n\u2019t")
_NEGATION_NEEDLES = ("never", "fail", "unable", "n't")
# In ASCII text the other needles are "no" followed by one of these: "not", "nor" and "no" + whitespace
# (what ``\s`` matches in ASCII), found with one scan for "no".
_AFTER_NO = frozenset("tr \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")
HEDGE = re.compile(r"\b(?:may|might|could|possibly|potentially|suggests?|appears? to|hypothesi[sz]e)\b", re.I)
# Non-human organisms only: a human cell line is human, and "rat sarcoma" is in KRAS's name.
ANIMAL = re.compile(r"\b(?:mice|mouse|murine|rats|rat(?!\s+sarcoma)|zebrafish|xenografts?|canine|dogs|feline|cats|"
                    r"drosophila|monkeys|macaques)\b", re.I)
HUMAN = re.compile(r"\b(?:patients?|human|humans|subjects|participants|women|men|children|cohort)\b", re.I)


#: the cues, by name: a profile's ``checks.cues`` lists the ones it runs (``true``: :data:`DEFAULT`)
FAMILIES = ("negation", "animal", "hedge")
#: what ``--cues`` (and ``checks.cues: true``) runs
DEFAULT = ("negation", "animal")


_NEGATIVE_PREDICATE = re.compile(r"(?:^|_)(?:not|no|does_not|do_not|is_not|are_not|lacks?|absent)(?:_|$)")


def negation(quote: str) -> str | None:
    """The negated finding in ``quote`` as written (``NEGATION.search(quote).group(0)``), or ``None``.

    Every match starts at the start of a word holding one of the needles (its negator), so only
    those word starts are tried, in order: the first match is the one ``search`` finds, without a
    regex scan of the whole text. The needles are looked for in the lower-cased text, which holds
    each character at its place and in the case the needles are written, except when a character
    lower-cases to two (``İ``) or IGNORECASE reads ``ı`` as ``i``: then the whole text is searched.
    ASCII text is matched lower-cased with the case-sensitive pattern (what IGNORECASE does there)."""
    low = quote.lower()
    plain = quote.isascii()
    if not plain and (len(low) != len(quote) or "\u0131" in quote):
        m = NEGATION.search(quote)
        return m.group(0) if m is not None else None
    found: list[int] = []
    if plain:
        at, end = low.find("no"), len(low) - 2
        while 0 <= at < end:
            if low[at + 2] in _AFTER_NO:
                found.append(at)
            at = low.find("no", at + 1)
    for needle in _NEGATION_NEEDLES if plain else _NEGATION_NEEDLES_ANY:
        at = low.find(needle)
        while at >= 0:
            found.append(at)
            at = low.find(needle, at + 1)
    starts: set[int] = set()
    for start in found:
        while start > 0 and (quote[start - 1].isalnum() or quote[start - 1] == "_"):  # back over \w
            start -= 1
        starts.add(start)
    pattern, text = (_NEGATION_LOWER, low) if plain else (NEGATION, quote)
    for start in sorted(starts):
        m = pattern.match(text, start)
        if m is not None:
            return quote[m.start():m.end()]
    return None


def negative_predicate(predicate: str, listed: tuple[str, ...] = ()) -> bool:
    """Whether a statement's predicate denies (``not_associated_with``, ``does_not_support_significance``,
    ``has_no_effect_on``, ``lacks``): a negated quote then agrees with the claim. ``listed`` adds a
    profile's own negative predicates whatever their spelling."""
    return predicate in listed or bool(_NEGATIVE_PREDICATE.search(predicate))


class CueChecker:
    """The cues as a check: ``enabled`` ``True`` (``--cues``: :data:`DEFAULT`, plus ``hedge`` with
    ``hedges``) or ``False`` (``--no-cues``) overrides the record's profile (``checks.cues``, the cues it
    names); ``None`` follows it. ``ground`` runs this checker's own cues unconditionally."""

    name = "semantic-cues"
    kind = "cues"

    def __init__(self, negative_predicates: tuple[str, ...] = ("not_associated_with", "does_not_support"),
                 human_scope: tuple[str, ...] = ("NCBITaxon:9606",), hedges: bool = False, *,
                 enabled: bool | None = True) -> None:
        self.negative_predicates = negative_predicates
        self.human_scope = human_scope
        self.hedges = hedges
        self.enabled = enabled
        self.families = (*DEFAULT, "hedge") if hedges else DEFAULT

    def check(self, record: dict[str, Any], context: CheckContext) -> Grounding:
        if self.enabled is None:
            return self.ground(record, context.profile.checks.cues)
        return self.ground(record) if self.enabled else Grounding()

    def ground(self, record: dict[str, Any], families: tuple[str, ...] | None = None) -> Grounding:
        run = self.families if families is None else families
        if not run:
            return Grounding()
        uses = requested_uses(record)
        raw = record.get("statement")
        statement: dict[str, Any] = raw if isinstance(raw, dict) else {}
        positive = not negative_predicate(str(statement.get("predicate")), self.negative_predicates)
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
            if "negation" in run and positive and (negated := negation(quote)) is not None:
                found.append(finding("BEV022", f"the quote is negated ('{negated}') but supports a positive claim",
                                     path, uses))
            if "hedge" in run and (m := HEDGE.search(quote)):
                found.append(finding("BEV022", f"the quote is hedged ('{m.group(0)}')", path, uses))
            if "animal" in run and human and (m := ANIMAL.search(quote)) and not HUMAN.search(quote):
                found.append(finding("BEV022", f"the quote is about '{m.group(0)}' only, for a human-scoped claim",
                                     path, uses))
        return Grounding(found)
