"""A live class's pure value rules: secrets' hashes, class codes, nicknames, settings, a request's values checked."""

import base64
import functools
import hashlib
import hmac
import json
import re
import secrets
import unicodedata
from collections.abc import Mapping, Sequence
from importlib import resources

from dragon.classroom.records import (
    CODE_ALPHABET,
    CODE_LENGTH,
    DEFAULT_SETTINGS,
    JOINERS,
    MAX_ID,
    MAX_MARKS,
    MAX_MEMBERS,
    MIN_SIZE,
    NICKNAME_MAX,
    ClassroomError,
)
from dragon.config import HEADS


def digest(secret: str) -> str:
    """sha256 hex of a secret (all secrets are 256 random bits, so a plain hash is enough)."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def new_code() -> str:
    """A random class code: CODE_LENGTH letters of CODE_ALPHABET."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(code: str) -> str:
    """A typed code as stored (trimmed, upper case), or '' when it cannot be one."""
    code = str(code).strip().upper()
    return code if len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET) else ""


def hidden_character(char: str) -> bool:
    """Whether a character is invisible or controls layout: controls, direction marks, tags, surrogates, private use."""
    return char not in JOINERS and unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")


# letters that show nothing: the Hangul fillers (U+3164 and its NFKC form U+1160, …), Khmer's inherent vowels
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u17b4\u17b5")
CLASS_ROW = re.compile(r"[(\[{（【［].*(the class|全班).*[)\]}）】］]")  # the CSV's "(the class)" row, or like it


def visible_letter(char: str) -> bool:
    """A letter, a digit or a CJK character that shows as one (a Hangul filler is a 'letter' showing nothing)."""
    return unicodedata.category(char)[0] in "LN" and char not in BLANK_LETTERS


def most_marks(name: str) -> int:
    """The most combining marks any one character of `name` carries."""
    most = run = 0
    for char in name:
        run = run + 1 if unicodedata.category(char)[0] == "M" else 0
        most = max(most, run)
    return most


def clean_nickname(nickname: str) -> str:
    """A nickname as stored: spaces collapsed and trimmed, NFKC; ClassroomError when empty, too long, hiding any,
    showing no letter, stacking marks or posing as the CSV's class row."""
    name = unicodedata.normalize("NFKC", " ".join(str(nickname).split()))
    name = " ".join(name.split())  # NFKC may make spaces (U+3000 …): collapse again
    if not name:
        raise ClassroomError("nickname.empty")
    if any(hidden_character(c) for c in name):
        raise ClassroomError("nickname.hidden")
    if len(name) > NICKNAME_MAX:
        raise ClassroomError("nickname.too_long", limit=NICKNAME_MAX, length=len(name))
    if not any(visible_letter(c) for c in name):
        raise ClassroomError("nickname.no_letter")
    if most_marks(name) > MAX_MARKS:
        raise ClassroomError("nickname.marks", limit=MAX_MARKS)
    if name[0] in "(（" or CLASS_ROW.search(name.casefold()):
        raise ClassroomError("nickname.class_row")
    return name


@functools.lru_cache(maxsize=1)
def prototypes() -> dict[str, str]:
    """Each confusable character's prototype (Unicode TR39's confusables.txt, as the confusable_homoglyphs package
    ships it: every source and its prototype listed both ways). A character and its prototypes form one class in
    that data; the class is named by its smallest member, a multi-character prototype (m → rn) by itself."""
    data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    parent: dict[str, str] = {}

    def root(char: str) -> str:
        while parent.get(char, char) != char:
            parent[char] = parent.get(parent[char], parent[char])
            char = parent[char]
        return char

    expand: dict[str, str] = {}
    for char, alikes in data.items():
        for alike in (entry["c"] for entry in alikes):
            if len(char) == 1 and len(alike) == 1:
                a, b = root(char), root(alike)
                parent[max(a, b)] = min(a, b)
            elif len(char) == 1 and len(alikes) == 1:
                expand[char] = alike  # a character whose only prototype is a sequence
    mapped = {char: root(char) for char in list(parent)}
    mapped.update({char: "".join(mapped.get(c, c) for c in seq) for char, seq in expand.items() if char not in parent})
    return {char: proto for char, proto in mapped.items() if proto != char}


def skeleton(name: str) -> str:
    """A nickname's TR39 skeleton, case folded: two names with one look alike on screen (Cyrillic "Тom", "Tom")."""
    table = prototypes()
    mapped = "".join(table.get(c, c) for c in unicodedata.normalize("NFD", name)).casefold()
    return "".join(table.get(c, c) for c in unicodedata.normalize("NFD", mapped))  # casefolding may make more


def nickname_key(name: str) -> str:
    """What two nicknames must differ in: NFKC, casefolded (Tom, tom and ＴＯＭ are one name)."""
    return unicodedata.normalize("NFKC", name).casefold()


def class_settings(settings: Mapping[str, bool | int] | None) -> dict[str, bool | int]:
    """DEFAULT_SETTINGS updated by `settings`: known keys, booleans, and `size` a whole number MIN_SIZE…MAX_MEMBERS."""
    chosen = dict(DEFAULT_SETTINGS)
    for key, value in (settings or {}).items():
        if key == "size":
            if isinstance(value, bool) or not isinstance(value, int) or not MIN_SIZE <= value <= MAX_MEMBERS:
                raise ValueError(f"class setting size={value!r}: a whole number {MIN_SIZE}…{MAX_MEMBERS}")
        elif key not in DEFAULT_SETTINGS or not isinstance(value, bool):
            raise ValueError(f"class setting {key!r}={value!r}: the settings are {sorted(DEFAULT_SETTINGS)}, booleans "
                             "and size")
        chosen[key] = value
    return chosen


def checked_id(value: int, name: str = "id") -> int:
    """A round's or member's id as a request names it: a whole number 1…2³¹−1, or ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ID:
        raise ValueError(f"{name} must be a whole number from 1 to {MAX_ID}")
    return value


def projector_key(secret: str) -> str:
    """The projector's read-only key of a class: derived from the teacher's secret (so the teacher's page can show it
    again after a reload), never the secret itself; HMAC-SHA256, URL-safe base64 without padding."""
    mac = hmac.new(secret.encode("utf-8", "surrogatepass"), b"projector", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode("ascii").rstrip("=")


def checked_score(score: float, stars: int) -> tuple[float, int]:
    """A server-computed score (0…100) and stars (0…3), or ValueError."""
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 100:
        raise ValueError(f"score must be a number in 0…100, not {score!r}")
    if isinstance(stars, bool) or not isinstance(stars, int) or not 0 <= stars <= 3:
        raise ValueError(f"stars must be a whole number in 0…3, not {stars!r}")
    return float(score), stars


def checked_gates(gates: Sequence[float]) -> list[float]:
    """A move's eight slider values, each in 0…1, or ValueError."""
    checked = [checked_gate(g) for g in gates]
    if len(checked) != len(HEADS):
        raise ValueError(f"a move has {len(HEADS)} gates, not {len(checked)}")
    return checked


def checked_head(head: int | None) -> int | None:
    """A head index as a move names it (None: the member's only head), or ValueError."""
    if head is not None and (isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < len(HEADS)):
        raise ValueError(f"a head is a number 0…{len(HEADS) - 1}, not {head!r}")
    return head


def checked_gate(gate: float) -> float:
    """A slider value in 0…1, or ValueError."""
    if isinstance(gate, bool) or not isinstance(gate, int | float) or not 0 <= gate <= 1:
        raise ValueError(f"a gate must be a number in 0…1, not {gate!r}")
    return float(gate)
