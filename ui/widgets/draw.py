"""HTML and SVG pieces: the dragon, the tokens, the score gauge, the head profile, the story."""

import math

from dragon.config import HEADS
from dragon.levels.loader import Level
from dragon.markup import esc
from dragon.text.analyser import MAX_TOKENS
from ui.strings import HEAD_COLORS, NUMERALS, head_label, head_name, t

STAR, NO_STAR = "★", "☆"


def star_text(stars: int) -> str:
    """'★★☆' for 2 of 3 stars."""
    return STAR * stars + NO_STAR * (3 - stars)


def dragon_svg(lang: str) -> str:
    """The eight-headed dragon. Each head's brightness and glow read the CSS variable --gN (its slider), which the
    panel sets from the sliders in the browser, so the dragon follows a slider before the server has answered."""
    w, h = 520, 300
    cx, body_y = w / 2, 262
    parts = [
        f'<svg class="dragon" viewBox="0 0 {w} {h}" role="img" aria-label="{esc(t("app_title", lang))}">',
        "<defs>",
        *(
            f'<radialGradient id="mhd-glow-{i}"><stop offset="0" stop-color="{HEAD_COLORS[head]}" stop-opacity="0.9"/>'
            f'<stop offset="1" stop-color="{HEAD_COLORS[head]}" stop-opacity="0"/></radialGradient>'
            for i, head in enumerate(HEADS)
        ),
        "</defs>",
        # the body and tail
        f'<path d="M{cx - 120},{body_y + 20} Q{cx},{body_y - 70} {cx + 120},{body_y + 20} Q{cx + 170},{body_y + 30} '
        f'{cx + 210},{body_y - 5}" fill="none" stroke="#4b5563" stroke-width="10" stroke-linecap="round"/>',
        f'<ellipse cx="{cx}" cy="{body_y}" rx="120" ry="38" fill="#374151"/>',
        f'<ellipse cx="{cx}" cy="{body_y + 6}" rx="80" ry="20" fill="#6b7280" opacity="0.6"/>',
    ]
    for i, head in enumerate(HEADS):
        angle = math.pi * (0.92 - 0.84 * i / 7)  # a fan from left to right
        hx, hy = cx + 215 * math.cos(angle), body_y - 40 - 175 * math.sin(angle)
        nx, ny = cx + 60 * math.cos(angle), body_y - 20
        colour = HEAD_COLORS[head]
        g = f"var(--g{i}, 0.5)"
        parts += [
            f'<path d="M{nx:.1f},{ny:.1f} Q{(nx + hx) / 2:.1f},{(ny + hy) / 2 + 30:.1f} {hx:.1f},{hy + 14:.1f}" '
            f'stroke="{colour}" stroke-width="12" fill="none" stroke-linecap="round" style="opacity:calc(0.35 + 0.65 * {g})"/>',
            f'<circle cx="{hx:.1f}" cy="{hy:.1f}" r="44" fill="url(#mhd-glow-{i})" class="glow" style="opacity:{g}"/>',
            f'<g class="head" data-head="{head}" style="opacity:calc(0.3 + 0.7 * {g})">',
            f"<title>{esc(head_label(i, lang))}</title>",
            f'<path d="M{hx - 16:.1f},{hy - 12:.1f} l-7,-13 l13,8 Z M{hx + 16:.1f},{hy - 12:.1f} l7,-13 l-13,8 Z" '
            f'fill="{colour}" stroke="#111827" stroke-width="1"/>',
            f'<ellipse cx="{hx:.1f}" cy="{hy:.1f}" rx="25" ry="21" fill="{colour}" stroke="#111827" stroke-width="1.5"/>',
            f'<circle cx="{hx - 9:.1f}" cy="{hy - 8:.1f}" r="3.5" fill="#fff"/>',
            f'<circle cx="{hx + 9:.1f}" cy="{hy - 8:.1f}" r="3.5" fill="#fff"/>',
            f'<text x="{hx:.1f}" y="{hy + 14:.1f}" text-anchor="middle" font-size="22" font-weight="700" '
            f'fill="#fff" stroke="#111827" stroke-width="0.8">{NUMERALS[i]}</text>',
            "</g>",
        ]
    parts.append("</svg>")
    return "".join(parts)


def tokens_html(tokens: list[str], lang: str, truncated: bool = False, max_tokens: int = MAX_TOKENS) -> str:
    chips = "".join(f'<span class="tok">{esc(tok)}</span>' for tok in tokens)
    note = f'<div class="note">{esc(t("truncated", lang, n=max_tokens))}</div>' if truncated else ""
    return f'<div class="tokens" lang="{"zh-CN" if lang == "zh" else "en"}">{chips}</div>{note}'


def score_colour(score: float) -> str:
    return "#2e9e4f" if score >= 95 else "#d4a017" if score >= 85 else "#f28c28" if score >= 70 else "#8e9aa6"


def shown_score(score: float) -> float:
    """A score as the page prints it: within 0…100, cut down to a tenth (the stars' lines 70 / 85 / 95 stay honest)."""
    return math.floor(max(0.0, min(100.0, score)) * 10) / 10


def gauge_html(score: float, stars: int, best: float | None, cap: int, lang: str, demo: bool = False) -> str:
    """A semicircle gauge with the score, the stars, the best so far and the most stars still reachable. Scores are
    printed cut (not rounded) to a tenth, so the number beside the stars is never above the line they are judged on:
    84.96 reads 84.9 beside ★, never 85.0."""
    s = shown_score(score)
    a = math.pi * (1 - s / 100)
    x, y = 100 + 80 * math.cos(a), 100 - 80 * math.sin(a)

    def tick(v: float) -> str:
        c, d = math.cos(math.pi * (1 - v / 100)), math.sin(math.pi * (1 - v / 100))
        return f'<line x1="{100 + 70 * c:.1f}" y1="{100 - 70 * d:.1f}" x2="{100 + 90 * c:.1f}" y2="{100 - 90 * d:.1f}" stroke="#111827" stroke-width="2"/>'

    best_text = f"{t('best', lang)} {shown_score(best):.1f}" if best is not None else ""
    status = t("demo_frame", lang) if demo else t("cap_now", lang, stars=star_text(cap))
    return (
        f'<div class="gauge{" demo" if demo else ""}">'
        f'<svg viewBox="0 0 200 108" role="img" aria-label="{esc(t("score", lang))} {s:.1f}">'
        '<path d="M20,100 A80,80 0 0 1 180,100" fill="none" stroke="#e5e7eb" stroke-width="16"/>'
        f'<path d="M20,100 A80,80 0 0 1 {x:.2f},{y:.2f}" fill="none" stroke="{score_colour(s)}" stroke-width="16"/>'
        f"{''.join(tick(v) for v in (70, 85, 95))}"
        f'<text x="100" y="94" text-anchor="middle" font-size="34" font-weight="700" class="score-value">{s:.1f}</text>'
        "</svg>"
        f'<div class="stars" role="img" aria-label="{esc(t("stars_label", lang))} {stars} / 3">{star_text(stars)}</div>'
        f'<div class="best">{esc(best_text)}</div><div class="cap">{esc(status)}</div></div>'
    )


SAME_SHARE_CUE = 0.02  # a target share this close to yours is "about the same" in the bar's words


def share_cue(mine: float, target: float, lang: str, full: bool = False) -> str:
    """The target's share said as the silhouette shows it: higher, lower or about the same as yours. A share is a
    part of the whole: when the head's slider is already `full`, a higher share comes from turning the others down."""
    if abs(target - mine) < SAME_SHARE_CUE:
        return t("cue_same", lang)
    if target > mine:
        return t("cue_full" if full else "cue_more", lang)
    return t("cue_less", lang)


def profile_html(mine: list[float], target: list[float] | None, silent: list[str], lang: str,
                 exact: bool = True, gates: list[float] | None = None) -> str:
    """Each head's share of the fused output: yours as coloured bars, the target (if any) as grey dashed silhouettes.
    Not `exact` (the level not won at ★★★, its answer not asked for): the words beside a bar say the target's share
    as the silhouette shows it (higher, lower, about the same), not its number, which would give the weights away."""
    shown = target is not None
    target = target if shown else [0.0] * len(HEADS)
    top = max([*mine, *target, 1e-9])
    rows = []
    for i, head in enumerate(HEADS):
        quiet = head in silent
        name = head_label(i, lang)
        if not shown:
            tip = t("share_tip_mine", lang, name=name, mine=f"{mine[i]:.2f}")
        elif exact:
            tip = t("share_tip", lang, name=name, mine=f"{mine[i]:.2f}", target=f"{target[i]:.2f}")
        else:
            tip = t("share_tip_cue", lang, name=name, mine=f"{mine[i]:.2f}", cue=share_cue(mine[i], target[i], lang, gates is not None and gates[i] >= 1.0))
        rows.append(
            f'<div class="prow{" quiet" if quiet else ""}" title="{esc(tip)}">'
            f'<span class="pname">{esc(NUMERALS[i] + " " + head_name(head, lang))}</span>'
            f'<span class="ptrack"><span class="sil" style="width:{100 * target[i] / top:.1f}%"></span>'
            f'<span class="mine" style="width:{100 * mine[i] / top:.1f}%;background:{HEAD_COLORS[head]}"></span></span>'
            f'<span class="sr-only">{esc(tip)}</span></div>'
        )
    key = f'<div class="pkey"><span class="k-mine"></span>{esc(t("your_mix", lang))}' + (
        f'<span class="k-sil"></span>{esc(t("target_mix", lang))}</div>' if shown else "</div>"
    )
    return f'<div class="profile">{key}{"".join(rows)}</div>'


def story_html(level: Level, lang: str) -> str:
    title = esc(level.title[lang])
    source = f' <span class="source">— {esc(level.source[lang])}</span>' if level.source else ""
    if level.kind == "custom":  # a teacher's level: its own story, or what to do
        head = esc(t("tl_chapter", lang))
        story = level.story[lang] or t("tl_story", lang)
        return f'<div class="story"><div class="level-title">{head} · {title}</div><p>{esc(story)}</p></div>'
    chapter = esc(t("chapter", lang, n=level.chapter))
    return (
        f'<div class="story"><div class="level-title">{chapter} · {esc(level.id)} {title}{source}</div>'
        f"<p>{esc(level.story[lang])}</p></div>"
    )


def why_html(level: Level, lang: str) -> str:
    why = level.why[lang] or (t("tl_why", lang) if level.kind == "custom" else "")
    return f'<div class="why"><b>{esc(t("why_title", lang))}</b> {esc(why)}</div>'


def notice_html(message: str) -> str:
    return f'<div class="notice" role="status">{esc(message)}</div>' if message else ""


def coach_html(message: str) -> str:
    return f'<div class="coach" role="status">{esc(message)}</div>' if message else ""
