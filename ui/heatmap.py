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


def labelled_map(
    matrix: np.ndarray, tokens: list[str], title: str, size: int = 360, highlight: int | None = None
) -> str:
    """An SVG attention map with the tokens along both axes; the PNG carries the cells."""
    n = len(tokens)
    label = 64 if n <= 40 else 0  # long texts: cells only
    cell = (size - label) / max(n, 1)
    font = max(7.0, min(13.0, cell * 0.8))
    parts = [
        f'<svg class="attn-map" viewBox="0 0 {size} {size + 18}" role="img" aria-label="{esc(title)}">',
        f'<text x="{size / 2}" y="13" text-anchor="middle" class="map-title">{esc(title)}</text>',
        f'<image x="{label}" y="{label + 18}" width="{size - label}" height="{size - label}" preserveAspectRatio="none" '
        f'style="image-rendering:pixelated" href="{png_data_uri(matrix)}"/>',
    ]
    if label:
        for i, tok in enumerate(tokens):
            word = esc(tok if len(tok) <= 6 else tok[:5] + "…")
            y = label + 18 + (i + 0.5) * cell
            x = label + (i + 0.5) * cell
            bold = ' font-weight="700"' if i == highlight else ""
            parts.append(
                f'<text x="{label - 3}" y="{y}" text-anchor="end" dominant-baseline="middle" font-size="{font}"{bold}>{word}</text>'
            )
            parts.append(
                f'<text transform="translate({x},{label + 15}) rotate(-60)" font-size="{font}"{bold}>{word}</text>'
            )
        if highlight is not None:
            y = label + 18 + highlight * cell
            parts.append(
                f'<rect x="{label}" y="{y}" width="{size - label}" height="{cell}" fill="none" stroke="#ff3b30" stroke-width="2"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


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
