"""A printable worksheet per level: its text, the eight real maps, the questions with answer boxes, a teacher's key."""

from collections.abc import Callable
from dataclasses import dataclass

from dragon import api, game
from dragon.config import HEADS
from dragon.engine import Reading
from dragon.lessons import positions as positions_lesson
from dragon.levels.claims import loudness, measure
from dragon.levels.level import Level
from ui.rooms.lab import bucket_choices, bucket_text
from ui.rooms.slider_views import SEP, map_caption
from ui.strings import HEAD_COLORS, head_label, head_name, t
from ui.teacher.exports import (
    COLON,
    head_maps,
    header_html,
    in_lang,
    legend_block,
    level_claims,
    level_heading,
    level_target,
    map_geometry,
    map_svg,
    page_shell,
)
from ui.widgets.draw import esc

THEN = {"zh": "——", "en": ". "}  # a round's setting, then its question
PAGE_WIDTH = 680  # A4 less 15 mm margins, in CSS px: the maps' columns are chosen to fit it


@dataclass(frozen=True)
class Item:
    """One question of the worksheet and its line of the teacher's key."""

    ask: str
    key: str
    choices: tuple[str, ...] = ()  # tick boxes; none: a ruled box to write in
    lines: int = 2  # ruled lines to write on
    why: bool = False  # a "Why?" with lines of its own
    weights: bool = False  # the eight-row table of heads, a weight each


def quoted(words, lang: str) -> str:
    return SEP[lang].join(f"“{w}”" for w in words)


def num(v) -> str:
    """A measured number as the key prints it: shares to 2 places, a tiny one in 2 significant digits."""
    if v is None:
        return "—"
    if isinstance(v, bool) or isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.2g}" if v and abs(v) < 0.01 else f"{v:.2f}"
    return str(v)


# --- slider levels: questions generated from the level's own data (a teacher's level is not in the registry) ----


def claim_key(c: dict, lang: str) -> str:
    """A measured claim as the page's claims list words it ("⑤ 时序头 → 昨天 0.62，正在 0.31")."""
    name = head_label(HEADS.index(c["head"]), lang)
    comma = "，" if lang == "zh" else ", "
    if c["silent"]:
        loud = f"{c['loudness']:.2f}"
        return f"{name}: {t('claim_silent', lang, n=loud)}"
    shares = comma.join(f"{w['word']} {num(w['attention'])}" for w in c["words"])
    body = (f"{c['from']} " if c["from"] else "") + "→ " + shares if shares else ""
    if c["alone"]:
        alone = t("claim_alone", lang, words=comma.join(f"{w['word']} {num(w['self'])}" for w in c["alone"]))
        body = f"{body}{'；' if lang == 'zh' else '; '}{alone}" if body else alone
    return f"{name} {body}"


def slider_items(level: Level, lang: str, reading: Reading) -> list[Item]:
    """The weights to set, one question per claim of the narration that names words, and which heads are silent."""
    target = level_target(level, lang)
    weights = " · ".join(f"{head_label(i, lang)} {v:g}" for i, v in enumerate(target))
    items = [Item(t("ws_q_weights", lang), weights, lines=2, why=True, weights=True)]
    measured = measure(reading, level_claims(level, lang))
    for c in measured:
        if c["silent"]:
            continue
        words = [w["word"] for w in c["words"]]
        alone = [w["word"] for w in c["alone"]]
        if c["from"] and words:
            ask = t("ws_q_from", lang, source=c["from"], words=quoted(words, lang))
        elif words:
            ask = t("ws_q_words", lang, words=quoted(words, lang))
        else:
            ask = t("ws_q_alone", lang, words=quoted(alone, lang))
        items.append(Item(ask, claim_key(c, lang), lines=1, why=True))
    silent = api.silent_heads(reading)  # measured, so a head the narration does not mention counts too
    if silent:
        loud = loudness(reading)
        ask = t("ws_q_silent_one", lang) if len(silent) == 1 else t("ws_q_silent_many", lang, n=len(silent))
        said = [f"{head_label(HEADS.index(h), lang)}: {t('claim_silent', lang, n=f'{float(loud[HEADS.index(h)]):.2f}')}"
                for h in silent]
        items.append(Item(ask, "; ".join(said), lines=1, why=True))
    return items


# --- chapter 1 and the labs: the scored questions api.explain lists, worded as the page asks them ------------------


Key = Callable[..., str]  # key(*answer parts): the key's line, the measured value after it


def compare_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    ask = t("compare_one" if q["id"] == "one_head" else "compare_eight", lang, w=in_lang(level.focus, lang))
    return Item(ask, f"{q['accepted'][0]}: {SEP[lang].join(q['measured'])}", lines=1)


def match_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    word = q["id"].split(":", 1)[1]
    finding = next(f for f in level.findings if f.word[lang] == word)
    heads = tuple(head_label(i, lang) for i in range(len(HEADS)))
    return Item(t("ws_q_match", lang, says=finding.says[lang]), key(head_label(HEADS.index(q["accepted"][0]), lang)), heads)


def formula_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    qid, acc = q["id"], q["accepted"]
    i = int(qid[len("round") : qid.index(".")])
    r = level.rounds[lang][i - 1]
    head = t("f_round", lang, i=i, n=len(level.rounds[lang]), head=head_name(r.head, lang), word=r.word)
    if qid.endswith(".winner"):
        return Item(f"{head}{THEN[lang]}{t('f_winner_q', lang)}", key(" / ".join(acc)), lines=1)
    choices = tuple(label for _, label in bucket_choices("share", game.SHARE_BUCKETS, lang))
    answer = " / ".join(bucket_text("share", b, game.SHARE_BUCKETS, lang) for b in acc)
    return Item(f"{head}{THEN[lang]}{t('f_share_q', lang)}", key(answer), choices)


def race_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    acc, got = q["accepted"], q["measured"]
    if q["id"] == "guess":
        runs = SEP[lang].join(f"×{v:.2f}" for v in got)
        answer = t("ws_k_range", lang, lo=f"{acc[0]:.2f}", hi=f"{acc[1]:.2f}", runs=runs)
        return Item(t("r_guess", lang, t=level.guess_at), answer, lines=1, why=True)
    choices = tuple(t(f"r_work_{w}", lang) for w in ("less", "same", "more"))
    return Item(t("ws_q_work", lang), t(f"r_work_{acc[0]}", lang), choices, why=True)


def heads_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    acc, got = q["accepted"], q["measured"]
    if q["id"] == "ranking":
        accuracy = got["accuracy"]
        order = " > ".join(f"h = {h}" for h in acc)
        ask = f"{t('h_rank_q', lang)} (h = {', '.join(str(h) for h in sorted(accuracy, key=int))})"
        answer = t("ws_k_rank", lang, order=order, acc=SEP[lang].join(f"h = {h}: {v:.2f}" for h, v in accuracy.items()))
        return Item(ask, answer, lines=2, why=True)
    ranking = next(x for x in qs if x["id"] == "ranking")  # the numbers of heads, as the experiment ran them
    choices = tuple(f"h = {h}" for h in sorted(ranking["measured"]["accuracy"], key=int))
    answer = " / ".join(f"h = {h}" for h in acc) + " " + t("ws_k_accuracy", lang, v=num(got))
    return Item(t("ws_q_lowest", lang), answer, choices)


def crystal_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    word, target = level.ask
    return Item(t("ws_q_crystal", lang, word=word, target=target), key(" / ".join(q["accepted"])), lines=1, why=True)


def tower_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    qid, acc = q["id"], q["accepted"]
    if qid == "rises":
        return Item(t("tw_q_rises", lang), key(t(acc[0], lang)), (t("yes", lang), t("no", lang)), why=True)
    ask = {"adjacent": "tw_q_adjacent", "quiet": "tw_q_quiet", "nearest": "ws_q_nearest"}[qid]
    return Item(t(ask, lang), key(" / ".join(t("tw_layer", lang, l=v) for v in acc)), lines=1, why=True)


def grow_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    stage = t(f"stage_{q['id'].split(':', 1)[1]}", lang)
    return Item(t("ws_q_stage", lang, stage=stage), f"{stage}: {t('ws_k_stage', lang, v=num(q['measured']))}", lines=2)


def prune_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    acc, got = q["accepted"], q["measured"]
    answer = t("ws_k_prune", lang, n=acc[0], acc=num(got["best_accuracy"]), goal=num(got["goal"]))
    return Item(t("ws_q_prune", lang, goal=f"{api.prune_best(0)['goal']:.0%}"), answer, lines=1, why=True)


def fusion_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    qid, acc = q["id"], q["accepted"]
    if qid == "order":
        steps = [t(f"u_{s}", lang) for s in acc]
        shuffled = steps[1:] + steps[:1]  # never in the answer's order
        return Item(f"{t('u_order', lang)} {SEP[lang].join(shuffled)}", " → ".join(steps), lines=1, why=True)
    edges, prefix, ask = {"keep": (game.KEEP_BUCKETS, "keep", "u_keep_q"), "reach": (game.REACH_BUCKETS, "reach", "u_reach_q"),
                          "read": (game.REACH_BUCKETS, "reach", "ws_q_fusion_read")}[qid]
    choices = tuple(label for _, label in bucket_choices(prefix, edges, lang))
    return Item(t(ask, lang), key(" / ".join(bucket_text(prefix, b, edges, lang) for b in acc)), choices, why=True)


def positions_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    qid, acc = q["id"], q["accepted"]
    if qid == "read":
        choices = tuple(t(f"pos_read{i}", lang) for i in range(len(positions_lesson.READ_EDGES) + 1))
        return Item(t("ws_q_pos_read", lang), key(" / ".join(t(f"pos_read{i}", lang) for i in acc)), choices)
    p = api.positions(level.text[lang], lang)
    ask = t("pos_q_free", lang, a=p["text_a"], b=p["text_b"]) if qid == "free" else t("pos_q_pos", lang)
    choices = (t("pos_same", lang), t("pos_differ", lang))
    return Item(ask, key(" / ".join(t(f"pos_{a}", lang) for a in acc)), choices, why=True)


def scroll_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    qid, acc = q["id"], q["accepted"]
    if qid == "cross":
        said = SEP[lang].join(t("ls_never", lang) if a == "never" else t("ls_cross_at", lang, t=a) for a in acc)
        return Item(t("ls_q_cross", lang), said, lines=1, why=True)
    if qid == "heads":
        return Item(t("ls_q_heads", lang, w=4), key(" / ".join(map(str, acc))), lines=1, why=True)
    factors = tuple(t(f"ls_read{i}", lang) for i in range(3))
    return Item(t("ws_q_scroll_read", lang), factors[acc[0]], factors, why=True)


def stability_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    qid, acc = q["id"], q["accepted"]
    if qid == "who":
        choices = tuple(t(f"fl_who_{w}", lang) for w in ("one", "eight", "same"))
        return Item(t("fl_q_who", lang), key(" / ".join(t(f"fl_who_{a}", lang) for a in acc)), choices, why=True)
    if qid == "rate":
        said = SEP[lang].join(t("fl_rate_none", lang) if a == "none" else t("fl_rate_at", lang, lr=a) for a in acc)
        return Item(t("fl_q_rate", lang), said, lines=1, why=True)
    fixes = tuple(t(f"fl_read_{f}", lang) for f in ("smaller", "more_heads", "fewer_heads"))
    return Item(t("ws_q_fl_read", lang), " / ".join(fixes[i] for i in acc), fixes, why=True)


def router_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    if q["id"] == "smallest_k":
        choices = tuple(f"k = {k}" for k in (1, 2, 4, 8))
        return Item(t("ro_q_k", lang), key(" / ".join(f"k = {a}" for a in q["accepted"])), choices, why=True)
    reads = tuple(t(f"ro_read{i}", lang) for i in range(4))
    return Item(t("ro_read_q", lang, k=4), key(" / ".join(reads[i] for i in q["accepted"])), reads, why=True)


def plain_item(level: Level, lang: str, q: dict, qs: list[dict], key: Key) -> Item:
    """A kind with no wording of its own: its question's id asked, its accepted answers keyed."""
    return Item(q["id"], key(" / ".join(str(a) for a in q["accepted"])), lines=2, why=True)


# how each kind's scored questions (dragon/answer_keys.py QUESTIONS) are worded on paper; a kind not listed is
# printed plainly (plain_item), so a new kind prints before it has wording of its own
WORDING: dict[str, Callable[[Level, str, dict, list[dict], Key], Item]] = {
    "compare": compare_item, "match": match_item, "formula": formula_item, "race": race_item, "fusion": fusion_item,
    "heads": heads_item, "crystal": crystal_item, "tower": tower_item, "grow": grow_item, "prune": prune_item,
    "positions": positions_item, "scroll": scroll_item, "stability": stability_item,
    "router": router_item,
}


def lab_item(level: Level, lang: str, q: dict, qs: list[dict]) -> Item:
    """One scored question of a chapter-1 or lab level (an `api.explain` question, `qs` all of them) as the
    worksheet asks it."""
    got = q["measured"]
    number = isinstance(got, int | float) and not isinstance(got, bool)
    share = q["unit"] == "share" and isinstance(got, float) and 0.0 <= got <= 1.0
    measured = t("ws_k_share" if share else "ws_k_measured", lang, v=num(got)) if number else ""

    def key(*parts: str) -> str:
        return " ".join(p for p in (*parts, measured) if p)

    return WORDING.get(level.kind, plain_item)(level, lang, q, qs, key)


def lab_items(level: Level, lang: str) -> list[Item]:
    """The level's scored questions (`api.explain_level`), or one open question where it has none (the badge)."""
    qs = api.explain_level(level, lang)["questions"]
    return [lab_item(level, lang, q, qs) for q in qs] or [Item(t("ws_q_open", lang), t("ws_k_none", lang), lines=4)]


# --- the page ------------------------------------------------------------------------------------------------------


def answer_box(item: Item, lang: str) -> str:
    """The one ruled box a question is answered in: a table of heads, tick boxes, lines, and "Why?" lines."""
    inner = ""
    if item.weights:  # two heads a row, so the eight fit in four
        cell = [f'<th><span class="swatch" style="background:{HEAD_COLORS[h]}"></span>{esc(head_label(i, lang))}</th>'
                '<td class="box"></td>' for i, h in enumerate(HEADS)]
        half = len(cell) // 2
        rows = "".join(f"<tr>{a}{b}</tr>" for a, b in zip(cell[:half], cell[half:], strict=True))
        names = f'<th>{esc(t("ws_head", lang))}</th><th>{esc(t("ws_weight", lang))}</th>'
        inner += f'<table class="weights"><thead><tr>{names * 2}</tr></thead><tbody>{rows}</tbody></table>'
    elif item.choices:
        inner += '<div class="choices">' + "".join(f"<span>{esc(c)}</span>" for c in item.choices) + "</div>"
    if not item.weights:
        inner += '<div class="line"></div>' * (0 if item.choices else item.lines)
    if item.why:
        inner += f'<div class="line why">{esc(t("why_title", lang))}</div>' + '<div class="line"></div>'
    return f'<div class="answer">{inner}</div>'


def tiles(reading: Reading, lang: str) -> str:
    """The eight maps as print tiles (numeral and name over each; the words they look at are for the key)."""
    maps = head_maps(reading)
    width = map_geometry(reading.tokens)[2]
    cols = max(2, min(4, int(PAGE_WIDTH // (width + 20))))
    out = "".join(
        f'<figure class="tile" data-head="{h}" style="--c:{HEAD_COLORS[h]}"><figcaption>{esc(head_label(i, lang))}</figcaption>'
        f"{map_svg(maps[i], reading.tokens, head_label(i, lang))}</figure>"
        for i, h in enumerate(HEADS)
    )
    return f'<div class="maps" style="--cols:{cols}">{out}</div>{legend_block(lang)}'


def key_html(level: Level, lang: str, items: list[Item], reading: Reading) -> str:
    """The teacher's key, on a page of its own: each question's answer with its measured numbers, and for a slider
    level the target weights, the why and where each map looks most."""
    answers = "".join(f"<li>{esc(it.key)}</li>" for it in items)
    extra = ""
    if level.sliders:
        target = level_target(level, lang)
        rows = "".join(
            f'<tr><th><span class="swatch" style="background:{HEAD_COLORS[h]}"></span>{esc(head_label(i, lang))}</th>'
            f'<td class="num">{target[i]:g}</td></tr>'
            for i, h in enumerate(HEADS)
        )
        extra += (
            f'<h2>{esc(t("ws_key_target", lang))}</h2><table class="target"><tbody>{rows}</tbody></table>'
            f'<h2>{esc(t("why_title", lang))}</h2><p>{esc(in_lang(level.why, lang))}</p>'
        )
    said = [map_caption(reading, i, lang) for i in range(len(HEADS))]
    captions = "".join(
        f"<li>{esc(head_label(i, lang))}{' ' if c.startswith('→') else COLON[lang]}{esc(c)}</li>" for i, c in enumerate(said)
    )
    extra += f'<h2>{esc(t("ws_key_maps", lang))}</h2><ul class="captions">{captions}</ul>'
    if not level.sliders and level.why:
        extra += f'<h2>{esc(t("why_title", lang))}</h2><p>{esc(in_lang(level.why, lang))}</p>'
    return f'<section class="key"><h2>{esc(t("ws_key_title", lang))}</h2><ol class="keys">{answers}</ol>{extra}</section>'


def worksheet_html(level: Level, lang: str, answers: bool = False) -> str:
    """A standalone print-styled HTML worksheet of a level (A4): title, text (and source), the eight real maps,
    the questions each with an answer box; with `answers`, the teacher's key on a page of its own."""
    reading = api.level_reading(level, lang)
    items = slider_items(level, lang, reading) if level.sliders else lab_items(level, lang)
    text_lang = "zh-CN" if reading.analysis.lang == "zh" else "en"
    fields = "".join(f"<span>{esc(t(k, lang))}{COLON[lang]}</span>" for k in ("ws_name", "ws_class", "ws_date"))
    story = "" if level.sliders else f'<p class="story">{esc(in_lang(level.story, lang))}</p>'
    questions = "".join(
        f'<li class="q"><div class="ask">{esc(it.ask)}</div>{answer_box(it, lang)}</li>' for it in items
    )
    body = (
        f'<header>{header_html(level, lang, t("ws_sheet", lang))}'
        f'<div class="fields">{fields}</div></header>'
        f'<section class="passage"><h2>{esc(t("ws_text", lang))}</h2><p class="text" lang="{text_lang}">{esc(in_lang(level.text, lang))}</p>{story}</section>'
        f'<section class="figure"><h2>{esc(t("ws_maps_title", lang))}</h2><p class="ws-note">{esc(t("ws_maps_note", lang))}</p>'
        f"{tiles(reading, lang)}</section>"
        f'<section class="ws-questions"><h2>{esc(t("ws_questions", lang))}</h2><ol>{questions}</ol></section>'
        + (key_html(level, lang, items, reading) if answers else "")
    )
    return page_shell(f"{level_heading(level, lang)[1]} · {t('ws_sheet', lang)}", lang, body, "worksheet")
