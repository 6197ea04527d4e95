"""A curator working through a real queue of 64 CIViC records in Debian's chromium with the keyboard
only (issue 27): every decision opens the next entry of the filter, so 50 entries take at most 55
page loads, signing in included; the filter is kept from the queue to each entry and back.

The curator (``curator.py``, shared with ``tools/bench_web.py --scenario curator``) never clicks:
``n`` opens the first entry, ``a`` / ``r`` / ``d`` chooses, it types the reason, Ctrl+Enter records.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from curator import Curator
from web_support import PASSWORD, Server, build_queue, cli, need_web, start_server

need_web("playwright")

pytestmark = pytest.mark.heavy(seconds=40)  # started first under xdist (tests/conftest.py)
RECORDS = 64


@pytest.fixture(scope="module")
def curator_server(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Iterator[Server]:
    running = start_server(build_queue(tmp_path_factory.mktemp("curator"), shared_data, RECORDS), shared_data)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture()
def tab(browser: Any, curator_server: Server) -> Iterator[Any]:
    context = browser.new_context(base_url=curator_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        yield page
    finally:
        context.close()
    assert not errors  # no CSP violation, no script error


def _decisions(queue: Path, reviewer: str) -> list[tuple[int, str]]:
    db = sqlite3.connect(queue)
    try:
        return [(int(e), str(d)) for e, d in db.execute(
            "SELECT entry_id, decision FROM decisions WHERE reviewer_id = ? ORDER BY id", (reviewer,))]
    finally:
        db.close()


def test_fifty_entries_with_the_keyboard_only_in_at_most_55_page_loads(tab: Any, curator_server: Server) -> None:
    who = Curator(tab)
    who.sign_in("alice", PASSWORD)
    assert tab.url.endswith("/queue") and who.run.loads == 2  # the sign-in page, then the queue
    assert "a accept" in " ".join(tab.text_content("#shortcuts").split())  # the keys are on the page
    run = who.keyboard(50)
    assert run.loads <= 55, run.urls  # 2 signing in, the first entry, then one load per decision: 53
    decided = [d.entry for d in run.decisions]
    assert decided == list(range(1, 51))  # each decision opened the next open entry, in queue order
    assert _decisions(curator_server.queue, "orcid:0000-0002-1825-0097") == [
        (d.entry, d.decision) for d in run.decisions]  # the file holds exactly what the keys decided
    for d in run.decisions:
        assert d.banner.startswith(f"Recorded: {d.decision} on entry {d.entry} by Alice Curator"), d.banner
    accepted = [d for d in run.decisions if d.decision == "accept"]
    assert accepted and all(d.banner.endswith("The gate ran again: that record is now admitted.") for d in accepted)
    assert {d.decision for d in run.decisions} == {"accept", "reject", "defer"}
    assert tab.url.endswith(f"/entries/51?decided={_last_decision(curator_server.queue)}&prev=50")


def _last_decision(queue: Path) -> int:
    db = sqlite3.connect(queue)
    try:
        return int(db.execute("SELECT max(id) FROM decisions").fetchone()[0])
    finally:
        db.close()


def test_the_filter_is_kept_skipping_wraps_round_and_the_last_decision_returns_to_the_queue(
        tab: Any, curator_server: Server) -> None:
    listed = json.loads(cli("review", "list", "--queue", curator_server.queue, "--format", "json").stdout)
    expected = [e["id"] for e in listed if "BEV017" in e["reason_codes"]]  # open, and the quote is not the paper's
    assert len(expected) >= 3
    who = Curator(tab)
    who.sign_in("bob", PASSWORD, start="/queue?code=BEV017")
    assert tab.url.endswith("/queue?code=BEV017")
    tab.keyboard.press("n")
    tab.wait_for_url(re.compile(rf".*/entries/{expected[0]}\?code=BEV017$"))
    assert tab.get_attribute("#back-to-queue", "href") == "/queue?code=BEV017"
    assert tab.text_content("#position").startswith(f"entry 1 of the {len(expected)} in this filter")
    keys = " ".join(tab.text_content("#shortcuts").split())
    assert all(k in keys for k in ("a accept", "r reject", "d defer", "Ctrl+Enter", "n next entry", "q back"))
    box = tab.locator("#decide-form").bounding_box()
    assert box is not None and box["y"] + box["height"] < 900  # the decision form, without scrolling
    with tab.expect_navigation():
        tab.keyboard.press("n")  # skip the first, deciding nothing
    seen = [expected[0]]
    for _ in range(len(expected)):
        entry = int(re.search(r"/entries/(\d+)\?", tab.url).group(1))  # type: ignore[union-attr]
        seen.append(entry)
        assert "code=BEV017" in tab.url
        tab.keyboard.press("r")
        tab.keyboard.type("The quote is not the paper's sentence.")
        with tab.expect_navigation():
            tab.keyboard.press("Control+Enter")
    assert seen == [expected[0], *expected[1:], expected[0]]  # the skipped one comes round again, last
    assert re.search(r"/queue\?code=BEV017&decided=\d+&prev=" + str(expected[0]) + "$", tab.url)
    assert "Nothing else in this filter needs a decision" in tab.text_content("#decided-banner")
    assert tab.query_selector("#empty") is not None  # no open entry left in the filter
    assert sorted(e for e, _ in _decisions(curator_server.queue, "orcid:0000-0001-5109-3700")) == sorted(expected)
