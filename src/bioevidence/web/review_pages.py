"""The review pages: the queue with its filters, one record with its evidence, and decisions.

A reviewer works through a filter: every link keeps it (:mod:`bioevidence.web.navigation`), and a
decision opens the next entry of the filter that still needs one, so deciding an entry is one page
load. A record's evidence is shown :data:`ITEMS_PAGE` items at a time, and the closest passage to a
quote that is not in its paper is computed when asked for (``/entries/N/items/K/closest``).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import replace
from typing import Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..errors import BioevidenceError, InputError
from ..loop import standing
from ..loop.listing import STATES
from .app import Forbidden, render, require, state_of
from .evidence import evidence_view, item_view
from .navigation import Filters, next_entry, position

router = APIRouter()

DECISIONS = ("accept", "reject", "defer")
MAX_RATIONALE = 4000
ITEMS_PAGE = 20  # evidence items on one page of a record
LINKED_ITEMS = 12  # a long record's finding names at most this many of its items by link
AUTO_CLOSEST = 3  # a page with at most this many quotes not in their paper opens their closest passages itself
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_ENTRY_ID = re.compile(r"[1-9][0-9]{0,17}")  # an entry number SQLite can hold (below 2**63)


def _entry_id(text: str, what: str = "entry") -> int:
    """The entry (or item) number in a URL; anything else (``-1``, ``0``, ``abc``, 20 digits) is 404."""
    if not _ENTRY_ID.fullmatch(text):
        raise Forbidden(f"no such {what}: {what}s are numbered 1, 2, 3, … (see the queue)", 404)
    return int(text)


def _rule(code: str) -> Any:
    from ..gate.rules import rule

    try:
        return rule(code)
    except (KeyError, BioevidenceError):
        return None


def _banner(web: Any, decided: int, entry_id: int) -> dict[str, Any] | None:
    """The decision ``decided`` on entry ``entry_id`` (just recorded), with where the record stands now."""
    if decided <= 0 or entry_id <= 0:
        return None
    try:
        entry = web.queue().get(entry_id)
    except InputError:
        return None
    found = next((d for d in entry.decisions if d["id"] == decided), None)
    if found is None:
        return None
    latest = entry.decisions[-1]["id"] == decided
    now = standing.of_report(entry.report) if latest else found["overall_status_after"]
    return {**found, "entry": entry_id, "standing_after": now}


@router.get("/queue")
def queue_page(request: Request, state: str = "open", code: str = "", profile: str = "", source: str = "",
               q: str = "", page: int = 1, decided: int = 0, prev: int = 0) -> HTMLResponse:
    require(request)
    web = state_of(request)
    listing = web.fresh_listing()
    size = web.settings.page_size
    filters = Filters.of(state, code, profile, source, q, page)
    result = listing.query(state=filters.state, code=filters.code or None, profile=filters.profile or None,
                           source=filters.source or None, text=filters.q or None, offset=0, limit=0)
    pages = max(1, -(-result.total // size))
    filters = replace(filters, page=min(filters.page, pages))
    result = listing.query(state=filters.state, code=filters.code or None, profile=filters.profile or None,
                           source=filters.source or None, text=filters.q or None,
                           offset=(filters.page - 1) * size, limit=size)
    first = filters.matching(listing)[:1]
    return render(request, "queue.html", rows=result.rows, total=result.total, page=filters.page, pages=pages,
                  filters=filters, facets=listing.facets(), counts=listing.counts(), states=STATES,
                  first=first[0] if first else None, just=_banner(web, decided, prev),
                  prev_url=filters.page_url(filters.page - 1) if filters.page > 1 else None,
                  next_url=filters.page_url(filters.page + 1) if filters.page < pages else None)


def _items_page(entry: Any, items: int, which: str) -> tuple[list[int], int, int]:
    """The evidence item indexes shown (a page of :data:`ITEMS_PAGE`), the page and the number of pages."""
    raw = entry.record.get("evidence_items")
    raw = raw if isinstance(raw, list) else []
    chosen = [i for i, item in enumerate(raw) if which == "all" or not (
        isinstance(item, dict) and str(item.get("id")) in entry.report.verified)]
    pages = max(1, -(-len(chosen) // ITEMS_PAGE))
    page = min(max(1, items), pages)
    return chosen[(page - 1) * ITEMS_PAGE:page * ITEMS_PAGE], page, pages


def _item_findings(report: Any, filters: Filters, entry_id: int) -> tuple[list[Any], list[dict[str, Any]]]:
    """A long record's findings: those about the record itself in full, and those about its evidence
    items one line per code, naming the items (each shown in full with its item)."""
    whole: list[Any] = []
    grouped: dict[tuple[str, str], dict[str, Any]] = {}
    for f in report.findings:
        if not f.field_path.startswith("$.evidence_items["):
            whole.append(f)
            continue
        try:
            number = int(f.field_path[len("$.evidence_items["):].split("]", 1)[0]) + 1
        except ValueError:
            whole.append(f)
            continue
        group = grouped.setdefault((f.rule_id, f.severity), {"code": f.rule_id, "severity": f.severity, "items": []})
        if number not in group["items"]:
            group["items"].append(number)
    for group in grouped.values():
        group["items"].sort()
        group["links"] = [(n, filters.entry_url(entry_id, items=(n - 1) // ITEMS_PAGE + 1 if n > ITEMS_PAGE else None)
                           + f"#item-{n}") for n in group["items"][:LINKED_ITEMS]]
    return whole, list(grouped.values())


@router.get("/entries/{number}")
def entry_page(request: Request, number: str, state: str = "open", code: str = "", profile: str = "",
               source: str = "", q: str = "", page: int = 1, decided: int = 0, prev: int = 0, items: int = 1,
               which: str = "all") -> Response:
    require(request)
    web = state_of(request)
    entry_id = _entry_id(number)
    try:
        entry = web.queue().get(entry_id)
    except InputError:
        return render(request, "error.html", status=404, title="Not in the queue",
                      message=f"no entry {entry_id} in the review queue")
    filters = Filters.of(state, code, profile, source, q, page)
    ids = filters.matching(web.fresh_listing())
    which = "unverified" if which == "unverified" else "all"
    shown, items_at, items_pages = _items_page(entry, items, which)
    validator = web.validator(web.profile_of(entry))
    sources, views = evidence_view(entry.record, entry.report, validator.grounders, indexes=shown, closest=False)
    rules = {f.rule_id: _rule(f.rule_id) for f in entry.report.findings}
    uses = [u for u in entry.original_record.get("requested_uses") or [] if isinstance(u, str)]
    statement = entry.record.get("statement") if isinstance(entry.record.get("statement"), dict) else {}
    now = standing.of_report(entry.report)
    codes = standing.blocking_codes(entry.report)
    total_items = len(entry.record.get("evidence_items") or []) if isinstance(
        entry.record.get("evidence_items"), list) else 0
    findings, by_code = (entry.report.findings, []) if total_items <= ITEMS_PAGE else _item_findings(
        entry.report, filters, entry_id)
    cited = {i.source_id for i in views}
    return render(request, "record.html", entry=entry, report=entry.report, sources=sources, items=views,
                  rules=rules, just=_banner(web, decided, prev or entry_id), uses=uses, statement=statement,
                  request_id=secrets.token_urlsafe(24), decisions=DECISIONS, filters=filters,
                  position=position(ids, entry_id), in_filter=len(ids), next_id=next_entry(ids, entry_id),
                  standing_now=now, asked=standing.asked(now, entry.state, codes, uses, entry.reason),
                  queued_because=standing.reason_text(entry.reason, entry.original_report.overall_status,
                                                      standing.blocking_codes(entry.original_report)),
                  items_at=items_at, items_pages=items_pages, which=which, total_items=total_items,
                  findings=findings, by_code=by_code, cited=cited,
                  unverified=sum(1 for i in entry.record.get("evidence_items") or []
                                 if isinstance(i, dict) and str(i.get("id")) not in entry.report.verified),
                  open_closest=sum(1 for v in views if v.closest_pending) <= AUTO_CLOSEST)


@router.get("/entries/{number}/items/{item}/closest")
def closest_page(request: Request, number: str, item: str, part: int = 0) -> Response:
    """One evidence item in full, with the closest passage to its quote (computed now): the whole page,
    or with ``part=1`` only the part the record page puts in place (``review.js``)."""
    require(request)
    web = state_of(request)
    entry_id = _entry_id(number)
    index = _entry_id(item, "evidence item") - 1
    try:
        entry = web.queue().get(entry_id)
    except InputError:
        return render(request, "error.html", status=404, title="Not in the queue",
                      message=f"no entry {entry_id} in the review queue")
    view = item_view(entry.record, entry.report, web.validator(web.profile_of(entry)).grounders, index)
    if view is None:
        raise Forbidden(f"entry {entry_id} has no evidence item {index + 1}", 404)
    return render(request, "closest.html", entry=entry, i=view, part=bool(part))


@router.post("/entries/{entry}/decide")
def decide(request: Request, entry: str, csrf: str = Form(""), decision: str = Form(""),
           rationale: str = Form(""), uses: list[str] = Form(default=[]),  # noqa: B008
           request_id: str = Form(""), state: str = Form("open"), code: str = Form(""), profile: str = Form(""),
           source: str = Form(""), q: str = Form(""), page: int = Form(1)) -> Response:
    """Record the decision, then open the next entry of the reviewer's filter that still needs one
    (the queue page, when none does), saying what was recorded and where the record stands now."""
    session = require(request, form={"csrf": csrf})
    web = state_of(request)
    entry_id = _entry_id(entry)
    reason = rationale.strip()
    if decision not in DECISIONS:
        raise Forbidden("choose accept, reject or defer", 400)
    if not reason:
        raise Forbidden("a decision needs a reason: say what in the sources supports it", 400)
    if len(reason) > MAX_RATIONALE or _CONTROL.search(reason):
        raise Forbidden(f"the reason must be plain text of at most {MAX_RATIONALE} characters", 400)
    if not re.fullmatch(r"[A-Za-z0-9_-]{16,64}", request_id):
        raise Forbidden("the form has no request id; reload the page and decide again", 400)
    queue = web.queue()
    try:
        found = queue.get(entry_id)
    except InputError:
        return render(request, "error.html", status=404, title="Not in the queue",
                      message=f"no entry {entry_id} in the review queue")
    try:
        account = session.account
        result = queue.decide(entry_id, decision, reviewer=account.reviewer_id, name=account.full_name or account.name,
                              rationale=reason, validator=web.validator(web.profile_of(found)),
                              uses=uses or None, request_id=request_id, account=account.name)
    except BioevidenceError as exc:
        return render(request, "error.html", status=409 if getattr(exc, "retryable", False) else 400,
                      title="Not recorded", message=exc.message)
    filters = Filters.of(state, code, profile, source, q, page)
    following = next_entry(filters.matching(web.fresh_listing()), entry_id)
    if following is None:
        return RedirectResponse(filters.queue_url(decided=result.decision_id, prev=entry_id), status_code=303)
    return RedirectResponse(filters.entry_url(following, decided=result.decision_id, prev=entry_id),
                            status_code=303)
