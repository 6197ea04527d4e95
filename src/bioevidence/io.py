"""Safe file I/O shared by every stage: strict JSON/YAML parsing and atomic writes.

* JSON: duplicate keys, ``NaN``/``Infinity``, invalid UTF-8 and nesting deeper than
  ``MAX_DEPTH`` are refused; files over ``MAX_BYTES`` are refused before they are read.
* YAML: ``yaml.safe_load`` semantics (no tags that build objects), duplicate and non-string
  keys refused, same depth and size limits.
* Writes go to a temporary file in the target folder and are renamed into place, so a reader
  never sees half a file and a failed write keeps the previous one.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import InputError

MAX_BYTES = 50 * 1024 * 1024
MAX_DEPTH = 100


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (use a number or null)")


_PARSE_STATE = threading.local()


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text} is out of range")
    _PARSE_STATE.floats = True
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        duplicate = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate key {duplicate!r}")
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_reject_constant,
                            parse_float=_finite_float)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)


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
    _PARSE_STATE.floats = False
    try:
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
    return value, bool(_PARSE_STATE.floats)


def parse_yaml(data: bytes | str, *, file: str | None = None, what: str = "YAML") -> Any:
    """Parse YAML safely: no object tags, no duplicate or non-string keys, depth and size limits."""
    import yaml

    text = decode_utf8(data, file=file) if isinstance(data, bytes) else data
    if len(text) > MAX_BYTES:
        raise InputError(f"{what} is larger than {MAX_BYTES // (1024 * 1024)} MB", file=file)

    class _Loader(yaml.SafeLoader):
        pass

    def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:
        loader.flatten_mapping(node)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise InputError(f"{what} keys must be strings, got {key!r} (line {key_node.start_mark.line + 1})",
                                 file=file, line=key_node.start_mark.line + 1)
            if key in result:
                raise InputError(f"duplicate {what} key {key!r} (line {key_node.start_mark.line + 1})",
                                 file=file, line=key_node.start_mark.line + 1)
            result[key] = loader.construct_object(value_node, deep=True)
        return result

    def _timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
        # Keep dates and times exactly as written (records compare and hash strings, not datetimes).
        return str(loader.construct_scalar(node))

    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
    _Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
    try:
        value = yaml.load(text, Loader=_Loader)
        check_depth(value)
    except InputError:
        raise
    except RecursionError as exc:
        raise InputError(f"{what} nests deeper than {MAX_DEPTH} levels", file=file) from exc
    except yaml.YAMLError as exc:
        raise InputError(f"invalid {what}: {' '.join(str(exc).split())}", file=file) from exc
    except ValueError as exc:
        raise InputError(f"invalid {what}: {exc}", file=file) from exc
    return value


def read_limited(path: Path, limit: int = MAX_BYTES) -> bytes:
    """Read a file, refusing it before reading when it is larger than ``limit`` bytes."""
    try:
        size = path.stat().st_size
        if size > limit:
            raise InputError(f"file is {size} bytes, over the {limit // (1024 * 1024)} MB limit", file=str(path))
        return path.read_bytes()
    except IsADirectoryError as exc:
        raise InputError("is a directory, expected a file", file=str(path)) from exc
    except FileNotFoundError as exc:
        raise InputError("no such file", file=str(path)) from exc
    except PermissionError as exc:
        raise InputError("permission denied", file=str(path)) from exc


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def canonical_json(value: Any, *, floats: bool = True) -> bytes:
    """Sorted keys, compact separators, ASCII escapes, NaN refused: the hashing form of a record
    (the reference's ``input_sha256`` is the SHA-256 of exactly these bytes).

    With ``floats=False`` (the caller knows the value holds no float, e.g. from
    ``parse_json_tracked``) orjson writes the same bytes six times faster, whenever its output is
    plain ASCII without DEL; otherwise, and for floats, the standard encoder is used."""
    if not floats:
        import orjson

        try:
            fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            fast = b"\x80"
        if fast.isascii() and b"\x7f" not in fast:
            return fast
    return _CANONICAL.encode(value).encode("ascii")


def dumps_line(value: Any) -> str:
    """Compact JSON on one line, UTF-8 kept, for report lines (orjson: five times faster than json)."""
    import orjson

    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(os.path.abspath(a)) == Path(os.path.abspath(b))


def refuse_overwrite(output: Path, protected: Iterable[Path], *, what: str = "--output") -> None:
    """Refuse to write ``output`` over any of ``protected`` (inputs, profile, schema)."""
    from .errors import ConfigurationError

    for path in protected:
        if Path(path).exists() and same_file(output, path):
            raise ConfigurationError(f"{what} {output} would overwrite an input ({path}); choose another path")


def safe_child(folder: Path, name: str) -> Path:
    """``folder / name`` only when it stays inside ``folder`` (no ``..``, no absolute names)."""
    from .errors import ConfigurationError

    candidate = (folder / name).resolve()
    base = folder.resolve()
    if candidate != base and base not in candidate.parents:
        raise ConfigurationError(f"path {name!r} escapes its folder {folder}")
    return candidate
