"""The fixed checks of the gate: record integrity and the profile's per-use contracts.

Pure functions over a schema-valid record (a dict) and a ``Profile``; each returns findings.
Semantics match bioai-evidence-validator 0.8.0 rule for rule (see ``docs/rules.md``);
where the correction is known the finding carries a ``Fix`` for the feedback loop.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .findings import Finding, Fix
from .profiles import Profile

Record = dict[str, Any]


def _distinct_nonblank(value: Any) -> bool:
    """Distinct non-blank strings (the schema already guarantees strings matching ``\\S``)."""
    return isinstance(value, list) and len(set(value)) == len(value)


MAX_ID_CHARS = 1000  # a record id, an entity, item, source or line id, a use name (a 3 MiB id was admitted)


def _record_ids(record: Record) -> list[tuple[str, str]]:
    """Every identifier of the record with its path (ids, references to ids, uses, the profile id)."""
    statement = record["statement"]
    found = [("$.record_id", record["record_id"]), ("$.profile_id", record["profile_id"]),
             ("$.statement.id", statement["id"]), ("$.statement.subject.id", statement["subject"]["id"]),
             ("$.statement.object.id", statement["object"]["id"])]
    found += [(f"$.requested_uses[{n}]", u) for n, u in enumerate(record["requested_uses"])]
    for key in ("source_artifacts", "evidence_items", "adjudications"):
        found += [(f"$.{key}[{n}].id", row["id"]) for n, row in enumerate(record.get(key) or [])]
    found += [(f"$.evidence_items[{n}].source_artifact_id", row["source_artifact_id"])
              for n, row in enumerate(record["evidence_items"])]
    for n, line in enumerate(statement["evidence_lines"]):
        found.append((f"$.statement.evidence_lines[{n}].id", line["id"]))
        found += [(f"$.statement.evidence_lines[{n}].evidence_item_ids[{m}]", ref)
                  for m, ref in enumerate(line["evidence_item_ids"])]
    return [(path, value) for path, value in found if isinstance(value, str)]


def _id_values(record: Record) -> list[Any]:
    """The values :func:`_record_ids` lists, in its order, without building their paths (a record whose
    ids are all short, nearly every one, needs no path)."""
    statement = record["statement"]
    values = [record["record_id"], record["profile_id"], statement["id"], statement["subject"]["id"],
              statement["object"]["id"], *record["requested_uses"]]
    for key in ("source_artifacts", "evidence_items", "adjudications"):
        values += [row["id"] for row in record.get(key) or []]
    values += [row["source_artifact_id"] for row in record["evidence_items"]]
    for line in statement["evidence_lines"]:
        values.append(line["id"])
        values += line["evidence_item_ids"]
    return values


def integrity(record: Record, profile: Profile) -> list[Finding]:
    """RECORD_INTEGRITY: profile binding, uses, identifiers and references inside the record."""
    uses = record["requested_uses"]
    statement = record["statement"]
    out: list[Finding] = []

    def error(message: str, path: str, fix: Fix | None = None) -> None:
        out.append(Finding("RECORD_INTEGRITY", "error", message, path, uses, fix))

    long = any(len(value) > MAX_ID_CHARS for value in _id_values(record) if isinstance(value, str))
    for path, value in _record_ids(record) if long else ():
        if len(value) > MAX_ID_CHARS:
            error(f"The identifier at {path} is {len(value):,} characters long; identifiers are at most "
                  f"{MAX_ID_CHARS:,} characters.", path)
    if out:
        return out  # nothing else is worth reading in a record whose ids are megabytes
    if record["profile_id"] != profile.id:
        error(f"Record profile_id {record['profile_id']!r} does not match the selected profile {profile.id!r}.",
              "$.profile_id", Fix("replace", "$.profile_id", profile.id))
    if not _distinct_nonblank(uses) or not uses or set(uses) - profile.uses.keys():
        unknown = sorted(set(uses) - profile.uses.keys()) if isinstance(uses, list) else []
        error("requested_uses must contain distinct uses supported by the selected profile"
              + (f" (unknown: {', '.join(unknown)}; allowed: {', '.join(profile.uses)})." if unknown else "."),
              "$.requested_uses", Fix("choose", "$.requested_uses", list(profile.uses)))
    adjudications = record.get("adjudications") or []
    for path, rows in (("$.source_artifacts", record["source_artifacts"]),
                       ("$.evidence_items", record["evidence_items"]),
                       ("$.statement.evidence_lines", statement["evidence_lines"]),
                       ("$.adjudications", adjudications)):
        ids = [row["id"] for row in rows]
        if len(ids) != len(set(ids)):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            error(f"Duplicate identifiers make references ambiguous: {', '.join(dupes)}.", path)
    artifacts = {row["id"] for row in record["source_artifacts"]}
    items = {row["id"] for row in record["evidence_items"]}
    for index, item in enumerate(record["evidence_items"]):
        if item["source_artifact_id"] not in artifacts:
            error(f"Evidence references an absent source artifact {item['source_artifact_id']!r}.",
                  f"$.evidence_items[{index}].source_artifact_id",
                  Fix("choose", f"$.evidence_items[{index}].source_artifact_id", sorted(artifacts)))
        if not _distinct_nonblank(item["scope"]):
            error("Scope must contain distinct tokens.", f"$.evidence_items[{index}].scope",
                  Fix("replace", f"$.evidence_items[{index}].scope", list(dict.fromkeys(item["scope"]))))
    if not _distinct_nonblank(statement["scope"]):
        error("Scope must contain distinct tokens.", "$.statement.scope",
              Fix("replace", "$.statement.scope", list(dict.fromkeys(statement["scope"]))))
    for index, line in enumerate(statement["evidence_lines"]):
        refs = line["evidence_item_ids"]
        if not _distinct_nonblank(refs) or set(refs) - items:
            missing = sorted(set(refs) - items)
            error("Evidence line has duplicate or unresolved item references"
                  + (f" (unresolved: {', '.join(missing)})." if missing else "."),
                  f"$.statement.evidence_lines[{index}].evidence_item_ids")
    for index, decision in enumerate(adjudications):
        if decision["statement_id"] != statement["id"]:
            error("Adjudication targets a different statement.", f"$.adjudications[{index}].statement_id",
                  Fix("replace", f"$.adjudications[{index}].statement_id", statement["id"]))
        targets = decision["applies_to_uses"]
        if not _distinct_nonblank(targets) or set(targets) - profile.uses.keys():
            error("Adjudication uses must be distinct and supported by this profile.",
                  f"$.adjudications[{index}].applies_to_uses")
    return out


def contracts(record: Record, profile: Profile, verified: Iterable[str] = ()) -> list[Finding]:
    """BEV001-BEV013, BEV020, BEV021: fixed evidence checks plus the per-use contracts.

    ``verified`` holds ids of evidence items a grounder confirmed against their pinned source;
    a type in a use's ``verified_evidence_types`` counts only through such items (BEV020).
    """
    verified = frozenset(verified)
    requested: list[str] = record["requested_uses"]
    statement = record["statement"]
    items = {x["id"]: x for x in record["evidence_items"]}
    out: list[Finding] = []

    def add(code: str, severity: str, message: str, path: str, uses: list[str] | None = None,
            fix: Fix | None = None) -> None:
        out.append(Finding(code, severity, message, path, requested if uses is None else uses, fix))

    if statement["statement_status"] in {"rejected", "superseded"}:
        add("BEV001", "error", f"The statement is {statement['statement_status']} and cannot be admitted.",
            "$.statement.statement_status")
    for index, source in enumerate(record["source_artifacts"]):
        observed = source.get("observed_sha256")
        if observed and observed != source["sha256"]:
            add("BEV002", "error", f"Observed source hash {observed[:12]}… differs from the frozen hash "
                f"{source['sha256'][:12]}…; re-pin the source or fix the record.",
                f"$.source_artifacts[{index}].observed_sha256")
    for key, value, path in (("predicates", statement["predicate"], "$.statement.predicate"),
                             ("subject_types", statement["subject"]["entity_type"], "$.statement.subject.entity_type"),
                             ("object_types", statement["object"]["entity_type"], "$.statement.object.entity_type")):
        allowed = profile.allowlist(key)
        if allowed and value not in allowed:
            add("BEV003", "error", f"{value!r} is outside the profile's allowed {key} ({', '.join(allowed)}).",
                path, fix=Fix("choose", path, list(allowed)))
    supporting: dict[str, dict[str, Any]] = {}
    statement_scope = set(statement["scope"])
    for index, line in enumerate(statement["evidence_lines"]):
        if line["direction"] == "contradicts":
            add("BEV004", "review", "Contradicting evidence remains unresolved.",
                f"$.statement.evidence_lines[{index}]")
        if line["direction"] == "supports":
            for item_id in line["evidence_item_ids"]:
                item = items[item_id]
                if set(item["scope"]) != statement_scope:
                    position = next(i for i, x in enumerate(record["evidence_items"]) if x["id"] == item_id)
                    add("BEV005", "error", f"Supporting evidence {item_id!r} has scope {sorted(item['scope'])}; "
                        f"the statement's scope is {sorted(statement_scope)}.", f"$.statement.evidence_lines[{index}]",
                        fix=Fix("replace", f"$.evidence_items[{position}].scope", list(statement["scope"])))
                else:
                    supporting[item_id] = item
    if not supporting:
        add("BEV006", "review", "No resolved, scope-matched supporting evidence.", "$.statement.evidence_lines")
    types = {item["evidence_type"] for item in supporting.values()}
    decisions = record.get("adjudications") or []
    for use in requested:
        contract = profile.uses[use]
        missing = sorted(set(contract.required_evidence_types) - types)
        if missing:
            add("BEV007", "error", "Missing supporting evidence types: " + ", ".join(missing), "$.evidence_items",
                [use], Fix("add", "$.evidence_items", missing, "add supporting evidence items of these types"))
        for kind in contract.verified_evidence_types:
            if kind in types and not any(item_id in verified for item_id, item in supporting.items()
                                         if item["evidence_type"] == kind):
                add("BEV020", "review", f"Required evidence type {kind!r} is not verified against its source.",
                    "$.evidence_items", [use])
        groups: list[tuple[str | None, list[dict[str, Any]]]] = [
            (kind, [item for item in supporting.values() if item["evidence_type"] == kind])
            for kind in contract.required_evidence_types
        ] or [(None, list(supporting.values()))]
        for group_kind, evidence in groups:
            methods = {item["extraction_method"] for item in evidence}
            context = f"Required evidence type {group_kind!r}" if group_kind is not None else "Supporting evidence"
            if methods == {"llm_extraction"} and not contract.allow_llm_only:
                add("BEV008", "review", context + " comes only from LLM extraction.", "$.evidence_items", [use])
            if methods == {"normalized_string_match"} and not contract.allow_string_match_only:
                add("BEV009", "review", context + " comes only from normalized string matching.",
                    "$.evidence_items", [use])
            if len(methods) > 1 and methods <= {"llm_extraction", "normalized_string_match"} \
                    and not (contract.allow_llm_only and contract.allow_string_match_only):
                add("BEV013", "review", context + " mixes only LLM extraction and string matching.",
                    "$.evidence_items", [use])
        if contract.require_independent_review:
            out.extend(_independent_review(record, decisions, use))
        human = {d["decision"] for d in decisions
                 if d["reviewer"]["agent_type"] == "human" and use in d["applies_to_uses"]}
        if contract.require_human_acceptance and "accept" not in human:
            add("BEV010", "error", f"Use {use!r} requires explicit human acceptance.", "$.adjudications", [use])
        if "reject" in human:
            add("BEV011", "error", f"A human rejection remains present for use {use!r}.", "$.adjudications", [use])
        if "defer" in human:
            add("BEV012", "review", f"A human decision is deferred for use {use!r}.", "$.adjudications", [use])
    return out


def _independent_review(record: Record, decisions: list[dict[str, Any]], use: str) -> list[Finding]:
    """BEV021: an accepting non-human reviewer that created none of the evidence, and no other verdict."""
    authors = {item["created_by"]["id"] for item in record["evidence_items"] if item.get("created_by")}
    created_by = record["statement"].get("created_by")
    if created_by:
        authors.add(created_by["id"])
    reviews = [d for d in decisions if d["reviewer"]["agent_type"] != "human" and use in d["applies_to_uses"]
               and d["reviewer"]["id"] not in authors]
    verdicts = {d["decision"] for d in reviews}
    if "accept" in verdicts and verdicts <= {"accept"}:
        return []
    message = (f"An independent reviewer did not accept use {use!r}." if reviews else
               f"Use {use!r} needs an accepting review by a non-human reviewer that created none of the evidence.")
    return [Finding("BEV021", "review", message, "$.adjudications", [use])]


def unchecked_publications(record: Record) -> list[Finding]:
    """BEV029: publication evidence validated with no literature grounder (nothing checked its quotes).

    A source is a paper when it is declared ``publication`` or its ``uri`` is a ``pmid:``,
    ``pmcid:`` or ``doi:`` identifier (the literature grounder's own rule, without the store).
    """
    from ..sources.identifiers import parse_identifier

    papers = {s["id"] for s in record["source_artifacts"]
              if s.get("source_type") == "publication" or parse_identifier(s.get("uri")) is not None}
    cited = [item for item in record["evidence_items"] if item["source_artifact_id"] in papers]
    if not cited:
        return []
    quotes = sum(1 for item in cited if isinstance(item.get("extracted_text"), str) and item["extracted_text"].strip())
    if quotes == 1:
        what = "1 quote was not checked against its paper"
    elif quotes:
        what = f"{quotes} quotes were not checked against their papers"
    elif len(cited) == 1:
        what = "1 evidence item cites a paper that was not checked"
    else:
        what = f"{len(cited)} evidence items cite papers that were not checked"
    return [Finding("BEV029", "review", f"{what}: no literature source was given (pin the papers with "
                    "bioevidence ground and pass --snapshot-dir, or --no-grounding to accept unchecked quotes)",
                    "$.evidence_items", record["requested_uses"])]


#: what a declared release checks, in the words a finding uses, and the option that adds it
_RELEASES = {"ontologies": ("ontology term", "--ontology"), "genes": ("gene identifier", "--genes")}


def _release_prefix(release: Any) -> str:
    """The ontology id a release is named by (``cl``, ``releases/cl.obo.gz``, ``vbo@2026-04-15`` → its
    CURIE prefix, case-folded): the ontology grounder checks every id with that prefix."""
    name = str(release).replace("\\", "/").rsplit("/", 1)[-1]
    return re.split(r"[.@:]", name, maxsplit=1)[0].casefold()


def _identifiers(record: Record, kind: str, roots: dict[str, Any], releases: Iterable[Any] = ()) -> list[str]:
    """The record's identifiers a release of ``kind`` would check: for ontologies the subject's and
    object's ids whose ``entity_type`` is a root's kind, or whose prefix is a root's or a named
    release's (the grounder checks those even without ``term_roots``); for genes those of type
    ``gene`` or prefix ``HGNC``, and each evidence item's ``gene=`` locator value."""
    from .grounders.common import entities, items, pairs

    if kind == "ontologies":
        types = {str(k) for k in roots}
        prefixes = {str(v).split(":", 1)[0].casefold() for v in roots.values()} | {_release_prefix(r) for r in releases}
    else:
        types, prefixes = {"gene"}, {"hgnc"}
    out = []
    for _path, entity in entities(record):
        value = entity.get("id")
        if not isinstance(value, str):
            continue
        prefix = value.split(":", 1)[0].casefold() if ":" in value else ""
        if entity.get("entity_type") in types or prefix in prefixes:
            out.append(value)
    if kind == "genes":
        for _index, item in items(record):
            gene = (pairs(item.get("locator")) or {}).get("gene")
            if gene:
                out.append(gene)
    return list(dict.fromkeys(out))


def unchecked_identifiers(record: Record, profile: Profile, grounders: Iterable[Any]) -> list[Finding]:
    """BEV029: a profile whose ``grounders:`` names ontology or gene releases (``cell-type``), and a
    record of it validated with no grounder of that kind: its identifiers were not checked (a
    swapped CL id, a nonexistent HGNC id, an alias label), so it is not admitted as if they had
    been. One finding per kind, naming the identifiers, the release and how to give it."""
    section = profile.grounders or {}
    given = list(grounders)
    ran = {"ontologies": any(getattr(g, "grounds_terms", False) for g in given),
           "genes": any(getattr(g, "grounds_genes", False) for g in given)}
    raw_roots = section.get("term_roots")
    roots: dict[str, Any] = raw_roots if isinstance(raw_roots, dict) else {}
    out = []
    for kind, (words, flag) in _RELEASES.items():
        releases = section.get(kind)
        releases = [releases] if isinstance(releases, str) else releases
        if not releases or ran[kind]:
            continue
        ids = _identifiers(record, kind, roots, releases)
        if not ids:
            continue
        names = ", ".join(str(r) for r in releases)
        what = f"the {words} {ids[0]} was" if len(ids) == 1 else f"{len(ids)} {words}s ({', '.join(ids)}) were"
        out.append(Finding("BEV029", "review", f"{what} not checked: profile {profile.id!r} names the release "
                           f"{names} and none was given (run bioevidence sources pull {releases[0]}, then "
                           f"validate with --profile {profile.id} or {flag} FILE)", "$.statement",
                           record["requested_uses"]))
    return out


def quote_parts(record: Record, profile: Profile, located: Iterable[Any]) -> list[Finding]:
    """BEV032: a verified quote from a part of the paper the profile's ``quote_parts`` leaves out."""
    allowed = profile.quote_parts
    if not allowed:
        return []
    index = {item["id"]: i for i, item in enumerate(record["evidence_items"])}
    out = []
    for location in located:
        if location.part not in allowed:
            out.append(Finding("BEV032", "review", f"the quote is from the {location.part} part of the paper "
                               f"({location.section or location.label or location.passage}); this profile quotes "
                               f"only {', '.join(allowed)}", f"$.evidence_items[{index.get(location.item_id, 0)}]"
                               ".extracted_text", record["requested_uses"]))
    return out


def decide(requested_uses: list[str], findings: list[Finding]) -> list[dict[str, Any]]:
    """Per-use decisions: rejected on any relevant error, review on any relevant review, else admitted.

    ``warning`` and ``info`` findings block nothing and are not reason codes."""
    decisions = []
    for use in requested_uses:
        relevant = [f for f in findings if f.severity in ("error", "review")
                    and (f.rule_id in ("SCHEMA", "RECORD_INTEGRITY") or use in f.blocking_uses)]
        status = ("rejected" if any(f.severity == "error" for f in relevant) else
                  "review_required" if any(f.severity == "review" for f in relevant) else "admitted")
        decisions.append({"use": use, "admission_status": status,
                          "reason_codes": sorted({f.rule_id for f in relevant})})
    return decisions


def overall(decisions: list[dict[str, Any]], findings: list[Finding]) -> str:
    if not decisions or any(f.severity == "error" for f in findings):
        return "rejected"
    if any(d["admission_status"] == "review_required" for d in decisions):
        return "review_required"
    return "admitted"
