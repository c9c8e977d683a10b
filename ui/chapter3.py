"""Chapter 3's labs: 3-1 inside the formula, 3-2 the race, 3-3 fusion, 3-4 how many heads (and the facts quiz).

One panel (the `lab` component) for the four level kinds. The player predicts first; then the real computation
runs (dragon.api) and is shown, and the prediction is scored against it. Checking shows the answer, so after a
check another try earns at most one star (as in chapter 1). What this player did on the lab on screen (the rounds
answered, the race or training result) stays in the session, on the server: `session["lab"]`."""

import json
import math
import time
from collections.abc import Callable

import numpy as np

from dragon import api, game
from dragon.attention import MultiHeadAttention
from dragon.config import HEADS
from dragon.device import best_device
from dragon.lessons.head_math import SINK
from dragon.lessons.heads_experiment import curves_frame
from dragon.lessons.race import flops, race_frame
from dragon.levels import Level, get_level
from dragon.scoring import stars as stars_for

from .charts import bars_html, line_chart
from .draw import esc, notice_html, star_text, why_html
from .heatmap import labelled_grid, legend, png_data_uri
from .session import EventData, Saved, State, level_after, session_of
from .text import HEAD_COLORS, NUMERALS, head_label, head_name, t
from .top import progress_props

Attempt = dict  # {"level": id, …}: the rounds answered (3-1), the race (3-2), the check (3-3), the run (3-4)
Progress = Callable[..., object] | None  # gr.Progress, or None outside the app
HIDDEN = {"body": "", "kind": ""}
STEP_KEYS = ("concat", "w_o", "residual")
FUSION_POINTS = 3  # 3-3: the order, the keep guess, the reach guess
GUESS_RANGE = (0.1, 1000.0)
REACH_MIN = 0.01  # a head "writes into" an output number when it has at least this share of the weights into it
RACE_COLOURS = {"loop": "#c2410c", "batched": "#1f4e9c"}
QUIZ_MAX = 10**9  # 3-4's quiz: an answer must be at least 0 and under this (every answer is far below it)
HEADS_COLOURS = ("#8e9aa6", "#d4a017", "#2e9e4f", "#7b3fbf", "#17a2b8")  # h = 1, 2, 4, 8, 16


# --- small pieces ---------------------------------------------------------------------------------------------


def device_label(device: str, lang: str, threads: int | None = None) -> str:
    """'CPU (2 threads)', 'GPU (CUDA)', 'Apple GPU (MPS)': which device ran a number."""
    kind = str(device).split(":")[0]
    if kind == "cuda":
        return t("dev_cuda", lang)
    if kind == "mps":
        return t("dev_mps", lang)
    if threads is None:
        import torch

        threads = torch.get_num_threads()
    return t("dev_cpu1", lang) if threads == 1 else t("dev_cpu", lang, n=threads)


def mark(ok: bool, lang: str) -> str:
    return t("ok" if ok else "not_ok", lang)


def thousands(n: float) -> str:
    """9 216, 2 362 368: thin spaces between thousands (both languages)."""
    return f"{n:,.0f}".replace(",", "\u2009") if float(n).is_integer() else f"{n:g}"


def bucket_text(prefix: str, i: int, edges: tuple[float, ...], lang: str) -> str:
    """An answer bucket's label, its edges filled in from the constants dragon/game.py scores with."""
    return t(f"{prefix}{i}", lang, **{f"e{j}": f"{e:g}" for j, e in enumerate(edges)})


def bucket_choices(prefix: str, edges: tuple[float, ...], lang: str) -> list[tuple[str, str]]:
    return [(str(i), bucket_text(prefix, i, edges, lang)) for i in range(len(edges) + 1)]


def least_for(stars_of: Callable[[int], int], out_of: int) -> list[int]:
    """The fewest points that earn ★★★, ★★ and ★ under a star rule (read off the rule itself, not retyped)."""
    return [next((p for p in range(out_of + 1) if stars_of(p) >= n), out_of) for n in (3, 2, 1)]


def rule_html(level: Level, lang: str) -> str:
    """One line under the question: the star rule this level is scored with (dragon/game.py's constants)."""
    if level.kind == "formula":
        m = 2 * len(level.rounds[lang])
        _, b, c = least_for(lambda p: game.formula_stars(p, m), m)
        text = t("rule_formula", lang, m=m, b=b, c=c)
    elif level.kind == "race":
        a, b, c = (f"{f:g}" for f in game.GUESS_FACTORS)
        text = t("rule_race", lang, a=a, b=b, c=c)
    elif level.kind == "fusion":
        _, b, c = least_for(game.fusion_stars, FUSION_POINTS)
        text = t("rule_fusion", lang, m=FUSION_POINTS, b=b, c=c)
    else:
        n = len(api.EXPERIMENT.heads)
        m = n * (n - 1) // 2
        _, b, c = least_for(lambda p: game.rank_stars(p, m), m)
        text = t("rule_rank", lang, m=m, b=b, c=c, tie=f"{game.TIE:g}")
    return f'<p class="rule">{esc(text)}</p>'


def answer_cap(progress: dict, level_id: str) -> int:
    return stars_for(100.0, game.hints_used(progress, level_id))


def attempt_of(state: State, level: Level) -> Attempt:
    """This player's attempt at the lab on screen (a fresh one when the session holds another level's)."""
    lab = state.get("lab") if isinstance(state, dict) else None
    return lab if isinstance(lab, dict) and lab.get("level") == level.id else {"level": level.id}


def _options(choices: list[tuple[str, str]], chosen: str | None, lang: str) -> str:
    first = f'<option value="">{esc(t("pick", lang))}</option>'
    return first + "".join(
        f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>{esc(label)}</option>' for v, label in choices
    )


def _select(name: str, label: str, choices: list[tuple[str, str]], chosen: str | None, lang: str) -> str:
    return (
        f'<label class="ask"><span>{esc(label)}</span>'
        f'<select data-answer="{name}">{_options(choices, chosen, lang)}</select></label>'
    )


def _button(act: str, label: str, primary: bool = True) -> str:
    return f'<button type="button" class="btn{" primary" if primary else ""}" data-act="{act}" id="mhd-lab-{act}">{esc(label)}</button>'


def _cap_note(level: Level, lang: str, progress: dict, attempt: Attempt) -> str:
    """What stars are still reachable: before a check, after it (another try), or during 3-1's rounds."""
    if "stars" in attempt:
        return ""  # the end of the attempt says what was earned
    if "cap" in attempt:  # 3-1, rounds under way: this try keeps what it could earn when it began
        text = t("lab_try", lang, now=star_text(int(attempt["cap"])), later=star_text(1))
    elif game.hints_used(progress, level.id):
        text = t("lab_shown", lang, stars=star_text(answer_cap(progress, level.id)))
    else:
        text = t("lab_cap", lang, stars=star_text(1))
    return f'<p class="cap-note">{esc(text)}</p>'


def _end(level: Level, lang: str, progress: dict, earned: int) -> str:
    """After the last check: the stars, won or lost, the why, and the way on (next level, or try again)."""
    head = t("lab_won", lang, stars=star_text(earned)) if earned else t("lab_lost", lang)
    after = level_after(level, progress) if progress["stars"].get(level.id, 0) else None
    buttons = _button("again", t("again", lang), primary=not earned) + (
        _button("next", t("next", lang)) if after else ""
    )
    return (
        f'<div class="lab-end {"won" if earned else "lost"}" data-stars="{earned}">'
        f'<span class="result-stars">{star_text(earned)}</span> '
        f"<b>{esc(head)}</b><div class=\"lab-buttons\">{buttons}</div></div>{why_html(level, lang)}"
    )


def _record(progress: dict, level: Level, score: float, earned: int) -> dict:
    """Keep the result; a check that was not perfect has shown the answer, so later tries earn at most ★."""
    progress = game.record(progress, level.id, score, earned)
    return game.use_hints_up_to(progress, level.id, 2) if earned < 3 else progress


SHAPES = {  # each symbol's shape in the formula's own letters; the numbers come from the real tensor
    "x": "d_model", "q": "d_head", "K": "T+1, d_head", "V": "T+1, d_head", "scores": "T+1", "softmax": "T+1",
    "head": "d_head", "concat": "T, d_model", "wo": "d_model, d_head", "out": "d_model",
}  # fmt: skip


def key_labels(m: dict, lang: str) -> list[str]:
    """The keys as the player reads them: the API's sink key in this language (⟨汇点⟩ in Chinese)."""
    return [t("sink_key", lang) if k == SINK else k for k in m["keys"]]


def _tensor(sym: str, caption: str, shape: list[int], body: str) -> str:
    dims = ", ".join(str(n) for n in shape)
    return (
        f'<div class="tensor" data-for="{sym}" hidden><div class="tensor-cap"><b>{esc(caption)}</b> '
        f'<span class="shape">({esc(SHAPES[sym])}) = ({esc(dims)})</span></div>{body}</div>'
    )


def _chips(values: list[float], digits: int = 2) -> str:
    return '<div class="chips">' + "".join(f'<span class="chip">{v:.{digits}f}</span>' for v in values) + "</div>"


def _signed_bars(keys: list[str], values: list[float], winner: int | None, digits: int = 2) -> str:
    """One bar per key, its value beside it; the winner framed once it is shown."""
    top = max((abs(v) for v in values), default=1.0) or 1.0
    rows = "".join(
        f'<div class="kbar{" win" if i == winner else ""}"><span class="kname">{esc(k)}</span>'
        f'<span class="ktrack"><span class="kfill{" neg" if v < 0 else ""}" style="width:{100 * abs(v) / top:.1f}%">'
        f'</span></span><span class="kval">{v:.{digits}f}</span></div>'
        for i, (k, v) in enumerate(zip(keys, values, strict=True))
    )
    return f'<div class="kbars">{rows}</div>'


def _matrix(m: list[list[float]], rows: list[str], cols: list[str], title: str, lang: str) -> str:
    """A labelled heat map of a small matrix (K, V) whose cells tell their value on hover or focus."""
    a = np.asarray(m, dtype=np.float64)
    lo, hi = float(a.min()), float(a.max())
    scale = (a - lo) / (hi - lo) if hi > lo else np.zeros_like(a)
    return labelled_grid(a, rows, cols, title, lang, name=title, tip="{name}: {row} · {col} = {v}", scale=scale,
                         show_title=False)  # fmt: skip


def _strip(m: list[list[float]], caption: str) -> str:
    """A wide matrix (W^O's slice) as a stretched picture: too many cells to label each."""
    a = np.asarray(m, dtype=np.float64).T  # (d_head, d) lies flat
    lo, hi = float(a.min()), float(a.max())
    scaled = (a - lo) / (hi - lo) if hi > lo else np.zeros_like(a)
    return (
        f'<figure class="strip"><img alt="{esc(caption)}" src="{png_data_uri(scaled)}">'
        f"<figcaption>{esc(caption)} · min {lo:.2f} · max {hi:.2f}</figcaption></figure>"
    )


# --- 3-1 inside the formula -----------------------------------------------------------------------------------


def _round_math(level: Level, lang: str, i: int) -> dict:
    r = level.rounds[lang][i]
    return api.head_math(level.text[lang], lang, r.word, r.head)


def _map_row_diff(level: Level, lang: str, m: dict) -> float:
    """How far the formula's softmax row is from the engine's own map (the one the game draws)."""
    row = api.level_reading(level, lang).weights[m["head_index"], m["position"] + 1].numpy()
    return float(np.abs(np.asarray(m["weights"]) - row).max())


def _formula_html(m: dict, lang: str, revealed: bool, level: Level) -> str:
    """The formula with every symbol a button, and the real tensor behind each (the softmax and after: once the
    guess is checked)."""
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
        diff = f"{_map_row_diff(level, lang, m):.1e}"
        scores = _signed_bars(keys, m["scores"], m["winner"])
        softmax = _signed_bars(keys, m["weights"], m["winner"], 3)
        softmax += f'<p class="note">{esc(t("same_map", lang, word=word, diff=diff))}</p>'
        head_out = _chips(m["weighted_v"])
        out = _strip([[v] for v in m["output"]], t("out_dims", lang, d=d))
    else:  # the scores give the winner away: they too are sent only once the guess is checked
        scores = softmax = head_out = out = locked
    x = _strip([[v] for v in _input_row(level, lang, m)], f"x ({d})")
    w_o = _strip(m["w_o_slice"], f"{t('out_dims', lang, d=d)} × {t('head_dims', lang, dh=dh)}")
    shapes = m["shapes"]
    views = [
        _tensor("x", t("sym_x", lang, word=word), [d], x),
        _tensor("q", t("sym_q", lang, word=word), shapes["q"], _chips(m["q"])),
        _tensor("K", t("sym_K", lang, t=T1 - 1), shapes["K"], _matrix(m["k"], keys, dims, "K", lang)),
        _tensor("V", t("sym_V", lang), shapes["V"], _matrix(m["v"], keys, dims, "V", lang)),
        _tensor("scores", t("sym_scores", lang, s=m["sqrt_d_head"]), shapes["scores"], scores),
        _tensor("softmax", t("sym_softmax", lang), shapes["weights"], softmax),
        _tensor("head", t("sym_head", lang, word=word, dh=dh), shapes["weighted_v"], head_out),
        _tensor("concat", t("sym_concat", lang, h=h, dh=dh, t=T1 - 1, d=d, a=a, b=b - 1), [T1 - 1, d], ""),
        _tensor("wo", t("sym_wo", lang, a=a, b=b - 1), shapes["W_O_slice"], w_o),
        _tensor("out", t("sym_out", lang, n=f"{m['output_norm']:.3f}"), shapes["output"], out),
    ]
    return formula + f'<div class="tensors">{"".join(views)}</div>'


def _input_row(level: Level, lang: str, m: dict) -> list[float]:
    return api.level_reading(level, lang).x[m["position"] + 1].tolist()


def share_choices(lang: str) -> list[tuple[str, str]]:
    return bucket_choices("share", game.SHARE_BUCKETS, lang)


def _formula_body(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    rounds = level.rounds[lang]
    at = min(int(attempt.get("at", 0)), len(rounds) - 1)
    done = attempt.get("done", [])
    revealed = len(done) > at
    m = _round_math(level, lang, at)
    head = m["head"]
    title = t("f_round", lang, i=at + 1, n=len(rounds), head=f"{NUMERALS[HEADS.index(head)]} {head_name(head, lang)}",
              word=m["word"])  # fmt: skip
    keys = key_labels(m, lang)
    key_choices = [(str(i), k) for i, k in enumerate(keys)]
    mine = done[at] if revealed else {}
    chosen = (str(mine["winner"]), str(mine["share"])) if revealed else (None, None)
    ask = _select("winner", t("f_winner_q", lang), key_choices, chosen[0], lang) + _select(
        "share", t("f_share_q", lang), share_choices(lang), chosen[1], lang
    )
    result = note
    if revealed:
        win = max(m["weights"])
        right_b = game.bucket(win, game.SHARE_BUCKETS)
        line = t("f_result", lang, winner=keys[m["winner"]], w=f"{win:.3f}", bucket=bucket_text("share", right_b, game.SHARE_BUCKETS, lang),
                 mine_key=keys[mine["winner"]], ok1=mark(mine["winner"] == m["winner"], lang),
                 mine_share=bucket_text("share", mine["share"], game.SHARE_BUCKETS, lang), ok2=mark(mine["share"] == right_b, lang),
                 p=mine["points"])  # fmt: skip
        result += f'<div class="result-head">{esc(line)}</div>'
        if len(done) < len(rounds):
            result += f'<div class="lab-buttons">{_button("round", t("f_next_round", lang))}</div>'
        else:
            points = sum(r["points"] for r in done)
            result += f'<p>{esc(t("f_total", lang, n=len(rounds), p=points, m=2 * len(rounds)))}</p>'
            result += _end(level, lang, progress, int(attempt.get("stars", 0)))
    check = "" if revealed else _button("check", t("check", lang))
    device = device_label(m["device"], lang)
    return (
        f'<div class="lab-formula lab-cols" data-open="{"softmax" if revealed else "q"}">'
        f'<div class="lab-main"><h3 class="round">{esc(title)}</h3>'
        f'<p class="note">{esc(t("f_intro", lang, t=len(m["tokens"])))} {esc(t("computed_on", lang, device=device))}</p>'
        f'{_formula_html(m, lang, revealed, level)}<p class="note">{esc(t("f_sink", lang))}</p></div>'
        f'<div class="lab-side"><div class="asks">{ask}</div>{rule_html(level, lang)}<div class="answer-row">{check}</div>'
        f'{_cap_note(level, lang, progress, attempt)}<div class="result-box" role="status">{result}</div></div></div>'
    )


def _formula_check(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> tuple[dict, Attempt, str]:
    rounds = level.rounds[lang]
    done = list(attempt.get("done", []))
    at = int(attempt.get("at", 0))
    if len(done) != at or at >= len(rounds):
        return progress, attempt, ""  # this round was already checked
    m = _round_math(level, lang, at)
    try:
        winner, share = int(str(data.get("winner"))), int(str(data.get("share")))
    except ValueError:
        return progress, attempt, notice_html(t("f_bad", lang))
    if not (0 <= winner < len(m["keys"]) and 0 <= share <= len(game.SHARE_BUCKETS)):
        return progress, attempt, notice_html(t("f_bad", lang))
    cap = int(attempt.get("cap", answer_cap(progress, level.id)))
    if not done:  # the first answer shown: from now on another try earns at most ★
        progress = game.use_hints_up_to(progress, level.id, 2)
    right_share = game.bucket(max(m["weights"]), game.SHARE_BUCKETS)
    points = int(winner == m["winner"]) + int(share == right_share)
    done.append({"winner": winner, "share": share, "points": points})
    attempt = {**attempt, "done": done, "cap": cap, "at": at}
    if len(done) == len(rounds):
        total = sum(r["points"] for r in done)
        earned = min(game.formula_stars(total, 2 * len(rounds)), cap)
        progress = game.record(progress, level.id, 100.0 * total / (2 * len(rounds)), earned)
        attempt["stars"] = earned
    return progress, attempt, ""


# --- 3-2 the race ---------------------------------------------------------------------------------------------


def _race_result_html(level: Level, lang: str, progress: dict, attempt: Attempt) -> str:
    r = attempt["result"]
    i = r["lengths"].index(level.guess_at)
    device = device_label(r["device"], lang, r.get("threads"))
    s = r["speedup"][i]
    head = t("r_result", lang, device=device, t=level.guess_at, loop=f"{r['loop_ms'][i]:.2f}",
             batched=f"{r['batched_ms'][i]:.2f}", n=r["repeats"][i], s=f"{s:.2f}", g=f"{attempt['guess']:g}",
             f=f"{attempt['factor']:.2f}")  # fmt: skip
    frame = race_frame(r)
    chart = line_chart(
        frame, "length", "ms", "path", title=t("r_chart", lang, device=device), x_label=t("r_x", lang),
        y_label=t("r_y", lang), colours=RACE_COLOURS, names={"loop": t("r_loop", lang), "batched": t("r_batched", lang)},
        log_x=True, log_y=True, x_ticks=[float(n) for n in r["lengths"]], tip=t("r_tip", lang), y_unit=" ms",
    )  # fmt: skip
    rows = "".join(
        f"<tr><td>{T}</td><td>{thousands(a)}</td><td>{thousands(b)}</td><td>{esc(t('equal' if a == b else 'unequal', lang))}</td></tr>"
        for T, a, b in zip(r["lengths"], r["flops_loop"], r["flops_batched"], strict=True)
    )
    table = (
        f'<div class="table-wrap"><table class="flops"><caption>{esc(t("r_flops_title", lang))}</caption><thead><tr><th>T</th>'
        f"<th>{esc(t('r_loop_flops', lang))}</th><th>{esc(t('r_batched_flops', lang))}</th><th></th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
        f'<p class="note">{esc(t("r_pieces", lang, a=r["matmuls_loop"], b=r["matmuls_batched"]))}</p>'
    )
    d, T = r["d_model"], level.guess_at
    one_head = flops("batched", T, d, 1)
    fact = t("r_fact", lang, device=device, t=T, s=f"{s:.2f}", flops=thousands(r["flops_batched"][i]), d=d,
             flops1=thousands(one_head), eq=t("equal" if one_head == r["flops_batched"][i] else "unequal", lang))  # fmt: skip
    fact += " " + t("r_fact_faster" if s > 1 else "r_fact_slower", lang)
    return (
        f'<div class="result-head" data-measured="{s}">{esc(head)}</div>{_end(level, lang, progress, int(attempt["stars"]))}'
        f'<div class="fact-check">{esc(fact)}</div><div class="race-result">{chart}<div>{table}</div></div>'
    )


def _race_body(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    from dragon.config import DragonConfig

    cfg = DragonConfig()
    device = device_label(str(best_device()), lang)
    setup = t("r_setup", lang, h=cfg.n_heads, d=cfg.d_model, dh=cfg.d_head, lengths=", ".join(map(str, level.lengths)),
              device=device)  # fmt: skip
    guess = format(attempt["guess"], "g") if "guess" in attempt else ""
    lo, hi = GUESS_RANGE
    ask = (
        f'<label class="ask guess"><span>{esc(t("r_guess", lang, t=level.guess_at))}</span><span class="times">'
        f'<input type="number" min="{lo}" max="{hi}" step="0.1" inputmode="decimal" data-answer="guess" '
        f'value="{esc(guess)}"> ×</span></label>'
    )
    result = note + (_race_result_html(level, lang, progress, attempt) if "result" in attempt else "")
    go = "" if "result" in attempt else _button("race", t("r_go", lang))
    return (
        f'<div class="lab-race"><p class="note setup">{esc(setup)}</p><div class="answer-row">{ask}{go}</div>'
        f'{rule_html(level, lang)}{_cap_note(level, lang, progress, attempt)}<div class="result-box" role="status">{result}</div></div>'
    )


def parse_guess(value) -> float | None:
    """A speed-up guess: a finite number in GUESS_RANGE (a comma for the decimal point is fine), else None."""
    try:
        g = float(str(value).strip().replace(",", ".").rstrip("×xX").strip())
    except ValueError:
        return None
    return g if math.isfinite(g) and GUESS_RANGE[0] <= g <= GUESS_RANGE[1] else None


# --- 3-3 fusion -------------------------------------------------------------------------------------------------


def _fusion(level: Level, lang: str) -> dict:
    return api.fusion(level.text[lang], lang)


def weight_heads(f: dict) -> int:
    """The fewest heads with weights into any one output number (W^O on)."""
    reach = np.asarray(f["weight_reach"]["w_o_on"])  # (h, d)
    return int((reach >= REACH_MIN).sum(axis=0).min())


def _setting_html(f: dict, w_o: bool, residual: bool, lang: str) -> str:
    s = next(x for x in f["switches"] if x["w_o"] == w_o and x["residual"] == residual)
    tokens = f["tokens"]
    per_token = bars_html([(tok, v, "#7b3fbf") for tok, v in zip(tokens, s["keep_per_token"], strict=True)], 1.0, cls="keep")
    reach = np.asarray(f["reach"]["w_o_on" if w_o else "w_o_off"])  # (h, d)
    labels = [head_label(i, lang) for i in range(len(HEADS))]
    picture = (
        f'<figure class="reach"><figcaption>{esc(t("u_reach_title", lang, d=f["d_model"]))}</figcaption>'
        '<div class="reach-grid"><div class="reach-names">'
        + "".join(f'<span style="border-color:{HEAD_COLORS[h]}">{esc(n)}</span>' for h, n in zip(HEADS, labels, strict=True))
        + f'</div><img alt="{esc(t("u_reach_title", lang, d=f["d_model"]))}" src="{png_data_uri(reach)}"></div>'
        f"{legend(lang)}</figure>"
    )
    hpd = t("u_hpd", lang, n=f"{f['heads_per_dim']['w_o_on' if w_o else 'w_o_off']:.2f}",
            w=weight_heads(f) if w_o else 1)  # fmt: skip
    return (
        f'<div class="setting" data-setting="{int(w_o)}{int(residual)}" hidden>'
        f'<div class="keep-mean">{esc(t("u_keep_mean", lang, v=format(s["keep"], ".2f")))}</div>'
        f'<div class="setting-cols"><div><div class="sub">{esc(t("u_per_token", lang))}</div>{per_token}</div>'
        f'<div>{picture}<p class="note">{esc(hpd)}</p></div></div></div>'
    )


def _fusion_body(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    answers = attempt.get("answers", {})
    steps = [(k, t(f"u_{k}", lang)) for k in STEP_KEYS]
    order = "".join(
        f"<li>{_select(f'o{i}', t('u_step', lang, i=i + 1), steps, answers.get(f'o{i}'), lang)}</li>" for i in range(3)
    )
    keep_choices = bucket_choices("keep", game.KEEP_BUCKETS, lang)
    reach_choices = bucket_choices("reach", game.REACH_BUCKETS, lang)
    ask = (
        f'<p class="question">{esc(t("u_order", lang))}</p><ol class="order">{order}</ol>'
        + _select("keep", t("u_keep_q", lang), keep_choices, answers.get("keep"), lang)
        + _select("reach", t("u_reach_q", lang), reach_choices, answers.get("reach"), lang)
        + rule_html(level, lang)
    )
    result, lab = note, f'<p class="note">{esc(t("u_locked", lang))}</p>'
    checked = "stars" in attempt
    f = _fusion(level, lang)
    if checked:
        result += _fusion_result_html(level, lang, progress, attempt, f)
        switches = (
            f'<div class="switches"><b>{esc(t("u_switches", lang))}</b>'
            f'<label><input type="checkbox" data-switch="wo" checked> {esc(t("u_sw_wo", lang))}</label>'
            f'<label><input type="checkbox" data-switch="res" checked> {esc(t("u_sw_res", lang))}</label></div>'
        )
        lab = switches + "".join(_setting_html(f, w, r, lang) for w in (True, False) for r in (True, False))
    device = device_label(f["device"], lang)
    check = "" if checked else f'<div class="answer-row">{_button("check", t("check", lang))}</div>'
    return (
        f'<div class="lab-fusion lab-cols"><div class="lab-main">'
        f'<p class="note">{esc(t("computed_on", lang, device=device))}</p>{ask}{check}'
        f'{_cap_note(level, lang, progress, attempt)}<div class="result-box" role="status">{result}</div></div>'
        f'<div class="lab-side fusion-lab">{lab}</div></div>'
    )


def effective_heads(f: dict) -> float:
    """How many heads, in effect, make up each output number with Wᴼ on (measured on the level's text)."""
    return float(f["heads_per_dim"]["w_o_on"])


def _fusion_truth(f: dict) -> tuple[list[str], int, int]:
    """The right answers, from the measurement: the order, the keep bucket and the effective-heads bucket."""
    keep = game.bucket(f["keep_without_residual"], game.KEEP_BUCKETS)
    return f["steps"], keep, game.bucket(effective_heads(f), game.REACH_BUCKETS)


def _fusion_result_html(level: Level, lang: str, progress: dict, attempt: Attempt, f: dict) -> str:
    a = attempt["answers"]
    steps, keep_b, reach_b = _fusion_truth(f)
    order = " → ".join(t(f"u_{k}", lang) for k in steps)
    mine = [a[f"o{i}"] for i in range(3)]
    lines = [
        t("u_order_ok" if mine == steps else "u_order_wrong", lang, order=order, ok=mark(mine == steps, lang)),
        t("u_keep_res", lang, v=f"{f['keep_without_residual']:.2f}", bucket=bucket_text("keep", keep_b, game.KEEP_BUCKETS, lang),
          mine=bucket_text("keep", int(a["keep"]), game.KEEP_BUCKETS, lang), ok=mark(int(a["keep"]) == keep_b, lang)),
        t("u_reach_res", lang, n=f"{effective_heads(f):.2f}", w=weight_heads(f),
          bucket=bucket_text("reach", reach_b, game.REACH_BUCKETS, lang),
          mine=bucket_text("reach", int(a["reach"]), game.REACH_BUCKETS, lang), ok=mark(int(a["reach"]) == reach_b, lang)),
    ]  # fmt: skip
    items = "".join(f"<li>{esc(line)}</li>" for line in lines)
    return (
        f'<div class="result-head">{esc(t("u_points", lang, p=attempt["points"]))}</div><ul class="lines">{items}</ul>'
        + _end(level, lang, progress, int(attempt["stars"]))
    )


def _fusion_check(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> tuple[dict, Attempt, str]:
    if "stars" in attempt:
        return progress, attempt, ""
    answers = {f"o{i}": data.get(f"o{i}") for i in range(3)}
    answers.update(keep=data.get("keep"), reach=data.get("reach"))
    order = [answers[f"o{i}"] for i in range(3)]
    if (
        sorted(map(str, order)) != sorted(STEP_KEYS)
        or answers["keep"] not in [str(i) for i in range(len(game.KEEP_BUCKETS) + 1)]
        or answers["reach"] not in [str(i) for i in range(len(game.REACH_BUCKETS) + 1)]
    ):
        return progress, attempt, notice_html(t("u_bad", lang))
    f = _fusion(level, lang)
    steps, keep_b, reach_b = _fusion_truth(f)
    points = int(order == steps) + int(int(answers["keep"]) == keep_b) + int(int(answers["reach"]) == reach_b)
    earned = min(game.fusion_stars(points), answer_cap(progress, level.id))
    progress = _record(progress, level, 100.0 * points / FUSION_POINTS, earned)
    return progress, {**attempt, "answers": answers, "points": points, "stars": earned}, ""


# --- 3-4 how many heads? ------------------------------------------------------------------------------------------


def param_counts(d: int, heads: list[int]) -> list[int]:
    """The parameters of a real MultiHeadAttention(d, h) for each h, counted now."""
    return [sum(p.numel() for p in MultiHeadAttention(d, h).parameters()) for h in heads]


def _ordinal(i: int, lang: str) -> str:
    return t("h_place", lang, i=i)


def _heads_body(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    ex = api.EXPERIMENT
    heads = list(ex.heads)
    device = device_label(str(best_device()), lang, ex.cpu_threads if best_device().type == "cpu" else None)
    setup = t("h_setup", lang, vocab=ex.vocab, length=ex.length, relations=", ".join(map(str, ex.relations)),
              k=len(ex.relations), d=ex.d_model, steps=ex.steps, device=device)  # fmt: skip
    counts = param_counts(ex.d_model, heads)
    formula = 4 * ex.d_model**2 + 4 * ex.d_model
    row = "".join
    equal = t("h_all_equal" if set(counts) == {formula} else "h_not_equal", lang)
    params = (
        f'<div class="table-wrap"><table class="params"><caption>{esc(t("h_params_title", lang))}</caption><tbody>'
        f"<tr><th>{esc(t('h_heads', lang))}</th>{row(f'<td>{h}</td>' for h in heads)}</tr>"
        f"<tr><th>{esc(t('h_dhead', lang))}</th>{row(f'<td>{ex.d_model // h}</td>' for h in heads)}</tr>"
        f"<tr><th>{esc(t('h_params', lang))}</th>{row(f'<td>{thousands(n)}</td>' for n in counts)}</tr>"
        f"</tbody></table></div>"
        f'<p class="formula-line">{esc(t("h_formula", lang, d=ex.d_model, n=thousands(formula), eq=equal))}</p>'
    )
    ranking = attempt.get("ranking") or [None] * len(heads)
    choices = [(str(h), f"h = {h}") for h in heads]
    places = "".join(
        f"<li>{_select(f'r{i}', _ordinal(i + 1, lang), choices, None if r is None else str(r), lang)}</li>"
        for i, r in enumerate(ranking)
    )
    done = "result" in attempt
    go = "" if done else _button("train", t("h_go", lang))
    result = note + (_heads_result_html(level, lang, progress, attempt) if done else "")
    quiz = _quiz_html(level, lang, attempt) if done or progress["stars"].get(level.id, 0) else ""
    return (
        f'<div class="lab-heads"><p class="note setup">{esc(setup)}</p>{params}'
        f'<p class="question">{esc(t("h_rank_q", lang))}</p><ol class="places">{places}</ol>'
        f'{rule_html(level, lang)}<div class="answer-row">{go}</div>{_cap_note(level, lang, progress, attempt)}'
        f'<div class="result-box" role="status">{result}</div>{quiz}</div>'
    )


def _heads_result_html(level: Level, lang: str, progress: dict, attempt: Attempt) -> str:
    r = attempt["result"]
    device = device_label(r["device"], lang, r.get("threads"))
    head = t("h_result", lang, right=attempt["pairs"][0], total=attempt["pairs"][1], tie=game.TIE)
    colours = {f"h = {h}": c for h, c in zip(r["heads"], HEADS_COLOURS, strict=False)}
    chart = line_chart(
        curves_frame(r), "step", "loss", "heads", title=t("h_chart", lang, device=device, s=f"{r['seconds']:.1f}"),
        x_label=t("h_x", lang), y_label=t("h_y", lang), colours=colours, tip="{series}: {x} → {y}",
    )  # fmt: skip
    place = {h: i + 1 for i, h in enumerate(attempt["ranking"])}
    acc = bars_html(
        [(f"h = {h} · {t('h_your_rank', lang, r=place[h])}", a, colours[f"h = {h}"])
         for h, a in zip(r["heads"], r["final_accuracy"], strict=True)], 1.0, fmt="{:.1%}", cls="acc",
    )  # fmt: skip
    vas = api.facts()["vaswani"]
    paper = ", ".join(f"h = {row['h']}: {row['bleu']:.1f} BLEU" for row in vas["rows"])
    paper = f'<p class="note vaswani">{esc(t("h_vaswani", lang, d=vas["d_model"]))} {esc(paper)}</p>'
    accuracy = {str(h): a for h, a in zip(r["heads"], r["final_accuracy"], strict=True)}
    acc_title = t("h_acc_title", lang, n=r["task"]["eval_size"], chance=format(r["chance"], ".1%"))
    return (
        f'<div class="result-head">{esc(head)}</div>{_end(level, lang, progress, int(attempt["stars"]))}'
        f'<div class="heads-result"><div class="acc-box" data-accuracy="{esc(json.dumps(accuracy))}"><div class="sub">{esc(acc_title)}</div>{acc}'
        f"</div>{chart}</div>{paper if paper_answered(level, attempt) else ''}"
    )


def paper_answered(level: Level, attempt: Attempt) -> bool:
    """The paper's BLEU table gives the quiz's BLEU question away: it is shown once that answer is checked."""
    asks = [q["id"] for q in api.facts()["quiz"] if q["id"] in level.quiz and q["ask"].get("field") == "bleu"]
    given = attempt.get("quiz", {})
    return all(isinstance(given.get(qid), dict) and "value" in given[qid] for qid in asks)


def parse_ranking(data: dict, heads: list[int]) -> list[int] | None:
    """Five places, each a different h of the experiment, else None."""
    try:
        ranking = [int(str(data.get(f"r{i}"))) for i in range(len(heads))]
    except ValueError:
        return None
    return ranking if sorted(ranking) == sorted(heads) else None


def _quiz_html(level: Level, lang: str, attempt: Attempt) -> str:
    facts = api.facts()
    questions = {q["id"]: q for q in facts["quiz"]}
    given = attempt.get("quiz", {})
    items, right = [], 0
    for qid in level.quiz:
        q, g = questions[qid], given.get(qid)
        line = ""
        if isinstance(g, dict) and "bad" in g:
            why = t("q_range", lang, given=g["bad"], hi=thousands(QUIZ_MAX)) if g.get("range") else t("q_bad", lang, given=g["bad"])
            line = notice_html(why)
        elif isinstance(g, dict):
            r = api.facts_quiz(qid, g["value"])
            right += r["correct"]
            answer = thousands(r["answer"])
            line = t("q_right", lang, answer=answer) if r["correct"] else t("q_wrong", lang, given=thousands(r["given"]), answer=answer)
            line = f'<div class="q-result {"right" if r["correct"] else "wrong"}">{esc(line)}</div>'
            if r["model"] and r["lesson_says"] is not None:
                m, lesson = r["model"], r["model"]["lesson_says"]
                line += f'<div class="fact-check">{esc(t("q_fact", lang, name=m["name"], lesson_heads=lesson.get("heads", "?"), lesson_total=thousands(lesson.get("total_heads", 0)), layers=m["layers"], heads=m["heads"], total=thousands(m["total_heads"])))}</div>'
        value = "" if not isinstance(g, dict) else esc(g.get("value", g.get("bad", "")))
        items.append(
            f'<li><label class="ask"><span>{esc(q["question"][lang])}</span><input type="text" inputmode="decimal" '
            f'data-answer="q:{esc(qid)}" value="{value}" maxlength="20"></label>{line}</li>'
        )
    answered = sum(isinstance(g, dict) and "value" in g for g in given.values())
    score = t("q_score", lang, n=right, k=answered, m=len(level.quiz))
    score = f'<p class="result-head">{esc(score)}</p>' if answered else ""
    rows = "".join(
        f"<tr><td>{esc(m['name'])}</td><td>{m['layers']} × {m['heads']}"
        f"{esc(t('q_gqa', lang, kv=m['kv_heads'])) if m['kv_heads'] != m['heads'] else ''}</td>"
        f"<td>{m['d_model']} / {m['d_head']}</td><td>{thousands(m['total_heads'])}"
        f"{' · ' + esc(t('q_lesson', lang, n=thousands(m['lesson_says']['total_heads']))) if (m.get('lesson_says') or {}).get('total_heads') else ''}</td></tr>"
        for m in facts["models"]
    )
    table = (
        f'<details class="facts"><summary>{esc(t("q_table", lang))}</summary><div class="table-wrap"><table><thead><tr>'
        f"<th>{esc(t('q_model', lang))}</th><th>{esc(t('q_layers_heads', lang))}</th><th>{esc(t('q_dims', lang))}</th>"
        f"<th>{esc(t('q_total', lang))}</th></tr></thead><tbody>{rows}</tbody></table></div></details>"
    )
    return (
        f'<section class="facts-quiz"><h3>{esc(t("q_title", lang))}</h3><ol>{"".join(items)}</ol>'
        f'<div class="answer-row">{_button("quiz", t("q_check", lang))}</div>'
        f'<div class="quiz-box" role="status">{score}</div>{table}</section>'
    )


def _quiz_check(level: Level, attempt: Attempt, data: dict) -> Attempt:
    given = dict(attempt.get("quiz", {}))
    for qid in level.quiz:
        raw = str(data.get(f"q:{qid}", "") or "").strip()[:20]
        if not raw:
            continue
        try:
            value = api.facts_quiz(qid, raw)["given"]
        except ValueError:
            given[qid] = {"bad": raw}
            continue
        ok = math.isfinite(value) and 0 <= value < QUIZ_MAX
        given[qid] = {"value": raw} if ok else {"bad": raw, "range": True}
    return {**attempt, "quiz": given}


# --- the panel and its events ------------------------------------------------------------------------------------

BODIES = {"formula": _formula_body, "race": _race_body, "fusion": _fusion_body, "heads": _heads_body}


def lab_props(level: Level, lang: str, progress: dict, attempt: Attempt | None = None, note: str = "") -> dict:
    """The lab panel for a chapter-3 level: what to predict, and, once checked, the real computation."""
    attempt = attempt if attempt and attempt.get("level") == level.id else {"level": level.id}
    if level.kind in BODIES:
        body = BODIES[level.kind](level, lang, progress, attempt, note)
    else:  # chapters 4–5 build on this module's pieces, so they are imported here rather than above
        from . import chapter4, chapter5

        body = {**chapter4.BODIES, **chapter5.BODIES}[level.kind](level, lang, progress, attempt, note)
    label = t("lab_label" if level.chapter <= 3 else f"lab_label{level.chapter}", lang)
    return {"kind": level.kind, "label": esc(label), "body": body, "ack": time.time_ns()}


def _context(state: State, saved: Saved) -> tuple[Level, str, dict, Attempt] | None:
    session = session_of(state)
    level = get_level(session["level"])
    if not level.lab:
        return None
    return level, session["lang"], game.load(saved).progress, attempt_of(state, level)


def _out(level: Level, lang: str, progress: dict, attempt: Attempt, note: str = "") -> dict:
    return {
        "lab": lab_props(level, lang, progress, attempt, note),
        "saved": game.save(progress),
        "top": progress_props(level, lang, progress),
        "session": {"level": level.id, "lang": lang, "lab": attempt},
    }


def check(state: State, saved: Saved, data: EventData) -> dict:
    """'Check': a formula round (3-1) or the fusion answers (3-3); bad input changes nothing."""
    ctx = _context(state, saved)
    if ctx is None:
        return {}
    level, lang, progress, attempt = ctx
    data = data if isinstance(data, dict) else {}
    if level.kind == "formula":
        progress, attempt, note = _formula_check(level, lang, progress, attempt, data)
    elif level.kind == "fusion":
        progress, attempt, note = _fusion_check(level, lang, progress, attempt, data)
    else:
        return {}
    if note:
        return {"lab": lab_props(level, lang, progress, attempt, note)}
    return _out(level, lang, progress, attempt)


def next_round(state: State, saved: Saved, data: EventData = None) -> dict:
    """3-1: on to the next round once this one is checked."""
    ctx = _context(state, saved)
    if ctx is None or ctx[0].kind != "formula":
        return {}
    level, lang, progress, attempt = ctx
    at, done = int(attempt.get("at", 0)), attempt.get("done", [])
    if len(done) == at + 1 and at + 1 < len(level.rounds[lang]):
        attempt = {**attempt, "at": at + 1}
    return _out(level, lang, progress, attempt)


def again(state: State, saved: Saved, data: EventData = None) -> dict:
    """Start the lab over (the stars already earned stay; the answers were shown, so at most ★ more)."""
    ctx = _context(state, saved)
    if ctx is None:
        return {}
    level, lang, progress, _ = ctx
    return _out(level, lang, progress, {"level": level.id})


def race(state: State, saved: Saved, data: EventData, progress_bar: Progress = None) -> dict:
    """3-2: the player's guess of the speed-up, then the race, timed now on the serving device, and the score."""
    ctx = _context(state, saved)
    if ctx is None or ctx[0].kind != "race":
        return {}
    level, lang, progress, attempt = ctx
    if "result" in attempt:
        return {}
    guess = parse_guess((data or {}).get("guess") if isinstance(data, dict) else None)
    if guess is None:
        return {"lab": lab_props(level, lang, progress, attempt, notice_html(t("r_bad", lang, lo=f"{GUESS_RANGE[0]:g}", hi=f"{GUESS_RANGE[1]:g}")))}
    if progress_bar is not None:
        progress_bar(0.1, desc=t("r_running", lang, device=device_label(str(best_device()), lang)))
    result = api.race(list(level.lengths))
    measured = result["speedup"][result["lengths"].index(level.guess_at)]
    factor, earned = game.guess_stars(guess, measured)
    earned = min(earned, answer_cap(progress, level.id))
    score = 100.0 * max(0.0, 1 - math.log(factor) / math.log(game.GUESS_FACTORS[-1] ** 2))
    progress = _record(progress, level, score, earned)
    attempt = {"level": level.id, "guess": guess, "factor": factor, "stars": earned, "result": result}
    return _out(level, lang, progress, attempt)


def train(state: State, saved: Saved, data: EventData, progress_bar: Progress = None) -> dict:
    """3-4: the player's ranking, then the five models trained now (a progress bar while they train), scored."""
    ctx = _context(state, saved)
    if ctx is None or ctx[0].kind != "heads":
        return {}
    level, lang, progress, attempt = ctx
    if "result" in attempt:
        return {}
    heads = list(api.EXPERIMENT.heads)
    ranking = parse_ranking(data if isinstance(data, dict) else {}, heads)
    if ranking is None:
        return {"lab": lab_props(level, lang, progress, attempt, notice_html(t("h_bad", lang)))}

    def report(fraction: float, what: str) -> None:
        if progress_bar is not None:
            progress_bar(fraction, desc=t("h_running", lang, h=what.removeprefix("h = ")))

    result = api.heads_experiment(progress=report)
    accuracy = dict(zip(result["heads"], result["final_accuracy"], strict=True))
    pairs = game.rank_pairs(ranking, accuracy)
    earned = min(game.rank_stars(*pairs), answer_cap(progress, level.id))
    progress = _record(progress, level, 100.0 * pairs[0] / max(pairs[1], 1), earned)
    attempt = {"level": level.id, "ranking": ranking, "result": result, "pairs": list(pairs), "stars": earned}
    return _out(level, lang, progress, attempt)


def quiz(state: State, saved: Saved, data: EventData) -> dict:
    """3-4's facts quiz: every filled answer checked against the facts table (no stars)."""
    ctx = _context(state, saved)
    if ctx is None or ctx[0].kind != "heads":
        return {}
    level, lang, progress, attempt = ctx
    attempt = _quiz_check(level, attempt, data if isinstance(data, dict) else {})
    return {"lab": lab_props(level, lang, progress, attempt), "session": {"level": level.id, "lang": lang, "lab": attempt}}
