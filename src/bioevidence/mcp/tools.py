"""The tools, one function each: values in, plain JSON values out, ``BioevidenceError`` on bad input.

No SDK here and no logic of our own: each function calls the stage API the Python user calls
(``Validator.validate``, ``revision_flow`` / ``feedback_lines``, ``LiteratureGrounder`` with
``locators.target``, ``sources.ground``, ``Librarian.ask``) and shapes what it returns. The
server (:mod:`.server`) turns a ``BioevidenceError`` into an MCP tool error carrying the CLI's
one-line JSON message; a tool error never carries a verdict, so nothing is ever reported
admitted by an error path.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError, RetrievalError, SourceError, excerpt
from . import views
from .services import Services

#: What a passage's bytes are, by where :class:`LiteratureGrounder` took it from.
PINNED_FROM = ("fulltext", "abstract", "metadata")


# -- the gate -----------------------------------------------------------------------------------

def report_view(report: Any) -> dict[str, Any]:
    """A report as a tool returns it: the decision, per-use decisions, findings with their route
    (who acts on them: the model for ``fixable``) and fix, and the whole report for the record."""
    from ..loop.revise import route_of

    full = report.to_dict()
    findings = []
    for finding, shown in zip(report.findings, full["findings"], strict=True):
        findings.append({**shown, "route": route_of(finding), "fix": shown.get("fix")})
    return {
        "record_id": full["record_id"],
        "overall_status": report.overall_status,
        "admitted": report.admitted,
        "use_decisions": full["use_decisions"],
        "findings": findings,
        "verified_evidence_item_ids": sorted(report.verified),
        "report": full,
    }


def checked(value: Any, what: str = "record") -> Any:
    """An inline JSON argument held to the limits a record file is held to: at most ``MAX_DEPTH``
    levels of nesting, no lone surrogates (``InputError`` otherwise, as ``bioevidence validate``)."""
    from ..io import MAX_DEPTH, check_depth, refuse_surrogates

    try:
        check_depth(value)
    except ValueError as exc:
        raise InputError(f"the {what} nests deeper than {MAX_DEPTH} levels; no record needs that") from exc
    refuse_surrogates(value, file=what)
    return value


def _record_argument(services: Services, record: dict[str, Any] | None, path: str | None) -> tuple[Any, bool]:
    if (record is None) == (path is None):
        raise InputError("give either 'record' (the record itself) or 'path' (a record file in the workspace)")
    if path is not None:
        return services.read_record(path)
    return checked(record), True


def validate_record(services: Services, record: dict[str, Any] | None = None, path: str | None = None,
                    profile: str | None = None, details: bool = False) -> dict[str, Any]:
    """Validate one record (inline, or a file inside the workspace) with the server's gate."""
    value, floats = _record_argument(services, record, path)
    validator = services.validator(profile)
    with services.gate_lock:
        report = validator.validate(value, floats=floats)
    out = views.validation(report_view(report), details)
    assert out is not None
    return out


# -- the loop -----------------------------------------------------------------------------------

def revise_step(services: Services, record: dict[str, Any], previous: list[dict[str, Any]] | None = None,
                profile: str | None = None, rounds: int | None = None, details: bool = False) -> dict[str, Any]:
    """One round of ``revise()``: the loop replayed over ``previous`` proposals, then ``record``.

    The server validates every proposal itself (it never takes a verdict from the caller), so
    carried evidence, routes and feedback lines are exactly what ``revise()`` would produce.
    """
    attempts = replay(services, record, previous, profile, rounds)
    attempt = attempts[-1]
    out = {
        "round": attempt.round,
        "outcome": attempt.outcome,
        "reason": attempt.reason,
        "to_person": attempt.to_person,
        "routes": list(attempt.routes),
        "feedback": list(attempt.feedback),
        "carried": list(attempt.carried),
        "error": attempt.error,
        "record_id": attempt.record.get("record_id") if isinstance(attempt.record, dict) else None,
        "validation": views.validation(report_view(attempt.report) if attempt.report is not None else None,
                                       details),
    }
    if details:
        out["record"] = attempt.record
    return out


def replay(services: Services, record: dict[str, Any], previous: list[dict[str, Any]] | None,
           profile: str | None, rounds: int | None) -> list[Any]:
    """The loop's attempts over ``previous`` proposals, then ``record`` (``revision_flow``, validated here)."""
    from ..loop.revise import revision_flow

    proposals = [checked(proposal, "proposal") for proposal in [*(previous or []), record]]
    rounds = rounds or services.config.rounds
    if len(proposals) > rounds:
        raise InputError(f"this would be round {len(proposals)} of a loop of {rounds} rounds; the loop ends "
                         f"after round {rounds} (exhausted: a person decides)")
    build = None
    if services.config.snapshot_dir is not None:
        from ..loop.draft import DraftBuilder

        build = DraftBuilder(model=True, method="llm_extraction", snapshot_dir=services.config.snapshot_dir)
    validator = services.validator(profile)
    flow = revision_flow(validator, rounds, build=build)
    with services.gate_lock:
        try:
            ask = next(flow)
            for proposal in proposals:
                ask = flow.send(proposal)
        except StopIteration as stop:
            attempts = list(stop.value)
            if len(attempts) < len(proposals):
                last = attempts[-1]
                raise InputError(f"the loop already ended at round {last.round} ({last.outcome}: {last.reason}); "
                                 "start a new loop with no 'previous'") from None
            return attempts
        flow.close()
        assert ask.last is not None  # the loop asked again: it fed the last attempt back (earlier ones: unused)
        return [ask.last]


# -- pinned passages ----------------------------------------------------------------------------

def get_passage(services: Services, work: str, locator: str, limit: int = 20) -> dict[str, Any]:
    """The pinned passages a locator names in one work, with the hash of the bytes each came from."""
    from ..gate.grounders.locators import target
    from ..sources.identifiers import parse_identifier

    grounder = services.literature()
    ident = parse_identifier(work.strip())
    if ident is None:
        raise InputError(f"{excerpt(work)} is not a paper id; write pmid:N, pmcid:PMCN or doi:10.…")
    with services.gate_lock:
        found = grounder.catalogue.get(ident)
        if found is None:
            raise InputError(f"{ident} is not in the pinned catalogue; pin it first (the ground tool, or "
                             "`bioevidence ground`)")
        meta = grounder.metadata(found)  # the store re-hashes the bytes before they are read
        if not meta.found:
            raise InputError(f"{ident} does not exist according to its pinned {meta.source} metadata")
        paper = grounder.paper(found, meta)
    if paper is None:
        raise SourceError(f"no open full text or abstract is pinned for {ident}; there is no passage to read",
                          sha256=found.metadata_sha256)
    named = target(locator, paper.passages)
    if named is None:
        raise InputError(f"locator {excerpt(locator)} names no place in a paper: use a passage id (#n12, #p3), a "
                         "part (abstract, title, references), a section (Results, Methods) or a label (Table 2)")
    if not named.indexes:
        raise InputError(f"{ident} has no {named.how} {excerpt(named.named)} (locator {excerpt(locator)})")
    indexes = sorted(named.indexes)
    in_article = len(paper.article.passages)
    shown = []
    for index in indexes[:limit]:
        passage = paper.passages[index]
        if index < in_article:
            sha, pinned = found.fulltext_sha256, "fulltext"
        elif passage.part == "abstract" and found.abstract_sha256:
            sha, pinned = found.abstract_sha256, "abstract"
        else:
            sha, pinned = found.metadata_sha256, "metadata"
        shown.append({"id": passage.id, "part": passage.part, "kind": passage.kind, "section": passage.section,
                      "label": passage.label, "text": passage.text, "sha256": sha, "pinned_from": pinned})
    return {
        "work": found.key,
        "title": meta.title,
        "retracted": bool(meta.retracted),
        "expression_of_concern": bool(meta.expression_of_concern),
        "locator": locator,
        "named_by": named.how,
        "total": len(indexes),
        "truncated": len(indexes) > len(shown),
        "passages": shown,
    }


# -- pinning a record's citations (network; pin, in corpus.py, pins by identifier) ----------------

def ground(services: Services, record: dict[str, Any], refresh: bool = False) -> dict[str, Any]:
    """Pin every publication ``record`` cites into the server's store; the record with the pins."""
    from ..sources.catalogue import Catalogue
    from ..sources.ground import ground as run_ground
    from ..sources.ground import publication_ids
    from ..sources.pin import Pinner
    from ..sources.store import SnapshotStore

    folder = services.store_dir("ground")
    cited = publication_ids(checked(record), file="record")
    with services.ground_lock:
        store, catalogue = SnapshotStore(folder), Catalogue.load(folder)
        pinner = Pinner(store, catalogue, services.http(), resolver=services.config.resolver)
        grounded, summary = run_ground([("record", record)], pinner, refresh=refresh)
        catalogue.save(folder)
        if summary.pinned or refresh:
            services.reload()  # the gate and get_passage see the new works from the next call on
    report = summary.to_json()
    return {"record": grounded[0][1], "cited": cited, **report,
            "complete": not report["failed"] and not report["not_found"]}


# -- the librarian ------------------------------------------------------------------------------

def _asked(services: Services, librarian: Any, question: str, top_k: int, papers: int | None,
           include_retracted: bool) -> Any:
    """The librarian's ``Answer`` (stance relabelled by the model with ``--stance llm``, as the CLI does)."""
    if not question.strip():
        raise InputError("the question is empty")
    found = librarian.ask(question, top_k=top_k, papers=papers, include_retracted=include_retracted)
    if services.config.stance == "llm":
        from ..librarian.stance import LLMStance

        found.debug["stance"] = LLMStance(services.llm()).label(found)
    return found


def ask(services: Services, question: str, top_k: int = 10, papers: int | None = None,
        include_retracted: bool = False, details: bool = False) -> dict[str, Any]:
    """Ranked verbatim sentences for a question (``top_k`` sentences from at most ``papers`` papers),
    each with its stance and the hash of its pinned paper; retracted papers only when asked for."""
    with services.ask_lock:
        found = _asked(services, services.librarian(), question, top_k, papers, include_retracted)
    return views.found(found, details)


def find(services: Services, question: str, top_k: int = 10, papers: int | None = None,
         include_retracted: bool = False, details: bool = False) -> dict[str, Any]:
    """``ask`` over Europe PMC (``bioevidence ask --backend europepmc --store STORE``): the papers' bytes are
    fetched and pinned into the server's store, and every item names the hash of the bytes it was cut
    from. Their works are not catalogued: ``pin`` them to validate records citing them."""
    from ..librarian.europepmc_backend import EuropePMCBackend
    from ..sources.europepmc import EuropePMC
    from ..sources.store import SnapshotStore

    store = services.store_dir("find")
    with services.ground_lock:
        backend = EuropePMCBackend(EuropePMC(services.http()), SnapshotStore(store))
        found = _asked(services, services.librarian(backend), question, top_k, papers, include_retracted)
    errors = found.debug.get("errors") or []
    if errors and not found.debug.get("subqueries"):  # as `ask --backend europepmc`: no answer is not "nothing"
        raise RetrievalError(f"no search of the question got a usable answer from Europe PMC ({len(errors)} "
                             f"failed; the first: {excerpt(str(errors[0]), 300)})")
    out = views.found(found, details)
    ids = [paper.doc.doc_id for paper in found.papers]  # every paper found, not only those quoted
    out["works"] = [i for i in ids if i.split(":", 1)[0] in ("pmid", "pmcid", "doi")]
    return out


def answer(services: Services, question: str, top_k: int = 10, papers: int | None = None,
           max_papers: int = 3, details: bool = False) -> dict[str, Any]:
    """A cited answer (``librarian.answering.answer_question``, as ``bioevidence answer``): the
    question's evidence record is validated against the pinned papers first, and only items the
    gate verified are cited; with ``--model`` a synthesis, else extractive."""
    from ..librarian.answering import answer_question

    with services.ask_lock:
        found = _asked(services, services.librarian(), question, top_k, papers, False)
    with services.gate_lock:
        cited, record, report = answer_question(found, llm=services.llm(), max_papers=max_papers)
    out = cited.to_json()
    items = {item["rank"]: item for item in found.items()}
    admitted = [items[n] for n in out["admitted_items"]]
    out.update(items=admitted if details else [views.item(i) for i in admitted],
               record_id=record.get("record_id") if record is not None else None,
               validation=views.validation(report_view(report) if report is not None else None, details))
    if (note := views.stance_note(found.debug)) is not None:
        out["stance_note"] = note
    if details:
        out["record"] = record
    return out
