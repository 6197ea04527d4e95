"""JSON out: the canonical hashing form of a record and compact report lines (re-exported by :mod:`bioevidence.io`).

Reading JSON (strict parsing, limits) is :mod:`bioevidence.io`'s; this module only writes it.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)


def canonical_json(value: Any, *, floats: bool = True) -> bytes:
    """Sorted keys, compact separators, ASCII escapes, NaN refused: the hashing form of a record
    (the reference's ``input_sha256`` is the SHA-256 of exactly these bytes).

    Whenever the value is plain JSON data without a float (``floats=False`` is the caller's promise,
    e.g. from ``parse_json_tracked``; otherwise :func:`plain_without_floats` looks), orjson writes the
    same bytes six times faster: its UTF-8 is escaped as the standard encoder's ``ensure_ascii`` does.
    Floats (whose digits the two libraries write differently) and anything else use the standard encoder."""
    if not floats or plain_without_floats(value):
        import orjson

        try:
            fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            fast = None
        if fast is not None:
            if fast.isascii() and b"\x7f" not in fast:
                return fast
            # orjson escapes the ASCII exactly as ``json`` does; DEL and every non-ASCII character
            # (which in JSON text can only stand inside a string) become \uXXXX as ``ensure_ascii`` writes
            text = fast.decode("utf-8").replace("\x7f", "\\u007f")
            return text.encode("ascii", errors=_JSON_ASCII)
    return _CANONICAL.encode(value).encode("ascii")


_PLAIN_SCALARS = frozenset({str, int, bool, type(None)})


def _json_escapes(error: UnicodeError) -> tuple[str, int]:
    """Encode error handler: what ASCII cannot hold as ``ensure_ascii`` writes it (``\\u00e9``, ``\\ud83d\\ude00``)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    out = []
    for code in map(ord, error.object[error.start:error.end]):
        out.append(f"\\u{code:04x}" if code < 0x10000 else
                   f"\\u{0xD800 | ((code - 0x10000) >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}")
    return "".join(out), error.end


_JSON_ASCII = "bioevidence.json_ascii"
codecs.register_error(_JSON_ASCII, _json_escapes)


def plain_without_floats(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` holds only dicts with str keys, lists, str, int, bool and None (exact types, no float),
    at most 250 deep (orjson's limit is 255; a cycle is deeper than any): what orjson and ``json`` write alike."""
    kind = type(value)
    if kind is dict:
        for key in value:
            if type(key) is not str:
                return False
        children = value.values()
    elif kind is list:
        children = value
    else:
        return kind in _PLAIN_SCALARS
    for child in children:
        kind = type(child)
        if kind is str:
            continue
        if kind is dict or kind is list:
            if depth >= 250 or not plain_without_floats(child, depth + 1):
                return False
        elif kind not in _PLAIN_SCALARS:
            return False
    return True


def dumps_line(value: Any) -> str:
    """Compact JSON on one line, UTF-8 kept, for report lines (orjson: five times faster than json)."""
    import orjson

    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
