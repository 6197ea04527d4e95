"""The rule catalogue: every code the gate can emit, with its fixed severity, scope and route.

Codes and meanings match bioai-evidence-validator 0.8.0 (26 ``BEV`` codes plus ``SCHEMA`` and
``RECORD_INTEGRITY``) so the same record gets the same codes; BEV027-BEV036 and
GROUNDER_FAILURE are ours (findings the reference cannot make).

* severity: ``error`` rejects a use, ``review`` sends it to a person; ``warning`` (a fixable
  slip that does not change the verdict) and ``info`` (a note) block nothing.
* scope: ``all`` blocks every requested use, ``use`` only the use it names.
* route: where the feedback loop sends the finding. ``fixable`` goes back to the model as an
  exact correction; ``judgment`` and ``policy`` go to a person and are never fed back (a model
  is not asked to hide evidence against its own answer); ``cannot-confirm`` goes to a person
  because no model can fix it (missing open full text, unconfirmable source); ``operational``
  is a pipeline fault (re-pin the source) reported to the operator; ``note`` is shown and never
  acted on.

``docs/rules.md`` is generated from this module (``python -m bioevidence.gate.rules``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

ROUTES = ("fixable", "judgment", "policy", "cannot-confirm", "operational", "note")
SEVERITIES = ("error", "review", "warning", "info")
#: Severities that decide a use (the others are shown, never blocking).
BLOCKING = frozenset({"error", "review"})


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    severity: str
    scope: str
    route: str
    emitted_by: str
    message: str
    #: What to do about it, in one sentence: shown under a finding that carries no exact ``fix``.
    remedy: str = ""


def _r(code: str, severity: str, scope: str, route: str, by: str, message: str) -> Rule:
    return Rule(code, severity, scope, route, by, message)


_RULES: tuple[Rule, ...] = (
    _r("SCHEMA", "error", "all", "fixable", "schema",
       "The record does not match the JSON Schema of records (structure, types, enums, dates, required fields)."),
    _r("RECORD_INTEGRITY", "error", "all", "fixable", "integrity",
       "Profile binding, requested uses, identifiers or references inside the record are inconsistent."),
    _r("BEV001", "error", "all", "policy", "contracts",
       "The statement is rejected or superseded and cannot be admitted."),
    _r("BEV002", "error", "all", "operational", "contracts",
       "A source's observed_sha256 differs from its frozen sha256."),
    _r("BEV003", "error", "all", "fixable", "contracts",
       "Predicate, subject type or object type is outside the profile's allowlist."),
    _r("BEV004", "review", "all", "judgment", "contracts",
       "A contradicting evidence line exists and remains unresolved."),
    _r("BEV005", "error", "all", "fixable", "contracts",
       "A supporting evidence item's scope differs from the statement's scope."),
    _r("BEV006", "review", "all", "fixable", "contracts",
       "No resolved, scope-matched supporting evidence item."),
    _r("BEV007", "error", "use", "fixable", "contracts",
       "A required evidence type is absent among the supporting items."),
    _r("BEV008", "review", "use", "policy", "contracts",
       "A required evidence type is backed only by LLM extraction, which the use does not permit."),
    _r("BEV009", "review", "use", "policy", "contracts",
       "A required evidence type is backed only by normalized string matching, which the use does not permit."),
    _r("BEV010", "error", "use", "policy", "contracts",
       "The use requires explicit human acceptance, which is absent."),
    _r("BEV011", "error", "use", "policy", "contracts",
       "A human rejection is present for the use."),
    _r("BEV012", "review", "use", "policy", "contracts",
       "A human deferral is present for the use."),
    _r("BEV013", "review", "use", "policy", "contracts",
       "Evidence mixes only LLM extraction and string matching without both permissions."),
    _r("BEV014", "error", "all", "operational", "grounders",
       "Pinned snapshot bytes do not hash to the frozen sha256."),
    _r("BEV015", "review", "all", "cannot-confirm", "grounders",
       "The evidence cannot be confirmed from pinned sources (bytes missing, not grounded, no open full "
       "text, quote under five words, several table rows match, non-human gene scope, unsupported item)."),
    _r("BEV016", "error", "all", "fixable", "grounders",
       "A cited identifier does not exist (PMID/DOI, ontology term, HGNC id or symbol, RefSeq accession, "
       "position beyond the chromosome end, table row)."),
    _r("BEV017", "error", "all", "fixable", "grounders",
       "The record disagrees with its pinned source (wrong paper or title, record hash differs, quote not in "
       "the paper, cut inside a word or dropping a negating prefix, a changed citation marker, label is not the "
       "term's name, wrong build, table value)."),
    _r("BEV018", "review", "all", "fixable", "domain grounders (none built in)",
       "The source holds evidence the record leaves out."),
    _r("BEV019", "error", "all", "fixable", "literature",
       "The cited paper is retracted."),
    _r("BEV020", "review", "use", "cannot-confirm", "contracts",
       "A type listed in verified_evidence_types has no item a grounder verified."),
    _r("BEV021", "review", "use", "judgment", "contracts",
       "The use needs an accepting independent (non-human) review that is absent or not only accepting."),
    _r("BEV022", "review", "all", "judgment", "semantic",
       "The quote is negated for a positive claim, hedged, or only animal/in-vitro for a human-scoped item."),
    _r("BEV023", "error", "all", "fixable", "identifiers",
       "The identifier is obsolete, withdrawn or not the current name (replacement, previous symbol, alias, case)."),
    _r("BEV024", "error", "all", "fixable", "identifiers",
       "The identifier is malformed or of the wrong kind for its place (ontology root or prefix, HGVS, "
       "unversioned accession, locator not key=value, unknown table column)."),
    _r("BEV025", "review", "all", "judgment", "crosscheck",
       "A pinned reference resource contradicts the claim or its supporting evidence."),
    _r("BEV026", "review", "all", "judgment", "definitions (not built in)",
       "Measurements contradict a marker the ontology defines the claimed term to have or lack (experimental)."),
    _r("BEV027", "review", "all", "judgment", "literature",
       "The cited paper carries an expression of concern; the notice is named and a person decides."),
    _r("BEV028", "review", "all", "judgment", "literature",
       "The quote stops mid-sentence just before a negation or restriction (not, no, without, except, only in, "
       "in mice); the rest of the sentence is named."),
    _r("BEV029", "review", "all", "operational", "validator",
       "Evidence was validated without what checks it: publication quotes with no literature source, or "
       "identifiers with no release of the ontology or gene list the record's profile names."),
    _r("BEV030", "warning", "all", "fixable", "literature",
       "The quote is in the paper but not where its locator says; the right locator is named (the verdict "
       "does not change)."),
    _r("BEV031", "info", "all", "note", "literature",
       "The quote was verified outside the main text (reference list, caption, table, footnote, back matter, "
       "supplementary material, sub-article); the part is named."),
    _r("BEV032", "review", "all", "policy", "validator",
       "The quote comes from a part of the paper the profile's quote_parts does not allow."),
    _r("BEV033", "error", "all", "fixable", "literature",
       "The source's declared source_type contradicts its pinned bytes or identifier (a paper declared "
       "web_page, dataset_snapshot or local_file)."),
    _r("BEV034", "review", "all", "judgment", "direction",
       "The stance model reads a verified quote as contradicting the direction of the evidence line that cites "
       "it (a supporting line's quote contradicts the claim, or a contradicting line's quote supports it), with "
       "a confidence at or above the model card's threshold; the sentence, the line, the label and the "
       "confidence are named."),
    _r("BEV035", "review", "all", "cannot-confirm", "direction",
       "The direction check could not run: the profile requires it and the stance model cannot run here "
       "(its runtime or its weights are not installed), or the check failed (fail closed: the record is not "
       "admitted without a person)."),
    _r("BEV036", "info", "all", "note", "direction",
       "The direction check did not run because the stance model cannot run here (its runtime or its weights "
       "are not installed; the profile leaves it optional: direction auto); the note says which."),
    _r("GROUNDER_FAILURE", "error", "all", "operational", "validator",
       "A grounder failed while checking the record; it is not admitted (fail closed). Report the message."),
)

#: What to do about each code when a finding names no exact correction (plain text: no Markdown,
#: it is printed in terminals as well as in Markdown reports).
REMEDIES: dict[str, str] = {
    "SCHEMA": "Correct the field the message names (the allowed values are listed there); "
              "bioevidence schema prints the schema of records.",
    "RECORD_INTEGRITY": "Make the record agree with itself and its profile as the message says "
                        "(profile_id, requested_uses, unique ids, references that resolve).",
    "BEV001": "Only a proposed or accepted statement can be admitted; write a new record for the current statement.",
    "BEV002": "Re-pin the source (bioevidence ground) or set sha256 to the hash of the bytes the record cites.",
    "BEV003": "Use a predicate and entity types the profile allows (bioevidence profiles lists them), or "
              "validate with a profile that allows these.",
    "BEV004": "A person weighs the contradicting evidence (bioevidence review add); the record stays in "
              "review while the contradicting line is in it.",
    "BEV005": "Give the supporting evidence item the statement's scope, or cite evidence of that scope.",
    "BEV006": "Add an evidence line that supports the statement, citing items of the statement's scope.",
    "BEV007": "Add supporting evidence items of the missing types.",
    "BEV008": "Add evidence extracted another way (manual curation, a deterministic parser), or have a "
              "person review it (bioevidence review add).",
    "BEV009": "Add evidence extracted another way than string matching, or have a person review it.",
    "BEV010": "A person must accept the record for this use: bioevidence review add, then "
              "bioevidence review decide N accept.",
    "BEV011": "A person rejected this use; the record is not admitted for it unless a new review accepts it.",
    "BEV012": "A person deferred the decision; a later decision (bioevidence review decide) settles it.",
    "BEV013": "Add evidence extracted another way (manual curation, a deterministic parser), or have a "
              "person review it.",
    "BEV014": "The pinned bytes are corrupted: re-pin the source (bioevidence ground) and check the store "
              "with bioevidence sources verify.",
    "BEV015": "Pin the source's bytes (bioevidence ground, or bioevidence sources pin-local for a local "
              "file) and cite a longer verbatim quote; otherwise a person confirms it.",
    "BEV016": "Cite an identifier that exists (the message names what was looked up and where).",
    "BEV017": "Make the record say what the pinned source says: the message names the passage, title or "
              "value it differs from.",
    "BEV018": "Add the evidence the source holds, or have a person decide it does not matter.",
    "BEV019": "Cite a paper that is not retracted.",
    "BEV020": "Pin the source (bioevidence ground, then --snapshot-dir) so a grounder can verify the item, "
              "or a person reviews it.",
    "BEV021": "Have an independent reviewer (software that made none of the evidence) accept the record "
              "for this use.",
    "BEV022": "A person reads the quote in its paper and decides whether it supports the claim as stated.",
    "BEV023": "Use the current identifier or name the message gives.",
    "BEV024": "Write the identifier in the form its place needs (the message names it).",
    "BEV025": "A person weighs the reference resource against the claim.",
    "BEV026": "A person weighs the ontology's definition against the measurements.",
    "BEV027": "A person reads the expression of concern and decides whether the paper can still be cited.",
    "BEV028": "Quote the sentence to its end, or have a person check that the rest does not change the claim.",
    "BEV029": "Pin the cited papers with bioevidence ground and pass --snapshot-dir (or set "
              "BIOEVIDENCE_STORE), and the profile's releases with bioevidence sources pull; --no-grounding "
              "accepts them unchecked.",
    "BEV030": "Set the locator to the one the message names (the verdict does not change).",
    "BEV031": "Nothing to do: a note of where the quote was found.",
    "BEV032": "Quote the claim from an allowed part of the paper, or a person decides this part can support it.",
    "BEV033": "Set source_type to publication (the source is a paper).",
    "BEV034": "A person reads the sentence in its paper and decides whether it bears out the claim as stated; "
              "cite it in the line its meaning fits, or accept the record with a review (bioevidence review add).",
    "BEV035": "Install what the message names (the runtime: pip install 'bioevidence[librarian]'; the weights: "
              "tools/train_stance.py) and validate again, or a person reads each quote against its evidence line.",
    "BEV036": "Nothing blocks; the note names what would let the direction check run.",
    "GROUNDER_FAILURE": "An operator fixes the cause the message names (re-pin or re-read the source) and "
                        "validates again.",
}

CATALOGUE: tuple[Rule, ...] = tuple(replace(r, remedy=REMEDIES[r.code]) for r in _RULES)

RULES: dict[str, Rule] = {rule.code: rule for rule in CATALOGUE}

STRUCTURAL = frozenset({"SCHEMA", "RECORD_INTEGRITY"})


def rule(code: str) -> Rule:
    """The catalogue entry for ``code``; an unknown code is a programming error."""
    try:
        return RULES[code]
    except KeyError:
        raise KeyError(f"rule {code!r} is not in the catalogue (bioevidence.gate.rules)") from None


def render_markdown() -> str:
    """``docs/rules.md``: the catalogue as a table, with one anchor per code."""
    lines = [
        "# Rule codes",
        "",
        "Generated from `src/bioevidence/gate/rules.py` by `python -m bioevidence.gate.rules`;"
        " a test fails when this file is stale.",
        "",
        "* **severity**: `error` rejects a use; `review` sends it to a person; `warning` and `info` block"
        " nothing (a slip with its fix, a note).",
        "* **scope**: `all` blocks every requested use; `use` only the use named in `blocking_uses`.",
        "* **route**: `fixable` findings go back to the model as exact corrections; `judgment` and `policy`"
        " go to a person and are never fed back; `cannot-confirm` goes to a person because no model can fix"
        " it; `operational` is a pipeline fault for the operator; `note` is shown and never acted on.",
        "",
        "| code | severity | scope | route | emitted by | meaning | what to do |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in CATALOGUE:
        lines.append(
            f'| <a id="{r.code.lower()}"></a>`{r.code}` | {r.severity} | {r.scope} | {r.route} '
            f"| {r.emitted_by} | {r.message} | {r.remedy} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    import sys
    from pathlib import Path

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/rules.md")
    target.write_text(render_markdown(), encoding="utf-8")
    print(f"wrote {target}")
