"""Structured outputs of the tools: pydantic models whose JSON Schemas the server publishes.

The shapes are what :mod:`.tools` returns (the report's own keys, as ``bioevidence validate``
writes them, plus a finding's ``route``). Librarian items allow extra keys: the librarian may
add fields (offsets, stance) without breaking a client that validates against the schema.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["admitted", "review_required", "rejected"]


class FixOut(BaseModel):
    action: str = Field(description="replace | remove | add | requote | choose")
    field_path: str
    value: Any = None
    detail: str | None = None


class FindingOut(BaseModel):
    rule_id: str = Field(description="A code of the rule catalogue (resource bioevidence://rules).")
    severity: Literal["error", "review", "warning", "info"]
    route: str = Field(description="Who acts on it: fixable (the model), judgment, policy, cannot-confirm, "
                                   "operational (a person), note.")
    message: str
    field_path: str
    blocking_uses: list[str]
    fix: FixOut | None = None


class UseDecisionOut(BaseModel):
    use: str
    admission_status: Status
    reason_codes: list[str]


class ValidationOut(BaseModel):
    """The gate's verdict on one record."""

    record_id: str | None
    overall_status: Status
    admitted: bool = Field(description="True only when the gate admitted the record for every requested use.")
    use_decisions: list[UseDecisionOut]
    findings: list[FindingOut]
    verified_evidence_item_ids: list[str] = Field(description="Items a grounder confirmed against pinned bytes.")
    report: dict[str, Any] = Field(description="The full report, as `bioevidence validate` writes it.")


class ReviseStepOut(BaseModel):
    """One round of revise(): what the loop decided and the lines it sends back to the model."""

    round: int
    outcome: Literal["admitted", "feedback", "to_person", "exhausted", "stopped"]
    reason: str
    to_person: bool
    routes: list[str]
    feedback: list[str] = Field(description="One line per fixable finding: location, message, fix. Empty unless "
                                            "outcome is feedback.")
    carried: list[str] = Field(description="Ids of verified items put back from the previous round.")
    error: str | None = Field(description="Why the proposal could not be built into a record (a draft error).")
    record: dict[str, Any] | None = Field(description="The record validated (after building a draft and "
                                                      "carrying verified evidence).")
    validation: ValidationOut | None


class PassageOut(BaseModel):
    id: str = Field(description="Passage id: a locator ending #<id> names it.")
    part: str = Field(description="title, abstract, body, caption, table, footnote, back-matter, supplementary, "
                                  "references or sub-article.")
    kind: str
    section: str
    label: str
    text: str = Field(description="The passage's printed text, exactly as the gate reads it.")
    sha256: str | None = Field(description="SHA-256 of the pinned bytes the passage was read from.")
    pinned_from: Literal["fulltext", "abstract", "metadata"]


class PassagesOut(BaseModel):
    work: str = Field(description="The work's catalogue key (pmid:…, pmcid:… or doi:…).")
    title: str | None
    retracted: bool
    expression_of_concern: bool
    locator: str
    named_by: str = Field(description="How the locator named the passages: anchor, part, type, section, label.")
    total: int
    truncated: bool
    passages: list[PassageOut]


class GroundOut(BaseModel):
    record: dict[str, Any] = Field(description="The record with sha256, observed_sha256 and retrieved_at pinned.")
    cited: list[str]
    pinned: list[str]
    known: list[str]
    no_fulltext: list[str]
    not_found: list[str]
    failed: dict[str, str]
    kept: dict[str, str] = Field(default_factory=dict, description="Works whose refresh answered worse than their "
                                 "pin (no full text, no summary): the earlier pin stays, with the reason.")
    complete: bool = Field(description="Every cited work was pinned or already known.")


class ItemOut(BaseModel):
    """One verbatim evidence item (more keys may follow as the librarian grows them)."""

    model_config = ConfigDict(extra="allow")

    rank: int
    doc_id: str
    title: str | None = None
    year: Any = None
    text: str = Field(description="Verbatim text of the pinned paper.")
    locator: str = Field(description="<work>#<passage id>: get_passage reads the passage.")
    start: int | None = Field(default=None, description="Offset of text in the passage's printed text.")
    end: int | None = Field(default=None, description="End offset of text in the passage's printed text.")
    sha256: str = Field(description="SHA-256 of the pinned paper the text is from.")
    stance: Literal["supports", "contradicts", "neutral", "undetermined"] | None = Field(
        default=None, description="The sentence's stance towards the question read as a claim (undetermined: "
                                  "a direction below the stance model's confidence threshold).")
    stance_by: str | None = Field(default=None, description="model (the offline stance model), relevance (not "
                                                            "about the question, so neutral) or llm.")
    stance_confidence: float | None = Field(default=None, description="The stance model's confidence in the "
                                                                      "label shown.")
    relevant: bool | None = Field(default=None, description="False: the sentence is not about the question "
                                                            "(methods, a caption, another gene or disease).")
    relevance: str | None = Field(default=None, description="Why the sentence is not about the question.")
    retracted: bool = False
    expression_of_concern: bool = False


class AskOut(BaseModel):
    question: str
    fallback: str | None
    plan: dict[str, Any]
    items: list[ItemOut]
    papers: list[dict[str, Any]] = Field(description="The papers the items come from, best first, with flags.")
    withheld_retracted: list[dict[str, Any]] = Field(description="Retracted papers whose sentences were left out.")
    source_artifacts: list[dict[str, Any]]
    evidence_items: list[dict[str, Any]]


class SentenceOut(BaseModel):
    text: str
    cites: list[int] = Field(description="Item numbers (rank in items) the sentence rests on.")


class LeftOutOut(BaseModel):
    item: int
    why: str


class AnswerOut(BaseModel):
    """A cited answer: every cited item was verified by the gate against the pinned papers."""

    question: str
    mode: Literal["extractive", "model"]
    direction: Literal["supports", "contradicts", "mixed", "undetermined", "insufficient"] = Field(
        description="What the evidence says, decided from the papers' stances: undetermined = relevant evidence "
                    "found but no direction shown; insufficient = nothing relevant found.")
    verdict: str = Field(description="The direction in words with the papers counted by stance "
                                     "('Supported: 3 papers support, 1 contradicts.').")
    deciding_items: list[int] = Field(default_factory=list, description="Item numbers of the sentences that "
                                                                        "decided the direction, first to read.")
    sentences: list[SentenceOut]
    admitted_items: list[int] = Field(description="Item numbers the gate verified (the only ones cited).")
    left_out: list[LeftOutOut] = Field(description="Items the gate did not verify, and why.")
    dropped_sentences: list[dict[str, Any]]
    papers_by_stance: dict[str, int]
    record_status: str | None = Field(default=None, description="The gate's verdict on the answer's record.")
    items: list[ItemOut] = Field(description="The verified items, by number.")
    record: dict[str, Any] | None = Field(description="The evidence record of the answer (profile "
                                                      "librarian-evidence), as the gate validated it.")
    validation: ValidationOut | None
