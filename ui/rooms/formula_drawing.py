"""The attention formula drawn with its real tensors (3-1): every symbol a button that opens the tensor behind it,
its shape in the formula's letters and in numbers; what gives the answer away stays locked until the check."""

from dragon.config import HEADS
from dragon.lessons.head_math import SINK
from ui.rooms.lab import note
from ui.strings import t
from ui.widgets.draw import esc
from ui.widgets.tensors import chips, matrix, signed_bars, strip

SHAPES = {  # each symbol's shape in the formula's own letters; the numbers come from the real tensor
    "x": "d_model", "q": "d_head", "K": "T+1, d_head", "V": "T+1, d_head", "scores": "T+1", "softmax": "T+1",
    "head": "d_head", "concat": "T, d_model", "wo": "d_model, d_head", "out": "d_model",
}


def key_labels(m: dict, lang: str) -> list[str]:
    """The keys as the player reads them: the API's sink key in this language (⟨汇点⟩ in Chinese)."""
    return [t("sink_key", lang) if k == SINK else k for k in m["keys"]]


def tensor_view(sym: str, caption: str, shape: list[int], body: str) -> str:
    """What a formula symbol's button opens: the real tensor, its shape in letters and in numbers."""
    dims = ", ".join(str(n) for n in shape)
    return (
        f'<div class="tensor" data-for="{sym}" hidden><div class="tensor-cap"><b>{esc(caption)}</b> '
        f'<span class="shape">({esc(SHAPES[sym])}) = ({esc(dims)})</span></div>{body}</div>'
    )


def formula_html(m: dict, lang: str, revealed: bool, x_row: list[float], row_diff: float) -> str:
    """The formula with every symbol a button, and the real tensor behind each (the softmax and after: once the
    guess is checked). `x_row`: the word's input vector; `row_diff`: how far the softmax row is from the game's map."""
    word, dh, d, h = m["word"], m["d_head"], m["d_model"], len(HEADS)
    T1 = len(m["keys"])

    def sym(key: str, label: str, locked: bool = False) -> str:
        lock = '<span class="lock" aria-hidden="true">?</span>' if locked and not revealed else ""
        return f'<button type="button" class="sym" data-sym="{key}" aria-pressed="false">{label}{lock}</button>'

    formula = (
        '<div class="formula" role="group">'
        f'<div class="fline">{sym("out", "MultiHead(Q, K, V)", True)} = {sym("concat", "Concat")}(head<sub>1</sub>, …, '
        f'head<sub>h</sub>) {sym("wo", "W<sup>O</sup>")}</div>'
        f'<div class="fline">{sym("head", "head<sub>i</sub>", True)} = Attention({sym("q", "QW<sub>i</sub><sup>Q</sup>")}, '
        f'{sym("K", "KW<sub>i</sub><sup>K</sup>")}, {sym("V", "VW<sub>i</sub><sup>V</sup>")})</div>'
        f'<div class="fline">Attention = {sym("softmax", "softmax", True)}({sym("scores", "q·K<sup>T</sup> / √d<sub>head</sub>", True)}) V</div>'
        f'<div class="fline">Q = K = V = X = (…, {sym("x", "x")}, …)</div></div>'
    )
    keys = key_labels(m, lang)
    dims = [str(j) for j in range(dh)]
    locked = f'<p class="locked">{esc(t("f_locked", lang))}</p>'
    a, b = m["w_o_columns"]
    if revealed:
        diff = f"{row_diff:.1e}"
        scores = signed_bars(keys, m["scores"], m["winner"])
        softmax = signed_bars(keys, m["weights"], m["winner"], 3) + note(t("same_map", lang, word=word, diff=diff))
        head_out = chips(m["weighted_v"])
        out = strip([[v] for v in m["output"]], t("out_dims", lang, d=d))
    else:  # the scores give the winner away: they too are sent only once the guess is checked
        scores = softmax = head_out = out = locked
    x = strip([[v] for v in x_row], f"x ({d})")
    w_o = strip(m["w_o_slice"], f"{t('out_dims', lang, d=d)} × {t('head_dims', lang, dh=dh)}")
    shapes = m["shapes"]
    views = [
        tensor_view("x", t("sym_x", lang, word=word), [d], x),
        tensor_view("q", t("sym_q", lang, word=word), shapes["q"], chips(m["q"])),
        tensor_view("K", t("sym_K", lang, t=T1 - 1), shapes["K"], matrix(m["k"], keys, dims, "K", lang)),
        tensor_view("V", t("sym_V", lang), shapes["V"], matrix(m["v"], keys, dims, "V", lang)),
        tensor_view("scores", t("sym_scores", lang, s=m["sqrt_d_head"]), shapes["scores"], scores),
        tensor_view("softmax", t("sym_softmax", lang), shapes["weights"], softmax),
        tensor_view("head", t("sym_head", lang, word=word, dh=dh), shapes["weighted_v"], head_out),
        tensor_view("concat", t("sym_concat", lang, h=h, dh=dh, t=T1 - 1, d=d, a=a, b=b - 1), [T1 - 1, d], ""),
        tensor_view("wo", t("sym_wo", lang, a=a, b=b - 1), shapes["W_O_slice"], w_o),
        tensor_view("out", t("sym_out", lang, n=f"{m['output_norm']:.3f}"), shapes["output"], out),
    ]
    return formula + f'<div class="tensors">{"".join(views)}</div>'
