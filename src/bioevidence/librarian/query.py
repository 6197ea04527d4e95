"""Europe PMC query language: tokenizer, parser (to an AST) and validator.

Grammar (operators count only in upper case; juxtaposition is an implicit AND)::

    query   := or
    or      := and ("OR" and)*
    and     := unary (["AND"] unary | "NOT" unary)*      # "a NOT b" is "a AND NOT b"
    unary   := "NOT" unary | primary
    primary := "(" or ")" | FIELD ":" value | PHRASE | WORD
    value   := PHRASE | WORD | "(" or ")" | "[" lo "TO" hi "]"

A field applies to the single value after its colon, exactly as Europe PMC reads it:
``TITLE:cancer therapy`` is ``TITLE:cancer AND therapy``. ``FIELD:( … )`` applies the field to
every unfielded term inside the group. :func:`parse` raises :class:`QuerySyntaxError`;
:func:`validate` never raises and returns reasons and warnings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date

from ..errors import InputError
from .fields import FIELDS, Field, get_field

__all__ = [
    "And", "Node", "Not", "Or", "QuerySyntaxError", "Range", "Term", "Token", "ValidationResult",
    "count_ands", "fields_used", "parse", "terms", "to_string", "tokenize", "validate",
]

_WILD = re.compile(r"[*?]")


class QuerySyntaxError(InputError):
    """A query that cannot be parsed; ``position`` is the character offset of the problem."""

    kind = "query_syntax_error"

    def __init__(self, message: str, *, position: int | None = None, query: str | None = None) -> None:
        super().__init__(message, position=position, query=query)
        self.position = position


@dataclass(frozen=True)
class Token:
    kind: str  # WORD PHRASE FIELD LPAREN RPAREN LBRACK RBRACK AND OR NOT
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Term:
    text: str
    field: str | None = None
    phrase: bool = False

    @property
    def wildcard(self) -> bool:
        return bool(_WILD.search(self.text))


@dataclass(frozen=True)
class Range:
    field: str
    lo: str
    hi: str


@dataclass(frozen=True)
class And:
    children: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    children: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    child: Node


Node = Term | Range | And | Or | Not


# ---------------------------------------------------------------- tokenizer
_FIELD_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*):(.*)$", re.DOTALL)
_SPECIAL = '()[]"'


def tokenize(query: str) -> list[Token]:
    """Split ``query`` into tokens; unmatched quotes raise :class:`QuerySyntaxError`."""
    out: list[Token] = []
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c.isspace():
            i += 1
            continue
        if c in "()[]":
            kind = {"(": "LPAREN", ")": "RPAREN", "[": "LBRACK", "]": "RBRACK"}[c]
            out.append(Token(kind, c, i, i + 1))
            i += 1
            continue
        if c == '"' or (c == "'" and (i == 0 or not query[i - 1].isalnum())):
            close = query.find(c, i + 1)
            if close < 0:
                what = "double" if c == '"' else "single"
                raise QuerySyntaxError(
                    f"unmatched {what} quote at {i}; close the phrase with {c}", position=i, query=query
                )
            out.append(Token("PHRASE", query[i + 1 : close], i, close + 1))
            i = close + 1
            continue
        j = i
        while j < n and not query[j].isspace() and query[j] not in _SPECIAL:
            j += 1
        word = query[i:j]
        if word in ("AND", "OR", "NOT"):
            out.append(Token(word, word, i, j))
        elif word == ":" or word.startswith(":"):
            raise QuerySyntaxError(
                f"whitespace before ':' at {i}; write FIELD:value with no space", position=i, query=query
            )
        else:
            m = _FIELD_RE.match(word)
            if m and ("/" not in m.group(1)):
                name, rest = m.group(1), m.group(2)
                out.append(Token("FIELD", name.upper(), i, i + len(name) + 1))
                if rest:
                    out.append(Token("WORD", rest, i + len(name) + 1, j))
            else:
                out.append(Token("WORD", word, i, j))
        i = j
    return out


# ---------------------------------------------------------------- parser
@dataclass
class _Parser:
    query: str
    tokens: list[Token]
    pos: int = 0

    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def fail(self, message: str, tok: Token | None) -> QuerySyntaxError:
        position = tok.start if tok else len(self.query)
        return QuerySyntaxError(message, position=position, query=self.query)

    def take(self) -> Token:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def parse(self) -> Node:
        if not self.tokens:
            raise self.fail("empty query; give at least one search term", None)
        node = self.parse_or()
        tok = self.peek()
        if tok is not None:
            if tok.kind == "RPAREN":
                raise self.fail(f"stray ')' at {tok.start}; remove it or add the matching '('", tok)
            raise self.fail(f"stray {tok.text!r} at {tok.start}; remove it", tok)
        return node

    def parse_or(self) -> Node:
        parts = [self.parse_and()]
        while (tok := self.peek()) is not None and tok.kind == "OR":
            self.take()
            self.expect_operand("OR", tok)
            parts.append(self.parse_and())
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def expect_operand(self, op: str, at: Token) -> None:
        nxt = self.peek()
        if nxt is None or nxt.kind in ("RPAREN", "RBRACK"):
            raise self.fail(f"{op} at {at.start} has nothing on its right; add a term or remove {op}", at)
        if nxt.kind in ("AND", "OR") or (op == "NOT" and nxt.kind == "NOT"):
            raise self.fail(f"{op} at {at.start} is followed by {nxt.text}; remove one operator", nxt)

    def parse_and(self) -> Node:
        parts = [self.parse_unary()]
        while (tok := self.peek()) is not None and tok.kind not in ("OR", "RPAREN", "RBRACK"):
            if tok.kind == "AND":
                self.take()
                self.expect_operand("AND", tok)
                parts.append(self.parse_unary())
            elif tok.kind == "NOT":
                self.take()
                self.expect_operand("NOT", tok)
                parts.append(Not(self.parse_unary()))
            else:
                parts.append(self.parse_unary())
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def parse_unary(self) -> Node:
        tok = self.peek()
        if tok is not None and tok.kind == "NOT":
            self.take()
            self.expect_operand("NOT", tok)
            return Not(self.parse_unary())
        return self.parse_primary()

    def parse_group(self, open_tok: Token) -> Node:
        nxt = self.peek()
        if nxt is not None and nxt.kind == "RPAREN":
            raise self.fail(f"empty group '()' at {open_tok.start}; put terms inside or remove it", open_tok)
        if nxt is None:
            raise self.fail(f"unmatched '(' at {open_tok.start}; add ')'", open_tok)
        node = self.parse_or()
        close = self.peek()
        if close is None or close.kind != "RPAREN":
            raise self.fail(f"unmatched '(' at {open_tok.start}; add ')'", open_tok)
        self.take()
        return node

    def parse_primary(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise self.fail("query ends where a term was expected", None)
        if tok.kind in ("AND", "OR"):
            raise self.fail(f"{tok.text} at {tok.start} has nothing on its left; remove it", tok)
        self.take()
        if tok.kind == "LPAREN":
            return self.parse_group(tok)
        if tok.kind == "RPAREN":
            raise self.fail(f"stray ')' at {tok.start}; remove it or add the matching '('", tok)
        if tok.kind == "RBRACK":
            raise self.fail(f"stray ']' at {tok.start}; remove it or add the matching '['", tok)
        if tok.kind == "LBRACK":
            raise self.fail(f"range at {tok.start} has no field; write e.g. PUB_YEAR:[2015 TO 2020]", tok)
        if tok.kind == "PHRASE":
            return Term(tok.text, None, True)
        if tok.kind == "WORD":
            return Term(tok.text)
        return self.parse_field(tok)

    def parse_field(self, ftok: Token) -> Node:
        name = ftok.text
        val = self.peek()
        if val is None or val.kind in ("RPAREN", "RBRACK", "AND", "OR", "NOT"):
            raise self.fail(f"field {name}: has no value; write {name}:value", ftok)
        if val.start != ftok.end:
            raise self.fail(f"whitespace after '{name}:'; write {name}:value with no space", ftok)
        self.take()
        if val.kind == "PHRASE":
            return Term(val.text, name, True)
        if val.kind == "WORD":
            return Term(val.text, name)
        if val.kind == "LPAREN":
            return _apply_field(self.parse_group(val), name)
        if val.kind == "LBRACK":
            return self.parse_range(name, val)
        raise self.fail(f"field {name}: has no usable value", ftok)

    def parse_range(self, name: str, open_tok: Token) -> Range:
        parts: list[Token] = []
        while (tok := self.peek()) is not None and tok.kind != "RBRACK":
            if tok.kind in ("LBRACK", "LPAREN", "RPAREN"):
                break
            parts.append(self.take())
        close = self.peek()
        if close is None or close.kind != "RBRACK":
            raise self.fail(f"unmatched '[' at {open_tok.start}; add ']'", open_tok)
        self.take()
        texts = [p.text for p in parts]
        if len(texts) != 3 or texts[1] != "TO":
            raise self.fail(f"range for {name} must be [a TO b], got [{' '.join(texts)}]", open_tok)
        return Range(name, texts[0], texts[2])


def _apply_field(node: Node, name: str) -> Node:
    if isinstance(node, Term):
        return node if node.field else replace(node, field=name)
    if isinstance(node, Range):
        return node
    if isinstance(node, Not):
        return Not(_apply_field(node.child, name))
    kids = tuple(_apply_field(c, name) for c in node.children)
    return And(kids) if isinstance(node, And) else Or(kids)


def parse(query: str) -> Node:
    """Parse ``query`` into an AST; raises :class:`QuerySyntaxError` naming the fix."""
    return _Parser(query, tokenize(query)).parse()


def _quote(t: Term) -> str:
    if t.phrase or not t.text or any(ch.isspace() or ch in _SPECIAL or ch == ":" for ch in t.text):
        return '"' + t.text.replace('"', "") + '"'
    if t.text in ("AND", "OR", "NOT", "TO") or t.text.startswith("'"):
        return '"' + t.text + '"'
    return t.text


def to_string(node: Node) -> str:
    """Serialise an AST back to Europe PMC syntax (``parse(to_string(n)) == n``)."""
    if isinstance(node, Term):
        return (f"{node.field}:" if node.field else "") + _quote(node)
    if isinstance(node, Range):
        return f"{node.field}:[{node.lo} TO {node.hi}]"
    if isinstance(node, Not):
        return f"NOT {_wrap(node.child)}"
    joiner = " AND " if isinstance(node, And) else " OR "
    return joiner.join(_wrap(c) for c in node.children)


def _wrap(node: Node) -> str:
    return f"({to_string(node)})" if isinstance(node, And | Or) else to_string(node)


def terms(node: Node) -> list[Term | Range]:
    """Leaves of the AST in order (negated leaves included)."""
    if isinstance(node, Term | Range):
        return [node]
    if isinstance(node, Not):
        return terms(node.child)
    return [leaf for c in node.children for leaf in terms(c)]


def fields_used(node: Node) -> set[str]:
    return {leaf.field for leaf in terms(node) if leaf.field}


def count_ands(node: Node) -> int:
    """Number of AND joins (explicit or implicit) in the query."""
    if isinstance(node, Term | Range):
        return 0
    if isinstance(node, Not):
        return count_ands(node.child)
    own = len(node.children) - 1 if isinstance(node, And) else 0
    return own + sum(count_ands(c) for c in node.children)


# ---------------------------------------------------------------- validator
@dataclass
class ValidationResult:
    query: str
    valid: bool
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ast: Node | None = None

    def to_json(self) -> dict[str, object]:
        return {"query": self.query, "valid": self.valid, "errors": self.errors, "warnings": self.warnings,
                "normalized": to_string(self.ast) if self.ast is not None else None}


_YEAR = re.compile(r"^\d{4}$")
_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_NO_COMMA = {"PMCID", "ISSN", "ESSN", "ISBN", "DOI"}


def _check_date(f: Field, value: str) -> str | None:
    if value == "*":
        return None
    if f.name == "PUB_YEAR":
        return None if _YEAR.match(value) else f"PUB_YEAR:{value} must be a year YYYY"
    if _YEAR.match(value):
        return None
    m = _DAY.match(value)
    if not m:
        return f"{f.name}:{value} must be YYYY or YYYY-MM-DD"
    try:
        date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return f"{f.name}:{value} is not a real calendar date"
    return None


def _check_term(t: Term) -> list[str]:
    errors: list[str] = []
    if t.phrase and t.wildcard:
        errors.append(f"wildcard inside quotes {t.text!r}; Europe PMC ignores it: remove the quotes or the * / ?")
    if t.field is None:
        return errors
    f = get_field(t.field)
    if f is None:
        return [f"unknown field {t.field}; see the field list (e.g. TITLE, ABSTRACT, KW, AUTH)"]
    v = t.text.strip()
    if not v:
        return [f"field {f.name}: has an empty value"]
    if t.wildcard and not f.wildcards:
        if f.kind == "date":
            what = "'?'" if "?" in v else "a wildcard outside a range"
            errors.append(f"{what} in date field {f.name}; use a range such as {f.name}:[2015 TO 2020]")
        else:
            errors.append(f"wildcard in {f.kind} field {f.name}; give the exact value")
        return errors
    if f.kind == "entity" and _WILD.sub("", v) == "":
        errors.append(f"{f.name}:{v} is a wildcard-only presence check, which Europe PMC refuses; name an entity")
    elif f.kind == "flag" and v.upper() not in ("Y", "N"):
        errors.append(f"{f.name}:{v} must be Y or N")
    elif f.kind == "fixed" and not f.allows(v):
        sample = ", ".join(sorted(f.values)[:8])
        errors.append(f"{f.name}:{v} is not an allowed value (allowed: {sample}…)")
    elif f.kind == "date":
        msg = _check_date(f, v)
        if msg:
            errors.append(msg)
    elif f.kind == "identifier":
        if "," in v and f.name in _NO_COMMA:
            errors.append(f"{f.name}:{v} contains a comma; search one identifier per clause joined by OR")
        elif f.pattern is not None and not t.wildcard and not f.pattern.match(v):
            errors.append(f"{f.name}:{v} does not look like {f.description}")
    return errors


def _check_range(r: Range) -> list[str]:
    f = get_field(r.field)
    if f is None:
        return [f"unknown field {r.field}; see the field list"]
    if f.kind != "date":
        if f.kind == "text" and f.name in ("CITED", "VOLUME", "ISSUE"):
            return []
        return [f"range on non-date field {f.name}; ranges work on dates such as PUB_YEAR"]
    errors = [m for m in (_check_date(f, r.lo), _check_date(f, r.hi)) if m]
    if not errors and r.lo != "*" and r.hi != "*" and r.lo > r.hi:
        errors.append(f"range {f.name}:[{r.lo} TO {r.hi}] starts after it ends; swap the bounds")
    return errors


def validate(query: str, *, max_ands: int | None = None) -> ValidationResult:
    """Check ``query`` as Europe PMC would; never raises."""
    try:
        ast = parse(query)
    except QuerySyntaxError as exc:
        return ValidationResult(query, False, [exc.message])
    errors: list[str] = []
    for leaf in terms(ast):
        errors.extend(_check_term(leaf) if isinstance(leaf, Term) else _check_range(leaf))
    used = fields_used(ast)
    warnings: list[str] = []
    if "GRANT_ID" in used and "GRANT_AGENCY" not in used:
        warnings.append("GRANT_ID without GRANT_AGENCY may match grants of other funders")
    if "EXT_ID" in used and "SRC" not in used:
        warnings.append("EXT_ID without SRC may match ids from several sources; add SRC:MED")
    if "INVESTIGATOR" in used and "AUTH_COLLECTIVE_LIST" not in used:
        warnings.append("INVESTIGATOR without AUTH_COLLECTIVE_LIST")
    if "ISSUE" in used and not {"JOURNAL", "VOLUME"} <= used:
        warnings.append("ISSUE without JOURNAL and VOLUME is rarely selective")
    if max_ands is not None and (n := count_ands(ast)) > max_ands:
        warnings.append(f"{n} ANDs (more than {max_ands}) may return too few papers; split the query")
    return ValidationResult(query, not errors, errors, warnings, ast)


assert len(FIELDS) == 111  # the catalogue is the study's full list
