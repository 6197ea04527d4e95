"""Where a queued record stands (issue 27, item 1): a record whose only blocking finding is BEV010 (no
person has accepted it yet) is "awaiting your acceptance" on the queue page, on its own page and in
``review list`` (text and JSON), never "rejected" as a misquote is; and every bare rule code carries its
one-line meaning from the rule catalogue, beside it and as a tooltip. Over HTTP against the real server
on a real queue of CIViC records; the expectations come from the reports stored in the queue file."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from web_support import Server, cli, need_web

need_web()


def _blocking(server: Server) -> dict[int, tuple[str, set[str]]]:
    """entry → (the gate's status now, the codes of its blocking findings), read from the queue file."""
    from bioevidence.loop.queue import ReviewQueue

    with ReviewQueue(server.queue) as queue:
        entries = queue.list("all")
    return {e.id: (e.report.overall_status, {f.rule_id for f in e.report.findings
                                             if f.severity in ("error", "review")}) for e in entries}


def _rows(page: str) -> dict[int, tuple[str, str]]:
    """entry → (data-standing, the row's HTML) of the queue table."""
    return {int(n): (standing, body) for n, standing, body in
            re.findall(r'<tr data-entry="(\d+)" data-standing="(\w+)">(.*?)</tr>', page, re.S)}


@pytest.fixture(scope="module")
def truth(server: Server) -> dict[int, tuple[str, set[str]]]:
    return _blocking(server)


def test_the_queue_never_shows_an_entry_only_waiting_for_acceptance_as_rejected(sign_in: Any, server: Server,
                                                                               truth: dict[int, Any]) -> None:
    waiting = {n for n, (status, codes) in truth.items() if status == "rejected" and codes == {"BEV010"}}
    rejected = {n for n, (status, codes) in truth.items() if status == "rejected" and codes != {"BEV010"}}
    assert len(waiting) >= 20 and len(rejected) >= 10  # both kinds are in the CIViC queue
    v = sign_in("bob")
    rows: dict[int, tuple[str, str]] = {}
    pages = [v.get(f"/queue?state=all&page={page}").text for page in (1, 2)]
    for page in pages:
        rows.update(_rows(page))
    assert set(rows) == set(truth)
    assert '<a href="/queue?state=all&amp;page=2" rel="next">' in pages[0]  # the pager keeps the filter
    assert '<a href="/queue?state=all" rel="prev">' in pages[1] and 'rel="next"' not in pages[1]
    for n in waiting:
        standing, row = rows[n]
        assert standing == "awaiting_acceptance" and "awaiting your acceptance" in row, n
        assert "rejected" not in row, (n, row)  # neither the word nor the red status-rejected class
    for n in rejected:
        assert rows[n][0] == "rejected" and "status-rejected" in rows[n][1], n


def test_its_own_page_says_awaiting_your_acceptance_and_what_the_reviewer_is_asked(
        sign_in: Any, server: Server, truth: dict[int, Any]) -> None:
    waiting = sorted(n for n, (status, codes) in truth.items() if status == "rejected" and codes == {"BEV010"})
    v = sign_in("bob")
    for n in waiting:
        page = v.get(f"/entries/{n}").text
        assert 'id="status-now" data-standing="awaiting_acceptance" data-status="rejected"' in page, n
        shown = page.replace('data-status="rejected"', "")
        assert "status-rejected" not in shown and ">rejected<" not in shown and "because <i id=\"queued-because\">" \
            "awaiting acceptance: BEV010</i>" in shown, n
        asked = re.search(r'<p id="asked" class="asked">(.*?)</p>', page, re.S)
        assert asked and "Only your acceptance is missing (BEV010)" in asked.group(1)
    other = next(n for n, (status, codes) in truth.items() if status == "rejected" and "BEV017" in codes)
    page = v.get(f"/entries/{other}").text
    assert 'id="status-now" data-standing="rejected" data-status="rejected"' in page  # a misquote stays rejected
    assert "The gate rejects this record because of" in page


def test_review_list_says_it_in_text_and_json(server: Server, truth: dict[int, Any]) -> None:
    from bioevidence.gate.rules import rule

    waiting = {n for n, (status, codes) in truth.items() if status == "rejected" and codes == {"BEV010"}}
    listed = json.loads(cli("review", "list", "--status", "all", "--queue", server.queue, "--format", "json").stdout)
    for entry in listed:
        assert (entry["standing"] == "awaiting_acceptance") == (entry["id"] in waiting), entry["id"]
        assert entry["reason_meanings"] == {c: rule(c).message for c in entry["reason_codes"]}
        assert entry["overall_status"] == truth[entry["id"]][0]  # the gate's own word is kept alongside
    text = cli("review", "list", "--status", "all", "--queue", server.queue).stdout
    table, legend = text.split("\n\n", 1)
    lines = {int(line.split()[0]): line for line in table.splitlines()[1:]}
    for n in waiting:
        assert "awaiting your acceptance" in lines[n] and "rejected" not in lines[n], lines[n]
    assert f"BEV010: {rule('BEV010').message}" in legend.splitlines()
    assert f"BEV017: {rule('BEV017').message}" in legend.splitlines()


def test_every_rule_code_carries_its_meaning_beside_it_and_as_a_tooltip(sign_in: Any, server: Server) -> None:
    from bioevidence.gate.rules import rule

    v = sign_in("bob")
    for path in ("/queue?state=all", "/entries/2", "/entries/10"):
        page = v.get(path).text
        codes = re.findall(r'<span class="code" title="([^"]*)">([A-Z_0-9]+)</span>', page)
        assert codes, path
        for title, code in codes:
            assert html.unescape(title) == rule(code).message, (path, code)
        beside = re.findall(r'<span class="code" title="[^"]*">([A-Z_0-9]+)</span> '
                            r'<span class="meaning">([^<]*)</span>', page)
        assert {c for c, _ in beside} >= {"BEV010"} and all(html.unescape(m) == rule(c).message for c, m in beside)
    assert not re.search(r'<span class="code">', v.get("/queue?state=all").text)  # no bare code left


def test_standing_is_a_pure_function_of_the_status_and_the_blocking_codes() -> None:
    from bioevidence.loop.standing import AWAITING, reason_text, standing

    assert standing("rejected", ["BEV010"]) == AWAITING
    assert standing("rejected", ["BEV010", "BEV017"]) == "rejected"  # a misquote needing acceptance too
    assert standing("rejected", ["BEV011"]) == "rejected" and standing("review_required", ["BEV010"]) != AWAITING
    assert standing("admitted", []) == "admitted"
    assert reason_text("rejected: BEV010", "rejected", ["BEV010"]) == "awaiting acceptance: BEV010"
    assert reason_text("rejected", "rejected", ["BEV010", "BEV019"]) == "rejected"
    assert reason_text("sent from the ask page", "rejected", ["BEV010"]) == "sent from the ask page"
