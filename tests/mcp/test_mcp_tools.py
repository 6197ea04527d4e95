"""The tools over both transports, with the SDK's own client, on the pinned CIViC corpus.

Each test holds for stdio (real pipes to a ``bioevidence mcp`` child) and streamable HTTP (real
loopback sockets, bearer token): listing, a CIViC record admitted, the same record misquoted
rejected with the fix and the loop's feedback line, the fix applied and admitted, the pinned
passage behind a quote read back byte for byte, and malformed arguments refused.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from mcp_harness import SyncClient, altered, civic_record, sha256_of_pinned

TOOLS = {"ask", "answer", "validate_record", "revise_step", "get_passage", "ground"}
NETWORK = {"ground", "pin", "find"}  # go online and write into the store
WRITERS = {"add_to_index", "queue_for_review"}  # write the index or the review queue, offline


def test_tools_have_closed_input_schemas_and_output_schemas(server: SyncClient) -> None:
    listed = {t.name: t for t in server.run(lambda c: c.list_tools()).tools}
    assert set(listed) >= TOOLS
    for tool in listed.values():
        assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.description
    assert listed["validate_record"].output_schema["required"][:2] == ["overall_status", "admitted"]
    assert set(listed) == TOOLS | NETWORK | WRITERS | {"corpus", "review_status"}
    for name in NETWORK:  # the tools that go online say so, in their annotations and their description
        hints = listed[name].annotations
        assert hints.open_world_hint is True and hints.read_only_hint is False and hints.idempotent_hint is False
        assert "network" in hints.title.lower() and listed[name].description.startswith("NETWORK")
    for name in WRITERS:
        hints = listed[name].annotations
        assert hints.open_world_hint is False and hints.read_only_hint is False and not hints.destructive_hint
    for name in set(listed) - NETWORK - WRITERS:
        assert listed[name].annotations.open_world_hint is False and listed[name].annotations.read_only_hint
        assert "NETWORK" not in listed[name].description


def test_resources_are_the_profiles_the_rules_and_the_record_schema(server: SyncClient, repo: Path) -> None:
    listed = {str(r.uri) for r in server.run(lambda c: c.list_resources()).resources}
    assert {"bioevidence://profiles", "bioevidence://rules", "bioevidence://schema/record",
            "bioevidence://server"} <= listed

    def read(uri: str) -> str:
        return server.run(lambda c: c.read_resource(uri)).contents[0].text

    assert json.loads(read("bioevidence://schema/record")) == json.loads(
        (repo / "schemas" / "bioevidence_core.schema.json").read_text())
    rules = json.loads(read("bioevidence://rules"))
    assert {"BEV017", "BEV029", "SCHEMA"} <= {r["code"] for r in rules}
    assert {r["code"]: r["route"] for r in rules}["BEV017"] == "fixable"
    profiles = json.loads(read("bioevidence://profiles"))
    assert profiles["default"] == "literature-claim"
    assert set(profiles["profiles"]) >= {"general", "literature-claim", "dataset-label", "cell-type"}
    assert read("bioevidence://profiles/literature-claim") == (repo / "profiles" / "literature-claim.yaml").read_text()
    about = json.loads(read("bioevidence://server"))
    assert about["grounders"][0] == "source-bytes" and about["grounders"][1].startswith("literature:")


def test_a_civic_record_quoting_its_paper_is_admitted(server: SyncClient, civic: dict[str, Any]) -> None:
    brief = server.ok("validate_record", {"record": civic_record(civic)})
    assert "report" not in brief  # the full report on request only (context cost)
    out = server.ok("validate_record", {"record": civic_record(civic), "details": True})
    assert {k: v for k, v in out.items() if k != "report"} == brief
    assert out["admitted"] is True and out["overall_status"] == "admitted"
    assert out["use_decisions"] == [{"use": "research_summary", "admission_status": "admitted", "reason_codes": []}]
    assert out["verified_evidence_item_ids"] == ["e"]
    assert out["report"]["grounding"][1].startswith("literature:")
    assert out["report"]["record_id"] == out["record_id"] == f"civic:eid{civic['row']['evidence_id']}"


def test_a_record_file_in_the_workspace_is_validated_by_path(server: SyncClient) -> None:
    out = server.ok("validate_record", {"path": "records/civic.json"})
    assert out["admitted"] is True


def test_a_misquote_is_rejected_with_the_fix_and_the_loop_admits_the_fixed_record(
        server: SyncClient, civic: dict[str, Any]) -> None:
    bad = civic_record(civic, altered(civic["sentence"]))
    out = server.ok("validate_record", {"record": bad})
    assert out["admitted"] is False and out["overall_status"] == "rejected"
    [finding] = [f for f in out["findings"] if f["severity"] == "error"]
    assert finding["rule_id"] == "BEV017" and finding["route"] == "fixable"
    assert finding["fix"]["action"] == "requote"
    assert finding["fix"]["field_path"] == "$.evidence_items[0].extracted_text"
    assert civic["sentence"].rstrip(".") in finding["fix"]["value"]

    step = server.ok("revise_step", {"record": bad})
    assert (step["round"], step["outcome"], step["to_person"]) == (1, "feedback", False)
    [line] = step["feedback"]
    assert line.startswith("evidence 1 (body): ") and "-- fix: quote the passage verbatim:" in line
    assert step["validation"]["overall_status"] == "rejected"

    fixed = copy.deepcopy(bad)
    fixed["evidence_items"][0]["extracted_text"] = finding["fix"]["value"]
    again = server.ok("revise_step", {"record": fixed, "previous": [bad]})
    assert (again["round"], again["outcome"], again["feedback"]) == (2, "admitted", [])
    assert again["validation"]["admitted"] is True


def test_get_passage_returns_the_exact_text_and_hash_of_the_pinned_passage(
        server: SyncClient, civic: dict[str, Any], corpus: Path) -> None:
    report = server.ok("validate_record", {"record": civic_record(civic), "details": True})["report"]
    [where] = report["quote_locations"]
    out = server.ok("get_passage", {"work": f"PMID:{civic['pmid']}", "locator": f"#{where['passage']}"})
    assert out["work"] == f"pmid:{civic['pmid']}" and out["named_by"] == "anchor" and out["total"] == 1
    [passage] = out["passages"]
    # the paragraph as lxml reads it from the pinned bytes, and the hash of those bytes computed here
    assert passage["text"] == civic["paragraph"]
    assert passage["sha256"] == civic["sha256"] == sha256_of_pinned(corpus, civic["sha256"])
    assert (passage["id"], passage["part"], passage["pinned_from"]) == (where["passage"], "body", "fulltext")
    assert passage["text"][where["start"]:where["end"]] == civic["sentence"].rstrip(".")
    assert passage["section"] == where.get("section", "")


def test_get_passage_reads_parts_and_labels(server: SyncClient, civic: dict[str, Any]) -> None:
    out = server.ok("get_passage", {"work": f"pmid:{civic['pmid']}", "locator": "abstract"})
    assert out["named_by"] == "part" and out["passages"] and {p["part"] for p in out["passages"]} == {"abstract"}
    one = server.ok("get_passage", {"work": f"pmid:{civic['pmid']}", "locator": "abstract", "limit": 1})
    assert len(one["passages"]) == 1 and one["truncated"] is (out["total"] > 1)
    missing = server.error("get_passage", {"work": f"pmid:{civic['pmid']}", "locator": "Table 99"})
    assert missing["error"] == "input_error" and "Table 99" in missing["message"]
    unknown = server.error("get_passage", {"work": "pmid:1", "locator": "abstract"})
    assert unknown["error"] == "input_error" and "not in the pinned catalogue" in unknown["message"]


def test_malformed_arguments_are_refused_with_one_line(server: SyncClient, civic: dict[str, Any]) -> None:
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("validate_record", {"record": [1, 2]}, "record"),
        ("validate_record", {"record": civic_record(civic), "profile": 7}, "profile"),
        ("get_passage", {"work": "pmid:1"}, "locator"),
        ("get_passage", {"work": "pmid:1", "locator": "abstract", "limit": 0}, "limit"),
        ("get_passage", {"work": "x" * 301, "locator": "abstract"}, "work"),
        ("revise_step", {"record": civic_record(civic), "rounds": 99}, "rounds"),
        ("ask", {"question": ""}, "question"),
    ]
    for name, arguments, field in cases:
        error = server.error(name, arguments)
        assert error["error"] == "usage_error" and field in error["message"], (name, error)
        assert "[1, 2]" not in error["message"]  # names the field, never echoes the value
    unknown = server.error("validate_record", {"record": civic_record(civic), "verbose": True})
    assert unknown["error"] == "usage_error" and "'verbose'" in unknown["message"]
    both = server.error("validate_record", {"record": civic_record(civic), "path": "records/civic.json"})
    assert both["error"] == "input_error"
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(150):
        node["a"] = {}
        node = node["a"]
    for name, arguments in [("validate_record", {"record": deep}), ("revise_step", {"record": deep}),
                            ("ground", {"record": deep})]:
        error = server.error(name, arguments)
        assert error["error"] == "input_error" and "deeper than 100 levels" in error["message"], (name, error)


def test_nothing_a_tool_receives_escapes_the_configured_folders(server: SyncClient, workspace: Path,
                                                                 tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    (workspace / "records" / "link.json").symlink_to(outside)
    try:
        for path in ("../../../../../../etc/passwd.json", str(outside), "records/link.json"):
            error = server.error("validate_record", {"path": path})
            assert error["error"] == "input_error" and error["problem"] == "outside_workspace", error
    finally:
        (workspace / "records" / "link.json").unlink()
    # a profile is chosen by name, never read from a path the caller gives
    for profile in ("/etc/passwd", "../profiles/general.yaml"):
        error = server.error("validate_record", {"record": {}, "profile": profile})
        assert error["error"] == "input_error" and "never reads a profile file by path" in error["message"]
    assert "passwd" not in json.dumps(server.ok("validate_record", {"record": {}}))


def test_the_loop_refuses_rounds_past_its_end(server: SyncClient, civic: dict[str, Any]) -> None:
    good = civic_record(civic)
    done = server.error("revise_step", {"record": good, "previous": [good]})
    assert done["error"] == "input_error" and "already ended at round 1 (admitted" in done["message"]
    bad = civic_record(civic, altered(civic["sentence"]))
    last = server.ok("revise_step", {"record": bad, "previous": [bad, bad], "rounds": 3})
    assert (last["round"], last["outcome"], last["feedback"]) == (3, "exhausted", [])
    assert last["to_person"] is True


def test_a_model_draft_is_built_with_the_pinned_hash_and_what_needs_a_person_is_never_fed_back(
        server: SyncClient, civic: dict[str, Any]) -> None:
    row = civic["row"]
    draft = {
        "profile": "literature-claim", "uses": ["research_summary"],
        "statement": {"subject": {"id": civic["hgnc"], "label": civic["gene"], "type": "gene"},
                      "predicate": "associated_with",
                      "object": {"id": f"DOID:{row['doid']}", "label": row["disease"], "type": "disease"},
                      "scope": ["NCBITaxon:9606"]},
        "sources": [{"id": "paper", "type": "publication", "uri": f"pmid:{civic['pmid']}"}],
        "evidence": [{"source": "paper", "locator": "body", "text": civic["sentence"], "type": "publication_result",
                      "scope": ["NCBITaxon:9606"]}],
    }
    step = server.ok("revise_step", {"record": draft, "details": True})
    [source] = step["record"]["source_artifacts"]
    assert source["sha256"] == civic["sha256"]  # filled from the server's store
    assert step["record"]["evidence_items"][0]["extraction_method"] == "llm_extraction"
    assert step["validation"]["verified_evidence_item_ids"]  # the quote verified ...
    # ... but research_summary admits no LLM-only evidence: policy, for a person, never fed back
    assert (step["outcome"], step["to_person"], step["feedback"]) == ("to_person", True, [])
    assert "policy" in step["routes"]
    broken = server.ok("revise_step", {"record": {**draft, "evidence": [{"source": "nowhere"}]}, "details": True})
    assert broken["outcome"] == "feedback" and broken["record"] is None and broken["error"]
    assert broken["feedback"] == [f"draft: {broken['error']}"]
