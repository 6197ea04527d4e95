"""The tools as the SDK publishes them: names, argument schemas, short descriptions, annotations.

Each tool is a thin shell over :mod:`.tools`, :mod:`.corpus` or :mod:`.review`. Descriptions are
short on purpose (``tools/list`` is read by the agent's model on every turn; docs/mcp.md gives the
figures): what a tool does, when to use it, and what is worth knowing before calling it. The
published schemas drop pydantic's generated ``title`` keys, which repeat each field's name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver.tools import Tool
from mcp_types import ToolAnnotations
from pydantic import Field

from . import corpus, review, tools
from .models import (
    AnswerOut,
    AskOut,
    CorpusOut,
    FindOut,
    GroundOut,
    IndexOut,
    PassagesOut,
    PinOut,
    QueuedOut,
    ReviewOut,
    ReviseStepOut,
    ValidationOut,
)
from .services import Services

INSTRUCTIONS = """\
bioevidence checks evidence records against pinned papers. Before stating a claim, put it in a record \
and call validate_record: only admitted means the gate confirmed it. revise_step gives exact fixes for \
fixable findings; the rest need a person: queue_for_review, then review_status. ask and answer search \
the local index and quote verbatim; find searches Europe PMC; pin and add_to_index bring papers in; corpus \
lists them; get_passage reads pinned text. find, pin and ground use the network. details: true returns \
full payloads. Resources: bioevidence://profiles, bioevidence://rules, bioevidence://schema/record."""

RECORD = "An evidence record (schema: resource bioevidence://schema/record)."
PROFILE = "A profile name (resource bioevidence://profiles); default: the server's, else the record's."
DETAILS = "Also return the full payload (report, record, plan, every item field)."
QUESTION = "A question in plain language (read as a claim for stance)."
Question = Annotated[str, Field(description=QUESTION, min_length=1, max_length=2000)]
TopK = Annotated[int, Field(description="Sentences returned.", ge=1, le=200)]
Papers = Annotated[int | None, Field(description="Most papers they come from.", ge=1, le=200)]
Retracted = Annotated[bool, Field(description="Include retracted papers' sentences (flagged).")]
Details = Annotated[bool, Field(description=DETAILS)]
Profile = Annotated[str | None, Field(description=PROFILE, max_length=200)]
Previous = Annotated[list[dict[str, Any]] | None, Field(description="Earlier rounds' proposals, oldest first.",
                                                        max_length=20)]
Rounds = Annotated[int | None, Field(description="Rounds in the loop (default: the server's).", ge=1, le=20)]
Works = Annotated[list[Annotated[str, Field(min_length=1, max_length=300)]],
                  Field(description="pmid:N, pmcid:PMCN or doi:10.… (also PubMed/PMC/doi.org URLs).", min_length=1,
                        max_length=50)]


def lean(schema: Any, *, output: bool = False) -> Any:
    """``schema`` without what costs bytes and says nothing: the ``title`` keys pydantic generates (a
    property named ``title`` stays) and ``anyOf: [X, null]`` written as ``type: [X, "null"]``. An output
    schema also loses its defaults, descriptions and ``additionalProperties: true``: it is there for a
    client to check results, which are values (docs/mcp.md and the models describe the fields)."""
    if isinstance(schema, list):
        return [lean(s, output=output) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        generated = key == "title" and isinstance(value, str)
        unread = output and (key == "default" or (key == "description" and isinstance(value, str))
                             or (key == "additionalProperties" and value is True))
        if generated or unread:
            continue
        if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
            out[key] = {name: lean(sub, output=output) for name, sub in value.items()}
        else:
            out[key] = lean(value, output=output)
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = options[0] if options[1] == {"type": "null"} else options[1]
        if isinstance(other, dict) and isinstance(other.get("type"), str):
            del out["anyOf"]
            out = {**other, **out, "type": [other["type"], "null"]}
    return out


def _tool(fn: Callable[..., Any], title: str, wrap: Callable[[Callable[..., Any]], Callable[..., Any]], *,
          read_only: bool = True, network: bool = False, idempotent: bool | None = None) -> Tool:
    spec = Tool.from_function(wrap(fn), name=fn.__name__, annotations=ToolAnnotations(
        # a tool that goes online is not idempotent: ground with refresh may pin newer bytes
        title=title, read_only_hint=read_only, destructive_hint=False,
        idempotent_hint=(not network) if idempotent is None else idempotent, open_world_hint=network),
        structured_output=True)
    spec.parameters = lean(spec.parameters)
    spec.parameters["additionalProperties"] = False
    if spec.fn_metadata.output_schema is not None:
        spec.fn_metadata.output_schema = lean(spec.fn_metadata.output_schema, output=True)
    return spec


def tool_list(services: Services, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> list[Tool]:
    """The server's tools; ``wrap`` turns a tool's ``BioevidenceError`` into a tool error (the server's)."""

    def validate_record(
        record: Annotated[dict[str, Any] | None, Field(description=RECORD)] = None,
        path: Annotated[str | None, Field(description="Instead of record: a .json/.yaml file in the server's "
                                          "workspace.", min_length=1, max_length=4096)] = None,
        profile: Profile = None,
        details: Details = False,
    ) -> ValidationOut:
        """Check a record with the gate: the verdict per requested use and each finding with its rule, route
        and fix. Only admitted means the quotes and claims were confirmed against pinned sources."""
        return ValidationOut.model_validate(tools.validate_record(services, record, path, profile, details))

    def revise_step(
        record: Annotated[dict[str, Any], Field(description="This round's record, or a draft "
                                                "(sources/evidence).")],
        previous: Previous = None,
        profile: Profile = None,
        rounds: Rounds = None,
        details: Details = False,
    ) -> ReviseStepOut:
        """One round of the feedback loop: validates the proposal (carrying evidence verified earlier) and
        returns the outcome (admitted, feedback, to_person, exhausted) with one feedback line per fixable
        finding. Judgment and policy findings are never fed back: they go to a person."""
        return ReviseStepOut.model_validate(tools.revise_step(services, record, previous, profile, rounds, details))

    def get_passage(
        work: Annotated[str, Field(description="pmid:N, pmcid:PMCN or doi:10.… of a pinned work.", min_length=1,
                                   max_length=300)],
        locator: Annotated[str, Field(description="A passage id (#n88), part (abstract), section (Results) or "
                                      "label (Table 2).", min_length=1, max_length=500)],
        limit: Annotated[int, Field(description="Most passages returned.", ge=1, le=500)] = 20,
    ) -> PassagesOut:
        """The pinned text a locator names in a work: each passage's printed text (what quotes are checked
        against), id, part, section and the SHA-256 of its bytes."""
        return PassagesOut.model_validate(tools.get_passage(services, work, locator, limit))

    def ground(
        record: Annotated[dict[str, Any], Field(description=RECORD)],
        refresh: Annotated[bool, Field(description="Resolve pinned works again (a retraction may have "
                                       "appeared).")] = False,
    ) -> GroundOut:
        """NETWORK: pins the publications a record cites (NCBI, Europe PMC, Crossref) into the server's store
        and returns the record with their hashes filled in. Validate it afterwards."""
        return GroundOut.model_validate(tools.ground(services, record, refresh))

    def pin(
        works: Works,
        refresh: Annotated[bool, Field(description="Resolve pinned works again.")] = False,
    ) -> PinOut:
        """NETWORK: pins works by identifier into the server's store, as ground does for a record's
        citations: metadata, open full text or the abstract. Then add_to_index makes ask find them."""
        return PinOut.model_validate(corpus.pin(services, works, refresh))

    def add_to_index() -> IndexOut:
        """Rebuilds the local index from its sources plus every work pinned in the store (as `bioevidence
        index build`), so ask and answer search them. Seconds for a few hundred papers."""
        return IndexOut.model_validate(corpus.add_to_index(services))

    def corpus_tool(
        work: Annotated[str | None, Field(description="Look up one work by identifier.", min_length=1,
                                          max_length=300)] = None,
        offset: Annotated[int, Field(ge=0)] = 0,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> CorpusOut:
        """What the store and index hold: counts (pinned, full text, retracted, indexed) and a page of works
        (or one work) with title, pinned hash and whether it is indexed."""
        return CorpusOut.model_validate(corpus.corpus(services, work, offset, limit))

    corpus_tool.__name__ = "corpus"

    def ask(question: Question, top_k: TopK = 10, papers: Papers = None, include_retracted: Retracted = False,
            details: Details = False) -> AskOut:
        """Search the local index: the question's best verbatim sentences across pinned papers, each with
        its stance, locator, offsets and the SHA-256 of its paper."""
        return AskOut.model_validate(tools.ask(services, question, top_k, papers, include_retracted, details))

    def find(question: Question, top_k: TopK = 10, papers: Papers = None, include_retracted: Retracted = False,
             details: Details = False) -> FindOut:
        """NETWORK: ask over Europe PMC instead of the local index (`ask --backend europepmc`): verbatim
        sentences cut from bytes pinned into the server's store. Pin the works it lists to cite them."""
        return FindOut.model_validate(tools.find(services, question, top_k, papers, include_retracted, details))

    def answer(
        question: Question,
        top_k: Annotated[int, Field(description="Sentences considered.", ge=1, le=200)] = 10,
        papers: Papers = None,
        max_papers: Annotated[int, Field(description="Papers quoted per stance.", ge=1, le=20)] = 3,
        details: Details = False,
    ) -> AnswerOut:
        """A cited answer from the local index: a direction (supports, contradicts, mixed, undetermined,
        insufficient) from the papers' stances, a verdict, and the deciding sentences. Its evidence record is
        validated first: only items the gate verified are cited."""
        return AnswerOut.model_validate(tools.answer(services, question, top_k, papers, max_papers, details))

    def queue_for_review(
        record: Annotated[dict[str, Any], Field(description="The record (or draft) of the last round.")],
        reasons: Annotated[list[Annotated[str, Field(max_length=500)]], Field(
            description="Why a person should look, in your words.", max_length=20)],
        previous: Previous = None,
        profile: Profile = None,
        rounds: Rounds = None,
    ) -> QueuedOut:
        """Hands a record to a person: queues it in the review queue when the loop routes it to a person
        (judgment, policy, rounds exhausted), with your reasons. Poll review_status for the decision."""
        return QueuedOut.model_validate(review.queue_for_review(services, record, reasons, previous, profile,
                                                                rounds))

    def review_status(
        entry: Annotated[int, Field(ge=1)],
        wait_seconds: Annotated[float, Field(description="Wait up to this long for a first decision.", ge=0,
                                             le=60)] = 0,
        details: Details = False,
    ) -> ReviewOut:
        """A review entry's state and a person's decisions (accept, reject, defer, with rationale), and the
        record's status after them."""
        return ReviewOut.model_validate(review.review_status(services, entry, wait_seconds, details))

    config = services.config
    model = "llm" in (config.planner, config.judge, config.stance)  # ask talks to the model

    return [
        _tool(ask, "Find verbatim evidence", wrap, network=model),
        _tool(answer, "Answer with cited, gate-verified evidence", wrap, network=model or config.model is not None),
        _tool(find, "Search Europe PMC (network)", wrap, read_only=False, network=True),
        _tool(validate_record, "Validate a record", wrap),
        _tool(revise_step, "One round of the feedback loop", wrap),
        _tool(get_passage, "Read a pinned passage", wrap),
        _tool(ground, "Pin cited papers (network)", wrap, read_only=False, network=True),
        _tool(pin, "Pin works by identifier (network)", wrap, read_only=False, network=True),
        _tool(add_to_index, "Index pinned works", wrap, read_only=False, idempotent=True),
        _tool(corpus_tool, "List the corpus", wrap),
        _tool(queue_for_review, "Queue for a person", wrap, read_only=False, idempotent=False),
        _tool(review_status, "Read a review decision", wrap),
    ]
