"""A long record on the record page (issue 27, item 3): a record citing 300 sentences of the CIViC papers
(a 487 kB page before) is shown 20 evidence items at a time, its item findings one line per code, and
the closest passage to a quote that is not in its paper (a word diff over the paper) is computed only
when asked for. Over HTTP against the real server; assertions read the pages, never timings."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import civic_queue
import pytest
from web_support import Server, Visitor, build_queue, need_web, start_server

need_web()

ITEMS = 300


@pytest.fixture(scope="module")
def long_server(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Iterator[Server]:
    record = civic_queue.long_record(shared_data, ITEMS)
    running = start_server(build_queue(tmp_path_factory.mktemp("long"), shared_data, records=[record]), shared_data)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture()
def bob(long_server: Server) -> Iterator[Visitor]:
    v = Visitor(long_server.url)
    assert v.login("bob").status_code == 303
    try:
        yield v
    finally:
        v.close()


def _items(page: str) -> list[tuple[int, str]]:
    return [(int(n), state) for n, state in re.findall(r'<article class="item [^"]*" id="item-(\d+)" data-item="[^"]*" '
                                                       r'data-state="([\w-]+)"', page)]


def test_a_record_of_300_items_is_shown_20_at_a_time(bob: Visitor) -> None:
    first = bob.get("/entries/1")
    assert first.status_code == 200 and len(first.content) < 100_000  # 487 kB with every item on one page
    assert [n for n, _ in _items(first.text)] == list(range(1, 21))
    assert "Items page 1 of 15" in first.text and 'id="items-next"' in first.text
    last = bob.get("/entries/1?items=15").text
    assert [n for n, _ in _items(last)] == list(range(281, 301)) and 'id="items-next"' not in last
    assert [n for n, _ in _items(bob.get("/entries/1?items=99").text)] == list(range(281, 301))  # past the end
    # the items' findings once per code at the top, naming the items (linked to their page)
    grouped = re.search(r'data-code="BEV017">.*?on (\d+) evidence items: (.*?)\(each shown', first.text, re.S)
    assert grouped and int(grouped.group(1)) == 60
    assert '<a href="/entries/1?items=2#item-24">24</a>' in grouped.group(2)
    assert first.text.count('class="finding sev-error" data-code="BEV017"') == 4  # in full only with items 4..16
    # sources: those the shown items cite (and any with a notice), not all 111
    assert len(re.findall(r'<div class="source" ', first.text)) <= 20 and "111 sources" in first.text


def test_the_closest_passage_is_computed_only_when_asked_for(bob: Visitor) -> None:
    page = bob.get("/entries/1").text
    assert "table class=\"differences\"" not in page  # not computed for the page
    states = dict(_items(page))
    assert states[4] == "not-found" and states[6] == "cut-word" and states[1] == "verified"
    assert 'data-src="/entries/1/items/4/closest?part=1" data-auto="1"' in page  # two on this page: opened at once
    part = bob.get("/entries/1/items/4/closest?part=1")
    assert part.status_code == 200 and "<html" not in part.text  # the piece review.js puts in place
    differences = re.findall(r"<tr><td><ins>(.*?)</ins></td><td><del>(.*?)</del></td></tr>", part.text)
    assert differences and any("never" in q.split() or "always" in q.split() for _, q in differences)
    whole = bob.get("/entries/1/items/4/closest")  # without script: a page of its own
    assert "<html" in whole.text and 'id="back-to-entry"' in whole.text and "table class=\"differences\"" in whole.text
    assert "no closest passage to show" in bob.get("/entries/1/items/1/closest?part=1").text
    for missing in ("301", "0", "abc"):
        assert bob.get(f"/entries/1/items/{missing}/closest").status_code == 404


def test_only_the_items_the_gate_did_not_verify(bob: Visitor) -> None:
    page = bob.get("/entries/1?which=unverified").text
    assert "300 items, 60 not verified against their paper" in page
    shown = _items(page)
    assert len(shown) == 20 and {s for _, s in shown} <= {"not-found", "cut-word"}
    assert [n for n, _ in shown][:4] == [4, 6, 14, 16]
    nxt = re.search(r'href="(/entries/1\?items=2&amp;which=unverified)#evidence" id="items-next"', page)
    assert nxt and "Items page 1 of 3" in page


def test_the_decision_form_comes_before_the_evidence(bob: Visitor) -> None:
    page = bob.get("/entries/1").text
    assert page.index('id="decide-form"') < page.index('id="findings"') < page.index('id="evidence"')

