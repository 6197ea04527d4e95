"""Table grounder: a cited row of a pinned TSV/CSV table exists and holds the values claimed.

An evidence item of one of the configured evidence types cites a row of its source's table (the
source's ``sha256`` names the pinned bytes) by key columns in its locator, ``key=value`` pairs
separated by ``;`` (``cluster=3;gene=CD8A``; an ``#anchor`` is ignored). Its ``extracted_text``
may claim other values of that row the same way (``avg_log2FC=2.4; pct.1=0.91``).

* table bytes missing → BEV015; corrupted → BEV014; not a UTF-8 table with a header → BEV015;
* locator or claims not ``key=value`` pairs, or a column the table lacks → BEV024 (naming the
  columns, and the closest column name as the fix when there is one);
* no row with the locator's values → BEV016, naming the closest values of the last key among
  rows that match the other keys (and the fix when one is close);
* several rows → BEV015 (the locator must name one row: add a key column);
* a claimed value differs → BEV017, naming the table's value, with the corrected claim as fix;
* otherwise the item is verified.

Values compare as numbers when both sides parse as finite decimals, at the precision the
*claim* is written with: the table's value must lie within half a unit of the claim's last
digit (``2.4`` matches ``2.43`` and ``2.35``, not ``2.46``; ``1.5e-5`` has its last digit at
``1e-6``). Otherwise they compare as text, Unicode-normalised (NFKC), trimmed and ignoring
case. TSV or CSV is sniffed from the header line (a tab means TSV). Each table is parsed once
per process.
"""

from __future__ import annotations

import csv
import difflib
import io
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from ...errors import IntegrityError, SourceError
from ...sources.store import SHA256_RE, SnapshotStore
from ..findings import Finding, Fix
from ..grounding import Grounding, finding
from .common import items, pairs, requested_uses, sources_by_id

__all__ = ["Table", "TableGrounder", "parse_table", "same_value"]


@dataclass(frozen=True, slots=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[dict[str, str], ...]


def parse_table(data: bytes, *, source: str = "<table>") -> Table:
    """Parse TSV or CSV bytes with a header line; ``ValueError`` naming the problem otherwise."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"table {source} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    header = text.partition("\n")[0]
    delimiter = "\t" if "\t" in header else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        columns = [c.strip() for c in next(reader)]
    except StopIteration:
        raise ValueError(f"table {source} is empty; pin a TSV or CSV file with a header line") from None
    except csv.Error as exc:
        raise ValueError(f"table {source} is not valid {'TSV' if delimiter == chr(9) else 'CSV'}: {exc}") from exc
    if not any(columns) or len(set(columns)) != len(columns):
        raise ValueError(f"table {source} needs a header line of distinct column names")
    rows: list[dict[str, str]] = []
    try:
        for raw in reader:
            if not any(cell.strip() for cell in raw):
                continue
            rows.append({c: (raw[i].strip() if i < len(raw) else "") for i, c in enumerate(columns)})
    except csv.Error as exc:
        raise ValueError(f"table {source} is not valid at line {reader.line_num}: {exc}") from exc
    return Table(tuple(columns), tuple(rows))


def _number(text: str) -> Decimal | None:
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None


def _text(value: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", value).split()).casefold()


def same_value(claimed: str, actual: str) -> bool:
    """Whether the table's ``actual`` value is the ``claimed`` one, at the claim's precision."""
    number, value = _number(claimed), _number(actual)
    if number is None or value is None:
        return _text(claimed) == _text(actual)
    exponent = number.as_tuple().exponent
    assert isinstance(exponent, int)  # finite decimals have an integer exponent
    return abs(number - value) <= Decimal(5).scaleb(exponent - 1)


def _render(values: dict[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in values.items())


class TableGrounder:
    """Check evidence items of the given types against rows of their pinned table."""

    def __init__(self, store: SnapshotStore, evidence_types: Iterable[str]) -> None:
        self.store = store
        self.types = frozenset(evidence_types)
        if not self.types:
            from ...errors import ConfigurationError

            raise ConfigurationError("the table grounder needs at least one evidence type (--tables TYPE)")
        self.name = "tables:" + ",".join(sorted(self.types))
        self._tables: dict[str, Table | str] = {}
        self._index: dict[tuple[str, str], dict[str, list[int]]] = {}  # (table sha, column) -> folded text -> rows

    @classmethod
    def from_directory(cls, folder: Path | str, evidence_types: Iterable[str]) -> TableGrounder:
        return cls(SnapshotStore(folder), evidence_types)

    def table(self, sha: str) -> Table | str:
        """The parsed table for ``sha``, or why it cannot be read (the store re-hashes on first read).

        Raises ``IntegrityError`` for corrupted bytes and ``SourceError`` for missing ones.
        """
        self.store.read(sha)
        parsed = self._tables.get(sha)
        if parsed is None:
            try:
                parsed = parse_table(self.store.read(sha), source=sha)
            except ValueError as exc:
                parsed = str(exc)
            self._tables[sha] = parsed
        return parsed

    def ground(self, record: dict[str, Any]) -> Grounding:
        uses = requested_uses(record)
        sources = sources_by_id(record)
        found: list[Finding] = []
        verified: set[str] = set()
        for index, item in items(record):
            if item.get("evidence_type") not in self.types:
                continue
            source = sources.get(str(item.get("source_artifact_id")))
            if source is None:
                continue  # integrity checks report a dangling source id
            item_findings = self._item(item, f"$.evidence_items[{index}]", source[1], uses)
            found.extend(item_findings)
            if not item_findings and isinstance(item.get("id"), str):
                verified.add(item["id"])
        return Grounding(found, frozenset(verified))

    def _item(self, item: dict[str, Any], path: str, source: dict[str, Any], uses: list[str]) -> list[Finding]:
        sha = source.get("sha256")
        if not isinstance(sha, str) or not SHA256_RE.match(sha):
            return [finding("BEV015", f"the table's sha256 {sha!r} is not a SHA-256", path, uses)]
        try:
            table = self.table(sha)
        except IntegrityError as exc:
            return [finding("BEV014", f"the pinned table {sha} is corrupted: {exc.message}", path, uses)]
        except SourceError:
            return [finding("BEV015", f"the table {sha} is not pinned in {self.store.root}, so the row cannot "
                            "be confirmed; pin it or point --snapshot-dir at its folder", path, uses)]
        if isinstance(table, str):
            return [finding("BEV015", f"{table}, so the row cannot be confirmed", path, uses)]
        raw_locator = item.get("locator")
        locator = raw_locator.split("#", 1)[0] if isinstance(raw_locator, str) else ""
        text = item.get("extracted_text")
        key = pairs(locator)
        claims = pairs(text) if isinstance(text, str) and text.strip() else {}
        loc_path, text_path = f"{path}.locator", f"{path}.extracted_text"
        if key is None:
            return [finding("BEV024", f"the locator {raw_locator!r} must name one row as key=value pairs separated "
                            f"by ';' (columns: {', '.join(table.columns)})", loc_path, uses)]
        if claims is None:
            return [finding("BEV024", "claimed table values (extracted_text) must be key=value pairs separated "
                            f"by ';', e.g. '{table.columns[-1]}=…' (columns: {', '.join(table.columns)})",
                            text_path, uses)]
        for where, values, value_path in (("locator", key, loc_path), ("claim", claims, text_path)):
            unknown = [k for k in values if k not in table.columns]
            if unknown:
                return [self._unknown_column(unknown[0], where, table, value_path, raw_locator if where == "locator"
                                             else text, uses)]
        matches = self.matches(sha, table, key)
        if not matches:
            return [self._no_row(key, table, loc_path, locator, uses)]
        if len(matches) > 1:
            return [finding("BEV015", f"{len(matches)} rows of the table have {_render(key)}; the locator must name "
                            "one row (add a key column)", loc_path, uses)]
        row = matches[0]
        wrong = {k: row[k] for k, v in claims.items() if not same_value(v, row[k])}
        if not wrong:
            return []
        corrected = _render({k: (row[k] if k in wrong else v) for k, v in claims.items()})
        said = _render({k: claims[k] for k in wrong})
        return [finding("BEV017", f"the row {_render(key)} has {_render(wrong)}, not {said}", text_path, uses,
                        Fix("replace", text_path, corrected, f"the table says {_render(wrong)}"))]

    def matches(self, sha: str, table: Table, key: dict[str, str]) -> list[dict[str, str]]:
        """The rows whose values are the key's (:func:`same_value`), in table order. A text value is
        looked up in a per-column index of the folded cell text (exactly what ``same_value`` compares
        for a claim that is not a number); a number is compared at its precision, row by row, among
        the rows the text values left."""
        candidates: list[int] | None = None
        numbers: dict[str, str] = {}
        for column, claimed in key.items():
            if _number(claimed) is not None:
                numbers[column] = claimed
                continue
            index = self._index.get((sha, column))
            if index is None:
                index = {}
                for i, row in enumerate(table.rows):
                    index.setdefault(_text(row[column]), []).append(i)
                self._index[(sha, column)] = index
            hits = index.get(_text(claimed), [])
            candidates = hits if candidates is None else sorted(set(candidates).intersection(hits))
        rows = table.rows if candidates is None else [table.rows[i] for i in candidates]
        return [r for r in rows if all(same_value(v, r[k]) for k, v in numbers.items())]

    @staticmethod
    def _unknown_column(column: str, where: str, table: Table, path: str, original: object,
                        uses: list[str]) -> Finding:
        close = difflib.get_close_matches(column, table.columns, n=1, cutoff=0.6)
        if not close:
            lowered = {c.casefold(): c for c in table.columns}
            close = [lowered[column.casefold()]] if column.casefold() in lowered else []
        hint = f"; did you mean '{close[0]}'?" if close else ""
        fix = None
        if close and isinstance(original, str):
            fix = Fix("replace", path, original.replace(f"{column}=", f"{close[0]}=", 1), f"the column is '{close[0]}'")
        return finding("BEV024", f"the table has no column '{column}' (in the {where}); columns: "
                       f"{', '.join(table.columns)}{hint}", path, uses, fix)

    @staticmethod
    def _no_row(key: dict[str, str], table: Table, path: str, locator: str, uses: list[str]) -> Finding:
        *fixed, last = list(key)
        candidates = list(dict.fromkeys(r[last] for r in table.rows
                                        if all(same_value(key[k], r[k]) for k in fixed)))
        close = difflib.get_close_matches(key[last], candidates, n=3, cutoff=0.5)
        if not close:
            folded = {_text(c): c for c in candidates}
            close = [folded[_text(key[last])]] if _text(key[last]) in folded else []
        within = f" for {_render({k: key[k] for k in fixed})}" if fixed else ""
        hint = f"; closest {last} values{within}: {', '.join(close)}" if close else (
            f"; no row{within}" if fixed and not candidates else "")
        fix = Fix("replace", path, _render({**key, last: close[0]}), f"the table has {last}={close[0]}{within}") \
            if close else None
        return finding("BEV016", f"no row of the pinned table has {_render(key)}{hint}", path, uses, fix)
