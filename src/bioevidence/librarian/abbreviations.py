"""Abbreviation and name pairs mined from the indexed text, kept with the index.

Two kinds of pair, both read from the two patterns ``first (second)`` an author writes when they
say what they mean:

* **abbreviation** (Schwartz & Hearst, "A simple algorithm for identifying abbreviation
  definitions in biomedical text", PSB 2003): ``long form (SHORT)`` and ``SHORT (long form)``.
  A short form has at most two words and 2–10 characters, starts with a letter or digit and holds
  a letter; here it must also hold a capital or a digit, and be neither a quantity ("10 ng/mL")
  nor a capitalised name ("Dotarem"): refinements for query expansion. Its long form is the
  shortest run of the words before the parenthesis (at most ``min(|SF| + 5, 2·|SF|)`` of them) in
  which every letter and digit of the short form appears in order, read right to left, the first
  one starting a word; a long form holding the short form, a bracket, ", " or starting with a
  function word ("and infarction") is no definition.
* **name**: a drug's names (``capivasertib (AZD5363)``, ``AZD5363 (capivasertib)``,
  ``vemurafenib (Zelboraf)``): one word on each side, one of them an international
  nonproprietary name (a WHO INN stem: ``-nib``, ``-mab``, ``-sertib``, ``-platin`` …), the other
  a code name (capitals and digits: ``AZD5363``, ``MK-2206``, ``PF-06463922``), another INN or a
  capitalised brand-like word. A word paired with two or more different drugs across the corpus
  is a maker or supplier (``Roche``, ``Selleck``), not a name, and is dropped.

:func:`mine` reads sentences; :class:`Synonyms` holds the pairs (``synonyms.tsv`` in the index
folder, written by :func:`~bioevidence.librarian.index.build_index` and hashed in the index's
``meta`` table) and answers the planner: what a question's words also go by.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SYNONYMS_FILE", "Pair", "Synonyms", "code_like", "inn_like", "key", "mine", "pairs_in", "pinned_vocabulary",
           "read_vocabulary"]

SYNONYMS_FILE = "synonyms.tsv"
_HEADER = "kind\tshort\tlong\tdocs\n"
_PAREN = re.compile(r"\(([^()]{1,200})\)")
_STRIP = "®™*†‡.,;:'\"[]{}"
# WHO INN stems of drug classes (antineoplastics first); a word ending in one is a drug name.
_INN = re.compile(r"^[a-z][a-z-]{3,}(?:nib|mab|ercept|acept|lisib|parib|sertib|ciclib|zomib|platin|taxel|rubicin|"
                  r"mustine|trexed|trexate|abine|citidine|inostat|tecan|olimus|rolimus|degib|lutamide|rozole|"
                  r"mestane|ifen|ifene|xifene|poside|domide|tretin|retinoin|uracil|mycin|staurin|rafenib|relin|"
                  r"relix|fungin|vastatin|sartan|prazole|floxacin|conazole|cillin|olol|pril|navir|previr|gliptin|"
                  r"glutide|dronate|setron|afil)$")
_CODE = re.compile(r"^[A-Z0-9][A-Za-z0-9-]{2,18}$")
_BRAND = re.compile(r"^[A-Z][a-z]{4,19}$")
_SHORT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9./&+αβγδεκ-]*(?: [A-Za-z0-9./&+αβγδεκ-]+)?$")
_NOT_FIRST = frozenset(["and", "or", "of", "the", "in", "with", "to", "for", "by", "as", "at", "on", "from", "a", "an",
                        "than", "that", "which", "was", "were", "is", "are", "vs", "versus"])
_WORD = re.compile(r"[0-9a-z]+")
_SHORT_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9./&+-]*[A-Za-z0-9+]")
# Makers and suppliers written in parentheses after a drug ("imatinib (Novartis)"): never a drug's name.
_MAKERS = frozenset(["abcam", "amgen", "astrazeneca", "bayer", "biovision", "calbiochem", "cayman", "genentech",
                     "gibco", "invitrogen", "lilly", "medchemexpress", "merck", "millipore", "novartis", "pfizer",
                     "roche", "sanofi", "selleck", "selleckchem", "sigma", "takeda", "thermo", "tocris"])


@dataclass(frozen=True, order=True)
class Pair:
    kind: str  # "abbreviation" | "name" | "vocabulary"
    short: str  # the short form (abbreviation) or the first name as written
    long: str  # the long form or the other name


def key(text: str) -> str:
    """How a name or long form is looked up: lower-case words joined by one space
    (``MK-2206`` and ``MK 2206`` → ``mk 2206``; ``Non-Small-Cell`` → ``non small cell``)."""
    return " ".join(_WORD.findall(text.lower()))


def code_like(word: str) -> bool:
    """A drug code name: starts with a capital or digit, two or more digits, two or more capitals."""
    return bool(_CODE.match(word)) and sum(c.isdigit() for c in word) >= 2 and sum(c.isupper() for c in word) >= 2


def inn_like(word: str) -> bool:
    """A word with a WHO INN stem (``capivasertib``, ``Trastuzumab``)."""
    return bool(_INN.match(word.lower())) and (word.islower() or word[1:].islower())


def _valid_short(short: str) -> bool:
    return (2 <= len(short) <= 10 and bool(_SHORT.match(short)) and any(c.isalpha() for c in short)
            and any(c.isupper() or c.isdigit() for c in short)
            and not re.match(r"^\d+(?:\.\d+)?\s", short)  # "10 ng/mL": a quantity
            and not (len(short) >= 5 and short[0].isupper() and short[1:].islower()))  # a name: "Dotarem"


def _best_long(short: str, candidate: str) -> str | None:
    """Schwartz & Hearst's match: every letter and digit of ``short`` in ``candidate``, right to
    left, the short form's first character at the start of a word; the long form starts there."""
    s, pos = len(short) - 1, len(candidate) - 1
    while s >= 0:
        ch = short[s].lower()
        if not ch.isalnum():
            s -= 1
            continue
        while pos >= 0 and (candidate[pos].lower() != ch or (s == 0 and pos > 0 and candidate[pos - 1].isalnum())):
            pos -= 1
        if pos < 0:
            return None
        pos -= 1
        s -= 1
    return candidate[candidate.rfind(" ", 0, pos + 1) + 1:]


def _definition(short: str, before: str) -> str | None:
    """The long form ``short`` abbreviates among the words of ``before`` (nearest last), if any."""
    short = short.strip()
    if not _valid_short(short):
        return None
    limit = min(len(short) + 5, 2 * len(short))
    words = before.split()[-limit:]
    if not words:
        return None
    long = _best_long(short, " ".join(words))
    if long is None:
        return None
    long = long.strip().rstrip(",;:")
    n_words = len(long.split())
    if len(long) <= len(short) or n_words > limit or n_words < 1:
        return None
    if (short.lower() in long.lower() or any(c in long for c in "()[]=<>") or ", " in long
            or long.split()[0].lower() in _NOT_FIRST):
        return None
    return long


def _first_part(inner: str) -> str:
    return re.split(r"[;,]", inner, maxsplit=1)[0].strip()


def _name(word: str) -> str:
    return word.strip(_STRIP).strip()


def _name_pair(left: str, right: str) -> Pair | None:
    a, b = _name(left), _name(right)
    if not a or not b or a.lower() == b.lower() or " " in a or " " in b:
        return None
    kinds = [("inn" if inn_like(w) else "code" if code_like(w) else "brand" if _BRAND.match(w) else "") for w in (a, b)]
    if "inn" not in kinds or "" in kinds or a.lower() in _MAKERS or b.lower() in _MAKERS:
        return None
    return Pair("name", a, b)


def pairs_in(sentence: str) -> list[Pair]:
    """The abbreviation and name pairs one sentence defines, in reading order."""
    out: list[Pair] = []
    for m in _PAREN.finditer(sentence):
        inner = _first_part(m.group(1))
        before = sentence[: m.start()].rstrip()
        if not inner or not before:
            continue
        last = before.split()[-1]
        named = _name_pair(last, inner) if len(inner.split()) == 1 else None
        if named is not None:
            out.append(named)
            continue
        if len(inner.split()) <= 2:
            long = _definition(inner, before)
            if long is not None:
                out.append(Pair("abbreviation", inner, long))
        else:  # SHORT (long form)
            short = last.strip(_STRIP)
            long = _definition(short, inner) if short else None
            if long is not None and key(long) == key(inner):
                out.append(Pair("abbreviation", short, long))
    return out


def mine(documents: Iterable[Iterable[str]]) -> collections.Counter[Pair]:
    """Pairs with the number of documents defining them; ``documents`` yields each document's sentences.
    A name word paired with two or more different drugs is dropped (a maker or supplier)."""
    counts: collections.Counter[Pair] = collections.Counter()
    for sentences in documents:
        counts.update({p for s in sentences if "(" in s for p in pairs_in(s)})
    partners: dict[str, set[str]] = collections.defaultdict(set)
    for p in counts:
        if p.kind == "name":
            for a, b in ((p.short, p.long), (p.long, p.short)):
                if not inn_like(a):
                    partners[key(a)].add(key(b))
    return collections.Counter({p: n for p, n in counts.items()
                                if p.kind != "name" or all(len(partners.get(key(w), ())) < 2 for w in (p.short, p.long)
                                                           if not inn_like(w))})


def read_vocabulary(path: Path) -> list[Pair]:
    """A user's pinned vocabulary: one ``name<TAB>synonym`` a line (``#`` comments, blank lines
    skipped), read through the repo's size limits (plain or gzip)."""
    return pinned_vocabulary(path)[0]


def pinned_vocabulary(path: Path) -> tuple[list[Pair], str]:
    """:func:`read_vocabulary`'s pairs and the SHA-256 of the bytes they were read from."""
    import hashlib

    from ..errors import InputError
    from ..io import MAX_BYTES, gunzip_limited, read_limited
    from ..limits import size_limit

    data = read_limited(path, MAX_BYTES)
    sha = hashlib.sha256(data).hexdigest()
    if path.name.endswith(".gz"):
        data = gunzip_limited(data, size_limit("max_inflated"), name=str(path))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"vocabulary {path.name} is not UTF-8 text", file=str(path)) from exc
    out: list[Pair] = []
    for n, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.split("\t")]
        if len(parts) != 2 or not all(parts) or max(map(len, parts)) > 200:
            raise InputError(f"vocabulary {path.name} line {n}: expected name<TAB>synonym (each at most 200 "
                             "characters)", file=str(path), line=n)
        out.append(Pair("vocabulary", parts[0], parts[1]))
    return out, sha


@dataclass
class Synonyms:
    """The pairs of one index: abbreviations (short form, exact case → long forms with the number of
    documents defining each) and groups of names for one thing (drug names, a user's vocabulary)."""

    pairs: dict[Pair, int] = field(default_factory=dict)
    short: dict[str, dict[str, int]] = field(default_factory=dict)  # "ROS" -> {"reactive oxygen species": 40}
    long: dict[str, dict[str, int]] = field(default_factory=dict)  # key(long form) -> {short form: docs}
    names: dict[str, list[str]] = field(default_factory=dict)  # key(name) -> every name of its group
    max_words: int = 1  # longest long form or name, in words

    @classmethod
    def of(cls, pairs: Mapping[Pair, int]) -> Synonyms:
        out = cls(dict(pairs))
        groups: dict[str, str] = {}  # union-find over name keys

        def root(k: str) -> str:
            while groups.setdefault(k, k) != k:
                groups[k] = groups[groups[k]]
                k = groups[k]
            return k

        spelled: dict[str, str] = {}
        for p, n in sorted(pairs.items()):
            if p.kind == "abbreviation":
                out.short.setdefault(p.short, {})[p.long] = out.short.get(p.short, {}).get(p.long, 0) + n
                out.long.setdefault(key(p.long), {})[p.short] = n
                out.max_words = max(out.max_words, min(10, len(key(p.long).split())))
                continue
            a, b = key(p.short), key(p.long)
            if not a or not b:
                continue
            spelled.setdefault(a, p.short)
            spelled.setdefault(b, p.long)
            groups[root(a)] = root(b)
        members: dict[str, list[str]] = collections.defaultdict(list)
        for k in sorted(groups):
            members[root(k)].append(spelled[k])
        for k in groups:
            out.names[k] = members[root(k)]
            out.max_words = max(out.max_words, min(10, len(k.split())))
        return out

    def __len__(self) -> int:
        return len(self.pairs)

    def expand(self, question: str) -> list[tuple[str, str, list[str]]]:
        """What ``question``'s words also go by: ``(mention, kind, other names)`` with kind ``name``
        (a drug's other names, a vocabulary's synonyms: every one of its group) or ``abbreviation``
        (a short form written in the question → the long form most documents define it as, when
        at least half of those defining it do; a long form → its most defined short form)."""
        out: list[tuple[str, str, list[str]]] = []
        words = _WORD.findall(question.lower())
        i = 0
        while i < len(words):
            for n in range(min(self.max_words, len(words) - i), 0, -1):
                k = " ".join(words[i: i + n])
                group = self.names.get(k)
                shorts = {s: d for s, d in self.long.get(k, {}).items() if len(s) >= 3} if n > 1 else None
                if group:
                    out.append((k, "name", [g for g in group if key(g) != k][:8]))
                elif shorts:
                    out.append((k, "abbreviation", sorted(shorts, key=lambda s: (-shorts[s], s))[:1]))
                else:
                    continue
                i += n - 1
                break
            i += 1
        for tok in dict.fromkeys(_SHORT_TOKEN.findall(question)):
            defined = self.short.get(tok)
            if defined and not any(tok.lower() == m for m, _, _ in out):
                groups: dict[str, dict[str, int]] = {}  # one entry per long form, however spelled
                for long, n in defined.items():
                    groups.setdefault(key(long), {})[long] = n
                top = min(groups.values(), key=lambda g: (-sum(g.values()), min(g)))
                if 2 * sum(top.values()) >= sum(defined.values()):
                    out.append((tok, "abbreviation", [max(top, key=lambda s: (top[s], s))]))
        return [(m, kind, alts) for m, kind, alts in out if alts]

    def readings(self, short: str) -> dict[str, int]:
        """What the corpus says ``short`` stands for: long form -> documents defining it."""
        return self.short.get(short, {})

    def text(self) -> str:
        """The table as written to ``synonyms.tsv``: a header, then ``kind short long docs`` sorted."""
        return _HEADER + "".join(f"{p.kind}\t{_clean(p.short)}\t{_clean(p.long)}\t{n}\n"
                                 for p, n in sorted(self.pairs.items()))

    @classmethod
    def read(cls, path: Path) -> Synonyms:
        from ..errors import InputError
        from ..io import MAX_BYTES, read_limited

        text = read_limited(path, MAX_BYTES).decode("utf-8")
        pairs: dict[Pair, int] = {}
        lines = text.split("\n")
        if not lines or lines[0] + "\n" != _HEADER:
            raise InputError(f"{path.name} is not a synonyms table (header {_HEADER.strip()!r})", file=str(path))
        for n, line in enumerate(lines[1:], 2):
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != 4 or parts[0] not in ("abbreviation", "name", "vocabulary") or not parts[3].isdigit():
                raise InputError(f"{path.name} line {n} is not kind<TAB>short<TAB>long<TAB>docs", file=str(path),
                                 line=n)
            pairs[Pair(parts[0], parts[1], parts[2])] = int(parts[3])
        return cls.of(pairs)


def _clean(text: str) -> str:
    return " ".join(text.replace("\t", " ").split())
