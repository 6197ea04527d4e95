"""The FastAPI application: middleware (hosts, body size, security headers), sign-in and sign-out,
and the helpers every page uses (who is signed in, CSRF, rendering).

Pages are server-rendered Jinja2 templates (autoescaped); the only script is the ask page's
``ask.js`` (an ``EventSource``). Every response carries a strict Content-Security-Policy (no
inline script or style, no framing, forms only to this origin) and its friends.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from .._version import __version__
from .sessions import Session
from .state import Settings, WebState

__all__ = ["Forbidden", "NeedLogin", "create_app", "render", "require"]

HERE = Path(__file__).resolve().parent
SESSION_COOKIE = "bioevidence_session"
LOGIN_COOKIE = "bioevidence_login"
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
SIGN_IN = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1), thread_name_prefix="sign-in")


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
    session = current(request)
    env: Environment = request.app.state.templates
    html = env.get_template(template).render(session=session, csrf=session.csrf if session else "",
                                             request_path=request.url.path, **context)
    return HTMLResponse(html, status_code=status)


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
        if request.method in ("GET", "HEAD"):
            return RedirectResponse(f"/login?next={quote(request.url.path)}", status_code=303)
        return PlainTextResponse("sign in first", status_code=403)

    @app.exception_handler(Forbidden)
    async def forbidden(request: Request, exc: Forbidden) -> Response:
        return render(request, "error.html", status=exc.status, title="Refused", message=exc.message)

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
        def attempt() -> Response:
            _same_origin(request)
            sessions = state_of(request).sessions()
            if not sessions.login_token_ok(request.cookies.get(LOGIN_COOKIE), token):
                raise Forbidden("the sign-in form expired or did not come from this server; reload it")
            client = request.client.host if request.client else "?"
            wait = sessions.retry_after(name, client)
            if wait is not None:
                refused = render(request, "login.html", status=429, token=token, next=_safe_next(next),
                                 error=f"Too many failed sign-ins; try again in {wait} s.")
                refused.headers["Retry-After"] = str(wait)
                return refused
            signed = sessions.sign_in(name, password, client)
            if signed is None:
                return render(request, "login.html", status=401, token=token, next=_safe_next(next),
                              error="Wrong name or password, or the account is disabled.")
            cookie, _ = signed
            response = RedirectResponse(_safe_next(next), status_code=303)
            _set_cookie(response, SESSION_COOKIE, cookie, int(settings.limits.lifetime))
            _set_cookie(response, LOGIN_COOKIE, "", 0)
            return response

        return await asyncio.get_running_loop().run_in_executor(SIGN_IN, attempt)

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
