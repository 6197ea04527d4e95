"""Build grounders from command-line options or from a profile's ``grounders:`` section.

CLI: ``--snapshot-dir DIR`` (literature), ``--ontology FILE`` (repeatable), ``--term-root
KIND=CURIE`` (repeatable), ``--genes FILE`` (repeatable), ``--assembly-report FILE``
(repeatable), ``--cues``. A profile may declare the same with release names from
``grounders/*.yaml`` instead of paths::

    grounders:
      snapshot_dir: path/to/snapshots
      ontologies: [cl-2026-06-08]
      term_roots: {cell_type: "CL:0000000"}
      genes: [hgnc-2026-09-30]
      assembly_reports: [grch38-p14]
      cues: true

(``--tables TYPE`` and ``--reference FILE`` are accepted and rejected with a clear error until
the table and reference grounders land.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ..grounding import Grounder

_KEYS = frozenset({"snapshot_dir", "ontologies", "term_roots", "genes", "assembly_reports", "tables",
                   "reference", "cues"})


@dataclass(frozen=True)
class GrounderOptions:
    snapshot_dir: Path | None = None
    ontologies: tuple[Path, ...] = ()
    term_roots: Mapping[str, str] = field(default_factory=dict)
    genes: tuple[Path, ...] = ()
    assembly_reports: tuple[Path, ...] = ()
    tables: tuple[str, ...] = ()
    reference: Path | None = None
    cues: bool = False
    cache_root: Path | None = None


def parse_term_roots(values: Sequence[str]) -> dict[str, str]:
    """``["cell_type=CL:0000000"]`` → ``{"cell_type": "CL:0000000"}``; malformed → ConfigurationError."""
    out: dict[str, str] = {}
    for value in values:
        kind, sep, curie = value.partition("=")
        if not sep or not kind.strip() or ":" not in curie:
            raise ConfigurationError(f"--term-root {value!r} must be KIND=CURIE, e.g. cell_type=CL:0000000")
        out[kind.strip()] = curie.strip()
    return out


def _resolve(name: str) -> Path:
    """A release name from ``grounders/*.yaml`` (pinned, hash-checked), or a path."""
    path = Path(name)
    if path.exists():
        return path
    from ...sources.releases import release_path

    return release_path(name)


def options_from_profile(section: Mapping[str, Any], base: Path | None = None) -> GrounderOptions:
    """Options from a profile's ``grounders:`` mapping (release names or paths)."""
    if not isinstance(section, Mapping):
        raise ConfigurationError("a profile's 'grounders' must be a mapping")
    unknown = set(section) - _KEYS
    if unknown:
        raise ConfigurationError(f"unknown key(s) under 'grounders': {', '.join(sorted(unknown))}; "
                                 f"allowed: {', '.join(sorted(_KEYS))}")

    def names(key: str) -> tuple[Path, ...]:
        raw = section.get(key) or []
        raw = [raw] if isinstance(raw, str) else raw
        if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
            raise ConfigurationError(f"'grounders.{key}' must be a release name or a list of them")
        return tuple(_resolve(v) for v in raw)

    roots = section.get("term_roots") or {}
    if not isinstance(roots, Mapping):
        raise ConfigurationError("'grounders.term_roots' must map a kind to a CURIE")
    snap = section.get("snapshot_dir")
    return GrounderOptions(
        snapshot_dir=(base / snap if base and snap else Path(snap)) if isinstance(snap, str) else None,
        ontologies=names("ontologies"), term_roots=dict(roots), genes=names("genes"),
        assembly_reports=names("assembly_reports"), cues=bool(section.get("cues", False)))


def build_grounders(options: GrounderOptions) -> list[Grounder]:
    """The grounders the options ask for, loaded (indexes from the on-disk cache)."""
    out: list[Grounder] = []
    if options.tables or options.reference is not None:
        raise ConfigurationError("table and reference grounders are not available yet; drop --tables/--reference")
    if options.snapshot_dir is not None:
        from .literature import LiteratureGrounder

        if not Path(options.snapshot_dir).is_dir():
            raise ConfigurationError(f"--snapshot-dir {options.snapshot_dir} is not a folder")
        out.append(LiteratureGrounder.from_directory(options.snapshot_dir, cache_root=options.cache_root))
    if options.ontologies:
        from .obo import load_ontology
        from .ontology import OntologyGrounder

        out.append(OntologyGrounder([load_ontology(p, cache_root=options.cache_root) for p in options.ontologies],
                                    options.term_roots))
    elif options.term_roots:
        raise ConfigurationError("--term-root needs at least one --ontology")
    if options.genes:
        from .genes import GeneGrounder, load_genes

        out.append(GeneGrounder(load_genes(options.genes, cache_root=options.cache_root)))
    if options.assembly_reports:
        from .variants import VariantGrounder

        out.append(VariantGrounder.from_files(options.assembly_reports))
    if options.cues:
        from .cues import CueChecker

        out.append(CueChecker())
    return out
