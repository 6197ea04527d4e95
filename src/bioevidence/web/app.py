"""The FastAPI application: middleware (hosts, body size, security headers), sign-in and sign-out,
and the helpers every page uses (who is signed in, CSRF, rendering).

Pages are server-rendered Jinja2 templates (autoescaped); the only script is the ask page's
``ask.js`` (an ``EventSource``). Every response carries a strict Content-Security-Policy (no
inline script or style, no framing, forms only to this origin) and its friends.

Every page goes through :mod:`bioevidence.web.redact`, so no server path reaches a browser; an
unknown page, a malformed request and an unexpected error get the error page, never a traceback.
Sign-in holds an attempt for its account's backoff (:mod:`bioevidence.web.sessions`) without a
thread waiting, then checks the password on the sign-in threads.
"""

from __future__ import annotations

import asyncio
import math
import secrets
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import FastAPI, Form, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from .._version import __version__
from ..limits import usable_cpus
from ..loop import standing
from .redact import public, redact_page
from .sessions import Session
from .state import Settings, WebState

__all__ = ["Forbidden", "NeedLogin", "create_app", "render", "require"]

HERE = Path(__file__).resolve().parent
SESSION_COOKIE = "bioevidence_session"
LOGIN_COOKIE = "bioevidence_login"
DEVICE_COOKIE = "bioevidence_device"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make browsers send "Origin: null"
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), interest-cohort=()"),
]


#: Sign-ins run here, one per core at most: an argon2 check takes a core for ~35 ms, and a burst of
#: sign-ins then queues on these threads instead of taking the request threads from reviewers at work.
SIGN_IN = ThreadPoolExecutor(max_workers=usable_cpus(), thread_name_prefix="sign-in")


class NeedLogin(Exception):
    """No live session: a page redirects to sign-in, anything else is refused (403)."""


class Forbidden(Exception):
    def __init__(self, message: str, status: int = 403) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class Guard:
    """Pure ASGI middleware: refuse unknown ``Host`` names and oversized bodies; add security headers."""

    def __init__(self, app: Any, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.hosts = {h.lower() for h in settings.allowed_hosts}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1").lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name not in self.hosts:
            await _plain(send, 400, b"unknown Host; start the server with --allowed-host NAME to serve it")
            return
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.settings.max_body):
            await _plain(send, 413, b"request body too large")
            return
        https = self.settings.https
        received = 0
        limit = self.settings.max_body

        async def bounded_receive() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise Forbidden("request body too large", 413)
            return message

        async def secured_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                extra = list(HEADERS)
                if https:
                    extra.append((b"strict-transport-security", b"max-age=31536000"))
                names = {k.lower() for k, _ in message.get("headers", [])}
                if b"cache-control" not in names:
                    extra.append((b"cache-control", b"no-store"))
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, bounded_receive, secured_send)


async def _plain(send: Any, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), *HEADERS]})
    await send({"type": "http.response.body", "body": body})


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals["version"] = __version__
    env.globals.update(standing=standing.standing, label=standing.label, meaning=standing.meaning)
    return env


def state_of(request: Request) -> WebState:
    web: WebState = request.app.state.web
    return web


def current(request: Request) -> Session | None:
    if hasattr(request.state, "session"):
        known: Session | None = request.state.session
        return known
    session = state_of(request).sessions().get(request.cookies.get(SESSION_COOKIE))
    request.state.session = session
    return session


def require(request: Request, *, role: str | None = None, form: Any = None) -> Session:
    """The signed-in session; with ``form``, also a same-origin request carrying its CSRF token."""
    session = current(request)
    if session is None:
        raise NeedLogin()
    if role == "admin" and session.account.role != "admin":
        raise Forbidden("this page is for admins of the review queue")
    if form is not None:
        _same_origin(request)
        if not state_of(request).sessions().csrf_ok(session, form.get("csrf") if hasattr(form, "get") else form):
            raise Forbidden("the form's CSRF token is missing or wrong; reload the page and try again")
    return session


def _same_origin(request: Request) -> None:
    origin = request.headers.get("origin")
    if origin is None:  # browsers send Origin with every POST; other clients still need the CSRF token
        return
    if origin == "null" or urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower():
        raise Forbidden("cross-origin form refused")


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A template rendered for the signed-in person; ``message`` and ``error`` (often an exception's
    text) lose any path, and the page any path under the server's own folders (``redact``)."""
    session = current(request)
    env: Environment = request.app.state.templates
    for key in ("message", "error"):
        if isinstance(context.get(key), str):
            context[key] = public(context[key])
    html = env.get_template(template).render(session=session, csrf=session.csrf if session else "",
                                             request_path=request.url.path, **context)
    return HTMLResponse(redact_page(html), status_code=status)


def error_page(request: Request, status: int, title: str, message: str) -> Response:
    """The error page, or one plain line when even that cannot be drawn (the queue file unreadable...)."""
    try:
        return render(request, "error.html", status=status, title=title, message=message)
    except Exception:  # the answer to an error must not fail
        return PlainTextResponse(f"{title}: {public(message)}", status_code=status)


def _set_cookie(response: Response, name: str, value: str, max_age: int | None) -> None:
    response.set_cookie(name, value, max_age=max_age, path="/", secure=True, httponly=True, samesite="strict")


def _safe_next(target: str | None) -> str:
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/queue"
    return target


def create_app(settings: Settings, validator_for: Any, *, ask: Any = None) -> Guard:
    """The application over ``settings.queue`` (which must exist and verify)."""
    from . import ask_pages, audit_pages, review_pages

    app = FastAPI(title="bioevidence review", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.web = WebState(settings, validator_for, ask=ask)
    app.state.templates = _environment()
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.exception_handler(NeedLogin)
    async def need_login(request: Request, exc: NeedLogin) -> Response:
        if request.method in ("GET", "HEAD"):  # back to the same page after signing in, filter and all
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"/login?next={quote(target, safe='/')}", status_code=303)
        return PlainTextResponse("sign in first", status_code=403)

    @app.exception_handler(Forbidden)
    async def forbidden(request: Request, exc: Forbidden) -> Response:
        title = "Not here" if exc.status == 404 else "Refused"
        return await run_in_threadpool(error_page, request, exc.status, title, exc.message)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        known = {404: ("Not here", "there is no such page"), 405: ("Refused", "this page does not take that method")}
        title, message = known.get(exc.status_code, ("Refused", "the server cannot answer this request"))
        if exc.status_code == 503 and isinstance(exc.detail, str):  # the queue was altered (web/state.py)
            title, message = "Queue altered", exc.detail
        response = await run_in_threadpool(error_page, request, exc.status_code, title, message)
        for name, value in (exc.headers or {}).items():
            response.headers.setdefault(name, value)
        return response

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        return await run_in_threadpool(error_page, request, 400, "Refused",
                                       "the request's fields or parameters are not valid; go back and try again")

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> Response:
        # the server re-raises it after this answer, so the traceback goes to its log (stderr), never to the page
        return await run_in_threadpool(error_page, request, 500, "Server error",
                                       "something went wrong on the server; the details are in its log")

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> PlainTextResponse:
        return PlainTextResponse("ok")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204)

    @app.get("/")
    def home() -> RedirectResponse:
        return RedirectResponse("/queue", status_code=303)

    @app.get("/login")
    def login_page(request: Request, next: str = "/queue") -> HTMLResponse:
        cookie = secrets.token_urlsafe(32)
        token = state_of(request).sessions().login_token(cookie)
        page = render(request, "login.html", token=token, next=_safe_next(next), error=None)
        _set_cookie(page, LOGIN_COOKIE, cookie, 1800)
        return page

    @app.post("/login")
    async def login(request: Request, name: str = Form(""), password: str = Form(""), token: str = Form(""),
                    next: str = Form("/queue")) -> Response:
        web = state_of(request)
        key = name[:64]
        client = request.client.host if request.client else "?"

        def admit() -> tuple[bool, float]:
            _same_origin(request)
            sessions = web.sessions()
            if not sessions.login_token_ok(request.cookies.get(LOGIN_COOKIE), token):
                raise Forbidden("the sign-in form expired or did not come from this server; reload it")
            known = sessions.known_device(request.cookies.get(DEVICE_COOKIE), key)
            return known, sessions.backoff(key).wait(sessions.clock())

        def page(status: int, error: str) -> HTMLResponse:
            return render(request, "login.html", status=status, token=token, next=_safe_next(next), error=error)

        known, wait = await run_in_threadpool(admit)
        if not web.in_flight.enter(key, known):  # a flood on this name: refused unchecked, uncounted
            retry = max(1, math.ceil(wait))
            refused = await run_in_threadpool(page, 429, "Many sign-ins to this account are under way; "
                                                         f"try again in {retry} s.")
            refused.headers["Retry-After"] = str(retry)
            return refused
        try:
            if wait > 0:
                await web.sleep(wait)  # held, right or wrong alike; no thread waits

            def attempt() -> Response:
                sessions = web.sessions()
                signed = sessions.sign_in(name, password, client)
                if signed is None:
                    return page(401, "Wrong name or password, or the account is disabled. After repeated "
                                     "failures each sign-in to that name waits longer "
                                     f"(at most {settings.limits.max_delay:g} s).")
                cookie, session = signed
                response = RedirectResponse(_safe_next(next), status_code=303)
                _set_cookie(response, SESSION_COOKIE, cookie, int(settings.limits.lifetime))
                _set_cookie(response, LOGIN_COOKIE, "", 0)
                _set_cookie(response, DEVICE_COOKIE, sessions.device_cookie(session.account),
                            settings.limits.device_days * 86400)
                return response

            return await asyncio.get_running_loop().run_in_executor(SIGN_IN, attempt)
        finally:
            web.in_flight.leave(key)

    @app.post("/logout")
    def logout(request: Request, csrf: str = Form("")) -> Response:
        session = require(request, form={"csrf": csrf})
        state_of(request).sessions().sign_out(session)
        response = RedirectResponse("/login", status_code=303)
        _set_cookie(response, SESSION_COOKIE, "", 0)
        return response

    app.include_router(review_pages.router)
    app.include_router(audit_pages.router)
    app.include_router(ask_pages.router)
    return Guard(app, settings)
