"""Build grounders from command-line options or from a profile's ``grounders:`` section.

CLI: ``--snapshot-dir DIR`` (source bytes; literature when the folder holds
``literature.json``; tables with ``--tables TYPE``, repeatable), ``--ontology FILE``
(repeatable), ``--term-root KIND=CURIE`` (repeatable), ``--genes FILE`` (repeatable),
``--assembly-report FILE`` (repeatable), ``--reference FILE``, ``--cues``/``--no-cues``,
``--direction auto|required|off``. A profile may declare the same with release names from
``grounders/*.yaml`` instead of paths (relative paths are relative to the profile file)::

    grounders:
      snapshot_dir: path/to/snapshots
      ontologies: [cl]
      term_roots: {cell_type: "CL:0000000"}
      genes: [hgnc]
      assembly_reports: [path/to/GCF_000001405.40_GRCh38.p14_assembly_report.txt]
      tables: [marker_gene]
      reference: path/to/markers.tsv          # or {file: …, evidence_keys: [gene], relation: marker_of}
      cues: true                              # as --cues (a profile's checks.cues is the usual place)

Order of the grounders built: source bytes, literature, tables, ontology, genes, variants,
reference, then the checks the options name: cues, direction. ``cues`` and ``direction`` left
``None`` are not built here: the validator then runs each as the record's profile says
(``checks:``, :mod:`bioevidence.gate.profiles`), so they override the profile only when set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ..grounding import Check, Grounder

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
    reference_keys: tuple[str, ...] = ("gene",)
    reference_relation: str | None = None
    cues: bool | None = None  # None: each record's profile decides (checks.cues)
    direction: str | None = None  # auto | required | off; None: each record's profile decides
    cache_root: Path | None = None
    max_inflated: int | None = None  # None: BIOEVIDENCE_MAX_INFLATED or the default (bioevidence.limits)

    def input_files(self) -> list[Path]:
        """Every file these grounders read (so an ``--output`` can never overwrite one)."""
        files = [*self.ontologies, *self.genes, *self.assembly_reports]
        return files + ([self.reference] if self.reference is not None else [])

    def input_folders(self) -> list[Path]:
        """Folders whose every file is a pinned input (the snapshot folder)."""
        return [self.snapshot_dir] if self.snapshot_dir is not None else []


def parse_term_roots(values: Sequence[str]) -> dict[str, str]:
    """``["cell_type=CL:0000000"]`` → ``{"cell_type": "CL:0000000"}``; malformed → ConfigurationError."""
    out: dict[str, str] = {}
    for value in values:
        kind, sep, curie = value.partition("=")
        if not sep or not kind.strip() or ":" not in curie:
            raise ConfigurationError(f"--term-root {value!r} must be KIND=CURIE, e.g. cell_type=CL:0000000")
        out[kind.strip()] = curie.strip()
    return out


def _resolve(name: str, base: Path | None = None) -> Path:
    """A path (relative to ``base`` when given and it exists there), else a release name from
    ``grounders/*.yaml`` (pinned, hash-checked)."""
    path = Path(name)
    if base is not None and not path.is_absolute() and (base / path).exists():
        return base / path
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
        return tuple(_resolve(v, base) for v in raw)

    roots = section.get("term_roots") or {}
    if not isinstance(roots, Mapping) or not all(isinstance(v, str) for v in roots.values()):
        raise ConfigurationError("'grounders.term_roots' must map a kind to a CURIE, e.g. cell_type: CL:0000000")
    snap = section.get("snapshot_dir")
    if snap is not None and not isinstance(snap, str):
        raise ConfigurationError("'grounders.snapshot_dir' must be a folder path")
    tables = section.get("tables") or []
    tables = [tables] if isinstance(tables, str) else tables
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
        raise ConfigurationError("'grounders.tables' must be an evidence type or a list of them")
    reference, keys, relation = _reference(section.get("reference"), base)
    cues = section.get("cues")
    if cues is not None and not isinstance(cues, bool):
        raise ConfigurationError("'grounders.cues' must be true or false")
    return GrounderOptions(
        snapshot_dir=(base / snap if base and not Path(snap).is_absolute() else Path(snap)) if snap else None,
        ontologies=names("ontologies"), term_roots=dict(roots), genes=names("genes"),
        assembly_reports=names("assembly_reports"), tables=tuple(tables), reference=reference,
        reference_keys=keys, reference_relation=relation, cues=cues)


def _reference(raw: object, base: Path | None) -> tuple[Path | None, tuple[str, ...], str | None]:
    """``reference: FILE`` or ``reference: {file, evidence_keys, relation}``."""
    if raw is None:
        return None, ("gene",), None
    if isinstance(raw, str):
        return _resolve(raw, base), ("gene",), None
    allowed = {"file", "evidence_keys", "relation"}
    if not isinstance(raw, Mapping) or not isinstance(raw.get("file"), str) or set(raw) - allowed:
        raise ConfigurationError("'grounders.reference' must be a file path or a mapping with 'file' and "
                                 "optionally 'evidence_keys' (list) and 'relation'")
    keys = raw.get("evidence_keys", ["gene"])
    keys = [keys] if isinstance(keys, str) else keys
    relation = raw.get("relation")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys) or not (
            relation is None or isinstance(relation, str)):
        raise ConfigurationError("'grounders.reference.evidence_keys' must be a list of locator keys and "
                                 "'relation' a predicate")
    return _resolve(raw["file"], base), tuple(keys), relation


def build_grounders(options: GrounderOptions) -> list[Grounder | Check]:
    """The grounders the options ask for, loaded (indexes from the on-disk cache), then the checks
    they set (``cues``, ``direction``)."""
    out: list[Grounder | Check] = []
    if options.tables and options.snapshot_dir is None:
        raise ConfigurationError("--tables needs --snapshot-dir (the folder holding the pinned tables)")
    if options.snapshot_dir is not None:
        from ...sources.catalogue import CATALOGUE_NAME, Catalogue
        from ...sources.store import SnapshotStore
        from .snapshots import SourceBytesGrounder

        folder = Path(options.snapshot_dir)
        if not folder.is_dir():
            raise ConfigurationError(f"--snapshot-dir {folder} is not a folder; pass the folder of pinned snapshots")
        # one store: bytes are re-hashed once per process, for every grounder
        store = SnapshotStore(folder, max_inflated=options.max_inflated)
        out.append(SourceBytesGrounder(store))
        if (folder / CATALOGUE_NAME).is_file():
            from .literature import LiteratureGrounder

            out.append(LiteratureGrounder(store, Catalogue.load(folder), cache_root=options.cache_root))
        if options.tables:
            from .tables import TableGrounder

            out.append(TableGrounder(store, options.tables))
    ontologies = []
    if options.ontologies:
        from .obo import load_ontology
        from .ontology import OntologyGrounder

        ontologies = [load_ontology(p, cache_root=options.cache_root, max_inflated=options.max_inflated)
                      for p in options.ontologies]
        out.append(OntologyGrounder(ontologies, options.term_roots))
    elif options.term_roots:
        raise ConfigurationError("--term-root needs at least one --ontology")
    if options.genes:
        from .genes import GeneGrounder, load_genes

        out.append(GeneGrounder(load_genes(options.genes, cache_root=options.cache_root,
                                           max_inflated=options.max_inflated)))
    if options.assembly_reports:
        from .variants import VariantGrounder

        out.append(VariantGrounder.from_files(options.assembly_reports))
    if options.reference is not None:
        from .crosscheck import ReferenceGrounder

        out.append(ReferenceGrounder.from_file(options.reference, evidence_keys=options.reference_keys,
                                               relation=options.reference_relation, ontologies=ontologies))
    return [*out, *build_checks(options)]


def build_checks(options: GrounderOptions) -> list[Check]:
    """The checks ``options`` set (``cues``, ``direction``); none when both are ``None``."""
    out: list[Check] = []
    if options.cues is not None:
        from .cues import CueChecker

        out.append(CueChecker(enabled=options.cues))
    if options.direction is not None:
        from .direction import DirectionChecker

        out.append(DirectionChecker(options.direction))
    return out
