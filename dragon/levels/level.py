"""The level data types, shared by the loader (levels.py) and the claim checker (claims.py): what a level is."""

from dataclasses import dataclass

from dragon.config import (
    HEADS,
    LANGS,  # noqa: F401  (the loader and its users take it from here too)
)

SLIDER_KINDS = ("poem", "paper", "dialogue", "mixed", "custom")  # set the eight sliders to match a target
# chapter 3's labs: formula (predict a head's softmax winner), race (guess the batched speed-up), fusion (order
# concat → W^O → residual, predict what each keeps), heads (rank h = 1…16 before they train; the facts quiz), scroll
# (predict where full and windowed attention's times cross and how many heads a window keeps, then measure)
LAB_KINDS = ("formula", "race", "fusion", "heads", "scroll", "crystal", "tower", "grow", "prune", "stability",
             "router", "positions", "badge")
# chapters 4–5 (the same lab panel): crystal (find the real model's head sending `word` to `target`, then try your
# own sentence), tower (predict the layers' trend), grow (train live, recognise the stages), prune (switch heads
# off, keep ≥ 90 %), stability (predict who fails more over a grid of rates, train it, read it), router (predict
# the smallest k heads a word keeps for 95 %, train, read), positions
# (predict whether 我爱你 / 你爱我 differ), badge (make the badge)
KINDS = (*SLIDER_KINDS, "compare", "match", *LAB_KINDS)  # compare: one head vs eight; match: which head found it

Bilingual = dict[str, str]  # {"zh": …, "en": …}

# The lesson's own control panel: which two heads a genre turns up (poems: emotion and tone; papers: logic and
# semantics; dialogues: context and tone). A level keeps it when both weigh at least PANEL_WEIGHT in its target;
# one that departs says why (`departs`), and the page shows the measured numbers beside it.
PANEL: dict[str, tuple[str, str]] = {"poem": ("emotion", "tone"), "paper": ("logic", "semantics"),
                                     "dialogue": ("context", "tone")}
PANEL_WEIGHT = 0.5


@dataclass(frozen=True)
class Finding:
    word: Bilingual  # the word the finding is about
    says: Bilingual  # what was found
    expect: str | None  # the lesson's head for it (the game computes the answer; a test compares)


@dataclass(frozen=True)
class Claim:
    """What the narration says one head finds in the text: these words, or nothing at all."""

    head: str
    words: tuple[str, ...] = ()  # tokens the head attends to (empty when silent)
    silent: bool = False  # the narration says this head has nothing to say here
    source: str | None = None  # `from`: the claim is about this word's own row (它 → 钥匙), not the whole head
    alone: tuple[str, ...] = ()  # words the head hears that each look only at themselves: no link between words


@dataclass(frozen=True)
class Round:
    """A formula level's question: from this word, which key wins this head's softmax, and by how much?"""

    word: str  # a token of the level's text in that language
    head: str  # a head id


@dataclass(frozen=True)
class Level:
    id: str
    chapter: int
    kind: str
    title: Bilingual
    text: Bilingual  # what the dragon reads, in each language
    story: Bilingual  # narration before playing
    why: Bilingual  # the reveal after
    targets: dict[str, tuple[float, ...]] | None = None  # slider levels: lang -> target gates, in HEADS order
    show: str = "silhouette"
    source: Bilingual | None = None  # e.g. the poet
    focus: Bilingual | None = None  # compare levels: the word whose row is compared
    findings: tuple[Finding, ...] = ()  # match levels
    claims: dict[str, tuple[Claim, ...]] | None = None  # lang -> what the narration says each head finds
    rounds: dict[str, tuple[Round, ...]] | None = None  # formula levels: lang -> the questions, in order
    lengths: tuple[int, ...] = ()  # race levels: the sequence lengths T raced
    guess_at: int | None = None  # race levels: the length whose speed-up the player guesses
    ask: tuple[str, str] | None = None  # crystal levels: (word, target) in the English text, e.g. (they, students)
    quiz: tuple[str, ...] = ()  # heads levels: ids of the facts-quiz questions asked (assets/lessons/facts.yaml)
    departs: Bilingual | None = None  # a genre level whose target leaves the lesson's panel: why it does
    text_lang: str | None = None  # a teacher's level: the language its one text is in (read so in either UI language)
    genre: str | None = None  # a teacher's level: poem / paper / dialogue / mixed, as a label
    after: str | None = None  # a teacher's level in a pack: the next level's id

    @property
    def sliders(self) -> bool:
        return self.kind in SLIDER_KINDS

    @property
    def lab(self) -> bool:
        """A chapter-3 lab (formula, race, fusion, heads): its own panel, scored by what the player predicts."""
        return self.kind in LAB_KINDS

    def keeps_panel(self, lang: str) -> bool:
        """Whether the target in `lang` turns up both of the lesson's heads for this genre (True for no genre)."""
        heads = PANEL.get(self.kind, ())
        return all(self.target_for(lang)[HEADS.index(h)] >= PANEL_WEIGHT for h in heads)

    def target_for(self, lang: str) -> tuple[float, ...]:
        """The target gates in `lang` (a level may give one target per language, the heads that speak differ)."""
        if self.targets is None:
            raise ValueError(f"level {self.id} is a {self.kind} level and has no target")
        return self.targets[lang]

    def reads_as(self, lang: str) -> str:
        """The language the dragon reads the text in when the page is in `lang` (a teacher level's own language)."""
        return self.text_lang or lang

    def claims_for(self, lang: str) -> tuple[Claim, ...]:
        return () if self.claims is None else self.claims[lang]


@dataclass(frozen=True)
class Chapter:
    number: int
    title: Bilingual
    levels: tuple[Level, ...]
