"""Teacher-made levels: one documented format (YAML or JSON), validated like a shipped level, carried by a share code.

The smallest valid level (the title may also be one string, shown in both languages)::

    {"title": {"zh": "春晓", "en": "Spring Dawn"}, "lang": "zh", "text": "春眠不觉晓，处处闻啼鸟。",
     "target": {"emotion": 0.9, "tone": 0.8, "time": 0.3}}

Heads left out of `target` weigh 0. Optional: `story` and `explanation` (a string, or {zh, en}), `genre` (poem,
paper, dialogue, mixed), `show` (silhouette, picture) and `claims` (what the explanation says heads find, in the
text's language, as shipped levels list them: `[{head: time, words: [昨天]}, {head: logic, silent: true}]`).
A pack is `{"levels": [level, …]}` (or a list of levels). Every path — a file, the sandbox, a share link, the API —
goes through `read_level` / `check_level`: the format with one message per bad field, then DESIGN.md's puzzle
conditions and the claims measured on the real dragon. A share code is the level's canonical JSON, compressed
and base64url-encoded (`T1.` + …), capped in size, so a link carries the level and the server stores nothing."""

import base64
import difflib
import functools
import hashlib
import json
import math
import re
import zlib
from dataclasses import dataclass, replace

import yaml

from dragon.config import HEADS
from dragon.engine import Reading, default_dragon
from dragon.levels import puzzle
from dragon.levels.claims import head_of, parse_claims
from dragon.levels.claims import problems as claim_problems
from dragon.levels.level import LANGS, Claim, Level
from dragon.text.analyser import MAX_TOKENS

GENRES = ("poem", "paper", "dialogue", "mixed")
SHOWS = ("silhouette", "picture")
FIELDS = ("title", "lang", "text", "target", "story", "explanation", "genre", "show", "claims")
REQUIRED = ("title", "lang", "text", "target")
MAX_TEXT_CHARS = 800  # a level's text: a paragraph (the dragon reads at most MAX_TOKENS tokens)
MAX_TITLE_CHARS = 60
MAX_NOTE_CHARS = 600  # story / explanation, per language
MAX_CLAIMS = 8
MAX_PACK = 12  # levels in one pack
MAX_SOURCE_CHARS = 40_000  # a pasted or uploaded file
MAX_CODE_CHARS = 6_000  # a share code (a link stays well under browsers' and servers' URL limits)
MAX_JSON_BYTES = 24_000  # what a share code may unpack to (no zip bombs)
CODE_PREFIX = "T1."
ID_PATTERN = re.compile(r"^t-[0-9a-f]{12}$")
HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
LATIN = re.compile(r"[A-Za-z]")


def near(word, choices) -> str:
    """' (did you mean X?)' for a close misspelling of one of `choices`, else ''."""
    found = difflib.get_close_matches(str(word).lower(), list(choices), n=1, cutoff=0.6)
    return f" (did you mean {found[0]}?)" if found else ""


class TeacherLevelError(ValueError):
    """A teacher's level (or pack, or share code) is refused; `errors` holds one message per problem."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Checked:
    """A teacher level read and checked: the level (None when its format is wrong), every problem, the figures."""

    level: Level | None
    errors: tuple[str, ...]
    quality: dict | None  # all_equal, random_median, near_median, ascent_steps (None when the format is wrong)

    @property
    def ok(self) -> bool:
        return self.level is not None and not self.errors


# --- 1. the source: a dict, or YAML / JSON text ----------------------------------------------------------------


def parse_source(source) -> object:
    """A dict or list as given; a string parsed as JSON, else YAML (TeacherLevelError when neither)."""
    if isinstance(source, dict | list):
        return source
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError:
            raise TeacherLevelError(["file: is not UTF-8 text"]) from None
    if not isinstance(source, str):
        raise TeacherLevelError([f"level: must be a mapping or YAML / JSON text, not {type(source).__name__}"])
    if not source.strip():
        raise TeacherLevelError(["level: is empty"])
    if len(source) > MAX_SOURCE_CHARS:
        raise TeacherLevelError([f"level: the file has {len(source)} characters; at most {MAX_SOURCE_CHARS}"])
    try:
        return json.loads(source)
    except ValueError:
        pass
    try:
        return yaml.safe_load(source)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise TeacherLevelError([f"level: cannot be read as YAML or JSON{at}"]) from None


# --- 2. the format: one message per bad field ------------------------------------------------------------------


def _text_field(value, path: str, cap: int, errors: list[str]) -> str | None:
    if not isinstance(value, str) or not value.strip():
        errors.append(f"{path}: must be a non-empty string")
        return None
    if len(value.strip()) > cap:
        errors.append(f"{path}: has {len(value.strip())} characters; at most {cap}")
        return None
    return value.strip()


def _bilingual(value, path: str, cap: int, errors: list[str], one_allowed: bool) -> dict[str, str] | None:
    """{zh, en} (both non-empty), or — where `one_allowed` — one string shown in both languages."""
    if one_allowed and isinstance(value, str):
        text = _text_field(value, path, cap, errors)
        return None if text is None else {lang: text for lang in LANGS}
    if not isinstance(value, dict):
        example = "{zh: 春晓, en: Spring Dawn}"
        errors.append(f"{path}: must give zh and en, e.g. {example}" + (" (or one string)" if one_allowed else ""))
        return None
    extra = sorted(set(map(str, value)) - set(LANGS))
    if extra:
        errors.append(f"{path}: unknown language {', '.join(extra)} (give zh and en)")
    out = {}
    for lang in LANGS:
        text = _text_field(value.get(lang), f"{path}.{lang}", cap, errors)
        if text is not None:
            out[lang] = text
    return out if len(out) == len(LANGS) and not extra else None


def _number(v) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None
    return float(v)


def _target(value, errors: list[str]) -> tuple[float, ...] | None:
    if not isinstance(value, dict) or not value:
        heads = ", ".join(HEADS)
        errors.append(f"target: must map head ids to weights 0–1, e.g. {{emotion: 0.9, tone: 0.7}} (heads: {heads})")
        return None
    gates, ok = dict.fromkeys(HEADS, 0.0), True
    for name, v in value.items():
        head = head_of(name)
        if head is None:
            errors.append(f"target.{str(name)[:40]}: is not a head{near(name, HEADS)} (heads: {', '.join(HEADS)})")
            ok = False
            continue
        n = _number(v)
        if n is None or not 0 <= n <= 1:
            errors.append(f"target.{head}: must be a number from 0 to 1, not {v!r}"[:160])
            ok = False
            continue
        gates[head] = round(n, 4)
    if ok and max(gates.values()) <= 0:
        errors.append("target: cannot be all zero (turn at least one head up)")
        ok = False
    return tuple(gates[h] for h in HEADS) if ok else None


def _language_of_text(text: str, lang: str, errors: list[str]) -> None:
    han, latin = len(HAN.findall(text)), len(LATIN.findall(text))
    if lang == "zh" and han == 0:
        errors.append("text: has no Chinese characters, but lang is zh (write the text in Chinese, or set lang: en)")
    if lang == "en" and (latin == 0 or han > latin):
        errors.append("text: is not English, but lang is en (write the text in English, or set lang: zh)")


def canonical(data) -> tuple[dict | None, list[str]]:
    """The level's fields checked one by one: (its canonical form, []) or (None, one message per bad field)."""
    if not isinstance(data, dict):
        kind = "a list (a pack? give it as {levels: [...]})" if isinstance(data, list) else type(data).__name__
        return None, [f"level: must be a mapping of fields ({', '.join(REQUIRED)}), not {kind}"]
    errors: list[str] = []
    meant = set()
    for key in data:
        if key not in FIELDS:
            hint = near(key, FIELDS) or f" (fields: {', '.join(FIELDS)})"
            meant.add(hint.removeprefix(" (did you mean ").removesuffix("?)"))
            errors.append(f"{str(key)[:40]}: is not a field of a level{hint}")
    for key in REQUIRED:
        if data.get(key) is None and key not in meant:  # a misspelt field is named once, above
            errors.append(f"{key}: is missing")
    out: dict = {}
    if data.get("title") is not None:
        out["title"] = _bilingual(data["title"], "title", MAX_TITLE_CHARS, errors, one_allowed=True)
    lang = data.get("lang")
    if lang is not None:
        if lang not in LANGS:
            errors.append(f"lang: must be zh or en, not {lang!r}"[:120])
        else:
            out["lang"] = lang
    if data.get("text") is not None:
        out["text"] = _text_field(data["text"], "text", MAX_TEXT_CHARS, errors)
        if out["text"] and "lang" in out:
            _language_of_text(out["text"], out["lang"], errors)
    if data.get("target") is not None:
        target = _target(data["target"], errors)
        if target is not None:
            out["target"] = {h: v for h, v in zip(HEADS, target, strict=True) if v > 0}
    for key in ("story", "explanation"):
        if data.get(key) is not None:
            out[key] = _bilingual(data[key], key, MAX_NOTE_CHARS, errors, one_allowed=True)
    for key, allowed in (("genre", GENRES), ("show", SHOWS)):
        if data.get(key) is not None:
            if data[key] not in allowed:
                errors.append(f"{key}: must be one of {', '.join(allowed)}, not {data[key]!r}"[:120])
            else:
                out[key] = data[key]
    if data.get("claims") is not None:  # read as a shipped level's are, a head also by its name, every problem named
        claims, wrong = parse_claims(data["claims"], "claims", names=True, most=MAX_CLAIMS)
        errors += [f"{path}: {message}" for path, message in wrong]
        out["claims"] = [_claim_data(c) for c in claims]
    if errors:
        return None, errors
    return out, []


def _claim_data(c: Claim) -> dict:
    out: dict = {"head": c.head}
    if c.silent:
        out["silent"] = True
    if c.words:
        out["words"] = list(c.words)
    if c.alone:
        out["alone"] = list(c.alone)
    if c.source:
        out["from"] = c.source
    return out


def _json(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def level_id(data: dict) -> str:
    """A teacher level's id: a hash of its canonical form, so the same level has the same id on every server."""
    return "t-" + hashlib.sha256(_json(data).encode("utf-8")).hexdigest()[:12]


def build(data: dict) -> Level:
    """The Level of a canonical teacher level (kind "custom"; its text read in its own language, whatever the UI's)."""
    lang = data["lang"]
    target = tuple(float(data["target"].get(h, 0.0)) for h in HEADS)
    claims = tuple(Claim(c["head"], tuple(c.get("words", ())), bool(c.get("silent")), c.get("from"),
                         tuple(c.get("alone", ()))) for c in data.get("claims", ()))
    blank = dict.fromkeys(LANGS, "")
    return Level(
        id=level_id(data), chapter=0, kind="custom", title=data["title"], text=dict.fromkeys(LANGS, data["text"]),
        story=data.get("story", blank), why=data.get("explanation", blank), targets=dict.fromkeys(LANGS, target),
        show=data.get("show", "silhouette"), claims=dict.fromkeys(LANGS, claims), text_lang=lang,
        genre=data.get("genre"),
    )


# --- 3. the puzzle and the claims, measured on the real dragon -------------------------------------------------


def quality_of(report: puzzle.PuzzleReport) -> dict:
    return {"all_equal": round(report.all_equal, 2), "random_median": round(report.random_median, 2),
            "near_median": round(report.near_median, 2), "ascent_steps": report.ascent_steps}


def puzzle_problems(report: puzzle.PuzzleReport) -> list[str]:
    """DESIGN.md's conditions, each named with its measured figure and what to change."""
    out = []
    if report.all_equal > puzzle.MAX_ALL_EQUAL:
        out.append(f"puzzle: all sliders equal already score {report.all_equal:.1f} (a puzzle needs ≤ "
                   f"{puzzle.MAX_ALL_EQUAL:g}): make the target more uneven, some heads high and some at 0")
    if report.random_median > puzzle.MAX_RANDOM_MEDIAN:
        out.append(f"puzzle: random sliders score {report.random_median:.1f} in the median of 200 (a puzzle needs ≤ "
                   f"{puzzle.MAX_RANDOM_MEDIAN:g}): turn up heads that speak loudly in this text and others down")
    if report.near_median < puzzle.MIN_NEAR_MEDIAN:
        out.append(f"puzzle: sliders within ±0.1 of the target score {report.near_median:.1f} in the median (a puzzle "
                   f"needs ≥ {puzzle.MIN_NEAR_MEDIAN:g}): near-right must earn two stars — a target of very quiet "
                   "heads only is too touchy")
    if report.ascent_steps > puzzle.ASCENT_STEPS:
        out.append(f"puzzle: the goddess's gradient ascent from 0.5 does not reach {puzzle.ASCENT_GOAL:g} in "
                   f"{puzzle.ASCENT_STEPS} steps: the target cannot be found by following the hints")
    return out


def reading_of(level: Level) -> Reading:
    return default_dragon().read(level.text[level.text_lang], level.text_lang)


def measured_problems(level: Level, reading: Reading) -> list[str]:
    """What the real dragon finds wrong: the text too long, claims not borne out, silent target heads."""
    out = []
    if reading.analysis.truncated:
        out.append(f"text: the dragon reads at most {MAX_TOKENS} tokens and this text has more: shorten it")
    prefix = f"level {level.id} ({level.text_lang}): "
    for p in claim_problems(level, level.text_lang, reading):
        p = p.removeprefix(prefix)
        out.append(("target: " if " has target " in p else "claims: ") + p)
    return out


@functools.lru_cache(maxsize=256)
def _check_canonical(data_json: str) -> Checked:
    data = json.loads(data_json)
    level = build(data)
    reading = reading_of(level)
    errors = measured_problems(level, reading)
    report = puzzle.check(reading, list(level.target_for(level.text_lang)))
    return Checked(level, tuple(errors + puzzle_problems(report)), quality_of(report))


def check_canonical(canon: dict) -> Checked:
    """A level whose fields are right (canonical's form): its puzzle and claims on the real dragon (kept: the same
    level is checked once)."""
    return _check_canonical(_json(canon))


def check_data(data) -> Checked:
    """One level's data (a dict): its format, then (if that is right) its puzzle and claims on the real dragon."""
    canon, errors = canonical(data)
    if canon is None:
        return Checked(None, tuple(errors), None)
    return check_canonical(canon)


def read_source(source) -> list[tuple[str, object]]:
    """The levels a source holds: [(where, data)] — one level, or a pack's levels with their places."""
    data = parse_source(source)
    if isinstance(data, dict) and "levels" in data:
        if set(data) - {"levels", "title"}:
            extra = ", ".join(sorted(map(str, set(data) - {"levels", "title"})))
            raise TeacherLevelError([f"pack: has fields besides levels (and title): {extra}"])
        data = data["levels"]
        if not isinstance(data, list):
            raise TeacherLevelError(["pack: levels must be a list of levels"])
    if isinstance(data, list):
        if not data:
            raise TeacherLevelError(["pack: has no levels"])
        if len(data) > MAX_PACK:
            raise TeacherLevelError([f"pack: holds {len(data)} levels; at most {MAX_PACK}"])
        return [(f"level {i + 1}", d) for i, d in enumerate(data)]
    return [("", data)]


def check_source(source) -> list[tuple[str, Checked]]:
    """Every level of a source checked: [(where, Checked)] ('' for a single level, 'level 2' in a pack, counted from
    1 as a teacher counts)."""
    return [(where, check_data(d)) for where, d in read_source(source)]


def read_level(source) -> Level:
    """A single good level from a source, or TeacherLevelError with every problem."""
    checked = check_source(source)
    if len(checked) != 1:
        raise TeacherLevelError([f"level: this is a pack of {len(checked)} levels, not one level"])
    result = checked[0][1]
    if not result.ok:
        raise TeacherLevelError(list(result.errors))
    return result.level


def read_pack(source) -> list[Level]:
    """Every level of a source (one level or a pack), all good, or TeacherLevelError naming each problem's place."""
    checked = check_source(source)
    errors = [f"{where}: {e}" if where else e for where, c in checked for e in c.errors]
    if errors:
        raise TeacherLevelError(errors)
    ids = [c.level.id for _, c in checked]
    if len(set(ids)) != len(ids):
        raise TeacherLevelError(["pack: holds the same level twice"])
    return [replace(c.level, after=nxt) for (_, c), nxt in zip(checked, [*ids[1:], None], strict=True)]


# --- 4. share codes: the level itself in a link ------------------------------------------------------------------


def data_of(level: Level) -> dict:
    """The canonical data of a teacher level (what its share code carries)."""
    if level.kind != "custom" or level.text_lang is None:
        raise ValueError(f"level {level.id} is not a teacher level")
    lang = level.text_lang
    data: dict = {"title": dict(level.title), "lang": lang, "text": level.text[lang],
                  "target": {h: v for h, v in zip(HEADS, level.target_for(lang), strict=True) if v > 0}}
    for key, value in (("story", level.story), ("explanation", level.why)):
        if any(value.values()):
            data[key] = dict(value)
    if level.genre:
        data["genre"] = level.genre
    if level.show != "silhouette":
        data["show"] = level.show
    if level.claims_for(lang):
        data["claims"] = [_claim_data(c) for c in level.claims_for(lang)]
    return data


def share_code(levels: list[Level]) -> str:
    """A share code for one level or a pack: compressed canonical JSON, base64url, at most MAX_CODE_CHARS."""
    items = [data_of(replace(lv, after=None)) for lv in levels]
    body = items[0] if len(items) == 1 else {"levels": items}
    raw = zlib.compress(_json(body).encode("utf-8"), 9)
    code = CODE_PREFIX + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    if len(code) > MAX_CODE_CHARS:
        raise TeacherLevelError([f"share: the link would need {len(code)} characters; at most {MAX_CODE_CHARS} "
                                 "(shorten the texts or split the pack)"])
    return code


def unpack_code(code) -> str:
    """The JSON a share code carries (TeacherLevelError when it is not one, damaged or too big)."""
    if not isinstance(code, str) or not code.strip():
        raise TeacherLevelError(["share link: has no level in it"])
    code = code.strip()
    if not code.startswith(CODE_PREFIX):
        raise TeacherLevelError(["share link: is not a level's link (it should start with T1.)"])
    if len(code) > MAX_CODE_CHARS:
        raise TeacherLevelError([f"share link: is {len(code)} characters long; at most {MAX_CODE_CHARS}"])
    body = code[len(CODE_PREFIX):]
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
        unzip = zlib.decompressobj()
        text = unzip.decompress(raw, MAX_JSON_BYTES)
        if unzip.unconsumed_tail:
            raise TeacherLevelError([f"share link: unpacks to more than {MAX_JSON_BYTES} bytes, more than a level "
                                     "pack may hold"])
        if not unzip.eof:
            raise TeacherLevelError(["share link: is cut short (copy the whole link)"])
        return text.decode("utf-8")
    except (ValueError, zlib.error, UnicodeDecodeError) as err:
        if isinstance(err, TeacherLevelError):
            raise
        raise TeacherLevelError(["share link: is damaged (copy the whole link)"]) from None


@functools.lru_cache(maxsize=256)
def levels_from_code(code: str) -> tuple[Level, ...]:
    """The levels a share code carries, checked as any teacher level is (cached: the same code, the same levels)."""
    try:
        data = json.loads(unpack_code(code))
    except ValueError as err:
        if isinstance(err, TeacherLevelError):
            raise
        raise TeacherLevelError(["share link: is damaged (copy the whole link)"]) from None
    return tuple(read_pack(data))


def is_teacher_id(level_id) -> bool:
    return isinstance(level_id, str) and bool(ID_PATTERN.match(level_id))
