"""Compare a regenerated region with the committed one: quality figures byte for byte, timings within a
relative tolerance (the text around the numbers must still be the same)."""

from __future__ import annotations

import difflib
import re

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def unified_diff(committed: str, regenerated: str, label: str) -> str:
    return "".join(difflib.unified_diff(committed.splitlines(True), regenerated.splitlines(True),
                                        f"{label} (committed)", f"{label} (regenerated)"))


def _value(number: str) -> float:
    return float(number.replace(",", ""))


def timing_differences(committed: str, regenerated: str, tolerance: float) -> list[str]:
    """Where ``regenerated`` departs from ``committed`` by more than ``tolerance`` (relative, 0.25 = 25%)
    of the committed number, or at all in the words around the numbers (bold aside); [] when within it."""
    old_lines = committed.replace("**", "").splitlines()  # emphasis is the doc's, not a figure
    new_lines = regenerated.replace("**", "").splitlines()
    if len(old_lines) != len(new_lines):
        return [f"{len(new_lines)} lines regenerated, {len(old_lines)} committed"]
    problems: list[str] = []
    for number, (old, new) in enumerate(zip(old_lines, new_lines, strict=True), start=1):
        if _NUMBER.sub("#", old) != _NUMBER.sub("#", new):
            problems.append(f"line {number}: the words differ: {old!r} → {new!r}")
            continue
        for a, b in zip(_NUMBER.findall(old), _NUMBER.findall(new), strict=True):
            x, y = _value(a), _value(b)
            if x == y:
                continue
            if x == 0 or abs(x - y) / abs(x) > tolerance:
                off = f"{100 * abs(x - y) / abs(x):.0f}%" if x else "from 0"
                problems.append(f"line {number}: {a} → {b} ({off}; tolerance {100 * tolerance:.0f}%)")
    return problems
