"""Gene grounder over HGNC releases: approved symbols and ids, previous symbols, aliases, withdrawals.

Reads the official ``hgnc_complete_set`` TSV (``hgnc_id``, ``symbol``, ``status``,
``alias_symbol``, ``prev_symbol``; ``|``-separated lists) or an HGNC custom download
(``HGNC ID``, ``Approved symbol``, ``Approved name``, ``Status``, ``Alias symbols``, ``Previous
symbols``; comma-separated), plain or gzip. Several files may be combined (e.g. the complete
set plus a custom download that lists withdrawn entries). The index is cached on disk by the
files' SHA-256.

For entities of type ``gene`` or with an ``HGNC:`` id, and for the locator key ``gene``:

* a statement scope naming a non-human ``NCBITaxon:`` → one BEV015 (HGNC is human only);
* unknown HGNC id → BEV016; withdrawn id → BEV023 naming the entry it was merged into (or that
  the symbol now names another gene, when a withdrawn symbol was reused);
* label not the approved symbol (or name) of the id → BEV017 naming the symbol;
* symbol that is a previous symbol or an alias → BEV023 naming the approved symbol(s);
  wrong case → BEV023; withdrawn symbol → BEV023; unknown symbol → BEV016 with close matches.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ...io import gunzip_limited
from ...limits import size_limit
from ..findings import Finding, Fix
from ..grounding import Grounding, finding
from .cache import cached
from .common import CURIE, curie_form, entities, items, pairs, requested_uses, scope_tokens

INDEX_VERSION = 2  # 2: an entry's merged-into ids once each (HGNC's name links each twice)
HUMAN = "NCBITaxon:9606"
_SEE = re.compile(r"HGNC:\d+")
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")

_COLUMNS = {
    "official": ("hgnc_id", "symbol", "name", "status", "alias_symbol", "prev_symbol"),
    "custom": ("HGNC ID", "Approved symbol", "Approved name", "Status", "Alias symbols", "Previous symbols"),
}


def _split(value: str, sep: str) -> list[str]:
    value = value.strip().strip('"')
    return [v.strip() for v in value.split(sep) if v.strip()] if value else []


def build_index(data: bytes) -> dict[str, Any]:
    """Index one HGNC TSV into plain values."""
    text = data.decode("utf-8-sig")
    reader = csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(reader, [])
    layout = next((name for name, cols in _COLUMNS.items() if all(c in header for c in cols)), None)
    if layout is None:
        raise ConfigurationError(
            "the genes file is neither the HGNC complete set (hgnc_id, symbol, status, alias_symbol, "
            "prev_symbol) nor an HGNC custom download (HGNC ID, Approved symbol, Status, ...); "
            "download hgnc_complete_set.txt from genenames.org")
    cols = [header.index(c) for c in _COLUMNS[layout]]
    sep = "|" if layout == "official" else ","
    ids: dict[str, tuple[Any, ...]] = {}
    for row in reader:
        if len(row) <= max(cols):
            continue
        hgnc_id, symbol, name, status = (row[c].strip().strip('"') for c in cols[:4])
        if not hgnc_id.startswith("HGNC:"):
            continue
        # "symbol withdrawn, see [HGNC:12469](/data/gene-symbol-report/#!/hgnc_id/HGNC:12469)": each id once
        see = tuple(dict.fromkeys(_SEE.findall(name))) if "withdrawn" in status.lower() else ()
        aliases = tuple(_split(row[cols[4]], sep))
        prevs = tuple(_split(row[cols[5]], sep))
        ids[hgnc_id] = (symbol, name, status, see, aliases, prevs)
    return {"ids": ids}


@dataclass
class Genes:
    """A merged HGNC index with the lookups the grounder needs.

    ``ids``: HGNC id → (symbol, name, status, merged-into ids); ``approved``: symbol → id;
    ``withdrawn``, ``previous``, ``alias``: symbol → ids.
    """

    version: str
    ids: dict[str, tuple[Any, ...]]
    approved: dict[str, str]
    withdrawn: dict[str, tuple[str, ...]]
    previous: dict[str, tuple[str, ...]]
    alias: dict[str, tuple[str, ...]]

    def __post_init__(self) -> None:
        self.upper = {s.upper(): s for s in self.approved}

    @property
    def release(self) -> str:
        return f"HGNC@{self.version}"

    def symbol_of(self, hgnc_id: str) -> str:
        return str(self.ids[hgnc_id][0])

    def close(self, symbol: str, n: int = 3) -> list[str]:
        import difflib

        return difflib.get_close_matches(symbol.upper(), list(self.upper), n=n, cutoff=0.75)


def _lookups(entries: dict[str, tuple[Any, ...]]) -> dict[str, Any]:
    """The grounder's lookup tables from full entries, as plain values (cached with marshal)."""
    approved: dict[str, str] = {}
    withdrawn: dict[str, list[str]] = {}
    previous: dict[str, list[str]] = {}
    alias: dict[str, list[str]] = {}
    for hgnc_id, (symbol, _name, status, _see, aliases, prevs) in entries.items():
        if status == "Approved":
            approved[symbol] = hgnc_id
            for s in prevs:
                previous.setdefault(s, []).append(hgnc_id)
            for s in aliases:
                alias.setdefault(s, []).append(hgnc_id)
        else:
            withdrawn.setdefault(symbol, []).append(hgnc_id)

    def frozen(table: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
        return {k: tuple(v) for k, v in table.items()}

    return {"ids": {k: tuple(v[:4]) for k, v in entries.items()}, "approved": approved,
            "withdrawn": frozen(withdrawn), "previous": frozen(previous), "alias": frozen(alias)}


def load_genes(paths: Sequence[Path | str], *, version: str | None = None, cache_root: Path | None = None,
               max_inflated: int | None = None) -> Genes:
    """Load and merge HGNC files (plain or gzip); ``version`` defaults to the date in the first file name.

    The merged lookups are cached on disk, keyed by the SHA-256 of every file as stored (each is
    hashed in full; gzip is decompressed only to build the index).
    """
    if not paths:  # an empty index would call every gene unknown
        raise ConfigurationError("the gene grounder needs at least one HGNC file (--genes FILE)")
    stored: list[tuple[Path, bytes]] = []
    for path in map(Path, paths):
        try:
            stored.append((path, path.read_bytes()))
        except OSError as exc:
            raise ConfigurationError(f"cannot read genes file {path}: {exc.strerror}; check --genes",
                                     path=str(path)) from exc
    key = hashlib.sha256(b"".join(hashlib.sha256(raw).digest() for _, raw in stored)).hexdigest()

    def build() -> dict[str, Any]:
        merged: dict[str, tuple[Any, ...]] = {}
        for path, raw in stored:
            if raw[:2] == b"\x1f\x8b":
                try:
                    raw = gunzip_limited(raw, size_limit("max_inflated", max_inflated), name=str(path))
                except (OSError, EOFError, zlib.error) as exc:
                    raise ConfigurationError(f"{path} is not valid gzip", path=str(path)) from exc
            for hgnc_id, entry in build_index(raw)["ids"].items():
                if hgnc_id not in merged or merged[hgnc_id][2] != "Approved":
                    merged[hgnc_id] = tuple(entry)
        return _lookups(merged)

    tables = cached("hgnc-files", key, INDEX_VERSION, build, cache_root)
    if version is None:
        first = Path(paths[0]).name
        match = _DATE.search(first)
        version = match.group(1) if match else first
    return Genes(version, **tables)


class GeneGrounder:
    """Ground gene symbols and HGNC ids (see module docstring)."""

    grounds_genes = True  # the validator's BEV029 check of unchecked identifiers reads it

    def __init__(self, genes: Genes, locator_keys: Sequence[str] = ("gene",)) -> None:
        self.genes = genes
        self.locator_keys = tuple(locator_keys)
        self.name = f"genes:{genes.release}"

    def check_symbol(self, symbol: str, path: str, uses: list[str], fix_value: Any = None) -> list[Finding]:
        g = self.genes
        if symbol in g.approved:
            return []
        for table, what in ((g.previous, "a previous symbol"), (g.alias, "an alias")):
            owners = table.get(symbol)
            if owners:
                names = [g.symbol_of(i) for i in owners]
                named = ", ".join(f"{s} ({i})" for s, i in zip(names, owners, strict=True))
                fix = Fix("replace", path, names[0] if fix_value is None else fix_value(names[0]),
                          f"use the approved symbol {names[0]}") if len(owners) == 1 else None
                return [finding("BEV023", f"'{symbol}' is {what} in {g.release}; the approved symbol is {named}",
                                path, uses, fix)]
        if symbol.upper() in g.upper:
            right = g.upper[symbol.upper()]
            return [finding("BEV023", f"'{symbol}' is not an approved symbol; the approved symbol is "
                            f"'{right}' ({g.approved[right]}) (gene symbols are case-sensitive)", path, uses,
                            Fix("replace", path, right if fix_value is None else fix_value(right)))]
        gone = g.withdrawn.get(symbol)
        if gone:
            see = list(dict.fromkeys(s for i in gone for s in g.ids[i][3]))
            targets = [f"{g.symbol_of(s)} ({s})" for s in see if s in g.ids]
            tail = f"; it was merged into {', '.join(targets)}" if targets else ""
            fix = Fix("replace", path, g.symbol_of(see[0]) if fix_value is None else fix_value(g.symbol_of(see[0]))) \
                if len(see) == 1 and see[0] in g.ids else None
            return [finding("BEV023", f"'{symbol}' is a withdrawn HGNC symbol ({', '.join(gone)}){tail}",
                            path, uses, fix)]
        close = g.close(symbol)
        hint = f"; closest approved symbols: {', '.join(g.upper[c] for c in close)}" if close else ""
        return [finding("BEV016", f"'{symbol}' is not an HGNC symbol in {g.release}{hint}", path, uses)]

    def _malformed(self, curie: str, label: str | None, is_gene: bool, path: str, uses: list[str]) -> Finding | None:
        """BEV024 for an HGNC id not written ``HGNC:<number>`` (``hgnc:1097``, ``HGNC_1097``,
        ``HGNC1097``), and for a gene's id that is no CURIE at all (``1097``, ``BRAF``); a CURIE of
        another namespace (``NCBIGene:673``) is not this grounder's to judge. Names the gene meant."""
        ok, meant = curie_form(curie, "HGNC")
        if ok or (CURIE.fullmatch(curie) and not curie.upper().startswith("HGNC:")):
            return None
        if meant is None and not is_gene:
            return None
        g = self.genes
        by_label = g.approved.get(label) if label else None
        by_symbol = g.approved.get(curie.strip())
        target = by_label or (meant if meant in g.ids else None) or by_symbol
        given = curie.split(":", 1)[0] if ":" in curie else None
        how = f"writes its prefix as {given!r}" if given else "is not a CURIE"
        message = f"{curie!r} {how}: HGNC ids are written HGNC:<number>"
        if target is not None:
            whose = f"'{label}' is" if target == by_label else "the gene meant is"
            message += f"; {whose} {target} ({g.symbol_of(target)})"
        return finding("BEV024", message, f"{path}.id", uses,
                       Fix("replace", f"{path}.id", target, f"use {target}") if target else None)

    def check_entity(self, entity: dict[str, Any], path: str, uses: list[str]) -> list[Finding]:
        g = self.genes
        raw_id = entity.get("id")
        curie = raw_id if isinstance(raw_id, str) else ""
        label = entity.get("label") if isinstance(entity.get("label"), str) else None
        malformed = self._malformed(curie, label, entity.get("entity_type") == "gene", path, uses)
        if malformed is not None:
            return [malformed]
        if curie.upper().startswith("HGNC:"):
            hgnc_id = "HGNC:" + curie.split(":", 1)[1]
            entry = g.ids.get(hgnc_id)
            if entry is None:
                owner = g.approved.get(label) if label else None
                hint = f"; '{label}' is {owner}" if owner else ""
                return [finding("BEV016", f"{hgnc_id} does not exist in {g.release}{hint}", f"{path}.id", uses,
                                Fix("replace", f"{path}.id", owner) if owner else None)]
            symbol, name, status = entry[0], entry[1], entry[2]
            if status != "Approved":
                see = [s for s in entry[3] if s in g.ids]
                now = g.approved.get(symbol)
                parts = [f"{hgnc_id} ({symbol}) is {status.lower()} in {g.release}"]
                if see:
                    parts.append(f"it was merged into {', '.join(f'{i} ({g.symbol_of(i)})' for i in see)}")
                if now:
                    parts.append(f"the symbol {symbol} now names another gene, {now} ({g.ids[now][1]})")
                target = see[0] if len(see) == 1 else None
                return [finding("BEV023", "; ".join(parts), f"{path}.id", uses,
                                Fix("replace", f"{path}.id", target) if target else None)]
            if label is not None and label not in (symbol, name):
                owner = g.approved.get(label)
                hint = f"; '{label}' is {owner}" if owner else ""
                for table, what in ((g.alias, "an alias"), (g.previous, "a previous symbol")):
                    if not owner and hgnc_id in (table.get(label) or ()):  # HER2 on HGNC:3430: the same gene
                        hint = f"; '{label}' is {what} of {symbol} (the same gene: use its approved symbol)"
                        break
                return [finding("BEV017", f"'{label}' is not the approved symbol of {hgnc_id}, which is "
                                f"'{symbol}'{hint}", f"{path}.label", uses,
                                Fix("replace", f"{path}.label", symbol))]
            return []
        if label is None or entity.get("entity_type") != "gene":
            return []
        return self.check_symbol(label, f"{path}.label", uses)

    def ground(self, record: dict[str, Any]) -> Grounding:
        uses = requested_uses(record)
        relevant = [(p, e) for p, e in entities(record)
                    if e.get("entity_type") == "gene" or str(e.get("id", "")).upper().startswith("HGNC:")]
        located: list[tuple[int, str, str, str]] = []
        for index, item in items(record):
            locator = str(item.get("locator", ""))
            kv = pairs(locator.split("#", 1)[0]) or {}
            located.extend((index, locator, k, v) for k, v in kv.items() if k in self.locator_keys)
        if not relevant and not located:
            return Grounding()
        other = [t for t in scope_tokens(record) if t.startswith("NCBITaxon:") and t != HUMAN]
        if other:
            return Grounding([finding("BEV015", f"the scope names {', '.join(other)}; {self.genes.release} "
                                      "covers human genes only, so the genes cannot be confirmed",
                                      "$.statement.scope", uses)])
        found: list[Finding] = []
        for path, entity in relevant:
            found.extend(self.check_entity(entity, path, uses))
        for index, locator, key, value in located:
            path = f"$.evidence_items[{index}].locator"
            found.extend(self.check_symbol(
                value, path, uses, lambda new, loc=locator, k=key, v=value: loc.replace(f"{k}={v}", f"{k}={new}")))
        return Grounding(found)
