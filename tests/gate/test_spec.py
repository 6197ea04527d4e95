"""``GateSpec``: the gate as plain data a worker can load, named by a SHA-256 of everything it reads."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest

from bioevidence.gate.grounders.config import GrounderOptions
from bioevidence.gate.spec import GateSpec


def test_paths_are_made_absolute_and_the_spec_survives_pickling(shared_data: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(shared_data / "hgnc" / "hgnc_entries.sample.tsv", tmp_path / "hgnc.tsv")
    monkeypatch.chdir(tmp_path)
    spec = GateSpec.of("literature-claim", GrounderOptions(genes=(Path("hgnc.tsv"),),
                                                            snapshot_dir=shared_data / "civic_corpus" / "snapshots"))
    monkeypatch.undo()
    assert spec.grounders is not None and spec.grounders.genes == (tmp_path / "hgnc.tsv",)
    copy = pickle.loads(pickle.dumps(spec))
    assert copy.key == spec.key and copy.profile == spec.profile
    assert [g.name.split(":")[0] for g in copy.load().grounders] == ["source-bytes", "literature", "genes"]


def test_the_key_changes_with_the_bytes_of_a_named_file_not_with_a_fresh_description(
        shared_data: Path, tmp_path: Path) -> None:
    genes = tmp_path / "hgnc.tsv"
    shutil.copy(shared_data / "hgnc" / "hgnc_entries.sample.tsv", genes)
    options = GrounderOptions(genes=(genes,))
    first = GateSpec.of("general", options).key
    assert GateSpec.of("general", options).key == first
    assert GateSpec.of("literature-claim", options).key != first  # another profile
    genes.write_bytes(genes.read_bytes() + b"\n")
    assert GateSpec.of("general", options).key != first  # same path, new release bytes


def test_a_profile_grounders_section_is_resolved_where_the_spec_is_made(tmp_path: Path, shared_data: Path) -> None:
    profile = tmp_path / "p.yaml"
    builtin = Path(__file__).resolve().parents[2] / "profiles" / "general.yaml"
    shutil.copy(shared_data / "hgnc" / "hgnc_entries.sample.tsv", tmp_path / "hgnc.tsv")
    profile.write_text(builtin.read_text() + "grounders:\n  genes: [hgnc.tsv]\n")
    spec = GateSpec.of(profile)
    assert spec.grounders is not None and spec.grounders.genes == (tmp_path / "hgnc.tsv",)
