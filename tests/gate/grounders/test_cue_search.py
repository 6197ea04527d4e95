"""The negation cue's word-start search (``cues.negation``) finds exactly what ``NEGATION.search`` finds.

``negation`` tries the cue's expression only at the start of words holding a negator, found with
plain string scans ("no" once for "not", "nor" and "no" before whitespace), on lower-cased ASCII text
with the case-sensitive pattern. The oracle is the documented expression run as a plain
``re.search`` over the whole text. Texts: every sentence of every SciFact abstract, every CIViC
evidence statement and every passage of four pinned CIViC papers, each also written with the
faults that could part the two (case, whitespace kinds, a curly apostrophe, characters that
lower-case to two or that IGNORECASE folds, a negator at the very end, the text cut right after
each "no"); a text negated by "no ..." is also written with each ASCII whitespace kind for its
spaces. Prints the table of texts and matches by variant.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bioevidence.gate.grounders.cues import NEGATION, negation

VARIANTS: dict[str, Callable[[str], str]] = {
    "as written": lambda t: t,
    "upper case": str.upper,
    "title case": str.title,
    "tabs for spaces": lambda t: t.replace(" ", "\t"),
    "vertical tab, file separator": lambda t: t.replace(" ", "\x0b", 3).replace(" ", "\x1c", 3),
    "curly apostrophe": lambda t: t.replace("'", "\u2019").replace("not ", "n\u2019t "),
    "dotted capital I": lambda t: "\u0130 " + t,
    "dotless i": lambda t: t.replace("i", "\u0131", 2),
    "long s, Kelvin sign": lambda t: t.replace("s", "\u017f", 2).replace("K", "\u212a"),
    "negator at the end": lambda t: t + " no",
    "'not' at the end": lambda t: t + " did not",
}


#: what ``\\s`` matches in ASCII text
ASCII_SPACES = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


def _texts(shared_data: Path, papers: list[Any]) -> Iterator[tuple[str, str]]:
    with gzip.open(shared_data / "claims" / "scifact" / "corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            yield from (("SciFact abstract sentence", s) for s in json.loads(line)["abstract"])
    with gzip.open(shared_data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt", encoding="utf-8") as handle:
        yield from (("CIViC statement", json.loads(line)["evidence_statement"]) for line in handle)
    for paper in papers:
        yield from (("CIViC paper passage", p.text) for p in paper.passages)


def _expected(text: str) -> str | None:
    m = NEGATION.search(text)
    return m.group(0) if m is not None else None


def test_the_word_start_search_finds_what_the_expression_finds(shared_data: Path, four_papers: list[Any]) -> None:
    table: Counter[tuple[str, str, bool]] = Counter()
    for source, text in _texts(shared_data, four_papers):
        for name, variant in VARIANTS.items():
            written = variant(text)
            want = _expected(written)
            assert negation(written) == want, (source, name, written[:300])
            table[(source, name, want is not None)] += 1
        found = _expected(text)
        if found is not None and found.lower().startswith("no"):
            for space in ASCII_SPACES:  # "no" then each kind of whitespace: one scan must see them all
                written = text.replace(" ", space)
                assert negation(written) == _expected(written), (source, repr(space), written[:300])
                table[(source, f"'no' + {space!r}", True)] += 1
        at = text.lower().find("no")
        while at >= 0:  # the text cut right after each "no": the scan's last possible hit
            cut = text[:at + 2]
            assert negation(cut) == _expected(cut), (source, "cut after 'no'", cut[-80:])
            table[(source, "cut after 'no'", _expected(cut) is not None)] += 1
            at = text.lower().find("no", at + 1)
    print()
    for (source, name, matched), count in sorted(table.items()):
        print(f"{source:28s} {name:30s} {'negated' if matched else 'plain':8s} {count:7d}")
    negated = sum(n for (_, _, matched), n in table.items() if matched)
    assert negated > 1000 and sum(table.values()) - negated > 10000, (negated, sum(table.values()))
