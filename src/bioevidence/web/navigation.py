"""Going through the queue: the filter a reviewer works in, carried from the queue page to each entry
and back, and the entry that comes next.

The filter (status, rule code, profile, source, text, and the queue page) travels in the query string
of every link and in hidden fields of the decision form, so the back link returns to the same page of
the same filter and, after a decision, the server opens the next entry of that filter that still needs
one (:func:`next_entry`): in queue order after the entry just decided, wrapping to the start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from ..loop.listing import STATES, QueueListing

__all__ = ["Filters", "next_entry", "position"]

MAX_FIELD = 200


@dataclass(frozen=True, slots=True)
class Filters:
    state: str = "open"
    code: str = ""
    profile: str = ""
    source: str = ""
    q: str = ""
    page: int = 1

    @classmethod
    def of(cls, state: str = "open", code: str = "", profile: str = "", source: str = "", q: str = "",
           page: int = 1) -> Filters:
        """Filters from request parameters: an unknown status is ``open``, texts are cut to 200 characters."""
        return cls(state if state in STATES else "open", code[:MAX_FIELD], profile[:MAX_FIELD],
                   source.strip()[:MAX_FIELD], q.strip()[:MAX_FIELD], max(1, min(page, 10**6)))

    def params(self, *, page: bool = True) -> dict[str, str]:
        """The non-default fields, as query parameters."""
        out = {k: v for k, v in (("state", self.state), ("code", self.code), ("profile", self.profile),
                                 ("source", self.source), ("q", self.q)) if v and not (k == "state" and v == "open")}
        if page and self.page > 1:
            out["page"] = str(self.page)
        return out

    def query(self, **extra: Any) -> str:
        """``?…`` for a link that keeps this filter (``""`` when there is nothing to keep)."""
        params = {**self.params(), **{k: str(v) for k, v in extra.items() if v not in (None, "", 0)}}
        return "?" + urlencode(params) if params else ""

    def queue_url(self, **extra: Any) -> str:
        return "/queue" + self.query(**extra)

    def page_url(self, page: int) -> str:
        """The queue page ``page`` of this filter."""
        params = {**self.params(page=False), **({"page": str(page)} if page > 1 else {})}
        return "/queue" + ("?" + urlencode(params) if params else "")

    def entry_url(self, entry: int, **extra: Any) -> str:
        return f"/entries/{entry}" + self.query(**extra)

    def matching(self, listing: QueueListing) -> list[int]:
        """The ids of the entries that still need a decision in this filter, in queue order: those in
        the filter's status, or the open ones when the filter shows every status."""
        state = "open" if self.state == "all" else self.state
        page = listing.query(state=state, code=self.code or None, profile=self.profile or None,
                             source=self.source or None, text=self.q or None, offset=0, limit=10**9)
        return [row.id for row in page.rows]


def next_entry(ids: list[int], current: int) -> int | None:
    """The first of ``ids`` after ``current``, else the first before it (wrapping); ``None`` when
    ``current`` is the only one or there is none."""
    after = next((i for i in ids if i > current), None)
    if after is not None:
        return after
    return next((i for i in ids if i != current), None)


def position(ids: list[int], current: int) -> int | None:
    """``current``'s place (1-based) among ``ids``, or ``None`` when it is not among them."""
    try:
        return ids.index(current) + 1
    except ValueError:
        return None
