"""Views of a level for one player: pure functions from (level, language, gates, progress) to HTML strings."""

import numpy as np

from dragon import api, game
from dragon.chapter1 import compare_heads
from dragon.config import HEADS
from dragon.engine import Reading
from dragon.levels import Level, load_levels

from .draw import STAR, esc, profile_svg, star_text
from .heatmap import labelled_grid, labelled_map, legend, png_data_uri
from .text import HEAD_COLORS, NUMERALS, head_name, t


def level_choices(progress: dict, lang: str) -> list[tuple[str, str]]:
    """Dropdown entries: id, title, stars; a lock on chapters not yet open."""
    opened = game.unlocked_chapters(progress)
    out = []
    for chapter in load_levels():
        for lv in chapter.levels:
            stars = progress["stars"].get(lv.id, 0)
            shown = chapter.number in opened or stars > 0  # a teacher's link may have opened a locked level
            mark = star_text(stars) if shown else f"({t('locked', lang)})"
            out.append((f"{lv.id} {lv.title[lang]}  {mark}", lv.id))
    return out


def header_html(lang: str, progress: dict) -> str:
    """The title, and the player's XP and stars."""
    total = 3 * sum(len(c.levels) for c in load_levels())
    earned = sum(progress["stars"].values())
    return (
        f"<div class='dragon-title'><div><h1>{esc(t('app_title', lang))}</h1><p>{esc(t('tagline', lang))}</p></div>"
        f'<div class="xp"><b>{esc(t("xp", lang))}</b> {game.xp(progress)} · '
        f'<span aria-label="stars">{STAR} {earned}/{total}</span></div></div>'
    )


def unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-12 else v * 0.0


def mixed_map(reading: Reading, gates) -> np.ndarray:
    """Σ g_h · A_h / Σ g_h over the visible tokens: the attention picture for these gates."""
    g = np.asarray(gates, dtype=np.float64)
    maps = reading.weights[:, 1:, 1:].numpy().astype(np.float64)  # (h, T, T)
    total = g.sum()
    return np.einsum("h,hij->ij", g, maps) / total if total > 1e-9 else np.zeros(maps.shape[1:])


def target_view(level: Level, reading: Reading, gates, lang: str) -> str:
    """Early levels: the head profile against the target's silhouette; later: the two attention pictures."""
    if level.show == "silhouette":
        sizes = reading.head_sizes.numpy()
        mine = unit(np.asarray(gates, dtype=np.float64) * sizes)
        target = unit(np.asarray(level.target_for(lang)) * sizes)
        silent = api.silent_heads(reading)
        return (
            profile_svg(mine.tolist(), target.tolist(), silent, lang)
            + f'<p class="note">{esc(t("profile_note", lang))}</p>'
        )
    tokens = reading.tokens
    return (
        '<div class="pictures">'
        + labelled_map(mixed_map(reading, gates), tokens, t("your_mix", lang), size=320)
        + labelled_map(mixed_map(reading, level.target_for(lang)), tokens, t("target_mix", lang), size=320)
        + f'</div>{legend(lang)}<p class="note">{esc(t("picture_note", lang))}</p>'
    )


def maps_html(reading: Reading, lang: str) -> str:
    """Small multiples: the eight heads' real attention maps, each named, with where it looks most."""
    maps = reading.weights[:, 1:, 1:].numpy()
    received = maps.sum(axis=1)  # (h, T)
    silent = set(api.silent_heads(reading))
    tiles = []
    for i, head in enumerate(HEADS):
        if head in silent:
            caption = t("silent", lang)
        else:
            top = [j for j in np.argsort(-received[i], kind="stable")[:2] if received[i, j] >= 0.1 * received[i].max()]
            caption = "→ " + ("，" if lang == "zh" else ", ").join(reading.tokens[j] for j in top)
        tiles.append(
            f'<figure class="tile" style="border-color:{HEAD_COLORS[head]}" data-head="{head}">'
            f'<figcaption><span class="swatch" style="background:{HEAD_COLORS[head]}"></span>'
            f"{NUMERALS[i]} {esc(head_name(head, lang))}</figcaption>"
            f'<img alt="{esc(head_name(head, lang))}" src="{png_data_uri(maps[i])}"/>'
            f'<div class="caption">{esc(caption)}</div></figure>'
        )
    return (
        f'<div class="maps-title">{esc(t("maps_title", lang))}</div>'
        f'<div class="maps">{"".join(tiles)}</div>{legend(lang)}'
    )


def silent_note(reading: Reading, lang: str) -> str:
    silent = api.silent_heads(reading)
    if not silent:
        return ""
    sep = "、" if lang == "zh" else ", "
    names = sep.join(head_name(h, lang) for h in silent)
    return f'<div class="note silent-note">{esc(t("silent_note", lang, heads=names))}</div>'


def compare_html(level: Level, lang: str) -> tuple[str, dict]:
    """The one-head map and the eight heads' rows for the focus word (1-1)."""
    truth = compare_heads(level, lang)
    tokens, focus = truth["tokens"], truth["focus"]
    word = level.focus[lang]
    rows = np.asarray(truth["eight_head_rows"])  # (h, T)
    labels = [f"{NUMERALS[i]} {head_name(h, lang)}" for i, h in enumerate(HEADS)]
    eight = labelled_grid(rows, labels, tokens, t("eight_head_rows", lang, w=word), width=380, row_height=24)
    one = labelled_map(truth["one_head_map"].numpy(), tokens, t("one_head_map", lang), size=340, highlight=focus)
    return f'<div class="pictures">{one}{eight}</div>{legend(lang)}', truth


def finding_rows(level: Level, lang: str, heads: list[str]) -> str:
    """After the matching game: the real attention each answer head gives the finding's word."""
    reading = api.level_reading(level, lang)
    maps = reading.weights[:, 1:, 1:].numpy()
    rows = np.stack([maps[HEADS.index(h)].sum(axis=0) / max(1, len(reading.tokens)) for h in heads])
    rows = rows / max(float(rows.max()), 1e-9)
    labels = [f"{NUMERALS[HEADS.index(h)]} {head_name(h, lang)}" for h in heads]
    return labelled_grid(rows, labels, reading.tokens, t("rows_title", lang), width=640, row_height=24)


def claims_html(level: Level, lang: str) -> str:
    """The narration's claims with the real numbers behind them ("Time → 昨天 0.62, 正在 0.31")."""
    if not level.sliders:
        return ""
    items = []
    for c in api.explain(level.id, lang)["claims"]:
        name = f"{NUMERALS[HEADS.index(c['head'])]} {head_name(c['head'], lang)}"
        if c["silent"]:
            body = t("claim_silent", lang, n=f"{c['loudness']:.2f}")
        else:
            body = "→ " + ("，" if lang == "zh" else ", ").join(f"{w} {v:.2f}" for w, v in c["attention"].items())
        items.append(
            f'<li data-head="{c["head"]}"><span class="swatch" style="background:{HEAD_COLORS[c["head"]]}"></span>'
            f"<b>{esc(name)}</b> {esc(body)}</li>"
        )
    return f'<div class="claims"><div class="claims-title">{esc(t("claims_title", lang))}</div><ul>{"".join(items)}</ul></div>'
