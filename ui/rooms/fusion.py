"""3-3's room, fusion: put concat → Wᴼ → residual in order and predict two numbers, then flip the switches and read
the picture (a question answered from the measurement passes the level; the predictions add the rest of the stars).

Every sentence about what was measured is chosen by dragon/lessons/fusion.py's FINDINGS (dragon/findings.py)."""

import numpy as np

from dragon import api, findings, game, margins
from dragon.config import HEADS
from dragon.lessons import fusion as fusion_lesson
from dragon.lessons.fusion import QUIET
from dragon.levels.loader import Level
from ui.rooms import lab
from ui.rooms.lab import Attempt, Outcome
from ui.strings import HEAD_COLORS, head_label, t
from ui.widgets.charts import bars_html
from ui.widgets.draw import esc
from ui.widgets.heatmap import legend, png_data_uri

STEP_KEYS = ("concat", "w_o", "residual")
FUSION_POINTS = 3  # the order, the keep guess, the reach guess


def rule_html(level: Level, lang: str) -> str:
    """The star rule: reading the picture passes the level, the three predictions add the rest (game.read_stars)."""
    return lab.read_rule(lang, FUSION_POINTS)


def fusion_of(level: Level, lang: str) -> dict:
    return api.fusion(level.text[lang], lang)


def hpd_line(f: dict, m: dict, w_o: bool, lang: str) -> str:
    """What the reach picture of one W^O setting shows, in one sentence picked by what was measured."""
    if not w_o:
        return t("u_hpd_off", lang, n=f"{f['heads_per_dim']['w_o_off']:.2f}")
    key = findings.pick(fusion_lesson.FINDINGS, "hpd", m)
    return t(key, lang, n=f"{m['effective']:.2f}", w=m["weight_heads"], k=f"{m['little']:.1f}", h=m["h"], pts=margins.SHARE_POINTS)


def setting_html(f: dict, m: dict, w_o: bool, residual: bool, lang: str, read: bool) -> str:
    """What one setting of the two switches keeps of the input, and which heads reach each output number (the
    sentence under the Wᴼ-off picture answers the reading, so it waits for it)."""
    s = next(x for x in f["switches"] if x["w_o"] == w_o and x["residual"] == residual)
    per_token = bars_html([(tok, v, "#7b3fbf") for tok, v in zip(f["tokens"], s["keep_per_token"], strict=True)], 1.0, cls="keep")
    reach = np.asarray(f["reach"]["w_o_on" if w_o else "w_o_off"])  # (h, d)
    quiet = np.broadcast_to(np.asarray(f["quiet_dims"]["w_o_on" if w_o else "w_o_off"], dtype=bool), reach.shape)
    labels = [head_label(i, lang) for i in range(len(HEADS))]
    title = t("u_reach_title", lang, d=f["d_model"])
    picture = (
        f'<figure class="reach"><figcaption>{esc(title)}</figcaption><div class="reach-grid"><div class="reach-names">'
        + "".join(f'<span style="border-color:{HEAD_COLORS[h]}">{esc(n)}</span>' for h, n in zip(HEADS, labels, strict=True))
        + f'</div><img alt="{esc(title)}" src="{png_data_uri(reach, quiet)}"></div>{legend(lang)}'
        + (lab.note(t("u_quiet", lang, n=int(quiet[0].sum()), p=f"{100 * QUIET:g}")) if quiet.any() else "")
        + "</figure>"
    )
    hpd = lab.note(hpd_line(f, m, w_o, lang)) if w_o or read else ""
    return (
        f'<div class="setting" data-setting="{int(w_o)}{int(residual)}" hidden>'
        f'<div class="keep-mean">{esc(t("u_keep_mean", lang, v=format(s["keep"], ".2f")))}</div>'
        f'<div class="setting-cols"><div>{lab.caption(t("u_per_token", lang, t=len(f["tokens"])))}{per_token}</div>'
        f"<div>{picture}{hpd}</div></div></div>"
    )


def fusion_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    answers = attempt.get("answers", {})
    checked = "points" in attempt
    steps = [(k, t(f"u_{k}", lang)) for k in STEP_KEYS]
    order = [lab.select(f"o{i}", t("u_step", lang, i=i + 1), steps, answers.get(f"o{i}"), lang, locked=checked)
             for i in range(3)]
    ask = (
        lab.question(t("u_order", lang)) + lab.in_order("order", order)
        + lab.select("keep", t("u_keep_q", lang), lab.bucket_choices("keep", game.KEEP_BUCKETS, lang), answers.get("keep"), lang, locked=checked)
        + lab.select("reach", t("u_reach_q", lang), lab.bucket_choices("reach", game.REACH_BUCKETS, lang), answers.get("reach"), lang, locked=checked)
    )
    result, side = note, lab.note(t("u_locked", lang))
    f = fusion_of(level, lang)
    if checked:
        m = fusion_lesson.measured(f)
        result += fusion_result_html(level, lang, progress, attempt, f, m)
        switches = (
            f'<div class="switches"><b>{esc(t("u_switches", lang))}</b>'
            f'<label><input type="checkbox" data-switch="wo" checked> {esc(t("u_sw_wo", lang))}</label>'
            f'<label><input type="checkbox" data-switch="res" checked> {esc(t("u_sw_res", lang))}</label></div>'
        )
        read = "stars" in attempt
        side = switches + "".join(setting_html(f, m, w, r, lang, read) for w in (True, False) for r in (True, False))
    check = "" if checked else lab.button("predict", t("check", lang))
    main = lab.note(t("computed_on", lang, device=lab.device_label(f["device"], lang))) + ask + lab.checking(
        level, lang, progress, attempt, check=check, result=result, rule_line=rule_html(level, lang))
    return lab.two_columns("fusion", main, side, side_cls="fusion-lab")


def fusion_result_html(level: Level, lang: str, progress: dict, attempt: Attempt, f: dict, m: dict) -> str:
    a = attempt["answers"]
    steps, keep_b, reach_b = fusion_lesson.answer_key(f, game.KEEP_BUCKETS, game.REACH_BUCKETS)
    order = " → ".join(t(f"u_{k}", lang) for k in steps)
    mine = [a[f"o{i}"] for i in range(3)]
    silent = ("、" if lang == "zh" else ", ").join(head_label(i, lang) for i in m["silent"])
    said = [
        t("u_order_ok" if mine == steps else "u_order_wrong", lang, order=order, ok=lab.mark(mine == steps, lang)),
        t("u_keep_res", lang, v=f"{m['keep_without']:.2f}",
          bucket=" / ".join(lab.bucket_text("keep", b, game.KEEP_BUCKETS, lang) for b in keep_b),
          mine=lab.bucket_text("keep", int(a["keep"]), game.KEEP_BUCKETS, lang), ok=lab.mark(int(a["keep"]) in keep_b, lang)),
        t("u_reach_res", lang, w=m["weight_heads"], m=f"{m['weakest_weight']:.2f}",
          bucket=lab.bucket_text("reach", reach_b, game.REACH_BUCKETS, lang),
          mine=lab.bucket_text("reach", int(a["reach"]), game.REACH_BUCKETS, lang), ok=lab.mark(int(a["reach"]) == reach_b, lang)),
        t(findings.pick(fusion_lesson.FINDINGS, "reach", m), lang, n=f"{m['effective']:.2f}", silent=silent),
    ]
    fact = t(findings.pick(fusion_lesson.FINDINGS, "fact", m), lang, w=f"{m['keep_with']:.2f}", v=f"{m['keep_without']:.2f}")
    out = (
        lab.verdict(t("u_points", lang, p=attempt["points"], m=FUSION_POINTS)) + lab.lines(said)
        + f'<div class="fact-check">{esc(fact)}</div>'
    )
    right = fusion_lesson.read_answer(f, game.REACH_BUCKETS)
    if "stars" in attempt:
        line = t("u_read_result", lang, mine=lab.bucket_text("reach", attempt["read"], game.REACH_BUCKETS, lang),
                 ok=lab.mark(attempt["read"] == right, lang), right=lab.bucket_text("reach", right, game.REACH_BUCKETS, lang))
        return out + lab.verdict(line) + lab.end(level, lang, progress, int(attempt["stars"]))
    reads = lab.bucket_choices("reach", game.REACH_BUCKETS, lang)
    return (
        out + lab.question(t("u_read_q", lang)) + lab.asks(lab.select("read", t("u_read_label", lang), reads, None, lang))
        + lab.check_row(lab.button("check", t("check", lang)))
    )


def predict_fusion(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    """The order and the two predictions, checked: points; then the switches and the question read off them. The
    answers are shown now, so this try keeps what it could earn and another try earns at most ★."""
    if "points" in attempt:
        return progress, attempt, ""
    answers = {f"o{i}": data.get(f"o{i}") for i in range(3)}
    answers.update(keep=data.get("keep"), reach=data.get("reach"))
    order = [answers[f"o{i}"] for i in range(3)]
    if (
        sorted(map(str, order)) != sorted(STEP_KEYS)
        or answers["keep"] not in [str(i) for i in range(len(game.KEEP_BUCKETS) + 1)]
        or answers["reach"] not in [str(i) for i in range(len(game.REACH_BUCKETS) + 1)]
    ):
        return progress, attempt, lab.refusal(t("u_bad", lang))
    steps, keep_b, reach_b = fusion_lesson.answer_key(fusion_of(level, lang), game.KEEP_BUCKETS, game.REACH_BUCKETS)
    points = int(order == steps) + int(int(answers["keep"]) in keep_b) + int(int(answers["reach"]) == reach_b)
    progress, cap = lab.answers_shown(progress, level.id)
    return progress, {**attempt, "answers": answers, "points": points, "cap": cap, "out_of": FUSION_POINTS}, ""


def read_fusion(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The question read off the switches picture passes the level; the predictions add the rest of the stars."""
    answer = lambda: fusion_lesson.read_answer(fusion_of(level, lang), game.REACH_BUCKETS)  # noqa: E731
    return lab.read_question(level, lang, progress, attempt, data, len(game.REACH_BUCKETS) + 1, answer, FUSION_POINTS)

