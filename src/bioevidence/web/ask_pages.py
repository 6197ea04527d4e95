"""The ask page: a question → the librarian → the cited answer and its evidence with stance,
streamed with progress (server-sent events); one click sends the answer's record to the review queue.

Everything comes from the librarian's own API (``Librarian.ask``, then
``answering.answer_question``: the record of the answer checked against the pinned papers, and a
cited answer that cites only what the gate admitted). The server renders the result page; the
only script, ``ask.js``, shows the progress lines of ``/ask/stream`` and then opens the result.
Without it the form still works (``/ask/run`` answers, then redirects to the result).

One question runs at a time (the librarian holds one index); results are kept in memory for
their owner (the last :data:`KEEP`), so the record sent to the queue is the one the page showed.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse

from ..errors import BioevidenceError
from .app import Forbidden, render, require, state_of
from .redact import public

router = APIRouter()

KEEP = 100
MAX_QUESTION = 1000


@dataclass
class AskResult:
    id: str
    owner: str
    question: str
    items: list[dict[str, Any]]
    cited: dict[str, Any]
    record: dict[str, Any] | None
    report: Any
    withheld: list[dict[str, Any]]
    entry: int | None = None  # the queue entry, once sent
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class AskService:
    """The librarian over one local index, one question at a time; with ``llm`` the answer is the
    model's synthesis (as ``bioevidence answer --model``), else extractive."""

    def __init__(self, index: Path, llm: Any = None) -> None:
        self.index = index
        self.llm = llm
        self._librarian: Any = None
        self._run = threading.Lock()
        self._results: OrderedDict[str, AskResult] = OrderedDict()
        self._results_lock = threading.Lock()

    def ask(self, question: str, owner: str, progress: Callable[[str], None]) -> AskResult:
        from ..librarian.answering import answer_question
        from ..librarian.librarian import Librarian

        with self._run:
            progress("waiting for the librarian" if self._librarian is None else "question received")
            if self._librarian is None:
                self._librarian = Librarian(self.index)
            self._librarian.progress = progress
            try:
                found = self._librarian.ask(question)
                progress(f"checking {len(found.ranked)} sentences against the pinned papers")
                if self.llm is not None and found.ranked:
                    progress("the model writes the answer from the verified sentences")
                cited, record, report = answer_question(found, llm=self.llm)
            finally:
                self._librarian.progress = lambda message: None
        data = found.to_json()
        result = AskResult(secrets.token_urlsafe(16), owner, question, data["items"], cited.to_json(), record, report,
                           data.get("withheld_retracted") or [])
        with self._results_lock:
            self._results[result.id] = result
            while len(self._results) > KEEP:
                self._results.popitem(last=False)
        progress("done")
        return result

    def get(self, result_id: str, owner: str) -> AskResult | None:
        with self._results_lock:
            found = self._results.get(result_id)
        return found if found is not None and found.owner == owner else None


def ask_service(index: Path | None, llm: Any = None) -> AskService | None:
    if index is None:
        return None
    if not Path(index).is_dir():
        from ..errors import ConfigurationError

        raise ConfigurationError(f"--index {index} is not a folder; build one with `bioevidence index build "
                                 "SOURCE... --index DIR`")
    return AskService(Path(index), llm)


def _service(request: Request) -> AskService:
    service = state_of(request).ask
    if service is None:
        raise Forbidden("the ask page needs a librarian index: start the server with --index DIR "
                        "(bioevidence index build SOURCE... --index DIR)", 404)
    return service


def _question(q: str) -> str:
    question = " ".join(q.split())
    if not question:
        raise Forbidden("ask a question", 400)
    if len(question) > MAX_QUESTION:
        raise Forbidden(f"a question has at most {MAX_QUESTION} characters", 400)
    return question


@router.get("/ask")
def ask_page(request: Request) -> HTMLResponse:
    require(request)
    return render(request, "ask.html", ready=state_of(request).ask is not None)


@router.get("/ask/run")
def ask_run(request: Request, q: str = "") -> Response:
    """The form without script: answer, then show the result."""
    session = require(request)
    result = _service(request).ask(_question(q), session.account.name, lambda message: None)
    return RedirectResponse(f"/ask/results/{result.id}", status_code=303)


def _event(kind: str, data: str) -> str:
    text = data if kind == "result" else public(data)  # a result is this server's own link; messages lose paths
    return f"event: {kind}\ndata: {' '.join(text.splitlines())}\n\n"


@router.get("/ask/stream")
async def ask_stream(request: Request, q: str = "") -> StreamingResponse:
    """Server-sent events: ``progress`` lines, then ``result`` (the result page's path) or ``failed``."""
    from starlette.concurrency import run_in_threadpool

    session = await run_in_threadpool(require, request)
    service = _service(request)
    question = _question(q)
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue()

    def progress(message: str) -> None:
        loop.call_soon_threadsafe(events.put_nowait, ("progress", message))

    async def work() -> None:
        try:
            result = await run_in_threadpool(service.ask, question, session.account.name, progress)
            events.put_nowait(("result", f"/ask/results/{result.id}"))
        except BioevidenceError as exc:
            events.put_nowait(("failed", exc.message))
        except Exception as exc:  # fail closed, and say so on the page
            events.put_nowait(("failed", f"the librarian failed: {type(exc).__name__}"))
        finally:
            events.put_nowait(None)

    task = asyncio.create_task(work())

    async def stream() -> AsyncIterator[str]:
        yield _event("progress", f"asking: {question}")
        while True:
            item = await events.get()
            if item is None:
                break
            yield _event(*item)
        await task

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@router.get("/ask/results/{result_id}")
def ask_result(request: Request, result_id: str) -> HTMLResponse:
    session = require(request)
    result = _service(request).get(result_id, session.account.name)
    if result is None:
        raise Forbidden("this answer is not here any more (the server keeps the last answers of each session); "
                        "ask again", 404)
    left_out = {entry["item"]: entry["why"] for entry in result.cited.get("left_out", [])}
    return render(request, "ask_result.html", result=result, left_out=left_out,
                  admitted=set(result.cited.get("admitted_items", [])))


@router.post("/ask/results/{result_id}/queue")
def ask_to_queue(request: Request, result_id: str, csrf: str = Form("")) -> Response:
    """Send the answer's record to the review queue (once: a second click opens the same entry)."""
    session = require(request, form={"csrf": csrf})
    web = state_of(request)
    result = _service(request).get(result_id, session.account.name)
    if result is None or result.record is None:
        raise Forbidden("there is no record to send: ask again", 404)
    with result.lock:
        if result.entry is None:
            from ..librarian.records import PROFILE

            report = web.validator(PROFILE).validate(result.record)  # as reviewers see it, with this store
            result.entry = web.queue().add(result.record, report, profile=PROFILE,
                                           reason=f"sent from the ask page by {session.account.name}: "
                                                  f"{report.overall_status}")
    return RedirectResponse(f"/entries/{result.entry}", status_code=303)
