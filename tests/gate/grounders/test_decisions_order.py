"""Which passage a quote is placed in when it stands in several (issue 30, the quotes group): the main
text first, in the order of ``PARTS`` (title, abstract, body, then captions, tables, footnotes, back
matter ...), then document order. A figure caption printed in the middle of the body comes after every
body paragraph, so a sentence a caption repeats from the text is placed in the text.

Over the first 60 pinned CIViC papers: every run of six plain words of a caption, table, footnote or
back-matter passage that a later body paragraph also holds (28 when written), located anywhere and
within the passages a locator names. The expected passage is worked out here from the passages' text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bioevidence.gate.grounders.literature import LiteratureGrounder
from bioevidence.text.jats import PARTS


def test_a_quote_in_a_caption_and_in_the_text_is_placed_in_the_text(corpus_dir: Path, cache_dir: Path) -> None:
    grounder = LiteratureGrounder.from_directory(corpus_dir, cache_root=cache_dir)
    works = json.loads((corpus_dir / "literature.json").read_text(encoding="utf-8"))["works"]
    cases = 0
    for key in list(works)[:60]:
        work = grounder.catalogue.get(key)
        paper = grounder.paper(work, grounder.metadata(work)) if work is not None else None
        if paper is None:
            continue
        passages = paper.passages
        for i, passage in enumerate(passages):
            if passage.part not in ("caption", "table", "footnote", "back-matter"):
                continue
            words = passage.text.split()
            for n in range(0, max(0, len(words) - 6), 3):
                quote = " ".join(words[n:n + 6])
                if not re.fullmatch(r"[A-Za-z ,]+", quote) or quote.endswith(","):
                    continue
                if not any(p.part == "body" and quote in p.text for p in passages[i + 1:]):
                    continue
                holders = [j for j, p in enumerate(passages) if quote in p.text]
                expected = min(holders, key=lambda j: (PARTS.index(passages[j].part), j))
                hit = paper.locate(quote)
                assert hit is not None, quote
                assert hit.passage is passages[expected], (key, quote, hit.passage.part, passages[expected].part)
                # a locator naming the caption and the text holding it: the text still comes first, in
                # whatever order the locator names them
                for within in (holders, holders[::-1]):
                    named = paper.locate(quote, within=within)
                    assert named is not None and named.passage is passages[expected], (key, quote, within)
                cases += 1
    assert cases >= 20, cases
