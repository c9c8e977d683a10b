"""Attention maps: labelled SVG heat maps (viridis, colour-blind safe) that carry their values for hover and focus."""

import base64
import io
import json
import math

import numpy as np
from PIL import Image

from dragon.markup import esc, text_width
from ui.strings import t

# viridis at 9 evenly spaced points; interpolated to 256
_VIRIDIS_KEYS = np.array(
    [
        [68, 1, 84],
        [71, 44, 122],
        [59, 81, 139],
        [44, 113, 142],
        [33, 144, 141],
        [39, 173, 129],
        [92, 200, 99],
        [170, 220, 50],
        [253, 231, 37],
    ],
    dtype=np.float64,
)
_X = np.linspace(0, 1, len(_VIRIDIS_KEYS))
VIRIDIS = np.stack([np.interp(np.linspace(0, 1, 256), _X, _VIRIDIS_KEYS[:, c]) for c in range(3)], axis=1).astype(
    np.uint8
)

CELL = 16.0  # a cell's side, in the map's own units (the browser scales the whole map)
FONT = 12.0  # label size in the same units: 12 px at natural size, 20 px in projector mode (×1.7)
TILT = math.radians(60)  # column labels are turned 60° so long words fit over narrow columns


QUIET_RGB = (209, 213, 219)  # a cell that stands for almost nothing (ui/rooms/fusion.py): grey, off the colour scale


def png_data_uri(matrix: np.ndarray, quiet: np.ndarray | None = None) -> str:
    """(rows, cols) values in [0, 1] → a data: URI of a PNG, one pixel per cell (the browser scales it); `quiet`
    (rows, cols) bool: cells drawn grey, off the scale."""
    m = np.nan_to_num(np.asarray(matrix, dtype=np.float64)).clip(0.0, 1.0)
    rgb = VIRIDIS[(m * 255).round().astype(np.int64)]
    if quiet is not None:
        rgb = rgb.copy()
        rgb[np.asarray(quiet, dtype=bool)] = QUIET_RGB
    buf = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buf, format="PNG", optimize=False, compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _data(values) -> str:
    return esc(json.dumps(list(values), ensure_ascii=False))


def labelled_grid(
    matrix: np.ndarray,
    rows: list[str],
    cols: list[str],
    title: str,
    lang: str,
    name: str = "",
    tip: str = "{name}: {row} ← {col} {v}",
    query: str = "",
    highlight: int | None = None,
    scale: np.ndarray | None = None,
    show_title: bool = True,
    mark: float | None = None,
    alt: str = "",
) -> str:
    """An SVG heat map with every row and column labelled in full (the PNG carries the cells).

    Hover or keyboard focus shows a cell's value through `tip`, whose {name}, {row}, {col}, {query} and {v} the
    browser fills in (e.g. "情感头: 思 ← 故乡 0.62"). `scale` (same shape) colours the cells when the values shown
    are not already in [0, 1]; `highlight` frames one row; `mark` outlines every cell at or above it (in the
    highlighted row only, when there is one), so a faint but counted cell cannot be missed. `alt`: the map's text
    alternative, what it shows in words with its numbers ("⑤ 时序头 → 昨天 0.62, 正在 0.31"); the title by default."""
    m = np.nan_to_num(np.asarray(matrix, dtype=np.float64))
    colour = m if scale is None else np.asarray(scale, dtype=np.float64)
    left = max((text_width(r, FONT) for r in rows), default=0.0) + 8
    col_w = max((text_width(c, FONT) for c in cols), default=0.0)
    top = (22 if show_title else 4) + col_w * math.sin(TILT) + FONT * 0.6
    width = natural_width(rows, cols, title if show_title else "")
    height = top + CELL * len(rows) + 4
    x0, y0 = left, top
    parts = [
        f'<svg class="attn-map" viewBox="0 0 {width:.0f} {height:.0f}" style="--w:{width:.0f}px" tabindex="0" '
        f'role="group" aria-label="{esc(alt or title)}. {esc(t("map_keys", lang))}" '
        f'data-name="{esc(name)}" data-rows="{_data(rows)}" data-cols="{_data(cols)}" '
        f'data-v="{",".join(f"{v:.2f}" for v in m.flatten())}" '
        f'data-x0="{x0:.2f}" data-y0="{y0:.2f}" data-cell="{CELL}" data-tip="{esc(tip)}" data-query="{esc(query)}">',
        (
            f'<text x="{width / 2:.1f}" y="15" text-anchor="middle" class="map-title" font-size="{FONT + 1}">{esc(title)}</text>'
            if show_title
            else ""
        ),
        f'<image x="{x0:.2f}" y="{y0:.2f}" width="{CELL * len(cols):.2f}" height="{CELL * len(rows):.2f}" '
        f'preserveAspectRatio="none" style="image-rendering:pixelated" href="{png_data_uri(colour)}"/>',
    ]
    for j, word in enumerate(cols):
        x = x0 + (j + 0.5) * CELL + FONT * 0.3
        parts.append(
            f'<text transform="translate({x:.1f},{y0 - 4:.1f}) rotate(-60)" font-size="{FONT}">{esc(word)}</text>'
        )
    for i, word in enumerate(rows):
        y = y0 + (i + 0.5) * CELL
        bold = ' font-weight="700"' if i == highlight else ""
        parts.append(
            f'<text x="{x0 - 5:.1f}" y="{y:.1f}" text-anchor="end" dominant-baseline="central" font-size="{FONT}"{bold}>{esc(word)}</text>'
        )
    if highlight is not None:
        parts.append(
            f'<rect x="{x0:.2f}" y="{y0 + highlight * CELL:.2f}" width="{CELL * len(cols):.2f}" height="{CELL}" '
            'fill="none" stroke="#ff3b30" stroke-width="2"/>'
        )
    if mark is not None:
        for i, j in zip(*np.nonzero(m >= mark), strict=True):
            if highlight is None or i == highlight:
                parts.append(
                    f'<rect class="marked" x="{x0 + j * CELL + 1.5:.2f}" y="{y0 + i * CELL + 1.5:.2f}" '
                    f'width="{CELL - 3}" height="{CELL - 3}" fill="none" stroke="#ffffff" stroke-width="2.5"/>'
                )
    parts.append(f'<rect class="cursor" x="0" y="0" width="{CELL}" height="{CELL}" visibility="hidden"/></svg>')
    return "".join(parts)


def labelled_map(
    matrix: np.ndarray,
    tokens: list[str],
    title: str,
    lang: str,
    name: str = "",
    highlight: int | None = None,
    show_title: bool = True,
    mark: float | None = None,
    alt: str = "",
) -> str:
    """A T × T attention map with the tokens along both axes; `highlight` frames one query row."""
    return labelled_grid(
        matrix, tokens, tokens, title, lang, name=name, highlight=highlight, show_title=show_title, mark=mark, alt=alt
    )


def natural_width(rows: list[str], cols: list[str], title: str = "") -> float:
    """The width a labelled_grid of these labels (and title) has at its natural size (12 px labels)."""
    col_w = max((text_width(c, FONT) for c in cols), default=0.0)
    left = max((text_width(r, FONT) for r in rows), default=0.0) + 8
    grid = left + CELL * len(cols) + max(8.0, col_w * math.cos(TILT) - CELL * 0.5)
    return max(grid, text_width(title, FONT + 1) + 12)


def legend(lang: str) -> str:
    """The colour scale, as plain HTML (no SVG ids that could clash when a view is drawn twice)."""
    stops = ", ".join(f"rgb({int(r)},{int(g)},{int(b)})" for r, g, b in _VIRIDIS_KEYS)
    return (
        f'<div class="legend" aria-hidden="true"><span>{esc(t("less", lang))}</span>'
        f'<span class="ramp" style="background:linear-gradient(to right, {stops})"></span>'
        f"<span>{esc(t('more', lang))}</span></div>"
    )


ALT_WORDS = 5  # the words a map's text alternative names


def shares_text(pairs: list[tuple[str, float]], most: int = ALT_WORDS) -> str:
    """'昨天 0.62, 正在 0.31': words with their shares as a map shows them, the largest first (at most `most`)."""
    return ", ".join(f"{w} {v:.2f}" for w, v in pairs[:most])


def row_words(name: str, words: list[str], row, most: int = 3, skip: int | None = None) -> str:
    """One row of a map in words only, largest first: '① 语法头 → 思, 光' (what colour shows, without its numbers)."""
    ranked = sorted(((float(v), -j, w) for j, (w, v) in enumerate(zip(words, row, strict=True)) if j != skip), reverse=True)
    return f"{name} → {', '.join(w for _, _, w in ranked[:most])}"


def row_alt(name: str, words: list[str], row, most: int = 3, skip: int | None = None) -> str:
    """One row of a map in words: '① 语法头 → 思 0.41, 光 0.20' (its largest cells, `skip` left out)."""
    ranked = sorted(((float(v), -j, w) for j, (w, v) in enumerate(zip(words, row, strict=True)) if j != skip), reverse=True)
    return f"{name} → {shares_text([(w, v) for v, _, w in ranked], most)}"
