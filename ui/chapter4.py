"""Chapter 4's labs in the chapter-3 lab panel: 4-1 crystal ball, 4-2 the tower, 4-3 growing up, 4-4 pruning.

The player predicts or picks first; the real computation (dragon.api) runs then and scores it. What the narration
says about a number is written here from the computation itself. The real model (4-1, 4-2) and 4-3's trained model
(4-4) are loaded the first time their level opens: the panel says so and asks for them ('warm', with progress)."""

import random
import unicodedata

import numpy as np
import pandas as pd

import dragon
from dragon import api, game
from dragon.engine import default_dragon
from dragon.lessons import crystal_ball as crystal_lesson
from dragon.lessons import growing as growing_lesson
from dragon.lessons import pruning as pruning_lesson
from dragon.lessons import tower as tower_lesson
from dragon.lessons.wordpiece import normalise
from dragon.levels import PRONOUNS, Level

from . import chapter3 as lab
from .chapter3 import Attempt, Progress, _button, _cap_note, _end, _record, _select, answer_cap, mark
from .charts import bars_html, line_chart
from .draw import esc, notice_html, star_text
from .heatmap import png_data_uri
from .text import t

SEED = 0  # 4-3 trains with this seed in the app, and 4-4 prunes that same model
STAGE_COLOURS = {"random": "#8e9aa6", "faint": "#d4a017", "clear": "#1f4e9c", "settled": "#2e9e4f"}
LETTERS = "ABCD"


# --- loading: the real model and 4-4's trained model, once -------------------------------------------------------


def ready(level: Level) -> bool:
    """Whether what the level needs is loaded (the real model; 4-2's figures; 4-4's trained model and answer)."""
    if level.kind == "crystal":
        return crystal_lesson.is_loaded()
    if level.kind == "tower":
        return tower_lesson.tower.cache_info().currsize > 0
    if level.kind == "prune":
        return pruning_lesson.best_pruning.cache_info().currsize > 0
    return True


def warm_up(level: Level, lang: str, bar: Progress = None) -> None:
    def report(fraction: float, what: str = "") -> None:
        if bar is not None:
            bar(fraction, desc=t("c_loading" if level.kind != "prune" else "p_loading", lang))

    report(0.0)
    if level.kind in ("crystal", "tower"):
        crystal_lesson.load(report)
        if level.kind == "tower":
            api.tower()
    elif level.kind == "prune":
        api.prune_best(SEED)
    report(1.0)


def _loading(level: Level, lang: str) -> str:
    key = "p_loading" if level.kind == "prune" else "c_loading"
    return f'<div class="lab-loading" data-autoload="warm"><p class="result-head" role="status">{esc(t(key, lang))}</p></div>'


# --- 4-1 crystal ball -----------------------------------------------------------------------------------------


def _strip(row: list[float], target: int | None, word: int | None) -> str:
    top = max(row) or 1.0
    cells = "".join(
        f'<i class="{"tgt" if j == target else "self" if j == word else ""}"><b style="opacity:{0.06 + 0.94 * v / top:.2f}"></b></i>'
        for j, v in enumerate(row)
    )
    return f'<span class="cb-strip">{cells}</span>'


def _key(tokens: list[str], target: int, word: int) -> str:
    words = "".join(
        f'<span class="{"tgt" if j == target else "self" if j == word else ""}">{esc(w)}</span>' for j, w in enumerate(tokens)
    )
    return f'<div class="cb-key">{words}</div>'


def rule_html(lang: str, key: str, **values: object) -> str:
    """The level's star rule in one line, shown before answering."""
    return f'<p class="note star-rule">{esc(t("rule_head", lang) + t(key, lang, **values))}</p>'


def crystal_rule(lang: str) -> str:
    p1, p2 = game.CRYSTAL_SHARES
    return rule_html(lang, "rule_crystal", s3=star_text(game.crystal_stars(1.0, 1.0)), p2=f"{p2:.0%}",
                     s2=star_text(game.crystal_stars(p2, 1.0)), p1=f"{p1:.0%}", s1=star_text(game.crystal_stars(p1, 1.0)))  # fmt: skip


def points_rule(lang: str, out_of: int) -> str:
    parts = " · ".join(f"{p}/{out_of} {star_text(game.points_stars(p, out_of))}" for p in range(out_of, -1, -1))
    return rule_html(lang, "rule_points", parts=parts)


def prune_rule(lang: str) -> str:
    most = 8  # any count: the rule depends on how many fewer than the most possible
    s = [star_text(game.prune_stars(most - d, most, True)) for d in range(3)]
    return rule_html(lang, "rule_prune", s3=s[0], s2=s[1], s1=s[2])


def _row_bars(tokens: list[str], row: list[float], colour: str, skip: int | None = None) -> str:
    rows = [(w, v, colour) for j, (w, v) in enumerate(zip(tokens, row, strict=True)) if j != skip]
    return bars_html(rows, max(max(row), 1e-9), fmt="{:.2f}", cls="cb-row")


def _crystal(level: Level) -> dict:
    word, target = level.ask
    return api.crystal_ball(level.text["en"], word, target)


def _crystal_body(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    if not ready(level):
        return _loading(level, lang)
    r = _crystal(level)
    q, tg = r["position"], r["target"]["position"]
    picked = attempt.get("pick")
    best = r["best"]
    cells = []
    for li in range(r["layers"]):
        for hi in range(r["heads"]):
            cls = "cb-map"
            if picked == [li, hi]:
                cls += " picked"
            if picked is not None and [li, hi] == [best["layer"], best["head"]]:
                cls += " best"
            name = t("c_head", lang, l=li + 1, h=hi + 1)
            cells.append(
                f'<button type="button" class="{cls}" data-act="pick" data-pick="{li},{hi}" aria-label="{esc(name)}">'
                f'<span class="cb-name">L{li + 1} H{hi + 1}</span>{_strip(r["attention"][li][hi], tg, q)}</button>'
            )
    grid = f'<div class="cb-grid" role="group" aria-label="{esc(t("c_grid", lang))}">{"".join(cells)}</div>'
    intro = t("c_intro", lang, word=r["word"], target=r["target"]["token"], model=r["model"], L=r["layers"], H=r["heads"])
    result = note
    if picked is not None:
        li, hi = picked
        w = r["attention"][li][hi][tg]
        order = sorted(((r["attention"][a][b][tg], a, b) for a in range(r["layers"]) for b in range(r["heads"])), reverse=True)
        rank = 1 + sum(v > w for v, _, _ in order)
        said = t("c_result", lang, head=f"L{li + 1}H{hi + 1}", word=r["word"], target=r["target"]["token"], w=f"{w:.2f}",
                 rank=rank, n=len(order), best=best["name"], bw=format(best["weight"], ".2f"))  # fmt: skip
        result += (
            f'<div class="result-head" data-weight="{w:.4f}">{esc(said)}</div>'
            + _end(level, lang, progress, int(attempt.get("stars", 0)))
            + f'<div class="sub">{esc(t("c_row", lang, head=f"L{li + 1}H{hi + 1}", word=r["word"]))}</div>'
            + _row_bars(r["tokens"], r["attention"][li][hi], "#1f4e9c")
        )
    try_box = _try_html(level, lang, attempt, best) if picked is not None else ""
    seconds = format(crystal_lesson.load_seconds(), ".1f")
    return (
        f'<div class="lab-crystal"><p class="note">{esc(intro)}</p>{crystal_rule(lang)}'
        f'<p class="note">{esc(t("c_key", lang))}</p>{_key(r["tokens"], tg, q)}{grid}'
        f'{_cap_note(level, lang, progress, attempt)}<div class="result-box" role="status">{result}</div>{try_box}'
        f'<p class="note">{esc(t("c_model", lang, model=r["model"], package=r["package"], licence=t("c_licence", lang), s=seconds))}</p></div>'
    )


def _try_html(level: Level, lang: str, attempt: Attempt, best: dict) -> str:
    mine = attempt.get("try") or {}
    text = mine.get("text", "The girl gave the dog a bone because it was hungry.")
    choices = [(p, p) for p in PRONOUNS]
    ask = (
        f'<label class="ask wide"><span>{esc(t("c_try_text", lang))}</span><input type="text" data-answer="text" '
        f'value="{esc(text)}" maxlength="{crystal_lesson.MAX_CHARS}"></label>'
        + _select("word", t("c_try_word", lang), choices, mine.get("word", "it"), lang)
    )
    out = attempt.get("try_note", "")
    if "row" in mine:
        out += _try_result(lang, mine, best)
    return (
        f'<section class="cb-try"><h3>{esc(t("c_try_title", lang, head=best["name"]))}</h3><div class="asks">{ask}</div>'
        f'<div class="answer-row">{_button("try", t("c_try_go", lang))}</div><div class="try-box" role="status">{out}</div></section>'
    )


SHOWN_WORDS = 10  # an error lists at most this many of the sentence's words, then "…"
LOW_ON_WORDS = 0.2  # a head giving all the words together less than this mostly looks at [CLS]/[SEP]


class SentenceError(ValueError):
    """A sentence the crystal ball cannot read: `kind` names the text key (c_err_…), `values` fill it in."""

    def __init__(self, kind: str, **values: object) -> None:
        super().__init__(kind)
        self.kind, self.values = kind, values


def english_only(text: str) -> bool:
    """Whether every letter of the text is a Latin letter (the model is English-only)."""
    return all(not ch.isalpha() or unicodedata.name(ch, "").startswith("LATIN") for ch in text)


def check_sentence(text: str) -> list[str]:
    """The sentence's words as the model splits them, or a SentenceError that says why it cannot be read."""
    if not text.strip():
        raise SentenceError("c_err_empty")
    if len(text) > crystal_lesson.MAX_CHARS:
        raise SentenceError("c_err_long", n=len(text), max=crystal_lesson.MAX_CHARS)
    if not english_only(text):
        raise SentenceError("c_err_lang")
    _, vocab = crystal_lesson.load()
    words = [w.text for w in vocab.words(text)]
    if not words:
        raise SentenceError("c_err_none")
    if len(words) > crystal_lesson.MAX_WORDS:
        raise SentenceError("c_err_many", n=len(words), max=crystal_lesson.MAX_WORDS)
    return words


def some_words(words: list[str], k: int = SHOWN_WORDS) -> str:
    return " / ".join(words[:k]) + (" / …" if len(words) > k else "")


def own_sentence(text: str, word: str, best: dict) -> dict:
    """The real head's row for the LAST `word` of the player's sentence (and what it parks on [CLS]/[SEP]), our
    dragon's Context head beside it, and the nearest noun before the word (the dragon's own part-of-speech tags)."""
    words = check_sentence(text)
    at = [i for i, w in enumerate(words) if normalise(w) == normalise(word)]
    if not at:
        raise SentenceError("c_err_word", word=word, words=some_words(words))
    q = at[-1]
    reading = crystal_lesson.read(text)
    full = [round(float(v), crystal_lesson.DECIMALS) for v in reading.maps[best["layer"], best["head"], q + 1]]
    row, specials = full[1:-1], full[0] + full[-1]
    top_v, top_j = max((v, j) for j, v in enumerate(row) if j != q) if len(row) > 1 else (0.0, q)
    d = dragon.analyze(text, "en")
    tokens = d["tokens"]
    same = [i for i, w in enumerate(tokens) if normalise(w) == normalise(word)]
    dq = same[-1] if same else None
    ctx = d["attention"][d["heads"].index("context")][dq] if dq is not None else [0.0] * len(tokens)
    ctx_top = max(((v, j) for j, v in enumerate(ctx) if j != dq), default=(0.0, 0))
    tags = default_dragon().read(text, "en").analysis.tokens
    nouns = [tok.text for tok in tags[:dq] if tok.pos == "noun"] if dq is not None else []
    return {
        "text": text, "word": words[q], "tokens": words, "row": row, "top": words[top_j],
        "top_w": top_v, "position": q, "dragon_tokens": tokens, "context": ctx,
        "context_top": tokens[ctx_top[1]] if tokens else "", "context_w": ctx_top[0],
        "nearest_noun": nouns[-1] if nouns else None, "nouns": nouns, "dragon_position": dq,
        "specials": round(specials, crystal_lesson.DECIMALS), "times": len(at),
        "on_words": round(sum(v for j, v in enumerate(row) if j != q), crystal_lesson.DECIMALS),
    }  # fmt: skip


def _try_result(lang: str, mine: dict, best: dict) -> str:
    says = t("c_try_head", lang, head=best["name"], word=mine["word"], top=mine["top"], w=f"{mine['top_w']:.2f}")
    if mine.get("times", 1) > 1:
        says += " " + t("c_try_last", lang, n=mine["times"], word=mine["word"])
    noun, top = mine.get("nearest_noun"), mine["top"]
    low = mine.get("on_words", 1.0) < LOW_ON_WORDS
    if low:
        says += " " + t("c_try_special", lang, s=f"{mine.get('specials', 0.0):.2f}", w=f"{mine['on_words']:.2f}",
                        word=mine["word"])  # fmt: skip
    elif noun and normalise(noun) == normalise(top):
        says += " " + t("c_try_nearest", lang, noun=noun)
    elif noun and normalise(top) in {normalise(n) for n in mine.get("nouns", [])}:
        says += " " + t("c_try_past", lang, noun=noun, top=top)
    elif noun:
        says += " " + t("c_try_other", lang, noun=noun, top=top)
    ctx = t("c_try_context", lang, word=mine["word"], top=mine["context_top"], w=f"{mine['context_w']:.2f}")
    rows = [(w, v, "#1f4e9c") for j, (w, v) in enumerate(zip(mine["tokens"], mine["row"], strict=True)) if j != mine["position"]]
    if "specials" in mine:
        rows.append((t("c_specials", lang), mine["specials"], "#8e9aa6"))
    real = bars_html(rows, max(max(v for _, v, _ in rows), 1e-9), fmt="{:.2f}", cls="cb-row")
    return (
        f'<div class="result-head try-head">{esc(says)}</div><div class="cb-side">'
        f'<div><div class="sub">{esc(t("c_try_real", lang, head=best["name"]))}</div>{real}</div>'
        f'<div><div class="sub">{esc(t("c_try_dragon", lang))}</div>'
        f'{_row_bars(mine["dragon_tokens"], mine["context"], "#17a2b8", mine.get("dragon_position"))}</div>'
        f'</div><p class="note">{esc(ctx)}</p>'
    )


def pick(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> tuple[dict, Attempt, str]:
    if "pick" in attempt:
        return progress, attempt, ""
    try:
        li, hi = (int(x) for x in str(data.get("pick", "")).split(","))
    except ValueError:
        return progress, attempt, notice_html(t("lab_bad", lang))
    r = _crystal(level)
    if not (0 <= li < r["layers"] and 0 <= hi < r["heads"]):
        return progress, attempt, notice_html(t("lab_bad", lang))
    w = r["attention"][li][hi][r["target"]["position"]]
    earned = min(game.crystal_stars(w, r["best"]["weight"]), answer_cap(progress, level.id))
    progress = _record(progress, level, 100.0 * w / r["best"]["weight"], earned)
    return progress, {**attempt, "pick": [li, hi], "stars": earned}, ""


def try_sentence(level: Level, lang: str, attempt: Attempt, data: dict) -> Attempt:
    text = str(data.get("text", "") or "")[: crystal_lesson.MAX_CHARS + 1]
    word = str(data.get("word", "") or "")
    best = _crystal(level)["best"]
    if word not in PRONOUNS:
        return {**attempt, "try_note": notice_html(t("c_try_bad_word", lang, words=" / ".join(PRONOUNS)))}
    try:
        mine = own_sentence(text, word, best)
    except SentenceError as err:
        why = t(err.kind, lang, **err.values)
        return {**attempt, "try": {"text": text, "word": word}, "try_note": notice_html(t("c_try_error", lang, why=why))}
    except ValueError:  # anything else the model refuses: said in the player's language, never raw
        why = t("c_err_other", lang)
        return {**attempt, "try": {"text": text, "word": word}, "try_note": notice_html(t("c_try_error", lang, why=why))}
    return {**attempt, "try": {**mine, "word": word}, "try_note": ""}


# --- 4-2 the tower of layers --------------------------------------------------------------------------------------


def tower_truth(tw: dict) -> dict[str, str]:
    f = tw["findings"]
    return {"rises": "yes" if f["distance_rises_every_layer"] else "no", "adjacent": str(f["most_adjacent_layer"] + 1),
            "special": str(f["most_special_layer"] + 1)}  # fmt: skip


def sink_layers(tw: dict, share: float = 0.4) -> tuple[int, float, float] | None:
    """The first layer from which every layer parks ≥ `share` of its attention on [CLS]/[SEP], and the range there."""
    specials = [p["special"] for p in tw["per_layer"]]
    for start in range(len(specials)):
        if all(s >= share for s in specials[start:]):
            return start, min(specials[start:]), max(specials[start:])
    return None


def tower_lines(tw: dict, lang: str) -> list[str]:
    """What the measured figures show, in words (each number inserted from the computation)."""
    f, rows = tw["findings"], tw["per_layer"]
    dist = " → ".join(f"{p['distance']:.2f}" for p in rows)
    lines = [
        t("tw_dist", lang, seq=dist, near=f["nearest_layer"] + 1, far=f["farthest_layer"] + 1, u=f"{tw['uniform_distance']:.2f}"),
        t("tw_rises" if f["distance_rises_every_layer"] else "tw_not_steady", lang),
        t("tw_adjacent_one" if rows[f["most_neighbour_heads_layer"]]["neighbour_heads"] == 1 else "tw_adjacent", lang,
          l=f["most_adjacent_layer"] + 1, p=f"{rows[f['most_adjacent_layer']]['adjacent']:.0%}",
          k=rows[f["most_neighbour_heads_layer"]]["neighbour_heads"], kl=f["most_neighbour_heads_layer"] + 1),
    ]  # fmt: skip
    sink = sink_layers(tw)
    if sink is not None:
        lines.append(t("tw_sink", lang, l=sink[0] + 1, lo=f"{sink[1]:.0%}", hi=f"{sink[2]:.0%}"))
    shallow_near = f["most_adjacent_layer"] == 0
    lines.append(t("tw_verdict_yes" if shallow_near else "tw_verdict_no", lang))
    return lines


def _tower_body(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    if not ready(level):
        return _loading(level, lang)
    tw = api.tower()
    layers = [(str(i + 1), t("tw_layer", lang, l=i + 1)) for i in range(tw["layers"])]
    given = attempt.get("answers", {})
    ask = (
        _select("rises", t("tw_q_rises", lang), [("yes", t("yes", lang)), ("no", t("no", lang))], given.get("rises"), lang)
        + _select("adjacent", t("tw_q_adjacent", lang), layers, given.get("adjacent"), lang)
        + _select("special", t("tw_q_special", lang), layers, given.get("special"), lang)
    )
    done = "stars" in attempt
    result = note
    if done:
        truth = tower_truth(tw)
        said = {k: t(v, lang) if k == "rises" else t("tw_layer", lang, l=v) for k, v in given.items() if v}
        marks = " · ".join(t("tw_mark", lang, q=t("tw_k_" + k, lang), a=said.get(k, "—"), ok=mark(given.get(k) == v, lang))
                           for k, v in truth.items())  # fmt: skip
        result += f'<div class="result-head">{esc(t("tw_result", lang, p=attempt["points"], marks=marks))}</div>'
        result += _end(level, lang, progress, int(attempt["stars"])) + _tower_figures(tw, lang)
    check = "" if done else _button("predict", t("check", lang))
    setup = t("tw_setup", lang, n=tw["sentences"], w=tw["words"], model=tw["model"], L=tw["layers"], H=tw["heads"])
    return (
        f'<div class="lab-tower"><p class="note">{esc(setup)}</p>{points_rule(lang, 3)}<div class="asks">{ask}</div>'
        f'<div class="answer-row">{check}</div>{_cap_note(level, lang, progress, attempt)}'
        f'<div class="result-box" role="status">{result}</div></div>'
    )


def _tower_figures(tw: dict, lang: str) -> str:
    rows = tw["per_layer"]
    frame = pd.DataFrame(
        [{"layer": p["layer"] + 1, "v": p["distance"], "s": "model"} for p in rows]
        + [{"layer": p["layer"] + 1, "v": tw["uniform_distance"], "s": "uniform"} for p in rows]
    )
    chart = line_chart(frame, "layer", "v", "s", title=t("tw_chart", lang), x_label=t("tw_x", lang),
                       y_label=t("tw_y", lang), colours={"model": "#1f4e9c", "uniform": "#8e9aa6"},
                       names={"model": t("tw_model", lang), "uniform": t("tw_uniform", lang)},
                       x_ticks=[p["layer"] + 1 for p in rows])  # fmt: skip
    adj = bars_html([(t("tw_layer", lang, l=p["layer"] + 1), p["adjacent"], "#2e9e4f") for p in rows], 1.0, fmt="{:.0%}")
    spec = bars_html([(t("tw_layer", lang, l=p["layer"] + 1), p["special"], "#7b3fbf") for p in rows], 1.0, fmt="{:.0%}")
    lines = "".join(f"<li>{esc(x)}</li>" for x in tower_lines(tw, lang))
    paper = "".join(f"<li>{esc(p['source'])}: {esc(p['finding'][lang])}</li>" for p in tw["papers"])
    return (
        f'<ul class="lines findings">{lines}</ul><div class="tower-figs">{chart}'
        f'<div><div class="sub">{esc(t("tw_adj_title", lang))}</div>{adj}'
        f'<div class="sub">{esc(t("tw_special_title", lang))}</div>{spec}</div></div>'
        f'<ul class="lines papers">{paper}</ul>'
    )


def predict_tower(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> tuple[dict, Attempt, str]:
    if "stars" in attempt:
        return progress, attempt, ""
    tw = api.tower()
    given = {k: data.get(k) for k in ("rises", "adjacent", "special")}
    if given["rises"] not in ("yes", "no") or any(given[k] not in [str(i + 1) for i in range(tw["layers"])] for k in ("adjacent", "special")):
        return progress, attempt, notice_html(t("lab_bad", lang))
    points = sum(given[k] == v for k, v in tower_truth(tw).items())
    earned = min(game.points_stars(points, 3), answer_cap(progress, level.id))
    progress = _record(progress, level, 100.0 * points / 3, earned)
    return progress, {**attempt, "answers": given, "points": points, "stars": earned}, ""


# --- 4-3 growing up -------------------------------------------------------------------------------------------


def stage_snapshots(run: dict) -> list[dict]:
    """One snapshot per stage the run reached: the first of random, faint and clear, and the last (settled)."""
    snaps = {s["point"]: s for s in run["snapshots"]}
    out = []
    for st in run["stages"]:
        point = run["snapshots"][-1]["point"] if st["stage"] == "settled" else st["point"]
        out.append(snaps[point])
    return out


def shuffled(n: int, seed: int) -> list[int]:
    """A fixed shuffle of range(n) that never leaves the order as it was (n ≥ 2)."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return order[1:] + order[:1] if n > 1 and order == sorted(order) else order


def _scaled(m: list[list[float]]) -> np.ndarray:
    a = np.asarray(m, dtype=np.float64)
    return a / a.max() if a.max() > 0 else a


def _snapshot_html(snap: dict, i: int, lang: str, revealed: bool, given: str | None) -> str:
    maps = "".join(
        f'<figure><img alt="{esc(t("g_head", lang, h=h + 1))}" src="{png_data_uri(_scaled(m))}">'
        f"<figcaption>{h + 1}</figcaption></figure>"
        for h, m in enumerate(snap["maps"])
    )
    choices = [(s, t("stage_" + s, lang)) for s in growing_lesson.STAGES]
    if revealed:
        label = t("g_measured", lang, stage=t("stage_" + snap["stage"], lang), step=snap["step"], s=f"{snap['specialisation']:.2f}",
                  acc=f"{snap['accuracy']:.0%}", ok=mark(given == snap["stage"], lang))  # fmt: skip
        head = f'<div class="snap-label" style="border-color:{STAGE_COLOURS[snap["stage"]]}">{esc(label)}</div>'
    else:
        head = _select(f"s{i}", t("g_which", lang), choices, given, lang)
    return f'<div class="snap"><h3>{esc(t("g_snapshot", lang, k=LETTERS[i]))}</h3>{head}<div class="snap-maps">{maps}</div></div>'


def _grow_body(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    g = growing_lesson.Growth()
    dev = lab.best_device()
    setup = t("g_setup", lang, heads=g.heads, relations=", ".join(map(str, g.ex.relations)), k=len(g.ex.relations),
              steps=api.GROW_STEPS, length=g.ex.length, device=lab.device_label(str(dev), lang, g.ex.cpu_threads if dev.type == "cpu" else None))  # fmt: skip
    run = attempt.get("run")
    if run is None:
        return (
            f'<div class="lab-grow"><p class="note setup">{esc(setup)}</p>{points_rule(lang, len(growing_lesson.STAGES))}'
            f'<div class="answer-row">{_button("grow", t("g_go", lang))}</div>{_cap_note(level, lang, progress, attempt)}'
            f'<div class="result-box" role="status">{note}</div></div>'
        )
    snaps = stage_snapshots(run)
    order = attempt["order"]
    given = attempt.get("labels", {})
    revealed = "stars" in attempt
    cards = "".join(_snapshot_html(snaps[k], i, lang, revealed, given.get(f"s{i}")) for i, k in enumerate(order))
    done = t("g_done", lang, s=f"{run['seconds']:.1f}", device=lab.device_label(run["device"], lang, run.get("threads")),
             loss=f"{run['final']['loss']:.2f}", acc=f"{run['final']['accuracy']:.0%}")  # fmt: skip
    result = note
    if revealed:
        result += f'<div class="result-head">{esc(t("g_result", lang, p=attempt["points"], n=len(snaps)))}</div>'
        result += _end(level, lang, progress, int(attempt["stars"])) + _grow_charts(run, lang)
    label = "" if revealed else _button("stages", t("check", lang))
    return (
        f'<div class="lab-grow"><p class="note setup">{esc(setup)}</p><p class="note">{esc(done)}</p>'
        f'<p class="question">{esc(t("g_question", lang))}</p>{points_rule(lang, len(snaps))}<div class="snaps">{cards}</div>'
        f'<div class="answer-row">{label}</div>{_cap_note(level, lang, progress, attempt)}'
        f'<div class="result-box" role="status">{result}</div></div>'
    )


def _grow_charts(run: dict, lang: str) -> str:
    steps = run["steps"]
    loss = pd.DataFrame({"step": steps, "v": run["loss"], "s": "loss"})
    spec = pd.DataFrame(
        [{"step": s, "v": v, "s": "mean"} for s, v in zip(steps, run["specialisation"], strict=True)]
        + [{"step": s, "v": run["chance"], "s": "chance"} for s in steps]
    )
    a = line_chart(loss, "step", "v", "s", title=t("g_loss", lang), x_label=t("g_x", lang), y_label=t("g_loss_y", lang),
                   colours={"loss": "#c2410c"}, names={"loss": t("g_loss_name", lang)})  # fmt: skip
    b = line_chart(spec, "step", "v", "s", title=t("g_spec", lang), x_label=t("g_x", lang), y_label=t("g_spec_y", lang),
                   colours={"mean": "#2e9e4f", "chance": "#8e9aa6"},
                   names={"mean": t("g_spec_name", lang), "chance": t("g_chance", lang)})  # fmt: skip
    stages = " · ".join(f"{t('stage_' + s['stage'], lang)}: {t('g_from_step', lang, step=s['step'])}" for s in run["stages"])
    th = run["thresholds"]
    rule = t("g_rule", lang, r=th["random_below"], f=th["faint_below"], s=th["settle_within"])
    return f'<p class="note">{esc(stages)}</p><p class="note">{esc(rule)}</p><div class="grow-charts">{a}{b}</div>'


def grow(state, saved, data, progress_bar: Progress = None) -> dict:
    """4-3: train now (Gradio's progress bar while it runs), then show the shuffled stage snapshots to label."""
    ctx = lab._context(state, saved)
    if ctx is None or ctx[0].kind != "grow" or "run" in ctx[3]:
        return {}
    level, lang, progress, attempt = ctx

    def report(fraction: float, what: str) -> None:
        if progress_bar is not None:
            progress_bar(fraction, desc=t("g_running", lang, what=what))

    run = api.grow(api.GROW_STEPS, SEED, progress=report)
    n = len(stage_snapshots(run))
    attempt = {"level": level.id, "run": run, "order": shuffled(n, run["task"]["steps"])}
    return lab._out(level, lang, progress, attempt)


def label(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> tuple[dict, Attempt, str]:
    if "run" not in attempt or "stars" in attempt:
        return progress, attempt, ""
    snaps = stage_snapshots(attempt["run"])
    given = {f"s{i}": data.get(f"s{i}") for i in range(len(snaps))}
    if any(v not in growing_lesson.STAGES for v in given.values()):
        return progress, attempt, notice_html(t("lab_bad", lang))
    points = sum(given[f"s{i}"] == snaps[k]["stage"] for i, k in enumerate(attempt["order"]))
    earned = min(game.points_stars(points, len(snaps)), answer_cap(progress, level.id))
    progress = _record(progress, level, 100.0 * points / len(snaps), earned)
    return progress, {**attempt, "labels": given, "points": points, "stars": earned}, ""


# --- 4-4 pruning ------------------------------------------------------------------------------------------------


def _prune_body(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    if not ready(level):
        return _loading(level, lang)
    best = api.prune_best(SEED)
    active = attempt.get("active") or [1] * best["heads"]
    switches = "".join(
        f'<label class="switch"><input type="checkbox" data-answer="h{i}"{" checked" if a else ""}> '
        f"<span>{esc(t('p_head', lang, h=i + 1, d=best['offsets'][i]))}</span></label>"
        for i, a in enumerate(active)
    )
    done = "stars" in attempt
    result = note
    m = attempt.get("measured")
    if m:
        key = "p_reached" if m["reached"] else "p_missed"
        said = t("p_measured", lang, off=m["off"], acc=format(m["accuracy"], ".1%"), kept=format(m["kept"], ".0%"),
                 full=format(m["full_accuracy"], ".1%"))  # fmt: skip
        result += f'<div class="result-head" data-accuracy="{m["accuracy"]}">{esc(said)} {esc(t(key, lang))}</div>'
    if done:
        result += _end(level, lang, progress, int(attempt["stars"])) + _prune_answer(best, lang, attempt)
    buttons = "" if done else _button("measure", t("p_measure", lang), primary=False) + _button("submit", t("p_submit", lang))
    goal = t("p_goal", lang, full=f"{best['full_accuracy']:.1%}", goal=f"{best['goal']:.0%}")
    return (
        f'<div class="lab-prune"><p class="note">{esc(goal)}</p>{prune_rule(lang)}<div class="switches">{switches}</div>'
        f'<div class="answer-row">{buttons}</div>{_cap_note(level, lang, progress, attempt)}'
        f'<div class="result-box" role="status">{result}</div></div>'
    )


def _prune_answer(best: dict, lang: str, attempt: Attempt) -> str:
    patterns = "; ".join(", ".join(str(i + 1) for i, a in enumerate(p) if not a) for p in best["patterns"])
    line = t("p_best", lang, most=best["most_off"], n=best["subsets_tried"], patterns=patterns, mine=attempt["measured"]["off"])
    bars = bars_html([(t("p_off_k", lang, k=k), a, "#1f4e9c") for k, a in enumerate(best["best_accuracy_by_off"])],
                     1.0, fmt="{:.1%}")  # fmt: skip
    a, b = best["redundancy"]["pair"]
    red = t("p_redundant", lang, a=a + 1, b=b + 1, c=f"{best['redundancy']['cosine']:.2f}",
            da=best["offsets"][a], db=best["offsets"][b])  # fmt: skip
    papers = "".join(f"<li>{esc(p['source'])}: {esc(p['finding'][lang])}</li>" for p in best["papers"])
    return (
        f'<p class="result-head best-line">{esc(line)}</p><div class="sub">{esc(t("p_by_off", lang))}</div>{bars}'
        f'<p class="note redundancy">{esc(red)}</p><ul class="lines papers">{papers}</ul>'
    )


def _active(data: dict, h: int) -> list[int] | None:
    values = [data.get(f"h{i}") for i in range(h)]
    return [int(v) for v in values] if all(v in ("0", "1") for v in values) else None


def measure(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict, submit: bool = False) -> tuple:
    if "stars" in attempt:
        return progress, attempt, ""
    best = api.prune_best(SEED)
    active = _active(data, best["heads"])
    if active is None:
        return progress, attempt, notice_html(t("lab_bad", lang))
    m = api.prune(active, SEED)
    attempt = {**attempt, "active": active, "measured": m}
    if not submit:
        return progress, attempt, ""
    earned = min(game.prune_stars(m["off"], best["most_off"], m["reached"]), answer_cap(progress, level.id))
    score = 100.0 * m["off"] / max(best["most_off"], 1) if m["reached"] else 0.0
    progress = _record(progress, level, min(score, 100.0), earned)
    return progress, {**attempt, "stars": earned}, ""


BODIES = {"crystal": _crystal_body, "tower": _tower_body, "grow": _grow_body, "prune": _prune_body}


# --- the events ---------------------------------------------------------------------------------------------------

Step = tuple[tuple[str, ...], object]


def _steps() -> dict[str, Step]:
    from . import chapter5

    return {
        "pick": (("crystal",), pick),
        "predict": (("tower",), predict_tower),
        "stages": (("grow",), label),
        "measure": (("prune",), measure),
        "submit": (("prune",), lambda *a: measure(*a, submit=True)),
        "predict5": (("positions",), chapter5.predict_positions),
        "badge": (("badge",), chapter5.make_badge),
    }


def act(name: str):
    """The handler of the lab's event `name` for chapters 4–5: the player's answer checked against the real
    computation and scored; bad input changes nothing and says so beside the button."""

    def handler(state, saved, data=None) -> dict:
        ctx = lab._context(state, saved)
        if ctx is None:
            return {}
        level, lang, progress, attempt = ctx
        data = data if isinstance(data, dict) else {}
        key = "predict5" if name == "predict" and level.kind == "positions" else name
        kinds, step = _steps()[key]
        if level.kind not in kinds:
            return {}
        progress, attempt, note = step(level, lang, progress, attempt, data)
        if note:
            return {"lab": lab.lab_props(level, lang, progress, attempt, note)}
        return lab._out(level, lang, progress, attempt)

    handler.__name__ = name
    return handler


def try_own(state, saved, data=None) -> dict:
    """4-1: the real head and our dragon's Context head on the player's own sentence (no stars)."""
    ctx = lab._context(state, saved)
    if ctx is None or ctx[0].kind != "crystal" or "pick" not in ctx[3]:
        return {}
    level, lang, progress, attempt = ctx
    attempt = try_sentence(level, lang, attempt, data if isinstance(data, dict) else {})
    return {"lab": lab.lab_props(level, lang, progress, attempt), "session": {"level": level.id, "lang": lang, "lab": attempt}}


def warm(state, saved, data=None, progress_bar: Progress = None) -> dict:
    """The first opening of 4-1, 4-2 or 4-4: load the real model (or train 4-3's model), with progress shown."""
    ctx = lab._context(state, saved)
    if ctx is None:
        return {}
    level, lang, progress, attempt = ctx
    try:
        warm_up(level, lang, progress_bar)
    except crystal_lesson.ModelMissingError as err:
        return {"lab": {**lab.lab_props(level, lang, progress, attempt), "body": notice_html(str(err))}}
    return {"lab": lab.lab_props(level, lang, progress, attempt)}
