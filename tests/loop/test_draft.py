"""Drafts: strict keys, deterministic ids, file hashing inside the draft's folder, pipeline-owned keys,
the JSON Schema, and ``bioevidence build`` / ``draft-schema`` on the example drafts."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.errors import InputError
from bioevidence.gate.grounders.cues import CueChecker
from bioevidence.gate.validator import Validator
from bioevidence.loop.draft import DraftBuilder, build_record, draft_json_schema, is_draft, load_draft

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "drafts"


def _draft() -> dict[str, Any]:
    return {"profile": "literature-claim", "uses": ["research_summary"],
            "statement": {"subject": {"id": "HGNC:6407", "label": "KRAS", "type": "gene"},
                          "predicate": "associated_with",
                          "object": {"id": "MONDO:0005061", "label": "lung adenocarcinoma", "type": "disease"},
                          "scope": ["NCBITaxon:9606"]},
            "sources": [{"id": "paper", "type": "publication", "title": "A paper", "uri": "pmid:1",
                         "version": "v1", "retrieved_at": "2026-09-21T00:00:00Z", "sha256": "AB" * 32}],
            "evidence": [{"source": "paper", "locator": "results#p3", "text": "KRAS mutant tumours did not respond.",
                          "type": "publication_result", "scope": ["NCBITaxon:9606"], "method": "manual_curation"},
                         {"source": "paper", "locator": "results#p4", "text": "Two tumours responded.",
                          "type": "publication_result", "scope": ["NCBITaxon:9606"], "method": "manual_curation",
                          "direction": "contradicts"}]}


def test_build_derives_ids_groups_lines_by_direction_and_is_deterministic() -> None:
    rec = build_record(_draft())
    rid = rec["record_id"]
    assert rid.startswith("bioev:draft-") and len(rid) == len("bioev:draft-") + 16
    assert build_record(copy.deepcopy(_draft())) == rec
    assert rec["statement"]["evidence_lines"] == [
        {"id": f"{rid}/line/supports", "direction": "supports", "evidence_item_ids": [f"{rid}/evidence/1"]},
        {"id": f"{rid}/line/contradicts", "direction": "contradicts", "evidence_item_ids": [f"{rid}/evidence/2"]}]
    assert rec["source_artifacts"][0]["id"] == f"{rid}/source/paper"
    assert rec["source_artifacts"][0]["sha256"] == "ab" * 32  # hashes are lower-cased
    # no literature grounder: its quote is unchecked (BEV029) unless grounding is explicitly off; the
    # supporting quote "KRAS mutant tumours did not respond." is a negated finding offered for a positive
    # claim, which literature-claim's default negation cue sends to a person (BEV022)
    assert Validator("literature-claim").validate(rec).reason_codes() == ["BEV004", "BEV022", "BEV029"]
    no_cues = Validator("literature-claim", checks=[CueChecker(enabled=False)])
    assert no_cues.validate(rec).reason_codes() == ["BEV004", "BEV029"]
    assert Validator("literature-claim", grounding=False).validate(rec).reason_codes() == ["BEV004", "BEV022"]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.update(extra=1), "unknown field(s) extra"),
    (lambda d: d.pop("uses"), "draft is missing uses"),
    (lambda d: d["statement"]["subject"].update(type=" "), "subject.type must be a non-blank string"),
    (lambda d: d["evidence"][0].update(direction="against"), "choose one of: supports, contradicts, neutral"),
    (lambda d: d["evidence"][0].update(source="nope"), "'nope' is not a source id"),
    (lambda d: d["evidence"][0].pop("method"), "method is missing"),
    (lambda d: d["sources"].append(dict(d["sources"][0])), "repeats 'paper'"),
    (lambda d: d["sources"][0].pop("sha256"), "needs sha256 or file"),
    (lambda d: d["sources"][0].update(version=3), "quote numbers"),
    (lambda d: d["statement"].update(scope=["a", "a"]), "repeats a value"),
], ids=["unknown", "missing", "blank", "choice", "dangling-source", "no-method", "repeated-source", "no-hash",
        "number", "repeated-scope"])
def test_malformed_drafts_are_refused_naming_the_field(edit: Any, message: str) -> None:
    draft = _draft()
    edit(draft)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_record(draft)


def test_the_pipeline_sets_methods_reviews_and_the_author_of_model_drafts() -> None:
    draft = _draft()
    for ev in draft["evidence"]:
        del ev["method"]
    review = {"reviewer": {"id": "orcid:1", "type": "human"}, "decision": "accept", "uses": ["research_summary"],
              "rationale": "ok", "decided_at": "2026-11-01T00:00:00Z"}
    builder = DraftBuilder(model=True, method="llm_extraction", reviews=(review,),
                           agent={"id": "model:gemma-3-270m", "type": "software"})
    rec = builder(draft)
    assert {i["extraction_method"] for i in rec["evidence_items"]} == {"llm_extraction"}
    assert rec["statement"]["created_by"] == {"id": "model:gemma-3-270m", "agent_type": "software"}
    assert rec["adjudications"][0]["reviewer"] == {"id": "orcid:1", "agent_type": "human"}
    for key, where in (("method", draft["evidence"][0]), ("reviews", draft), ("file", draft["sources"][0])):
        bad = copy.deepcopy(draft)
        target = bad["evidence"][0] if where is draft["evidence"][0] else bad if where is draft else bad["sources"][0]
        target[key] = "manual_curation" if key != "reviews" else []
        with pytest.raises(InputError, match=f"states {key}, which the pipeline sets"):
            builder(bad)


def test_file_hashes_stay_inside_the_drafts_folder(tmp_path: Path) -> None:
    (tmp_path / "paper.txt").write_bytes(b"bytes of the paper")
    (tmp_path.parent / "outside.txt").write_bytes(b"secret")
    draft = _draft()
    draft["sources"][0]["file"] = "paper.txt"
    rec = build_record(draft, base_dir=tmp_path)
    observed = hashlib.sha256(b"bytes of the paper").hexdigest()
    assert rec["source_artifacts"][0]["sha256"] == "ab" * 32
    assert rec["source_artifacts"][0]["observed_sha256"] == observed  # stated and file differ: BEV002 later
    del draft["sources"][0]["sha256"]
    assert build_record(draft, base_dir=tmp_path)["source_artifacts"][0]["sha256"] == observed
    draft["sources"][0]["file"] = "../outside.txt"
    with pytest.raises(InputError, match="escapes"):
        build_record(draft, base_dir=tmp_path)
    draft["sources"][0]["file"] = "paper.txt"
    with pytest.raises(InputError, match="only a draft file"):
        build_record(draft)


def test_pinned_publications_are_filled_from_the_snapshot_catalogue(shared_data: Path) -> None:
    snapshots = shared_data / "civic_corpus" / "snapshots"
    model = load_draft(EXAMPLES / "model_answer.json")
    rec = build_record(model, model=True, method="llm_extraction", snapshot_dir=snapshots)
    source = rec["source_artifacts"][0]
    catalogue = json.loads((snapshots / "literature.json").read_text())["works"]["pmid:15696205"]
    assert source["sha256"] == catalogue["fulltext_sha256"]
    assert source["title"].startswith("KRAS mutations and primary resistance")
    invented = copy.deepcopy(model)
    invented["sources"][0]["uri"] = "pmid:99999999"
    with pytest.raises(InputError, match="not in the pinned snapshot catalogue"):
        build_record(invented, model=True, method="llm_extraction", snapshot_dir=snapshots)


def test_is_draft_tells_drafts_from_records() -> None:
    assert is_draft(_draft()) and not is_draft(build_record(_draft())) and not is_draft([])


@pytest.mark.parametrize("profile", ["general", "literature-claim", "dataset-label"])
def test_the_schema_is_closed_with_enums_and_accepts_what_the_builder_builds(profile: str) -> None:
    full = draft_json_schema(profile, model=False)
    model = draft_json_schema(profile)
    jsonschema.Draft202012Validator.check_schema(full)
    assert full["additionalProperties"] is False and "reviews" in full["properties"]
    assert "reviews" not in model["properties"] and "id" not in model["properties"]
    evidence = model["properties"]["evidence"]["items"]
    assert "method" not in evidence["properties"] and evidence["additionalProperties"] is False
    if profile == "literature-claim":
        assert model["properties"]["statement"]["properties"]["predicate"]["enum"] == [
            "associated_with", "contributes_to"]
        assert evidence["properties"]["type"]["enum"] == ["publication_result"]
        draft = _draft()
        jsonschema.validate(draft, full)
        for ev in draft["evidence"]:
            del ev["method"]
        jsonschema.validate(draft, model)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**draft, "reviews": []}, model)


# -- the command line --------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "status"), [("curated_note", "admitted"), ("reviewed_label", "admitted")])
def test_build_the_examples_and_validate_them(tmp_path: Path, name: str, status: str) -> None:
    out = tmp_path / "record.json"
    result = CliRunner().invoke(cli, ["build", str(EXAMPLES / f"{name}.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    checked = CliRunner().invoke(cli, ["validate", str(out)])
    assert json.loads(checked.stdout)["overall_status"] == status


def test_build_the_model_answer_against_the_pinned_corpus(tmp_path: Path, shared_data: Path) -> None:
    snapshots = str(shared_data / "civic_corpus" / "snapshots")
    out = tmp_path / "record.json"
    built = CliRunner().invoke(cli, ["build", str(EXAMPLES / "model_answer.json"), "--model", "--method",
                                     "llm_extraction", "--snapshot-dir", snapshots, "-o", str(out)])
    assert built.exit_code == 0, built.stderr
    checked = CliRunner().invoke(cli, ["validate", str(out), "--profile", str(EXAMPLES / "verified-llm.yaml"),
                                       "--snapshot-dir", snapshots])
    assert checked.exit_code == 0 and json.loads(checked.stdout)["verified_evidence_item_ids"]


def test_build_errors_exit_3_and_never_overwrite_the_draft(tmp_path: Path) -> None:
    draft = tmp_path / "d.yaml"
    draft.write_text("profile: general\nprofile: general\n")
    result = CliRunner().invoke(cli, ["build", str(draft)])
    assert result.exit_code == 3 and "duplicate" in json.loads(result.stderr)["message"]
    draft.write_text(json.dumps(_draft()))
    result = CliRunner().invoke(cli, ["build", str(draft), "-o", str(draft)])
    assert result.exit_code == 3 and "would overwrite" in result.stderr


def test_draft_schema_command_prints_the_model_schema_by_default() -> None:
    result = CliRunner().invoke(cli, ["draft-schema", "--profile", "dataset-label"])
    schema = json.loads(result.stdout)
    assert result.exit_code == 0 and schema["properties"]["profile"] == {"const": "dataset-label"}
    assert "reviews" not in schema["properties"]
    full = json.loads(CliRunner().invoke(cli, ["draft-schema", "--profile", "dataset-label", "--full"]).stdout)
    assert "reviews" in full["properties"]
