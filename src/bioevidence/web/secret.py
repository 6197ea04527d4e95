"""The server's session secret: from the environment, or a generated file only its owner can read.

``BIOEVIDENCE_SESSION_SECRET`` (at least 32 characters) wins. Otherwise the secret is read from
``--secret-file`` (default: beside the queue, ``<queue>.session-secret``); when that file does not
exist it is created with 32 random bytes, mode 0600, refusing to follow a symlink. An existing
file must be a regular file owned by the user running the server and readable by nobody else,
else the server refuses to start (fail closed) and says how to fix it.

The secret keys the HMAC under which session cookies are stored (reading the database gives no
usable session) and the login form's CSRF token. Changing it signs everyone out.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from ..errors import ConfigurationError

__all__ = ["ENV", "MIN_CHARS", "load_secret"]

ENV = "BIOEVIDENCE_SESSION_SECRET"
MIN_CHARS = 32


def default_secret_file(queue: Path) -> Path:
    return queue.with_name(queue.name + ".session-secret")


def load_secret(file: Path, *, environ: dict[str, str] | None = None) -> tuple[bytes, str]:
    """The secret and where it came from (``environment``, ``file``, ``generated``)."""
    env = os.environ if environ is None else environ
    value = env.get(ENV)
    if value is not None:
        if len(value.strip()) < MIN_CHARS:
            raise ConfigurationError(f"{ENV} must hold at least {MIN_CHARS} characters (e.g. the output of "
                                     "`python3 -c 'import secrets; print(secrets.token_hex(32))'`)")
        return value.strip().encode(), "environment"
    try:
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read(file), "file"
    except OSError as exc:
        raise ConfigurationError(f"cannot create the session secret file {file} ({exc.strerror}); pass "
                                 f"--secret-file or set {ENV}") from exc
    try:
        os.write(fd, (secrets.token_hex(32) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return _read(file), "generated"


def _read(file: Path) -> bytes:
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise ConfigurationError(f"cannot read the session secret file {file} ({exc.strerror}); it must be a "
                                 "regular file, not a symlink") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigurationError(f"the session secret file {file} is not a regular file")
        if info.st_uid != os.geteuid():
            raise ConfigurationError(f"the session secret file {file} belongs to another user; it must be owned by "
                                     "the user running the server")
        if info.st_mode & 0o077:
            raise ConfigurationError(f"the session secret file {file} can be read by others (mode "
                                     f"{stat.S_IMODE(info.st_mode):o}); run `chmod 600 {file}`")
        data = os.read(fd, 4096).strip()
    finally:
        os.close(fd)
    if len(data) < MIN_CHARS:
        raise ConfigurationError(f"the session secret file {file} holds fewer than {MIN_CHARS} characters; delete it "
                                 "and a new one is generated")
    return data
