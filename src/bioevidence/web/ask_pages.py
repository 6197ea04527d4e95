"""The ask page: a question → the librarian → the cited answer and its evidence with stance,
streamed with progress (server-sent events); one click sends the answer's record to the review queue.

Everything comes from the librarian's own API (``Librarian.ask``, then
``answering.answer_question``: the record of the answer checked against the pinned papers, and a
cited answer that cites only what the gate admitted). The server renders the result page; the
only script, ``ask.js``, shows the progress lines of ``/ask/stream`` and then opens the result.
Without it the form still works (``/ask/run`` answers, then redirects to the result).

One question runs at a time (the librarian holds one index), on the librarian's own thread
(:attr:`AskService.executor`): a question waiting for it holds no request thread, so the queue and
record pages never wait behind the librarian. Each account has at most one question in flight and
at most :data:`WAITING` questions wait in all; another is refused at once with 429 and
``Retry-After`` (:class:`Busy`). Results are kept in memory for their owner (the last :data:`KEEP`),
so the record sent to the queue is the one the page showed, and its entry says what the reviewer is
asked to decide: the question, the answer the asker saw, and the gate's status.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
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
WAITING = 16  # questions waiting for the librarian or running, from every account together
RETRY_AFTER = 5  # seconds a refused asker is told to wait


class Busy(Exception):
    """A question refused before it started (its account has one in flight, or too many wait)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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
    verdict: str = ""  # the answer as the page showed it (its direction, in words)
    retriever: str = ""  # which retriever found the sentences, and why (`ask --retriever auto`)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class AskService:
    """The librarian over one local index, one question at a time; with ``llm`` the answer is the
    model's synthesis (as ``bioevidence answer --model``), else extractive."""

    def __init__(self, index: Path, llm: Any = None, waiting: int = WAITING) -> None:
        self.index = index
        self.llm = llm
        self.waiting = waiting
        self._librarian: Any = None
        self._run = threading.Lock()
        self._results: OrderedDict[str, AskResult] = OrderedDict()
        self._results_lock = threading.Lock()
        #: The librarian's own thread: questions queue here, never on the server's request threads.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="librarian")
        self._asking: set[str] = set()
        self._asking_lock = threading.Lock()

    def begin(self, owner: str) -> None:
        """Take ``owner``'s one place in flight, or raise :class:`Busy`; pair with :meth:`end`."""
        with self._asking_lock:
            if owner in self._asking:
                raise Busy("you already have a question under way: one at a time for each account; its answer "
                           "opens when it is ready (or ask again once it is)")
            if len(self._asking) >= self.waiting:
                raise Busy(f"the librarian has {len(self._asking)} questions waiting; try again in a moment")
            self._asking.add(owner)

    def end(self, owner: str) -> None:
        with self._asking_lock:
            self._asking.discard(owner)

    def in_flight(self, owner: str) -> bool:
        with self._asking_lock:
            return owner in self._asking

    async def run(self, question: str, owner: str, progress: Callable[[str], None]) -> AskResult:
        """:meth:`ask` on the librarian's thread, for an owner that holds its place (:meth:`begin`)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self.ask, question, owner, progress)

    def ask(self, question: str, owner: str, progress: Callable[[str], None]) -> AskResult:
        from ..librarian.answering import answer_question
        from ..librarian.librarian import Librarian
        from ..librarian.render import retrieved_with

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
        shown = cited.to_json()
        result = AskResult(secrets.token_urlsafe(16), owner, question, data["items"], shown, record, report,
                           data.get("withheld_retracted") or [], verdict=str(shown.get("verdict") or ""),
                           retriever=retrieved_with(data["provenance"]) if data["provenance"].get("retriever") else "")
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


def _refused(request: Request, busy: Busy) -> Response:
    """429 with ``Retry-After``: the page for a browser, one line for the stream's script."""
    from starlette.responses import PlainTextResponse

    if request.url.path == "/ask/stream":
        response: Response = PlainTextResponse(busy.message, status_code=429)
    else:
        response = render(request, "error.html", status=429, title="Not now", message=busy.message)
    response.headers["Retry-After"] = str(RETRY_AFTER)
    return response


@router.get("/ask/run")
async def ask_run(request: Request, q: str = "") -> Response:
    """The form without script: answer, then show the result."""
    from starlette.concurrency import run_in_threadpool

    session = await run_in_threadpool(require, request)
    service = _service(request)
    question = _question(q)
    owner = session.account.name
    try:
        service.begin(owner)
    except Busy as busy:
        return await run_in_threadpool(_refused, request, busy)
    try:
        result = await service.run(question, owner, lambda message: None)
    finally:
        service.end(owner)
    return RedirectResponse(f"/ask/results/{result.id}", status_code=303)


@router.get("/ask/busy")
def ask_busy(request: Request) -> Response:
    """Whether this account has a question in flight (what ``ask.js`` says when a stream is refused)."""
    from starlette.responses import JSONResponse

    session = require(request)
    return JSONResponse({"in_flight": _service(request).in_flight(session.account.name)})


def _event(kind: str, data: str) -> str:
    text = data if kind == "result" else public(data)  # a result is this server's own link; messages lose paths
    return f"event: {kind}\ndata: {' '.join(text.splitlines())}\n\n"


@router.get("/ask/stream")
async def ask_stream(request: Request, q: str = "") -> Response:
    """Server-sent events: ``progress`` lines, then ``result`` (the result page's path) or ``failed``;
    429 at once when the account already has a question in flight (or too many wait)."""
    from starlette.concurrency import run_in_threadpool

    session = await run_in_threadpool(require, request)
    service = _service(request)
    question = _question(q)
    owner = session.account.name
    try:
        service.begin(owner)
    except Busy as busy:
        return await run_in_threadpool(_refused, request, busy)
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue()

    def progress(message: str) -> None:
        loop.call_soon_threadsafe(events.put_nowait, ("progress", message))

    async def work() -> None:
        try:
            result = await service.run(question, owner, progress)
            events.put_nowait(("result", f"/ask/results/{result.id}"))
        except BioevidenceError as exc:
            events.put_nowait(("failed", exc.message))
        except Exception as exc:  # fail closed, and say so on the page
            events.put_nowait(("failed", f"the librarian failed: {type(exc).__name__}"))
        finally:
            service.end(owner)  # even when the asker left: the question ran to its end
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


def queued_because(result: AskResult, name: str, report: Any) -> str:
    """Why an answer's record is in the queue, and what its reviewer is asked: whether the evidence
    answers the question as the answer the asker saw says (even when the gate admits the record)."""
    from ..loop.standing import label, of_report

    seen = result.cited.get("record_status")
    now = of_report(report)
    status = label(now) if not seen or seen == report.overall_status else (
        f"{label(now)} here; the ask page showed {label(str(seen))}")
    verdict = " ".join(result.verdict.split()) or "no answer"
    return (f"sent from the ask page by {name} to confirm the answer to “{result.question}”: the answer shown was "
            f"“{verdict}” (the gate: {status}); accept if the cited evidence answers the question so")


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
                                           reason=queued_because(result, session.account.name, report))
    return RedirectResponse(f"/entries/{result.entry}", status_code=303)
