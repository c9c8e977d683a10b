"""Small pictures of real tensors for the labs: numbers as chips, one signed bar per key, a labelled matrix, a strip,
attention rows as strips of cells or as bars."""

import numpy as np

from ui.widgets.charts import bars_html
from ui.widgets.draw import esc
from ui.widgets.heatmap import labelled_grid, png_data_uri


def chips(values: list[float], digits: int = 2) -> str:
    """A vector as a row of numbers."""
    return '<div class="chips">' + "".join(f'<span class="chip">{v:.{digits}f}</span>' for v in values) + "</div>"


def signed_bars(keys: list[str], values: list[float], winner: int | None, digits: int = 2) -> str:
    """One bar per key, its value beside it; the winner framed once it is shown."""
    top = max((abs(v) for v in values), default=1.0) or 1.0
    rows = "".join(
        f'<div class="kbar{" win" if i == winner else ""}"><span class="kname">{esc(k)}</span>'
        f'<span class="ktrack"><span class="kfill{" neg" if v < 0 else ""}" style="width:{100 * abs(v) / top:.1f}%">'
        f'</span></span><span class="kval">{v:.{digits}f}</span></div>'
        for i, (k, v) in enumerate(zip(keys, values, strict=True))
    )
    return f'<div class="kbars">{rows}</div>'


def matrix(m: list[list[float]], rows: list[str], cols: list[str], title: str, lang: str) -> str:
    """A labelled heat map of a small matrix (K, V) whose cells tell their value on hover or focus."""
    a = np.asarray(m, dtype=np.float64)
    lo, hi = float(a.min()), float(a.max())
    scale = (a - lo) / (hi - lo) if hi > lo else np.zeros_like(a)
    return labelled_grid(a, rows, cols, title, lang, name=title, tip="{name}: {row} · {col} = {v}", scale=scale,
                         show_title=False)


def strip(m: list[list[float]], caption: str) -> str:
    """A wide matrix (W^O's slice) as a stretched picture: too many cells to label each."""
    a = np.asarray(m, dtype=np.float64).T  # (d_head, d) lies flat
    lo, hi = float(a.min()), float(a.max())
    scaled = (a - lo) / (hi - lo) if hi > lo else np.zeros_like(a)
    return (
        f'<figure class="strip"><img alt="{esc(caption)}" src="{png_data_uri(scaled)}">'
        f"<figcaption>{esc(caption)} · min {lo:.2f} · max {hi:.2f}</figcaption></figure>"
    )


def attention_strip(row: list[float], target: int | None, word: int | None) -> str:
    """One attention row as a strip of cells on one absolute scale (a weight of 1 is fully dark, in every strip
    alike, so strips can be compared); the target and the word itself marked."""
    cells = "".join(
        f'<i class="{"tgt" if j == target else "self" if j == word else ""}"><b style="opacity:{0.04 + 0.96 * v:.2f}"></b></i>'
        for j, v in enumerate(row)
    )
    return f'<span class="cb-strip">{cells}</span>'


def words_key(tokens: list[str], target: int, word: int) -> str:
    """The words under a strip, the target and the word itself marked as in the strip."""
    words = "".join(
        f'<span class="{"tgt" if j == target else "self" if j == word else ""}">{esc(w)}</span>' for j, w in enumerate(tokens)
    )
    return f'<div class="cb-key">{words}</div>'


def row_bars(tokens: list[str], row: list[float], colour: str, skip: int | None = None) -> str:
    """An attention row as labelled bars on one absolute scale (the word itself left out when `skip` is its
    position), so rows side by side compare."""
    rows = [(w, v, colour) for j, (w, v) in enumerate(zip(tokens, row, strict=True)) if j != skip]
    return bars_html(rows, 1.0, fmt="{:.2f}", cls="cb-row")  # one absolute scale: a full bar is the whole row
