"""5-2 The badge (多头注意力徽章): a small eight-headed dragon whose heads glow by the player's own mastery of each
head, with the player's name, as SVG (and PNG drawn with Pillow)."""

import functools
import io
import math
import unicodedata
from pathlib import Path

from dragon.checks import brief, check_lang
from dragon.config import HEAD_COLORS, HEAD_NAMES, HEADS, LANGS
from dragon.levels.loader import load_levels
from dragon.markup import esc

TITLE = {"zh": "多头注意力徽章", "en": "Multi-Head Attention Badge"}
SPEAKS = 0.2  # a head counts in a level where its target gate is at least this (in either language)
MAX_NAME = 24  # characters of the player's name kept
SIZE = 400  # the badge is SIZE × SIZE
RIBBON = 240  # the name's ribbon is RIBBON wide, centred under the body
NAME_ROOM = RIBBON - 16  # the name's widest, leaving 8 on each side
NAME_SIZE, NAME_MIN = 17, 9  # the name's font size, shrunk to at least NAME_MIN to fit the ribbon
CJK_FONTS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Bold.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/truetype/arphic/uming.ttc",
    "/System/Library/Fonts/PingFang.ttc",
    "C:/Windows/Fonts/msyh.ttc",
)


@functools.cache
def head_levels(lang: str | None = None) -> dict[str, tuple[str, ...]]:
    """head → the levels that exercise it: slider levels whose target in `lang`'s text gives it ≥ 0.2 (in either
    language when None: 2-9 trains Space in the Chinese dialogue, Time in the English one), and match levels with a
    finding the head makes. A badge is drawn for its page's language: it credits what that text of a level trains."""
    langs = LANGS if lang is None else (check_lang(lang),)
    out: dict[str, list[str]] = {h: [] for h in HEADS}
    for chapter in load_levels():
        for lv in chapter.levels:
            if lv.sliders:
                for i, head in enumerate(HEADS):
                    if max(lv.target_for(x)[i] for x in langs) >= SPEAKS:
                        out[head].append(lv.id)
            for head in {f.expect for f in lv.findings if f.expect}:
                out[head].append(lv.id)
    return {h: tuple(ids) for h, ids in out.items()}


def check_stars(progress: object) -> dict[str, int]:
    """The progress dict's stars (level id → 0…3), or a ValueError that says what is wrong."""
    stars = progress.get("stars") if isinstance(progress, dict) else None
    if not isinstance(stars, dict):
        raise ValueError("progress must be a dict with 'stars': {level id: 0…3}, as the game keeps it")
    for level_id, s in stars.items():
        if not isinstance(level_id, str) or isinstance(s, bool) or s not in (0, 1, 2, 3):
            raise ValueError(f"stars must map level ids to 0, 1, 2 or 3, not {brief(level_id)}: {brief(s)}")
    return {k: int(v) for k, v in stars.items()}


def mastery(progress: dict, lang: str | None = None) -> dict[str, float]:
    """head → mean stars / 3 over the levels that exercise it in `lang`'s texts (head_levels; a level not yet played
    counts 0)."""
    stars = check_stars(progress)
    return {
        head: round(sum(stars.get(i, 0) for i in ids) / (3 * len(ids)), 4) if ids else 0.0
        for head, ids in head_levels(lang).items()
    }


def clean_name(name: object) -> str:
    """The player's name as plain text: control and format characters dropped, at most MAX_NAME characters."""
    if name is None:
        return ""
    if not isinstance(name, str):
        raise ValueError(f"name must be text, not {type(name).__name__}")
    kept = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C" or ch == " ")
    return " ".join(kept.split())[:MAX_NAME]


def layout() -> list[dict]:
    """Where each head sits: a fan of eight over the body, its neck from the body to it, its label beyond it."""
    cx, cy, body_y = SIZE / 2, 252, 292  # the fan's centre; the body below it
    out = []
    for i in range(len(HEADS)):
        angle = math.pi * (0.9 - 0.8 * i / (len(HEADS) - 1))  # left to right
        cos, sin = math.cos(angle), math.sin(angle)
        hx, hy = cx + 110 * cos, cy - 110 * sin
        nx, ny = cx + 50 * cos, body_y - 14
        out.append({
            "head": (hx, hy),
            "neck": ((nx, ny), ((nx + hx) / 2, (ny + hy) / 2 + 20), (hx, hy + 10)),  # quadratic Bézier: from, via, to
            "label": (cx + 158 * cos, cy - 158 * sin),  # centre of the name and, under it, the mastery
        })
    return out


def bezier(p0: tuple[float, float], p1: tuple[float, float], p2: tuple[float, float], n: int = 12) -> list:
    """n + 1 points along the quadratic Bézier curve p0 → p2 pulled toward p1 (what SVG's Q draws)."""
    return [
        tuple((1 - t) ** 2 * a + 2 * t * (1 - t) * b + t**2 * c for a, b, c in zip(p0, p1, p2, strict=True))
        for t in (k / n for k in range(n + 1))
    ]


def badge_svg(progress: dict, name: str | None = None, lang: str = "zh") -> str:
    """The badge as a standalone SVG document: each head's opacity and glow follow its mastery."""
    li = LANGS.index(check_lang(lang))
    m = mastery(progress, lang)
    who = clean_name(name)
    total = sum(check_stars(progress).values())
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {SIZE} {SIZE}" width="{SIZE}" height="{SIZE}" '
        f'role="img" aria-label="{esc(TITLE[lang] + (" · " + who if who else ""))}" '
        "font-family=\"'Noto Sans CJK SC', 'PingFang SC', 'Microsoft YaHei', sans-serif\">",
        '<defs><filter id="badge-glow" x="-60%" y="-60%" width="220%" height="220%">'
        '<feGaussianBlur stdDeviation="6"/></filter></defs>',
        f'<circle cx="{SIZE / 2}" cy="{SIZE / 2}" r="194" fill="#16213e" stroke="#d4a017" stroke-width="8"/>',
        f'<circle cx="{SIZE / 2}" cy="{SIZE / 2}" r="182" fill="none" stroke="#d4a017" stroke-width="1.5" '
        'stroke-dasharray="4 5"/>',
        *(f'<text class="badge-title" x="{SIZE / 2}" y="{y}" text-anchor="middle" font-size="{size}" font-weight="700" '
          f'fill="#f5d76e" textLength="{width:.1f}" lengthAdjust="spacingAndGlyphs">{esc(text)}</text>'
          for text, y, size, width in title_fit(lang)),
    ]
    spots = layout()
    for i, head in enumerate(HEADS):
        s, colour = m[head], HEAD_COLORS[head]
        (hx, hy), (lx, ly) = spots[i]["head"], spots[i]["label"]
        (x0, y0), (x1, y1), (x2, y2) = spots[i]["neck"]
        parts += [
            f'<g class="badge-head" data-head="{head}" data-mastery="{s}">',
            f'<path d="M{x0:.1f},{y0:.1f} Q{x1:.1f},{y1:.1f} {x2:.1f},{y2:.1f}" '
            f'stroke="{colour}" stroke-width="9" fill="none" stroke-linecap="round" opacity="{0.35 + 0.65 * s:.3f}"/>',
            f'<circle cx="{hx:.1f}" cy="{hy:.1f}" r="26" fill="{colour}" filter="url(#badge-glow)" opacity="{s:.3f}"/>',
            f'<circle cx="{hx:.1f}" cy="{hy:.1f}" r="16" fill="{colour}" stroke="#0b1020" stroke-width="1.5" '
            f'opacity="{0.3 + 0.7 * s:.3f}"/>',
            f'<text x="{hx:.1f}" y="{hy + 5:.1f}" text-anchor="middle" font-size="14" font-weight="700" '
            f'fill="#fff">{i + 1}</text>',
            f'<text x="{lx:.1f}" y="{ly - 1:.1f}" text-anchor="middle" font-size="11" fill="#e5e7eb" '
            f'opacity="{0.5 + 0.5 * s:.3f}">{esc(HEAD_NAMES[head][li])}'
            f'<tspan x="{lx:.1f}" dy="12" font-size="10">{round(100 * s)}%</tspan></text>',
            "</g>",
        ]
    parts += [
        f'<ellipse cx="{SIZE / 2}" cy="292" rx="74" ry="26" fill="#374151" stroke="#0b1020" stroke-width="1.5"/>',
        f'<text x="{SIZE / 2}" y="298" text-anchor="middle" font-size="15" fill="#f5d76e">★ {total}</text>',
    ]
    if who:
        size, width = name_fit(who)  # textLength holds it to the measured width whatever font the viewer has
        parts += [
            f'<rect x="{SIZE / 2 - RIBBON / 2}" y="326" width="{RIBBON}" height="34" rx="8" fill="#d4a017"/>',
            f'<text class="badge-name" x="{SIZE / 2}" y="{343 + 0.35 * size:.1f}" text-anchor="middle" '
            f'font-size="{size}" font-weight="700" fill="#16213e" textLength="{width:.1f}" '
            f'lengthAdjust="spacingAndGlyphs">{esc(who)}</text>',
        ]
    parts.append("</svg>")
    return "".join(parts)


def mix(colour: str, alpha: float, under: str = "#16213e") -> tuple[int, int, int]:
    """colour at opacity alpha over `under` (the badge's ground), as one opaque RGB: what the SVG shows."""
    rgb = [int(colour[k : k + 2], 16) for k in (1, 3, 5)]
    ground = [int(under[k : k + 2], 16) for k in (1, 3, 5)]
    return tuple(round(alpha * a + (1 - alpha) * b) for a, b in zip(rgb, ground, strict=True))


@functools.cache
def _measure_font(size: int) -> object | None:
    from PIL import ImageFont  # Pillow comes with gradio; imported only here

    font_file = cjk_font()
    return ImageFont.truetype(str(font_file), size) if font_file else None


def name_width(text: str, size: int) -> float:
    """The name's width in px at font size `size`, bold: measured with the server's CJK font (it has Latin glyphs
    too), or without one a cautious estimate (a wide character 1 em, any other 0.75 em)."""
    font = _measure_font(size)
    if font is not None:
        return float(font.getlength(text))
    return size * sum(1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.75 for ch in text)


INNER = 182  # the disc's inner ring: the title must fit inside it
TITLE_LINES = {"zh": ("多头注意力徽章",), "en": ("Multi-Head", "Attention Badge")}  # the ring is narrow at the top
TITLE_SIZE, TITLE_MIN = 22, 12  # the title's font size, and the smallest it may shrink to
TITLE_BASELINES = {1: (58,), 2: (50, 72)}  # one line, or two


def chord(y: float, radius: float = INNER) -> float:
    """The inner ring's width at height y (0 outside it)."""
    dy = abs(y - SIZE / 2)
    return 2 * math.sqrt(radius**2 - dy**2) if dy < radius else 0.0


def title_fit(lang: str) -> list[tuple[str, float, int, float]]:
    """Each title line as (text, baseline, font size, width): shrunk until it fits the ring at its top edge (the
    ring narrows upwards), with 12 px to spare on each side."""
    lines = TITLE_LINES[lang]
    out = []
    for text, y in zip(lines, TITLE_BASELINES[len(lines)], strict=True):
        size = TITLE_SIZE
        while size > TITLE_MIN and name_width(text, size) > chord(y - size) - 24:
            size -= 1
        out.append((text, y, size, min(name_width(text, size), chord(y - size) - 24)))
    return out


def name_fit(text: str) -> tuple[int, float]:
    """(font size, width) of the name on the ribbon: NAME_SIZE shrunk until it fits NAME_ROOM (not below NAME_MIN;
    a width over NAME_ROOM there is capped, and the SVG's textLength squeezes the glyphs to it)."""
    size = NAME_SIZE
    while size > NAME_MIN and name_width(text, size) > NAME_ROOM:
        size -= 1
    return size, min(name_width(text, size), NAME_ROOM)


@functools.cache
def cjk_font() -> Path | None:
    """A font on this machine that has Chinese glyphs (Debian: fonts-noto-cjk), or None."""
    return next((Path(p) for p in CJK_FONTS if Path(p).is_file()), None)


def badge_png(progress: dict, name: str | None = None, lang: str = "zh", scale: int = 2) -> bytes:
    """The same badge drawn with Pillow, as PNG bytes (SIZE·scale square). Chinese text needs a CJK font on the
    server (cjk_font()); without one the labels fall back to English and the name keeps its Latin characters."""
    from PIL import Image, ImageDraw, ImageFilter, ImageFont  # Pillow comes with gradio; imported only here

    li = LANGS.index(check_lang(lang))
    m = mastery(progress, lang)
    total = sum(check_stars(progress).values())
    who = clean_name(name)
    font_file = cjk_font()
    if font_file is None:  # Pillow's own font has Latin glyphs only
        li, lang = 1, "en"
        who = "".join(ch for ch in who if ord(ch) < 0x250).strip()

    def font(size: int) -> ImageFont.ImageFont:
        return ImageFont.truetype(str(font_file), size * scale) if font_file else ImageFont.load_default(size * scale)

    def at(x: float, y: float) -> tuple[float, float]:
        return x * scale, y * scale

    S, c = SIZE * scale, SIZE / 2
    img = Image.new("RGBA", (S, S), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    draw.ellipse([*at(c - 194, c - 194), *at(c + 194, c + 194)], fill="#16213e", outline="#d4a017", width=8 * scale)
    for text, y, size, _ in title_fit(lang):
        while size > TITLE_MIN and draw.textlength(text, font=font(size)) > (chord(y - size) - 24) * scale:
            size -= 1
        draw.text(at(c, y - 0.35 * size), text, fill="#f5d76e", font=font(size), anchor="mm")
    glow = Image.new("RGBA", (S, S), (0, 0, 0, 0))
    glow_draw = ImageDraw.Draw(glow)
    spots = layout()
    for i, head in enumerate(HEADS):
        hx, hy = spots[i]["head"]
        glow_draw.ellipse(
            [*at(hx - 26, hy - 26), *at(hx + 26, hy + 26)], fill=(*mix(HEAD_COLORS[head], 1), round(255 * m[head]))
        )
        neck = [at(x, y) for x, y in bezier(*spots[i]["neck"])]
        draw.line(neck, fill=mix(HEAD_COLORS[head], 0.35 + 0.65 * m[head]), width=9 * scale, joint="curve")
    img = Image.alpha_composite(img, glow.filter(ImageFilter.GaussianBlur(6 * scale)))
    draw = ImageDraw.Draw(img)
    for i, head in enumerate(HEADS):
        (hx, hy), (lx, ly) = spots[i]["head"], spots[i]["label"]
        fill = mix(HEAD_COLORS[head], 0.3 + 0.7 * m[head])
        draw.ellipse([*at(hx - 16, hy - 16), *at(hx + 16, hy + 16)], fill=fill, outline="#0b1020", width=scale)
        draw.text(at(hx, hy), str(i + 1), fill="#ffffff", font=font(14), anchor="mm")
        ink = mix("#e5e7eb", 0.5 + 0.5 * m[head])
        draw.text(at(lx, ly - 5), HEAD_NAMES[head][li], fill=ink, font=font(11), anchor="mm")
        draw.text(at(lx, ly + 7), f"{round(100 * m[head])}%", fill=ink, font=font(10), anchor="mm")
    draw.ellipse([*at(c - 74, 266), *at(c + 74, 318)], fill="#374151", outline="#0b1020")
    draw.text(at(c, 292), f"★ {total}" if font_file else f"{total} stars", fill="#f5d76e", font=font(15), anchor="mm")
    if who:
        draw.rounded_rectangle([*at(c - RIBBON / 2, 326), *at(c + RIBBON / 2, 360)], radius=8 * scale, fill="#d4a017")
        size = NAME_SIZE  # the same fit as the SVG's, measured with the font that draws it
        while size > NAME_MIN and draw.textlength(who, font=font(size)) > NAME_ROOM * scale:
            size -= 1
        draw.text(at(c, 343), who, fill="#16213e", font=font(size), anchor="mm")
    out = io.BytesIO()
    img.save(out, format="PNG", optimize=True)
    return out.getvalue()
