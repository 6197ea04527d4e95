"""Safe file I/O shared by every stage: strict JSON/YAML parsing, bounded reads, atomic writes.

* JSON: duplicate keys, ``NaN``/``Infinity``, invalid UTF-8, lone surrogates (``"\\ud800"``) and
  nesting deeper than ``MAX_DEPTH`` are refused; files over ``MAX_BYTES`` are refused before
  they are read.
* YAML: ``yaml.safe_load`` semantics (no tags that build objects), duplicate and non-string
  keys refused, same depth and size limits, and alias limits (count and expanded size, see
  :mod:`bioevidence.limits`) checked on the composed node graph before anything is built, so
  a "billion laughs" file is refused in milliseconds.
* Reads (:func:`read_limited`) take only regular files (not pipes or devices) and read at most
  the limit, and with ``within`` refuse a path that leaves a workspace (:func:`bioevidence.paths.confine`).
* Gzip (:func:`iter_gunzip`) is inflated as a stream with a cap on the inflated size.
* Error messages quote at most a short, escaped excerpt of an input (``errors.excerpt``).
* Writes (atomic, resumable, locked) live in :mod:`bioevidence.writes` and JSON encoding (the
  canonical hashing form, report lines) in :mod:`bioevidence.jsonout`, both re-exported here. Where
  outputs may go (off the run's inputs, out of pinned snapshot folders) is :mod:`bioevidence.paths`.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from .errors import InputError, LimitError, excerpt, safe_message
from .jsonout import canonical_json, dumps_line, plain_without_floats  # noqa: F401 - re-exported: `from bioevidence.io import canonical_json`
from .limits import limit
from .paths import confine
from .writes import (  # noqa: F401 - the write helpers, re-exported: `from bioevidence.io import atomic_write_text`
    ResumableOutput,
    atomic_write_bytes,
    atomic_write_text,
    current_umask,
    folder_lock,
    output_mode,
)

MAX_BYTES = 50 * 1024 * 1024
MAX_DEPTH = 100
CHUNK = 1024 * 1024
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (use a number or null)")


_PARSE_STATE = threading.local()


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {excerpt(text)} is out of range")
    _PARSE_STATE.floats = True
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        duplicate = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate key {excerpt(duplicate)}")
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_reject_constant,
                            parse_float=_finite_float)


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise ``ValueError`` when containers nest deeper than ``limit`` (iterative, no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            if depth > limit:
                raise ValueError(f"nesting deeper than {limit} levels")
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            if depth > limit:
                raise ValueError(f"nesting deeper than {limit} levels")
            stack.extend((v, depth + 1) for v in node)


def find_surrogate(value: Any) -> str | None:
    """The JSON path of the first string (or key) holding a lone surrogate, else ``None``."""
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            if not _encodable(node):
                return path
        elif isinstance(node, dict):
            for key, child in node.items():
                if isinstance(key, str) and not _encodable(key):
                    return f"{path} (a key)"
                stack.append((child, f"{path}.{key}" if isinstance(key, str) and len(key) < 40 else f"{path}.…"))
        elif isinstance(node, list):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(node))
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def refuse_surrogates(value: Any, *, file: str | None = None, line: int | None = None) -> None:
    """``InputError`` when ``value`` holds a lone surrogate (``"\\ud800"``: valid JSON syntax, not text)."""
    where = find_surrogate(value)
    if where is not None:
        raise InputError(f"a string at {escape_path(where)} holds a lone surrogate escape (\\ud800-\\udfff without "
                         "its pair), which is not Unicode text; remove it or write the character itself",
                         file=file, line=line)


def escape_path(path: str, limit: int = 120) -> str:
    return safe_message(path, limit)


def decode_utf8(data: bytes, *, file: str | None = None, line: int | None = None) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid UTF-8 at byte {exc.start}; save the file as UTF-8", file=file, line=line) from exc
    return text[1:] if text.startswith("\ufeff") else text


def parse_json(data: bytes | str, *, file: str | None = None, line: int | None = None) -> Any:
    """Parse strict JSON (see module docstring); errors are ``InputError`` naming the problem."""
    return parse_json_tracked(data, file=file, line=line)[0]


def parse_json_tracked(data: bytes | str, *, file: str | None = None, line: int | None = None) -> tuple[Any, bool]:
    """``parse_json`` plus whether any float was read (``canonical_json`` is faster without floats)."""
    text = decode_utf8(data, file=file, line=line) if isinstance(data, bytes) else data
    _refuse_many_json_values(text, file=file, line=line)
    _PARSE_STATE.floats = False
    try:
        value = _parse_orjson(text)
        if value is _UNSURE:
            value = _DECODER.decode(text)
        if text.count("{") + text.count("[") > MAX_DEPTH:  # fewer brackets cannot nest deeper
            check_depth(value)
    except RecursionError as exc:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", file=file, line=line) from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                         file=file, line=line if line is not None else exc.lineno) from exc
    except ValueError as exc:
        raise InputError(f"invalid JSON: {exc}", file=file, line=line) from exc
    if _SURROGATE_ESCAPE.search(text) is not None:  # only escapes can make a lone surrogate
        refuse_surrogates(value, file=file, line=line)
    return value, bool(_PARSE_STATE.floats)


_UNSURE = object()


def _parse_orjson(text: str) -> Any:
    """orjson's parse of ``text`` when it is provably the strict parser's, else ``_UNSURE`` (the strict
    parser then decides, with its messages). orjson refuses what the strict parser refuses (NaN,
    control characters, lone surrogates, trailing data) but keeps the last of duplicate keys, reads an
    integer beyond 64 bits as a float and a too-large float as an error. So it is trusted only for
    values without floats, and only when no key was dropped: every ``:`` of the text outside strings
    ends a key, each string keeps its ``:`` characters when orjson writes it again, and only the
    escape ``\\u003a`` writes one otherwise; so the text and orjson's compact re-writing hold as many
    ``:`` exactly when no key (with its value) was lost."""
    if "\\u003" in text:
        return _UNSURE
    try:
        value = orjson.loads(text)
        written = orjson.dumps(value)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return _UNSURE
    if written.count(b":") != text.count(":") or not plain_without_floats(value):
        return _UNSURE
    return value


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _values_bound(text: str) -> int:
    return text.count(",") + text.count("[") + text.count("{") + text.count(":") + 1


def _refuse_many_json_values(text: str, *, file: str | None, line: int | None) -> None:
    """Refuse JSON holding more values than ``json_max_nodes`` before any is built.

    Every value but the first follows a ``,`` or opens inside a ``[``/``{``, and every key precedes
    a ``:``, so those characters bound the count; when the quick bound (strings included) is over the
    limit, it is taken again with string contents removed (C-speed scans of the text, no objects)."""
    allowed = int(limit("json_max_nodes"))
    if len(text) < allowed or _values_bound(text) <= allowed:
        return
    found = _values_bound(_JSON_STRING.sub('""', text))
    if found > allowed:
        raise LimitError(f"JSON holds about {found:,} values, over the limit of {allowed:,}; split the input or "
                         "raise BIOEVIDENCE_JSON_MAX_NODES", file=file, line=line)


def parse_yaml(data: bytes | str, *, file: str | None = None, what: str = "YAML",
               max_aliases: int | None = None, max_expansion: int | None = None) -> Any:
    """Parse YAML safely: no object tags, no duplicate or non-string keys, depth, size and alias limits
    (``None``: from :mod:`bioevidence.limits`)."""
    import yaml

    text = decode_utf8(data, file=file) if isinstance(data, bytes) else data
    if len(text) > MAX_BYTES:
        raise LimitError(f"{what} is larger than {MAX_BYTES // (1024 * 1024)} MB", file=file)
    aliases_allowed = int(max_aliases if max_aliases is not None else limit("yaml_max_aliases"))
    expansion_allowed = int(max_expansion if max_expansion is not None else limit("yaml_max_expansion"))
    nodes_allowed = int(limit("yaml_max_nodes"))

    class _Loader(yaml.SafeLoader):
        aliases = 0
        nodes = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.nodes += 1
            if self.nodes > nodes_allowed:  # counted as composed: a refused file costs at most the limit
                line = self.peek_event().start_mark.line + 1
                raise LimitError(f"{what} holds more than {nodes_allowed:,} values (at line {line}); split it or "
                                 "raise BIOEVIDENCE_YAML_MAX_NODES", file=file, line=line)
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > aliases_allowed:
                    line = self.peek_event().start_mark.line + 1
                    raise LimitError(f"{what} uses more than {aliases_allowed} aliases (at line {line}); write the "
                                     "values out or raise BIOEVIDENCE_YAML_MAX_ALIASES", file=file, line=line)
            return super().compose_node(parent, index)

    def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:
        loader.flatten_mapping(node)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise InputError(f"{what} keys must be strings, got {excerpt(key)} (line {line})", file=file, line=line)
            if key in result:
                raise InputError(f"duplicate {what} key {excerpt(key)} (line {line})", file=file, line=line)
            result[key] = loader.construct_object(value_node, deep=True)
        return result

    def _timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
        # Keep dates and times exactly as written (records compare and hash strings, not datetimes).
        return str(loader.construct_scalar(node))

    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
    _Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None and loader.aliases:
            _check_expansion(node, expansion_allowed, what=what, file=file)
        value = loader.construct_document(node) if node is not None else None
        check_depth(value)
        refuse_surrogates(value, file=file)
    except InputError:
        raise
    except RecursionError as exc:
        raise InputError(f"{what} nests deeper than {MAX_DEPTH} levels", file=file) from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        where = f" at line {line} column {mark.column + 1}" if mark is not None else ""
        problem = "; ".join(safe_message(p, 120) for p in (exc.context, exc.problem) if p)
        raise InputError(f"invalid {what}: {problem or 'malformed'}{where}", file=file, line=line) from exc
    except yaml.YAMLError as exc:
        raise InputError(f"invalid {what}: {safe_message(str(exc), 120)}", file=file) from exc
    except ValueError as exc:
        raise InputError(f"invalid {what}: {safe_message(str(exc), 120)}", file=file) from exc
    finally:
        loader.dispose()
    return value


def _check_expansion(root: Any, allowed: int, *, what: str, file: str | None) -> None:
    """Refuse a node graph whose alias expansion adds more than ``allowed`` nodes, or loops.

    Sizes are computed once per distinct node (memoised), so the check costs the size of the
    file, not of its expansion."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            children = _children(node)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            visiting.discard(key)
            continue
        if key in sizes:
            continue
        if key in visiting:
            line = node.start_mark.line + 1
            raise LimitError(f"{what} has a recursive alias (an anchor used inside itself, line {line}); "
                             "it would expand forever", file=file, line=line)
        visiting.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) not in sizes:
                stack.append((child, False))
    added = sizes[id(root)] - len(sizes)
    if added > allowed:
        raise LimitError(f"{what} aliases would expand it by {added} nodes, over the limit of {allowed} (a YAML "
                         "alias bomb?); write the values out or raise BIOEVIDENCE_YAML_MAX_EXPANSION", file=file)


def _children(node: Any) -> list[Any]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _open_regular(path: Path, within: Path | None) -> tuple[IO[bytes], int]:
    """An open binary handle on a regular file and its size: pipes, devices, sockets and folders
    refused, and with ``within`` a path whose real location is outside it (:func:`confine`)."""
    target = confine(path, within) if within is not None else path
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)
    except IsADirectoryError as exc:
        raise InputError("is a directory, expected a file", file=str(path)) from exc
    except FileNotFoundError as exc:
        raise InputError("no such file", file=str(path)) from exc
    except PermissionError as exc:
        raise InputError("permission denied", file=str(path)) from exc
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror}", file=str(path)) from exc
    handle = os.fdopen(fd, "rb")
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        handle.close()
        raise InputError("is a directory, expected a file" if stat.S_ISDIR(info.st_mode) else
                         "is not a regular file (a pipe, device or socket); give a file", file=str(path))
    return handle, info.st_size


def read_limited(path: Path | str, limit: int = MAX_BYTES, *, within: Path | None = None) -> bytes:
    """Read a regular file of at most ``limit`` bytes (refused before reading when larger).

    Pipes, devices and sockets are refused (``/dev/zero`` never ends); with ``within``, a path
    whose real location (symlinks followed) is outside that folder is refused (:func:`confine`).
    """
    path = Path(path)
    handle, size = _open_regular(path, within)
    with handle:
        if size > limit:
            raise LimitError(f"file is {size} bytes, over the {limit // (1024 * 1024)} MB limit", file=str(path))
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", file=str(path)) from exc
    if len(data) > limit:
        raise LimitError(f"file grew over the {limit // (1024 * 1024)} MB limit while being read", file=str(path))
    return data


def read_stdin(limit: int = MAX_BYTES) -> bytes:
    """Standard input's bytes, at most ``limit`` (a :class:`LimitError` past it: read no further)."""
    import sys

    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise LimitError(f"standard input is over the {limit // (1024 * 1024)} MB limit; split it into files",
                         file="<stdin>")
    return data


def iter_lines(path: Path | str, limit: int = MAX_BYTES, *, within: Path | None = None,
               progress: Callable[[int], None] | None = None, start: int = 0, stop: int | None = None,
               first_line: int = 1) -> Iterator[tuple[int, bytes | LimitError]]:
    """``(line number, bytes without the newline)`` of a regular file, streamed: the file may be any
    size, each line at most ``limit`` bytes. A longer line gives a :class:`LimitError` in its place
    (read past, never held) and the lines after it still come. ``progress(bytes read)`` after each line.
    Opening is checked as :func:`read_limited` checks it.

    ``start``/``stop``/``first_line``: only the lines that begin in the byte range ``[start, stop)``,
    ``start`` being the beginning of line ``first_line`` (a shard cut at line ends by the client,
    :mod:`bioevidence.gate.shards`)."""
    path = Path(path)
    handle, _size = _open_regular(path, within)
    done = start
    with handle:
        if start:
            handle.seek(start)
        for number in itertools.count(first_line):
            if stop is not None and done >= stop:
                return
            try:
                line = handle.readline(limit + 1)
                if not line:
                    return
                done += len(line)
                if len(line) > limit and not line.endswith(b"\n"):
                    while True:  # read past the rest of the long line in bounded pieces
                        rest = handle.readline(1 << 20)
                        done += len(rest)
                        if not rest or rest.endswith(b"\n"):
                            break
                    yield number, LimitError(f"line is over the {limit // (1024 * 1024)} MB limit for one record",
                                             file=str(path), line=number)
                    continue
            except OSError as exc:
                raise InputError(f"cannot read: {exc.strerror}", file=str(path), line=number) from exc
            if progress is not None:
                progress(done)
            yield number, line.rstrip(b"\n")


def iter_gunzip(handle: IO[bytes], limit: int, *, name: str) -> Iterator[bytes]:
    """The inflated bytes of a gzip stream (every member), in chunks, at most ``limit`` bytes in all.

    Memory stays at one chunk whatever the stream claims; past ``limit`` a :class:`LimitError`
    naming the limit is raised. A truncated stream raises ``EOFError``, a damaged one ``OSError``
    or ``zlib.error``: the caller names those in its own terms (corrupted snapshot, bad release).
    """
    import gzip

    from .limits import format_size

    total = 0
    with gzip.GzipFile(fileobj=handle, mode="rb") as stream:
        while True:
            chunk = stream.read(CHUNK)
            if not chunk:
                return
            total += len(chunk)
            if total > limit:
                raise LimitError(f"{name} inflates to more than {format_size(limit)} (the max_inflated limit; a "
                                 "decompression bomb?); if the file is genuine raise the limit with --max-inflated "
                                 "or BIOEVIDENCE_MAX_INFLATED", file=name, problem="too_large")
            yield chunk


def gunzip_limited(data: bytes, limit: int, *, name: str) -> bytes:
    """All of :func:`iter_gunzip` over in-memory ``data``, as bytes."""
    import io as _io

    out = bytearray()
    for chunk in iter_gunzip(_io.BytesIO(data), limit, name=name):
        out += chunk
    return bytes(out)
