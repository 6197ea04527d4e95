"""The record page's evidence view: each quote inside its pinned passage, read through the literature
grounder the gate uses, on real CIViC records (quotes read from the JATS bytes with plain lxml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import civic_queue
import pytest
from web_support import need_web

need_web()


@pytest.fixture(scope="module")
def gate(shared_data: Path) -> Any:
    from bioevidence.gate.grounders.config import GrounderOptions, build_grounders
    from bioevidence.gate.validator import Validator

    return Validator(None, grounders=build_grounders(GrounderOptions(
        snapshot_dir=shared_data / "civic_corpus" / "snapshots")))


@pytest.fixture(scope="module")
def records(shared_data: Path) -> list[dict[str, Any]]:
    return civic_queue.records(shared_data, 60)


def _view(gate: Any, record: dict[str, Any]) -> tuple[Any, Any, Any]:
    from bioevidence.web.evidence import evidence_view

    report = gate.validate(record)
    sources, items = evidence_view(record, report, gate.grounders)
    return report, sources, items


def _words(text: str) -> list[str]:
    return "".join(c if c.isalnum() else " " for c in text.lower()).split()


def test_a_verified_quote_is_highlighted_inside_its_pinned_passage(gate: Any, records: list[dict[str, Any]]) -> None:
    checked = 0
    for record in records:
        if record["evidence_items"][0]["extraction_method"] != "manual_curation":
            continue
        report, sources, (item,) = _view(gate, record)
        if item.state != "verified":
            continue
        quote = record["evidence_items"][0]["extracted_text"]
        assert _words(item.match) == _words(quote)  # the highlighted slice is the quote, word for word
        assert item.part == "body" and item.where and item.passage_id
        location = next(q for q in report.quotes if q.item_id == "e")
        assert location.passage == item.passage_id  # the report's quote_locations, not a second matcher
        assert sources[0].pinned.endswith("full text")
        checked += 1
    assert checked >= 30


def test_a_changed_word_shows_the_closest_passage_and_what_differs(gate: Any, records: list[dict[str, Any]]) -> None:
    record = records[3]  # position 3: one word changed to "never"/"always"
    _, _, (item,) = _view(gate, record)
    assert item.state == "not-found" and not item.verified
    assert item.closest_excerpt and item.differences
    paper_side, quote_side = item.differences[0]
    assert ("never" in quote_side.split() or "always" in quote_side.split()) and quote_side != paper_side
    quote = _words(record["evidence_items"][0]["extracted_text"])
    closest = _words(item.closest_excerpt)
    assert len(closest) == len(quote) and sum(a != b for a, b in zip(closest, quote, strict=True)) == 1


def test_a_quote_starting_inside_a_word_names_the_whole_word(gate: Any, records: list[dict[str, Any]]) -> None:
    record = records[5]  # position 5: the first long word lost its first two letters
    _, _, (item,) = _view(gate, record)
    assert item.state == "cut-word" and item.cut_where == "starts"
    first = record["evidence_items"][0]["extracted_text"].split()[0]
    assert item.cut_word.endswith(first) and len(item.cut_part) == 2


def test_a_retracted_paper_with_a_concern_shows_both_notices(gate: Any, records: list[dict[str, Any]]) -> None:
    record = records[9]  # position 9: cites PMID 32432717
    assert record["source_artifacts"][0]["uri"] == "pmid:32432717"
    report, (source,), _ = _view(gate, record)
    kinds = [n.kind for n in source.notices]
    assert kinds == ["retraction", "expression_of_concern"]
    assert "32614055" in source.notices[0].text and "32579207" in source.notices[1].text  # the notices' PMIDs
    assert {"BEV019", "BEV027"} <= set(report.reason_codes())


def test_without_a_literature_grounder_the_quote_is_shown_as_the_record_gives_it(records: list[dict[str, Any]]) -> None:
    from bioevidence.gate.validator import Validator
    from bioevidence.web.evidence import evidence_view

    record = records[0]
    report = Validator(None).validate(record)
    (source,), (item,) = evidence_view(record, report, [])
    assert "no literature snapshot" in source.pinned and item.state == "not-literature"
    assert item.quote == record["evidence_items"][0]["extracted_text"]


def test_only_the_items_asked_for_and_the_closest_passage_on_demand(gate: Any, shared_data: Path) -> None:
    """A long record's page reads only the items it shows; the closest passage waits until asked for."""
    from bioevidence.web.evidence import evidence_view, item_view

    record = civic_queue.long_record(shared_data, 40)
    report = gate.validate(record)
    sources, items = evidence_view(record, report, gate.grounders, indexes=range(20, 40), closest=False)
    assert [i.index for i in items] == list(range(20, 40)) and len(sources) == len(record["source_artifacts"])
    missing = [i for i in items if i.state == "not-found"]
    assert missing and all(i.closest_pending and not i.closest_excerpt and not i.differences for i in missing)
    full = item_view(record, report, gate.grounders, missing[0].index)
    assert full is not None and not full.closest_pending and full.closest_excerpt and full.differences
    assert item_view(record, report, gate.grounders, 40) is None
