"""RM3 pseudo-relevance feedback in `ask --retriever bm25` (issue 28 item 3; docs/librarian.md: tried, off by
default), on the whole SciFact corpus.

SciFact train claim 620 cites one abstract, "Hyaluronan impairs vascular function and drug delivery in a
mouse model of pancreatic cancer" (2565138): it speaks of vascular function and drug delivery where the
claim says vessel density and chemotherapy efficacy, and plain BM25 does not return it. The first paper
of the fused pool ("Inhibition of Hedgehog signaling enhances delivery of chemotherapy in a mouse model of
pancreatic cancer", 20888849) gives RM3 the terms drug, delivery, gemcitabine, pancreatic, vascular, and
the cited paper comes second. Checked by hand.
"""

from __future__ import annotations

from pathlib import Path

from bioevidence.librarian.feedback import Feedback
from bioevidence.librarian.lexicon import default_lexicon
from bioevidence.librarian.librarian import Librarian

CLAIM = "Increased vessel density along with a reduction in fibrosis improves the efficacy of chemotherapy treatments."
CITED = "2565138"


def test_rm3_brings_the_cited_paper_into_the_first_ten(scifact_full: Path, shared_data: Path) -> None:
    lexicon = default_lexicon(shared_data / "references")
    on = Librarian(scifact_full, lexicon=lexicon, retriever="bm25", feedback=Feedback()).ask(CLAIM)
    off = Librarian(scifact_full, lexicon=lexicon, retriever="bm25").ask(CLAIM)  # the default: no feedback
    first_on = [p.doc.doc_id for p in on.papers][:10]
    first_off = [p.doc.doc_id for p in off.papers][:10]
    assert CITED in first_on[:3] and CITED not in first_off, (first_on, first_off)
    assert {"drug", "deliveri", "pancreat", "vascular"} <= set(on.debug["feedback"])
    assert abs(sum(on.debug["feedback"].values()) - 1) < 1e-3 and len(on.debug["feedback"]) == Feedback().terms
    assert "feedback" not in off.debug
    # what feedback changes is the order of papers: every sentence is still a slice of its pinned passage
    assert on.ranked
    for span in on.ranked:
        assert span.text == span.passage.text[span.start: span.end]


def test_feedback_is_off_by_default_and_switchable(scifact_small: Path) -> None:
    index = scifact_small / "index"
    assert Librarian(index, use_lexicon=False).feedback is None
    wide = Feedback(docs=10, terms=10, original_weight=0.5)  # Anserini's defaults
    assert Librarian(index, use_lexicon=False, retriever="bm25", feedback=wide).feedback == wide
