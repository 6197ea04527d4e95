"""Server paths kept out of what the pages show.

An error message written for the command line names files (``no entry 7 in the review queue
/srv/review/q.sqlite``, a snapshot's path, an index folder); a page must not hand them to a
browser. :func:`public` cleans a message: every absolute path of two or more parts becomes
``[server path]``. :func:`redact_page` cleans a whole rendered page of the paths this server
knows to be its own (the queue's folder, the working folder, the home folder, Python's prefixes
and ``site-packages``, the package itself), wherever they appear, without touching the page's own
links. Unexpected errors are answered with a page that says only that (``app.py``), never a
traceback.
"""

from __future__ import annotations

import contextlib
import os
import re
import site
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

__all__ = ["HIDDEN", "add_roots", "public", "redact_page"]

HIDDEN = "[server path]"
_PART = r"[\w.+~@%=-]+"
_BEFORE = r"(?<![\w/.:~%-])"  # not inside a word, a URL or another path
_ANY_PATH = re.compile(rf"{_BEFORE}(?:/{_PART}){{2,}}/?")
_roots: set[str] = set()
_pattern: list[re.Pattern[str] | None] = [None]
_lock = threading.Lock()


def add_roots(paths: Iterable[str | Path | None]) -> None:
    """Remember folders whose paths no page shows (at least two characters after the root ``/``)."""
    with _lock:
        for path in paths:
            if not path:
                continue
            for form in {str(path), os.path.realpath(path)}:
                text = form.rstrip("/")
                if text.startswith("/") and len(text) >= 4:
                    _roots.add(text)
        ordered = sorted(_roots, key=len, reverse=True)
        _pattern[0] = re.compile(rf"{_BEFORE}(?:{'|'.join(map(re.escape, ordered))})(?![\w.+~@%=-])(?:/{_PART})*/?"
                                 ) if ordered else None


def _default_roots() -> list[str | Path | None]:
    package = Path(__file__).resolve().parent.parent
    roots: list[str | Path | None] = [package, package.parent, sys.prefix, sys.base_prefix, sys.exec_prefix,
                                      os.environ.get("HOME"), os.environ.get("VIRTUAL_ENV")]
    with contextlib.suppress(OSError):
        roots.append(os.getcwd())
    with contextlib.suppress(AttributeError):  # a virtualenv's old site module
        roots += [*site.getsitepackages(), site.getusersitepackages()]
    return roots


add_roots(_default_roots())


def redact_page(html: str) -> str:
    """``html`` with every path under a known server folder replaced by :data:`HIDDEN`."""
    pattern = _pattern[0]
    return pattern.sub(HIDDEN, html) if pattern is not None else html


def public(message: str) -> str:
    """A message fit for a page: known server folders and any other absolute path replaced."""
    return _ANY_PATH.sub(HIDDEN, redact_page(message))
