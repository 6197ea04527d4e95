"""Every OBO file of the shared data, loaded as a pinned release and used as a user would (issue 30).

The OBO Foundry writes the id space and the release in headers whose form differs by product: the full
Cell Ontology says ``ontology: cl`` and ``data-version: releases/2026-06-08``; its basic variant says
``ontology: cl/cl-basic`` and ``data-version: cl/releases/2022-12-15/cl-basic.owl``; a subset says
``ontology: go/subsets/goslim_generic`` with no data-version at all. Read here from each file's own
header (and its ``id:`` lines when it has no ``ontology:``), independently of the loader: the id space is
the header's first path part, upper-cased (as 0.8.0 reads it), and the release is the date in the
data-version. For each file: the grounder's name, a real term cited with its name, the same id with its
prefix in lower case (BEV024 naming the id meant), an id the release does not hold (BEV016), and, when
the file has a release date, a scope tag of that date (passes) and of another (BEV017 naming both).
"""

from __future__ import annotations

import gzip
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.grounders.obo import load_ontology
from bioevidence.gate.grounders.ontology import OntologyGrounder
from conftest import shared_data_dir


def _files() -> list[Path]:
    """Every OBO file of the shared data (none when it is absent: the last test then fails under CI)."""
    root = shared_data_dir()
    return sorted([*root.glob("ontologies/*.obo"), *root.glob("references/*.obo.gz")])


def _text(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")


def _expected(text: str) -> dict[str, Any]:
    head = text.split("\n[", 1)[0]
    ontology = re.search(r"^ontology: (\S+)", head, re.M)
    version = re.search(r"^data-version: (\S+)", head, re.M)
    terms = re.findall(r"\[Term\]\nid: ([A-Za-z]+):(\S+)\nname: ([^\n]+)\n((?:[^\n]+\n)*?)\n", text + "\n\n")
    majority = Counter(p for p, _, _, _ in terms).most_common(1)[0][0]
    prefix = ontology.group(1).split("/")[0].upper() if ontology else majority
    dates = re.findall(r"(?:^|/)v?(\d{4}-\d{2}-\d{2})(?=/|$)", version.group(1)) if version else []
    live = [(f"{p}:{n}", name) for p, n, name, rest in terms
            if p == prefix and "is_obsolete: true" not in rest and n.isdigit()]
    return {"prefix": prefix, "date": dates[-1] if dates else None, "term": live[len(live) // 2],
            "ids": {f"{p}:{n}" for p, n, _, _ in terms}}


def _record(scope: list[str]) -> dict[str, Any]:
    return {"requested_uses": ["research_summary"], "statement": {
        "subject": {"id": "SAMPLE:1", "label": "sample 1", "entity_type": "sample"},
        "object": {"id": "SAMPLE:2", "label": "sample 2", "entity_type": "sample"}, "scope": scope},
        "evidence_items": []}


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_each_release_is_named_by_its_id_space_and_date_and_grounds_its_terms(path: Path, shared_data: Path,
                                                                             cache_dir: Path) -> None:
    want = _expected(_text(path))
    onto = load_ontology(path, cache_root=cache_dir)
    grounder = OntologyGrounder([onto])
    prefix, date = want["prefix"], want["date"]
    assert onto.prefix == prefix
    if date is not None:
        assert grounder.name == f"ontology:{prefix}@{date}"
    else:  # no release date in the file: named by its content
        assert grounder.name == f"ontology:{prefix}@{onto.sha256[:12]}"
    curie, name = want["term"]
    assert grounder.check_term(curie, name, None, "$.x", ["u"]) == [], (curie, name)
    lower = prefix.lower() + curie[len(prefix):]
    (f,) = grounder.check_term(lower, None, None, "$.x", ["u"])
    assert (f.rule_id, f.fix.value if f.fix else None) == ("BEV024", curie), f.message
    assert f.message.startswith(f"'{lower}' writes its prefix as '{prefix.lower()}': ids are written {prefix}:")
    missing = next(f"{prefix}:{n:07d}" for n in range(9_999_999, 0, -1) if f"{prefix}:{n:07d}" not in want["ids"])
    (f,) = grounder.check_term(missing, None, None, "$.x", ["u"])
    assert f.rule_id == "BEV016" and f.message.startswith(f"{missing} does not exist in {prefix}@")
    if date is None:
        return
    assert grounder.ground(_record([f"{prefix}:v{date}"])).findings == []
    (f,) = grounder.ground(_record([f"{prefix}:v1999-01-01"])).findings
    assert f.rule_id == "BEV017" and f.message.startswith(
        f"the scope names {prefix} release 1999-01-01, but the pinned release is {date}")


def test_the_shared_data_holds_variant_and_subset_releases(shared_data: Path) -> None:
    """The files above include the header forms the loader once misread (so the test above reaches them),
    and there are files at all: without the shared data this fails under CI, where the test above has none."""
    heads = {p.name: _text(p).split("\n[", 1)[0] for p in _files()}
    assert any("ontology: cl/cl-basic" in h for h in heads.values())
    assert any(re.search(r"^data-version: \w+/releases/\d{4}-\d{2}-\d{2}/", h, re.M) for h in heads.values())
    assert any("data-version:" not in h for h in heads.values())


def test_a_release_tagged_with_a_v_is_pinned_by_its_date(tmp_path: Path, cache_dir: Path) -> None:
    """Some ontologies tag releases ``v2026-04-15`` (VBO's GitHub releases): the tag's ``v`` is not part
    of the date, on the release's side as on the record's."""
    obo = tmp_path / "vbo.obo"
    obo.write_text("format-version: 1.2\ndata-version: vbo/releases/v2026-04-15/vbo.owl\nontology: vbo\n\n"
                   "[Term]\nid: VBO:0200800\nname: Labrador Retriever\n\n"
                   "[Term]\nid: VBO:0200335\nname: Dachshund\n", encoding="utf-8")
    grounder = OntologyGrounder([load_ontology(obo, cache_root=cache_dir)])
    assert grounder.name == "ontology:VBO@v2026-04-15"
    for tag in ("VBO:v2026-04-15", "VBO:2026-04-15"):
        assert grounder.ground(_record([tag])).findings == [], tag
    (f,) = grounder.ground(_record(["VBO:v2025-01-01"])).findings
    assert f.rule_id == "BEV017" and f.message.startswith(
        "the scope names VBO release 2025-01-01, but the pinned release is v2026-04-15")
    assert f.fix is not None and (f.fix.action, f.fix.value) == ("replace", "VBO:v2026-04-15")
