"""Views of a level for one player: pure functions from (level, language, gates, progress) to HTML strings."""

import functools
from collections.abc import Collection

import numpy as np

from dragon import api, chapter1, game
from dragon.chapter1 import LOOKS_AT, compare_heads
from dragon.config import HEADS
from dragon.engine import Reading
from dragon.levels.claims import FOUND_SHARE, links_words, looks_at_itself, loudness, top_words
from dragon.levels.level import PANEL
from dragon.levels.loader import Level, all_levels, get_level, load_levels
from ui.session import level_after
from ui.strings import HEAD_COLORS, NUMERALS, head_label, head_name, t
from ui.widgets.draw import STAR, esc, profile_html, star_text
from ui.widgets.heatmap import labelled_grid, labelled_map, legend, natural_width, row_alt, shares_text

SEP = {"zh": "、", "en": ", "}


def next_from(current: str, progress: dict) -> str | None:
    """Where *Next* leads from the shipped level `current` (a teacher's link may have opened it beyond the player's
    chapters: the class goes on in order), so the picker and the button never disagree; None for anything else."""
    return level_after(get_level(current), progress) if current in all_levels() else None


def level_options(progress: dict, lang: str, current: str = "") -> list[tuple[str, list[tuple[str, str, bool]]]]:
    """The level picker, by chapter: (chapter title, [(id, label, open)]), with stars and marks in the labels;
    `current` (opened by a teacher's link, perhaps) is never greyed out, nor the level its *Next* leads to."""
    opened = game.unlocked_chapters(progress)
    nxt = next_from(current, progress)
    out = []
    for chapter in load_levels():
        items = []
        for lv in chapter.levels:
            stars = progress["stars"].get(lv.id, 0)
            is_open = chapter.number in opened or stars > 0  # a teacher's link may have opened a locked level
            mark = star_text(stars) if is_open or lv.id in (current, nxt) else t("locked", lang)
            is_open = is_open or lv.id in (current, nxt)
            if is_open and stars == 0 and game.shown(progress, lv.id):
                mark += f" · {t('shown_mark', lang)}"
            items.append((lv.id, f"{lv.id} {lv.title[lang]} {mark}", is_open))
        out.append((f"{t('chapter', lang, n=chapter.number)} · {chapter.title[lang]}", items))
    return out


def header_html(lang: str, progress: dict) -> str:
    """The title, and the player's XP and stars."""
    total = 3 * sum(len(c.levels) for c in load_levels())
    earned = sum(progress["stars"].get(lv.id, 0) for c in load_levels() for lv in c.levels)
    return (
        f"<div class='dragon-title'><div><h1>{esc(t('app_title', lang))}</h1><p>{esc(t('tagline', lang))}</p></div>"
        f'<div class="xp"><b>{esc(t("xp", lang))}</b> {game.xp(progress)} · '
        f'<span aria-label="{esc(t("stars_label", lang))}">{STAR} {earned}/{total}</span></div></div>'
    )


def kept(reading: Reading, key, make):
    """make() worked out once per reading and key and kept on the reading (a frozen dataclass: into its __dict__, as
    functools.cached_property does), so it goes when the dragon's cache lets the reading go. For what a slider move
    needs that does not depend on the gates."""
    memo = reading.__dict__.setdefault("_kept", {})
    if key not in memo:
        memo[key] = make()
    return memo[key]


def silent_of(reading: Reading) -> list[str]:
    """api.silent_heads, kept on the reading."""
    return kept(reading, "silent", lambda: api.silent_heads(reading))


def shares_of(v: np.ndarray) -> np.ndarray:
    """Non-negative parts as shares of their sum (they add up to 1; all zero stays zero)."""
    n = float(v.sum())
    return v / n if n > 1e-12 else v * 0.0


def word_shares(reading: Reading, gates) -> np.ndarray:
    """(T,) each word's share of the attention the gated heads pay to words (sink excluded): the mix's picture."""
    received = kept(reading, "received", lambda: reading.weights[:, 1:, 1:].sum(dim=1).numpy().astype(np.float64))
    mixed = np.asarray(gates, dtype=np.float64) @ received  # received: (h, T) summed over query rows
    total = mixed.sum()
    return mixed / total if total > 1e-12 else np.zeros_like(mixed)


MIX_RGB, OVER_RGB, UNDER_RGB = (91, 33, 182), (234, 88, 12), (29, 78, 216)  # the shades of style.css's .hl-words .w


def ink(rgb: tuple[int, int, int], alpha: float) -> str:
    """' dark' (white type) where a word's shade, `rgb` at `alpha` over white, is dark enough that black type would fall
    under 4.5 : 1 (relative luminance under 0.18, where white type has at least 4.5 : 1), else '' (black type)."""
    return _ink(rgb, round(min(max(alpha, 0.0), 1.0), 2))  # as the page draws it (--a has two decimals)


@functools.lru_cache(maxsize=1024)
def _ink(rgb: tuple[int, int, int], a: float) -> str:
    lin = [((c / 255 + 0.055) / 1.055) ** 2.4 if c / 255 > 0.04045 else c / 255 / 12.92
           for c in (255 * (1 - a) + ch * a for ch in rgb)]
    return " dark" if 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] < 0.18 else ""


def highlight_html(reading: Reading, gates, target, lang: str) -> str:
    """Your fusion beside the target: the text twice, each word shaded by the attention it receives."""
    mine, goal = word_shares(reading, gates), kept(reading, ("shares", tuple(target)), lambda: word_shares(reading, target))
    top = max(float(mine.max(initial=0.0)), float(goal.max(initial=0.0)), 1e-9)
    tokens = kept(reading, "esc_tokens", lambda: [esc(tok) for tok in reading.tokens])

    def strip(values: np.ndarray, title: str, cls: str) -> str:
        said = esc(title)  # esc works letter by letter: esc(a + b) is esc(a) + esc(b)
        words = "".join(
            f'<span class="w{ink(MIX_RGB, v / top)}" style="--a:{v / top:.2f}" '
            f'data-tip="{said}: {tok} {v:.2f}">{tok}</span>'
            for tok, v in zip(tokens, values.tolist(), strict=True)
        )
        return (
            f'<figure class="hl {cls}"><figcaption>{esc(title)}</figcaption>'
            f'<div class="hl-words" tabindex="0" role="group" aria-label="{esc(title)}. {esc(t("map_keys", lang))}" '
            f'lang="{"zh-CN" if lang == "zh" else "en"}">{words}</div></figure>'
        )

    return (
        f'<div class="pictures">{strip(mine, t("your_mix", lang), "mine")}{strip(goal, t("target_mix", lang), "goal")}</div>'
        f"{difference_html(reading.tokens, mine, goal, lang)}"
        f'<p class="note">{esc(t("picture_note", lang))}</p>'
    )


SAME_SHARE = 0.005  # a word whose share differs by less than this is drawn as the same
FULL_DIFF = 0.1  # a difference of this share (or the largest, if larger) is drawn fully coloured
SHOWN_DIFF = 3  # the words named as getting too much or too little


def ordinal(n: int, lang: str) -> str:
    if lang == "zh":
        return f"第 {n} 个"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def told_apart(tokens: list[str], lang: str) -> list[str]:
    """Each token's name, a repeated one with which it is: '？（第 2 个）', '? (2nd)' (a list naming two '？' can
    then be read)."""
    counts = {tok: tokens.count(tok) for tok in set(tokens)}
    seen: dict[str, int] = {}
    names = []
    for tok in tokens:
        seen[tok] = seen.get(tok, 0) + 1
        if counts[tok] == 1:
            names.append(tok)
        else:
            names.append(f"{tok}（{ordinal(seen[tok], lang)}）" if lang == "zh" else f"{tok} ({ordinal(seen[tok], lang)})")
    return names


def difference_html(tokens: list[str], mine: np.ndarray, goal: np.ndarray, lang: str) -> str:
    """Where your fusion differs from the target: each word shaded by how much more (orange) or less (blue)
    attention it gets in yours (a difference of FULL_DIFF fully coloured, so a near miss shows faint and a far miss
    strong); the biggest named with their numbers."""
    diff = mine - goal
    names = told_apart(list(tokens), lang)
    scale = max(float(np.abs(diff).max(initial=0.0)), FULL_DIFF)
    words = "".join(
        f'<span class="w {"over" if d > 0 else "under"}{ink(OVER_RGB if d > 0 else UNDER_RGB, abs(d) / scale)}" '
        f'style="--a:{abs(d) / scale:.2f}" '
        f'data-tip="{esc(f"{name} {d:+.3f}")}">{esc(tok)}</span>'
        if abs(d) >= SAME_SHARE else f'<span class="w">{esc(tok)}</span>'
        for tok, name, d in zip(tokens, names, diff, strict=True)
    )
    order = np.argsort(-np.abs(diff), kind="stable")
    named = {"more": [], "less": []}
    for i in order[: 2 * SHOWN_DIFF]:
        if abs(diff[i]) >= SAME_SHARE:
            side = named["more" if diff[i] > 0 else "less"]
            if len(side) < SHOWN_DIFF:
                side.append(f"{names[i]} {diff[i]:+.2f}")
    sep = "，" if lang == "zh" else ", "
    said = [t(f"diff_{k}", lang, words=sep.join(v)) for k, v in named.items() if v] or [
        t("diff_none", lang, m=f"{SAME_SHARE:g}")]
    return (
        f'<figure class="hl diff"><figcaption>{esc(t("diff_mix", lang))}</figcaption>'
        f'<div class="hl-words" tabindex="0" role="group" aria-label="{esc(t("diff_mix", lang))}" '
        f'lang="{"zh-CN" if lang == "zh" else "en"}">{words}</div>'
        f'<p class="diff-says">{esc(" · ".join(said))}</p></figure>'
    )


def profiles(reading: Reading, gates, target) -> tuple[list[float], list[float]]:
    """Your and the target's head profiles: each head's share of the fused output (the shares add up to 1)."""
    sizes = kept(reading, "sizes", lambda: reading.head_sizes.numpy().astype(np.float64))
    goal = kept(reading, ("profile", tuple(target)), lambda: shares_of(np.asarray(target, dtype=np.float64) * sizes).tolist())
    return shares_of(np.asarray(gates, dtype=np.float64) * sizes).tolist(), list(goal)


def comparison(level: Level, reading: Reading, gates, lang: str, exact: bool = False) -> str:
    """Early levels: the head profile against the target's silhouette (its numbers only when `exact`: the answer is
    open); later ones: the two attention pictures."""
    target = level.target_for(lang)
    if level.show == "silhouette":
        mine, goal = profiles(reading, gates, target)
        return profile_html(mine, goal, silent_of(reading), lang, exact, [float(g) for g in gates]) + (
            f'<p class="note">{esc(t("profile_note", lang))}</p>'
        )
    return highlight_html(reading, gates, target, lang)


SHOWN_WORDS = 5  # a map's caption names at most this many words, then how many more


def caption_text(found: list[tuple[str, float]], silent: bool, lang: str, more: bool = True,
                 links: bool = False, itself: bool = True) -> str:
    """Where a head looks most, in words: nothing to say, each word looking only at itself (`itself`:
    claims.looks_at_itself; where the words do not, their rows rest on the sink: nothing to say), spread over many
    words (`links`: it does link words, but none gets a finding's share), or its top words with their shares
    (`found`: claims.top_words), "(+n)" after the first SHOWN_WORDS when `more`."""
    if silent:
        return t("silent", lang)
    if not found:
        return (t("looks_spread", lang, share=f"{FOUND_SHARE:g}") if links
                else t("looks_self", lang) if itself else t("silent", lang))
    rest = f" (+{len(found) - SHOWN_WORDS})" if more and len(found) > SHOWN_WORDS else ""
    return "→ " + SEP[lang].join(f"{w} {v:.2f}" for w, v in found[:SHOWN_WORDS]) + rest


def head_caption(reading: Reading, head: str, lang: str, silent: Collection[str], found: list | None = None,
                 more: bool = True) -> str:
    """caption_text for `head` on this reading: its top words (or `found`), whether it is one of `silent`, whether it
    links words and whether its words look at themselves, all read off the reading."""
    return caption_text(top_words(reading, head) if found is None else found, head in silent, lang, more,
                        links=links_words(reading, head), itself=looks_at_itself(reading, head))


def map_caption(reading: Reading, i: int, lang: str) -> str:
    """Head i's map caption, as the page's maps show it (the worksheet and the PNG say the same)."""
    return head_caption(reading, HEADS[i], lang, api.silent_heads(reading))


def maps_html(reading: Reading, lang: str, scored: bool = True) -> str:
    """Small multiples: the eight heads' real attention maps, labelled, each with where it looks most."""
    maps = reading.weights[:, 1:, 1:].numpy()
    silent = set(api.silent_heads(reading))
    tiles = []
    for i, head in enumerate(HEADS):
        label = head_label(i, lang)
        found = [] if head in silent else top_words(reading, head)  # the words a claim could name, with their shares
        caption = head_caption(reading, head, lang, silent, found)
        # "⑤ 时序头 → 昨天 0.62, 正在 0.31": the caption's numbers; a head that names no word says why instead
        alt = f"{label} → {shares_text(found)}" if found else t("map_alt_silent", lang, name=label, caption=caption)
        tiles.append(
            f'<figure class="tile" style="border-color:{HEAD_COLORS[head]}" data-head="{head}">'
            f'<figcaption><span class="swatch" style="background:{HEAD_COLORS[head]}"></span>{esc(label)}'
            f' <span class="caption">{esc(caption)}</span></figcaption>'
            f"{labelled_map(maps[i], reading.tokens, label, lang, name=head_name(head, lang), show_title=False, alt=alt)}</figure>"
        )
    tile = natural_width(reading.tokens, reading.tokens) + 14  # a tile is as wide as its map at natural size
    return (
        f'<div class="maps-title">{esc(t("maps_title", lang))}</div>'
        f'<div class="maps" style="--tile:{tile:.0f}px">{"".join(tiles)}</div>{legend(lang)}{silent_note(reading, lang, scored)}'
    )


def silent_note(reading: Reading, lang: str, scored: bool = True) -> str:
    silent = api.silent_heads(reading)
    if not silent:
        return ""
    names = SEP[lang].join(head_name(h, lang) for h in silent)
    key = "silent_note" if scored else "silent_note_free"  # the sandbox has no score
    return f'<div class="note silent-note">{esc(t(key, lang, heads=names))}</div>'


def compare_html(level: Level, lang: str) -> tuple[str, dict]:
    """The one-head map and the eight heads' rows for the focus word (1-1)."""
    truth = compare_heads(level, lang)
    tokens, focus = truth["tokens"], truth["focus"]
    word = level.focus[lang]
    rows = np.asarray(truth["eight_head_rows"])  # (h, T)
    labels = [head_label(i, lang) for i in range(len(HEADS))]
    title = t("eight_head_rows", lang, w=word)
    each = "; ".join(row_alt(name, tokens, row) for name, row in zip(labels, rows, strict=True))
    eight = labelled_grid(
        rows, labels, tokens, title, lang, tip="{row}: {query} ← {col} {v}", query=word, mark=LOOKS_AT,
        alt=t("rows_alt", lang, title=title, rows=each),
    )
    one_name = t("one_head_map", lang)
    one_map = truth["one_head_map"].numpy()
    one = labelled_map(
        one_map, tokens, one_name, lang, name=one_name, highlight=focus, mark=LOOKS_AT,
        alt=f"{one_name}: {row_alt(word, tokens, one_map[focus])}",
    )
    return f'<div class="pictures">{one}{eight}</div>{legend(lang)}', truth


def finding_rows(level: Level, lang: str, heads: list[str]) -> str:
    """After the matching game: the real attention all eight heads give each word from the other words (a word looking
    at itself is no link), so "the head that gives this word the most" can be checked against every head; the answer
    heads are marked."""
    reading = api.level_reading(level, lang)
    rows = (chapter1.received(reading) / max(1, len(reading.tokens))).numpy()
    labels = [head_label(i, lang) + (" ✓" if h in heads else "") for i, h in enumerate(HEADS)]
    title = t("rows_title", lang)
    each = "; ".join(row_alt(name, reading.tokens, row) for name, row in zip(labels, rows, strict=True))
    return labelled_grid(
        rows, labels, reading.tokens, title, lang, tip="{row}: {col} {v}",
        scale=rows / max(float(rows.max()), 1e-9), alt=t("rows_alt", lang, title=title, rows=each),
    )


def claims_html(level: Level, lang: str) -> str:
    """The narration's claims with the real numbers behind them ("Time → 昨天 0.62, 正在 0.31")."""
    if not level.sliders:
        return ""
    items = []
    for c in api.explain_level(level, lang)["claims"]:
        name = f"{NUMERALS[HEADS.index(c['head'])]} {head_name(c['head'], lang)}"
        if c["silent"]:
            body = t("claim_silent", lang, n=f"{c['loudness']:.2f}")
        else:
            comma = "，" if lang == "zh" else ", "
            shares = comma.join(f"{w} {'—' if v is None else f'{v:.2f}'}" for w, v in c["attention"].items())
            body = (("" if c.get("from") is None else f"{c['from']} ") + "→ " + shares) if shares else ""
            if c.get("alone"):
                alone = t("claim_alone", lang, words=comma.join(f"{w} {v:.2f}" for w, v in c["alone"].items()))
                body = f"{body}{'；' if lang == 'zh' else '; '}{alone}" if body else alone
        items.append(
            f'<li data-head="{c["head"]}"><span class="swatch" style="background:{HEAD_COLORS[c["head"]]}"></span>'
            f"<b>{esc(name)}</b> {esc(body)}</li>"
        )
    if not items:
        return ""
    return f'<div class="claims"><div class="claims-title">{esc(t("claims_title", lang))}</div><ul>{"".join(items)}</ul></div>'


def panel_html(level: Level, lang: str, full: bool = True) -> str:
    """The lesson's control panel for the level's genre, measured: the two heads' target weights and their parts of
    the output on this text; a level that departs from it says why (its `departs` text) beside the numbers. Not
    `full` (the level not yet won at ★★★, its answer not asked for): which heads the lesson turns up, not how far."""
    if level.kind not in PANEL:
        return ""
    a, b = PANEL[level.kind]
    reading = api.level_reading(level, lang)
    loud = loudness(reading).tolist()
    target = level.target_for(lang)
    _, shares = profiles(reading, target, target)  # the target's output shares: the bars' dashed boxes
    top = int(np.argmax(shares))
    ia, ib = HEADS.index(a), HEADS.index(b)
    values = {"genre": t(f"genre_{level.kind}", lang), "a": head_name(a, lang), "b": head_name(b, lang),
              "wa": f"{target[ia]:g}", "wb": f"{target[ib]:g}", "la": f"{loud[ia]:.2f}", "lb": f"{loud[ib]:.2f}",
              "sa": f"{shares[ia]:.2f}", "sb": f"{shares[ib]:.2f}", "top": head_name(HEADS[top], lang),
              "st": f"{shares[top]:.2f}"}
    kept = level.keeps_panel(lang)
    line = t(("panel_keeps" if kept else "panel_departs") + ("" if full else "_heads"), lang, **values)
    why = "" if kept or level.departs is None else ("" if lang == "zh" else " ") + level.departs[lang]
    return f'<p class="panel-line" data-keeps="{int(kept)}">{esc(line + why)}</p>'


# --- the sandbox: no target, the fused output of the sliders as they are -------------------------------------


def free_comparison(reading: Reading, gates, lang: str) -> str:
    """The sandbox's fused output for these gates: each head's share of it (the bars) and the words the mix of
    heads attends to (the text shaded by the attention each word receives)."""
    sizes = reading.head_sizes.numpy().astype(np.float64)
    mine = shares_of(np.asarray(gates, dtype=np.float64) * sizes).tolist()
    shares = word_shares(reading, gates)
    top = max(float(shares.max(initial=0.0)), 1e-9)
    words = "".join(
        f'<span class="w{ink(MIX_RGB, v / top)}" style="--a:{v / top:.2f}" '
        f'data-tip="{esc(f"{tok} {v:.2f}")}">{esc(tok)}</span>'
        for tok, v in zip(reading.tokens, shares, strict=True)
    )
    title = t("your_mix", lang)
    picture = (
        f'<figure class="hl mine"><figcaption>{esc(title)}</figcaption>'
        f'<div class="hl-words" tabindex="0" role="group" aria-label="{esc(title)}. {esc(t("map_keys", lang))}" '
        f'lang="{"zh-CN" if reading.analysis.lang == "zh" else "en"}">{words}</div></figure>'
    )
    bars = profile_html(mine, None, api.silent_heads(reading), lang)
    return f'{bars}<p class="note">{esc(t("sb_profile_note", lang))}</p><div class="pictures">{picture}</div>'


def top_words_html(reading: Reading, lang: str) -> str:
    """Each head's most-attended words as text, with the shares its map shows (a text alternative for all eight)."""
    silent = set(api.silent_heads(reading))
    items = []
    for i, head in enumerate(HEADS):
        said = head_caption(reading, head, lang, silent, more=False)
        items.append(
            f'<li data-head="{head}"><span class="swatch" style="background:{HEAD_COLORS[head]}"></span>'
            f"<b>{esc(head_label(i, lang))}</b> {esc(said)}</li>"
        )
    return f'<ul class="top-words">{"".join(items)}</ul>'


def made_why(level: Level, lang: str) -> str:
    """A teacher's level without an explanation: what the heads its target turns up find in its text (measured)."""
    reading = api.level_reading(level, lang)
    target = level.target_for(lang)
    found = []
    for i in sorted(range(len(HEADS)), key=lambda k: -target[k]):
        if target[i] < 0.2:
            break
        words = top_words(reading, HEADS[i], 3)
        said = (SEP[lang].join(f"{w} {v:.2f}" for w, v in words) if words
                else head_caption(reading, HEADS[i], lang, (), found=[]))
        found.append(f"{head_label(i, lang)} {target[i]:g} → {said}")
    line = t("tl_why", lang) + ("" if lang == "zh" else " ") + t("tl_why_heads", lang, found="；".join(found) if lang == "zh" else "; ".join(found))
    return f'<div class="why"><b>{esc(t("why_title", lang))}</b> {esc(line)}</div>'
