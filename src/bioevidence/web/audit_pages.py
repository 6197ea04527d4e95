"""The audit page (admins): decisions over time, by code and by reviewer, agreement, audit-sample
scores with their exact bounds, and the CSV exports."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, Response

from ..errors import BioevidenceError
from . import auditing, charts
from .app import Forbidden, render, require, state_of

router = APIRouter()


def _page(request: Request, *, score: dict[str, Any] | None = None, error: str | None = None,
          status: int = 200) -> HTMLResponse:
    listing = state_of(request).fresh_listing()
    facts = listing.decisions()
    days, codes, reviewers = auditing.by_day(facts), auditing.by_code(facts), auditing.by_reviewer(facts)
    agree = auditing.agreement(listing.latest_by_reviewer())
    score_chart = None
    if score is not None:
        score_chart = charts.intervals(
            [(r["route"], r["error_rate"], *(r["error_rate_wilson"] or (None, None)), r["error_rate_upper_bound"])
             for r in score["routes"]], "error rate per route, Wilson interval and exact upper bound")
    return render(request, "audit.html", status=status, facts=facts, days=days, codes=codes, reviewers=reviewers,
                  series=auditing.SERIES, agreement=agree, score=score, score_chart=score_chart, error=error,
                  day_chart=charts.columns(days, auditing.SERIES, "decisions per day"),
                  code_chart=charts.stacked_bars(codes, auditing.SERIES, "decisions by the codes that queued them"),
                  reviewer_chart=charts.stacked_bars(reviewers, auditing.SERIES, "decisions by reviewer"),
                  counts=listing.counts())


@router.get("/audit")
def audit_page(request: Request) -> HTMLResponse:
    require(request, role="admin")
    return _page(request)


async def _read(upload: UploadFile | None, limit: int, what: str) -> bytes:
    if upload is None:
        raise Forbidden(f"choose the {what} file", 400)
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise Forbidden(f"the {what} file is larger than {limit // (1024 * 1024)} MiB", 413)
    return data


@router.post("/audit/score")
async def audit_score(request: Request, csrf: str = Form(""), manifest: UploadFile | None = File(None),  # noqa: B008
                      labels: UploadFile | None = File(None)) -> HTMLResponse:  # noqa: B008
    from starlette.concurrency import run_in_threadpool

    from ..io import parse_json
    from ..loop.audit import LABEL_COLUMNS, SHEET_COLUMNS, audit_score, read_csv

    await run_in_threadpool(require, request, role="admin", form={"csrf": csrf})
    limit = state_of(request).settings.max_upload
    manifest_bytes = await _read(manifest, limit, "manifest")
    label_bytes = await _read(labels, limit, "labels")

    def score() -> HTMLResponse:
        try:
            value = parse_json(manifest_bytes, file="manifest")
            if not isinstance(value, dict):
                raise Forbidden("the manifest is not an audit manifest (audit_manifest.json)", 400)
            rows = [r for r in read_csv(label_bytes, file="labels", required=SHEET_COLUMNS, optional=LABEL_COLUMNS)
                    if r.get("admission_label")]
            result = audit_score(value, rows)
        except (BioevidenceError, KeyError, TypeError, ValueError) as exc:
            message = exc.message if isinstance(exc, BioevidenceError) else f"not an audit manifest ({exc})"
            return _page(request, error=message, status=400)
        return _page(request, score=result)

    return await run_in_threadpool(score)


def _csv(text: str, name: str) -> Response:
    return Response(text, media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


@router.get("/audit/predictions.csv")
def predictions(request: Request) -> Response:
    require(request, role="admin")
    return _csv(auditing.predictions_csv(state_of(request).fresh_listing().summaries()), "predictions.csv")


@router.get("/audit/decisions.csv")
def decisions(request: Request) -> Response:
    require(request, role="admin")
    return _csv(auditing.decisions_csv(state_of(request).fresh_listing().decisions()), "decisions.csv")
