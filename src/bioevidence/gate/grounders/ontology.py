"""Ontology grounder: cited terms exist, are current, carry their own label and are of the right kind.

Checked places: the statement's subject and object (``id``, ``label``, ``entity_type``), the
statement's scope tokens (ids only), and locator keys named in ``roots`` (``cell_type=CL:…``).
For an id whose prefix belongs to a loaded release:

* unknown → BEV016, naming the term the label belongs to or the closest labels;
* obsolete → BEV023, naming ``replaced_by`` (the fix) or the ``consider`` terms;
* the label is neither the name nor an EXACT synonym (case, punctuation and a plain plural
  ignored) → BEV017, naming the term's name and the term the label belongs to;
* with a root for the entity type or locator key: another prefix, or not under the root
  through ``is_a`` → BEV024, naming the term under the root that the label belongs to.

Ids of ontologies that are not loaded are skipped (another grounder's business), except where
a root demands a prefix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..findings import Finding, Fix
from ..grounding import Grounding, finding
from .common import CURIE, curie_form, entities, items, pairs, requested_uses, scope_tokens
from .obo import Ontology


def _prefix(curie: str) -> str:
    return curie.split(":", 1)[0].upper() if ":" in curie else ""


#: A release tag in a scope token (``VBO:v2026-04-15``, ``CL:2026-06-08``), not a term id.
_RELEASE_TAG = re.compile(r"v?(\d{4}-\d{2}-\d{2})")


class OntologyGrounder:
    """Ground ontology terms against one or more loaded OBO releases."""

    grounds_terms = True  # the validator's BEV029 check of unchecked identifiers reads it

    def __init__(self, ontologies: Sequence[Ontology], roots: Mapping[str, str] | None = None) -> None:
        if not ontologies:
            from ...errors import ConfigurationError

            raise ConfigurationError("the ontology grounder needs at least one release (--ontology FILE)")
        self.ontologies = list(ontologies)
        self.roots = dict(roots or {})
        self.name = "ontology:" + ",".join(o.release for o in self.ontologies)
        self._by_prefix = {o.prefix: o for o in self.ontologies}

    def _ontology_for(self, curie: str) -> Ontology | None:
        onto = self._by_prefix.get(_prefix(curie))
        if onto is not None:
            return onto
        return next((o for o in self.ontologies if curie in o.terms), None)

    def _describe(self, onto: Ontology, term_id: str) -> str:
        raw = onto.terms.get(term_id)
        return f"{term_id} ({raw[0]})" if raw else term_id

    def _label_owner(self, label: str, root: str | None) -> list[tuple[Ontology, str]]:
        out: list[tuple[Ontology, str]] = []
        for onto in self.ontologies:
            for term_id in onto.owners(label):
                if root is None or root in onto.ancestors(term_id):
                    out.append((onto, term_id))
        return out

    def _malformed(self, curie: str, label: str | None, kind: str | None, root: str | None, path: str,
                   uses: list[str]) -> Finding | None:
        """BEV024 for an id not written as a CURIE of its place: ``CL_0000236``, ``CL0000236``,
        ``cl:0000236``, ``0000236`` or a label (``B cell``) where a term under ``root`` is cited, and a
        loaded prefix in the wrong case anywhere. Names the term meant (the label's, else the id's)."""
        if root is not None:
            prefix = root.split(":", 1)[0]
        elif ":" in curie and curie.split(":", 1)[0] != _prefix(curie) and _prefix(curie) in self._by_prefix:
            prefix = _prefix(curie)  # a loaded prefix, written in another case
        else:
            return None
        ok, meant = curie_form(curie, prefix)
        if ok or (root is not None and CURIE.fullmatch(curie) and _prefix(curie) != prefix.upper()):
            return None  # a CURIE: of the right prefix, or of another one (the wrong-kind check names it)
        onto = self._by_prefix.get(prefix.upper())
        owners = self._label_owner(label, root) if label else []
        target = owners[0][1] if owners else (meant if onto is not None and meant and onto.term(meant) else None)
        where = f"{kind} ids" if kind and root else "ids"
        given = curie.split(":", 1)[0] if ":" in curie else None
        how = f"writes its prefix as {given!r}" if given and given.upper() == prefix.upper() else "is not a CURIE"
        message = f"{curie!r} {how}: {where} are written {prefix}:<local id>"
        if root is not None:
            message += f" (terms under {root})"
        if target is not None and onto is not None:
            whose = f"'{label}' is" if owners else "the id meant is"
            message += f"; {whose} {self._describe(owners[0][0] if owners else onto, target)}"
        return finding("BEV024", message, f"{path}.id", uses,
                       Fix("replace", f"{path}.id", target, f"use {target}") if target else None)

    def _check_release(self, token: str, date: str, path: str, uses: list[str]) -> list[Finding]:
        """A scope token ``PREFIX:vYYYY-MM-DD`` names the release the record was made against: it must be
        the pinned one (BEV017 naming both otherwise)."""
        onto = self._ontology_for(token)
        assert onto is not None
        pinned = onto.release.split("@", 1)[1]
        if pinned.lstrip("v") == date:
            return []
        prefix = token.split(":", 1)[0]
        return [finding("BEV017", f"the scope names {prefix} release {date}, but the pinned release is {pinned}: "
                        "the record was made against another release", path, uses,
                        Fix("replace", path, f"{prefix}:v{pinned.lstrip('v')}", f"the pinned release is {pinned}"))]

    def check_term(self, curie: str, label: str | None, kind: str | None, path: str,
                   uses: list[str]) -> list[Finding]:
        """Findings for one cited term (``label``/``kind`` optional); see module docstring."""
        root = self.roots.get(kind) if kind else None
        malformed = self._malformed(curie, label, kind, root, path, uses)
        if malformed is not None:
            return [malformed]
        onto = self._ontology_for(curie)
        out: list[Finding] = []
        if root is not None and _prefix(curie) != _prefix(root):
            owners = self._label_owner(label, root) if label else []
            hint = f"; '{label}' is {self._describe(owners[0][0], owners[0][1])}" if owners else ""
            out.append(finding(
                "BEV024", f"{curie} is not a {kind} term: {kind} ids are {_prefix(root)} terms under {root}{hint}",
                f"{path}.id", uses,
                Fix("replace", f"{path}.id", owners[0][1], f"use {owners[0][1]}") if owners else None))
            return out
        if onto is None:
            return out
        term = onto.term(curie)
        if term is None:
            if _prefix(curie) != onto.prefix:
                return out
            owners = self._label_owner(label, root) if label else []
            if owners:
                hint = f"'{label}' is {self._describe(*owners[0])}"
                fix = Fix("replace", f"{path}.id", owners[0][1], hint)
            else:
                close = onto.close_labels(label) if label else []
                hint = ("closest labels: " + ", ".join(f"{i} ({n})" for i, n in close)) if close \
                    else "check the id"
                fix = None
            out.append(finding("BEV016", f"{curie} does not exist in {onto.release}; {hint}",
                               f"{path}.id", uses, fix))
            return out
        if term.obsolete:
            if len(term.replaced_by) == 1:
                new = term.replaced_by[0]
                new_onto = self._ontology_for(new)
                new_desc = self._describe(new_onto, new) if new_onto else new
                out.append(finding("BEV023", f"{curie} ({term.name}) is obsolete in {onto.release}; "
                                   f"it is replaced by {new_desc}", f"{path}.id", uses,
                                   Fix("replace", f"{path}.id", new, f"use {new_desc}")))
            else:
                options = term.replaced_by + term.consider
                named = ", ".join(self._describe(onto, t) for t in options) if options else "no replacement given"
                out.append(finding("BEV023", f"{curie} ({term.name}) is obsolete in {onto.release}; "
                                   f"consider {named}", f"{path}.id", uses))
            return out
        if label is not None and curie not in onto.owners(label):
            owners = self._label_owner(label, root) or self._label_owner(label, None)
            belongs = "; ".join(
                f"'{label}' is {'the name' if _key(o.terms[t][0]) == _key(label) else 'an exact synonym'}"
                f" of {self._describe(o, t)}" for o, t in owners[:3])
            message = f"'{label}' is not the name or an exact synonym of {curie}, which is '{term.name}'"
            if belongs:
                message += f"; {belongs}"
            out.append(finding("BEV017", message, f"{path}.label", uses,
                               Fix("replace", f"{path}.label", term.name,
                                   f"or cite {owners[0][1]} if '{label}' was meant" if owners else None)))
        if root is not None and root not in onto.ancestors(curie):
            owners = self._label_owner(label, root) if label else []
            hint = f"; '{label}' is {self._describe(*owners[0])}" if owners else ""
            root_onto = self._ontology_for(root)
            root_desc = self._describe(root_onto, root) if root_onto else root
            out.append(finding("BEV024", f"{curie} ({term.name}) is not a {kind}: it is not under {root_desc}{hint}",
                               f"{path}.id", uses,
                               Fix("replace", f"{path}.id", owners[0][1]) if owners else None))
        return out

    def ground(self, record: dict[str, Any]) -> Grounding:
        uses = requested_uses(record)
        found: list[Finding] = []
        for path, entity in entities(record):
            curie = entity.get("id")
            kind = entity.get("entity_type") if isinstance(entity.get("entity_type"), str) else None
            if not isinstance(curie, str) or (":" not in curie and kind not in self.roots):
                continue  # an id without a prefix is checked only where a root names the prefix
            label = entity.get("label") if isinstance(entity.get("label"), str) else None
            if kind not in self.roots and self._ontology_for(curie) is None:
                continue
            found.extend(self.check_term(curie, label, kind, path, uses))
        for index, token in enumerate(scope_tokens(record)):
            if ":" in token and self._ontology_for(token) is not None:
                path = f"$.statement.scope[{index}]"
                pin = _RELEASE_TAG.fullmatch(token.split(":", 1)[1])
                if pin is not None:  # VBO:v2026-04-15 pins the release, it names no term
                    found.extend(self._check_release(token, pin.group(1), path, uses))
                else:
                    found.extend(self.check_term(token, None, None, path, uses))
        for index, item in items(record):
            locator = str(item.get("locator", ""))
            kv = pairs(locator.split("#", 1)[0])
            for key, value in (kv or {}).items():
                if key in self.roots:
                    path = f"$.evidence_items[{index}].locator"
                    for f in self.check_term(value, None, key, path, uses):
                        fix = f.fix
                        if fix is not None and isinstance(fix.value, str):
                            fix = Fix("replace", path, locator.replace(f"{key}={value}", f"{key}={fix.value}"),
                                      fix.detail)
                        found.append(Finding(f.rule_id, f.severity, f.message, path, f.blocking_uses, fix))
        return Grounding(found)


def _key(label: str) -> str:
    from .obo import label_key

    return label_key(label)
