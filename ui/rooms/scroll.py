"""3-5 the long scroll: predict where full and sliding-window attention's times cross and how many of the dragon's heads
keep half of their links inside a window, then measure in the server's lane (dragon/lessons/long_scroll.py), then
read the bytes table: the reading passes the level, the predictions add the rest of the stars."""

from dragon import api, findings
from dragon.config import HEAD_COLORS, HEADS, DragonConfig
from dragon.lessons import long_scroll as scroll_lesson
from dragon.levels.loader import Level
from dragon.runs import RUNS
from dragon.runtime.device import best_device
from ui.rooms import lab, waits
from ui.rooms.lab import Attempt, Outcome
from ui.strings import head_label, t
from ui.widgets.charts import bars_html, line_chart
from ui.widgets.draw import esc

PREDICTIONS = ("cross", "heads")
COLOURS = {"full": "#c2410c", "sparse": "#1f4e9c"}


def megabytes(n: int) -> str:
    return f"{n / 2**20:,.2f} MB" if n >= 2**20 else f"{n / 2**10:,.1f} KB"


def cross_text(value: str, lang: str) -> str:
    return t("ls_never", lang) if value == scroll_lesson.NEVER else t("ls_cross_at", lang, t=value)


def answer_key(result: dict, heads: dict) -> dict[str, list[str]]:
    """What the measurement accepts for each prediction (the runs' ranges and the share margin decide)."""
    return {"cross": scroll_lesson.cross_answers(result),
            "heads": [str(n) for n in scroll_lesson.heads_kept_answers(heads)]}


def scroll_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    cfg, w, g = DragonConfig(), scroll_lesson.WINDOW, scroll_lesson.GLOBALS
    lengths = RUNS.sizes.scroll_lengths
    setup = t("ls_setup", lang, h=cfg.n_heads, d=cfg.d_model, dh=cfg.d_head, w=w, g=g,
              lengths=", ".join(map(str, lengths)), device=lab.device_label(str(best_device()), lang))
    given, locked = attempt.get("answers", {}), waits.answered(attempt)
    crosses = [(str(T), t("ls_cross_at", lang, t=T)) for T in lengths] + [(scroll_lesson.NEVER, t("ls_never", lang))]
    counts = [(str(n), str(n)) for n in range(len(HEADS) + 1)]
    ask = lab.asks(
        lab.select("cross", t("ls_q_cross", lang), crosses, given.get("cross"), lang, locked=locked),
        lab.select("heads", t("ls_q_heads", lang, w=scroll_lesson.HEAD_WINDOW), counts, given.get("heads"), lang,
                   locked=locked),
    )
    return waits.measuring_room("scroll", level, lang, progress, attempt, note, setup, ask, len(PREDICTIONS),
                                measured_html, "scroll", t("ls_go", lang))


def measured_html(level: Level, lang: str, progress: dict, attempt: Attempt) -> str:
    """The predictions checked, the reading (asked, or checked with the level's end), then the measurement."""
    r, heads, given = attempt["result"], api.scroll_heads(lang), attempt["answers"]
    key = answer_key(r, heads)
    marks = " · ".join(f"{t('ls_k_' + k, lang)} {lab.mark(given[k] in key[k], lang)}" for k in PREDICTIONS)
    cross = scroll_lesson.crossing(r)["from"]
    kept = scroll_lesson.heads_kept_answers(heads)
    out = lab.verdict(t("ls_result", lang, p=attempt["points"], marks=marks))
    if "stars" not in attempt:  # before the reading: what was measured, in one line (after it, the findings say it)
        device = lab.device_label(r["device"], lang, r.get("threads"))
        cross_said = cross_text(scroll_lesson.NEVER if cross is None else str(cross), lang)
        said = t("ls_measured", lang, device=device, n=r["repeats"], cross=cross_said,
                 heads="–".join(map(str, sorted({kept[0], kept[-1]}))))
        if len(key["cross"]) > 1:  # lengths where the timings overlap: each counts, and the page says why
            said += " " + t("ls_accepted", lang, list=" / ".join(cross_text(v, lang) for v in key["cross"]))
        out += lab.note(said, "scored")
    a, b = r["lengths"][-2], r["lengths"][-1]
    if "stars" in attempt:
        right = scroll_lesson.READ_FACTORS.index(scroll_lesson.bytes_factor(r))
        out += lab.verdict(t("ls_read_result", lang, mine=t(f"ls_read{attempt['read']}", lang),
                             ok=lab.mark(attempt["read"] == right, lang), right=t(f"ls_read{right}", lang),
                             a=megabytes(r["full_bytes"][-2]), b=megabytes(r["full_bytes"][-1])))
        out += lab.end(level, lang, progress, int(attempt["stars"]))
    else:
        reads = [(str(i), t(f"ls_read{i}", lang)) for i in range(len(scroll_lesson.READ_FACTORS))]
        out += lab.question(t("ls_read_q", lang, a=a, b=b))
        out += lab.asks(lab.select("read", t("ls_read_label", lang), reads, None, lang))
        out += lab.check_row(lab.button("check", t("check", lang)))
    return out + figures(r, heads, lang, read="stars" in attempt)


def figures(r: dict, heads: dict, lang: str, read: bool) -> str:
    """The times (log-log), the bytes table, the heads through the window; once read, the findings in words."""
    import pandas as pd  # imported here: the engine starts without pandas

    device = lab.device_label(r["device"], lang, r.get("threads"))
    frame = pd.DataFrame([{"length": T, "path": path, "ms": ms} for path in ("full", "sparse")
                          for T, ms in zip(r["lengths"], r[f"{path}_ms"], strict=True)])
    chart = line_chart(frame, "length", "ms", "path", title=t("ls_chart", lang, n=r["repeats"], device=device),
                       x_label=t("ls_x", lang), y_label=t("ls_y", lang), colours=COLOURS,
                       names={"full": t("ls_full", lang), "sparse": t("ls_sparse", lang)}, log_x=True, log_y=True,
                       x_ticks=[float(T) for T in r["lengths"]], tip=t("ls_tip", lang), y_unit=" ms")
    rows = "".join(f"<tr><td>{T}</td><td>{megabytes(fb)}</td><td>{megabytes(sb)}</td><td>{d:.3f}</td></tr>"
                   for T, fb, sb, d in zip(r["lengths"], r["full_bytes"], r["sparse_bytes"], r["max_abs_diff"],
                                           strict=True))
    top = f"{max(r['max_abs_output']):.2f}"
    terms = (f'<details class="terms"><summary>{esc(t("ls_terms", lang))}</summary>'  # in the caption: no height until
             f'{lab.note(t("ls_bytes_note", lang, top=top))}</details>')  # opened, so the answer still fits a projector
    table = (f'<div class="table-wrap"><table class="flops"><caption>{esc(t("ls_bytes_title", lang))} {terms}</caption>'
             f"<thead><tr><th>T</th><th>{esc(t('ls_full_bytes', lang))}</th><th>{esc(t('ls_sparse_bytes', lang))}</th>"
             f"<th>{esc(t('ls_diff', lang))}</th></tr></thead><tbody>{rows}</tbody></table></div>")
    bars = bars_html([(head_label(i, lang), v["kept"] or 0.0, HEAD_COLORS[h])
                      for i, (h, v) in enumerate(heads["heads"].items())], 1.0, fmt="{:.0%}")
    lines = said(r, heads, lang) if read else []
    heads_box = lab.caption(t("ls_heads_title", lang, w=heads["window"])) + bars
    return ((lab.lines(lines) if lines else "")
            + f'<div class="race-result">{chart}<div>{table}{heads_box}</div></div>')



def said(r: dict, heads: dict, lang: str) -> list[str]:
    """What the measurement shows in words: each sentence whose condition holds (dragon/findings.py), filled in."""
    m = scroll_lesson.measured(r, heads)
    cross = m["cross"]
    fill = {"t": r["lengths"][-1], "mb": megabytes(r["full_bytes"][-1]), "smb": megabytes(r["sparse_bytes"][-1]),
            "k": f"{max(d for d in r['kernel_diff'] if d is not None):.1e}", "ft": f"{m['full_time']:.1f}",
            "st": f"{m['sparse_time']:.1f}", "lost": f"{m['lost']:.2f}", "top": f"{max(r['max_abs_output']):.2f}",
            "w": heads["window"], "most": f"{m['most_kept']:.0%}"}
    keys = [k for k in findings.shown(scroll_lesson.FINDINGS, m) if ":" not in k and not findings_grouped(k)]
    lines = [t(k, lang, **fill) for k in keys]
    lines.append(t(findings.pick(scroll_lesson.FINDINGS, "cross", m), lang, **{**fill, "t": cross}))
    return lines


def findings_grouped(key: str) -> bool:
    return any(f.key == key and f.group for f in scroll_lesson.FINDINGS)


def measure(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The two predictions, then the measurement in the server's lane (the wait box meanwhile; the page asks again
    when it is done), then the predictions checked against it."""
    if "result" in attempt:
        return None  # one measurement an attempt
    given = attempt.get("answers") if "waiting" in attempt else {k: data.get(k) for k in PREDICTIONS}
    lengths = [str(T) for T in RUNS.sizes.scroll_lengths] + [scroll_lesson.NEVER]
    if given.get("cross") not in lengths or given.get("heads") not in [str(n) for n in range(len(HEADS) + 1)]:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    start = lambda _: api.long_scroll_run(list(RUNS.sizes.scroll_lengths), scroll_lesson.WINDOW)  # noqa: E731

    def points(result: dict) -> int:  # the heads' shares read once the measurement is done, not before it queues
        key = answer_key(result, api.scroll_heads(lang))
        return sum(given[k] in key[k] for k in PREDICTIONS)

    return waits.measured_predictions(level, lang, progress, attempt, data, given, start, points, len(PREDICTIONS))


def read_scroll(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The bytes table read: it passes the level; the predictions add the rest of the stars."""
    if "result" not in attempt:
        return None
    answer = lambda: scroll_lesson.READ_FACTORS.index(scroll_lesson.bytes_factor(attempt["result"]))  # noqa: E731
    return lab.read_question(level, lang, progress, attempt, data, len(scroll_lesson.READ_FACTORS), answer,
                             len(PREDICTIONS))
