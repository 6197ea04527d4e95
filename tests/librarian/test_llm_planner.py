"""The LLM planner over a real loopback server speaking the OpenAI chat protocol (canned replies)."""

from __future__ import annotations

import json
import logging
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from bioevidence.errors import ConfigurationError, RetrievalError
from bioevidence.librarian.fields import prompt_reference
from bioevidence.librarian.librarian import Librarian
from bioevidence.librarian.llm_planner import EXAMPLE, LLMPlanner, raw_query, resolve_dates
from bioevidence.librarian.query import validate
from bioevidence.loop.llm import LLM, OpenAITransport
from loopback import Reply
from model_server import CHAT, ChatReplayServer

TODAY = date(2026, 3, 15)
QUESTION = "Does BRAF V600E predict response to vemurafenib in melanoma?"


def llm_for(server: ChatReplayServer, **kw: Any) -> LLM:
    transport = OpenAITransport(env={"OPENAI_BASE_URL": server.base_url}, timeout=10.0, max_retries=0)
    return LLM(transport, "replay-model", **kw)


def planner_for(server: ChatReplayServer, **kw: Any) -> LLMPlanner:
    return LLMPlanner(llm_for(server), clock=lambda: TODAY, **kw)


def queries(*qs: str) -> str:
    return json.dumps({"queries": list(qs)})


def test_good_plan_is_deduplicated_tiered_and_validated() -> None:
    reply = queries("BRAF V600E vemurafenib melanoma", 'TITLE_ABS:(BRAF OR "B-Raf") AND TITLE_ABS:melanoma',
                    "  BRAF V600E vemurafenib melanoma ", 'TITLE:"vemurafenib"', " ")
    with ChatReplayServer([reply]) as server:
        plan = planner_for(server, local_only=True).plan(QUESTION)
    assert [(s.query, s.tier) for s in plan.subqueries] == [
        ("BRAF V600E vemurafenib melanoma", "broad"),
        ('TITLE_ABS:(BRAF OR "B-Raf") AND TITLE_ABS:melanoma', "synonym"),
        ('TITLE:"vemurafenib"', "precise"),
    ]
    assert plan.fallback is None and plan.rejected == [] and plan.model_calls == 1
    body = server.bodies[0]
    assert body["temperature"] == 0.3 and body["response_format"]["type"] == "json_schema"
    [turn] = body["messages"]  # one user turn: the Gemma template drops system messages
    prompt = turn["content"]
    assert turn["role"] == "user" and prompt.endswith(f"\n\nQuestion: {QUESTION}")
    assert prompt_reference(local_only=True) in prompt and "AT MOST 7 queries" in prompt
    assert "Today is 2026-03-15" in prompt


def test_prompt_budget_follows_the_knob_and_the_list_is_cut_to_n() -> None:
    with ChatReplayServer([queries(*(f"gene{i} melanoma" for i in range(10)))]) as server:
        plan = planner_for(server, max_subqueries=3).plan(QUESTION)
    assert [s.query for s in plan.subqueries] == ["gene0 melanoma", "gene1 melanoma", "gene2 melanoma"]
    assert "AT MOST 3 queries" in server.bodies[0]["messages"][0]["content"]
    assert prompt_reference() in server.bodies[0]["messages"][0]["content"]  # all 111 fields when not local


def test_malformed_reply_is_retried_once_at_temperature_zero() -> None:
    with ChatReplayServer(['{"queries": ["BRAF melanoma", ', queries("BRAF melanoma")]) as server:
        plan = planner_for(server).plan(QUESTION)
    assert [s.query for s in plan.subqueries] == ["BRAF melanoma"] and plan.fallback is None
    assert [b["temperature"] for b in server.bodies] == [0.3, 0.0] and plan.model_calls == 2


@pytest.mark.parametrize("junk", [
    "I cannot help with that.",
    '{"queries": "BRAF melanoma"}',
    '{"queries": []}',
    '{"subqueries": ["BRAF"]}',
], ids=["prose", "string-not-list", "empty-list", "wrong-key"])
def test_unusable_twice_falls_back_to_the_raw_question(junk: str, caplog: pytest.LogCaptureFixture) -> None:
    with ChatReplayServer([junk]) as server, caplog.at_level(logging.WARNING, "bioevidence.librarian.planner"):
        plan = planner_for(server).plan(QUESTION)
    assert server.hits(CHAT) == 2 and server.bodies[1]["temperature"] == 0.0
    assert [s.query for s in plan.subqueries] == [raw_query(QUESTION)]
    assert validate(plan.subqueries[0].query).valid
    assert plan.fallback is not None and "raw question" in plan.fallback
    assert "searching the raw question" in caplog.text


def test_raw_question_is_made_query_safe() -> None:
    q = 'Is "TP53" (p53) lost AND mutated? NOT in mice: see [1]*'
    safe = raw_query(q)
    assert safe == "Is TP53 p53 lost and mutated not in mice see 1"
    assert validate(safe).valid


def test_invalid_subqueries_are_rejected_with_reasons_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    reply = queries("FOO:bar", '"unbalanced melanoma', "GENE_PROTEIN:BRAF", "BRAF melanoma", "(BRAF OR",
                    "...", "HAS_FT:yes", json.loads(EXAMPLE)["queries"][0])
    with ChatReplayServer([reply]) as server, caplog.at_level(logging.WARNING, "bioevidence.librarian.planner"):
        plan = planner_for(server, local_only=True, max_subqueries=10).plan(QUESTION)
    assert [s.query for s in plan.subqueries] == ["BRAF melanoma"] and plan.fallback is None
    reasons = dict(plan.rejected)
    assert "unknown field FOO" in reasons["FOO:bar"][0]
    assert "unmatched double quote" in reasons['"unbalanced melanoma'][0]
    assert "not available in the local index" in reasons["GENE_PROTEIN:BRAF"][0]
    assert reasons["..."] == ["no search words, only punctuation"]
    assert "must be Y or N" in reasons["HAS_FT:yes"][0]
    assert "copied from the prompt's example" in reasons[json.loads(EXAMPLE)["queries"][0]][0]
    assert "(BRAF OR" in reasons
    assert caplog.text.count("planner subquery rejected") == 7


def test_every_subquery_rejected_searches_them_unchanged(scifact_small: Path) -> None:
    reply = queries("FOO:cancer", "cancer AND")
    with ChatReplayServer([reply, json.dumps({"relevant_ids": []})]) as server:
        lib = Librarian(scifact_small / "index", use_lexicon=False, planner=planner_for(server))
        answer = lib.ask("cancer")
    assert [s.query for s in answer.plan.subqueries] == ["FOO:cancer", "cancer AND"]
    assert answer.plan.fallback == "all subqueries rejected by the validator; searched unchanged"
    assert len(answer.debug["errors"]) == 2 and all("invalid query" in e for e in answer.debug["errors"])
    assert answer.papers == []


@pytest.mark.parametrize(("phrase", "window"), [
    ("in the last 5 years", (2021, 2026)),
    ("over the past decade", (2016, 2026)),
    ("in the last two years", (2024, 2026)),
    ("in the past year", (2025, 2026)),
    ("in the last 6 months", (2025, 2026)),
    ("in the last 2 months", (2026, 2026)),
    ("since 2019", (2019, 2026)),
    ("this year", (2026, 2026)),
], ids=lambda v: str(v))
def test_relative_dates_are_resolved_from_today(phrase: str, window: tuple[int, int]) -> None:
    w = resolve_dates(f"BRAF inhibitors in melanoma {phrase}", TODAY)
    assert w is not None and (w.start, w.end) == window


def test_no_relative_date_no_window() -> None:
    assert resolve_dates("BRAF in melanoma from 2015 to 2018", TODAY) is None
    assert resolve_dates("BRAF V600E in melanoma", TODAY) is None


def test_date_window_is_given_to_the_model_and_added_where_missing() -> None:
    reply = queries("BRAF melanoma", "TITLE:BRAF AND PUB_YEAR:[2022 TO 2026]")
    with ChatReplayServer([reply]) as server:
        plan = planner_for(server).plan("BRAF inhibitor resistance in melanoma in the last 5 years")
    assert [s.query for s in plan.subqueries] == ["(BRAF melanoma) AND PUB_YEAR:[2021 TO 2026]",
                                                  "TITLE:BRAF AND PUB_YEAR:[2022 TO 2026]"]
    assert "PUB_YEAR:[2021 TO 2026]: add it to every query" in server.bodies[0]["messages"][0]["content"]


def test_raw_question_fallback_keeps_the_date_window() -> None:
    with ChatReplayServer(["no json"]) as server:
        plan = planner_for(server).plan("KRAS inhibitors since 2020")
    assert [s.query for s in plan.subqueries] == ["(KRAS inhibitors since 2020) AND PUB_YEAR:[2020 TO 2026]"]


def test_a_server_that_cannot_be_used_raises_and_names_the_fix() -> None:
    missing = Reply(404, b'{"error": {"message": "model not found"}}', "application/json")
    with ChatReplayServer([lambda body: missing]) as server, pytest.raises(RetrievalError, match="--model"):
        planner_for(server).plan(QUESTION)


def test_llm_planner_needs_an_llm(scifact_small: Path) -> None:
    with pytest.raises(ConfigurationError, match="llm=LLM"):
        Librarian(scifact_small / "index", use_lexicon=False, planner="llm")
    with pytest.raises(ConfigurationError, match="max_subqueries"):
        LLMPlanner(None, max_subqueries=0)
