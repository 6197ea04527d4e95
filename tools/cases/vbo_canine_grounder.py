"""A VBO dog-name grounder, written as a user of bioevidence would write one: through the public
grounder API (an object with ``name`` and ``ground(record) -> Grounding``), with the built-in
source-bytes and ontology grounders doing what they already do.

The pinned source is the peer's projection of the Vertebrate Breed Ontology (every non-obsolete
term under Dog breed, VBO:0400024: id, name, EXACT synonyms, ``is_a`` parents and the stanza's
line in the upstream OBO file), read in place from the peer's sdist and re-hashed before it is
parsed. The name index is the one the case's records were built from: a name and each EXACT
synonym, case-folded with whitespace collapsed; a name's candidates are every term carrying it.

What each piece checks on a record mapping a dog name (subject label) to a VBO term (object):

* ``source-bytes`` (built in): every source's ``sha256`` is pinned (BEV015) and re-hashes (BEV014);
* ``ontology:VBO@<release>`` (built in, fed an OBO rendering of the verified projection): the object
  exists (BEV016, with the closest labels), its label is the term's name or an EXACT synonym
  (BEV017), it lies under Dog breed (BEV024);
* ``vbo-name-index:VBO@<release>`` (this module; it runs the ontology grounder, which also checks a
  release tag in the scope against the pinned release): the object is among the subject
  name's candidates (BEV017), the source's version is the pinned
  one (BEV017), the term assertion (id, name, query, stanza line) and the candidate resolution
  (candidates, unique or ambiguous, index entry) recomputed from the projection (BEV016, BEV017),
  and an item of a kind the projection cannot show (BEV015).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bioevidence import Finding, Fix, Grounder, GrounderOptions, Grounding, SnapshotStore, build_grounders

DOG_BREED = "VBO:0400024"
OBJECT_KIND = "ontology_term"
RELEASE_TAG = re.compile(r"^VBO:(v\d{4}-\d{2}-\d{2})$")  # a release named in a scope, e.g. VBO:v2026-04-15
# Severities of the codes this grounder writes, as docs/rules.md lists them (the helper that reads the
# catalogue, bioevidence.gate.grounding.finding, is not public API).
SEVERITY = {"BEV015": "review", "BEV016": "error", "BEV017": "error"}
RESOLUTION_TYPES = ("unique_label_resolution", "ambiguous_label_resolution")
ASSERTION_TYPE = "ontology_name_assertion"


def normalized(name: str) -> str:
    """How the case indexes names: case-folded, runs of whitespace as one space."""
    return " ".join(name.casefold().split())


@dataclass(frozen=True)
class DogNames:
    """The verified projection: terms by id and the name index (normalised name → sorted term ids)."""

    release: str
    sha256: str
    terms: dict[str, dict[str, Any]]
    index: dict[str, tuple[str, ...]]

    @classmethod
    def from_store(cls, store: SnapshotStore, sha256: str, release: str) -> DogNames:
        """Parse the projection after the store re-hashed its bytes (``SnapshotStore.read``)."""
        rows = json.loads(store.read(sha256))
        if not isinstance(rows, list):
            raise ValueError("the VBO projection is not a JSON list of terms")
        terms: dict[str, dict[str, Any]] = {}
        owners: dict[str, set[str]] = {}
        for row in rows:
            if not isinstance(row, dict) or not isinstance(row.get("id"), str) or row["id"] in terms:
                raise ValueError(f"the VBO projection holds a malformed or repeated term: {row!r:.80}")
            terms[row["id"]] = row
            for label in (row["name"], *row["exact_synonyms"]):
                owners.setdefault(normalized(label), set()).add(row["id"])
        return cls(release, sha256, terms, {key: tuple(sorted(ids)) for key, ids in owners.items()})

    def candidates(self, name: str) -> tuple[str, ...]:
        return self.index.get(normalized(name), ())

    def describe(self, term_ids: tuple[str, ...]) -> str:
        return ", ".join(f"{t} ({self.terms[t]['name']})" for t in term_ids) or "no term"

    def obo(self) -> str:
        """The projection as OBO 1.2, the one format the built-in ontology grounder reads."""
        lines = ["format-version: 1.2", f"data-version: {self.release}", "ontology: vbo", ""]
        for term_id in sorted(self.terms):
            term = self.terms[term_id]
            lines += ["[Term]", f"id: {term_id}", f"name: {term['name']}"]
            for synonym in term["exact_synonyms"]:
                escaped = synonym.replace("\\", "\\\\").replace('"', '\\"')
                lines.append(f'synonym: "{escaped}" EXACT []')
            lines += [f"is_a: {parent}" for parent in term["is_a"]]
            lines.append("")
        return "\n".join(lines)


def _finding(code: str, message: str, path: str, uses: list[str], fix: Fix | None = None) -> Finding:
    return Finding(code, SEVERITY[code], message, path, list(uses), fix)


def _claims(item: dict[str, Any]) -> dict[str, Any]:
    try:
        value = json.loads(item.get("extracted_text") or "null")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


class VboNameIndexGrounder:
    """Recompute from the pinned VBO projection what a dog-name mapping record asserts about it."""

    grounds_terms = True  # it runs the ontology grounder (the validator's BEV029 check reads this)

    def __init__(self, names: DogNames, ontology: Grounder | None = None) -> None:
        self.names = names
        self.ontology = ontology
        self.name = f"vbo-name-index:VBO@{names.release}"

    def ground(self, record: dict[str, Any]) -> Grounding:
        statement = record["statement"]
        uses = [u for u in record.get("requested_uses", []) if isinstance(u, str)]
        scope = [t for t in statement.get("scope", []) if isinstance(t, str)]
        tags = {f"$.statement.scope[{i}]": m.group(1) for i, t in enumerate(scope) if (m := RELEASE_TAG.match(t))}
        found: list[Finding] = []
        if self.ontology is not None:  # it checks the release tag in the scope too (VBO:v2026-04-15)
            found += self.ontology.ground(record).findings
        sources = list(enumerate(record.get("source_artifacts", [])))
        pinned = {s["id"] for _, s in sources if s.get("sha256") == self.names.sha256}
        if not pinned and self.names.release not in tags.values():
            return Grounding(found)  # neither the pinned bytes nor the pinned release: not this source's record
        found += self._release(tags, sources, uses)
        found += self._target(statement, uses)
        verified: set[str] = set()
        for index, item in enumerate(record["evidence_items"]):
            if item.get("source_artifact_id") not in pinned:
                continue
            problems = list(self._item(statement, index, item, uses))
            found += problems
            if not problems:
                verified.add(item["id"])
        return Grounding(found, frozenset(verified))

    def _release(self, tags: dict[str, str], sources: list[tuple[int, dict[str, Any]]],
                 uses: list[str]) -> Iterator[Finding]:
        pinned = self.names.release
        for index, source in sources:
            version = str(source.get("version", ""))
            if source.get("sha256") == self.names.sha256 and version.split(":", 1)[0] != pinned:
                path = f"$.source_artifacts[{index}].version"
                yield _finding("BEV017", f"the source's version {version!r} does not name the release its pinned "
                               f"bytes are ({pinned})", path, uses)

    def _target(self, statement: dict[str, Any], uses: list[str]) -> Iterator[Finding]:
        name = str(statement["subject"].get("label", ""))
        target = str(statement["object"].get("id", ""))
        candidates = self.names.candidates(name)
        path = "$.statement.object.id"
        if target not in self.names.terms:
            if self.ontology is None:  # else the ontology grounder's BEV016 names the closest labels
                yield _finding("BEV016", f"{target} is not a term of the pinned VBO {self.names.release} dog "
                               "projection", path, uses)
        elif target not in candidates:
            found = self.names.describe((target,))
            fix = Fix("replace", path, candidates[0], f"use {candidates[0]}") if len(candidates) == 1 else None
            yield _finding("BEV017", f"{name!r} is not the name or an EXACT synonym of {found} in VBO "
                           f"{self.names.release}; the terms that carry it: {self.names.describe(candidates)}",
                           path, uses, fix)

    def _item(self, statement: dict[str, Any], index: int, item: dict[str, Any],
              uses: list[str]) -> Iterator[Finding]:
        path = f"$.evidence_items[{index}]"
        kind = item.get("evidence_type")
        name = str(statement["subject"].get("label", ""))
        claims = _claims(item)
        if kind == ASSERTION_TYPE:
            cited = self.names.terms.get(str(claims.get("id")))
            if cited is None:
                yield _finding("BEV016", f"the asserted term {claims.get('id')!r} is not in the pinned VBO "
                               f"{self.names.release} dog projection", f"{path}.extracted_text", uses)
                return
            locator = f"term:{cited['id']};upstream-line:{cited['upstream_line']}"
            wrong = [what for what, ok in (("name", claims.get("name") == cited["name"]),
                                           ("statement's object", claims.get("id") == statement["object"].get("id")),
                                           ("query", claims.get("query") == name),
                                           ("locator", item.get("locator") == locator)) if not ok]
            if wrong:
                yield _finding("BEV017", f"the term assertion disagrees with the projection's {cited['id']} "
                               f"('{cited['name']}', {locator}) or with the statement: {', '.join(wrong)}",
                               f"{path}.extracted_text", uses)
        elif kind in RESOLUTION_TYPES:
            candidates = list(self.names.candidates(name))
            expected = RESOLUTION_TYPES[0] if len(candidates) == 1 else RESOLUTION_TYPES[1]
            entry = "name-index:" + normalized(name)
            if claims.get("candidate_ids") != candidates or kind != expected or item.get("locator") != entry:
                yield _finding("BEV017", f"the candidate resolution differs from the name index recomputed from the "
                               f"projection: {name!r} is carried by {self.names.describe(tuple(candidates))} "
                               f"({expected}, locator {entry})", path, uses)
        else:
            yield _finding("BEV015", f"the pinned VBO projection holds term names, EXACT synonyms and is_a "
                           f"parents only; it cannot confirm a {kind!r} item", path, uses)


def dog_name_grounders(projection: Path, sha256: str, release: str, workdir: Path) -> tuple[list[Grounder], DogNames]:
    """The grounders for the case, built with ``build_grounders`` over a snapshot folder that names the
    projection by its hash (a symbolic link: the peer's file is read in place) and an OBO rendering of the
    verified projection, both under ``workdir``."""
    store = workdir / "store"
    store.mkdir(parents=True)
    (store / f"{sha256}.json").symlink_to(projection.resolve())
    names = DogNames.from_store(SnapshotStore(store), sha256, release)
    obo = workdir / "vbo-dogs.obo"
    obo.write_text(names.obo(), encoding="utf-8")
    built = build_grounders(GrounderOptions(snapshot_dir=store, ontologies=(obo,),
                                            term_roots={OBJECT_KIND: DOG_BREED}, cache_root=workdir / "cache"))
    by_name = {g.name.split(":", 1)[0]: g for g in built if isinstance(g, Grounder)}
    return [by_name["source-bytes"], VboNameIndexGrounder(names, by_name["ontology"])], names
