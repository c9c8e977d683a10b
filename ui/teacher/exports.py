"""Exports: the eight heads' real attention maps as one standalone SVG (for PNG), and the print pages' shell."""

import math
import re

import numpy as np

from dragon.config import HEADS
from dragon.engine import Reading
from dragon.levels.level import Claim, Level
from dragon.markup import esc, text_width
from ui.rooms.slider_views import map_caption
from ui.strings import HEAD_COLORS, head_label, t
from ui.widgets.heatmap import CELL, FONT, TILT, VIRIDIS, natural_width, png_data_uri

# the same fonts everywhere a file leaves the page: a teacher's Windows or Mac has one of these, Debian the first
FONT_STACK = "'Noto Sans CJK SC', 'Noto Sans SC', 'Microsoft YaHei', 'PingFang SC', sans-serif"
LATIN = "'Segoe UI', 'Helvetica Neue', Arial, 'Liberation Sans', "  # English first, so its quotes are not full-width


def font_stack(lang: str) -> str:
    """The fonts of an exported file: Latin ones first for English, then the CJK list either way."""
    return (LATIN if lang == "en" else "") + FONT_STACK
COLON = {"zh": "：", "en": ": "}
NUMBER_MIN = 0.10  # a cell at or above this share carries its number (the map's colour alone is hard to read on paper)
NUMBER_FONT = 8.0  # the cells' numbers, in the map's units (a cell is CELL = 16 wide)
UPSCALE = 8  # each cell is this many pixels square in the embedded PNG, so no viewer blurs one cell into the next
LIGHT_FROM = 0.55  # viridis is light from about here on: numbers turn black


# --- a level's fields in one language (a teacher's level may carry its text in one language only) ---------------


def in_lang(field: dict | None, lang: str) -> str:
    """A bilingual field in `lang`, else in the one language it has ('' for none)."""
    if not field:
        return ""
    return field.get(lang) or next(iter(field.values()), "")


def level_target(level: Level, lang: str) -> tuple[float, ...]:
    """The target gates in `lang`, else in the language the level gives one for."""
    targets = level.targets or {}
    return tuple(targets.get(lang) or next(iter(targets.values())))


def level_claims(level: Level, lang: str) -> tuple[Claim, ...]:
    """The narration's claims in `lang`, else in the language the level gives them in."""
    claims = level.claims or {}
    return tuple(claims.get(lang) or next(iter(claims.values()), ()))


def level_heading(level: Level, lang: str) -> tuple[str, str]:
    """(where the level sits, its name): 'Chapter 2', '2-1 Quiet Night Thought'; a teacher's level (kind custom,
    no place in the chapters and an id that is only a code) says so and gives its title alone."""
    title = in_lang(level.title, lang)
    if level.kind == "custom":
        return t("ws_custom", lang), title
    return t("chapter", lang, n=level.chapter), f"{level.id} {title}"


def header_html(level: Level, lang: str, what: str) -> str:
    """A print page's header: the game, what the page is (`what`), where the level sits; its name and source."""
    where, name = level_heading(level, lang)
    source = f'<p class="source">— {esc(in_lang(level.source, lang))}</p>' if level.source else ""
    return (
        f'<p class="kicker">{esc(t("app_title", lang))} · {esc(what)} · {esc(where)}</p>'
        f"<h1>{esc(name)}</h1>{source}"
    )


# --- the maps ------------------------------------------------------------------------------------------------------


def cell_number(v: float) -> str:
    """A share as a cell prints it: '.62', or '1' from 0.995 on (three characters fit a 16-unit cell)."""
    return "1" if v >= 0.995 else f"{v:.2f}"[1:]


def map_geometry(tokens: list[str]) -> tuple[float, float, float, float]:
    """(left, top, width, height) of a T × T map with its labels, in the units of ui/widgets/heatmap.py (12 px labels)."""
    left = max((text_width(w, FONT) for w in tokens), default=0.0) + 8
    top = 4 + max((text_width(w, FONT) for w in tokens), default=0.0) * math.sin(TILT) + FONT * 0.6
    return left, top, natural_width(tokens, tokens), top + CELL * len(tokens) + 4


def map_svg(matrix: np.ndarray, tokens: list[str], title: str, x: float = 0.0, y: float = 0.0) -> str:
    """One head's map as an <svg> (nestable at x, y): viridis cells, every token on both axes, a cell's share printed
    in it from NUMBER_MIN on, so the map reads in greyscale and on paper."""
    m = np.nan_to_num(np.asarray(matrix, dtype=np.float64)).clip(0.0, 1.0)
    left, top, width, height = map_geometry(tokens)
    n = len(tokens)
    cells = np.kron(m, np.ones((UPSCALE, UPSCALE))) if n else m
    parts = [
        f'<svg x="{x:.1f}" y="{y:.1f}" width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'role="img" aria-label="{esc(title)}">',
        f'<image x="{left:.2f}" y="{top:.2f}" width="{CELL * n:.2f}" height="{CELL * n:.2f}" preserveAspectRatio="none" '
        f'href="{png_data_uri(cells)}"/>' if n else "",
        f'<rect x="{left:.2f}" y="{top:.2f}" width="{CELL * n:.2f}" height="{CELL * n:.2f}" fill="none" stroke="#000" stroke-width="0.6"/>',
    ]
    for j, word in enumerate(tokens):
        cx = left + (j + 0.5) * CELL + FONT * 0.3
        parts.append(f'<text class="col" transform="translate({cx:.1f},{top - 4:.1f}) rotate(-60)" font-size="{FONT:g}">{esc(word)}</text>')
    for i, word in enumerate(tokens):
        parts.append(
            f'<text class="row" x="{left - 5:.1f}" y="{top + (i + 0.5) * CELL:.1f}" text-anchor="end" dominant-baseline="central" font-size="{FONT:g}">{esc(word)}</text>'
        )
    for i, j in zip(*np.nonzero(m >= NUMBER_MIN), strict=True):
        v = float(m[i, j])
        parts.append(
            f'<text class="num" x="{left + (j + 0.5) * CELL:.1f}" y="{top + (i + 0.5) * CELL:.1f}" text-anchor="middle" '
            f'dominant-baseline="central" font-size="{NUMBER_FONT:g}" fill="{"#000" if v >= LIGHT_FROM else "#fff"}">{cell_number(v)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def head_maps(reading: Reading) -> np.ndarray:
    """(h, T, T): the eight heads' real attention between the words, the sink column dropped (as the page draws them)."""
    return reading.weights[:, 1:, 1:].numpy()


RAMP_W, RAMP_H, RAMP_STEPS = 200.0, 12.0, 50


def legend_svg(lang: str, x: float = 0.0, y: float = 0.0) -> str:
    """The colour scale as an SVG group at x, y (no ids, so two on one page never clash): 0 … 1, less … more."""
    step = RAMP_W / RAMP_STEPS
    rects = []
    for k in range(RAMP_STEPS):
        r, g, b = VIRIDIS[round((k + 0.5) / RAMP_STEPS * 255)]
        rects.append(f'<rect x="{k * step:.2f}" y="0" width="{step + 0.3:.2f}" height="{RAMP_H:g}" fill="rgb({r},{g},{b})"/>')
    less, more = esc(t("less", lang)), esc(t("more", lang))
    ticks = "".join(
        f'<text x="{RAMP_W * v:.1f}" y="{RAMP_H + 14:g}" text-anchor="middle" font-size="12">{v:g}</text>' for v in (0, 0.5, 1)
    )
    return (
        f'<g class="legend" transform="translate({x:.1f},{y:.1f})">'
        f'<text x="-6" y="{RAMP_H - 1:g}" text-anchor="end" font-size="12">{less}</text>{"".join(rects)}'
        f'<rect x="0" y="0" width="{RAMP_W:g}" height="{RAMP_H:g}" fill="none" stroke="#000" stroke-width="0.6"/>'
        f'<text x="{RAMP_W + 6:g}" y="{RAMP_H - 1:g}" font-size="12">{more}</text>{ticks}</g>'
    )


LEGEND_SIZE = (RAMP_W + 90, RAMP_H + 18)  # the legend's box, its ramp starting 45 in


def legend_block(lang: str) -> str:
    """The legend as its own small <svg> (for HTML pages)."""
    w, h = LEGEND_SIZE
    return (
        f'<svg class="legend" width="{w:g}" height="{h:g}" viewBox="0 0 {w:g} {h:g}" role="img" '
        f'aria-label="{esc(t("less", lang))} → {esc(t("more", lang))}">{legend_svg(lang, 45)}</svg>'
    )


def wrap(text: str, width: float, font: float) -> list[str]:
    """Lines of at most `width` (by ui/widgets/heatmap.py's width estimate), broken after a list's separators (、 or ", ")
    so a word keeps its number, else at spaces, else anywhere (a CJK run)."""
    lines, line = [], ""
    for piece in re.split(r"(?<=、)|(?<=, )", text):
        if text_width(line + piece, font) <= width or not line:
            line += piece
        else:
            lines.append(line.rstrip())
            line = piece
        while text_width(line, font) > width and len(line) > 1:  # one piece too long for a line: cut it
            cut = len(line)
            while cut > 1 and text_width(line[:cut], font) > width:
                cut -= 1
            space = line.rfind(" ", 0, cut + 1)
            cut = space if space > 0 else cut
            lines.append(line[:cut].rstrip())
            line = line[cut:].lstrip()
    return [*lines, line] if line else lines


PAD, GAP, TITLE_SIZE, LABEL_SIZE, CAPTION_SIZE, LINE = 16.0, 16.0, 16.0, 13.0, 12.0, 16.0
COLUMNS = 4


def maps_figure_svg(reading: Reading, lang: str, title: str) -> str:
    """One standalone SVG document: a title line, the eight heads' real attention maps (sink column dropped), each
    under its numeral, name and top words with their shares (the page's captions), and the colour legend."""
    maps, tokens = head_maps(reading), reading.tokens
    _, _, mw, mh = map_geometry(tokens)
    pw = max(mw, 180.0)  # a panel: at least wide enough for its caption to wrap in a few lines
    captions = [wrap(map_caption(reading, i, lang), pw - 4, CAPTION_SIZE) for i in range(len(HEADS))]
    head_h = LABEL_SIZE + 8 + LINE * max(len(c) for c in captions)
    rows = math.ceil(len(HEADS) / COLUMNS)
    title_lines = wrap(title, COLUMNS * pw + (COLUMNS - 1) * GAP, TITLE_SIZE)
    grid_y = PAD + (TITLE_SIZE + 6) * len(title_lines) + 8
    width = 2 * PAD + COLUMNS * pw + (COLUMNS - 1) * GAP
    legend_y = grid_y + rows * (head_h + mh + GAP)
    height = legend_y + LEGEND_SIZE[1] + LINE * 2 + PAD
    note = wrap(t("ws_maps_note", lang), width - 2 * PAD, CAPTION_SIZE)
    height += LINE * max(0, len(note) - 1)
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'font-family="{esc(font_stack(lang))}" lang="{"zh-CN" if lang == "zh" else "en"}">',
        f"<title>{esc(title)}</title>",
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>',
    ]
    for k, line in enumerate(title_lines):
        parts.append(f'<text class="title" x="{PAD:g}" y="{PAD + TITLE_SIZE + k * (TITLE_SIZE + 6):g}" font-size="{TITLE_SIZE:g}" font-weight="700">{esc(line)}</text>')
    for i, head in enumerate(HEADS):
        x = PAD + (i % COLUMNS) * (pw + GAP)
        y = grid_y + (i // COLUMNS) * (head_h + mh + GAP)
        label = head_label(i, lang)
        parts.append(
            f'<g class="panel" data-head="{head}"><rect x="{x:.1f}" y="{y:.1f}" width="10" height="{LABEL_SIZE:g}" fill="{HEAD_COLORS[head]}"/>'
            f'<text class="label" x="{x + 14:.1f}" y="{y + LABEL_SIZE - 1:.1f}" font-size="{LABEL_SIZE:g}" font-weight="700">{esc(label)}</text>'
        )
        for k, line in enumerate(captions[i]):
            parts.append(f'<text class="caption" x="{x:.1f}" y="{y + LABEL_SIZE + 4 + LINE * (k + 1) - 3:.1f}" font-size="{CAPTION_SIZE:g}">{esc(line)}</text>')
        parts.append(map_svg(maps[i], tokens, label, x, y + head_h) + "</g>")
    parts.append(legend_svg(lang, PAD + 45, legend_y))
    for k, line in enumerate(note):
        parts.append(f'<text class="note" x="{PAD:g}" y="{legend_y + LEGEND_SIZE[1] + LINE * (k + 1):g}" font-size="{CAPTION_SIZE:g}">{esc(line)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


# --- the print pages' shell ------------------------------------------------------------------------------------------

PRINT_CSS = """
@page {{ size: A4; margin: 15mm; }}
* {{ box-sizing: border-box; }}
html, body {{ margin: 0; padding: 0; background: #fff; color: #000; -webkit-print-color-adjust: exact; print-color-adjust: exact; }}
body {{ font-family: {fonts}; font-size: 11pt; line-height: 1.45; }}
h1 {{ font-size: 18pt; margin: 0 0 2pt; line-height: 1.25; }}
h2 {{ font-size: 13pt; margin: 10pt 0 4pt; break-after: avoid; }}
p {{ margin: 0 0 6pt; }}
.kicker {{ font-size: 9.5pt; margin: 0 0 2pt; }}
.source {{ font-size: 11pt; margin: 0 0 6pt; }}
.fields {{ display: flex; gap: 8mm; margin: 4pt 0 8pt; font-size: 10.5pt; }}
.fields span {{ flex: 1; border-bottom: 1px solid #000; padding-bottom: 2pt; }}
.text {{ border: 1.5px solid #000; padding: 6pt 9pt; font-size: 13pt; margin: 0 0 8pt; break-inside: avoid; }}
.story {{ font-size: 10.5pt; }}
.note, .ws-note {{ font-size: 9.5pt; }}
.maps {{ display: grid; grid-template-columns: repeat(var(--cols, 2), minmax(0, 1fr)); gap: 3mm; margin: 4pt 0; }}
.tile {{ margin: 0; padding: 2pt 3pt 3pt; border: 1px solid #000; border-top: 4pt solid var(--c); break-inside: avoid; }}
.tile figcaption {{ font-weight: 700; font-size: 10.5pt; }}
.tile svg {{ display: block; width: 100%; max-width: var(--w); height: auto; }}
svg text {{ font-family: {fonts}; }}
.q {{ break-inside: avoid; margin: 0 0 7pt; }}
.q .ask {{ font-weight: 700; }}
.answer {{ border: 1px solid #000; padding: 2pt 6pt 4pt; margin-top: 3pt; }}
.answer .line {{ border-bottom: 1px solid #888; height: 19pt; }}
.answer .line.why {{ font-size: 9.5pt; display: flex; align-items: flex-end; padding-bottom: 1pt; }}
.choices {{ display: flex; flex-wrap: wrap; gap: 4pt 14pt; padding: 5pt 6pt; }}
.choices span::before {{ content: ""; display: inline-block; width: 9pt; height: 9pt; border: 1px solid #000; margin-right: 4pt; vertical-align: -1pt; }}
table {{ border-collapse: collapse; break-inside: avoid; }}
table.weights {{ width: 100%; margin-top: 3pt; }}
th, td {{ border: 1px solid #000; padding: 3pt 6pt; text-align: left; vertical-align: middle; }}
td.box {{ width: 22%; height: 20pt; }}
.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
.swatch {{ display: inline-block; width: 8pt; height: 8pt; border: 1px solid #000; margin-right: 4pt; vertical-align: 0; }}
.key {{ break-before: page; }}
.key li {{ margin: 0 0 5pt; break-inside: avoid; }}
.bar {{ display: inline-block; height: 8pt; border: 1px solid #000; vertical-align: 0; }}
.bar.goal {{ border-style: dashed; }}
.bar.mine {{ border-width: 2px; }}
""".strip()


def page_shell(title: str, lang: str, body: str, kind: str) -> str:
    """A complete standalone print-styled HTML document (A4, black on white, the CJK font list)."""
    html_lang = "zh-CN" if lang == "zh" else "en"
    return (
        f'<!doctype html>\n<html lang="{html_lang}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{PRINT_CSS.format(fonts=font_stack(lang))}</style></head>"
        f'<body class="{kind}">{body}</body></html>'
    )
