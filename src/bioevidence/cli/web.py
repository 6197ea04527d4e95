"""``bioevidence serve`` and ``bioevidence users``: the review pages in a browser, and their accounts."""

from __future__ import annotations

import ipaddress
import json
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigurationError, plural
from .gate import _build_grounders, _grounding_options
from .loop import DEFAULT_QUEUE, _open_queue
from .model import model_options, open_llm

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

_queue_option = click.option("--queue", "queue_path", type=click.Path(dir_okay=False, path_type=Path),
                             default=DEFAULT_QUEUE, show_default=True, help="The review queue (a SQLite file).")


def _need_extra() -> None:
    try:
        import argon2  # noqa: F401
        import fastapi  # noqa: F401
        import jinja2  # noqa: F401
        import multipart  # type: ignore[import-untyped]  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        from ..extras import MissingExtraError

        module = (exc.name or "fastapi").split(".")[0]
        raise MissingExtraError(module, "web", what=f"this command needs {module}, which") from exc


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.command()
@_queue_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but loopback is reachable from the network: give it on purpose.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port (0: any free port; the line printed at start says which).")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="Another Host name the server answers to (its DNS name on a lab server); repeatable.")
@click.option("--secret-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Session secret file (created mode 0600 when absent). Default: QUEUE.session-secret; "
                   "$BIOEVIDENCE_SESSION_SECRET wins.")
@click.option("--certfile", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="TLS certificate (PEM): serve HTTPS.")
@click.option("--keyfile", type=click.Path(dir_okay=False, exists=True, path_type=Path), help="TLS private key (PEM).")
@click.option("--profile", "profile_name", metavar="NAME|FILE",
              help="Profile to validate decisions with (default: the one each entry was queued with).")
@click.option("--index", "index_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Librarian index for the ask page (bioevidence index build).")
@model_options("Model for the ask page's synthesis, as `bioevidence answer --model` (the name the server lists "
               "at /v1/models); without it answers are extractive.")
@click.option("--access-log", is_flag=True, help="Log every request on stderr.")
@_grounding_options
def serve(queue_path: Path, host: str, port: int, allowed_hosts: tuple[str, ...], secret_file: Path | None,
          certfile: Path | None, keyfile: Path | None, profile_name: str | None, index_dir: Path | None,
          model: str | None, base_url: str | None, model_timeout: float, access_log: bool, **grounding: Any) -> None:
    """Serve the review queue in a browser: queue, records with their evidence, decisions, audit.

    Reads and writes the same queue file as `bioevidence review`. There is no default account:
    add one with `bioevidence users add`. Binds 127.0.0.1 unless --host says otherwise.

    \b
    Examples:
      bioevidence serve --queue review-queue.sqlite --snapshot-dir snapshots/
      bioevidence serve --queue q.sqlite --snapshot-dir snapshots/ --index ix/ --model gemma \\
          --base-url http://127.0.0.1:8080/v1
      bioevidence serve --queue q.sqlite --host 0.0.0.0 --allowed-host review.lab.example \\
          --certfile cert.pem --keyfile key.pem --snapshot-dir /data/snapshots
    """
    _need_extra()
    import socket

    import uvicorn

    from ..gate.profiles import load_profile
    from ..gate.validator import Validator
    from ..web.app import create_app
    from ..web.ask_pages import ask_service
    from ..web.secret import default_secret_file, load_secret
    from ..web.state import Settings

    if (certfile is None) != (keyfile is None):
        raise click.UsageError("give both --certfile and --keyfile, or neither")
    if model and index_dir is None:
        raise click.UsageError("--model is for the ask page: give --index DIR too")
    llm = open_llm(model, base_url, model_timeout)
    if not _loopback(host):
        click.echo(f"warning: serving on {host}, reachable from the network"
                   + ("" if certfile else "; without TLS browsers send no session cookie there: pass --certfile/"
                      "--keyfile or serve behind an HTTPS proxy"), err=True)
    queue_path = queue_path.resolve()
    if not queue_path.exists():
        raise ConfigurationError(f"no review queue at {queue_path}; pass --queue FILE (records arrive through revise "
                                 "or `bioevidence review add`)")
    secret, origin = load_secret(secret_file or default_secret_file(queue_path))
    fixed = load_profile(profile_name) if profile_name else None

    def validator_for(name: str | None) -> Any:
        profile = fixed if fixed is not None else (load_profile(name) if name else None)
        return Validator(profile, grounders=_build_grounders(profile, grounding))

    hosts = [*LOOPBACK_NAMES, *allowed_hosts]
    if host not in ("0.0.0.0", "::"):
        hosts.append(host if ":" not in host else f"[{host}]")
    settings = Settings(queue=queue_path, secret=secret, allowed_hosts=tuple(dict.fromkeys(h.lower() for h in hosts)),
                        https=certfile is not None)
    app = create_app(settings, validator_for, ask=ask_service(index_dir, llm) if index_dir else None)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigurationError(f"cannot listen on {host}:{port} ({exc.strerror}); choose another --port") from exc
    bound = sock.getsockname()[1]
    scheme = "https" if certfile else "http"
    shown = f"[{host}]" if ":" in host else host
    accounts = app.app.state.web.accounts_at_start
    click.echo(f"serving {scheme}://{shown}:{bound}/ (queue {queue_path}, {plural(accounts, 'account')}, "
               f"session secret from {origin})", err=False)
    if not accounts:
        click.echo("no account yet: bioevidence users add NAME --role admin --password-stdin --queue "
                   f"{queue_path}", err=True)
    sys.stdout.flush()
    config = uvicorn.Config(app, log_level="info" if access_log else "warning", access_log=access_log,
                            ssl_certfile=str(certfile) if certfile else None,
                            ssl_keyfile=str(keyfile) if keyfile else None, server_header=False, proxy_headers=False,
                            timeout_graceful_shutdown=5, limit_concurrency=200)
    uvicorn.Server(config).run(sockets=[sock])


# -- users -------------------------------------------------------------------------------------

@click.group()
def users() -> None:
    """Reviewer accounts of a review queue (for `bioevidence serve`). There is no default account.

    \b
    Examples:
      printf '%s\\n' "$PASSWORD" | bioevidence users add alice --role admin --password-stdin --queue q.sqlite
      bioevidence users add bob --role reviewer --reviewer-id orcid:0000-0002-1825-0097 --password-stdin
      bioevidence users list --queue q.sqlite
      bioevidence users disable bob --queue q.sqlite
      bioevidence users unlock bob --queue q.sqlite
    """


def _password(from_stdin: bool) -> str:
    if from_stdin:
        line = sys.stdin.readline()
        return line[:-1] if line.endswith("\n") else line
    if not sys.stdin.isatty():
        raise click.UsageError("pass --password-stdin to read the password from standard input")
    return str(click.prompt("password", hide_input=True, confirmation_prompt=True))


@users.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(["reviewer", "admin"]), required=True,
              help="reviewer: the queue and decisions; admin: also the audit page and exports.")
@click.option("--password-stdin", is_flag=True, help="Read the password (one line) from standard input.")
@click.option("--reviewer-id", help="Id written into decisions (e.g. orcid:0000-0002-1825-0097; default "
              "bioevidence-user:NAME).")
@click.option("--full-name", help="Name written into decisions.")
@_queue_option
def users_add(name: str, role: str, password_stdin: bool, reviewer_id: str | None, full_name: str | None,
              queue_path: Path) -> None:
    """Add an account (a name is never reused, even after it is disabled).

    A password has 12 to 1,024 characters and is refused when blank, one character or a short
    pattern repeated, a simple sequence (123456789012, abcdefghijkl), a common password (a built-in
    blocklist, also with digits or symbols around it) or the account's own name.

    \b
    Examples:
      printf '%s\\n' "$PASSWORD" | bioevidence users add alice --role admin --password-stdin --queue q.sqlite
      bioevidence users add bob --role reviewer --reviewer-id orcid:0000-0002-1825-0097 --full-name "Bob Curator" \\
          --password-stdin --queue q.sqlite < bob-password.txt
    """
    _need_extra()
    password = _password(password_stdin)
    with _open_queue(queue_path, must_exist=False) as queue:
        account = queue.accounts.add(name, role=role, password=password, reviewer_id=reviewer_id,
                                     full_name=full_name)
    click.echo(f"added {account.name} ({account.role}, decides as {account.reviewer_id})")


@users.command("list")
@_queue_option
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def users_list(queue_path: Path, fmt: str) -> None:
    """List accounts with their role and whether they are enabled.

    \b
    Examples:
      bioevidence users list --queue q.sqlite
      bioevidence users list --queue q.sqlite --format json
    """
    with _open_queue(queue_path) as queue:
        rows = queue.accounts.list()
    if fmt == "json":
        click.echo(json.dumps([a.to_dict() for a in rows], indent=2, ensure_ascii=False))
        return
    from ..errors import safe_message

    click.echo(f"{'name':<20} {'role':<9} {'state':<9} {'reviewer id':<36} since")
    for a in rows:
        click.echo(f"{a.name:<20} {a.role:<9} {'enabled' if a.enabled else 'disabled':<9} "
                   f"{safe_message(a.reviewer_id, 36):<36} {a.changed_at}")


@users.command("disable")
@click.argument("name")
@_queue_option
def users_disable(name: str, queue_path: Path) -> None:
    """Disable an account; its sessions end at once. Its decisions stay.

    \b
    Examples:
      bioevidence users disable bob --queue q.sqlite
    """
    with _open_queue(queue_path) as queue:
        queue.accounts.disable(name)
    click.echo(f"disabled {name}")


@users.command("enable")
@click.argument("name")
@_queue_option
def users_enable(name: str, queue_path: Path) -> None:
    """Enable a disabled account again.

    \b
    Examples:
      bioevidence users enable bob --queue q.sqlite
    """
    with _open_queue(queue_path) as queue:
        queue.accounts.enable(name)
    click.echo(f"enabled {name}")


@users.command("password")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the new password (one line) from standard input.")
@_queue_option
def users_password(name: str, password_stdin: bool, queue_path: Path) -> None:
    """Set a new password; the account's sessions end. The password rules are those of `users add`.

    \b
    Examples:
      printf '%s\\n' "$NEW_PASSWORD" | bioevidence users password bob --password-stdin --queue q.sqlite
    """
    _need_extra()
    password = _password(password_stdin)
    with _open_queue(queue_path) as queue:
        queue.accounts.set_password(name, password)
    click.echo(f"new password for {name}")


@users.command("unlock")
@click.argument("name")
@_queue_option
def users_unlock(name: str, queue_path: Path) -> None:
    """End an account's run of failed sign-ins, so its sign-ins no longer wait (docs/web.md, Security).

    A right password always signs in, but after 5 failures each sign-in to that name waits a little
    (up to 30 s); this clears it at once, as a successful sign-in does. Kept in the queue file.

    \b
    Examples:
      bioevidence users unlock bob --queue q.sqlite
    """
    with _open_queue(queue_path) as queue:
        failures = queue.accounts.unlock(name)
    click.echo(f"unlocked {name} ({plural(failures, 'failed sign-in')} cleared)")
