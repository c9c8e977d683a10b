"""Attention maps as tiny PNGs (viridis: colour-blind safe) and labelled SVG maps."""

import base64
import io

import numpy as np
from PIL import Image

from .draw import esc

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


def png_data_uri(matrix: np.ndarray) -> str:
    """(rows, cols) values in [0, 1] → a data: URI of a PNG, one pixel per cell (the browser scales it)."""
    m = np.nan_to_num(np.asarray(matrix, dtype=np.float64)).clip(0.0, 1.0)
    rgb = VIRIDIS[(m * 255).round().astype(np.int64)]
    buf = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buf, format="PNG", optimize=False, compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _short(word: str) -> str:
    return esc(word if len(word) <= 6 else word[:5] + "…")


def labelled_grid(
    matrix: np.ndarray,
    rows: list[str],
    cols: list[str],
    title: str,
    width: int = 360,
    row_height: float | None = None,
    highlight: int | None = None,
) -> str:
    """An SVG heat map with labelled rows and columns (the PNG carries the cells); square cells unless
    row_height is given; more than 40 columns: cells only."""
    labelled = len(cols) <= 40
    left = (96 if max(map(len, rows), default=0) > 6 else 64) if labelled else 0
    top = 18 + (52 if labelled else 0)
    cell_w = (width - left) / max(len(cols), 1)
    cell_h = row_height or cell_w
    height = top + cell_h * len(rows) + 4
    font = max(7.0, min(13.0, cell_w * 0.8))
    parts = [
        f'<svg class="attn-map{" attn-rows" if row_height else ""}" viewBox="0 0 {width} {height:.0f}" role="img" '
        f'aria-label="{esc(title)}">',
        f'<text x="{width / 2}" y="13" text-anchor="middle" class="map-title">{esc(title)}</text>',
        f'<image x="{left}" y="{top}" width="{width - left}" height="{cell_h * len(rows)}" preserveAspectRatio="none" '
        f'style="image-rendering:pixelated" href="{png_data_uri(matrix)}"/>',
    ]
    if labelled:
        for j, word in enumerate(cols):
            bold = ' font-weight="700"' if j == highlight else ""
            x = left + (j + 0.5) * cell_w
            parts.append(
                f'<text transform="translate({x},{top - 3}) rotate(-60)" font-size="{font}"{bold}>{_short(word)}</text>'
            )
        for i, word in enumerate(rows):
            bold = ' font-weight="700"' if i == highlight else ""
            y = top + (i + 0.5) * cell_h
            text = _short(word) if row_height is None else esc(word)
            parts.append(
                f'<text x="{left - 4}" y="{y}" text-anchor="end" dominant-baseline="middle" font-size="{min(font, 12)}"{bold}>{text}</text>'
            )
        if highlight is not None:
            y = top + highlight * cell_h
            parts.append(
                f'<rect x="{left}" y="{y}" width="{width - left}" height="{cell_h}" fill="none" stroke="#ff3b30" stroke-width="2"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


def labelled_map(
    matrix: np.ndarray, tokens: list[str], title: str, size: int = 360, highlight: int | None = None
) -> str:
    """A T × T attention map with the tokens along both axes; `highlight` frames one query row."""
    return labelled_grid(matrix, tokens, tokens, title, width=size, highlight=highlight)


def legend(lang: str) -> str:
    low, high = ("少", "多") if lang == "zh" else ("less", "more")
    stops = "".join(
        f'<stop offset="{i / 8}" stop-color="rgb{tuple(int(c) for c in k)}"/>' for i, k in enumerate(_VIRIDIS_KEYS)
    )
    return (
        '<svg class="legend" viewBox="0 0 200 24"><defs><linearGradient id="vir">'
        f"{stops}</linearGradient></defs>"
        f'<text x="0" y="16" font-size="11">{low}</text><rect x="34" y="5" width="130" height="12" fill="url(#vir)"/>'
        f'<text x="170" y="16" font-size="11">{high}</text></svg>'
    )
