"""One slow asker does not slow everyone (issue 27, item 4): at most one question in flight per account
(another is refused at once: 429 with Retry-After and a sentence saying why), and the queue and record
pages never wait behind the librarian, which runs on its own thread.

The real application over a real queue of CIViC records and a real librarian index, served by uvicorn
on 127.0.0.1 in this process, so the test can hold the librarian's one thread busy (a job that waits
for an event, submitted to the service's own executor): while it is held, 48 questions from one
reviewer get one place and 47 refusals, and pages still answer; once it is released, the questions
that got a place are answered.
"""

from __future__ import annotations

import html
import re
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from web_support import Visitor, build_queue, hidden, need_web

need_web()

QUESTION = "Do RAS mutations in early age leukaemia associate with second-hand smoking?"


@dataclass
class Running:
    url: str
    service: Any
    queue: Path


@pytest.fixture(scope="module")
def app_server(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Iterator[Running]:
    import uvicorn

    from bioevidence.gate.grounders.config import GrounderOptions, build_grounders
    from bioevidence.gate.profiles import load_profile
    from bioevidence.gate.validator import Validator
    from bioevidence.librarian.index import build_index
    from bioevidence.web.app import create_app
    from bioevidence.web.ask_pages import AskService
    from bioevidence.web.state import Settings

    folder = tmp_path_factory.mktemp("ask-limits")
    snapshots = shared_data / "civic_corpus" / "snapshots"
    build_index([snapshots], folder / "index")
    queue = build_queue(folder, shared_data, 5)
    service = AskService(folder / "index")

    def validator_for(name: str | None) -> Any:
        profile = load_profile(name) if name else None
        return Validator(profile, grounders=build_grounders(GrounderOptions(snapshot_dir=snapshots)))

    app = create_app(Settings(queue=queue, secret=b"s" * 32), validator_for, ask=service)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", limit_concurrency=200))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield Running(url, service, queue)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        service.executor.shutdown(wait=False, cancel_futures=True)
        sock.close()


def _signed_in(url: str, name: str) -> Visitor:
    v = Visitor(url)
    assert v.login(name).status_code == 303
    return v


def _ask(url: str, cookies: dict[str, str], question: str) -> Any:
    import httpx

    with httpx.Client(base_url=url, timeout=120) as client:
        return client.get("/ask/stream", params={"q": question},
                          headers={"cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())})


def test_one_question_per_account_and_pages_never_wait_for_the_librarian(app_server: Running) -> None:
    bob, alice = _signed_in(app_server.url, "bob"), _signed_in(app_server.url, "alice")
    release = threading.Event()
    held = app_server.service.executor.submit(release.wait, 120)  # the librarian's one thread, busy
    try:
        with ThreadPoolExecutor(max_workers=49) as pool:
            asked = [pool.submit(_ask, app_server.url, bob.cookies, f"{QUESTION} ({n})") for n in range(48)]
            refused = []
            deadline = time.monotonic() + 60
            while len(refused) < 47 and time.monotonic() < deadline:
                refused = [f for f in asked if f.done()]
                time.sleep(0.05)
            assert len(refused) == 47, f"{len(refused)} of 48 answered while the librarian is held"
            for f in refused:
                response = f.result()
                assert response.status_code == 429 and response.headers["retry-after"] == "5"
                assert "you already have a question under way: one at a time for each account" in response.text
            # bob's one question waits for the librarian; nobody's pages wait with it
            t0 = time.monotonic()
            pages = [pool.submit(alice.get, path) for path in ("/queue", "/entries/1", "/queue?state=all") * 10]
            assert all(p.result(timeout=30).status_code == 200 for p in pages)
            assert time.monotonic() - t0 < 30
            assert bob.get("/queue").status_code == 200  # the asker's own pages too
            no_script = bob.get(f"/ask/run?q={QUESTION}")
            assert no_script.status_code == 429 and "one at a time" in no_script.text  # the form without script
            assert bob.get("/ask/busy").json() == {"in_flight": True}
            other = pool.submit(_ask, app_server.url, alice.cookies, QUESTION)  # another account: a place of its own
            time.sleep(0.5)
            assert not other.done()
            release.set()
            waiting = [f for f in asked if f not in refused]
            answered = [*(f.result(timeout=120) for f in waiting), other.result(timeout=120)]
        assert all(r.status_code == 200 and "event: result" in r.text for r in answered)
        assert bob.get("/ask/busy").json() == {"in_flight": False}
        again = _ask(app_server.url, bob.cookies, QUESTION)  # once answered, bob may ask again
        assert again.status_code == 200 and "event: result" in again.text
    finally:
        release.set()
        held.result(timeout=120)
        bob.close()
        alice.close()


def test_too_many_questions_waiting_from_every_account_are_refused(app_server: Running) -> None:
    service = app_server.service
    people = {name: _signed_in(app_server.url, name) for name in ("alice", "bob", "carol")}
    release = threading.Event()
    held = service.executor.submit(release.wait, 120)
    before, service.waiting = service.waiting, 2
    try:
        with ThreadPoolExecutor(max_workers=3) as pool:
            first = [pool.submit(_ask, app_server.url, people[n].cookies, QUESTION) for n in ("alice", "bob")]
            deadline = time.monotonic() + 30
            while not all(service.in_flight(n) for n in ("alice", "bob")) and time.monotonic() < deadline:
                time.sleep(0.05)
            third = _ask(app_server.url, people["carol"].cookies, QUESTION)
            assert third.status_code == 429 and "the librarian has 2 questions waiting" in third.text
            release.set()
            assert all(f.result(timeout=120).status_code == 200 for f in first)
    finally:
        service.waiting = before
        release.set()
        held.result(timeout=120)
        for v in people.values():
            v.close()


def test_an_answer_sent_to_the_queue_says_what_the_reviewer_is_asked(app_server: Running) -> None:
    alice = _signed_in(app_server.url, "alice")
    try:
        events = re.findall(r"event: (\w+)\ndata: ([^\n]*)\n\n", alice.get(f"/ask/stream?q={QUESTION}").text)
        assert events[-1][0] == "result"
        shown = alice.get(events[-1][1]).text
        verdict = re.search(r'id="verdict"><b>([^<]*)</b>', shown)
        assert verdict
        sent = alice.post(events[-1][1] + "/queue", data={"csrf": hidden(shown, "csrf")})
        entry = alice.get(sent.headers["location"]).text
        status = re.search(r'id="status-now" data-standing="(\w+)"', entry)
        assert status
        asked = re.search(r'<p id="asked" class="asked">(.*?)</p>', entry, re.S)
        assert asked
        text = html.unescape(" ".join(asked.group(1).split()))
        because = html.unescape(re.search(r'<i id="queued-because">(.*?)</i>', entry, re.S).group(1))  # type: ignore[union-attr]
        # the question and the very answer the asker saw, whatever the gate decided
        assert f"to confirm the answer to “{QUESTION}”" in because
        assert f"the answer shown was “{html.unescape(verdict.group(1))}”" in because
        assert status.group(1) == "admitted"  # every quote verifies: the gate admits it, yet it is an open entry...
        assert "no finding needs a person" in text and "It is here because: sent from the ask page by alice" in text
        assert "Accept to confirm it as shown" in text  # ...that says what the reviewer is to decide
        queue = alice.get("/queue").text
        row = re.search(r'<tr data-entry="6" data-standing="\w+">(.*?)</tr>', queue, re.S)
        assert row and ("BEV" in row.group(1) or "sent from the ask page by alice" in row.group(1))
    finally:
        alice.close()
