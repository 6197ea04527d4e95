"""Structured outputs of the tools: pydantic models whose JSON Schemas the server publishes.

The shapes are what :mod:`.tools`, :mod:`.corpus` and :mod:`.review` return (the report's own keys,
as ``bioevidence validate`` writes them, plus a finding's ``route``). Fields marked "details" come
with ``details: true``. Librarian items and papers allow extra keys (``details`` gives the
librarian's whole item). The published schemas keep the structure and drop the descriptions
(:func:`.specs.lean`): they let a client check results, while the agent's model reads the tool
descriptions and the values; the descriptions here document the fields for developers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["admitted", "review_required", "rejected"]
Stance = Literal["supports", "contradicts", "neutral", "undetermined"]
DETAILS = "details: true only."


class FixOut(BaseModel):
    action: str = Field(description="replace, remove, add, requote or choose")
    field_path: str
    value: Any = None
    detail: str | None = None


class FindingOut(BaseModel):
    rule_id: str = Field(description="See resource bioevidence://rules.")
    severity: Literal["error", "review", "warning", "info"]
    route: str = Field(description="Who acts: fixable (you), judgment, policy, cannot-confirm, operational (a "
                                   "person), note.")
    message: str
    field_path: str
    blocking_uses: list[str] = Field(default_factory=list)
    fix: FixOut | None = None


class UseDecisionOut(BaseModel):
    use: str
    admission_status: Status
    reason_codes: list[str]


class ValidationOut(BaseModel):
    record_id: str | None = None
    overall_status: Status
    admitted: bool = Field(description="True only when every requested use was admitted.")
    use_decisions: list[UseDecisionOut]
    findings: list[FindingOut]
    verified_evidence_item_ids: list[str]
    report: dict[str, Any] | None = Field(default=None, description="The full report. " + DETAILS)


class ReviseStepOut(BaseModel):
    round: int
    outcome: Literal["admitted", "feedback", "to_person", "exhausted", "stopped"]
    reason: str
    to_person: bool
    routes: list[str]
    feedback: list[str] = Field(description="One line per fixable finding, with its fix (outcome feedback).")
    carried: list[str] = Field(description="Verified item ids carried from the previous round.")
    error: str | None = Field(default=None, description="Why a draft could not be built into a record.")
    record_id: str | None = None
    validation: ValidationOut | None = None
    record: dict[str, Any] | None = Field(default=None, description="The record validated. " + DETAILS)


class PassageOut(BaseModel):
    id: str = Field(description="A locator ending #<id> names it.")
    part: str
    kind: str
    section: str
    label: str
    text: str = Field(description="Printed text, exactly what quotes are checked against.")
    sha256: str | None = Field(description="Of the pinned bytes it was read from.")
    pinned_from: Literal["fulltext", "abstract", "metadata"]


class PassagesOut(BaseModel):
    work: str
    title: str | None
    retracted: bool
    expression_of_concern: bool
    locator: str
    named_by: str = Field(description="anchor, part, type, section or label.")
    total: int
    truncated: bool
    passages: list[PassageOut]


class GroundOut(BaseModel):
    record: dict[str, Any] = Field(description="The record with sha256, observed_sha256, retrieved_at pinned.")
    cited: list[str]
    pinned: list[str]
    known: list[str]
    no_fulltext: list[str]
    not_found: list[str]
    failed: dict[str, str]
    kept: dict[str, str] = Field(default_factory=dict, description="Refreshes that answered worse: the earlier "
                                 "pin stays.")
    complete: bool


class ItemOut(BaseModel):
    """A verbatim sentence span of a pinned paper."""

    model_config = ConfigDict(extra="allow")

    rank: int
    doc_id: str
    text: str
    locator: str = Field(description="<work>#<passage id> (get_passage).")
    start: int | None = Field(default=None, description="Offset of text in the passage.")
    end: int | None = None
    sha256: str = Field(description="Of the pinned bytes the text was cut from.")
    stance: Stance | None = Field(default=None, description="Toward the question read as a claim.")
    stance_by: str | None = Field(default=None, description="model, llm, relevance (not about the question: "
                                                            "neutral) or unavailable (no stance weights).")
    stance_confidence: float | None = None
    relevant: bool | None = None
    relevance: str | None = Field(default=None, description="Why it is not about the question.")
    retracted: bool = False
    expression_of_concern: bool = False


class PaperOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    rank: int
    doc_id: str
    title: str | None = None
    year: int | str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    doi: str | None = None
    retracted: bool = False
    expression_of_concern: bool = False


class AskOut(BaseModel):
    question: str
    items: list[ItemOut]
    papers: list[PaperOut]
    withheld_retracted: list[dict[str, Any]]
    fallback: str | None = None
    stance_note: str | None = Field(default=None, description="Why no sentence shows a direction.")
    plan: dict[str, Any] | None = Field(default=None, description=DETAILS)
    source_artifacts: list[dict[str, Any]] | None = Field(default=None, description=DETAILS)
    evidence_items: list[dict[str, Any]] | None = Field(default=None, description=DETAILS)


class FindOut(AskOut):
    works: list[str] = Field(description="Identifiers of the papers found: pin them to cite them.")


class SentenceOut(BaseModel):
    text: str
    cites: list[int] = Field(description="Item ranks.")


class LeftOutOut(BaseModel):
    item: int
    why: str


class AnswerOut(BaseModel):
    question: str
    mode: Literal["extractive", "model"]
    direction: Literal["supports", "contradicts", "mixed", "undetermined", "insufficient"] = Field(
        description="From the papers' stances; undetermined: relevant evidence, no direction; insufficient: "
                    "nothing relevant.")
    verdict: str
    deciding_items: list[int] = Field(default_factory=list)
    sentences: list[SentenceOut]
    admitted_items: list[int] = Field(description="Items the gate verified: the only ones cited.")
    left_out: list[LeftOutOut]
    dropped_sentences: list[dict[str, Any]]
    papers_by_stance: dict[str, int]
    record_status: str | None = None
    items: list[ItemOut]
    record_id: str | None = None
    validation: ValidationOut | None = None
    stance_note: str | None = None
    record: dict[str, Any] | None = Field(default=None, description="The answer's evidence record. " + DETAILS)


class WorkOut(BaseModel):
    id: str
    ids: list[str] = Field(default_factory=list)
    title: str | None = None
    year: int | None = None
    pinned: Literal["fulltext", "abstract", "metadata"]
    sha256: str = Field(description="What a record citing it pins.")
    retrieved_at: str
    indexed: bool | None = None
    not_found: bool = Field(default=False, description="The resolver said there is no such work.")
    retracted: bool = False
    expression_of_concern: bool = False


class PinnedOut(BaseModel):
    asked: str
    status: Literal["pinned", "known", "no_fulltext", "not_found", "kept", "failed"]
    error: str | None = None
    id: str | None = None
    ids: list[str] = Field(default_factory=list)
    title: str | None = None
    year: int | None = None
    pinned: Literal["fulltext", "abstract", "metadata"] | None = None
    sha256: str | None = None
    retrieved_at: str | None = None
    indexed: bool | None = None
    retracted: bool = False
    expression_of_concern: bool = False


class PinOut(BaseModel):
    works: list[PinnedOut]
    pinned: list[str]
    known: list[str]
    no_fulltext: list[str]
    not_found: list[str]
    failed: dict[str, str]
    kept: dict[str, str] = Field(default_factory=dict)
    complete: bool


class IndexOut(BaseModel):
    index: str
    docs: int
    passages: int
    added: list[str]
    sources: list[str]
    seconds: float


class CorpusOut(BaseModel):
    store: str
    index: str | None = None
    counts: dict[str, int]
    works: list[WorkOut]
    found: bool | None = None
    total: int | None = None
    offset: int | None = None
    next_offset: int | None = None


class QueuedOut(BaseModel):
    entry: int
    record_id: str | None = None
    state: str
    reason: str
    asks: str = Field(description="What the reviewer is asked to decide.")
    overall_status: Status
    reason_codes: list[str]
    routes: list[str]
    rounds: int


class DecisionOut(BaseModel):
    id: int
    decision: Literal["accept", "reject", "defer"]
    reviewer_id: str
    reviewer_name: str | None = None
    rationale: str
    uses: list[str]
    decided_at: str
    overall_status_after: Status


class ReviewOut(BaseModel):
    entry: int
    record_id: str | None = None
    state: str = Field(description="open, or the latest decision.")
    decided: bool
    overall_status: Status = Field(description="The record's status now (after the decisions).")
    admitted: bool
    reason: str
    reason_codes: list[str]
    queued_at: str
    decisions: list[DecisionOut]
    record: dict[str, Any] | None = Field(default=None, description=DETAILS)
    validation: dict[str, Any] | None = Field(default=None, description="The gate's verdict on it now. " + DETAILS)
