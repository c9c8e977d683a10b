"""HTML and SVG pieces: the dragon, the tokens, the score gauge, the head profile, the story."""

import html
import math

from dragon.config import HEADS
from dragon.levels import Level

from .text import HEAD_COLORS, NUMERALS, head_name, t

STAR, NO_STAR = "★", "☆"


def star_text(stars: int) -> str:
    """'★★☆' for 2 of 3 stars."""
    return STAR * stars + NO_STAR * (3 - stars)


# Gradio's HTML component runs its value through Handlebars and a JS template literal before showing it,
# so besides the usual HTML escapes, `$`, backticks and braces in any text must not reach it raw.
_TEMPLATE_CHARS = str.maketrans({"$": "&#36;", "`": "&#96;", "{": "&#123;", "}": "&#125;", "\\": "&#92;"})


def esc(text: str) -> str:
    """Escape text for our HTML: markup, and the template syntax Gradio's HTML component would evaluate."""
    return html.escape(str(text)).translate(_TEMPLATE_CHARS)


def dragon_svg(lang: str) -> str:
    """The eight-headed dragon. Each head's brightness and glow read the CSS variable --gN (its slider), which
    gates_style() sets, so a slider move re-sends a few bytes instead of the whole drawing."""
    w, h = 520, 300
    cx, body_y = w / 2, 262
    parts = [
        f'<svg class="dragon" viewBox="0 0 {w} {h}" role="img" aria-label="{esc(t("app_title", lang))}">',
        "<defs>",
        *(
            f'<radialGradient id="glow{i}"><stop offset="0" stop-color="{HEAD_COLORS[head]}" stop-opacity="0.9"/>'
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
            f'<circle cx="{hx:.1f}" cy="{hy:.1f}" r="40" fill="url(#glow{i})" class="glow" '
            f'style="opacity:{g};transform:scale(calc(0.55 + 0.45 * {g}))"/>',
            f'<g class="head" data-head="{head}" style="opacity:calc(0.3 + 0.7 * {g})">',
            f"<title>{esc(head_name(head, lang))}</title>",
            f'<path d="M{hx - 14:.1f},{hy - 10:.1f} l-6,-12 l12,7 Z M{hx + 14:.1f},{hy - 10:.1f} l6,-12 l-12,7 Z" '
            f'fill="{colour}" stroke="#111827" stroke-width="1"/>',
            f'<ellipse cx="{hx:.1f}" cy="{hy:.1f}" rx="21" ry="17" fill="{colour}" stroke="#111827" stroke-width="1.5"/>',
            f'<circle cx="{hx - 8:.1f}" cy="{hy - 6:.1f}" r="3.5" fill="#fff"/>',
            f'<circle cx="{hx + 8:.1f}" cy="{hy - 6:.1f}" r="3.5" fill="#fff"/>',
            f'<text x="{hx:.1f}" y="{hy + 11:.1f}" text-anchor="middle" font-size="13" font-weight="700" '
            f'fill="#fff" stroke="#111827" stroke-width="0.6">{NUMERALS[i]}</text>',
            "</g>",
            f'<text x="{hx:.1f}" y="{hy - 28:.1f}" text-anchor="middle" font-size="13" class="head-name">'
            f"{esc(head_name(head, lang))}</text>",
        ]
    parts.append("</svg>")
    return "".join(parts)


def gates_style(gates: list[float]) -> str:
    """The dragon's brightness for these gates: a few CSS variables."""
    values = ";".join(f"--g{i}:{max(0.0, min(1.0, float(g))):.2f}" for i, g in enumerate(gates))
    return f"<style>svg.dragon{{{values}}}</style>"


def tokens_html(tokens: list[str], lang: str, truncated: bool = False, max_tokens: int = 64) -> str:
    chips = "".join(f'<span class="tok">{esc(tok)}</span>' for tok in tokens)
    note = f'<div class="note">{esc(t("truncated", lang, n=max_tokens))}</div>' if truncated else ""
    return f'<div class="tokens" lang="{"zh-CN" if lang == "zh" else "en"}">{chips}</div>{note}'


def gauge_html(score: float, stars: int, best: float | None, cap: int, lang: str) -> str:
    """A semicircle gauge with the score, the stars and the best so far."""
    s = max(0.0, min(100.0, score))
    a = math.pi * (1 - s / 100)
    x, y = 100 + 80 * math.cos(a), 100 - 80 * math.sin(a)
    colour = "#2e9e4f" if s >= 95 else "#d4a017" if s >= 85 else "#f28c28" if s >= 70 else "#8e9aa6"
    ticks = "".join(
        f'<line x1="{100 + 70 * math.cos(math.pi * (1 - v / 100)):.1f}" y1="{100 - 70 * math.sin(math.pi * (1 - v / 100)):.1f}" '
        f'x2="{100 + 90 * math.cos(math.pi * (1 - v / 100)):.1f}" y2="{100 - 90 * math.sin(math.pi * (1 - v / 100)):.1f}" '
        'stroke="#111827" stroke-width="2"/>'
        for v in (70, 85, 95)
    )
    best_text = f"{t('best', lang)} {best:.1f}" if best is not None else ""
    cap_text = f'<div class="note">{esc(t("stars_cap", lang, n=cap))}</div>' if cap < 3 else ""
    return (
        '<div class="gauge">'
        f'<svg viewBox="0 0 200 112" role="img" aria-label="{t("score", lang)} {s:.1f}">'
        '<path d="M20,100 A80,80 0 0 1 180,100" fill="none" stroke="#e5e7eb" stroke-width="16"/>'
        f'<path d="M20,100 A80,80 0 0 1 {x:.2f},{y:.2f}" fill="none" stroke="{colour}" stroke-width="16"/>'
        f"{ticks}"
        f'<text x="100" y="92" text-anchor="middle" font-size="30" font-weight="700" class="score-value">{s:.1f}</text>'
        "</svg>"
        f'<div class="stars" aria-label="{stars} / 3">{star_text(stars)}</div>'
        f'<div class="best">{esc(best_text)}</div>{cap_text}</div>'
    )


def profile_svg(player: list[float], target: list[float] | None, silent: list[str], lang: str) -> str:
    """Each head's share of the fused output: yours as coloured bars, the target as a grey silhouette."""
    w, row = 420, 30
    h = row * len(HEADS) + 26
    scale = max([*player, *(target or []), 1e-9])
    parts = [f'<svg class="profile" viewBox="0 0 {w} {h}" role="img" aria-label="profile">']
    legend = f'<tspan fill="#374151">■ {t("your_mix", lang)}</tspan>'
    if target is not None:
        legend += f'  <tspan fill="#9ca3af">▭ {t("target_mix", lang)}</tspan>'
    parts.append(f'<text x="120" y="14" font-size="12">{legend}</text>')
    for i, head in enumerate(HEADS):
        y = 22 + i * row
        name = f"{NUMERALS[i]} {head_name(head, lang)}"
        quiet = head in silent
        fill = ' fill="#9ca3af"' if quiet else ""
        parts.append(f'<text x="112" y="{y + 17}" text-anchor="end" font-size="13"{fill}>{esc(name)}</text>')
        if target is not None:
            tw = 290 * target[i] / scale
            parts.append(
                f'<rect x="120" y="{y + 2}" width="{tw:.1f}" height="22" fill="#d1d5db" stroke="#6b7280" '
                'stroke-dasharray="4 2" class="silhouette"/>'
            )
        pw = 290 * player[i] / scale
        parts.append(f'<rect x="120" y="{y + 7}" width="{pw:.1f}" height="12" fill="{HEAD_COLORS[head]}"/>')
        if quiet:
            parts.append(
                f'<text x="{126 + pw:.1f}" y="{y + 17}" font-size="11" fill="#6b7280">{t("silent", lang)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def story_html(level: Level, lang: str, coach: str = "") -> str:
    title = esc(level.title[lang])
    source = f' <span class="source">— {esc(level.source[lang])}</span>' if level.source else ""
    chapter = esc(t("chapter", lang, n=level.chapter))
    coach_html = f'<div class="coach">{esc(coach)}</div>' if coach else ""
    return (
        f'<div class="story"><div class="level-title">{chapter} · {esc(level.id)} {title}{source}</div>'
        f"<p>{esc(level.story[lang])}</p>{coach_html}</div>"
    )


def why_html(level: Level, lang: str, visible: bool) -> str:
    if not visible:
        return ""
    return f'<div class="why"><b>{esc(t("why_title", lang))}</b> {esc(level.why[lang])}</div>'


def notice_html(message: str) -> str:
    return f'<div class="notice" role="status">{esc(message)}</div>' if message else ""
