"""The single-cell case's inputs, read in place from the peer's sdist, and what the case adds to the engine,
written against bioevidence's public API (``SnapshotStore``, ``GrounderOptions``, ``build_grounders``,
``Validator``, ``Finding``, ``Grounding``, ``load_profile``):

* :class:`CaseData` reads ``examples/singlecell_celltype/sources`` through the store (so re-hashed) and keeps
  its own small indexes of the Cell Ontology and HGNC, to derive faults and score answers without the
  grounders under test;
* the case's grounders: :class:`DisjointMarkerCrosscheck` (ASCT+B against the ontology's disjoint lineages,
  BEV025, the peer's protocol 1), :class:`DatasetTable` (a cluster's markers come from its dataset's table)
  and :class:`RowCache` (our table grounder, asked once per distinct cited row);
* :func:`annotation_record` builds a record as the peer's ``celltype_loop.record`` does, :func:`carry_as_peer`
  re-creates what 0.8.0's loop validated after a revision, :func:`derive` the controlled faults.
"""

from __future__ import annotations

import collections
import copy
import csv
import gzip
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bioevidence import (
    Finding,
    GrounderOptions,
    Grounding,
    Report,
    SnapshotStore,
    Validator,
    build_grounders,
    load_profile,
)

from .common import CaseUnavailable, example

ROOT_TERM = "CL:0000000"
HUMAN = "NCBITaxon:9606"
USES = ("research_summary", "reference_annotation")
TOP = 5  # markers a derived record cites: the cluster's top five
Record = dict[str, Any]


@dataclass
class Term:
    name: str = ""
    obsolete: bool = False
    exact: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    disjoint: list[str] = field(default_factory=list)


def label_key(text: str) -> str:
    """Labels compared as the peer's scorer compares them: case, punctuation and plain plurals ignored."""
    words = re.sub(r"[^0-9a-z]+", " ", text.casefold()).split()
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


class CellOntology:
    """The tags of the pinned ``cl.obo`` this case needs, including ``disjoint_from`` (the engine's OBO index
    keeps no disjointness axioms)."""

    def __init__(self, data: bytes) -> None:
        self.terms: dict[str, Term] = {}
        current: Term | None = None
        for raw in data.decode("utf-8").splitlines():
            line = raw.strip()
            if line.startswith("["):
                current = Term() if line == "[Term]" else None
                continue
            if current is None:
                continue
            tag, _, value = line.partition(": ")
            value = value.split(" ! ", 1)[0].strip()
            if tag == "id":
                self.terms[value] = current
            elif tag == "name":
                current.name = value
            elif tag == "is_obsolete":
                current.obsolete = value == "true"
            elif tag == "synonym" and (m := re.match(r'"((?:[^"\\]|\\.)*)" EXACT\b', value)):
                current.exact.append(m.group(1).replace('\\"', '"'))
            elif tag == "is_a":
                current.parents.append(value.split()[0])
            elif tag == "disjoint_from":
                current.disjoint.append(value.split()[0])
        self._ancestors: dict[str, frozenset[str]] = {}
        self._owners: dict[str, list[str]] | None = None

    def ancestors(self, curie: str) -> frozenset[str]:
        """The term and everything above it through ``is_a``."""
        done = self._ancestors.get(curie)
        if done is None:
            seen, stack = {curie}, [curie]
            while stack:
                term = self.terms.get(stack.pop())
                for parent in term.parents if term else []:
                    if parent not in seen:
                        seen.add(parent)
                        stack.append(parent)
            done = self._ancestors[curie] = frozenset(seen)
        return done

    def disjoint(self, a: str, b: str) -> bool:
        """Declared disjoint: an ancestor of one is ``disjoint_from`` an ancestor of the other."""
        mine, theirs = self.ancestors(a), self.ancestors(b)
        return any(d in theirs for x in mine if x in self.terms for d in self.terms[x].disjoint) or any(
            d in mine for x in theirs if x in self.terms for d in self.terms[x].disjoint)

    def cell_type(self, curie: str) -> Term | None:
        """The current cell-type term ``curie`` names, or None (unknown, obsolete, not under CL:0000000)."""
        term = self.terms.get(curie)
        return term if term and not term.obsolete and ROOT_TERM in self.ancestors(curie) else None

    def owners(self, label: str) -> list[str]:
        """Current cell-type terms whose name or EXACT synonym is ``label``."""
        if self._owners is None:
            self._owners = collections.defaultdict(list)
            for curie, term in sorted(self.terms.items()):
                if self.cell_type(curie) is not None:
                    for key in dict.fromkeys(label_key(t) for t in [term.name, *term.exact]):
                        self._owners[key].append(curie)
        return self._owners.get(label_key(label), [])

    def names(self, curie: str) -> set[str]:
        term = self.terms.get(curie)
        return {label_key(t) for t in [term.name, *term.exact]} if term else set()


class Hgnc:
    """Approved symbols, and the previous symbols and aliases that name exactly one approved gene."""

    def __init__(self, data: bytes) -> None:
        self.approved: set[str] = set()
        renamed: dict[str, set[str]] = {}
        for row in csv.DictReader(io.StringIO(data.decode("utf-8")), delimiter="\t"):
            self.approved.add(row["symbol"])
            for column in ("prev_symbol", "alias_symbol"):
                for old in filter(None, (row.get(column) or "").strip('"').split("|")):
                    renamed.setdefault(old, set()).add(row["symbol"])
        self.old_names = {old: next(iter(new)) for old, new in renamed.items()
                          if len(new) == 1 and old not in self.approved and old.casefold() not in
                          {s.casefold() for s in new}}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise CaseUnavailable(f"{path} is missing: the sdist is not bioai-evidence-validator 0.8.0's")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class CaseData:
    """The peer's single-cell case, read in place (nothing is copied)."""

    def __init__(self, sdist: Path) -> None:
        self.folder = example(sdist, "singlecell_celltype")
        self.results = sdist / "evaluation" / "llm_benchmark" / "results"
        sources = self.folder / "sources"
        self.snapshots = sources / "snapshots"
        self.manifest: dict[str, Any] = json.loads((sources / "manifest.json").read_text(encoding="utf-8"))
        self.store = SnapshotStore(self.snapshots)
        self.tasks = {t["task_id"]: t for t in _jsonl(sources / "tasks.jsonl")}
        self.truth = {t["task_id"]: t for t in _jsonl(sources / "truth.jsonl")}
        self.datasets = {d["name"]: d for d in self.manifest["datasets"]}
        self.versions = {d["markers_sha256"]: d["dataset_version_id"] for d in self.manifest["datasets"]}
        self.ontology = CellOntology(self.store.read(self.manifest["cell_ontology"]["sha256"]))
        self.hgnc = Hgnc(self.store.read(self.manifest["hgnc"]["sha256"]))
        self.markers: dict[tuple[str, str], list[str]] = {}  # (table sha, cluster) -> genes by rank
        for sha in sorted(self.versions):
            rows = csv.DictReader(io.StringIO(self.store.read(sha).decode("utf-8")), delimiter="\t")
            for row in sorted(rows, key=lambda r: (r["cluster"], int(r["rank"]))):
                self.markers.setdefault((sha, row["cluster"]), []).append(row["gene"])
        self._episodes: dict[str, list[dict[str, Any]]] = {}

    def snapshot(self, sha: str) -> Path:
        path = self.store.find(sha)
        if path is None:
            raise CaseUnavailable(f"the snapshot {sha} is missing from {self.snapshots}")
        return path

    def genes(self, task: dict[str, Any]) -> list[str]:
        return self.markers.get((task["markers_sha256"], task["cluster"]), [])

    def episodes(self, split: str) -> list[dict[str, Any]]:
        """0.8.0's committed episodes of a split (one per model and cluster), in file order."""
        if split not in self._episodes:
            self._episodes[split] = _jsonl(self.results / f"celltype-{split}" / "episodes.jsonl")
        return self._episodes[split]

    def peer_summary(self, split: str) -> dict[str, Any]:
        """0.8.0's committed ``summary.json`` of a split."""
        path = self.results / f"celltype-{split}" / "summary.json"
        if not path.is_file():
            raise CaseUnavailable(f"{path} is missing: the sdist is not bioai-evidence-validator 0.8.0's")
        found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return found

    def grounders(self, store_dir: Path | None = None) -> list[Any]:
        """Source bytes, marker tables, Cell Ontology (cell types under CL:0000000) and HGNC, as the case's
        README lists them, configured through ``GrounderOptions`` over the snapshot files read in place."""
        options = GrounderOptions(
            snapshot_dir=store_dir or self.snapshots, tables=("marker_gene",),
            ontologies=(self.snapshot(self.manifest["cell_ontology"]["sha256"]),),
            term_roots={"cell_type": ROOT_TERM}, genes=(self.snapshot(self.manifest["hgnc"]["sha256"]),))
        return [RowCache(g) if g.name.startswith("tables:") else g for g in build_grounders(options)]

    def crosscheck(self) -> DisjointMarkerCrosscheck:
        return DisjointMarkerCrosscheck(self.store.read(self.manifest["asctb"]["sha256"]), self.ontology)

    def validator(self, *, crosscheck: bool = False, dataset_table: bool = False,
                  store_dir: Path | None = None) -> Validator:
        """The gate under the case's unchanged profile.yaml; ``crosscheck`` adds ASCT+B (protocol 1),
        ``dataset_table`` the case's check that the table is the subject's dataset's."""
        grounders = self.grounders(store_dir) + ([self.crosscheck()] if crosscheck else []) + (
            [DatasetTable(self)] if dataset_table else [])
        return Validator(load_profile(self.folder / "profile.yaml"), grounders=grounders)


class RowCache:
    """Our table grounder, asked once per distinct cited row: each table item is grounded on its own (the
    grounder judges items independently) and the answer reused for the same source, item and uses. A
    workaround for its cost (every item scans every row of the table), not a change of what it decides."""

    def __init__(self, tables: Any) -> None:
        self.tables = tables
        self.name: str = tables.name
        self.types: frozenset[str] = frozenset(tables.types)
        self._seen: dict[str, tuple[list[Finding], bool]] = {}

    def ground(self, record: Record) -> Grounding:
        uses = record.get("requested_uses")
        sources = {s.get("id"): s for s in record.get("source_artifacts") or [] if isinstance(s, dict)}
        found: list[Finding] = []
        verified: set[str] = set()
        for index, item in enumerate(record.get("evidence_items") or []):
            if not isinstance(item, dict) or item.get("evidence_type") not in self.types:
                continue
            source = sources.get(item.get("source_artifact_id"))
            alone = {"requested_uses": uses, "source_artifacts": [source] if source else [],
                     "evidence_items": [dict(item, id="item")]}
            key = json.dumps(alone, sort_keys=True)
            if key not in self._seen:
                result = self.tables.ground(alone)
                self._seen[key] = (list(result.findings), "item" in result.verified)
            findings, ok = self._seen[key]
            here = f"$.evidence_items[{index}]"
            for f in findings:
                fix = f.fix and replace(f.fix, field_path=f.fix.field_path.replace("$.evidence_items[0]", here, 1))
                found.append(replace(f, field_path=f.field_path.replace("$.evidence_items[0]", here, 1), fix=fix))
            if ok and isinstance(item.get("id"), str):
                verified.add(item["id"])
        return Grounding(found, frozenset(verified))


class DisjointMarkerCrosscheck:
    """Review (BEV025) a supporting ``gene=`` marker that ASCT+B lists only as a marker of cell types the Cell
    Ontology declares disjoint from the claimed one. Never verifies anything: silence is not support."""

    name = "crosscheck:ASCT+B@ccf-v2.0+disjoint"

    def __init__(self, table: bytes, ontology: CellOntology) -> None:
        self.ontology = ontology
        self.listed: dict[str, list[tuple[str, str]]] = {}
        for row in csv.DictReader(io.StringIO(table.decode("utf-8")), delimiter="\t"):
            if row["predicate"].strip() == "marker_of":
                self.listed.setdefault(row["subject"].strip(), []).append(
                    (row["object"].strip(), row["object_label"].strip()))

    def ground(self, record: Record) -> Grounding:
        statement = record.get("statement") or {}
        target = (statement.get("object") or {}).get("id")
        uses = [u for u in record.get("requested_uses") or [] if isinstance(u, str)]
        supporting = {i for line in statement.get("evidence_lines") or [] if line.get("direction") == "supports"
                      for i in line.get("evidence_item_ids") or []}
        found: list[Finding] = []
        for index, item in enumerate(record.get("evidence_items") or []):
            if not isinstance(target, str) or item.get("id") not in supporting:
                continue
            gene = dict(p.split("=", 1) for p in str(item.get("locator", "")).split(";") if "=" in p).get("gene")
            listed = self.listed.get(gene or "", [])
            if listed and all(self.ontology.disjoint(term, target) for term, _ in listed):
                named = "; ".join(sorted({f"{t} ({n})" for t, n in listed})[:3])
                found.append(Finding("BEV025", "review", f"ASCT+B lists {gene} only as a marker of {named}, cell types "
                                     f"the Cell Ontology declares disjoint from {target}",
                                     f"$.evidence_items[{index}].locator", uses))
        return Grounding(found)


class DatasetTable:
    """A marker cited for ``cluster:<dataset>/<cluster>`` must come from that dataset's marker table (the
    manifest's ``markers_sha256``), not from another pinned table whose same-named cluster happens to hold
    the gene (BEV017). The generic table grounder cannot know which table a subject belongs to."""

    name = "case:dataset-table"

    def __init__(self, data: CaseData) -> None:
        self.tables = {name: d["markers_sha256"] for name, d in data.datasets.items()}
        self.owner = {sha: name for name, sha in self.tables.items()}

    def ground(self, record: Record) -> Grounding:
        subject = str(((record.get("statement") or {}).get("subject") or {}).get("id", ""))
        dataset = subject.removeprefix("cluster:").partition("/")[0] if subject.startswith("cluster:") else ""
        uses = [u for u in record.get("requested_uses") or [] if isinstance(u, str)]
        found: list[Finding] = []
        for index, source in enumerate(record.get("source_artifacts") or []):
            sha = source.get("sha256") if isinstance(source, dict) else None
            if dataset in self.tables and sha in self.owner and sha != self.tables[dataset]:
                found.append(Finding("BEV017", "error", f"the pinned table {sha} is the {self.owner[sha]} dataset's "
                                     f"marker table; the subject is a cluster of the {dataset} dataset, whose table "
                                     f"is {self.tables[dataset]}", f"$.source_artifacts[{index}].sha256", uses))
        return Grounding(found)


class Memo:
    """A validator that validates each distinct record once (the replays meet the same records again)."""

    def __init__(self, validator: Any) -> None:
        self.validator = validator
        self.seen: dict[str, Report] = {}

    def validate(self, record: Record) -> Report:
        key = json.dumps(record, sort_keys=True)
        if key not in self.seen:
            self.seen[key] = self.validator.validate(record)
        return self.seen[key]


def verified_by(gate: Memo) -> Callable[[Record], frozenset[str]]:
    return lambda record: gate.validate(record).verified


def _gene_token(text: str) -> str:
    return text.strip().replace(";", "_").replace("=", "_") or "_"


def annotation_record(data: CaseData, task: dict[str, Any], answer: dict[str, Any],
                      uses: tuple[str, ...] = ("research_summary",), sha: str | None = None) -> Record | None:
    """An answer (``decision``, ``cell_type_id``, ``cell_type_label``, ``markers``: gene and stance) as the
    peer's pipeline records it; None when the answer does not annotate. ``sha`` overrides the table hash."""
    if answer.get("decision") != "annotate" or not str(answer.get("cell_type_id", "")).strip():
        return None
    table = task["markers_sha256"]
    pinned = sha or table
    items: list[dict[str, Any]] = []
    lines: dict[str, list[str]] = {}
    for n, marker in enumerate(answer["markers"], start=1):
        items.append({"id": f"bioev:marker-{n}", "source_artifact_id": "bioev:markers",
                      "locator": f"cluster={task['cluster']};gene={_gene_token(marker['gene'])}",
                      "evidence_type": "marker_gene", "extraction_method": "llm_extraction", "scope": [HUMAN]})
        lines.setdefault(marker["stance"], []).append(items[-1]["id"])
    tid = task["task_id"]
    return {
        "record_id": f"bioev:celltype-{tid}", "profile_id": "singlecell-celltype",
        "statement": {
            "id": f"bioev:celltype-statement-{tid}",
            "subject": {"id": f"cluster:{task['dataset']}/{task['cluster']}", "entity_type": "cell_cluster",
                        "label": f"cluster {task['cluster']} of the {task['tissue']} dataset"},
            "predicate": "has_cell_type",
            "object": {"id": answer["cell_type_id"].strip(), "label": answer["cell_type_label"].strip(),
                       "entity_type": "cell_type"},
            "scope": [HUMAN], "statement_status": "proposed",
            "evidence_lines": [{"id": f"bioev:line-{d}", "direction": d, "evidence_item_ids": ids}
                               for d, ids in lines.items()]},
        "source_artifacts": [{"id": "bioev:markers", "title": f"Marker table of the {task['dataset']} dataset",
                              "source_type": "dataset_snapshot", "uri": f"urn:sha256:{pinned}",
                              "version": data.versions[table], "retrieved_at": "2026-09-30T00:00:00Z",
                              "sha256": pinned, "observed_sha256": pinned}],
        "evidence_items": items, "adjudications": [], "requested_uses": list(uses)}


def _identity(record: Record, item: dict[str, Any]) -> tuple[str, str, str]:
    sha = next((s["sha256"] for s in record["source_artifacts"] if s["id"] == item["source_artifact_id"]), "")
    return sha, item["locator"], item.get("extracted_text") or ""


def _claim(record: Record) -> tuple[str, str, str]:
    statement = record["statement"]
    return statement["subject"]["id"], statement["predicate"], statement["object"]["id"]


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def carry_as_peer(previous: Record, verified: frozenset[str], record: Record) -> Record:
    """``record`` as 0.8.0's loop validated it: for the same claim, each verified item of ``previous`` that the
    revision does not hold (same source hash, locator and quote, whatever its direction) is put back, with a
    fresh id, into the line of its former direction. ``evidence`` counts in the peer's episodes check it."""
    merged = copy.deepcopy(record)
    if _claim(previous) != _claim(record):
        return merged
    present = {_identity(merged, item) for item in merged["evidence_items"]}
    direction = {i: line["direction"] for line in previous["statement"]["evidence_lines"]
                 for i in line["evidence_item_ids"]}
    taken = {x["id"] for x in merged["evidence_items"]} | {s["id"] for s in merged["source_artifacts"]}
    for item in previous["evidence_items"]:
        key = _identity(previous, item)
        if item["id"] not in verified or key in present:
            continue
        source = next(s for s in previous["source_artifacts"] if s["id"] == item["source_artifact_id"])
        same = next((s for s in merged["source_artifacts"] if s["sha256"] == source["sha256"]), None)
        if same is None:
            same = dict(source, id=_fresh(source["id"], taken))
            merged["source_artifacts"].append(same)
        kept = dict(item, id=_fresh(item["id"], taken), source_artifact_id=same["id"])
        merged["evidence_items"].append(kept)
        way = direction.get(item["id"], "supports")
        line = next((x for x in merged["statement"]["evidence_lines"] if x["direction"] == way), None)
        if line is None:
            line = {"id": _fresh(f"carried-{way}", taken), "direction": way, "evidence_item_ids": []}
            merged["statement"]["evidence_lines"].append(line)
        line["evidence_item_ids"].append(kept["id"])
        present.add(key)
    return merged


def attempt_records(data: CaseData, episode: dict[str, Any],
                    verified_of: Callable[[Record], frozenset[str]]) -> Iterator[tuple[int, Record]]:
    """The records 0.8.0 validated in one committed episode, in order (``verified_of(record)`` gives the items
    verified in an attempt, which the next one carries)."""
    task = data.tasks[episode["task_id"]]
    previous: Record | None = None
    verified: frozenset[str] = frozenset()
    for index, _attempt in enumerate(episode["attempts"]):
        record = annotation_record(data, task, episode["calls"][index]["answer"])
        assert record is not None  # an attempt exists only for an annotating answer
        if previous is not None:
            record = carry_as_peer(previous, verified, record)
        yield index, record
        previous, verified = record, verified_of(record)


# Controlled faults

Derived = tuple[str, str, Record, str]  # kind, task id, record, the finding expected


def derive(data: CaseData) -> list[Derived]:
    """A genuine record and one record per fault kind, for every cluster (151), all from the pinned sources."""
    onto = data.ontology
    obsolete = sorted(t for t, term in onto.terms.items() if term.obsolete and t.startswith("CL:") and term.name)
    clusters = sorted(data.truth.values(), key=lambda t: (t["dataset"], t["cluster"]))
    by_dataset: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for truth in clusters:
        by_dataset[truth["dataset"]].append(truth)
    datasets = sorted(data.datasets)
    renamings: dict[str, list[str]] = collections.defaultdict(list)
    for old, new in sorted(data.hgnc.old_names.items()):
        renamings[new].append(old)
    out: list[Derived] = []
    for number, truth in enumerate(clusters):
        task = data.tasks[truth["task_id"]]
        genes = data.genes(task)
        top = genes[:TOP]
        peers = by_dataset[truth["dataset"]]
        later = peers[peers.index(truth) + 1:] + peers[:peers.index(truth)]

        def record(term: str, label: str, markers: list[str], sha: str | None = None,
                   uses: tuple[str, ...] = ("research_summary",), task: dict[str, Any] = task) -> Record:
            answer = {"decision": "annotate", "cell_type_id": term, "cell_type_label": label,
                      "markers": [{"gene": g, "stance": "supports"} for g in markers]}
            built = annotation_record(data, task, answer, uses, sha)
            assert built is not None
            return built

        term, label = truth["term"], truth["label"]
        tid = truth["task_id"]
        out.append(("genuine", tid, record(term, label, top, uses=USES), ""))
        other = next(p["term"] for p in later if onto.names(p["term"]).isdisjoint(onto.names(term)))
        out.append(("label_mismatch", tid, record(other, label, top), "BEV017"))
        local = int(term.split(":")[1])
        unknown = next(f"CL:{(local + 9_000_000 + k) % 10_000_000:07d}" for k in range(1000)
                       if f"CL:{(local + 9_000_000 + k) % 10_000_000:07d}" not in onto.terms)
        out.append(("unknown_id", tid, record(unknown, label, top), "BEV016"))
        gone = obsolete[number % len(obsolete)]
        out.append(("obsolete_id", tid, record(gone, onto.terms[gone].name.removeprefix("obsolete "), top), "BEV023"))
        tissue = data.datasets[truth["dataset"]]["tissue"]
        out.append(("not_a_cell_type", tid, record(tissue["ontology_term_id"], tissue["label"], top), "BEV024"))
        absent = next(g for p in later for g in data.genes(data.tasks[p["task_id"]]) if g not in genes)
        out.append(("marker_not_in_data", tid, record(term, label, [*top[:-1], absent]), "BEV016"))
        renamed = next((g for g in genes if renamings.get(g)), None)  # the first marker with an old name
        if renamed is not None:
            cited = [*[g for g in top if g != renamed][: TOP - 1], renamings[renamed][0]]
            out.append(("unapproved_symbol", tid, record(term, label, cited), "BEV023"))
        table = data.store.read(task["markers_sha256"])
        forged = hashlib.sha256(table + b"\n").hexdigest()
        out.append(("forged_hash", tid, record(term, label, top, sha=forged), "BEV015"))
        elsewhere = data.datasets[datasets[(datasets.index(truth["dataset"]) + 1) % len(datasets)]]["markers_sha256"]
        out.append(("other_table", tid, record(term, label, top, sha=elsewhere), "BEV016"))
        out.append(("tampered_bytes", tid, record(term, label, top), "BEV014"))
    return out


def tampered_store(data: CaseData, folder: Path) -> Path:
    """Every marker table under its pinned name, one cell changed that no record's lookup reads (the last
    row's ``pct_out``): only re-hashing the bytes can tell."""
    for sha in sorted(data.versions):
        lines = data.store.read(sha).decode("utf-8").rstrip("\n").split("\n")
        cells = lines[-1].split("\t")
        cells[-1] = "0.999" if cells[-1] != "0.999" else "0.998"
        lines[-1] = "\t".join(cells)
        (folder / f"{sha}.tsv.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
    return folder
