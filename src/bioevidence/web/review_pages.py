"""The review pages: the queue with its filters, one record with its evidence, and decisions."""

from __future__ import annotations

import re
import secrets
from typing import Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..errors import BioevidenceError, InputError
from ..loop.listing import STATES
from .app import Forbidden, render, require, state_of
from .evidence import evidence_view

router = APIRouter()

DECISIONS = ("accept", "reject", "defer")
MAX_RATIONALE = 4000
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_ENTRY_ID = re.compile(r"[1-9][0-9]{0,17}")  # an entry number SQLite can hold (below 2**63)


def _entry_id(text: str) -> int:
    """The entry number in a URL; anything else (``-1``, ``0``, ``abc``, 20 digits) is 404, not an error."""
    if not _ENTRY_ID.fullmatch(text):
        raise Forbidden("no such entry: entries are numbered 1, 2, 3, … (see the queue)", 404)
    return int(text)


def _rule(code: str) -> Any:
    from ..gate.rules import rule

    try:
        return rule(code)
    except (KeyError, BioevidenceError):
        return None


@router.get("/queue")
def queue_page(request: Request, state: str = "open", code: str = "", profile: str = "", source: str = "",
               q: str = "", page: int = 1) -> HTMLResponse:
    require(request)
    web = state_of(request)
    if state not in STATES:
        state = "open"
    listing = web.fresh_listing()
    size = web.settings.page_size
    page = max(1, page)
    result = listing.query(state=state, code=code or None, profile=profile or None, source=source.strip() or None,
                           text=q.strip() or None, offset=(page - 1) * size, limit=size)
    pages = max(1, -(-result.total // size))
    filters = {"state": state, "code": code, "profile": profile, "source": source, "q": q}
    return render(request, "queue.html", rows=result.rows, total=result.total, page=page, pages=pages,
                  filters=filters, facets=listing.facets(), counts=listing.counts(), states=STATES)


@router.get("/entries/{number}")
def entry_page(request: Request, number: str, decided: int = 0) -> Response:
    require(request)
    web = state_of(request)
    entry_id = _entry_id(number)
    try:
        entry = web.queue().get(entry_id)
    except InputError:
        return render(request, "error.html", status=404, title="Not in the queue",
                      message=f"no entry {entry_id} in the review queue")
    validator = web.validator(web.profile_of(entry))
    sources, items = evidence_view(entry.record, entry.report, validator.grounders)
    rules = {f.rule_id: _rule(f.rule_id) for f in entry.report.findings}
    just = next((d for d in entry.decisions if d["id"] == decided), None)
    uses = [u for u in entry.original_record.get("requested_uses") or [] if isinstance(u, str)]
    statement = entry.record.get("statement") if isinstance(entry.record.get("statement"), dict) else {}
    return render(request, "record.html", entry=entry, report=entry.report, sources=sources, items=items,
                  rules=rules, just=just, uses=uses, statement=statement, request_id=secrets.token_urlsafe(24),
                  decisions=DECISIONS)


@router.post("/entries/{entry}/decide")
def decide(request: Request, entry: str, csrf: str = Form(""), decision: str = Form(""),
           rationale: str = Form(""), uses: list[str] = Form(default=[]),  # noqa: B008
           request_id: str = Form("")) -> Response:
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
    return RedirectResponse(f"/entries/{entry_id}?decided={result.decision_id}#status", status_code=303)
