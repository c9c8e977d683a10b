"""The real model's heads as a grid of buttons, one attention strip each (4-1's 72 heads; reusable anywhere a row of
every head is shown): each cell names its head, prints its weight on the target and reads out its top words."""

import json

from ui.strings import t
from ui.widgets.draw import esc
from ui.widgets.heatmap import row_alt, row_words
from ui.widgets.tensors import attention_strip

TOP_WORDS = 3  # the words a cell's text alternative names, with their shares


def heads_grid(result: dict, lang: str, picked: list[int] | None = None, best_shown: bool = False) -> str:
    """Every head's row for the word asked about, as buttons (data-act="pick", data-pick="layer,head"), one absolute
    scale for all strips. `result` is dragon.api.crystal_ball's answer; `picked` the head chosen (framed, its numbers
    large), `best_shown` frames the strongest head too. Until the pick the strips show colour only (and say their
    words in order, no weights): the pick is read off the picture, not the largest number; after it each strip prints
    its weight on the target. The picked and the best are marked in words as well as by their frames (colour is
    never the only cue)."""
    numbers = picked is not None
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
            label = (row_alt(f"L{li + 1} H{hi + 1}", result["tokens"], row, TOP_WORDS, skip=q) if numbers
                     else row_words(f"L{li + 1} H{hi + 1}", result["tokens"], row, TOP_WORDS, skip=q))  # as it reads
            weight = f' <span class="cb-w">{row[tg]:.2f}</span>' if numbers else ""
            if tags:
                label += f" ({', '.join(tags)})"
            # before the pick a tile is a pick; after it, a look: its row, with numbers, in the detail box
            act = f'data-act="{"look" if numbers else "pick"}"{look_attrs(row, q, lang) if numbers else ""} data-pick="{li},{hi}"'
            kind = neighbour_tag(row, q, lang) if numbers else ""
            cells.append(
                f'<button type="button" class="{cls}" {act} aria-label="{esc(label)}">'
                f'<span class="cb-name">L{li + 1} H{hi + 1}{weight}</span>'
                f"{attention_strip(row, tg, q)}{kind}{tag}</button>"
            )
    # data-reveal: the page brings the grid into view (whole) once it is drawn, the question the player answers on it
    return f'<div class="cb-grid" role="group" aria-label="{esc(t("c_grid", lang))}" data-reveal="question">{"".join(cells)}</div>'


# --- the 72 heads as an instrument: any head's row with numbers, heads ranked by one link, neighbour heads named ---


def neighbour_of(row: list[float], word: int) -> str | None:
    """'prev' or 'next' when a head's strongest link from the word (itself left out) is the word just before or
    after it: a previous-word or next-word head, whatever the sentence means; else None."""
    others = [j for j in range(len(row)) if j != word]
    if not others:
        return None
    top = max(others, key=lambda j: row[j])
    return "prev" if top == word - 1 else "next" if top == word + 1 else None


def look_attrs(row: list[float], word: int, lang: str) -> str:
    """What the page's script reads to draw a head's row in the detail box (the numbers, the neighbour label)."""
    kind = neighbour_of(row, word)
    said = f' data-kind="{esc(t("c_" + kind, lang))}"' if kind else ""
    return f' data-row="{",".join(f"{v:.4f}" for v in row)}"{said}'


def neighbour_tag(row: list[float], word: int, lang: str) -> str:
    kind = neighbour_of(row, word)
    return f'<span class="cb-kind">{esc(t("c_" + kind, lang))}</span>' if kind else ""


def detail_box(result: dict, lang: str) -> str:
    """Where the page's script draws the head clicked or keyed to: its row over the words, each with its number."""
    tokens = json.dumps(result["tokens"], ensure_ascii=False)
    return (
        f'<div class="cb-detail" aria-live="polite" data-tokens="{esc(tokens)}" data-word="{result["position"]}"'
        f' data-title="{esc(t("c_detail_title", lang, word=result["word"]))}">'
        f'<p class="note">{esc(t("c_detail_help", lang))}</p></div>'
    )


def ranking_html(result: dict, lang: str, target: int, n: int = 8) -> str:
    """The heads ranked by the weight from the word to `target`, strongest first (the first n), each labelled a
    previous- or next-word head where it is one."""
    q, word_to = result["position"], result["tokens"][target]
    heads = [(row[target], li, hi, row) for li, layer in enumerate(result["attention"]) for hi, row in enumerate(layer)]
    heads.sort(key=lambda x: -x[0])
    items = []
    for w, li, hi, row in heads[:n]:
        kind = neighbour_of(row, q)
        label = f"L{li + 1} H{hi + 1} {w:.2f}" + (f" ({t('c_' + kind, lang)})" if kind else "")
        items.append(f"<li>{esc(label)}</li>")
    title = t("c_rank_title", lang, word=result["word"], to=word_to, n=n)
    return f'<div class="cb-rank"><div class="sub">{esc(title)}</div><ol>{"".join(items)}</ol></div>'
