"""Text for our HTML and SVG: the one escape (markup, and the template syntax Gradio's HTML component evaluates) and
the one estimate of how wide a label is drawn."""

import html
import unicodedata

# Gradio's HTML component runs text through Handlebars and a JS template literal (`${…}` is evaluated): besides the
# usual HTML escapes, `$`, backticks, braces and backslashes in any text must not reach it raw.
_TEMPLATE_CHARS = str.maketrans({"$": "&#36;", "`": "&#96;", "{": "&#123;", "}": "&#125;", "\\": "&#92;"})


def esc(text: object) -> str:
    """Escape text for our HTML: markup, and the template syntax Gradio's HTML component would evaluate."""
    return html.escape(str(text)).translate(_TEMPLATE_CHARS)


def text_width(text: str, font: float) -> float:
    """A generous estimate of a label's width at `font` px: wide characters (CJK, ①) are square, others 0.62 em."""
    return sum(font * (1.0 if unicodedata.east_asian_width(ch) in "WFA" else 0.62) for ch in text)
