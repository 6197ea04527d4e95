"""The validated shape of every service's JSON answer, checked once where the bytes arrive.

Each service client passes its answer through :func:`check` against the shape declared here
(in ``HttpClient.get(validate=...)``, so a bad answer is a ``RetrievalError`` with reason
``malformed``, never cached) and the parsers check again on pinned bytes; past the check the
code reads the answer's types without defensive guessing. A wrong answer is one ``InputError``
naming the service, the field and what was wrong: ``E-utilities esummary: result.uids is a
number (5), expected a list of strings``. Fields not declared are ignored; a declared optional
field may be absent or ``null`` (removed from the parsed answer: read as absent), never of another
type; a required one must be there.

Numbers read from answers (counts, scores, ordinals, years) go through :func:`whole_number`
only: an integer or a decimal string that is a whole number from 0 to :data:`MAX_COUNT`; ``nan``,
``inf``, ``abc``, negative, fractional and huge values are refused, never passed to ``int()``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from ..errors import InputError, excerpt
from ..io import parse_json

__all__ = ["CROSSREF", "CROSSREF_MESSAGE", "DBLP_SPARQL", "ESUMMARY", "EUROPEPMC", "EUROPEPMC_RESULT", "MAX_COUNT",
           "Bad", "Shape", "check", "validator", "whole_number", "year"]

MAX_COUNT = 10**12
_DECIMAL = re.compile(r"[0-9]{1,40}(?:\.[0-9]{0,40})?(?:[eE][+-]?[0-9]{1,4})?")


class Bad(InputError):
    """A value is not of its declared shape: ``path`` and ``why`` (:func:`check` adds the service)."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path} {why}", field=path)
        self.path, self.why = path, why


def describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({excerpt(value)})"
    if isinstance(value, str):
        return f"a string ({excerpt(value)})"
    return "a list" if isinstance(value, list) else "an object"


def whole_number(value: object, where: str = "value", *, minimum: int = 0, maximum: int = MAX_COUNT) -> int:
    """``value`` (an ``int`` or a decimal string: ``"12"``, ``"12.0"``, ``"1.2e1"``) as a whole number from
    ``minimum`` to ``maximum``; anything else (``nan``, ``inf``, ``"abc"``, ``-1``, ``1.5``, ``1e30``, ``true``)
    is ``Bad`` naming ``where``."""
    number: Decimal | int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
        number = Decimal(value.strip())
    if number is None or not minimum <= number <= maximum or number != int(number):
        raise Bad(where, f"is {describe(value)}, expected a whole number from {minimum} to {maximum}")
    return int(number)


def year(value: object, where: str = "year") -> int | None:
    """A year from an answer: an ``int`` or a string starting with four digits (``"2020"``, ``"2020-05"``),
    1000 to 2999; ``""`` means unknown (``None``); anything else is ``Bad``."""
    if value == "":
        return None
    digits = value[:4] if isinstance(value, str) and re.match(r"[0-9]{4}(?![0-9])", value) else value
    try:
        return whole_number(digits, where, minimum=1000, maximum=2999)
    except Bad:
        raise Bad(where, f"is {describe(value)}, expected a year (four digits)") from None


class Shape:
    """A declared shape: ``check`` raises ``Bad``; ``paths`` yields the declared fields present in a value
    (``(path, shape)``: tests break each in turn)."""

    what = "a value"

    def check(self, value: Any, path: str) -> None:
        raise NotImplementedError

    def paths(self, value: Any, path: str) -> Iterator[tuple[tuple[str | int, ...], Shape]]:
        return iter(())


class Leaf(Shape):
    """A value checked by ``test(value, path)``, which raises ``Bad``."""

    def __init__(self, what: str, test: Callable[[Any, str], object]) -> None:
        self.what, self.test = what, test

    def check(self, value: Any, path: str) -> None:
        self.test(value, path)


def _string(value: object, path: str) -> None:
    if not isinstance(value, str):
        raise Bad(path, f"is {describe(value)}, expected a string")


def _work(value: object, path: str) -> None:
    if value != "work":
        raise Bad(path, f'is {describe(value)}, expected "work"')


class ListOf(Shape):
    def __init__(self, item: Shape) -> None:
        self.item = item
        self.what = f"a list of {item.what.removeprefix('a ').removeprefix('an ')}s"

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, list):
            raise Bad(path, f"is {describe(value)}, expected {self.what}")
        for n, item in enumerate(value):
            self.item.check(item, f"{path}[{n}]")

    def paths(self, value: Any, path: str) -> Iterator[tuple[tuple[str | int, ...], Shape]]:
        for n, item in enumerate(value[:2]):  # the first items stand for the rest
            yield (n,), self.item
            for sub, shape in self.item.paths(item, f"{path}[{n}]"):
                yield (n, *sub), shape


class OneOf(Shape):
    def __init__(self, *options: Shape) -> None:
        self.options = options
        self.what = " or ".join(o.what for o in options)

    def check(self, value: Any, path: str) -> None:
        for option in self.options:
            try:
                option.check(value, path)
                return
            except Bad:
                continue
        raise Bad(path, f"is {describe(value)}, expected {self.what}")


class Obj(Shape):
    """An object with ``required`` and ``optional`` fields (others ignored); ``each``: the shape of
    every value (a map such as a SPARQL binding)."""

    what = "an object"

    def __init__(self, required: Mapping[str, Shape] | None = None, optional: Mapping[str, Shape] | None = None,
                 each: Shape | None = None, name: str = "service answer") -> None:
        self.name = name  # the service, in messages
        self.fields = {**{k: (s, True) for k, s in (required or {}).items()},
                       **{k: (s, False) for k, s in (optional or {}).items()}}
        self.each = each

    def declared(self, value: dict[str, Any]) -> Iterator[tuple[str, Shape]]:
        for key, (shape, _) in self.fields.items():
            if key in value:
                yield key, shape
        if self.each is not None:
            yield from ((k, self.each) for k in value if k not in self.fields)

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            raise Bad(path or "the answer", f"is {describe(value)}, expected an object")
        for key, (shape, required) in self.fields.items():
            if not required and key in value and value[key] is None:
                del value[key]  # an optional field sent as null is read as absent (the parsed answer is ours)
            if required and key not in value:
                raise Bad(_join(path, key), f"is missing, expected {shape.what}")
        for key, shape in self.declared(value):
            shape.check(value[key], _join(path, key))

    def paths(self, value: Any, path: str) -> Iterator[tuple[tuple[str | int, ...], Shape]]:
        for key, shape in self.declared(value):
            yield (key,), shape
            for sub, inner in shape.paths(value[key], _join(path, key)):
                yield (key, *sub), inner


class Summaries(Obj):
    """E-utilities esummary ``result``: ``uids``, then one entry object per uid."""

    def __init__(self, entry: Shape) -> None:
        super().__init__(required={"uids": STRS})
        self.entry = entry

    def declared(self, value: dict[str, Any]) -> Iterator[tuple[str, Shape]]:
        yield from super().declared(value)
        uids = value.get("uids")
        yield from ((u, self.entry) for u in (uids if isinstance(uids, list) else [])
                    if isinstance(u, str) and u in value)

    def check(self, value: Any, path: str) -> None:
        super().check(value, path)
        for n, uid in enumerate(value["uids"]):
            if uid not in value:
                raise Bad(f"{_join(path, 'uids')}[{n}]", f"is {describe(uid)}, but {_join(path, uid)} is missing, "
                                                         f"expected {self.entry.what}")


class Esummary(Obj):
    """The esummary answer: a ``result``, unless NCBI answered with its ``error`` / ``esummaryresult``."""

    def check(self, value: Any, path: str) -> None:
        super().check(value, path)
        if not {"result", "error", "esummaryresult"} & set(value):
            raise Bad("result", "is missing, expected an object")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


S, COUNT, YEAR = Leaf("a string", _string), Leaf("a whole number", whole_number), Leaf("a year", year)
STRS, _LISTED = ListOf(S), OneOf(ListOf(S), S)
ESUMMARY = Esummary(name="E-utilities esummary", optional={
    "header": Obj(optional={"type": S}), "error": S, "esummaryresult": STRS, "result": Summaries(Obj(optional={
        "uid": S, "error": S, "title": S, "pubdate": S, "sortpubdate": S, "fulljournalname": S, "source": S,
        "authors": ListOf(Obj(optional={"name": S})), "pubtype": STRS,
        "articleids": ListOf(Obj(optional={"idtype": S, "value": S})),
        "references": ListOf(Obj(optional={"reftype": S, "refsource": S, "pmid": Leaf(
            'a whole number or ""', lambda v, p: v == "" or whole_number(v, p))}))}))})
EUROPEPMC_RESULT = Obj(name="Europe PMC result", optional={
    "id": S, "source": S, "pmid": S, "pmcid": S, "doi": S, "title": S, "pubYear": YEAR, "abstractText": S,
    "authorString": S, "journalTitle": S, "isOpenAccess": S, "inEPMC": S, "license": S, "citedByCount": COUNT,
    "pubType": _LISTED, "pubTypeList": Obj(optional={"pubType": _LISTED}),
    "commentCorrectionList": Obj(optional={"commentCorrection": ListOf(Obj(optional={
        "type": S, "source": S, "id": S, "reference": S}))}),
    "authorList": Obj(optional={"author": ListOf(Obj(optional={"fullName": S, "collectiveName": S}))}),
    "journalInfo": Obj(optional={"journal": Obj(optional={"title": S}), "yearOfPublication": YEAR}),
    "fullTextUrlList": Obj(optional={"fullTextUrl": ListOf(Obj(optional={"availabilityCode": S}))}),
    "fullTextIdList": Obj(optional={"fullTextId": STRS})})
EUROPEPMC = Obj(name="Europe PMC search", required={"resultList": Obj(required={"result": ListOf(EUROPEPMC_RESULT)})},
                optional={"hitCount": COUNT, "nextCursorMark": S})
_DATE = Obj(optional={"date-parts": ListOf(ListOf(Leaf("a value", lambda v, p: None)))})  # [[null]]: unknown
CROSSREF_MESSAGE = Obj(name="Crossref work", optional={
    "DOI": S, "type": S, "title": _LISTED, "container-title": _LISTED, "abstract": S,
    "is-referenced-by-count": COUNT, "author": ListOf(Obj(optional={"given": S, "family": S, "name": S})),
    "license": ListOf(Obj(optional={"URL": S})),
    **dict.fromkeys(("published-print", "published-online", "published", "issued", "created"), _DATE),
    **dict.fromkeys(("updated-by", "update-to"), ListOf(Obj(optional={"type": S, "DOI": S, "label": S})))})
CROSSREF = Obj(name="Crossref work", required={"message-type": Leaf('"work"', _work), "message": CROSSREF_MESSAGE},
               optional={"status": S})


def _cell(what: str, test: Callable[[Any, str], object]) -> Obj:
    """A SPARQL binding's cell whose ``value`` is a string that ``test`` accepts."""
    def value(text: Any, path: str) -> None:
        _string(text, path)
        test(text, path)
    return Obj(required={"type": S, "value": Leaf(what, value)})


_NUMBER = _cell("a whole number", whole_number)
DBLP_SPARQL = Obj(name="DBLP SPARQL", required={"results": Obj(required={"bindings": ListOf(Obj(
    optional={"score": _NUMBER, "cites": _NUMBER, "ord": _NUMBER, "year": _cell("a year", year)},
    each=_cell("a string", _string)))})})


def check(doc: Any, shape: Obj, *, file: str | None = None) -> Any:
    """``doc`` when it has ``shape``; else one ``InputError`` naming the service, the field and what was wrong."""
    try:
        shape.check(doc, "")
    except Bad as bad:
        raise InputError(f"{shape.name}: {bad.path} {bad.why}", file=file, field=bad.path) from None
    return doc


def validator(shape: Obj, *, file: str | None = None) -> Callable[[bytes], Any]:
    """A ``validate`` callback for :meth:`HttpClient.get`: strict JSON of ``shape``."""
    return lambda body: check(parse_json(body, file=file), shape, file=file)

