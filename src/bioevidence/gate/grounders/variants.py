"""Variant grounder: HGVS on versioned RefSeq accessions, genome build, positions within the chromosome.

For variant entities (``entity_type: variant``) and the locator keys ``variant``/``hgvs``:
not HGVS on a RefSeq accession → BEV024; accession without a version → BEV024; an ``NC_``
accession.version absent from the pinned NCBI assembly reports → BEV016 naming the pinned
versions; its build differs from the build in the statement scope (``GRCh37``/``hg19``,
``GRCh38``/``hg38``) → BEV017; a ``g.`` position beyond the chromosome's length → BEV016.
Transcript and protein accessions are checked for form only. No reference-allele check.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ..findings import Finding, Fix
from ..grounding import Grounding, finding
from .common import entities, items, pairs, requested_uses, scope_tokens

_HGVS = re.compile(
    r"^(?P<acc>(?:NC|NG|NM|NR|NP|XM|XR|XP|NT|NW)_\d+)(?:\.(?P<ver>\d+))?:(?P<kind>[gcnmrp])\.(?P<rest>\S+)$"
)
_POS = re.compile(r"^\(?(\d+)")
_BUILDS = {"grch37": "GRCh37", "hg19": "GRCh37", "grch38": "GRCh38", "hg38": "GRCh38"}


def parse_assembly_report(data: bytes) -> tuple[str, dict[str, tuple[str, int]]]:
    """``(build, {accession.version: (chromosome, length)})`` from an NCBI assembly report."""
    build = ""
    out: dict[str, tuple[str, int]] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("#"):
            match = re.match(r"#\s*Assembly name:\s*(\S+)", line)
            if match:
                build = match.group(1).split(".")[0]
            continue
        cols = line.split("\t")
        if len(cols) >= 9 and cols[6].startswith("NC_") and cols[8].isdigit():
            out[cols[6]] = (cols[0], int(cols[8]))
    if not build or not out:
        raise ConfigurationError("not an NCBI assembly report (no '# Assembly name:' or no NC_ sequences); "
                                 "download *_assembly_report.txt from NCBI Datasets")
    return build, out


class VariantGrounder:
    def __init__(self, reports: Sequence[tuple[str, dict[str, tuple[str, int]]]],
                 locator_keys: Sequence[str] = ("variant", "hgvs")) -> None:
        self.sequences: dict[str, tuple[str, str, int]] = {}
        for build, seqs in reports:
            for acc, (chrom, length) in seqs.items():
                self.sequences[acc] = (build, chrom, length)
        self.locator_keys = tuple(locator_keys)
        self.name = "variants:" + "+".join(sorted({b for b, _ in reports}))

    @classmethod
    def from_files(cls, paths: Sequence[Path | str]) -> VariantGrounder:
        return cls([parse_assembly_report(Path(p).read_bytes()) for p in paths])

    def check(self, hgvs: str, path: str, builds: set[str], uses: list[str]) -> list[Finding]:
        match = _HGVS.match(hgvs.strip())
        if match is None:
            return [finding("BEV024", f"'{hgvs}' is not HGVS on a RefSeq accession (e.g. NC_000007.14:g.140753336A>T)",
                            path, uses)]
        acc, ver = match.group("acc"), match.group("ver")
        if ver is None:
            return [finding("BEV024", f"'{acc}' has no version; write {acc}.<version>", path, uses)]
        if not acc.startswith("NC_"):
            return []
        key = f"{acc}.{ver}"
        pinned = self.sequences.get(key)
        if pinned is None:
            versions = sorted(k for k in self.sequences if k.split(".")[0] == acc)
            hint = f"; pinned versions: {', '.join(versions)}" if versions else ""
            return [finding("BEV016", f"{key} is not a sequence of the pinned assemblies{hint}", path, uses)]
        build, chrom, length = pinned
        out = []
        if builds and build not in builds:
            out.append(finding("BEV017", f"{key} is chromosome {chrom} of {build}, but the scope says "
                               f"{', '.join(sorted(builds))}", path, uses))
        pos = _POS.match(match.group("rest"))
        if match.group("kind") == "g" and pos and int(pos.group(1)) > length:
            out.append(finding("BEV016", f"position {pos.group(1)} is beyond the end of chromosome {chrom} "
                               f"({length:,} bp in {build})", path, uses))
        return out

    def ground(self, record: dict[str, Any]) -> Grounding:
        uses = requested_uses(record)
        builds = {_BUILDS[t.lower()] for t in scope_tokens(record) if t.lower() in _BUILDS}
        found: list[Finding] = []
        for path, entity in entities(record):
            if entity.get("entity_type") == "variant" and isinstance(entity.get("id"), str):
                found.extend(self.check(entity["id"], f"{path}.id", builds, uses))
        for index, item in items(record):
            kv = pairs(str(item.get("locator", "")).split("#", 1)[0]) or {}
            for key in self.locator_keys:
                if key in kv:
                    found.extend(self.check(kv[key], f"$.evidence_items[{index}].locator", builds, uses))
        return Grounding(found)


__all__ = ["Fix", "VariantGrounder", "parse_assembly_report"]
