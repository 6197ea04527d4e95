"""The review pages as a person uses them: Debian's chromium, headless, driven by Playwright, against
the real server on 127.0.0.1 over a real queue of CIViC records. No browser is downloaded.

Assertions read the page's text and DOM, never timings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_support import PASSWORD, Server, build_queue, need_web, start_server

need_web("playwright")


@pytest.fixture(scope="module")
def browser_server(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Iterator[Server]:
    running = start_server(build_queue(tmp_path_factory.mktemp("browser"), shared_data, 30), shared_data)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture()
def page(browser: Any, browser_server: Server) -> Iterator[Any]:
    context = browser.new_context(base_url=browser_server.url, viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        yield tab
    finally:
        context.close()
    assert not [e for e in errors if "Content Security Policy" in e]  # nothing the page does is blocked


def _sign_in(page: Any, name: str = "alice") -> None:
    page.goto("/queue")
    assert page.url.endswith("/login?next=/queue")  # no session: the sign-in page
    page.fill("#name", name)
    page.fill("#password", PASSWORD)
    page.click("#sign-in")
    page.wait_for_url("**/queue")


def _rows(page: Any) -> list[str]:
    return [r.get_attribute("data-entry") for r in page.query_selector_all("#queue-table tbody tr")]


def test_sign_in_filter_open_a_record_see_the_quote_decide_and_see_the_status_change(page: Any,
                                                                                    tmp_path: Path) -> None:
    _sign_in(page)
    assert page.text_content("#signed-in-as") == "Alice Curator (admin)"
    assert page.text_content("#result-count").strip() == "30 records"
    page.select_option("#filter-code", "BEV027")  # the retracted paper with an expression of concern
    page.click("#apply-filters")
    assert _rows(page) == ["10"]
    page.select_option("#filter-code", "")
    page.fill("#filter-source", "pmid:24571676")
    page.click("#apply-filters")
    assert "1" in _rows(page)
    page.click('tr[data-entry="1"] a.record-link')
    page.wait_for_url(re.compile(r".*/entries/1\?source=pmid%3A24571676$"))  # the filter goes along
    assert page.text_content("#status-now") == "awaiting your acceptance"  # BEV010 alone: not "rejected"
    assert page.get_attribute("#status-now", "data-status") == "rejected"  # what the gate says, kept
    assert "BEV010" in page.text_content("#findings")
    assert page.get_attribute("#back-to-queue", "href") == "/queue?source=pmid%3A24571676"
    quote = page.text_content("article.item mark.quote")
    passage = page.text_content("article.item blockquote.passage")
    assert len(quote.split()) >= 12 and quote in passage and len(passage) > len(quote)
    assert "verified against the pinned paper" in page.text_content("article.item header")
    page.screenshot(path=str(tmp_path / "record.png"), full_page=True)

    page.check("#decision-accept")
    page.fill("#rationale", "The highlighted sentence states the association in this cohort.")
    page.click("#submit-decision")
    page.wait_for_selector("#decided-banner")
    assert "Recorded: accept on entry 1 by Alice Curator" in " ".join(page.text_content("#decided-banner").split())
    assert page.text_content("#status-after") == "admitted"
    page.click("#decided-entry")
    page.wait_for_selector("#decisions")
    assert page.text_content("#status-now") == "admitted"
    row = page.text_content("#decisions tbody tr")
    assert "Alice Curator" in row and "orcid:0000-0002-1825-0097" in row and "accept" in row
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row)

    page.goto("/queue?state=accept")
    assert _rows(page) == ["1"]
    page.goto("/queue")
    assert page.text_content("#result-count").strip() == "29 records"


def test_a_quote_not_in_the_paper_shows_the_closest_passage_and_the_words_that_differ(page: Any) -> None:
    _sign_in(page, "bob")
    page.goto("/entries/4")
    item = page.text_content("article.item")
    assert "not in the paper" in item
    page.wait_for_selector("table.differences")  # asked of the server once the page is shown (review.js)
    differences = page.query_selector_all("table.differences tbody tr")
    assert differences
    paper_says, quote_says = (c.text_content() for c in differences[0].query_selector_all("td"))
    assert paper_says != quote_says and ("never" in quote_says or "always" in quote_says)
    assert page.text_content("blockquote.closest").strip()
    page.goto("/entries/6")
    assert "inside the word" in page.text_content("article.item p.problem")


def test_retraction_and_concern_notices_are_shown(page: Any) -> None:
    _sign_in(page, "bob")
    page.goto("/entries/10")
    notices = [n.text_content() for n in page.query_selector_all(".notice")]
    assert len(notices) == 2 and notices[0].startswith("Retracted") and notices[1].startswith("Expression of concern")
    assert {"BEV019", "BEV027"} <= {f.get_attribute("data-code") for f in page.query_selector_all("#findings li")}


def test_a_decision_needs_a_reason_in_the_browser_too(page: Any, browser_server: Server) -> None:
    _sign_in(page, "bob")
    page.goto("/entries/2")
    page.check("#decision-reject")
    page.click("#submit-decision")  # the required textarea stops the form
    assert page.url.endswith("/entries/2") and page.query_selector("#decided-banner") is None
    page.fill("#rationale", "   ")
    page.click("#submit-decision")  # blank is not a reason: the server refuses it
    page.wait_for_selector("#problem")
    assert "needs a reason" in page.text_content("#problem")


def test_sign_out_and_requests_without_a_session_or_csrf_token_are_refused(page: Any, browser: Any,
                                                                           browser_server: Server) -> None:
    _sign_in(page, "bob")
    page.goto("/entries/3")
    request_id = page.get_attribute('input[name="request_id"]', "value")
    refused = page.request.post("/entries/3/decide", form={"decision": "accept", "rationale": "r",
                                                           "request_id": request_id})
    assert refused.status == 403 and "CSRF" in refused.text()  # signed in, but no token
    page.click("#sign-out")
    page.wait_for_url("**/login")
    page.goto("/entries/3")
    assert "/login" in page.url
    stranger = browser.new_context(base_url=browser_server.url)
    try:
        response = stranger.request.post("/entries/3/decide", form={"decision": "accept", "rationale": "r"})
        assert response.status == 403  # no session at all
    finally:
        stranger.close()
    assert "No decision yet" in _text_as(browser, browser_server, "alice", "/entries/3", "#no-decisions")


def _text_as(browser: Any, server: Server, name: str, path: str, selector: str) -> str:
    context = browser.new_context(base_url=server.url)
    try:
        tab = context.new_page()
        _sign_in(tab, name)
        tab.goto(path)
        return str(tab.text_content(selector))
    finally:
        context.close()


def test_the_audit_page_plots_decisions_and_exports_the_predictions(page: Any, tmp_path: Path) -> None:
    _sign_in(page, "alice")
    page.goto("/entries/5")
    page.check("#decision-defer")
    page.fill("#rationale", "Waiting for the full table.")
    page.click("#submit-decision")
    page.wait_for_selector("#decided-banner")
    page.goto("/audit")
    assert page.query_selector_all("svg.chart")  # server-rendered SVG, no script
    codes = {r.query_selector("td").text_content(): r for r in page.query_selector_all("#by-code tbody tr")}
    assert "BEV010" in codes
    with page.expect_download() as download:
        page.click("#export-predictions")
    saved = tmp_path / "predictions.csv"
    download.value.save_as(saved)
    lines = saved.read_text().splitlines()
    assert lines[0] == "case_id,requested_use,record_sha256,profile_sha256,method,predicted_status,subset"
    assert len(lines) == 31  # one row per entry and requested use
