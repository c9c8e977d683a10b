"""Word lists: curated ones from assets/lexicons/ plus VADER's English sentiment lexicon, loaded and validated once."""

import functools
import importlib.resources
import re
from dataclasses import dataclass
from pathlib import Path

ASSETS = Path(__file__).resolve().parents[2] / "assets"
LEXICON_DIR = ASSETS / "lexicons"
USER_DICT = ASSETS / "dictionary" / "zh_user_dict.txt"
CLASSICAL_DICT = ASSETS / "dictionary" / "zh_classical_dict.txt"  # read only inside lines of verse

FIELDS: tuple[str, ...] = (
    "nature", "weather", "family", "school", "science", "medicine",
    "food", "animal", "home", "travel", "work", "arts",
)
CONNECTIVE_ROLES: tuple[str, ...] = (
    "cause", "effect", "concession", "contrast", "condition", "consequence", "addition", "sequence",
)
TONE_KINDS: tuple[str, ...] = ("question", "exclaim", "soft", "pause")
EN_POS: tuple[str, ...] = ("verb", "adj", "adv", "det", "prep", "conj", "aux", "num", "interj", "noun")

# file name -> allowed values of each column after the word (None: any text)
SCHEMAS: dict[str, tuple[tuple[str, ...] | None, ...]] = {
    "emotion.tsv": (("+1", "-1", "0"),),  # 0: not an emotion word, whatever VADER says
    "connectives.tsv": (CONNECTIVE_ROLES,),
    "time.tsv": (("time", "aspect"),),
    "space.tsv": (("place", "direction"),),
    "tone.tsv": (TONE_KINDS,),
    "pronouns.tsv": (("sg", "pl"), ("1", "2", "3"), ("person", "thing", "any")),
    "person_nouns.tsv": (("sg", "pl"),),
    "fields.tsv": (FIELDS,),
    "en_pos.tsv": (EN_POS,),
    "emotion_chars.tsv": (("+1", "-1"), ("any", "verse"), None),  # character, polarity, where, the source line
}


class LexiconError(ValueError):
    """A lexicon file is missing or malformed; the message names the file and line."""


@dataclass(frozen=True)
class Lexicon:
    emotion: dict[str, int]  # word -> polarity +1 / -1
    connectives: dict[str, str]  # word -> role
    time: dict[str, str]  # word -> "time" | "aspect"
    space: dict[str, str]  # word -> "place" | "direction"
    tone: dict[str, str]  # word -> tone kind
    pronouns: dict[str, tuple[str, int]]  # word -> (number, person)
    referents: dict[str, str]  # pronoun -> what it can stand for: "person", "thing" or "any"
    person_nouns: dict[str, str]  # word -> number
    fields: dict[str, str]  # word -> semantic field
    en_pos: dict[str, str]  # English word -> part of speech
    not_emotion: frozenset[str]  # words emotion.tsv marks 0: no feeling here, whatever VADER or their characters say
    emotion_chars: dict[str, tuple[int, bool]]  # Chinese character -> (polarity, whether it counts outside verse)


def read_table(path: Path, allowed: tuple[tuple[str, ...] | None, ...]) -> dict[str, tuple[str, ...]]:
    """Read a TSV of `word<TAB>value…` lines; '#' lines are comments. Raises LexiconError on bad rows."""
    if not path.is_file():
        raise LexiconError(f"{path.name}: file not found in {path.parent}")
    table: dict[str, tuple[str, ...]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 1 + len(allowed):
            raise LexiconError(f"{path.name} line {n}: expected {1 + len(allowed)} tab-separated columns")
        word, values = cols[0].strip().lower(), tuple(c.strip() for c in cols[1:])
        if not word:
            raise LexiconError(f"{path.name} line {n}: empty word")
        for value, ok in zip(values, allowed, strict=True):
            if ok is not None and value not in ok:
                raise LexiconError(f"{path.name} line {n}: {value!r} is not one of {', '.join(ok)}")
        table.setdefault(word, values)  # first entry wins
    return table


# VADER (Hutto & Gilbert 2014, MIT licence): English words rated -4…+4 by ten people each.
# Kept: plain words of 3+ letters rated at least this strongly; emotion.tsv overrides (0 drops a word).
VADER_MIN = 1.5
VADER_WORD = re.compile(r"[a-z]{3,}")


def vader_polarities(min_valence: float = VADER_MIN) -> dict[str, int]:
    """word -> ±1 from the vader_lexicon.txt inside the installed vaderSentiment package (no network)."""
    try:
        text = (importlib.resources.files("vaderSentiment") / "vader_lexicon.txt").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as err:
        raise LexiconError("vader_lexicon.txt: install the pinned vaderSentiment package (requirements.txt)") from err
    out = {}
    for line in text.splitlines():
        word, valence = line.split("\t")[:2]
        if VADER_WORD.fullmatch(word) and abs(float(valence)) >= min_valence:
            out[word] = 1 if float(valence) > 0 else -1
    return out


@functools.cache
def load_lexicon(directory: Path = LEXICON_DIR) -> Lexicon:
    t = {name: read_table(directory / name, schema) for name, schema in SCHEMAS.items()}
    emotion = vader_polarities() | {w: int(v[0]) for w, v in t["emotion.tsv"].items()}  # curated words win
    return Lexicon(
        emotion={w: p for w, p in emotion.items() if p},
        connectives={w: v[0] for w, v in t["connectives.tsv"].items()},
        time={w: v[0] for w, v in t["time.tsv"].items()},
        space={w: v[0] for w, v in t["space.tsv"].items()},
        tone={w: v[0] for w, v in t["tone.tsv"].items()},
        pronouns={w: (v[0], int(v[1])) for w, v in t["pronouns.tsv"].items()},
        referents={w: v[2] for w, v in t["pronouns.tsv"].items()},
        person_nouns={w: v[0] for w, v in t["person_nouns.tsv"].items()},
        fields={w: v[0] for w, v in t["fields.tsv"].items()},
        en_pos={w: v[0] for w, v in t["en_pos.tsv"].items()},
        not_emotion=frozenset(w for w, v in t["emotion.tsv"].items() if v[0] == "0"),
        emotion_chars={c: (int(v[0]), v[1] == "any") for c, v in t["emotion_chars.tsv"].items()},
    )


@functools.cache
def classical_dictionary(path: Path = CLASSICAL_DICT) -> dict[str, tuple[int, str]]:
    """word -> (frequency, jieba tag) from a jieba-format dictionary (`word freq tag` lines)."""
    if not path.is_file():
        raise LexiconError(f"{path.name}: file not found in {path.parent}")
    words: dict[str, tuple[int, str]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split()
        if len(cols) != 3 or not cols[1].isdigit():
            raise LexiconError(f"{path.name} line {n}: expected `word frequency tag`")
        words.setdefault(cols[0], (int(cols[1]), cols[2]))
    return words
