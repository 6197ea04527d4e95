"""The ask page (placeholder until the librarian adapter is wired)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from .app import render, require

router = APIRouter()


def ask_service(index: Path | None, validator_for: Any) -> Any:
    return None


@router.get("/ask")
def ask_page(request: Request) -> HTMLResponse:
    require(request)
    return render(request, "error.html", title="Ask", message="start the server with --index DIR")
