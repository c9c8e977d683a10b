"""The real model's heads as a grid of buttons, one attention strip each (4-1's 72 heads; reusable anywhere a row of
every head is shown): each cell names its head, prints its weight on the target and reads out its top words."""

from .draw import esc
from .heatmap import row_alt
from .tensors import attention_strip
from .text import t

TOP_WORDS = 3  # the words a cell's text alternative names, with their shares


def heads_grid(result: dict, lang: str, picked: list[int] | None = None, best_shown: bool = False) -> str:
    """Every head's row for the word asked about, as buttons (data-act="pick", data-pick="layer,head"), one absolute
    scale for all strips, each printing its weight on the target. `result` is dragon.api.crystal_ball's answer;
    `picked` the head chosen (framed, its numbers large), `best_shown` frames the strongest head too. The picked and
    the best are marked in words as well as by their frames (colour is never the only cue)."""
    q, tg = result["position"], result["target"]["position"]
    best = [result["best"]["layer"], result["best"]["head"]]
    cells = []
    for li in range(result["layers"]):
        for hi in range(result["heads"]):
            row = result["attention"][li][hi]
            is_picked, is_best = picked == [li, hi], best_shown and [li, hi] == best
            cls = "cb-map" + (" picked" if is_picked else "") + (" best" if is_best else "")
            tags = [t(key, lang) for key, on in (("c_tag_picked", is_picked), ("c_tag_best", is_best)) if on]
            tag = f'<span class="cb-tag">{esc(" · ".join(tags))}</span>' if tags else ""
            label = row_alt(f"L{li + 1} H{hi + 1}", result["tokens"], row, TOP_WORDS, skip=q)  # as the cell reads
            if tags:
                label += f" ({', '.join(tags)})"
            cells.append(
                f'<button type="button" class="{cls}" data-act="pick" data-pick="{li},{hi}" aria-label="{esc(label)}">'
                f'<span class="cb-name">L{li + 1} H{hi + 1} <span class="cb-w">{row[tg]:.2f}</span></span>'
                f"{attention_strip(row, tg, q)}{tag}</button>"
            )
    # data-reveal: the page brings the grid into view (whole) once it is drawn, the question the player answers on it
    return f'<div class="cb-grid" role="group" aria-label="{esc(t("c_grid", lang))}" data-reveal="question">{"".join(cells)}</div>'
