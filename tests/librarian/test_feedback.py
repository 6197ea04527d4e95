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


def test_added_mode_keeps_the_broad_hits_and_fuses_the_rm3_query_beside_them(scifact_full: Path,
                                                                             shared_data: Path) -> None:
    lexicon = default_lexicon(shared_data / "references")
    added = Feedback(docs=1, terms=10, original_weight=0.7, mode="add", weight=1.0)
    on = Librarian(scifact_full, lexicon=lexicon, retriever="bm25", feedback=added).ask(CLAIM)
    off = Librarian(scifact_full, lexicon=lexicon, retriever="bm25").ask(CLAIM)
    broad = [q for q in off.debug["subqueries"]]
    # every subquery of the plan is still searched, and the RM3 query follows the broad one
    assert on.debug["subqueries"][: len(broad) + 1] == [broad[0], f"{broad[0]} (RM3)", *broad[1:]]
    assert len(on.debug["feedback"]) == 10
    # the pool keeps every paper the plan found (the broad hits are kept) and gains the RM3 query's
    # (87 -> 103 candidate papers when measured); replacing the broad hits keeps about the same count
    assert on.debug["candidates"] > off.debug["candidates"] + 5, (on.debug["candidates"], off.debug["candidates"])
    # the paper the feedback terms come from is the plain ranking's first, and stays first
    assert on.papers[0].doc.doc_id == off.papers[0].doc.doc_id == "20888849"


def test_an_unknown_feedback_mode_is_refused_with_the_choices() -> None:
    import pytest

    from bioevidence.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="replace, add"):
        Feedback(mode="expand")
