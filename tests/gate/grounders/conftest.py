"""Session fixtures: real releases and the CIViC corpus, indexed once per session into a tmp cache.

``papers`` reads quotes from the pinned JATS bytes with plain lxml (``<p>`` elements of the body
that hold text only), independently of the project's own JATS parser.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lxml import etree


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # tools/mutation.py shares one cache between the runs of its mutants when the mutated code does not
    # build what the cache holds (quote matching, not the JATS reader); every other run starts empty
    shared = os.environ.get("BIOEVIDENCE_TEST_CACHE", "")
    if shared:
        Path(shared).mkdir(parents=True, exist_ok=True)
        return Path(shared)
    return tmp_path_factory.mktemp("bioevidence-cache")


@pytest.fixture(scope="session")
def corpus_dir(shared_data: Path) -> Path:
    return shared_data / "civic_corpus" / "snapshots"


#: four pinned CIViC papers whose every prose passage the quote decision tests walk
FOUR_PMIDS = ("15696205", "22292935", "24586605", "18371219")


@pytest.fixture(scope="session")
def read_papers(corpus_dir: Path, cache_dir: Path) -> Callable[[tuple[str, ...]], list[Any]]:
    """``read_papers(pmids)``: the literature grounder's :class:`PaperText` of each pinned CIViC paper."""
    from bioevidence.gate.grounders.literature import LiteratureGrounder

    grounder = LiteratureGrounder.from_directory(corpus_dir, cache_root=cache_dir)

    def read(pmids: tuple[str, ...]) -> list[Any]:
        return [grounder.paper(work, grounder.metadata(work))
                for work in (grounder.catalogue.get(f"pmid:{pmid}") for pmid in pmids)]

    return read


@pytest.fixture(scope="session")
def four_papers(read_papers: Callable[[tuple[str, ...]], list[Any]]) -> list[Any]:
    """The grounder's :class:`PaperText` of each of ``FOUR_PMIDS``."""
    return read_papers(FOUR_PMIDS)


@pytest.fixture(scope="session")
def cell_ontology(shared_data: Path, cache_dir: Path):  # type: ignore[no-untyped-def]
    from bioevidence.gate.grounders.obo import load_ontology

    return load_ontology(shared_data / "references" / "cl_2026-06-08.obo.gz", cache_root=cache_dir)


@pytest.fixture(scope="session")
def hgnc(shared_data: Path, cache_dir: Path):  # type: ignore[no-untyped-def]
    from bioevidence.gate.grounders.genes import load_genes

    return load_genes([shared_data / "references" / "hgnc_complete_set_2026-09-30.tsv.gz",
                       shared_data / "hgnc" / "hgnc_entries.sample.tsv"], cache_root=cache_dir)


def _sentences_of(data: bytes) -> list[list[str]]:
    """Per text-only body paragraph, its sentences (split at '. ' before a capital)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(data, parser)
    out = []
    for body in root.iter("body"):
        for p in body.iter("p"):
            if len(p) or not p.text:
                continue
            text = " ".join(p.text.split())
            parts = [s.strip() for s in re.split(r"(?<=[a-z0-9]\.) (?=[A-Z])", text)]
            good = [s for s in parts if 12 <= len(s.split()) <= 45 and s.endswith(".") and "al." not in s]
            if good:
                out.append(good)
    return out


@pytest.fixture(scope="session")
def manifest(shared_data: Path) -> dict[str, Any]:
    return json.loads((shared_data / "civic_corpus" / "manifest.json").read_text())


@pytest.fixture(scope="session")
def papers(corpus_dir: Path, manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """pmid → catalogue entry, title from esummary, and sentences from its own JATS bytes."""
    catalogue = json.loads((corpus_dir / "literature.json").read_text())["works"]
    out = {}
    for pmid in [*manifest["corpus"], *manifest["retracted"]]:
        work = catalogue[f"pmid:{pmid}"]
        if not work["fulltext_sha256"]:
            continue
        data = gzip.decompress((corpus_dir / f"{work['fulltext_sha256']}.xml.gz").read_bytes())
        paragraphs = _sentences_of(data)
        if not paragraphs:
            continue
        summary = json.loads(gzip.decompress((corpus_dir / f"{work['metadata_sha256']}.json.gz").read_bytes()))
        out[pmid] = {"sha": work["fulltext_sha256"], "title": summary["result"][pmid]["title"],
                     "paragraphs": paragraphs, "retracted": pmid in manifest["retracted"]}
    return out
