"""Reference cross-check (BEV025) and the source-bytes grounder.

The cross-check's reference table is derived here from the real CIViC evidence items
(civic_corpus/civic-evidence.jsonl.gz: molecular profile, direction, disease); the marker table is
invented, checked against the real Cell Ontology for related terms. The source-bytes grounder runs
on the real CIViC snapshot folder, and against bioai-evidence-validator 0.8.0 when
``BIOEVIDENCE_REFERENCE_PYTHON`` names its interpreter.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bioevidence.errors import ConfigurationError
from bioevidence.gate.grounders.crosscheck import ReferenceGrounder, load_assertions
from bioevidence.gate.grounders.snapshots import SourceBytesGrounder
from bioevidence.sources.store import SnapshotStore


def claim(subject: dict[str, str], predicate: str, obj: dict[str, str],
          locators: tuple[str, ...] = ()) -> dict[str, Any]:
    items = [{"id": f"e{i}", "source_artifact_id": "s", "locator": loc, "extracted_text": "x"}
             for i, loc in enumerate(locators)]
    return {"requested_uses": ["u"], "evidence_items": items, "statement": {
        "subject": subject, "predicate": predicate, "object": obj,
        "evidence_lines": [{"direction": "supports", "evidence_item_ids": [i["id"] for i in items]}]}}


@pytest.fixture(scope="module")
def civic_pairs(shared_data: Path) -> dict[tuple[str, str], set[str]]:
    """(molecular profile, disease) → set of CIViC directions, read from the real evidence items."""
    out: dict[tuple[str, str], set[str]] = {}
    with gzip.open(shared_data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt") as handle:
        for line in handle:
            row = json.loads(line)
            if not row["molecular_profile"] or not row["disease"]:
                continue  # an assertion needs both ends
            out.setdefault((row["molecular_profile"], row["disease"]), set()).add(row["evidence_direction"])
    return out


@pytest.fixture(scope="module")
def civic_reference(civic_pairs: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("reference") / "civic_directions.tsv"
    lines = ["subject\tpredicate\tobject"]
    for (profile, disease), directions in sorted(civic_pairs.items()):
        for direction in sorted(directions):
            predicate = "associated_with" if direction == "Supports" else "not_associated_with"
            lines.append(f"{profile}\t{predicate}\t{disease}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_reference_asserting_the_opposite_sends_the_claim_to_review(civic_pairs: dict,
                                                                         civic_reference: Path) -> None:
    grounder = ReferenceGrounder.from_file(civic_reference)
    against = [k for k, v in civic_pairs.items() if v == {"Does Not Support"}]
    agreeing = [k for k, v in civic_pairs.items() if v == {"Supports"}]
    assert len(against) >= 10 and len(agreeing) >= 10
    for profile, disease in against:
        result = grounder.ground(claim({"id": "civic:mp", "label": profile}, "associated_with",
                                       {"id": "doid:x", "label": disease}))
        (f,) = result.findings
        assert f.rule_id == "BEV025" and f.severity == "review" and "not_associated_with" in f.message
        assert result.verified == frozenset()  # the reference never verifies anything
    for profile, disease in agreeing:
        result = grounder.ground(claim({"id": "civic:mp", "label": profile}, "associated_with",
                                       {"id": "doid:x", "label": disease}))
        assert result.findings == [] and result.verified == frozenset()


def test_reference_silence_is_not_a_conflict(civic_reference: Path) -> None:
    grounder = ReferenceGrounder.from_file(civic_reference)
    result = grounder.ground(claim({"id": "HGNC:1097", "label": "BRAF"}, "associated_with",
                                   {"id": "MONDO:0005105", "label": "a disease CIViC never names"}))
    assert result.findings == [] and result.verified == frozenset()


MARKERS = ("subject,predicate,object,object_label\n"
           "CD19,marker_of,CL:0000236,B cell\nCD3E,marker_of,CL:0000084,T cell\n"
           "MS4A1,marker_of,CL:0000236,B cell\nMS4A1,marker_of,CL:0000084,T cell\n")


def test_a_supporting_marker_of_only_conflicting_cell_types_goes_to_review(cell_ontology: Any) -> None:
    grounder = ReferenceGrounder(load_assertions(MARKERS.encode()), label="markers", relation="marker_of",
                                 ontologies=[cell_ontology])
    sample = {"id": "s:1", "label": "sample 1"}
    t_cell = grounder.ground(claim(sample, "has_label", {"id": "CL:0000084", "label": "T cell"},
                                   ("cluster=3;gene=CD19",)))
    (f,) = t_cell.findings
    assert f.rule_id == "BEV025" and "CL:0000236 (B cell)" in f.message
    assert f.field_path == "$.evidence_items[0].locator"
    # a B cell marker supports a descendant of B cell (naive B cell), per the ontology's is_a
    assert "CL:0000236" in cell_ontology.ancestors("CL:0000788")
    naive_b = grounder.ground(claim(sample, "has_label", {"id": "CL:0000788", "label": "naive B cell"},
                                    ("gene=CD19",)))
    assert naive_b.findings == []
    # a marker the reference gives to both types does not conflict with either
    assert grounder.ground(claim(sample, "has_label", {"id": "CL:0000084", "label": "T cell"},
                                 ("gene=MS4A1",))).findings == []
    # a marker the reference does not know is silence, not support and not conflict
    assert grounder.ground(claim(sample, "has_label", {"id": "CL:0000084", "label": "T cell"},
                                 ("gene=GAPDH",))).findings == []


def test_a_malformed_reference_table_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="lacks column"):
        load_assertions(b"gene\tcell\nCD19\tB cell\n")


# -- source bytes ---------------------------------------------------------------------------------

def bytes_record(*shas: str) -> dict[str, Any]:
    return {"requested_uses": ["u"], "source_artifacts": [
        {"id": f"s{i}", "source_type": "publication", "sha256": sha} for i, sha in enumerate(shas)]}


def test_source_bytes_on_the_civic_snapshots(corpus_dir: Path, tmp_path: Path) -> None:
    names = sorted(p.name for p in corpus_dir.iterdir() if p.name.endswith(".gz"))
    present = [n.split(".", 1)[0] for n in names[:3]]
    grounder = SourceBytesGrounder.from_directory(corpus_dir)
    assert grounder.ground(bytes_record(*present)).findings == []
    (f,) = grounder.ground(bytes_record(present[0], "f" * 64)).findings
    assert f.rule_id == "BEV015" and f.field_path == "$.source_artifacts[1].sha256"
    # tamper with one file's bytes (its name stays): BEV014
    shutil.copy(corpus_dir / names[0], tmp_path / names[0])
    data = gzip.decompress((tmp_path / names[0]).read_bytes())
    (tmp_path / names[0]).write_bytes(gzip.compress(data[:-1] + b" "))
    (g,) = SourceBytesGrounder(SnapshotStore(tmp_path)).ground(bytes_record(present[0])).findings
    assert g.rule_id == "BEV014"


def test_listed_store_sees_files_pinned_after_the_first_lookup(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    assert store.find("a" * 64) is None
    sha = SnapshotStore(tmp_path).put(b"pinned later")
    assert store.read(sha) == b"pinned later"


REFERENCE_SIDE = r"""
import json, sys
from pathlib import Path
from bioevidence_validator.grounding import SnapshotStore, SourceBytesGrounder
g = SourceBytesGrounder(SnapshotStore.from_directory(Path(sys.argv[1])))
for line in sys.stdin:
    print(json.dumps([[f.rule_id, f.field_path] for f in g.check(json.loads(line))]))
"""


def test_source_bytes_parity_with_the_reference(corpus_dir: Path, tmp_path: Path) -> None:
    python = os.environ.get("BIOEVIDENCE_REFERENCE_PYTHON")
    if not python or not Path(python).exists():
        if os.environ.get("CI"):
            pytest.fail("set BIOEVIDENCE_REFERENCE_PYTHON to a Python with bioai-evidence-validator==0.8.0")
        pytest.skip("set BIOEVIDENCE_REFERENCE_PYTHON to a Python with bioai-evidence-validator==0.8.0")
    names = sorted(p.name for p in corpus_dir.iterdir() if p.name.endswith(".gz"))[:6]
    for name in names:
        shutil.copy(corpus_dir / name, tmp_path / name)
    tampered = names[1]
    (tmp_path / tampered).write_bytes(gzip.compress(gzip.decompress((tmp_path / tampered).read_bytes()) + b"x"))
    shas = [n.split(".", 1)[0] for n in names]
    records = [bytes_record(*shas), bytes_record(shas[0], "e" * 64), bytes_record(shas[1]), bytes_record("d" * 64)]
    records += [bytes_record(s) for s in shas]
    lines = "".join(json.dumps(r) + "\n" for r in records)
    out = subprocess.run([python, "-c", REFERENCE_SIDE, str(tmp_path)], input=lines, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    ours = SourceBytesGrounder.from_directory(tmp_path)
    for record, theirs in zip(records, out, strict=True):
        got = [[f.rule_id, f.field_path.removesuffix(".sha256")] for f in ours.ground(record).findings]
        assert got == json.loads(theirs), record
