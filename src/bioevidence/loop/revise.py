"""The feedback loop: validate what a model proposes, send back what it can fix, keep what was verified.

``revise(propose, validator, rounds=3)`` asks ``propose(feedback_lines)`` for a record (or a
draft, or ``None`` to stop), validates it, and decides one of:

* **admitted** -- done;
* **feedback** -- every finding the model can fix (route ``fixable`` in the rule catalogue) goes
  back as one line with a readable location and the grounder's fix, and the next round starts;
* **to a person** -- when nothing fixable remains and ``judgment`` (contradicting evidence, a
  failed independent review, a semantic cue, a cross-check, an expression of concern),
  ``policy`` (the use needs a person, or forbids LLM-only evidence), ``cannot-confirm`` (no
  open full text, an unpinned source) or ``operational`` (corrupted bytes, a grounder fault)
  findings hold it. None of those is ever fed back: a model is never asked to make evidence
  against its answer go away, and no model can fix the others. While fixable findings remain
  they are fed back so that the person gets a clean record; once a judgment finding has
  appeared, a revision that changes the claim goes to a person at once (the claim may not
  move away from its evidence).
* after the last round with fixable findings left: **exhausted** (a person decides); when the
  proposer stops after feedback: **stopped**.

Verified evidence is carried into a revision while the claim triple (subject id, predicate,
object id) is unchanged: an item a grounder verified in the previous attempt that the revision
left out -- or moved to another direction -- is put back (identity: source hash, locator,
quote; fresh ids; its source copied when needed; into the evidence line of its direction). So
a revision can fix failures but cannot drop verified evidence, least of all evidence against
its answer.

The loop itself is :func:`revision_flow`, a generator without I/O: it yields :class:`Ask`
("ask the model with these feedback lines") and receives the proposal. :func:`revise` and
:func:`arevise` are thin sync and async runners around it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ConfigurationError, InputError
from ..gate.findings import Finding, Fix, fix_sentence
from ..gate.report import Report
from ..gate.rules import RULES

__all__ = ["Ask", "Attempt", "arevise", "carry", "feedback_lines", "revise", "revision_flow", "route_of",
           "where"]

Proposal = Any  # a record dict, a draft dict, or None to stop
Propose = Callable[[list[str]], Proposal]
AsyncPropose = Callable[[list[str]], Awaitable[Proposal]]
Build = Callable[[dict[str, Any]], dict[str, Any]]

TO_PERSON = frozenset({"to_person", "exhausted", "stopped"})
OUTCOMES = ("admitted", "feedback", *sorted(TO_PERSON))


@dataclass(frozen=True)
class Ask:
    """What the loop wants next: a proposal from the model, given these feedback lines.

    ``last`` is the attempt those lines come from (``None`` before the first round), so a
    caller driving the loop one step at a time (the MCP server's ``revise_step``) sees the
    attempt the loop decided to feed back."""

    round: int
    feedback: tuple[str, ...]
    last: Attempt | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Attempt:
    """One round: what was proposed, what was validated, what was decided.

    ``record`` is the validated record (after building a draft and carrying verified
    evidence); it is ``None`` when the proposal could not be built, in which case ``report``
    is ``None`` and ``error`` says why. ``feedback`` holds the lines sent back to the model
    after this attempt (empty unless ``outcome`` is ``feedback`` or ``stopped``). ``outcome``
    is one of ``admitted``, ``feedback``, ``to_person``, ``exhausted``, ``stopped``;
    ``reason`` explains it (the routes that sent it to a person, "last round", …).
    ``carried`` lists the ids of evidence items put back from the previous attempt.
    """

    round: int
    proposal: Any
    record: dict[str, Any] | None
    report: Report | None
    feedback: tuple[str, ...]
    outcome: str
    reason: str
    carried: tuple[str, ...] = ()
    error: str | None = None
    routes: tuple[str, ...] = field(default=())

    @property
    def admitted(self) -> bool:
        return self.outcome == "admitted"

    @property
    def to_person(self) -> bool:
        """The record ends with a person (routed, rounds exhausted, or the model stopped)."""
        return self.outcome in TO_PERSON and self.record is not None

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "outcome": self.outcome, "reason": self.reason, "routes": list(self.routes),
                "feedback": list(self.feedback), "carried": list(self.carried), "error": self.error,
                "proposal": self.proposal, "record": self.record,
                "report": self.report.to_dict() if self.report is not None else None}


# -- routing and feedback text -----------------------------------------------------------------

def route_of(finding: Finding) -> str:
    """The catalogue route of a finding's rule (unknown codes are operational: fail closed)."""
    rule = RULES.get(finding.rule_id)
    return rule.route if rule is not None else "operational"


def _short(text: str, limit: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _at(container: Any, key: str, index: int | None = None) -> dict[str, Any]:
    """``container[key]`` (or ``container[key][index]``) when it is a mapping, else ``{}``."""
    value = container.get(key) if isinstance(container, dict) else None
    if index is not None:
        value = value[index] if isinstance(value, list) and index < len(value) else None
    return value if isinstance(value, dict) else {}


def where(record: Any, path: str) -> str:
    """A readable name for the place ``path`` points at: "evidence 2 (#p14)", "object CL:0002335"."""
    if m := re.match(r"\$\.evidence_items\[(\d+)\]", path):
        n = int(m.group(1))
        locator = _at(record, "evidence_items", n).get("locator")
        if isinstance(locator, str) and locator.strip():
            label = "#" + locator.rsplit("#", 1)[1] if "#" in locator else _short(locator)
            return f"evidence {n + 1} ({label})"
        return f"evidence {n + 1}"
    if m := re.match(r"\$\.source_artifacts\[(\d+)\]", path):
        n = int(m.group(1))
        source = _at(record, "source_artifacts", n)
        name = source.get("uri") or source.get("id")
        return f"source {n + 1}" + (f" ({_short(name)})" if isinstance(name, str) else "")
    if m := re.match(r"\$\.statement\.(subject|object)\b", path):
        ident = _at(_at(record, "statement"), m.group(1)).get("id")
        return m.group(1) + (f" {ident}" if isinstance(ident, str) else "")
    if m := re.match(r"\$\.statement\.evidence_lines\[(\d+)\]", path):
        return f"evidence line {int(m.group(1)) + 1}"
    if path == "$.statement.evidence_lines":
        return "evidence lines"
    if m := re.match(r"\$\.adjudications\[(\d+)\]", path):
        return f"review {int(m.group(1)) + 1}"
    if m := re.match(r"\$\.statement\.scope", path):
        return "statement scope"
    rest = path.removeprefix("$").lstrip(".")
    return rest.replace("_", " ") if rest else "record"


class Feedback(str):
    """One feedback line, which is a ``str`` (what a prompt needs), carrying the finding it comes
    from: ``rule_id``, ``field_path`` and the structured ``fix`` (:class:`~bioevidence.gate.findings.Fix`
    or ``None``), so a proposer that edits records can apply the fix instead of parsing the line."""

    rule_id: str
    field_path: str
    fix: Fix | None

    def __new__(cls, text: str, rule_id: str, field_path: str, fix: Fix | None = None) -> Feedback:
        line = super().__new__(cls, text)
        line.rule_id, line.field_path, line.fix = rule_id, field_path, fix
        return line

    def __reduce__(self) -> tuple[Any, ...]:
        return (Feedback, (str(self), self.rule_id, self.field_path, self.fix))


def feedback_lines(record: Any, report: Report) -> list[Feedback]:
    """One line per fixable finding (de-duplicated): location, message, and the fix when known
    (its detail said once: left out of the fix when the message says it).

    Fixable warnings (a locator naming the wrong passage) ride along when there is a round."""
    lines: dict[str, Feedback] = {}
    for f in report.findings:
        if route_of(f) != "fixable":
            continue
        line = f"{where(record, f.field_path)}: {f.message}"
        if f.fix is not None:
            fix = fix_sentence(f.fix, f.field_path, f.message, place=lambda p: f" of {where(record, p)}")
            line += f" -- fix: {fix}"
        lines.setdefault(line, Feedback(line, f.rule_id, f.field_path, f.fix))
    return list(lines.values())


def _decide(report: Report) -> tuple[str, str, tuple[str, ...]]:
    """(outcome, reason, routes present) for a validated attempt (before the round limit applies)."""
    if report.admitted:
        return "admitted", "admitted", ()
    # only findings that decide route a record: a warning or a note never starts a round
    routes = tuple(sorted({route_of(f) for f in report.findings if f.severity in ("error", "review")}))
    if "fixable" in routes:
        return "feedback", "fixable findings", routes
    return "to_person", ", ".join(routes) or "not admitted", routes


# -- carrying verified evidence ----------------------------------------------------------------

def _claim(record: dict[str, Any]) -> tuple[Any, Any, Any] | None:
    statement = record.get("statement")
    if not isinstance(statement, dict):
        return None
    subject, obj = statement.get("subject"), statement.get("object")
    if not isinstance(subject, dict) or not isinstance(obj, dict):
        return None
    return subject.get("id"), statement.get("predicate"), obj.get("id")


def _identity(record: dict[str, Any], item: dict[str, Any]) -> tuple[str, str, str]:
    sha = next((s.get("sha256") for s in record.get("source_artifacts") or []
                if isinstance(s, dict) and s.get("id") == item.get("source_artifact_id")), "")
    return str(sha), str(item.get("locator", "")), str(item.get("extracted_text") or "")


def _directions(record: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in record["statement"].get("evidence_lines") or []:
        if isinstance(line, dict):
            for item_id in line.get("evidence_item_ids") or []:
                out.setdefault(item_id, []).append(str(line.get("direction")))
    return out


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def _well_formed(record: Any) -> bool:
    if not isinstance(record, dict) or not isinstance(record.get("statement"), dict):
        return False
    lists = (record.get("evidence_items"), record.get("source_artifacts"), record["statement"].get("evidence_lines"))
    return all(isinstance(x, list) and all(isinstance(v, dict) for v in x) for x in lists)


def carry(previous: dict[str, Any], verified: frozenset[str] | set[str],
          record: Any) -> tuple[Any, tuple[str, ...]]:
    """``record`` plus the verified evidence of ``previous`` it left out, and the ids put back.

    Only while the claim triple is unchanged; an item counts as present when the revision has
    the same (source hash, locator, quote) in the same direction.
    """
    if not verified or not _well_formed(previous) or not _well_formed(record) or \
            _claim(previous) != _claim(record) or _claim(record) is None:
        return record, ()
    merged = copy.deepcopy(record)
    present = {(_identity(merged, item), d) for item in merged["evidence_items"]
               for d in _directions(merged).get(str(item.get("id")), [])}
    before = _directions(previous)
    taken = {str(x.get("id")) for x in merged["evidence_items"]} | {str(s.get("id"))
                                                                     for s in merged["source_artifacts"]}
    taken |= {str(line.get("id")) for line in merged["statement"]["evidence_lines"]}
    put_back: list[str] = []
    for item in previous["evidence_items"]:
        item_id = item.get("id")
        if item_id not in verified:
            continue
        key = _identity(previous, item)
        for direction in before.get(str(item_id), []):
            if (key, direction) in present:
                continue
            source = next((s for s in previous["source_artifacts"] if s.get("id") == item.get("source_artifact_id")),
                          None)
            if source is None:
                continue
            same = next((s for s in merged["source_artifacts"] if s.get("sha256") == source.get("sha256")), None)
            if same is None:
                same = dict(copy.deepcopy(source), id=_fresh(str(source.get("id")), taken))
                merged["source_artifacts"].append(same)
            kept = dict(copy.deepcopy(item), id=_fresh(str(item_id), taken), source_artifact_id=same["id"])
            merged["evidence_items"].append(kept)
            line = next((x for x in merged["statement"]["evidence_lines"] if x.get("direction") == direction), None)
            if line is None or not isinstance(line.get("evidence_item_ids"), list):
                line = {"id": _fresh(f"carried-{direction}", taken), "direction": direction, "evidence_item_ids": []}
                merged["statement"]["evidence_lines"].append(line)
            line["evidence_item_ids"].append(kept["id"])
            present.add((key, direction))
            put_back.append(kept["id"])
    return merged, tuple(put_back)


# -- the loop ----------------------------------------------------------------------------------

def _as_record(proposal: Any, build: Build | None) -> tuple[Any, str | None]:
    from .draft import is_draft

    if is_draft(proposal):
        if build is None:
            from .draft import DraftBuilder

            build = DraftBuilder(model=True, method="llm_extraction")
        try:
            return build(proposal), None
        except InputError as exc:
            return None, exc.message
    if not isinstance(proposal, dict):
        return None, f"the answer is a {type(proposal).__name__}, not a JSON object (a draft or a record)"
    return proposal, None


def revision_flow(validator: Any, rounds: int = 3, *,
                  build: Build | None = None) -> Generator[Ask, Proposal, list[Attempt]]:
    """The loop as a generator: yields :class:`Ask`, receives a proposal, returns the attempts.

    ``validator`` is a :class:`~bioevidence.gate.validator.Validator` (anything with
    ``validate(record) -> Report``). ``build`` turns a draft into a record (default: a
    :class:`~bioevidence.loop.draft.DraftBuilder` for model output with ``llm_extraction``).
    """
    if rounds < 1:
        raise ConfigurationError("rounds must be at least 1")
    attempts: list[Attempt] = []
    feedback: tuple[str, ...] = ()
    previous: dict[str, Any] | None = None
    verified: frozenset[str] = frozenset()
    judged: tuple[Any, Any, Any] | None = None  # the claim once a judgment finding appeared
    for number in range(1, rounds + 1):
        proposal = yield Ask(number, feedback, attempts[-1] if attempts else None)
        if proposal is None:
            if attempts and attempts[-1].outcome == "feedback":
                attempts[-1] = replace(attempts[-1], outcome="stopped", reason="the proposer stopped")
            break
        record, error = _as_record(proposal, build)
        if record is None:
            feedback = (f"draft: {error}",)
            attempts.append(Attempt(number, proposal, None, None, feedback, "feedback", "unusable proposal",
                                    error=error))
            continue
        carried: tuple[str, ...] = ()
        if previous is not None:
            record, carried = carry(previous, verified, record)
        report = validator.validate(record)
        outcome, reason, routes = _decide(report)
        if judged is not None and isinstance(record, dict) and _claim(record) != judged:
            outcome, reason = "to_person", "the claim changed while evidence against it awaited a person"
        feedback = tuple(feedback_lines(record, report)) if outcome == "feedback" else ()
        attempts.append(Attempt(number, proposal, record, report, feedback, outcome, reason, carried,
                                routes=routes))
        if outcome != "feedback":
            break
        if "judgment" in routes and judged is None and isinstance(record, dict):
            judged = _claim(record)
        if not any(f.rule_id in ("SCHEMA", "RECORD_INTEGRITY") for f in report.findings):
            previous, verified = record, frozenset(report.verified)  # else keep the last sound record
    if attempts and attempts[-1].outcome == "feedback":
        last = attempts[-1]
        attempts[-1] = replace(last, feedback=(), outcome="exhausted",
                               reason="fixable findings remain after the last round")
    return attempts


def revise(propose: Propose, validator: Any, rounds: int = 3, *, build: Build | None = None) -> list[Attempt]:
    """Run the loop with a synchronous proposer; see the module docstring."""
    flow = revision_flow(validator, rounds, build=build)
    try:
        ask = next(flow)
        while True:
            ask = flow.send(propose(list(ask.feedback)))
    except StopIteration as stop:
        return list(stop.value)


async def arevise(propose: AsyncPropose, validator: Any, rounds: int = 3, *,
                  build: Build | None = None) -> list[Attempt]:
    """Run the loop with an asynchronous proposer (same generator, awaited answers)."""
    flow = revision_flow(validator, rounds, build=build)
    try:
        ask = next(flow)
        while True:
            ask = flow.send(await propose(list(ask.feedback)))
    except StopIteration as stop:
        return list(stop.value)
