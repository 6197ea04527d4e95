"""Point 4: ``-o`` never destroys what the run reads, and never writes into a pinned snapshot folder.

Each case points the output at a real input of the same run (a copy of the pinned CIViC corpus,
a real OBO release, the HGNC sample, the ``--files-from`` list, a profile, a draft's hashed
source, a symlink to the record) and checks the command exits 3 and every byte is unchanged.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from security.harness import run_cli

REPO = Path(__file__).resolve().parents[2]
RECORD = REPO / "examples" / "records" / "01_admitted_curated_claim.json"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """A private copy of the pinned corpus (its catalogue and snapshots): the one the attacks aim at."""
    folder = tmp_path_factory.mktemp("corpus") / "snapshots"
    shutil.copytree(shared_data / "civic_corpus" / "snapshots", folder)
    return folder


def _digest(folder: Path) -> str:
    sha = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            sha.update(path.name.encode() + hashlib.sha256(path.read_bytes()).digest())
    return sha.hexdigest()


def _refused(run_args: list[str], cwd: Path, *watched: Path) -> str:
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else _digest(p) for p in watched}
    run = run_cli(run_args, cwd=cwd)
    assert run.code == 3 and not run.traceback, (run.code, run.stderr)
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else _digest(p) for p in watched}
    assert after == before
    message = str(json.loads(run.stderr.splitlines()[-1])["message"])
    assert "--output" in message
    return message


def test_validate_output_over_the_catalogue_or_a_pinned_snapshot_is_refused(corpus: Path, tmp_path: Path) -> None:
    pinned = next(p for p in sorted(corpus.iterdir()) if p.name.endswith(".xml.gz"))
    for target in (corpus / "literature.json", pinned, corpus / "new-report.jsonl"):
        message = _refused(["validate", str(RECORD), "--snapshot-dir", str(corpus), "-o", str(target)], tmp_path,
                           corpus)
        assert "snapshot folder" in message or "overwrite" in message
    assert not (corpus / "new-report.jsonl").exists()


@pytest.mark.parametrize("flag, source", [
    ("--ontology", "ontologies/goslim_generic.obo"),
    ("--genes", "hgnc/hgnc_entries.sample.tsv"),
], ids=["ontology", "genes"])
def test_validate_output_over_a_reference_release_is_refused(tmp_path: Path, shared_data: Path, flag: str,
                                                             source: str) -> None:
    release = tmp_path / Path(source).name
    shutil.copyfile(shared_data / source, release)
    message = _refused(["validate", str(RECORD), flag, str(release), "-o", str(release)], tmp_path, release)
    assert "overwrite an input" in message


def test_validate_output_over_the_files_from_list_the_profile_or_a_link_to_the_record(tmp_path: Path) -> None:
    record = tmp_path / "r.json"
    shutil.copyfile(RECORD, record)
    listing = tmp_path / "list.txt"
    listing.write_text("r.json\n", encoding="utf-8")
    _refused(["validate", "--files-from", "list.txt", "-o", "list.txt"], tmp_path, listing)
    profile = tmp_path / "profile.yaml"
    shutil.copyfile(REPO / "profiles" / "literature-claim.yaml", profile)
    _refused(["validate", "r.json", "--profile", str(profile), "-o", str(profile)], tmp_path, profile)
    (tmp_path / "link.json").symlink_to(record)
    _refused(["validate", "r.json", "-o", "link.json"], tmp_path, record)


def test_a_profile_grounders_snapshot_folder_is_protected_too(corpus: Path, tmp_path: Path) -> None:
    """No flags: the snapshot folder comes from the profile's own ``grounders:`` section."""
    profile_text = (REPO / "profiles" / "literature-claim.yaml").read_text(encoding="utf-8")
    profile = tmp_path / "grounded.yaml"
    profile.write_text(profile_text + f"\ngrounders:\n  snapshot_dir: {corpus}\n", encoding="utf-8")
    _refused(["validate", str(RECORD), "--profile", str(profile), "-o", str(corpus / "out.jsonl")], tmp_path,
             corpus)


def test_build_output_over_the_drafts_hashed_source_is_refused(tmp_path: Path) -> None:
    for name in ("curated_note.yaml", "lab_note.txt"):
        shutil.copyfile(REPO / "examples" / "drafts" / name, tmp_path / name)
    source = tmp_path / "lab_note.txt"
    message = _refused(["build", "curated_note.yaml", "-o", "lab_note.txt"], tmp_path, source)
    assert "lab_note.txt" in message
    built = run_cli(["build", "curated_note.yaml", "-o", "record.json"], cwd=tmp_path)
    assert built.code == 0 and json.loads((tmp_path / "record.json").read_text())["source_artifacts"]


def test_ground_output_into_the_snapshot_folder_is_refused(corpus: Path, tmp_path: Path) -> None:
    record = tmp_path / "r.json"
    shutil.copyfile(RECORD, record)
    for flag, target in (("--output", corpus / "grounded.json"), ("--output-dir", corpus)):
        _refused(["ground", str(record), "--snapshot-dir", str(corpus), flag, str(target)], tmp_path, corpus)


@pytest.mark.parametrize("fmt", ["jsonl", "sarif"])
def test_an_output_elsewhere_is_written_whole(tmp_path: Path, corpus: Path, fmt: str) -> None:
    out = tmp_path / "reports" / f"report.{fmt}"
    run = run_cli(["validate", str(RECORD), "--snapshot-dir", str(corpus), "--format", fmt, "-o", str(out)],
                  cwd=tmp_path)
    assert run.code in (0, 1, 2), run.stderr
    parse: Callable[[str], object] = json.loads
    assert parse(out.read_text(encoding="utf-8").splitlines()[0] if fmt == "jsonl" else out.read_text())
    assert not list(out.parent.glob(".*.tmp"))  # the atomic write left no temporary file
