"""The ask page: a question → the librarian over a real index of the CIViC papers → the cited answer
with stance, streamed with progress (server-sent events), and its record sent to the review queue.
Over HTTP against the real server, and in Debian's chromium."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_support import (
    CHROMIUM,
    FLAGS,
    PASSWORD,
    Server,
    Visitor,
    build_queue,
    cli,
    hidden,
    need_chromium,
    need_web,
    start_server,
)

from bioevidence import meaning

pytestmark = pytest.mark.heavy(seconds=20)  # started first under xdist (tests/conftest.py)

need_web()

QUESTION = "Do RAS mutations in early age leukaemia associate with second-hand smoking?"


@pytest.fixture(scope="module")
def civic_index(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    from bioevidence.librarian.index import build_index

    index = tmp_path_factory.mktemp("ask-index") / "index"
    build_index([shared_data / "civic_corpus" / "snapshots"], index)
    return index


@pytest.fixture(scope="module")
def ask_server(tmp_path_factory: pytest.TempPathFactory, shared_data: Path, civic_index: Path) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("ask")
    running = start_server(build_queue(folder, shared_data, 5), shared_data, "--index", str(civic_index))
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture()
def people(ask_server: Server) -> Iterator[dict[str, Visitor]]:
    out = {name: Visitor(ask_server.url) for name in ("alice", "bob")}
    for name, v in out.items():
        assert v.login(name).status_code == 303
    try:
        yield out
    finally:
        for v in out.values():
            v.close()


def _events(text: str) -> list[tuple[str, str]]:
    return re.findall(r"event: (\w+)\ndata: ([^\n]*)\n\n", text)


def test_the_stream_reports_progress_then_the_result(people: dict[str, Visitor]) -> None:
    alice = people["alice"]
    response = alice.get(f"/ask/stream?q={QUESTION}")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = _events(response.text)
    kinds = [k for k, _ in events]
    assert kinds[-1] == "result" and kinds.count("progress") >= 4
    progress = [d for k, d in events if k == "progress"]
    assert any(p.startswith("searching") for p in progress) and any("against the pinned papers" in p for p in progress)
    page = alice.get(events[-1][1])
    assert page.status_code == 200 and QUESTION in page.text
    verdict = re.search(r'id="verdict"><b>(Supported|Contradicted|Mixed evidence|Direction not determined|'
                        r'Insufficient evidence): ([^<]*)</b>', page.text)
    assert verdict, page.text
    stances = re.findall(r'data-stance="(\w+)"', page.text)
    assert stances and set(stances) <= {"supports", "contradicts", "neutral", "undetermined"}
    # the verdict's count of supporting papers is the number of papers whose first relevant badge
    # showing a direction is "supports" (the badges below it)
    counted = re.search(r"(\d+) papers? supports?", verdict.group(2))
    assert counted is None or int(counted.group(1)) == _supporting_papers(page.text)
    assert "pmid:24571676" in page.text  # the paper that answers it, with its locator
    assert people["bob"].get(events[-1][1]).status_code == 404  # an answer is its asker's


def _supporting_papers(page: str) -> int:
    """Papers whose first relevant item showing a direction is badged supports, read off the page."""
    first: dict[str, str] = {}
    for stance, relevant, locator in re.findall(r'data-stance="(\w+)" data-relevant="(\w+)">.*?<span class="id">'
                                                r'([^#<]+)#', page, re.S):
        if relevant == "true" and stance in ("supports", "contradicts"):
            first.setdefault(locator.strip(), stance)
    return sum(1 for v in first.values() if v == "supports")


def test_sending_the_record_to_the_queue_makes_one_entry(people: dict[str, Visitor], ask_server: Server) -> None:
    alice = people["alice"]
    events = _events(alice.get(f"/ask/stream?q={QUESTION}").text)
    page = alice.get(events[-1][1])
    form = {"csrf": hidden(page.text, "csrf")}
    path = events[-1][1] + "/queue"
    assert alice.post(path, data={}).status_code == 403  # no CSRF token, no entry
    first = alice.post(path, data=form)
    second = alice.post(path, data=form)
    assert first.status_code == second.status_code == 303
    assert first.headers["location"] == second.headers["location"] == "/entries/6"  # after the 5 CIViC entries
    shown = json.loads(cli("review", "show", "6", "--queue", ask_server.queue, "--format", "json").stdout)
    assert shown["profile"] == "librarian-evidence" and "sent from the ask page by alice" in shown["reason"]
    assert shown["record"]["statement"]["subject"]["label"] == QUESTION
    entry = alice.get("/entries/6").text
    assert entry.count('<mark class="quote">') == len(shown["record"]["evidence_items"])  # every quote in place


def test_an_empty_or_huge_question_is_refused(people: dict[str, Visitor]) -> None:
    assert people["bob"].get("/ask/stream?q=%20").status_code == 400
    assert people["bob"].get("/ask/stream?q=" + "x" * 1001).status_code == 400


def test_the_form_works_without_script(people: dict[str, Visitor]) -> None:
    response = people["bob"].get(f"/ask/run?q={QUESTION}")
    assert response.status_code == 303 and response.headers["location"].startswith("/ask/results/")
    assert QUESTION in people["bob"].get(response.headers["location"]).text


def _synthesis(body: dict[str, Any]) -> str:
    """A model's reply to the synthesis prompt: one sentence citing the first numbered item, one citing
    an item that does not exist (which the page must leave out and name)."""
    prompt = body["messages"][-1]["content"]
    items = json.loads(prompt.split("<evidence>\n", 1)[1].split("\n</evidence>", 1)[0])
    return json.dumps({"sentences": [{"text": f"Item {items[0]['n']} bears on the question.", "cites": [items[0]["n"]]},
                                     {"text": "An invented claim.", "cites": [999]}]})


def test_with_a_model_the_answer_is_its_synthesis_citing_only_verified_sentences(
        tmp_path: Path, shared_data: Path, civic_index: Path) -> None:
    """serve --model: the ask page answers as `bioevidence answer --model` does (answering.answer_question
    with the model), against an OpenAI-compatible server on loopback."""
    from model_server import CHAT, ChatReplayServer

    with ChatReplayServer([_synthesis]) as model:
        running = start_server(build_queue(tmp_path, shared_data, 2), shared_data, "--index", str(civic_index),
                               "--model", "replay", "--base-url", model.base_url, "--model-timeout", "60")
        try:
            alice = Visitor(running.url)
            assert alice.login("alice").status_code == 303
            events = _events(alice.get(f"/ask/stream?q={QUESTION}").text)
            assert ("progress", "the model writes the answer from the verified sentences") in events
            page = alice.get(events[-1][1]).text
            alice.close()
        finally:
            running.stop()
    assert model.hits(CHAT) == 1 and QUESTION in model.bodies[0]["messages"][-1]["content"]
    sentences = re.findall(r'<ul id="answer-sentences">\s*<li>([^<]*) <a href="#item-(\d+)"', page)
    assert len(sentences) == 1 and sentences[0][0].startswith("Item ")
    assert f'id="item-{sentences[0][1]}"' in page
    assert "Written by the model" in page
    assert "Left out of the model's answer: “An invented claim.” (it cites unknown items [999])" in page


def test_a_model_option_without_an_index_is_a_usage_error(tmp_path: Path) -> None:
    result = cli("serve", "--queue", tmp_path / "q.sqlite", "--model", "replay")
    assert result.returncode == 3 and "--model is for the ask page" in result.stderr


VERDICTS = ("Supported", "Contradicted", "Mixed evidence", "Direction not determined", "Insufficient evidence")


def test_asking_in_the_browser(ask_server: Server) -> None:
    need_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            page: Any = browser.new_page(base_url=ask_server.url)
            page.goto("/ask")
            page.fill("#name", "bob")
            page.fill("#password", PASSWORD)
            page.click("#sign-in")
            page.wait_for_url("**/ask")
            page.fill("#question", QUESTION)
            page.click("#ask")
            page.wait_for_selector("#progress li")  # the stream's first line, before the answer
            page.wait_for_url("**/ask/results/**", timeout=120_000)
            verdict = page.text_content("#verdict")
            # the page's verdict is the answer's direction, and no shipped stance model means it
            # cannot say "supported" (docs/stance.md): it says the direction was not determined
            heading = verdict.split(":", 1)[0]
            assert heading in VERDICTS, verdict
            if not meaning.available():
                assert heading in ("Direction not determined", "Insufficient evidence"), verdict
                assert "stance model" in verdict or heading == "Insufficient evidence", verdict
            assert page.query_selector_all("#evidence article.item")
            page.click("#send-to-queue")
            page.wait_for_url(re.compile(r".*/entries/\d+$"))
            assert page.text_content("#record-id").startswith("bioev:ask-")
            assert page.query_selector_all("mark.quote")
        finally:
            browser.close()
