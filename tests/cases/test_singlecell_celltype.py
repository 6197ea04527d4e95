"""singlecell-celltype: the peer's CELLxGENE case on our engine (tools/cases/singlecell_celltype.py).

The targets of issue 26 for this case: no label/ID mismatch admitted, genuine records not blocked more than
0.8.0. 0.8.0's figures are read from its committed results, never written here.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from cases import singlecell_celltype as case
from cases.common import REPO, CaseResult
from cases.singlecell_celltype_grounder import CaseData, derive, tampered_store

pytestmark = pytest.mark.heavy(seconds=20)


@pytest.fixture(scope="module")
def result(sdist: Path) -> CaseResult:
    return case.run(sdist)


@pytest.fixture(scope="module")
def data(sdist: Path) -> CaseData:
    return CaseData(sdist)


def test_every_committed_record_gets_the_peers_decision(result: CaseResult, data: CaseData) -> None:
    attempts = sum(len(e["attempts"]) for split in case.SPLITS for e in data.episodes(split))
    records = result.summary["records"]
    assert records["n"] == attempts > 1000
    assert records["same_decision"] == attempts
    for split, figures in records["by_split"].items():
        assert figures["same_codes"] == figures["same_evidence"] == figures["n"], split
    # the case's ASCT+B grounder is what makes the pilot agree (0.8.0's protocol 1 routed on BEV025)
    assert records["by_split"]["pilot"]["differ_without_crosscheck"] > 0


def test_no_label_id_mismatch_is_admitted(result: CaseResult, data: CaseData) -> None:
    made = sum(data.peer_summary(split)["pooled"]["model"]["error_label_mismatch"]["events"] for split in case.SPLITS)
    summary = result.summary
    assert summary["peer"]["label_id_mismatch"] == {"admitted": 0, "n": made}
    # every committed attempt with a mismatch (first answers included) plus one derived record per cluster
    assert summary["label_id_mismatch"]["n"] >= made + len(data.truth)
    assert summary["label_id_mismatch"]["admitted"] == 0
    assert summary["faults"]["label_mismatch"] == {"admitted": 0, "n": len(data.truth), "caught": len(data.truth)}


def test_genuine_records_are_admitted_and_faults_caught_for_their_reason(result: CaseResult, data: CaseData) -> None:
    clusters = len(data.truth)
    assert result.summary["genuine"] == {"admitted": clusters, "n": clusters}
    for kind in (*case.IDENTIFIER_FAULTS, *case.TRUST):
        assert result.summary["faults"][kind] == {"admitted": 0, "n": clusters, "caught": clusters}, kind
    assert result.summary["controlled_faults"] == {"admitted": 0, "n": clusters * len(case.IDENTIFIER_FAULTS)}
    assert result.summary["trust_boundary"] == {"admitted": 0, "n": clusters * len(case.TRUST)}
    limit = result.summary["limits"]["other_table"]
    assert limit["admitted_with_case_grounder"] == 0 and limit["admitted"] < limit["n"]


def test_gate_views_equal_the_peers_and_the_loop_is_never_looser(result: CaseResult) -> None:
    views = result.summary["views"]
    for split in case.SPLITS:
        assert views[split]["model"]["ours"] == views[split]["model"]["peer"], split  # the scoring is 0.8.0's
        assert views[split]["gate"]["ours"] == views[split]["gate"]["peer"], split
    assert views["test"]["loop"]["ours"] == views["test"]["loop"]["peer"]
    pilot = views["pilot"]["loop"]
    differences = result.summary["loop_differences"]
    differ = len(differences)
    # each: 0.8.0 admitted a revision that left behind the model's own contradicting markers (BEV004)
    for d in differences:
        assert "BEV004" in d["first_codes"] and d["theirs"] == "admitted" and d["ours"] == "to_person", d
    assert pilot["ours"]["errors"] == 0 and pilot["ours"]["answered"] == pilot["peer"]["answered"] - differ
    assert pilot["ours"]["routed"] == pilot["peer"]["routed"] + differ


def test_findings_name_what_was_meant(data: CaseData) -> None:
    """A broken grounder fails here: each derived fault of one cluster is caught with the message a model or a
    curator needs (the term the label belongs to, the approved symbol, the re-hash)."""
    truth = sorted(data.truth.values(), key=lambda t: (t["dataset"], t["cluster"]))[0]
    records = {kind: record for kind, task, record, _ in derive(data) if task == truth["task_id"]}
    gate = data.validator()

    def findings(record: dict[str, Any], validator: Any = gate) -> dict[str, str]:
        return {f.rule_id: f.message for f in validator.validate(record).findings}

    mismatch = findings(records["label_mismatch"])
    assert truth["term"] in mismatch["BEV017"] and truth["label"] in mismatch["BEV017"]
    alias = records["unapproved_symbol"]["evidence_items"][-1]["locator"].rsplit("=", 1)[1]
    approved = data.hgnc.old_names[alias]
    assert approved in findings(records["unapproved_symbol"])["BEV023"]
    assert "BEV024" in findings(records["not_a_cell_type"])
    with tempfile.TemporaryDirectory() as tmp:
        tampered = data.validator(store_dir=tampered_store(data, Path(tmp)))
        assert "BEV014" in findings(records["tampered_bytes"], tampered)
    assert gate.validate(records["genuine"]).use_decisions[0].admission_status == "admitted"


def test_the_committed_table_is_regenerated_byte_for_byte(result: CaseResult) -> None:
    path = REPO / "docs" / "cases" / f"{case.NAME}.md"
    assert path.read_text(encoding="utf-8") == result.table


PEER = """
import json, sys
from pathlib import Path
from bioevidence_validator.engine import RecordValidator
from bioevidence_validator.grounding import SnapshotStore, SourceBytesGrounder
from bioevidence_validator.identifiers import GeneGrounder, Genes, Ontology, OntologyGrounder
from bioevidence_validator.tables import TableGrounder

folder, tampered = Path(sys.argv[1]), Path(sys.argv[2])
manifest = json.loads((folder / "sources" / "manifest.json").read_text())
store = SnapshotStore.from_directory(folder / "sources" / "snapshots")
ontology = Ontology.from_obo(store.get(manifest["cell_ontology"]["sha256"]))
genes = Genes.from_hgnc(store.get(manifest["hgnc"]["sha256"]), manifest["hgnc"]["retrieved"])

def gate(pinned):
    return RecordValidator(profile=folder / "profile.yaml", grounders=[
        SourceBytesGrounder(pinned), TableGrounder(pinned, ["marker_gene"]),
        OntologyGrounder([ontology], roots={"cell_type": ["CL:0000000"]}), GeneGrounder(genes)])

gates = {"pinned": gate(store), "tampered": gate(SnapshotStore.from_directory(tampered))}
for line in sys.stdin:
    job = json.loads(line)
    report = gates[job["store"]].validate(job["record"])
    print(json.dumps({d["use"]: d["admission_status"] for d in report["use_decisions"]}))
"""


def test_the_peer_itself_decides_derived_records_as_we_do(data: CaseData) -> None:
    """0.8.0 run on the derived records of the first cluster of each dataset: the same decision per use."""
    python = os.environ.get("BIOEVIDENCE_REFERENCE_PYTHON") or str(REPO / ".ci" / "cache" / "reference" / "bin" /
                                                                   "python")
    if not Path(python).is_file():
        if os.environ.get("CI"):
            pytest.fail(f"0.8.0's environment is missing ({python})")
        pytest.skip("0.8.0's environment is not here (BIOEVIDENCE_REFERENCE_PYTHON)")
    first: dict[str, str] = {}
    for truth in sorted(data.truth.values(), key=lambda t: (t["dataset"], t["cluster"])):
        first.setdefault(truth["dataset"], truth["task_id"])
    jobs = [(kind, record) for kind, task, record, _ in derive(data) if task in first.values()]
    gate = data.validator()
    with tempfile.TemporaryDirectory() as tmp:
        tampered = data.validator(store_dir=tampered_store(data, Path(tmp)))
        lines = "".join(json.dumps({"store": "tampered" if kind == "tampered_bytes" else "pinned", "record": record})
                        + "\n" for kind, record in jobs)
        done = subprocess.run([python, "-c", PEER, str(data.folder), tmp], input=lines, capture_output=True,
                              text=True, timeout=300, check=True)
        theirs = [json.loads(line) for line in done.stdout.splitlines()]
        ours = [{d.use: d.admission_status for d in (tampered if kind == "tampered_bytes" else gate)
                 .validate(record).use_decisions} for kind, record in jobs]
    assert len(theirs) == len(jobs) >= len(first) * 10
    assert [(kind, t) for (kind, _), t in zip(jobs, theirs, strict=True)] == \
        [(kind, o) for (kind, _), o in zip(jobs, ours, strict=True)]
