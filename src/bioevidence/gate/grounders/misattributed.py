"""A quote and title cited under another paper's identifier, the commonest AI citation error.

When a source's title is not its cited work's, the grounder looks for the catalogued work whose
pinned title it is (case, punctuation and Greek spelling ignored). If that work's text holds every
quote citing the source, the record has cited the wrong paper: instead of a title fix and a
"not in the paper" for each quote (both wrong fixes: they would make the record consistent with a
paper that does not say it), it gets one BEV017 naming the paper that holds quote and title, with
fixes for its ``uri`` and ``sha256``. The items stay unverified until the record is corrected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import BioevidenceError
from ...sources.catalogue import Work
from ..findings import Finding, Fix
from ..grounding import finding
from ..rules import BLOCKING
from .citing import check_quote
from .quotes import normalized_title

if TYPE_CHECKING:
    from .literature import LiteratureGrounder

__all__ = ["misattributed"]


def _titles(grounder: LiteratureGrounder) -> dict[tuple[str, ...], list[Work]]:
    """Normalised pinned title -> the catalogued works with it (built once a grounder)."""
    index = grounder._titles
    if index is None:
        index = {}
        for work in grounder.catalogue:
            try:
                meta = grounder.metadata(work)
            except BioevidenceError:
                continue  # unreadable metadata is reported when that work itself is cited
            if meta.found and meta.title:
                index.setdefault(normalized_title(meta.title), []).append(work)
        grounder._titles = index
    return index


def misattributed(grounder: LiteratureGrounder, source: dict[str, Any], path: str, cited: list[tuple[int, Any]],
                  findings: list[Finding], work: Work | None, uses: list[str]) -> list[Finding] | None:
    """The findings that replace ``findings`` when the source's title and quotes are another pinned
    work's (see module docstring), else ``None``."""
    title = source.get("title")
    if work is None or not isinstance(title, str) or not any(
            f.rule_id == "BEV017" and f.field_path == f"{path}.title" for f in findings):
        return None
    quoted = [(i, item) for i, item in cited if isinstance(item, dict) and isinstance(item.get("extracted_text"), str)]
    if not quoted:
        return None
    for other in _titles(grounder).get(normalized_title(title), []):
        if other.key == work.key:
            continue
        try:
            meta = grounder.metadata(other)
            paper = grounder.paper(other, meta)
        except BioevidenceError:
            continue
        if paper is None or meta.retracted:
            continue
        if all(_holds(item, f"$.evidence_items[{i}]", paper, uses) for i, item in quoted):
            return _findings(path, source, work, other, meta.title, len(quoted), uses)
    return None


def _holds(item: dict[str, Any], path: str, paper: Any, uses: list[str]) -> bool:
    found, location = check_quote(item, path, paper, uses)
    return location is not None and not any(f.severity in BLOCKING for f in found)


def _findings(path: str, source: dict[str, Any], cited: Work, holder: Work, title: str, quotes: int,
              uses: list[str]) -> list[Finding]:
    what = "quote and title are" if quotes == 1 else f"{quotes} quotes and the title are"
    pinned = holder.pinned_sha256
    out = [finding("BEV017", f"the {what} {holder.key}'s ('{title}'), not {cited.key}'s: the record cites the "
                   f"wrong paper; cite {holder.key}", f"{path}.uri", uses,
                   Fix("replace", f"{path}.uri", holder.key))]
    if source.get("sha256") != pinned:
        out.append(finding("BEV017", f"the sha256 must be {holder.key}'s pinned snapshot {pinned}",
                           f"{path}.sha256", uses, Fix("replace", f"{path}.sha256", pinned)))
    return out
