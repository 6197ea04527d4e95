"""The catalogue reads and writes literature.json exactly as the reference corpus has it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bioevidence.errors import InputError
from bioevidence.sources.catalogue import Catalogue, Work


def test_reference_catalogue_round_trips_byte_for_byte(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "civic_corpus" / "snapshots" / "literature.json"
    catalogue = Catalogue.load(source)
    assert len(catalogue) == 160
    written = catalogue.save(tmp_path / "literature.json")
    assert written.read_bytes() == source.read_bytes()


def test_lookup_by_any_identifier_and_spelling() -> None:
    work = Work(
        key="pmid:15696205",
        resolver="ncbi",
        metadata_sha256="a" * 64,
        fulltext_sha256="b" * 64,
        license="cc by",
        retrieved_at="2026-09-29T01:12:31+00:00",
        urls=("https://example.org",),
        extra={"ids": ["pmcid:PMC545207", "doi:10.1371/journal.pmed.0020017"]},
    )
    catalogue = Catalogue({work.key: work})
    for spelling in ("PMID:015696205", "PMC545207", "https://doi.org/10.1371/JOURNAL.PMED.0020017"):
        assert catalogue.get(spelling) is work
    assert catalogue.get("pmid:1") is None
    assert work.pinned_sha256 == "b" * 64


def test_extra_keys_survive_a_round_trip(tmp_path: Path) -> None:
    work = Work(
        "doi:10.1000/x",
        "crossref",
        "a" * 64,
        None,
        None,
        "2026-01-01T00:00:00+00:00",
        abstract_sha256="c" * 64,
        extra={"retracted": True},
    )
    path = Catalogue({work.key: work}).save(tmp_path / "literature.json")
    again = Catalogue.load(path)["doi:10.1000/x"]
    assert again == work
    assert again.pinned_sha256 == "c" * 64


@pytest.mark.parametrize(
    ("doc", "fragment"),
    [
        ({"version": 2, "works": {}}, "version"),
        ({"version": 1}, "nothing else"),
        ({"version": 1, "works": {"PMID:1": {}}}, "canonical form: 'pmid:1'"),
        ({"version": 1, "works": {"pmid:1": {"resolver": "ncbi"}}}, "lacks"),
        (
            {
                "version": 1,
                "works": {
                    "pmid:1": {
                        "resolver": "ncbi",
                        "metadata_sha256": "xyz",
                        "fulltext_sha256": None,
                        "license": None,
                        "retrieved_at": "t",
                        "urls": [],
                    }
                },
            },
            "SHA-256",
        ),
    ],
    ids=["version", "no-works", "non-canonical-key", "missing-keys", "bad-hash"],
)
def test_malformed_catalogues_are_refused_with_a_reason(doc: object, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        Catalogue.from_bytes(json.dumps(doc).encode())
    assert fragment in info.value.message


def test_missing_catalogue_file_is_empty(tmp_path: Path) -> None:
    assert len(Catalogue.load(tmp_path)) == 0
