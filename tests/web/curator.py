"""A curator in Chromium (Playwright driving Debian's /usr/bin/chromium; no browser is downloaded) working
through the review queue, counting the page loads it takes. Used by tests/web/test_curator.py and by
``tools/bench_web.py --scenario curator``.

Two ways through the queue:

* ``keyboard``: sign in typing, press ``n`` on the queue for its first entry, then on each entry press
  ``a`` / ``r`` / ``d``, type the reason and press Ctrl+Enter; the server answers with the next entry of
  the filter. No mouse at all.
* ``clicks``: the way without shortcuts: from the queue click the first open entry, choose, type, click
  "Record decision", then click back to the queue (three page loads an entry).

The curator decides by what the page shows: a record only waiting for acceptance is accepted, a quote
that is not in its paper (or cut inside a word) rejected, anything else deferred.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
KEY = {"accept": "a", "reject": "r", "defer": "d"}


@dataclass
class Decision:
    entry: int
    decision: str
    banner: str  # what the next page said was recorded


@dataclass
class Run:
    loads: int = 0
    seconds: float = 0.0
    decisions: list[Decision] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)


def choose(page: Any) -> tuple[str, str]:
    """(decision, reason) for the entry on ``page``, from what it shows."""
    standing = page.get_attribute("#status-now", "data-standing") or page.text_content("#status-now") or ""
    if page.query_selector("article.item.state-not-found, article.item.state-cut-word"):
        return "reject", "The quote is not what the paper says; see the closest passage."
    if "awaiting" in standing:
        return "accept", "The highlighted sentence states the association for this cohort."
    return "defer", "A second reader should weigh the findings listed."


def entry_number(url: str) -> int:
    return int(url.split("/entries/", 1)[1].split("?", 1)[0].split("#", 1)[0])


class Curator:
    """One signed-in tab; ``run.loads`` counts every document the tab loaded (a form sent and the page
    its redirect opens is one load)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.run = Run()
        page.on("load", self._loaded)

    def _loaded(self, _page: Any) -> None:
        self.run.loads += 1
        self.run.urls.append(self.page.url)

    def sign_in(self, name: str, password: str, start: str = "/queue") -> None:
        page = self.page
        page.goto(start)
        page.wait_for_selector("#name")
        page.focus("#name")
        page.keyboard.type(name)
        page.keyboard.press("Tab")
        page.keyboard.type(password)
        with page.expect_navigation():
            page.keyboard.press("Enter")

    def keyboard(self, count: int) -> Run:
        """Decide ``count`` entries with the keyboard only, starting from the queue page."""
        page = self.page
        t0 = time.perf_counter()
        with page.expect_navigation():
            page.keyboard.press("n")  # the queue's first entry in this filter
        for _ in range(count):
            entry = entry_number(page.url)
            decision, reason = choose(page)
            page.keyboard.press(KEY[decision])  # chooses and puts the cursor in the reason
            page.keyboard.type(reason)
            with page.expect_navigation():
                page.keyboard.press("Control+Enter")
            banner = page.text_content("#decided-banner") or ""
            self.run.decisions.append(Decision(entry, decision, " ".join(banner.split())))
        self.run.seconds = time.perf_counter() - t0
        return self.run

    def clicks(self, count: int) -> Run:
        """Decide ``count`` entries by clicking through the queue (the way without shortcuts)."""
        page = self.page
        t0 = time.perf_counter()
        for _ in range(count):
            with page.expect_navigation():
                page.click("#queue-table tbody tr a.record-link")
            entry = entry_number(page.url)
            decision, reason = choose(page)
            page.check(f"#decision-{decision}")
            page.fill("#rationale", reason)
            with page.expect_navigation():
                page.click("#submit-decision")
            banner = page.text_content("#decided-banner") or ""
            self.run.decisions.append(Decision(entry, decision, " ".join(banner.split())))
            with page.expect_navigation():
                page.click(".crumbs a")  # back to the queue
        self.run.seconds = time.perf_counter() - t0
        return self.run
