"""A live class on the class store: the level a round plays, the heads dealt to students, the class dragon's score from
the real fused output, and what the projector, the teacher and each student are shown (plain JSON; no Gradio)."""

import csv
import functools
import hashlib
import io
import secrets
import statistics
import threading
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timezone

import torch

from dragon.classroom.records import Board, ClassroomError, Result, Round
from dragon.classroom.store import ClassroomStore
from dragon.config import HEAD_NAMES, HEADS
from dragon.engine import Reading, default_dragon
from dragon.lessons import growing
from dragon.levels.claims import measure
from dragon.levels.loader import LANGS, Level, all_levels, get_level
from dragon.levels.teacher import TeacherLevelError, is_teacher_id, levels_from_code
from dragon.levels.variants import NoVariantError, exam_variant
from dragon.scoring import Scorer, as_gates, stars
from dragon.scoring import hint as gradient_hint

HEAD_START = 0.5  # a head no one has moved yet stands where every slider starts (ui/session.py START_GATES)
BOARD_FRESH_S = 0.25  # a student's page shows the class's board at most this old (the projector's is always fresh)
BOARDS_KEPT = 256  # class boards kept for that, the least recently read dropped first
LINKS_SHOWN = 3  # what a student's head finds: its strongest links between two different words
SEEDED_KINDS = ("heads", "grow", "prune")  # labs whose answers come from a seeded training: an exam draws a fresh seed
FRESH_KINDS = ("formula", "crystal")  # labs whose questions an exam draws afresh from its seed
# (dragon/classroom/lab_variants.py)
# Every other lab asks what is the same on any fresh numbers — a law of the architecture (3-3 fusion, 5-1 positions),
# the tower's figures over fixed sentences (4-2), a timing the public race draws at every length (3-2), chapter 1's
# fixed readings — so the public game answers it and it cannot be an exam round.
STORY = {  # the lesson's own lines (seed chapter 5) about heads that must work together: the class dragon's story
    "zh": "小白注意到这八个头似乎在各自为战，没有协调配合。"
          "女神说：“每个头都有自己的专长，但只有合作才能实现最强的力量。”现在，你们每个人就是龙的一个头。",
    "en": "Little Bai noticed the eight heads each fighting alone, with no coordination. The goddess said: “Every head "
          "has its own speciality, but only together do they reach their full strength.” Now each of you is one of "
          "the dragon's heads.",
}


@dataclass(frozen=True)
class Puzzle:
    """A slider level read once for a class: its reading, the scorer against its target, and each head's links."""

    level: Level
    lang: str
    reading: Reading
    scorer: Scorer
    target: tuple[float, ...]
    links: tuple[tuple[dict, ...], ...]  # per head: its strongest links between different words
    hears: tuple[dict | None, ...]  # per head: what the level's narration says it finds, measured (None: nothing)
    start_score: float  # every slider where it starts (HEAD_START): what a student's page shows before a move


# --- levels --------------------------------------------------------------------------------------------------------


def round_level(level_id: str, level_code: str | None = None) -> Level:
    """The level a round plays: a shipped level by id, or a teacher's level from its share code (ValueError else)."""
    if level_code:
        try:
            found = [lv for lv in levels_from_code(level_code) if lv.id == level_id or not level_id]
        except TeacherLevelError as err:
            raise ValueError("; ".join(err.errors)) from None
        if not found:
            raise ValueError("the share code holds no such level")
        return found[0]
    if is_teacher_id(level_id):
        raise ValueError("a teacher's level needs its share code")
    return get_level(level_id)  # KeyError-free: ValueError with the known ids


def dragon_levels() -> list[Level]:
    """The shipped levels a class dragon can play: those with the eight sliders."""
    return [lv for lv in all_levels().values() if lv.sliders]


def level_choice(level: Level, lang: str) -> dict:
    return {"id": level.id, "chapter": level.chapter, "kind": level.kind, "title": level.title[lang],
            "sliders": level.sliders, "exam": examinable(level)}


def word_like(token: str) -> bool:
    """A token that is a word (a letter or a digit in it), not punctuation or space."""
    return any(unicodedata.category(c)[0] in "LN" for c in token)


def strongest_links(reading: Reading, head: int, count: int = LINKS_SHOWN) -> tuple[dict, ...]:
    """A head's strongest links from one word to another (its real softmax; a word looking at itself is no link)."""
    weights = reading.weights[head, 1:, 1:].clone()  # (T, T): the sink's row and column left out
    weights.fill_diagonal_(0.0)
    tokens = reading.tokens
    words = torch.tensor([word_like(t) for t in tokens], dtype=torch.bool)
    weights[~words, :] = 0.0
    weights[:, ~words] = 0.0
    links = []
    for flat in weights.flatten().argsort(descending=True, stable=True)[:count].tolist():
        i, j = divmod(flat, len(tokens))
        if weights[i, j] > 0:
            links.append({"from": tokens[i], "to": tokens[j], "weight": round(float(weights[i, j]), 3)})
    return tuple(links)


@functools.lru_cache(maxsize=64)
def puzzle(level_id: str, level_code: str | None, lang: str, variant: tuple[float, ...] | None = None) -> Puzzle:
    """A slider level read once per server and shared by every class playing it (its result is fixed); `variant`:
    an exam round's own target on the level's text instead of the level's."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}")
    level = round_level(level_id, level_code)
    if not level.sliders:
        raise ValueError(f"level {level.id} is a {level.kind} level: a class dragon needs a slider level")
    reading = default_dragon().read(level.text[lang], level.reads_as(lang))
    target = level.target_for(lang) if variant is None else as_gates(list(variant), "variant").tolist()
    links = tuple(strongest_links(reading, h) for h in range(len(HEADS)))
    claimed = {c["head"]: c for c in measure(reading, level.claims_for(lang)) if c["from"] is None}
    hears = tuple(None if head not in claimed else {
        "silent": claimed[head]["silent"],
        "words": [{"word": w["word"], "share": w["attention"]} for w in claimed[head]["words"]]}
        for head in HEADS)
    scorer = Scorer(reading, target)
    start = round(scorer(as_gates([HEAD_START] * len(HEADS))), 2)
    return Puzzle(level, lang, reading, scorer, tuple(target), links, hears, start)


def round_puzzle(r: Round) -> Puzzle:
    """The puzzle a round plays: its level, with the round's own target in an exam."""
    target = (r.variant or {}).get("target")
    return puzzle(r.level_id, r.level_code, r.lang, None if target is None else tuple(target))


def target_open(r: Round) -> bool:
    """Whether a round's target may be shown: after it ends, or when the teacher showed it (never in an open exam)."""
    return r.ended is not None or (r.target_shown and not r.exam)


def member_seed(seed: int, token: str) -> int:
    """A member's own exam seed from the round's: the same on every reload (their token's), another for each member,
    above every public seed as the round's is."""
    digest = hashlib.sha256(f"{seed}:{token}".encode()).digest()
    return growing.PUBLIC_SEEDS + int.from_bytes(digest[:8], "big") % (growing.SEEDS - growing.PUBLIC_SEEDS)


def examinable(level: Level) -> bool:
    """Whether a level can be an exam round: a slider level (a fresh target), a seeded training (a fresh seed) or a lab
    whose questions are drawn afresh (3-1, 4-1: dragon/classroom/lab_variants.py). Any other lab asks what is the same
    on any fresh numbers, so the public game would answer it."""
    return level.sliders or level.kind in SEEDED_KINDS or level.kind in FRESH_KINDS


def draw_variant(level: Level, lang: str, exam: bool) -> dict | None:
    """An exam round's variant, drawn now: a fresh checked target for a slider level, a fresh seed for a lab (its
    training or its questions drawn from it); None outside an exam. A level that cannot be an exam round is refused.
    The seed lies above every seed a page or public endpoint takes (growing.PUBLIC_SEEDS): no one can train it."""
    if not exam:
        return None
    if not examinable(level):
        raise ClassroomError("exam.not_examinable", level=level.id)
    seed = growing.PUBLIC_SEEDS + secrets.randbelow(growing.SEEDS - growing.PUBLIC_SEEDS)
    if level.sliders:
        reading = default_dragon().read(level.text[lang], level.reads_as(lang))
        try:
            found = exam_variant(reading, level.target_for(lang), seed)
        except NoVariantError as err:
            raise ClassroomError("exam.no_variant", why=str(err)) from None
        return {"target": list(found.target), "public_score": found.public_score}
    return {"seed": seed}


def why_lines(level: Level, r: Round, target: Sequence[float] | None) -> dict[str, str]:
    """What the board says after the round, in each language: the level's why, or for an exam variant the round's own
    target head by head (the level's why speaks of the level's target, not this one)."""
    if target is None or not (r.variant or {}).get("target"):
        return dict(level.why)
    order = sorted((h for h in range(len(HEADS)) if target[h] > 0), key=lambda h: -target[h])
    listed = {lang: ", ".join(f"{HEAD_NAMES[HEADS[h]][k]} {target[h]:.1f}" for h in order)
              for k, lang in enumerate(("zh", "en"))}
    public = r.variant.get("public_score")
    return {"zh": f"这一轮考试的目标是为这一轮新抽的（同一段文字）：{listed['zh'].replace(', ', '、')}，其余的头是 0。"
                  f"关卡公开的目标在这一轮只得 {public:.1f} 分，所以只能靠看注意力来找。",
            "en": f"This exam round's target was drawn for the round (on the same text): {listed['en']}; every other "
                  f"head 0. The level's public target scores only {public:.1f} here, so the way to it was reading the "
                  "attention, not remembering an answer."}


# --- dealing and scoring -------------------------------------------------------------------------------------------


def deal(member_ids: Sequence[int]) -> dict[int, list[int]]:
    """Heads for the members, in join order: with eight or more, member k gets head k mod 8 (a team per head);
    with fewer, head h goes to member h mod n (each holds several, no head is left without a student)."""
    n = len(member_ids)
    if n == 0:
        return {}
    if n >= len(HEADS):
        return {m: [k % len(HEADS)] for k, m in enumerate(member_ids)}
    return {m: [h for h in range(len(HEADS)) if h % n == k] for k, m in enumerate(member_ids)}


def class_gates(means: Sequence[float | None]) -> list[float]:
    """The dragon's gates: each head's team mean, HEAD_START for a head no one has moved yet."""
    return [HEAD_START if g is None else float(g) for g in means]


def scored(p: Puzzle, gates: Sequence[float], hints: int = 0) -> tuple[float, int]:
    """(score 0–100 rounded to 2 places, stars) of gates on the puzzle, by the real fused output."""
    value = round(p.scorer(as_gates(list(gates))), 2)
    return value, stars(value, hints)


# --- the service the routes call -----------------------------------------------------------------------------------


class Classroom:
    """Every class action the pages take, each checked by the store (who may do it) and scored here."""

    def __init__(self, store: ClassroomStore) -> None:
        self.store = store
        self._boards: OrderedDict[tuple[str, int], tuple[float, tuple[Board, float, int]]] = OrderedDict()
        self._lock = threading.Lock()

    # the teacher

    def start(self, code: str, secret: str, kind: str, level_id: str, lang: str = "zh",
              level_code: str | None = None) -> dict:
        """Start a round: 'dragon' (a slider level, the class's members dealt heads) or 'everyone' (any level)."""
        if lang not in LANGS:
            raise ValueError(f"lang must be one of {', '.join(LANGS)}")
        level = round_level(level_id, level_code or None)
        heads = None
        if kind == "dragon":
            puzzle(level.id, level_code or None, lang)  # a slider level, read now (ValueError if not)
            members = [m for m in self.store.members(code, secret) if m.status == "active"]
            if not members:
                raise ClassroomError("round.no_members")
            heads = deal([m.member_id for m in members])
        info = self.store.class_info(code)
        exam = bool(info and info.settings["exam"])
        if exam and not self.store.is_teacher(code, secret):  # a stranger makes the server draw nothing
            raise ClassroomError("class.unknown")
        variant = draw_variant(level, lang, exam)
        round_id = self.store.start_round(code, secret, kind, level.id, heads, lang=lang,
                                          level_code=level_code or None, variant=variant, exam=exam)
        return {"round": round_id}

    def show_target(self, code: str, secret: str, round_id: int) -> dict:
        """The teacher shows the open round's target on the board (refused in an exam: the store says so)."""
        self.store.show_target(code, secret, round_id)
        return {"ok": True}

    def teacher_view(self, code: str, secret: str, *, projector: bool = False) -> dict:
        """What the teacher's page and the projector show: class, members, the open round's board, the summary.
        `projector`: `secret` is the projector's key, and the view leaves the key out (it controls nothing)."""
        info = self.store.class_info(code)
        allowed = self.store.is_projector(code, secret) if projector else self.store.is_teacher(code, secret)
        if info is None or not allowed:
            raise ClassroomError("class.unknown")  # a wrong secret or key answers as a wrong code
        members = self.store.members(code, secret)
        rounds = self.store.rounds(code, secret)
        results = self.store.results(code, secret)  # read once: for the summary and the round on screen
        shown = rounds[-1] if rounds else None
        out = {"code": info.code, "expires": info.expires.isoformat() + "Z", "settings": info.settings,
               "members": [{"id": m.member_id, "nickname": m.nickname, "status": m.status} for m in members],
               "round": None, "summary": self.summary(code, secret, rounds, results)}
        if not projector:
            out["projector"] = self.store.projector_key(code, secret)
        if shown is not None:
            mine = [res for res in results if res.round_id == shown.round_id]
            out["round"] = self.round_board(code, shown, info.settings["show_names"], mine)
            out["round"]["number"] = len(rounds)
            if shown.kind == "everyone":
                active = sum(m.status == "active" for m in members)  # one who left is not "not yet"
                out["round"]["not_yet"] = max(0, active - out["round"]["played"])
            if "progress" in out["round"]:  # a lab round: those who have not opened it yet too
                opened = {res.member_id for res in mine}
                names = info.settings["show_names"]
                out["round"]["progress"] += [{"nickname": m.nickname if names else "", "started": False,
                                              "answered": False, "stars": 0}
                                             for m in members if m.member_id not in opened and m.status == "active"]
        return out

    def round_board(self, code: str, r: Round, names: bool, results: Sequence[Result]) -> dict:
        """The projector's board of a round: a class dragon's heads and score (read fresh), or an everyone round's
        star counts, spread and players (from its `results`)."""
        level = round_level(r.level_id, r.level_code)
        out = {"id": r.round_id, "kind": r.kind, "open": r.ended is None, "lang": r.lang,
               "level": level_choice(level, r.lang), "best_score": r.best_score, "best_stars": r.best_stars,
               "exam": r.exam, "target_shown": r.target_shown}
        # no target value reaches the board while the round is open, unless the teacher shows it (never in an exam)
        shown = target_open(r)
        target = list(round_puzzle(r).target) if level.sliders and shown else None
        if shown:
            out["why"] = why_lines(level, r, target)
            if target is not None:
                out["target"] = target
        if r.kind == "dragon":
            p = round_puzzle(r)
            board = self.store.board(code, r.round_id)
            gates = class_gates(board.gates)
            value, earned = scored(p, gates)
            out.update(heads=list(HEADS), gates=gates, moved=[g is not None for g in board.gates], teams=board.teams,
                       score=value, stars=earned, won=r.best_stars == 3, text=p.level.text[r.lang],
                       moved_at=[stamp(m) for m in board.moved])
            holders = self.store.holders(code, r.round_id)
            out["holders"] = holders if names else [len(h) for h in holders]
            if names:
                out["players"] = [{"nickname": res.nickname, "moves": res.moves} for res in results if res.moves]
            return out
        played = [res for res in results if played_in(res)]
        counts = {str(s): 0 for s in range(4)}
        for res in played:
            counts[str(res.stars or 0)] += 1
        out.update(stars_count=counts, played=len(played))
        if names:
            out["players"] = [{"nickname": res.nickname, "stars": res.stars or 0, "best": res.best_score}
                              for res in played]
        if level.sliders:
            out["heads"] = list(HEADS)
            out["spread"] = [spread([res.gates[h] for res in played if res.gates],
                                    None if target is None else target[h]) for h in range(len(HEADS))]
        else:  # a lab, a quiz…: each student's progress (opened, answered, stars)
            out["progress"] = [{"nickname": res.nickname if names else "", "started": True, "answered": played_in(res),
                                "stars": res.stars or 0} for res in results]
        return out

    def summary(self, code: str, secret: str, rounds: Sequence[Round] | None = None,
                results: Sequence[Result] | None = None) -> list[dict]:
        """Per round (oldest first): level, kind, players, mean best score, how many at each star count. In a class
        dragon every member of the round has the class's score and stars: they won (or lost) it together."""
        rounds = self.store.rounds(code, secret) if rounds is None else rounds
        results = self.store.results(code, secret) if results is None else results
        by_round: dict[int, list[Result]] = {}
        for res in results:
            by_round.setdefault(res.round_id, []).append(res)
        out = []
        for number, r in enumerate(rounds, 1):  # a class counts its rounds from 1 (ids are the database's)
            results = by_round.get(r.round_id, [])
            rows = self.credited(code, r, results)
            # every member of a class dragon played it; elsewhere a row with no move and no result has only opened it
            played = rows if r.kind == "dragon" else [row for row, res in zip(rows, results, strict=True)
                                                       if played_in(res)]
            bests = [row["best"] for row in played if row["best"] is not None]
            out.append({"round": number, "id": r.round_id, "kind": r.kind, "level": r.level_id, "lang": r.lang,
                        "exam": r.exam, "players": len(played),
                        "mean_best": round(statistics.fmean(bests), 1) if bests else None,
                        "stars_count": {str(s): sum(row["stars"] == s for row in played) for s in range(4)},
                        "class_score": r.best_score, "class_stars": r.best_stars})
        return out

    def credited(self, code: str, r: Round, results: Sequence[Result]) -> list[dict]:
        """A round's rows as the summary and the CSV count them: each student's own; in a class dragon every member
        of the round (who moved, or holds a head now) with the class's best score and stars beside their own moves."""
        rows = [{"nickname": res.nickname, "best": res.best_score, "stars": res.stars or 0, "hints": res.hints,
                 "moves": res.moves, "first": res.first_move, "best_at": res.best_at} for res in results]
        if r.kind != "dragon":
            return rows
        seen = {row["nickname"] for row in rows}
        holding = dict.fromkeys(n for team in self.store.holders(code, r.round_id) for n in team if n not in seen)
        rows += [{"nickname": n, "best": None, "stars": 0, "hints": 0, "moves": 0, "first": None, "best_at": None}
                 for n in holding]
        for row in rows:
            row.update(best=r.best_score, stars=r.best_stars or 0)
        return rows

    def csv_text(self, code: str, secret: str) -> str:
        """The class's results as CSV: one row per student and round they played, and a row for the class's own score
        in each class-dragon round."""
        if not self.store.is_teacher(code, secret):  # the projector's key reads the board, never the CSV
            raise ClassroomError("class.unknown")
        rounds = self.store.rounds(code, secret)
        by_round: dict[int, list[Result]] = {}
        for res in self.store.results(code, secret):
            by_round.setdefault(res.round_id, []).append(res)
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for number, r in enumerate(rounds, 1):  # the class's own count, from 1
            about = [number, r.kind, r.level_id, "yes" if r.exam else "no", r.lang, zoned(r.started)]
            for row in self.credited(code, r, by_round.get(r.round_id, [])):
                seconds = (row["best_at"] - row["first"]).total_seconds() if row["best_at"] and row["first"] else ""
                best = "" if row["best"] is None else f"{row['best']:.2f}"
                writer.writerow([safe_cell(row["nickname"]), *about, best, row["stars"], row["hints"], row["moves"],
                                 seconds if seconds == "" else f"{seconds:.1f}"])
            if r.kind == "dragon":  # the class's own row (no nickname can look like it: clean_nickname)
                writer.writerow([CLASS_ROW, *about, "" if r.best_score is None else f"{r.best_score:.2f}",
                                 r.best_stars or 0, 0, "", ""])
        return out.getvalue()

    # a student

    def student_view(self, token: str, lang: str | None = None) -> dict:
        """What a student's page shows: their name, the newest round (an ended one stays on screen, won or stopped,
        until the next) and their part of it (never another's). `lang`: the page's language, for the story (the
        level's text stays in the round's language)."""
        state = self.store.student_state(token)
        code, r = state.code, state.round
        out = {"code": code, "nickname": state.member.nickname, "exam": state.settings["exam"], "round": None}
        if r is None:
            return out
        page = lang if lang in LANGS else r.lang
        level = round_level(r.level_id, r.level_code)
        view = {"id": r.round_id, "kind": r.kind, "lang": r.lang, "level": level_choice(level, page),
                "level_code": r.level_code, "open": r.ended is None, "exam": r.exam}
        if r.kind == "dragon":
            p = round_puzzle(r)
            board, value, earned = self.shared_board(code, r)
            gates = class_gates(board.gates)
            mine = state.heads
            view.update(text=p.level.text[r.lang], story=STORY[page], score=value, stars=earned,
                        won=r.best_stars == 3,
                        mine=[{"head": h, "name": HEADS[h], "gate": HEAD_START if g is None else g,
                               "team": board.teams[h], "class_gate": gates[h], "hears": p.hears[h],
                               # a silent head's card says only that: no list of near-zero "links"
                               "links": [] if (p.hears[h] or {}).get("silent") else list(p.links[h])}
                              for h, g in mine.items()])
        else:
            res = state.result
            moved = res is not None and played_in(res)
            view.update(best=res.best_score if moved else None, stars=res.stars or 0 if moved else 0,
                        hints=0 if res is None else res.hints, score=res.score if moved else None)
            if level.sliders:
                gates = res.gates if moved and res.gates else [HEAD_START] * len(HEADS)
                # the score beside the sliders is the server's score of the sliders shown (never 0.0 beside 0.5s)
                # no level story here: it speaks of the game's own page (its grey shadow of the target)
                view.update(text=level.text[r.lang], heads=list(HEADS), gates=gates,
                            score=round_puzzle(r).start_score if view["score"] is None else view["score"])
        out["round"] = view
        return out

    def dragon_move(self, token: str, round_id: int, head: int | None, gate: float) -> dict:
        """A student moves their head: the class's gates (team means), the score of the real fused output, and
        whether the class has just won (★★★ ends the round). One transaction."""

        def score_of(r: Round, means: list[float | None]) -> tuple[float, int]:
            return scored(round_puzzle(r), class_gates(means))

        moved = self.store.move_head(token, round_id, gate, head, score_of)
        return {"gates": class_gates(moved.board.gates), "score": moved.score, "stars": moved.stars, "won": moved.won,
                "head": moved.head, "moved_at": stamp(moved.board.moved[moved.head])}

    def shared_board(self, code: str, r: Round) -> tuple[Board, float, int]:
        """A class-dragon round's board and score as every student's page shows them: read and scored at most once
        per BOARD_FRESH_S for the whole class (forty pages asking each second share one read); the teacher's board
        is always read fresh."""
        key, now = (code, r.round_id), time.monotonic()
        with self._lock:
            kept = self._boards.get(key)
            if kept is not None and now - kept[0] < BOARD_FRESH_S:
                return kept[1]
        board = self.store.board(code, r.round_id)
        value, earned = scored(round_puzzle(r), class_gates(board.gates))
        with self._lock:
            self._boards[key] = (now, (board, value, earned))
            self._boards.move_to_end(key)
            while len(self._boards) > BOARDS_KEPT:
                self._boards.popitem(last=False)
        return board, value, earned

    def everyone_move(self, token: str, round_id: int, gates: Sequence[float]) -> dict:
        """A student's gates on the everyone round's slider level, scored by the server (their hints count)."""
        checked = as_gates(list(gates)).tolist()

        def score_of(r: Round, hints: int) -> tuple[float, int]:
            return scored(round_puzzle(r), checked, hints)

        res = self.store.play_move(token, round_id, checked, score_of)
        return {"score": res.score, "stars": stars(res.score, res.hints), "best": res.best_score,
                "best_stars": res.stars}

    def everyone_hint(self, token: str, round_id: int, gates: Sequence[float]) -> dict:
        """The gradient's hint on the everyone round's slider level (not in an exam); the hint is counted."""
        code = self.store.code_of(token)
        r = self.store.round_of(code, round_id)
        if r.exam or self.store.class_info(code).settings["exam"]:
            raise ClassroomError("hint.exam")
        p = round_puzzle(r)
        advice = gradient_hint(p.reading, as_gates(list(gates)).tolist(), p.target)
        hints = self.store.record_hint(token, round_id)
        head = HEADS.index(advice.head) if isinstance(advice.head, str) else advice.head
        return {"head": head, "direction": advice.direction, "hints": hints}

    def framed(self, token: str) -> Round | None:
        """The open everyone round a class member's framed game plays (its exam flag and variant are the server's),
        or None (no such round, or not a member)."""
        try:
            r = self.store.current_round(self.store.code_of(token))
        except ClassroomError:
            return None
        return r if r is not None and r.kind == "everyone" else None

    def framed_rules(self, token: str) -> dict:
        """What the class's open everyone round decides for a member's framed game, never the link: {"exam": bool,
        "seed": int | None}. A seeded training's seed is the round's (the class shares one training); a lab whose
        questions are drawn from the seed (3-1, 4-1) gets the member's own (member_seed), so no two students are
        asked the same and no one's checked answers answer another's."""
        r = self.framed(token)
        if r is None:
            return {"exam": False, "seed": None}
        seed = (r.variant or {}).get("seed")
        if not isinstance(seed, int):
            return {"exam": bool(r.exam), "seed": None}
        try:
            kind = get_level(r.level_id).kind
        except ValueError:
            kind = ""
        return {"exam": bool(r.exam), "seed": member_seed(seed, token) if kind in FRESH_KINDS else seed}

    def report(self, token: str, level_id: str, score: float, earned: int, own_hints: int = 0) -> bool:
        """A result the game's own server scoring gave a class member on the level their everyone round plays (a
        lab, a quiz…): recorded, its stars capped by the hints the server counted for them in this round (the
        browser's own count can be cleared) before this attempt (`own_hints`: those the attempt used itself, as a
        lab's answers shown on its first check, which cap only a later attempt); whether it counted (another level,
        or no open everyone round, is not)."""
        r = self.framed(token)
        if r is None or r.level_id != level_id:
            return False
        value = min(max(float(score), 0.0), 100.0)
        own = max(0, int(own_hints))

        def score_of(_round: Round, hints: int) -> tuple[float, int]:
            return value, min(int(earned), max(1, 3 - max(0, hints - own))) if earned else 0

        self.store.play_move(token, r.round_id, None, score_of, count_move=False)
        return True

    def hint_used(self, token: str, level_id: str) -> bool:
        """A hint (a demo, a reveal, answers shown: each counts as the game counts it) a class member's framed game
        gave on the round's level: counted by the server for their result; whether it counted."""
        r = self.framed(token)
        if r is None or r.level_id != level_id:
            return False
        self.store.record_hint(token, r.round_id)
        return True

    def activity(self, token: str, level_id: str) -> bool:
        """One event of a class member's framed game on the round's level: one more move in their row (a lab's real
        moves and seconds); whether it counted."""
        r = self.framed(token)
        if r is None or r.level_id != level_id:
            return False
        self.store.note_activity(token, r.round_id)
        return True


def played_in(res: Result) -> bool:
    """Whether a student has played their round (a move, or a result the game scored): a row with neither is a
    student who has only opened it."""
    return bool(res.moves) or res.best_score is not None


CSV_COLUMNS = ["nickname", "round", "kind", "level", "exam", "lang", "started_at", "best_score", "stars", "hints",
               "moves", "seconds_to_best"]
CLASS_ROW = "(the class)"  # a class-dragon round's own row in the CSV


def zoned(moment) -> str:
    """A database time (naive UTC) as ISO 8601 with its zone, as a spreadsheet reads it: 2026-12-02T11:30:00+00:00."""
    return moment.replace(microsecond=0, tzinfo=timezone.utc).isoformat()


def stamp(moment) -> str | None:
    """A database time (naive UTC) as ISO text with its Z, or None."""
    return None if moment is None else moment.isoformat(timespec="microseconds") + "Z"


def spread(values: Sequence[float], target: float | None) -> dict:
    """The class's values of one head: count, min, quartiles, max, mean, and its target when it may be shown."""
    shown = {} if target is None else {"target": target}
    if not values:
        return {"count": 0, **shown}
    q = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
    return {"count": len(values), **shown, "min": min(values), "q1": q[0], "median": q[1], "q3": q[2],
            "max": max(values), "mean": round(statistics.fmean(values), 4)}


def safe_cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: one starting with = + - @ (a formula) gets a leading apostrophe."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
