"""Context cost (issue 27 item 10): what an agent's model reads from the server stays small.

Measured before the trim (commit 8364d43, `tools/bench_mcp.py --context`): ``tools/list`` 27.8 KB for
six tools, an ``answer`` result's text 33.8 KB and an ``ask`` result's 37.5 KB for the first CIViC
statement. The bounds below hold the trimmed figures (docs/mcp.md "Context cost") with some room;
``details: true`` still returns everything.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_harness import SyncClient


def _bytes(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def test_tools_list_is_small_and_every_description_short(librarian: SyncClient) -> None:
    listed = librarian.run(lambda c: c.list_tools()).tools
    whole = _bytes([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed])
    given = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in listed]
    assert len(listed) == 12 and whole < 30_000, whole  # 12 tools in less than the 6 took (27.8 KB)
    assert _bytes(given) < 11_000, _bytes(given)
    for tool in listed:
        assert len(tool.description or "") < 400, tool.name
        assert "title" not in tool.input_schema["properties"].get("question", {})  # pydantic's generated titles
        assert "description" not in json.dumps(tool.output_schema)  # a client checks values against it


def test_answer_and_ask_return_ids_text_locators_and_stance_unless_details_are_asked_for(
        librarian: SyncClient, civic: dict[str, Any]) -> None:
    question = civic["row"]["evidence_statement"]
    for tool, bound in (("answer", 10_000), ("ask", 9_000)):
        brief = librarian.call(tool, {"question": question})
        full = librarian.call(tool, {"question": question, "details": True})
        text, more = brief.content[0].text, full.content[0].text  # type: ignore[union-attr]
        assert len(text.encode()) < bound and 3 * len(text) < len(more), (tool, len(text), len(more))
        assert json.loads(text) == brief.structured_content and "\n" not in text  # compact, the same value
        items = brief.structured_content["items"]  # type: ignore[index]
        assert items and all({"text", "locator", "sha256", "stance", "stance_by"} <= set(i) for i in items)
