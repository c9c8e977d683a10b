"""Input checks shared by the API: whole numbers in a range (no bool, no 10^400 turned into float) and a brief echo."""

import math

from dragon.config import LANGS

ECHO_CHARS = 40  # a refused value is echoed at most this long


def brief(value: object, limit: int = ECHO_CHARS) -> str:
    """A refused value as a message may quote it: its repr, cut to `limit` characters (a long text or a 400-digit
    number is never echoed whole); a lone surrogate is shown as its escape."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**limit:
        return f"a number of {len(str(abs(value))) if abs(value) < 10**4000 else 'over 4000'} digits"
    if isinstance(value, str | bytes | list | tuple | dict) and len(value) > 4 * limit:
        value = value[: 4 * limit] if not isinstance(value, dict) else dict(list(value.items())[:limit])
    text = repr(value).encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_lang(lang: object) -> str:
    """`lang` if it is one of the game's languages ("zh", "en"), else a ValueError that says which it may be."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, not {brief(lang)}")
    return lang


def whole(value: object, name: str, low: int, high: int) -> int:
    """`value` as an int in low…high (an int or a float with no fraction; never a bool), or a ValueError saying why."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a whole number in {low}…{high}, not {brief(value)}")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ValueError(f"{name} must be a whole number in {low}…{high}, not {brief(value)}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}…{high}, not {brief(int(value))}")
    return int(value)


def mended(value: object) -> object:
    """`value` with every lone surrogate in its texts (half an emoji cut at a UTF-16 boundary, or sent on purpose)
    replaced by U+FFFD, in nested lists and dicts too: no text then fails to encode on its way back to the page."""
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace") if _lone(value) else value
    if isinstance(value, list | tuple):
        return type(value)(mended(v) for v in value)
    if isinstance(value, dict):
        return {mended(k): mended(v) for k, v in value.items()}
    return value


def _lone(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
