"""Server-rendered SVG charts: stacked bars, columns over time, and rates with their intervals.

Every label is escaped; colours come from CSS classes (``s-accept`` …), so the pages need no
inline style and keep their strict Content-Security-Policy. Each chart has a ``<title>`` and
``role="img"``; the numbers are always printed beside it in a table as well.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

__all__ = ["columns", "intervals", "stacked_bars"]


def _svg(width: int, height: int, title: str, body: list[str]) -> Markup:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}"><title>{escape(title)}</title>')
    return Markup(head + "".join(body) + "</svg>")


def _legend(series: Sequence[str], x: int, y: int) -> list[str]:
    out = []
    for i, name in enumerate(series):
        out.append(f'<rect class="s-{escape(name)}" x="{x + i * 90}" y="{y}" width="12" height="12"/>'
                   f'<text class="legend" x="{x + i * 90 + 16}" y="{y + 11}">{escape(name)}</text>')
    return out


def stacked_bars(rows: Sequence[tuple[str, dict[str, int]]], series: Sequence[str], title: str) -> Markup:
    """One horizontal bar per row, split by series, with its total at the end."""
    label_w, bar_w, row_h = 190, 420, 22
    height = 30 + row_h * max(1, len(rows))
    top = max((sum(v.values()) for _, v in rows), default=0) or 1
    body = _legend(series, label_w, 4)
    for i, (label, values) in enumerate(rows):
        y = 26 + i * row_h
        body.append(f'<text class="label" x="{label_w - 6}" y="{y + 14}" text-anchor="end">'
                    f'{escape(label[:32])}</text>')
        x = float(label_w)
        for name in series:
            w = bar_w * values.get(name, 0) / top
            if w > 0:
                body.append(f'<rect class="s-{escape(name)}" x="{x:.1f}" y="{y + 2}" width="{w:.1f}" '
                            f'height="{row_h - 6}"><title>{escape(label)}: {values.get(name, 0)} '
                            f'{escape(name)}</title></rect>')
            x += w
        body.append(f'<text class="value" x="{x + 4:.1f}" y="{y + 14}">{sum(values.values())}</text>')
    return _svg(label_w + bar_w + 50, height, title, body)


def columns(rows: Sequence[tuple[str, dict[str, int]]], series: Sequence[str], title: str) -> Markup:
    """Stacked columns, one per day (oldest on the left), the day under every few columns."""
    left, plot_h, width = 40, 160, 640
    n = max(1, len(rows))
    col = min(40.0, (width - left - 10) / n)
    top = max((sum(v.values()) for _, v in rows), default=0) or 1
    body = _legend(series, left, 4)
    base = 24 + plot_h
    body.append(f'<line class="axis" x1="{left}" y1="{base}" x2="{width - 10}" y2="{base}"/>')
    body.append(f'<text class="label" x="{left - 4}" y="{30}" text-anchor="end">{top}</text>')
    body.append(f'<text class="label" x="{left - 4}" y="{base}" text-anchor="end">0</text>')
    every = max(1, n // 8)
    for i, (day, values) in enumerate(rows):
        x = left + i * col
        y = float(base)
        for name in series:
            h = plot_h * values.get(name, 0) / top
            if h > 0:
                y -= h
                body.append(f'<rect class="s-{escape(name)}" x="{x + 1:.1f}" y="{y:.1f}" '
                            f'width="{max(1.0, col - 2):.1f}" height="{h:.1f}">'
                            f'<title>{escape(day)}: {values.get(name, 0)} {escape(name)}</title></rect>')
        if i % every == 0:
            body.append(f'<text class="label" x="{x + col / 2:.1f}" y="{base + 14}" text-anchor="middle">'
                        f'{escape(day[5:])}</text>')
    return _svg(width, base + 22, title, body)


def intervals(rows: Sequence[tuple[str, float | None, float | None, float | None, float | None]], title: str) -> Markup:
    """Rates on a 0–100 % axis: the point, the two-sided interval as a line, the one-sided upper bound
    as a tick (rows: label, rate, low, high, upper bound)."""
    label_w, plot_w, row_h = 150, 420, 26
    height = 34 + row_h * max(1, len(rows))
    top = max([1e-9, *(v for r in rows for v in r[1:] if v is not None)])
    scale = min(1.0, max(0.05, top * 1.15))

    def x(v: float) -> float:
        return label_w + plot_w * min(v, scale) / scale

    body = [f'<line class="axis" x1="{label_w}" y1="{height - 14}" x2="{label_w + plot_w}" y2="{height - 14}"/>',
            f'<text class="label" x="{label_w}" y="{height - 2}">0%</text>',
            f'<text class="label" x="{label_w + plot_w}" y="{height - 2}" text-anchor="end">{100 * scale:.1f}%</text>']
    for i, (label, rate, low, high, upper) in enumerate(rows):
        y = 14 + i * row_h + row_h / 2
        body.append(f'<text class="label" x="{label_w - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(label)}</text>')
        if low is not None and high is not None:
            body.append(f'<line class="interval" x1="{x(low):.1f}" y1="{y:.1f}" x2="{x(high):.1f}" y2="{y:.1f}"/>')
        if upper is not None:
            body.append(f'<line class="bound" x1="{x(upper):.1f}" y1="{y - 8:.1f}" x2="{x(upper):.1f}" '
                        f'y2="{y + 8:.1f}"><title>upper bound {100 * upper:.2f}%</title></line>')
        if rate is not None:
            body.append(f'<circle class="point" cx="{x(rate):.1f}" cy="{y:.1f}" r="4">'
                        f'<title>{escape(label)}: {100 * rate:.2f}%</title></circle>')
    return _svg(label_w + plot_w + 30, height, title, body)
