"""Claims as data: what a level's narration says each head finds, measured on the real attention."""

import torch

from dragon.checks import brief
from dragon.config import HEAD_NAMES, HEADS
from dragon.engine import Reading, default_dragon
from dragon.levels.level import Claim, Level
from dragon.text.analyser import MAX_TOKENS

# A claimed word is "found" by a head when it gets at least this share of the head's attention between words
# (attention received from the OTHER words, summed over their query rows, sink excluded, divided by the head's
# total between different words): a word looking at itself is no link between words.
FOUND_SHARE = 0.08
# A claim about one word's own row (`from: 它`, words: [钥匙]) holds when the word gets at least this share of
# that row's attention to words (the first occurrence of the `from` word): the row mostly looks there.
ROW_SHARE = 0.5
# A head links words only when at least one query row gives this share to OTHER words (sink and the word itself
# excluded): below it the shares between words are crumbs of a head that looks at itself or at the sink.
LINK_MASS = 0.25
# A head "has nothing to say" when its part of the fused output is under this share of the loudest head's.
SILENT = 0.05
# A head's words "look at themselves" when some row gives its own word at least this share: a link's.
SELF_SHARE = LINK_MASS
# A head the target weights at least this much must speak in that language (else its slider is a dead weight).
MUST_SPEAK = 0.2
CLAIM_FIELDS = ("head", "words", "silent", "from", "alone")
MAX_CLAIM_WORD = 40  # characters of one claimed word (a list of them holds at most MAX_TOKENS, what the dragon reads)

# A head may be named by its id, its Chinese name (情感头 or 情感) or its English name (Emotion), any case
HEAD_ALIASES = {alias: head for head, (zh, en) in HEAD_NAMES.items()
                for alias in (head, zh, zh.removesuffix("头"), en.lower())}


def head_of(name) -> str | None:
    """The head id a level file means by `name` (an id or a head's name in either language), else None."""
    return HEAD_ALIASES.get(name.strip().lower()) if isinstance(name, str) else None


# --- reading claims: one parser for shipped levels (loader) and teachers' levels (teacher) ------------------------


def parse_claims(items, where: str, *, names: bool = False, most: int | None = None
                 ) -> tuple[tuple[Claim, ...], list[tuple[str, str]]]:
    """One language's claims, `[{head: time, words: [昨天]}, {head: logic, silent: true}]`, read into Claims: (the
    good ones, a (path, message) per problem, in order and at most one per claim). `names`: a head may also be named
    as `head_of` reads it (a teacher's level), not only by its id; `most`: at most this many claims. A shipped level
    raises on the first problem, a teacher's level lists them all."""
    if not isinstance(items, list) or not items:
        return (), [(where, "must be a list of at least one {head, words} or {head, silent: true}")]
    if most is not None and len(items) > most:
        return (), [(where, f"lists {len(items)} claims; at most {most}")]
    claims, wrong, seen = [], [], set()
    for i, item in enumerate(items):
        path = f"{where}[{i}]"
        claim = parse_claim(item, path, names)
        if not isinstance(claim, Claim):
            wrong.append(claim)
        elif (claim.head, claim.source) in seen:
            wrong.append((f"{path}.head", f"{claim.head} is claimed twice"))
        else:
            seen.add((claim.head, claim.source))
            claims.append(claim)
    return tuple(claims), wrong


def parse_claim(item, path: str, names: bool = False) -> Claim | tuple[str, str]:
    """`{head, words}` (the head links these words), `{head, alone}` (it hears these words, each looking only at
    itself), both, `{head, from, words}` (one word's row) or `{head, silent: true}`; else the (path, message) of the
    first thing wrong with it."""
    if not isinstance(item, dict) or set(item) - set(CLAIM_FIELDS):
        return path, "must be a mapping with head and words (or alone, or silent: true), optionally from"
    head = head_of(item.get("head")) if names else item.get("head")
    if head not in HEADS:
        named = " or a head's name" if names else ""
        return f"{path}.head", f"must be a head id ({', '.join(HEADS)}){named}, not {brief(item.get('head'))}"
    silent, words, source, alone = (item.get(key) for key in ("silent", "words", "from", "alone"))
    if source is not None and (not isinstance(source, str) or not source.strip()):
        return f"{path}.from", "must be a word of the text"
    if silent is True and words is None and source is None and alone is None:
        return Claim(head, (), True)
    lists = all(v is None or (isinstance(v, list) and v) for v in (words, alone))
    if silent not in (False, None) or not lists or not (words or alone) or (alone and source):
        return path, "must list the words the head finds (or hears alone), or say silent: true"
    for key, value in (("words", words), ("alone", alone)):
        if not value:
            continue
        if not all(isinstance(w, str) and w.strip() for w in value):
            return f"{path}.{key}", "must be non-empty strings"
        if len(value) > MAX_TOKENS:
            return f"{path}.{key}", f"lists {len(value)} words; at most {MAX_TOKENS} (what the dragon reads)"
        long = [w.strip() for w in value if len(w.strip()) > MAX_CLAIM_WORD]
        if long:
            return f"{path}.{key}", f"{brief(long[0])} has {len(long[0])} characters; at most {MAX_CLAIM_WORD}"
    return Claim(head, tuple(w.strip() for w in words or ()), source=source.strip() if source else None,
                 alone=tuple(w.strip() for w in alone or ()))


def between_words(reading: Reading) -> torch.Tensor:
    """(h, T, T): each head's attention from word to word, the sink column and each word's look at itself dropped."""
    w = reading.weights[:, 1:, 1:].clone()  # (h, T, T): query rows of the words, sink column dropped
    diagonal = torch.arange(w.shape[-1])
    w[:, diagonal, diagonal] = 0.0
    return w


def attention_shares(reading: Reading) -> torch.Tensor:
    """(h, T): each word's share of a head's attention between different words (each row sums to 1, or is 0 for a
    head that links no words)."""
    received = between_words(reading).sum(dim=1)  # (h, T): received from the other words
    total = received.sum(dim=1, keepdim=True)
    return torch.where(total > 1e-9, received / total.clamp_min(1e-9), torch.zeros_like(received))


def looks_at_itself(reading: Reading, head: str) -> bool:
    """Whether some word of `head` does look at itself, with at least SELF_SHARE of its row (as links_words asks of
    a link); where none does, what the words give each other and themselves is crumbs and the rest of every row
    rests on the sink: nothing to say."""
    w = reading.weights[HEADS.index(head), 1:, 1:]
    return float(w.diagonal().max()) >= SELF_SHARE


def link_mass(reading: Reading) -> torch.Tensor:
    """(h,): the most any one query row of a head gives to other words (sink and the word itself excluded)."""
    return between_words(reading).sum(dim=-1).amax(dim=-1)


def links_words(reading: Reading, head: str) -> bool:
    """Whether some word of `head` gives a link's share (LINK_MASS) to other words: it links words, even when its
    attention is spread so thin that no word is a finding."""
    return float(link_mass(reading)[HEADS.index(head)]) >= LINK_MASS


def loudness(reading: Reading) -> torch.Tensor:
    """(h,): each head's part of the fused output, as a share of the loudest head's."""
    size = reading.head_sizes
    return size / size.max().clamp_min(1e-12)


def silent_heads(reading: Reading) -> list[str]:
    """Heads whose contribution is ~0 for this text: their sliders barely matter here."""
    return [h for h, v in zip(HEADS, loudness(reading).tolist(), strict=True) if v < SILENT]


def positions(reading: Reading, word: str) -> list[int]:
    return [i for i, tok in enumerate(reading.tokens) if tok.lower() == word.lower()]


def top_words(reading: Reading, head: str, k: int | None = None) -> list[tuple[str, float]]:
    """A head's most-attended words (occurrences of a word added up, as claims count them), each with its share;
    only words that would count as findings (≥ FOUND_SHARE), at most k (all if None), first-seen order on ties."""
    if not links_words(reading, head):
        return []  # it looks at each word itself (or the sink): no link between words to name
    shares = attention_shares(reading)[HEADS.index(head)]
    merged: dict[str, float] = {}
    for tok, v in zip(reading.tokens, shares.tolist(), strict=True):
        merged[tok.lower()] = merged.get(tok.lower(), 0.0) + v
    first = {}
    for tok in reading.tokens:
        first.setdefault(tok.lower(), tok)
    ranked = sorted(merged.items(), key=lambda kv: -round(kv[1], 4))  # stable: ties keep the text's order
    return [(first[w], v) for w, v in ranked if v >= FOUND_SHARE][:k]


def word_share(reading: Reading, shares: torch.Tensor, head: str, word: str) -> float | None:
    """The share of `head`'s attention that `word` gets (all its occurrences); None if it is not a token."""
    hits = positions(reading, word)
    if not hits:
        return None
    return float(shares[HEADS.index(head), hits].sum())


def row_shares(reading: Reading, head: str, source: str) -> torch.Tensor | None:
    """(T,): where the first `source` token's row of `head` looks, as shares of its attention to the other words."""
    hits = positions(reading, source)
    if not hits:
        return None
    row = reading.weights[HEADS.index(head), hits[0] + 1, 1:].clone()  # (T,) the query row, sink column dropped
    row[hits[0]] = 0.0  # … and the word's look at itself
    return row / row.sum().clamp_min(1e-9)


def measure(reading: Reading, claims: tuple[Claim, ...]) -> list[dict]:
    """Each claim with its measured numbers: the share each word gets, and the head's loudness."""
    shares, loud = attention_shares(reading), loudness(reading)
    out = []
    for c in claims:
        if c.source is None:
            words = [{"word": w, "attention": _round(word_share(reading, shares, c.head, w))} for w in c.words]
        else:
            row = row_shares(reading, c.head, c.source)
            words = [{"word": w, "attention": None if row is None else _round(_sum_at(row, positions(reading, w)))}
                     for w in c.words]
        alone = [{"word": w, "self": _round(self_share(reading, c.head, w))} for w in c.alone]
        head_loudness = round(float(loud[HEADS.index(c.head)]), 4)
        out.append({"head": c.head, "from": c.source, "words": words, "alone": alone, "silent": c.silent,
                    "loudness": head_loudness})
    return out


def self_share(reading: Reading, head: str, word: str) -> float | None:
    """How much of the first `word`'s row of `head` looks at the word itself (of its attention to words)."""
    hits = positions(reading, word)
    if not hits:
        return None
    row = reading.weights[HEADS.index(head), hits[0] + 1, 1:]
    return float(row[hits[0]] / row.sum().clamp_min(1e-9))


def _sum_at(row: torch.Tensor, hits: list[int]) -> float | None:
    return float(row[hits].sum()) if hits else None


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def short_of(where: str, words: list[dict], key: str, need: float, says: str, reading: Reading) -> list[str]:
    """A problem for each measured word that is not a token of the text, or whose `key` falls short of `need`
    (`says` is the message, with {v} the measured value and {need})."""
    out = []
    for w in words:
        if w[key] is None:
            out.append(f"{where}: word {w['word']!r} is not a token of the text ({' / '.join(reading.tokens)})")
        elif w[key] < need:
            out.append(f"{where}: word {w['word']!r} " + says.format(v=w[key], need=need))
    return out


def problems(level: Level, lang: str, reading: Reading) -> list[str]:
    """Every way the level's narration in `lang` is not borne out by the engine; [] when all of it holds."""
    where = f"level {level.id} ({lang})"
    out = []
    silent = set(silent_heads(reading))
    loud = loudness(reading)
    for claim in measure(reading, level.claims_for(lang)):
        head, level_of = claim["head"], float(loud[HEADS.index(claim["head"])])
        if claim["silent"]:
            if head not in silent:
                out.append(f"{where}: head {head} is said to have nothing to say, but its part of the fused output is "
                           f"{level_of:.2f} of the loudest head's (silent means < {SILENT})")
            continue
        if head in silent:
            said = ", ".join(w["word"] for w in claim["words"] + claim["alone"])
            out.append(f"{where}: head {head} is said to find {said}, but it is silent ({level_of:.3f} of the loudest "
                       f"head's output)")
        alone = "is said to look only at itself, but its row gives itself {v:.3f} (alone needs ≥ {need})"
        out += short_of(f"{where}: head {head}", claim["alone"], "self", ROW_SHARE, alone, reading)
        source = claim["from"]
        if source is not None and not positions(reading, source):
            tokens = " / ".join(reading.tokens)
            out.append(f"{where}: head {head}: from {source!r} is not a token of the text ({tokens})")
            continue
        mass = float(link_mass(reading)[HEADS.index(head)])
        if source is None and claim["words"] and mass < LINK_MASS:
            out.append(f"{where}: head {head} is said to link words, but no row gives more than {mass:.3f} to other "
                       f"words (a link needs ≥ {LINK_MASS})")
        whose, need = (f"row of {source!r}", ROW_SHARE) if source else ("head's attention", FOUND_SHARE)
        found = "gets {v:.3f} of the " + whose.replace("{", "{{").replace("}", "}}") + " (a finding needs ≥ {need})"
        out += short_of(f"{where}: head {head}", claim["words"], "attention", need, found, reading)
    if level.sliders:
        for head, g in zip(HEADS, level.target_for(lang), strict=True):
            if g >= MUST_SPEAK and head in silent:
                out.append(f"{where}: head {head} has target {g} but is silent in this language "
                           f"({float(loud[HEADS.index(head)]):.3f} of the loudest head's output)")
    return out


def check_level(level: Level) -> list[str]:
    """The problems of a level's claims in every language, read by the real dragon."""
    langs = (level.text_lang,) if level.text_lang else ("zh", "en")  # a teacher level has one text, in one language
    return [p for lang in langs for p in problems(level, lang, default_dragon().read(level.text[lang], lang))]
