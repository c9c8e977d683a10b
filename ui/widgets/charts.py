"""Charts drawn from pandas frames as plain SVG / HTML: a labelled line chart (log or linear axes) and bars."""

import math
from typing import TYPE_CHECKING

from dragon.markup import esc, text_width

if TYPE_CHECKING:
    import pandas as pd

W, H = 640.0, 340.0  # the chart's own units; drawn at this size in px (it shrinks to fit a narrow screen)
LEFT, RIGHT, TOP, BOTTOM = 78.0, 118.0, 34.0, 58.0  # margins: y tick labels, line-end labels, title, x axis
FONT = 14.0
SWATCH = 35.0  # a line label starts this far right of the plot, after a short swatch of its line …
SWATCH_GAP = 10.0  # … which starts this far right of it: clear of a point drawn at the plot's right edge (r 5)
DASHES = ("", "7 4", "2 4", "10 3 2 3", "4 2")  # colour is never the only cue: each line has its own dash


def tick_label(v: float) -> str:
    """A tick label: 0.01, 0.5, 3, 250, 1024, 16 384 — as the page's sentences print a length (T = 1024): four digits
    plain, a thin space in thousands only from five."""
    if v == 0:
        return "0"
    if abs(v) >= 10000:
        return f"{v:,.0f}".replace(",", "\u2009")
    if abs(v) >= 1:
        return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"
    return f"{v:.{max(1, -math.floor(math.log10(abs(v))))}f}"


def log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2, 5 × powers of ten spanning [lo, hi] (fewer when the span is wide)."""
    lo_e, hi_e = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    steps = (1,) if hi_e - lo_e > 4 else (1, 2, 5) if hi_e - lo_e <= 2 else (1, 3)
    ticks = [m * 10**e for e in range(lo_e, hi_e + 1) for m in steps]
    return [t for t in ticks if lo / 1.001 <= t <= hi * 1.001]


def linear_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About n 'nice' ticks (1, 2, 5 × 10^k apart) covering [lo, hi]."""
    span = max(hi - lo, 1e-12)
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step) * step
    return [round(first + i * step, 10) for i in range(math.ceil((hi - first) / step) + 1)]


def line_chart(
    frame: "pd.DataFrame",
    x: str,
    y: str,
    series: str,
    *,
    title: str,
    x_label: str,
    y_label: str,
    colours: dict[str, str],
    names: dict[str, str] | None = None,
    log_x: bool = False,
    log_y: bool = False,
    x_ticks: list[float] | None = None,
    tip: str = "{series}: {x} → {y}",
    y_unit: str = "",
    y_max: float | None = None,
) -> str:
    """One line per value of `series`, with axes, ticks, axis labels, a title, a label at each line's end and a
    point per row that tells its value on hover (<title>). `names` turns series values into what the legend says;
    `y_max` tops a linear y axis at a bound the values cannot pass (an accuracy's 1)."""
    names = names or {}
    xs, ys = frame[x].astype(float), frame[y].astype(float)
    if log_y:
        ys = ys.clip(lower=1e-9)
    x_lo, x_hi = float(xs.min()), float(xs.max())
    y_lo, y_hi = float(ys.min()), float(ys.max())
    if log_y:
        y_lo, y_hi = 10 ** math.floor(math.log10(y_lo)), 10 ** math.ceil(math.log10(y_hi))
    else:
        y_lo, y_hi = min(0.0, y_lo), y_max if y_max is not None else y_hi * 1.05 if y_hi > 0 else 1.0
    x_ticks = x_ticks or (log_ticks(x_lo, x_hi) if log_x else linear_ticks(x_lo, x_hi))
    y_ticks = log_ticks(y_lo, y_hi) if log_y else linear_ticks(y_lo, y_hi)
    if not log_y:
        y_hi = max(y_hi, y_ticks[-1])
    labels = [names.get(str(k), str(k)) for k in frame[series].unique()]
    right = max(RIGHT, SWATCH + max((text_width(s, FONT) for s in labels), default=0.0) + 6)  # room for the widest line label
    pw, ph = W - LEFT - right, H - TOP - BOTTOM

    def px(v: float) -> float:
        if log_x:
            return LEFT + pw * (math.log(v) - math.log(x_lo)) / max(math.log(x_hi) - math.log(x_lo), 1e-12)
        return LEFT + pw * (v - x_lo) / max(x_hi - x_lo, 1e-12)

    def py(v: float) -> float:
        if log_y:
            v = max(v, y_lo)
            return TOP + ph * (1 - (math.log(v) - math.log(y_lo)) / max(math.log(y_hi) - math.log(y_lo), 1e-12))
        return TOP + ph * (1 - (v - y_lo) / max(y_hi - y_lo, 1e-12))

    parts = [
        f'<svg class="chart" viewBox="0 0 {W:.0f} {H:.0f}" width="{W:.0f}" role="img" aria-label="{esc(title)}">',
        f'<text x="{LEFT:.0f}" y="20" class="chart-title" font-size="{FONT + 1}" font-weight="700">{esc(title)}</text>',
        f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#9ca3af"/>',
    ]
    for t in y_ticks:
        if y_lo <= t <= y_hi:
            parts.append(
                f'<line x1="{LEFT}" x2="{LEFT + pw}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#e5e7eb"/>'
                f'<text x="{LEFT - 6}" y="{py(t):.1f}" text-anchor="end" dominant-baseline="central" '
                f'font-size="{FONT}">{esc(tick_label(t))}</text>'
            )
    for t in x_ticks:
        if not x_lo / 1.001 <= t <= x_hi * 1.001:
            continue
        parts.append(
            f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{TOP + ph}" y2="{TOP + ph + 5}" stroke="#6b7280"/>'
            f'<text x="{px(t):.1f}" y="{TOP + ph + 20}" text-anchor="middle" font-size="{FONT}">{esc(tick_label(t))}</text>'
        )
    parts.append(
        f'<text x="{LEFT + pw / 2:.0f}" y="{H - 8:.0f}" text-anchor="middle" font-size="{FONT}" '
        f'class="axis-label">{esc(x_label)}</text>'
        f'<text transform="translate(16,{TOP + ph / 2:.0f}) rotate(-90)" text-anchor="middle" font-size="{FONT}" '
        f'class="axis-label">{esc(y_label)}</text>'
    )
    ends = []
    for k, (key, rows) in enumerate(frame.groupby(series, sort=False)):
        rows = rows.sort_values(x)
        colour = colours.get(str(key), "#374151")
        name = names.get(str(key), str(key))
        points = [(px(float(a)), py(float(b))) for a, b in zip(rows[x], rows[y], strict=True)]
        dash = DASHES[k % len(DASHES)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="3" stroke-linejoin="round"{dash_attr} '
            f'points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in points)}"/>'
        )
        if len(points) <= 12:  # a few measured points: mark each, with its value on hover
            for (a, b), xv, yv in zip(points, rows[x], rows[y], strict=True):
                text = tip.format(series=name, x=tick_label(float(xv)), y=f"{float(yv):.3g}{y_unit}")
                parts.append(
                    f'<circle cx="{a:.1f}" cy="{b:.1f}" r="5" fill="{colour}" stroke="#fff" stroke-width="1.5">'
                    f"<title>{esc(text)}</title></circle>"
                )
        ends.append([points[-1][1], name, colour, dash_attr])
    ends.sort()
    gap = FONT + 3
    for i in range(1, len(ends)):  # line-end labels never overlap: push down …
        ends[i][0] = max(ends[i][0], ends[i - 1][0] + gap)
    bottom = TOP + ph - FONT / 2  # the last label sits on the plot's floor, above the x axis' tick labels
    for i in range(len(ends) - 1, -1, -1):  # … and back up where they would run off the bottom
        ends[i][0] = min(ends[i][0], bottom - (len(ends) - 1 - i) * gap)
    for yy, name, colour, dash_attr in ends:  # each label after a swatch of its line: its colour and its dash
        parts.append(
            f'<line x1="{LEFT + pw + SWATCH_GAP}" x2="{LEFT + pw + SWATCH - 4}" y1="{yy:.1f}" y2="{yy:.1f}" '
            f'stroke="{colour}" '
            f'stroke-width="4"{dash_attr} class="swatch"/>'
            f'<text x="{LEFT + pw + SWATCH}" y="{yy:.1f}" dominant-baseline="central" '
            f'font-size="{FONT}" font-weight="700" class="line-label">{esc(name)}</text>'
        )
    parts.append("</svg>")
    return f'<div class="chart-wrap">{"".join(parts)}</div>'


def bars_html(rows: list[tuple[str, float, str]], top: float, fmt: str = "{:.2f}", cls: str = "") -> str:
    """Horizontal bars as HTML (text stays text): (label, value, colour) each, scaled so `top` fills the track."""
    items = "".join(
        f'<div class="bar-row"><span class="bar-name">{esc(label)}</span>'
        f'<span class="bar-track"><span class="bar" style="width:{100 * max(0.0, v) / max(top, 1e-12):.1f}%;'
        f'background:{colour}"></span></span><span class="bar-value">{esc(fmt.format(v))}</span></div>'
        for label, v, colour in rows
    )
    return f'<div class="bars {cls}">{items}</div>'
