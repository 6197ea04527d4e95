"""From a finding's ``field_path`` to the line of a record file that holds that field.

A report names places as JSON paths (``$.evidence_items[2].locator``); a reviewer wants a line.
``LineMap`` reads a record's text once and remembers, for every object member and array
element, the line where it starts: the line of the member's key, or of the element's first
character. JSON is scanned by a small tokenizer that tracks positions; YAML goes through
``yaml.compose``, whose nodes carry their marks. A path that is not in the file (a missing
required field, an index past the end) maps to its deepest ancestor that is.

``Locator`` applies this to batch results: JSONL records keep their line in the file, records
built from drafts point at the draft file (without a line: the built record's paths do not
name places in the draft), and file names are shown relative to a base folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Key = str | int
Steps = tuple[Key, ...]

_STEP = re.compile(r"""\.([^.\[\]]+)|\[(\d+)\]|\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]""")
_WS = " \t\r\n"
_SCALAR_END = ",]}" + _WS
_ERROR_LINE = re.compile(r"\bat line (\d+)\b|\bline (\d+), column \d+")


def parse_path(field_path: str) -> Steps:
    """``$.evidence_items[2].locator`` -> ``("evidence_items", 2, "locator")``.

    Also reads bracketed names (``$['a.b']``). Whatever cannot be read ends the path there,
    so a strange path still maps to the deepest place that could be read.
    """
    text = field_path
    if not text.startswith("$"):
        return ()
    out: list[Key] = []
    position = 1
    while position < len(text):
        match = _STEP.match(text, position)
        if match is None:
            break
        name, index, single, double = match.groups()
        if index is not None:
            out.append(int(index))
        else:
            quoted = single if single is not None else double
            out.append(name if name is not None else re.sub(r"\\(.)", r"\1", quoted or ""))
        position = match.end()
    return tuple(out)


class _JsonScanner:
    """A JSON tokenizer that records the line of every member key and array element."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.lines: dict[Steps, int] = {}

    def _skip(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in _WS:
            if text[pos] == "\n":
                self.line += 1
            pos += 1
        self.pos = pos

    def _expect(self, char: str) -> None:
        self._skip()
        if not self.text.startswith(char, self.pos):
            raise ValueError(f"expected {char!r} at line {self.line}")
        self.pos += 1

    def _string(self) -> str:
        text, start = self.text, self.pos
        pos = start + 1
        while pos < len(text):
            char = text[pos]
            if char == "\\":
                pos += 2
                continue
            if char == '"':
                raw = text[start:pos + 1]
                self.line += raw.count("\n")
                self.pos = pos + 1
                return str(json.loads(raw, strict=False))
            pos += 1
        raise ValueError(f"unterminated string at line {self.line}")

    def value(self, path: Steps, depth: int = 0) -> None:
        if depth > 200:
            raise ValueError("nesting too deep")
        self._skip()
        self.lines.setdefault(path, self.line)
        if self.pos >= len(self.text):
            raise ValueError("unexpected end of text")
        char = self.text[self.pos]
        if char == "{":
            self.pos += 1
            self._skip()
            if self.text.startswith("}", self.pos):
                self.pos += 1
                return
            while True:
                self._skip()
                if not self.text.startswith('"', self.pos):
                    raise ValueError(f"expected a key at line {self.line}")
                key_line = self.line
                key = self._string()
                self.lines.setdefault((*path, key), key_line)
                self._expect(":")
                self.value((*path, key), depth + 1)
                self._skip()
                if self.text.startswith(",", self.pos):
                    self.pos += 1
                    continue
                self._expect("}")
                return
        if char == "[":
            self.pos += 1
            self._skip()
            if self.text.startswith("]", self.pos):
                self.pos += 1
                return
            index = 0
            while True:
                self.value((*path, index), depth + 1)
                index += 1
                self._skip()
                if self.text.startswith(",", self.pos):
                    self.pos += 1
                    continue
                self._expect("]")
                return
        if char == '"':
            self._string()
            return
        end = self.pos
        while end < len(self.text) and self.text[end] not in _SCALAR_END:
            end += 1
        if end == self.pos:
            raise ValueError(f"unexpected {char!r} at line {self.line}")
        self.pos = end


def json_lines(text: str) -> dict[Steps, int]:
    """Line (1-based) of every member and element of a JSON text; ``ValueError`` when malformed."""
    scanner = _JsonScanner(text[1:] if text.startswith("\ufeff") else text)
    scanner.value(())
    scanner._skip()
    if scanner.pos != len(scanner.text):
        raise ValueError(f"extra data at line {scanner.line}")
    return scanner.lines


def yaml_lines(text: str) -> dict[Steps, int]:
    """Line (1-based) of every mapping key and sequence item of a YAML document."""
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from exc
    lines: dict[Steps, int] = {}
    if root is None:
        return lines
    stack: list[tuple[Any, Steps]] = [(root, ())]
    lines[()] = root.start_mark.line + 1
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in seen or len(path) > 200:
            continue  # an alias of a node already mapped (its lines are at the anchor): never expanded
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key: Key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
                child = (*path, key)
                lines.setdefault(child, key_node.start_mark.line + 1)
                stack.append((value_node, child))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                child = (*path, index)
                lines.setdefault(child, item.start_mark.line + 1)
                stack.append((item, child))
    return lines


@dataclass(frozen=True, slots=True)
class LineMap:
    """Where each field of one record file starts; ``line()`` answers for a ``field_path``."""

    lines: Mapping[Steps, int]

    @classmethod
    def parse(cls, text: str, kind: str = "json") -> LineMap:
        """``kind`` is ``json`` or ``yaml``; ``ValueError`` when the text cannot be read."""
        return cls(yaml_lines(text) if kind == "yaml" else json_lines(text))

    @classmethod
    def from_file(cls, path: str | Path) -> LineMap | None:
        """The map of a record file, or ``None`` when it cannot be read or parsed."""
        from ..errors import BioevidenceError
        from ..io import read_limited

        path = Path(path)
        kind = "yaml" if path.suffix.lower() in (".yaml", ".yml") else "json"
        try:  # bounded: regular files of at most 50 MB only
            return cls.parse(read_limited(path).decode("utf-8-sig"), kind)
        except (BioevidenceError, OSError, UnicodeDecodeError, ValueError, RecursionError):
            return None

    def line(self, field_path: str) -> int:
        """Line of the field, else of its deepest ancestor present in the file (1 for ``$``)."""
        steps = parse_path(field_path)
        for cut in range(len(steps), -1, -1):
            found = self.lines.get(steps[:cut])
            if found is not None:
                return found
        return 1


def error_line(message: str) -> int | None:
    """The line an input-error message names (``invalid JSON: … at line 5 column 3``)."""
    match = _ERROR_LINE.search(message)
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


class Locator:
    """Maps batch results to ``(shown file, line)`` for annotations, summaries and SARIF.

    * ``base``: the folder relative file names are read from (the working directory of the
      batch); names are shown relative to it (POSIX separators) when they lie under it.
    * ``sources``: files validated in place of others (a record built from a draft) -> the file
      to show; their findings carry no line, since the paths name places in the built record.
    """

    def __init__(self, base: str | Path | None = None, sources: Mapping[str, str] | None = None) -> None:
        self.base = Path(base).resolve() if base is not None else None
        self.sources = dict(sources or {})
        self._maps: dict[str, LineMap | None] = {}

    def _path(self, file: str) -> Path:
        path = Path(file)
        return path if path.is_absolute() or self.base is None else self.base / path

    def shown(self, file: str) -> str:
        """The name to show for a result's file (the draft for built records)."""
        name = self.sources.get(file, file)
        if self.base is not None:
            try:
                return self._path(name).resolve().relative_to(self.base).as_posix()
            except ValueError:
                pass
        return Path(name).as_posix()

    def line(self, file: str, field_path: str | None, record_line: int | None = None) -> int | None:
        """The line of ``field_path`` in ``file``; a JSONL record's own line; ``None`` for drafts."""
        if file in self.sources:
            return None
        if record_line is not None:
            return record_line
        if file not in self._maps:
            self._maps[file] = LineMap.from_file(self._path(file))
        line_map = self._maps[file]
        if line_map is None:
            return None
        return line_map.line(field_path or "$")
