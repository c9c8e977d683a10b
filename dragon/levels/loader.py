"""Levels as data: assets/levels/*.yaml loaded and validated (errors name the file and the field)."""

import functools
import os
import re
import threading
from pathlib import Path

import yaml

from dragon.checks import brief
from dragon.config import HEADS
from dragon.engine import default_dragon
from dragon.lessons import facts as facts_table
from dragon.lessons.minilm.wordpiece import normalise, split_words
from dragon.lessons.positions import read_tokens, swap_permutation
from dragon.lessons.race import MAX_LENGTH, MAX_LENGTHS
from dragon.levels.claims import check_level, parse_claims
from dragon.levels.level import (
    KINDS,
    LANGS,
    PANEL,
    PANEL_WEIGHT,
    SLIDER_KINDS,
    Bilingual,
    Chapter,
    Claim,
    Finding,
    Level,
    Round,
)
from dragon.text.lexicon import ASSETS

LEVEL_DIR = Path(os.environ.get("DRAGON_LEVELS", ASSETS / "levels"))  # a teacher's folder can replace it
PRONOUNS = ("she", "he", "it", "they")  # crystal levels: the words a player's own sentence may ask about
MAX_ROUNDS = 4  # formula levels: questions per language
SHOWS = ("silhouette", "picture")  # what of the target is drawn: its head profile, or only its attention picture
LEVEL_ID = re.compile(r"^[0-9]{1,2}-[0-9]{1,2}$")


class LevelError(ValueError):
    """A level file is malformed; the message names the file and the field."""


class _Reader:
    """Pulls typed fields out of parsed YAML, raising LevelError with a path like levels[2].target.time."""

    def __init__(self, file: str, measured: bool = True):
        self.file = file
        self.measured = measured  # the checks that read a text with the real analyser too (slower: its dictionaries)

    def fail(self, where: str, message: str) -> LevelError:
        return LevelError(f"{self.file}: {where}: {message}")

    def field(self, data: dict, key: str, where: str, required: bool = True):
        if not isinstance(data, dict):
            raise self.fail(where, "must be a mapping")
        if key not in data or data[key] is None:
            if required:
                raise self.fail(f"{where}.{key}" if where else key, "is missing")
            return None
        return data[key]

    def bilingual(self, data: dict, key: str, where: str, required: bool = True) -> Bilingual | None:
        value = self.field(data, key, where, required)
        if value is None:
            return None
        path = f"{where}.{key}" if where else key
        if not isinstance(value, dict):
            raise self.fail(path, "must give both zh and en")
        out = {}
        for lang in LANGS:
            text = value.get(lang)
            if not isinstance(text, str) or not text.strip():
                raise self.fail(f"{path}.{lang}", "must be a non-empty string")
            out[lang] = text.strip()
        return out

    def targets(self, data: dict, where: str) -> dict[str, tuple[float, ...]]:
        """`target: {grammar: …}` for both languages, or `target: {zh: {…}, en: {…}}` one per language."""
        value = self.field(data, "target", where)
        if isinstance(value, dict) and set(value) == set(LANGS):
            return {lang: self.gates(value[lang], f"{where}.target.{lang}") for lang in LANGS}
        gates = self.gates(value, f"{where}.target")
        return {lang: gates for lang in LANGS}

    def gates(self, value, where: str) -> tuple[float, ...]:
        if not isinstance(value, dict) or set(value) != set(HEADS):
            raise self.fail(where, f"must give exactly the eight heads ({', '.join(HEADS)}) or zh and en")
        gates = []
        for head in HEADS:
            v = value[head]
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
                raise self.fail(f"{where}.{head}", "must be a number between 0 and 1")
            gates.append(float(v))
        if max(gates) <= 0:
            raise self.fail(where, "cannot be all zero")
        return tuple(gates)

    def claims(self, data: dict, where: str, required: bool) -> dict[str, tuple[Claim, ...]] | None:
        """`claims: {zh: [{head: time, words: [昨天]}, {head: logic, silent: true}], en: […]}`, each list read by
        claims.parse_claims (as a teacher's level's are), raising on its first problem."""
        value = self.field(data, "claims", where, required)
        if value is None:
            return None
        if not isinstance(value, dict) or set(value) != set(LANGS):
            raise self.fail(f"{where}.claims", "must give a list for zh and one for en")
        out = {}
        for lang in LANGS:
            claims, wrong = parse_claims(value[lang], f"{where}.claims.{lang}")
            if wrong:
                raise self.fail(*wrong[0])
            out[lang] = claims
        return out

    def rounds(self, data: dict, where: str) -> dict[str, tuple[Round, ...]]:
        """`rounds: {zh: [{word: 悲伤, head: emotion}, …], en: […]}`: 1…MAX_ROUNDS questions per language."""
        value = self.field(data, "rounds", where)
        if not isinstance(value, dict) or set(value) != set(LANGS):
            raise self.fail(f"{where}.rounds", "must give a list for zh and one for en")
        out = {}
        for lang in LANGS:
            items, path = value[lang], f"{where}.rounds.{lang}"
            if not isinstance(items, list) or not 1 <= len(items) <= MAX_ROUNDS:
                raise self.fail(path, f"must be a list of 1 to {MAX_ROUNDS} {{word, head}} questions")
            rounds = []
            for i, item in enumerate(items):
                if not isinstance(item, dict) or set(item) != {"word", "head"}:
                    raise self.fail(f"{path}[{i}]", "must be a mapping with exactly word and head")
                if item["head"] not in HEADS:
                    heads = ", ".join(HEADS)
                    raise self.fail(f"{path}[{i}].head", f"must be a head id ({heads}), not {item['head']!r}")
                if not isinstance(item["word"], str) or not item["word"].strip():
                    raise self.fail(f"{path}[{i}].word", "must be a word of the text")
                rounds.append(Round(item["word"].strip(), item["head"]))
            out[lang] = tuple(rounds)
        return out

    def lengths(self, data: dict, where: str) -> tuple[tuple[int, ...], int]:
        """`lengths: [16, 64, 256, 1024]` (2…MAX_LENGTHS rising whole numbers ≤ MAX_LENGTH), `guess_at` among them."""
        value, path = self.field(data, "lengths", where), f"{where}.lengths"
        if not isinstance(value, list) or not 2 <= len(value) <= MAX_LENGTHS:
            raise self.fail(path, f"must list 2 to {MAX_LENGTHS} sequence lengths")
        for n in value:
            if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_LENGTH:
                raise self.fail(path, f"must be whole numbers from 1 to {MAX_LENGTH}, not {n!r}")
        if value != sorted(set(value)):
            raise self.fail(path, "must rise, each length once")
        guess_at = self.field(data, "guess_at", where)
        if guess_at not in value or isinstance(guess_at, bool):
            raise self.fail(f"{where}.guess_at", f"must be one of the lengths ({value}), not {guess_at!r}")
        return tuple(value), guess_at

    def quiz(self, data: dict, where: str) -> tuple[str, ...]:
        """`quiz: [gpt3-total-heads, …]`: question ids of the facts table, each once."""
        value, path = self.field(data, "quiz", where), f"{where}.quiz"
        known = [q["id"] for q in facts_table.load_facts()["quiz"]]
        if not isinstance(value, list) or not value or len(set(map(str, value))) != len(value):
            raise self.fail(path, "must list facts-quiz question ids, each once")
        for q in value:
            if q not in known:
                raise self.fail(path, f"{q!r} is not a question of facts.yaml ({', '.join(known)})")
        return tuple(value)

    def ask(self, data: dict, where: str, text: str) -> tuple[str, str]:
        """`ask: {word: they, target: students}`: a pronoun and another word, both words of the English text."""
        value, path = self.field(data, "ask", where), f"{where}.ask"
        if not isinstance(value, dict) or set(value) != {"word", "target"}:
            raise self.fail(path, "must be a mapping with exactly word and target")
        words = [normalise(w) for w in split_words(text)]
        for key in ("word", "target"):
            w = value[key]
            if not isinstance(w, str) or normalise(w.strip()) not in words:
                raise self.fail(f"{path}.{key}", f"must be a word of the English text ({' / '.join(words)}), not {w!r}")
        if normalise(value["word"]) not in PRONOUNS:
            raise self.fail(f"{path}.word", f"must be one of {', '.join(PRONOUNS)}, not {value['word']!r}")
        if normalise(value["word"]) == normalise(value["target"]):
            raise self.fail(f"{path}.target", "must be another word than the word itself")
        return value["word"].strip(), value["target"].strip()

    def swappable(self, text: Bilingual, where: str) -> None:
        """A positions level's text in each language must have two different nouns or pronouns to swap."""
        for lang in LANGS:
            try:
                swap_permutation(read_tokens(text[lang], lang)[0].tokens)
            except ValueError as err:
                raise self.fail(f"{where}.text.{lang}", str(err)) from None

    def panel(self, level: Level, where: str) -> None:
        """A genre level that leaves the lesson's panel in a language must say why; one that keeps it must not."""
        if level.kind not in PANEL:
            if level.departs is not None:
                raise self.fail(f"{where}.departs", f"only a {', '.join(PANEL)} level can depart from the panel")
            return
        kept = [level.keeps_panel(lang) for lang in LANGS]
        heads = " and ".join(PANEL[level.kind])
        if not all(kept) and level.departs is None:
            lang = LANGS[kept.index(False)]
            raise self.fail(f"{where}.departs", f"the {lang} target weighs {heads} under {PANEL_WEIGHT}: say why")
        if all(kept) and level.departs is not None:
            raise self.fail(f"{where}.departs", f"the target keeps the panel ({heads} ≥ {PANEL_WEIGHT}): no departure")

    def level(self, data: dict, where: str, chapter: int) -> Level:
        level_id = self.field(data, "id", where)
        if not isinstance(level_id, str) or not LEVEL_ID.match(level_id):
            raise self.fail(f"{where}.id", f"must look like '2-1', not {level_id!r}")
        where = f"{where} ({level_id})"
        kind = self.field(data, "kind", where)
        if kind not in KINDS:
            raise self.fail(f"{where}.kind", f"must be one of {', '.join(KINDS)}, not {kind!r}")
        common = {
            "id": level_id,
            "chapter": chapter,
            "kind": kind,
            "title": self.bilingual(data, "title", where),
            "text": self.bilingual(data, "text", where),
            "story": self.bilingual(data, "story", where),
            "why": self.bilingual(data, "why", where),
            "source": self.bilingual(data, "source", where, required=False),
            "claims": self.claims(data, where, required=kind in SLIDER_KINDS),
        }
        if kind in SLIDER_KINDS:
            show = data.get("show", "silhouette")
            if show not in SHOWS:
                raise self.fail(f"{where}.show", f"must be one of {', '.join(SHOWS)}, not {show!r}")
            level = Level(**common, targets=self.targets(data, where), show=show,
                          departs=self.bilingual(data, "departs", where, required=False))
            self.panel(level, where)
            return level
        if kind == "compare":
            return Level(**common, focus=self.bilingual(data, "focus", where))
        if kind == "formula":
            return Level(**common, rounds=self.rounds(data, where))
        if kind == "race":
            lengths, guess_at = self.lengths(data, where)
            return Level(**common, lengths=lengths, guess_at=guess_at)
        if kind == "heads":
            return Level(**common, quiz=self.quiz(data, where))
        if kind == "crystal":
            return Level(**common, ask=self.ask(data, where, common["text"]["en"]))
        if kind == "positions" and self.measured:
            self.swappable(common["text"], where)
        if kind in ("fusion", "scroll", "tower", "grow", "prune", "stability", "router", "positions", "badge"):
            return Level(**common)
        findings = self.field(data, "findings", where)
        if not isinstance(findings, list) or len(findings) < 2:
            raise self.fail(f"{where}.findings", "must list at least two findings")
        out = []
        for i, f in enumerate(findings):
            fw = f"{where}.findings[{i}]"
            expect = f.get("expect") if isinstance(f, dict) else None
            if expect is not None and expect not in HEADS:
                raise self.fail(f"{fw}.expect", f"must be a head id ({', '.join(HEADS)})")
            out.append(Finding(self.bilingual(f, "word", fw), self.bilingual(f, "says", fw), expect))
        return Level(**common, findings=tuple(out))

    def chapter(self, data) -> Chapter:
        number = self.field(data, "chapter", "")
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise self.fail("chapter", "must be a positive whole number")
        levels = self.field(data, "levels", "")
        if not isinstance(levels, list) or not levels:
            raise self.fail("levels", "must be a non-empty list")
        parsed = tuple(self.level(lv, f"levels[{i}]", number) for i, lv in enumerate(levels))
        return Chapter(number, self.bilingual(data, "title", ""), parsed)


def load_chapter(path: Path, measured: bool = True) -> Chapter:
    """One level file read and validated; `measured`: its narration also held to the real attention (slower: the
    dragon reads every text)."""
    reader = _Reader(path.name, measured)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise reader.fail("file", f"cannot be read as YAML ({type(err).__name__})") from err
    chapter = reader.chapter(data)
    for level in chapter.levels if measured else ():  # the narration must be true of the real attention, or no load
        wrong = check_level(level) + _missing_words(level)
        if wrong:
            raise LevelError(f"{path.name}: {wrong[0]}" + (f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""))
    return chapter


def _missing_words(level: Level) -> list[str]:
    """A formula level's question words that are not tokens of its text (the engine's own cut decides)."""
    if level.rounds is None:
        return []
    wrong = []
    for lang in LANGS:
        tokens = default_dragon().read(level.text[lang], lang).tokens
        for i, r in enumerate(level.rounds[lang]):
            if r.word not in tokens:
                wrong.append(
                    f"levels ({level.id}).rounds.{lang}[{i}].word: {r.word!r} is not a token of the text "
                    f"({' / '.join(tokens)})"
                )
    return wrong


def read_levels(directory: Path = LEVEL_DIR, measured: bool = False) -> tuple[Chapter, ...]:
    """All chapters, in order, each file's format checked (`measured`: its claims too); raises LevelError naming the
    file and field of the first problem."""
    chapters = sorted((load_chapter(p, measured) for p in sorted(directory.glob("*.yaml"))), key=lambda c: c.number)
    if not chapters:
        raise LevelError(f"{directory}: no level files (*.yaml)")
    seen: dict[str, str] = {}
    for c in chapters:
        for lv in c.levels:
            if lv.id in seen:
                raise LevelError(f"level id {lv.id} appears twice (chapter {seen[lv.id]} and {c.number})")
            seen[lv.id] = str(c.number)
    return tuple(chapters)


_LOADING = threading.RLock()  # the app measures the levels after serving, while a first player may ask for them


@functools.cache
def _measured_levels(directory: Path) -> tuple[Chapter, ...]:
    return read_levels(directory, measured=True)


def load_levels(directory: Path = LEVEL_DIR) -> tuple[Chapter, ...]:
    """All chapters, in order, their format checked and their narration held to the real attention (once per
    process); raises LevelError naming the file and field of the first problem."""
    with _LOADING:
        return _measured_levels(directory)


def all_levels(directory: Path = LEVEL_DIR) -> dict[str, Level]:
    return {lv.id: lv for c in load_levels(directory) for lv in c.levels}


def get_level(level_id: str) -> Level:
    levels = all_levels()
    if not isinstance(level_id, str) or level_id not in levels:
        raise ValueError(f"unknown level {brief(level_id)}; levels are {', '.join(levels)}")
    return levels[level_id]
