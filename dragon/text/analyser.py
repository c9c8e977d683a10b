"""Text → tokens with part of speech and lexicon findings (jieba for Chinese, rules for English)."""

import dataclasses
import functools
import math
import re
import unicodedata
from dataclasses import dataclass

from dragon.checks import brief
from dragon.text.lexicon import USER_DICT, Lexicon, classical_dictionary, load_lexicon
from dragon.text.sound import rhymes

MAX_TOKENS = 128  # visible tokens per text: a teacher's paragraph (≈ 200 Chinese characters) is read whole
MAX_CHARS = 1200  # characters segmented at most: more than 128 tokens' worth in either language
MAX_TOKEN_CHARS = 24  # a longer run of letters is cut to this
CLAUSE_ENDS = frozenset("，。！？；：,.!?;:…\n")
SPEAKER_COLONS = frozenset("：:")  # after a line's first word (妈妈：, Mum:) a colon names the speaker

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")  # a Latin letter: English inside a Chinese text
EN_WORD = re.compile(rf"[^\W\d_{CJK}]+(?:['’][^\W\d_{CJK}]+)*")  # letters, never a Chinese character
EN_TOKEN = re.compile(
    rf"(?P<cjk>[{CJK}]+)"  # Chinese inside English text goes to jieba
    rf"|(?P<word>{EN_WORD.pattern})"  # a word, with an apostrophe part (don't, teacher's)
    r"|(?P<num>\d+(?:[.,]\d+)*)"
    r"|(?P<nl>\n)"
    r"|(?P<other>\S)"  # punctuation, emoji, anything else: one character each
)

# jieba's POS tag (first letters) -> our coarse part of speech
JIEBA_POS = {
    "n": "noun", "nr": "noun", "ns": "noun", "nt": "noun", "nz": "noun", "ng": "noun", "vn": "noun",
    "an": "noun", "s": "noun", "v": "verb", "vd": "verb", "vg": "verb", "vi": "verb", "vq": "verb",
    "a": "adj", "ad": "adj", "ag": "adj", "z": "adj", "b": "adj", "d": "adv", "r": "func", "p": "func",
    "c": "func", "u": "func", "y": "func", "e": "func", "o": "func", "m": "func", "q": "func",
    "t": "time", "tg": "time", "f": "func", "x": "punct", "w": "punct",
}
EN_POS_TO_COARSE = {
    "verb": "verb", "adj": "adj", "adv": "adv", "noun": "noun", "det": "func", "prep": "func",
    "conj": "func", "aux": "func", "num": "func", "interj": "func",
}


@dataclass(frozen=True)
class Token:
    text: str
    pos: str  # coarse: noun verb adj adv pron func punct time
    clause: int  # index of the clause / dialogue turn the token belongs to
    emotion: int = 0  # +1 / -1 sentiment polarity, 0 none
    connective: str | None = None  # logical role (cause, effect, …)
    time: str | None = None  # "time" word or "aspect" marker
    space: str | None = None  # "place" or "direction"
    tone: str | None = None  # question / exclaim / soft / pause
    pronoun: str | None = None  # number ("sg"/"pl") of a 3rd-person pronoun
    referent: str | None = None  # what that pronoun stands for: "person" (他), "thing" (它, it) or "any" (they)
    person: str | None = None  # number of a noun naming a person
    thing: str | None = None  # number of any other noun ("sg"/"pl"; "any" for Chinese, which has none)
    oblique: bool = False  # a noun inside a place phrase (书包里, in the bag): a less likely antecedent
    nearest: bool = False  # a pronoun whose antecedent is the nearest fitting noun (him, 带它, they), not the first
    field: str | None = None  # semantic field
    rhyme: int | None = None  # a line end that rhymes with another line end: its rhyme group in this text
    line_tone: str | None = None  # a line end's tone class (平 "ping" / 仄 "ze", Chinese only)
    turn: int | None = None  # in a dialogue (every line "Speaker: …"), the turn the token belongs to

    @property
    def content(self) -> bool:
        return self.pos in ("noun", "verb", "adj", "pron", "time")


@dataclass(frozen=True)
class Analysis:
    tokens: tuple[Token, ...]
    lang: str  # "zh" or "en"
    truncated: bool  # the text was longer than the cap and was cut


def clean(text: str) -> str:
    """Drop control, format (zero-width, bidi) and unpaired surrogate characters; keep newlines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    return "".join(ch for ch in text if ch == "\n" or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn"))


def detect_lang(text: str) -> str:
    cjk = len(re.findall(f"[{CJK}]", text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return "zh" if cjk and cjk * 3 >= latin else "en"


@functools.cache
def _jieba_posseg():
    import jieba
    import jieba.posseg

    jieba.setLogLevel(60)
    jieba.load_userdict(str(USER_DICT))
    jieba.posseg.dt.makesure_userdict_loaded()  # the user dictionary's tags, before the first cut
    return jieba.posseg


# Classical verse: lines of five or seven characters, read in beats of 2 + 3 or 2 + 2 + 3 characters
VERSE_LENGTHS = (5, 7)
MAX_VERSE_WORD = 3  # a word in a verse line never crosses a beat, so it is at most 3 characters
MAX_LINE_WORD = 4  # no token of a classical line is longer than this
VERSE_SLACK = 3.0  # a lone line is read in beats unless that costs more log-probability (我喜欢音乐 is prose)
LONG_TOKEN = 5  # a token this long that jieba calls an idiom (每逢佳节倍思亲) is a verse line: re-cut it
MODERN_MARKERS = frozenset("的了吗呢吧们很着这那您啊呀")  # never (or hardly ever) in a Tang poem
CJK_RUN = re.compile(f"[{CJK}]+")


def is_verse_line(line: str) -> bool:
    """Two or more runs of Chinese characters, all five or all seven long, no Latin, digits or modern particles."""
    runs = CJK_RUN.findall(line)
    if len(runs) < 2 or len({len(r) for r in runs}) != 1 or len(runs[0]) not in VERSE_LENGTHS:
        return False
    return _plain(line, runs)


def is_lone_line(line: str) -> bool:
    """A single run of five or seven characters (春风吹又生, 每逢佳节倍思亲。): maybe a line of verse."""
    runs = CJK_RUN.findall(line)
    return len(runs) == 1 and len(runs[0]) in VERSE_LENGTHS and _plain(line, runs)


def _plain(line: str, runs: list[str]) -> bool:
    if any(ch.isalnum() for ch in CJK_RUN.sub("", line)):
        return False
    return not any(ch in MODERN_MARKERS for r in runs for ch in r)


def beats(n: int) -> frozenset[int]:
    """Caesura positions in a run of n characters: every two characters, the last three kept together."""
    return frozenset(range(2, n - 2, 2))


def best_cut(run: str, cuts: frozenset[int] = frozenset(), max_word: int = MAX_VERSE_WORD) -> tuple[float, list[str]]:
    """The most probable words of a run (jieba's frequencies, the classical dictionary's first), none longer
    than max_word or crossing a cut: jieba's own dynamic programme, without its HMM, on a smaller word graph.
    Returns (log-probability, words)."""
    freq, total = _jieba_posseg().dt.tokenizer.FREQ, _jieba_posseg().dt.tokenizer.total
    classical = classical_dictionary()
    log_total, n = math.log(total), len(run)
    best: list[tuple[float, int]] = [(0.0, n)] * (n + 1)  # best[i]: (log-probability of run[i:], end of its 1st word)
    for i in range(n - 1, -1, -1):
        options = []
        for j in range(i + 1, min(n, i + max_word) + 1):
            if any(i < c < j for c in cuts):
                break
            word = run[i:j]  # a single character keeps jieba's frequency: the classical dictionary gives its tag
            f = classical[word][0] if word in classical and j > i + 1 else freq.get(word, 0)
            if f or j == i + 1:  # a single character is always a word
                options.append((math.log(f or 1) - log_total + best[j][0], j))
        best[i] = max(options)
    words, i = [], 0
    while i < n:
        words.append(run[i : best[i][1]])
        i = best[i][1]
    return best[0][0], words


def verse_words(run: str) -> list[str]:
    """A run of a verse line: words within its beats (床前|明月|光)."""
    return best_cut(run, beats(len(run)))[1]


@functools.lru_cache(maxsize=4096)
def lone_cut(run: str) -> tuple[bool, tuple[str, ...]]:
    """A lone five- or seven-character run: whether it reads in beats (cutting it so costs at most VERSE_SLACK of
    log-probability against its best free cut: 每逢佳节倍思亲 does, 我喜欢音乐 does not), and its words — in beats if
    so, else the best cut into words of at most four characters (我|喜欢|音乐: prose would lose a word to the beats).
    Both cuts made once a run."""
    free, words = best_cut(run, max_word=MAX_LINE_WORD)
    verse, in_beats = best_cut(run, beats(len(run)))
    reads = verse >= free - VERSE_SLACK
    return reads, tuple(in_beats if reads else words)


def reads_as_verse(run: str) -> bool:
    return lone_cut(run)[0]


def line_words(run: str) -> list[str]:
    return list(lone_cut(run)[1])


def _tag(word: str) -> str:
    """jieba's part-of-speech tag of a word, the classical dictionary's first."""
    classical = classical_dictionary()
    if word in classical:
        return classical[word][1]
    return _jieba_posseg().dt.word_tag_tab.get(word, "n")


def _cut_line(line: str, cut_run) -> list[tuple[str, str]]:
    """A line whose runs of Chinese characters are cut by cut_run; jieba cuts the rest (punctuation)."""
    out: list[tuple[str, str]] = []
    for piece in re.split(f"([{CJK}]+)", line):
        if CJK_RUN.fullmatch(piece):
            out.extend((w, _tag(w)) for w in cut_run(piece))
        elif piece:
            out.extend(tuple(p) for p in _jieba_posseg().cut(piece))
    return out


def zh_cut(text: str) -> list[tuple[str, str]]:
    """(word, jieba tag) pairs: verse lines in beats, a lone 5/7-character line by line_words, anything else
    by jieba, re-cutting any five-or-more-character idiom it finds (a whole poem line is never one token)."""
    return [(w, flag) for w, flag, _ in zh_cut_marked(text)]


def zh_cut_marked(text: str) -> list[tuple[str, str, bool]]:
    """zh_cut's (word, jieba tag) with whether the word stands in a line of verse (a lone line: if it reads so)."""
    out: list[tuple[str, str, bool]] = []
    for line in re.split(r"(\n)", text):
        if is_verse_line(line):
            out.extend((w, f, True) for w, f in _cut_line(line, verse_words))
        elif is_lone_line(line):
            verse = reads_as_verse(CJK_RUN.findall(line)[0])
            out.extend((w, f, verse) for w, f in _cut_line(line, line_words))
        else:
            for word, flag in _jieba_posseg().cut(line):
                if len(word) >= LONG_TOKEN and flag in ("i", "l") and CJK_RUN.fullmatch(word):
                    verse = len(word) in VERSE_LENGTHS and reads_as_verse(word)  # a poem's line quoted in prose
                    out.extend((w, _tag(w), verse) for w in line_words(word))
                elif _glued_particle(word):
                    out.extend((w, _tag(w), False) for w in best_cut(word, max_word=len(word) - 1)[1])
                else:
                    out.append((word, flag, False))
    return out


PARTICLES = frozenset("了吗呢吧啊呀的着过们")
FINAL_PARTICLES = frozenset("吗呢吧")  # a word never ends in one, except these
PARTICLE_WORDS = frozenset("干吗 毛呢 酒吧 网吧 贴吧".split())


def _glued_particle(word: str) -> bool:
    """A particle glued into a word by jieba's HMM or a stray dictionary entry: 好了吗 is 好 / 了 / 吗."""
    if len(word) < 2 or not CJK_RUN.fullmatch(word) or word in PARTICLE_WORDS:
        return False
    made_up = not _jieba_posseg().dt.tokenizer.FREQ.get(word)  # not in the dictionary: the HMM's guess
    return word[-1] in FINAL_PARTICLES or (made_up and any(ch in PARTICLES for ch in word))


def _verb_stems(w: str) -> tuple[str, ...]:
    """Candidate base forms of an inflected English verb (protects → protect, carried → carry, making → make)."""
    if w.endswith("ies") or w.endswith("ied"):
        return (w[:-3] + "y",)
    if w.endswith("es") or w.endswith("ed"):
        return (w[:-2], w[:-1], w[:-3] if len(w) > 4 and w[-3] == w[-4] else w[:-2])
    if w.endswith("s") and not w.endswith("ss"):
        return (w[:-1],)
    if w.endswith("ing"):
        return (w[:-3], w[:-3] + "e", w[:-4] if len(w) > 5 and w[-4] == w[-5] else w[:-3])
    return ()


def _english_pos(word: str, lex: Lexicon) -> str:
    w = word.lower()
    if w in lex.pronouns:
        return "pron"
    if w in lex.en_pos:
        return EN_POS_TO_COARSE[lex.en_pos[w]]
    if re.split(r"['’]", w)[0] in lex.pronouns:
        return "pron"  # it's, I'm, they're: a pronoun with its verb glued on
    if any(lex.en_pos.get(stem) == "verb" for stem in _verb_stems(w)):
        return "verb"
    if w.endswith("ly") and len(w) > 4:
        return "adv"
    if word[:1].isupper() and word[1:].islower():
        return "noun"  # an unknown capitalised word is a name (Beijing, Zoë), never a verb form
    if (w.endswith("ing") and len(w) > 5) or (w.endswith("ed") and len(w) > 4):
        return "verb"
    return "noun"


NOUN_BEFORE = frozenset("the a an this that these those my your his her its our their every each".split())


Raw = tuple[str, str, str, bool]  # (text, coarse pos, jieba tag or "", whether it stands in a line of verse)


def _english_context(out: list[Raw]) -> list[Raw]:
    """Fix English parts of speech from a neighbour: after a determiner a verb form is a noun (the plays)."""
    fixed = list(out)
    for i in range(1, len(fixed)):
        word, pos, flag, verse = fixed[i]
        if pos == "verb" and flag == "" and fixed[i - 1][0].lower() in NOUN_BEFORE and not word.endswith("ing"):
            fixed[i] = (word, "noun", flag, verse)
    return fixed


def _raw_tokens(text: str, lang: str, lex: Lexicon) -> list[Raw]:
    """(text, coarse pos, jieba tag or "", in verse) for each token; newlines come through as clause breaks."""
    if lang == "zh" and not LATIN.search(text):  # Chinese alone: jieba, verse lines in beats
        return [(w, _zh_pos(w, flag, lex), flag, verse) for w, flag, verse in zh_cut_marked(text)]
    # English, or Chinese mixed with English (今天我们学习 attention 机制): each run read by its own language's rules,
    # the Chinese runs by jieba, the English words whole (it's, don't) with English parts of speech
    out: list[Raw] = []
    for m in EN_TOKEN.finditer(text):
        kind, piece = m.lastgroup, m.group()
        if kind == "cjk":
            out.extend((w, _zh_pos(w, flag, lex), flag, False) for w, flag in zh_cut(piece))
        elif kind == "word":
            out.append((piece, _english_pos(piece, lex), "", False))
        elif kind == "num":
            out.append((piece, "func", "", False))
        else:
            out.append((piece, "punct" if kind == "nl" or not piece.isalnum() else "noun", "", False))
    return _english_context(out)


def _zh_pos(word: str, flag: str, lex: Lexicon) -> str:
    if flag == "eng":
        return _english_pos(word, lex)
    if word.lower() in lex.pronouns:
        return "pron"
    return JIEBA_POS.get(flag, JIEBA_POS.get(flag[:1], "func"))


def _find(table: dict, word: str):
    """Look a word up, then its English singular (students → student, studies → study)."""
    if word in table:
        return table[word]
    if word.isascii() and len(word) > 3 and word.endswith("s"):
        for stem in (word[:-1], word[:-2], word[:-3] + "y"):
            if stem in table:
                return table[stem]
    return None


JIEBA_SPACE = {"ns": "place", "s": "place", "f": "direction"}  # place names, place words, 方位词
ZH_THING_TAGS = frozenset({"n", "nz", "ng", "ns", "nt", "nr"})  # nouns: common, proper, place, organisation, name
ASPECT_AFTER_VERB = frozenset({"过", "着"})  # aspect only right after a verb: 去过 but 过多, 看着 but 着急
IRREGULAR_PLURALS = frozenset("mice geese teeth feet oxen data media criteria phenomena bacteria fungi cacti".split())
SINGULAR_S = frozenset("news physics mathematics maths economics politics series species bus gas lens chaos".split())


def _english_plural(w: str) -> bool:
    return w.endswith("s") and not w.endswith(("ss", "us", "is", "'s", "’s")) and len(w) > 3 and w not in SINGULAR_S


def _is_name(text: str, prev: str | None, lex: Lexicon) -> bool:
    """An English capitalised word inside a sentence that no lexicon knows (Sarah, Tom): a person's name."""
    w = text.lower()
    tables = (lex.en_pos, lex.fields, lex.space, lex.emotion, lex.time, lex.connectives, lex.tone)
    return text[:1].isupper() and prev not in (None, *CLAUSE_ENDS, "“", '"') and not any(_find(t, w) for t in tables)


def _noun_kind(text: str, pos: str, flag: str, prev: str | None, lex: Lexicon) -> tuple[str | None, str | None]:
    """(person number, thing number) of a noun: who or what a 3rd-person pronoun can stand for.
    Chinese nouns carry no number, so a Chinese thing is "any"; jieba's nr (a person's name) is a person."""
    w = text.lower()
    if flag:  # Chinese: jieba's tag
        person = lex.person_nouns.get(w) or ("pl" if w.endswith("们") and w[:-1] in lex.person_nouns else None)
        if person or (flag == "nr" and not _find(lex.fields, w)):  # jieba's nr is a name, but 小狗 an animal
            return ("pl" if person == "pl" else "any"), None
        return None, ("any" if pos == "noun" and flag in ZH_THING_TAGS else None)
    person = lex.person_nouns.get(w) or ("pl" if _find(lex.person_nouns, w) and w.endswith("s") else None)
    if person or pos != "noun":
        return person, None
    if not EN_WORD.fullmatch(text):
        return None, None
    if _is_name(text, prev, lex):
        return "sg", None
    return None, ("pl" if _english_plural(w) or w in IRREGULAR_PLURALS else "sg")


PLACE_HEADS = frozenset("园院城村镇楼馆店站岛港寺庙宫亭塔桥街巷湖海江河山峰谷岭洲湾乡关")


def _place_by_head(w: str, pos: str, flag: str) -> str | None:
    """A Chinese compound ends in its head (花园, 满园, 寒山寺): a noun ending in a place character is a place."""
    return "place" if flag and pos == "noun" and len(w) in (2, 3) and w[-1] in PLACE_HEADS else None


def emotion_of(w: str, lex: Lexicon, verse: bool = False) -> int:
    """A word's polarity: its own entry (emotion.tsv over VADER; a 0 row: none), else that of a listed emotion word
    inside it (断肠人 → 断肠), else its emotion characters' (emotion_chars.tsv: 愁 anywhere, 孤 in verse or in a word
    of emotion characters alone), their sum's sign."""
    found = _find(lex.emotion, w)
    if found or w in lex.not_emotion or not CJK_RUN.fullmatch(w):
        return found or 0
    for size in range(len(w) - 1, 1, -1):  # the longest listed word inside
        for i in range(len(w) - size + 1):
            if inner := lex.emotion.get(w[i : i + size]):  # (0 rows are not in lex.emotion)
                return inner
    chars = [lex.emotion_chars.get(ch) for ch in w]
    alone = all(chars)  # 孤, 戚戚, 孤寂: the characters are the feeling
    total = sum(p for p, anywhere in filter(None, chars) if anywhere or verse or alone)
    return (total > 0) - (total < 0)


def _lookup(text: str, pos: str, flag: str, clause: int, prev: Token | None, lex: Lexicon,
            verse: bool = False) -> Token:
    w = text.lower()
    pronoun = lex.pronouns.get(w)
    time = lex.time.get(w) or ("time" if pos == "time" else None)
    if w in ASPECT_AFTER_VERB and (prev is None or prev.pos != "verb"):
        time = None  # 过多 is "too many", not an aspect marker
    space = _find(lex.space, w) or (None if time else JIEBA_SPACE.get(flag) or _place_by_head(w, pos, flag))
    person, thing = _noun_kind(text, pos, flag, prev.text if prev else None, lex)
    third = pronoun is not None and pronoun[1] == 3
    return Token(
        text=text,
        pos=pos,
        clause=clause,
        emotion=emotion_of(w, lex, verse),
        connective=lex.connectives.get(w),
        time=time,
        space=space,
        tone=lex.tone.get(w),
        pronoun=pronoun[0] if third else None,
        referent=lex.referents.get(w) if third else None,
        person=person,
        thing=thing,
        field=_find(lex.fields, w),
    )


def analyse(text: str, lang: str = "auto", max_tokens: int = MAX_TOKENS) -> Analysis:
    """Segment and annotate `text`; at most `max_tokens` tokens are kept and `truncated` says so."""
    if not isinstance(text, str):
        raise ValueError("text must be a string")
    if lang not in ("auto", "zh", "en"):
        raise ValueError(f"lang must be 'auto', 'zh' or 'en', not {brief(lang)}")
    cut = len(text) > MAX_CHARS
    text = clean(text[:MAX_CHARS]).strip()
    if not text:
        raise ValueError("The text is empty: type a sentence in Chinese or English.")
    if lang == "auto":
        lang = detect_lang(text)
    lex = load_lexicon()
    tokens: list[Token] = []
    clause, line_start = 0, 0  # line_start: index of the first token of the current line
    lines, speakers = [], 0  # each token's line; how many lines name their speaker (妈妈：, Mum:)
    for piece, pos, flag, verse in _raw_tokens(text, lang, lex):
        if not piece.strip():
            if "\n" in piece and tokens and tokens[-1].clause == clause:
                clause += 1  # a new line starts a new turn
            if "\n" in piece and len(tokens) > line_start:
                line_start = len(tokens)
            continue
        if len(tokens) == max_tokens:
            cut = True
            break
        if len(piece) > MAX_TOKEN_CHARS:
            piece, cut = piece[:MAX_TOKEN_CHARS], True
        prev = tokens[-1] if tokens and tokens[-1].clause == clause else None
        tokens.append(_lookup(piece, pos, flag, clause, prev, lex, verse))
        lines.append(line_start)
        speaker = piece in SPEAKER_COLONS and len(tokens) - line_start == 2  # 妈妈： Mum: the turn goes on
        speakers += speaker
        if piece in CLAUSE_ENDS and not speaker:
            clause += 1
    if not tokens:
        raise ValueError("The text has no words or symbols left to read.")
    tokens = mark_turns(tokens, lines, speakers)
    return Analysis(tokens=mark_sound(mark_roles(tokens, lex), text, lang), lang=lang, truncated=cut)


def mark_turns(tokens: list[Token], lines: list[int], speakers: int) -> list[Token]:
    """In a dialogue — two or more lines, each naming its speaker — each token's turn (its line's number)."""
    starts = sorted(set(lines))
    if len(starts) < 2 or speakers < len(starts):
        return tokens
    return [dataclasses.replace(tok, turn=starts.index(line)) for tok, line in zip(tokens, lines, strict=True)]


RHYME_GROUPS_MAX = 4  # rhyme groups one text can have (features rhyme_0 … rhyme_3)


def line_ends(tokens: tuple[Token, ...]) -> list[int]:
    """The last word of each clause / line (punctuation aside): where a line of verse lands and rhymes."""
    last: dict[int, int] = {}
    for i, tok in enumerate(tokens):
        if tok.pos != "punct":
            last[tok.clause] = i
    return sorted(last.values())


def is_verse(text: str, lang: str, ends: list[int], grouped: int) -> bool:
    """Chinese: every line is a line of verse (five or seven characters a run); English: three or more line ends,
    at least half of them rhyming with another."""
    if lang == "zh":
        lines = [line for line in text.split("\n") if line.strip()]
        return bool(lines) and all(is_verse_line(line) or is_lone_line(line) for line in lines)
    return len(ends) >= 3 and 2 * grouped >= len(ends)


def mark_sound(tokens: tuple[Token, ...], text: str, lang: str) -> tuple[Token, ...]:
    """Rhyme and tone class of each line end, in verse only (a rhyme in prose is chance, not 韵律)."""
    ends = line_ends(tokens)
    found = rhymes([(i, tokens[i].text) for i in ends], lang, RHYME_GROUPS_MAX)
    if not is_verse(text, lang, ends, sum(group is not None for group, _ in found.values())):
        return tokens
    out = list(tokens)
    for i, (group, tone) in found.items():
        out[i] = dataclasses.replace(tokens[i], rhyme=group, line_tone=tone)
    return tuple(out)


DEGREE_WORDS = frozenset({"so"})  # a connective word that, before an adjective or adverb, only says "how much"
OBJECT_FORMS = frozenset("him them they it".split())  # they: the nearest fitting plural, people or things
ZH_PREPOSITIONS = frozenset("把 被 给 对 跟 和 同 向 为 替 让 叫 从 在 往".split())
PLACE_PREPOSITIONS = frozenset("在 从 往 到 in on at into onto from inside under behind near beside above".split())


def _is_preposition(word: str, lex: Lexicon) -> bool:
    return word in ZH_PREPOSITIONS or lex.en_pos.get(word.lower()) == "prep"


def mark_roles(tokens: list[Token], lex: Lexicon) -> tuple[Token, ...]:
    """Salience from syntax, after Lappin & Leass (1994): nouns in a place phrase are obliques, less likely
    antecedents (书包|里, in my bag); an object pronoun (gave him, 带它) takes the nearest fitting antecedent,
    a subject pronoun (she, 他 at the start of a clause) the first mentioned."""
    out = list(tokens)
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i and tokens[i - 1].clause == tok.clause else None
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.connective and tok.text.lower() in DEGREE_WORDS and after is not None and after.pos in ("adj", "adv"):
            out[i] = dataclasses.replace(tok, connective=None, pos="adv")  # "so sad" is a degree, not "so" = therefore
        elif tok.pronoun:
            w = tok.text.lower()
            governed = prev is not None and (prev.pos == "verb" or _is_preposition(prev.text, lex))
            possessive = w == "her" and after is not None and after.pos in ("noun", "adj")
            if (w in OBJECT_FORMS or governed) and not possessive:
                out[i] = dataclasses.replace(tok, nearest=True)
        elif tok.person or tok.thing:
            before = [t.text.lower() for t in tokens[max(i - 3, 0) : i] if t.clause == tok.clause]
            while before and (before[-1] in NOUN_BEFORE or lex.en_pos.get(before[-1]) == "adj"):
                before.pop()  # in [my] bag, on [the old] bridge
            zh_place = after is not None and after.space == "direction" and not after.text.isascii()
            if zh_place or (before and before[-1] in PLACE_PREPOSITIONS):
                out[i] = dataclasses.replace(tok, oblique=True)
    return tuple(out)
