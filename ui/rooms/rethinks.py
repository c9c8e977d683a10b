"""Each predict-then-read room's second prediction (ui/rooms/rethink.py asks it): a measurement the page has not shown,
drawn afresh each try from a pool whose every question is decided by a clear margin (tests/test_rethink.py).

3-2 asks the speed-up at a length the race did not time, 3-4 the ranking for a seed trained afresh, 3-3 the two keeps on another text, 4-2 the tower's four questions over sentences its page has not read, 5-1
three differences on another pair. Each is a lab.Rethink: draw, panel, check."""

import re

from dragon import api, game
from dragon.lessons import fusion as fusion_lesson
from dragon.lessons import positions as positions_lesson
from dragon.lessons import tower as tower_lesson
from dragon.lessons.race import REFERENCE_RUNS
from dragon.levels.loader import Level
from dragon.runs import RUNS
from ui.rooms import heads as heads_room
from ui.rooms import lab, waits
from ui.rooms import race as race_room
from ui.rooms.lab import Attempt
from ui.strings import t

# --- 5-1: three differences on another pair ---------------------------------------------------------------------------


def positions_fields(lang: str, given: dict, locked: bool) -> str:
    choices = [("same", t("pos_same", lang)), ("differ", t("pos_differ", lang))]
    return lab.asks(*(lab.select(f"s_{k}", t(f"pos_rt_{k}", lang), choices, given.get(k), lang, locked)
                      for k in positions_lesson.AGAIN_KEYS))


def draw_positions(level: Level, lang: str, attempt: Attempt, rng) -> dict:
    """5-1's second prediction: another pair, drawn from the lesson's pool (never the level's own text)."""
    return {"text": rng.choice([x for x in positions_lesson.AGAIN_TEXTS[lang] if x != level.text[lang]])}


def positions_panel(level: Level, lang: str, attempt: Attempt, asked: dict, held: dict) -> str:
    p = api.positions(asked["text"], lang)
    measured = held.get("measured")
    a, b = (re.sub(r" ([.,!?;:])", r"\1", p[k]) for k in ("text_a", "text_b"))  # tokens joined: "man ." → "man."
    head = lab.question(t("pos_rt_setup", lang, a=a, b=b))
    if measured is None:
        return head + positions_fields(lang, {}, False)
    given, key = measured["answers"], positions_lesson.again_key(p)
    marks = [t("pos_rt_mark", lang, q=t(f"pos_rt_k_{k}", lang), mine=t(f"pos_{given[k]}", lang), d=f"{p[f]:.1e}",
               ok=lab.mark(given[k] == key[k], lang)) for k, f in positions_lesson.AGAIN_KEYS.items()]
    return head + positions_fields(lang, given, True) + lab.lines(marks)


def check_positions(level: Level, lang: str, progress: dict, attempt: Attempt, asked: dict, data: dict):
    """Right when all three answers are the measured ones (each decided by a clear margin)."""
    given = {k: data.get(f"s_{k}") for k in positions_lesson.AGAIN_KEYS}
    if any(v not in ("same", "differ") for v in given.values()):
        return t("lab_bad", lang)
    key = positions_lesson.again_key(api.positions(asked["text"], lang))
    return all(given[k] == key[k] for k in key), {"answers": given}


POSITIONS = lab.Rethink(draw_positions, positions_panel, check_positions)


# --- 3-3: the two keeps on another text -------------------------------------------------------------------------------


def draw_fusion(level: Level, lang: str, attempt: Attempt, rng) -> dict:
    """3-3's second prediction: another text from the lesson's pool (never the level's own)."""
    return {"text": rng.choice([x for x in fusion_lesson.AGAIN_TEXTS[lang] if x != level.text[lang]])}


def fusion_panel(level: Level, lang: str, attempt: Attempt, asked: dict, held: dict) -> str:
    measured = held.get("measured")
    given = measured["answers"] if measured else {}
    choices = lab.bucket_choices("keep", game.KEEP_BUCKETS, lang)
    fields = lab.asks(*(lab.select(f"s_{k}", t(f"u_rt_{k}", lang), choices, given.get(k), lang, measured is not None)
                        for k in ("off", "on")))
    head = lab.question(t("u_rt_setup", lang, text=asked["text"]))
    if measured is None:
        return head + fields
    f = api.fusion(asked["text"], lang)
    key = fusion_lesson.again_key(f, game.KEEP_BUCKETS)
    values = {"off": f["keep_without_residual"], "on": f["keep_with_residual"]}
    marks = [t("u_rt_mark", lang, q=t(f"u_rt_{k}", lang), v=f"{values[k]:.2f}",
               mine=lab.bucket_text("keep", int(given[k]), game.KEEP_BUCKETS, lang),
               ok=lab.mark(int(given[k]) in key[k], lang)) for k in ("off", "on")]
    return head + fields + lab.lines(marks)


def check_fusion(level: Level, lang: str, progress: dict, attempt: Attempt, asked: dict, data: dict):
    """Right when both keep buckets are the measured ones (a bucket within 5 points of the value counts)."""
    given = {k: data.get(f"s_{k}") for k in ("off", "on")}
    if any(v not in [str(i) for i in range(len(game.KEEP_BUCKETS) + 1)] for v in given.values()):
        return t("lab_bad", lang)
    key = fusion_lesson.again_key(api.fusion(asked["text"], lang), game.KEEP_BUCKETS)
    return all(int(given[k]) in key[k] for k in key), {"answers": given}


FUSION = lab.Rethink(draw_fusion, fusion_panel, check_fusion)


# --- 4-2: the tower over sentences its page has not read --------------------------------------------------------------


def draw_tower(level: Level, lang: str, attempt: Attempt, rng) -> dict:
    """4-2's second prediction: one of the lesson's groups of sentences the tower's page has not read."""
    return {"group": rng.choice(tower_lesson.AGAIN_GROUPS).name}


def tower_of(asked: dict) -> dict:
    return tower_lesson.tower(tower_lesson.again_group(asked["group"]))


def tower_fields(lang: str, layers: int, given: dict, locked: bool) -> str:
    names = [(str(i + 1), t("tw_layer", lang, l=i + 1)) for i in range(layers)]
    yes_no = [("yes", t("yes", lang)), ("no", t("no", lang))]
    return lab.asks(*(lab.select(f"s_{k}", t(f"tw_q_{k}" if k != "nearest" else "tw_rt_nearest", lang),
                                 yes_no if k == "rises" else names, given.get(k), lang, locked)
                      for k in tower_lesson.AGAIN_QUESTIONS))


def tower_panel(level: Level, lang: str, attempt: Attempt, asked: dict, held: dict) -> str:
    sentences = tower_lesson.load_sentences(tower_lesson.again_group(asked["group"]))
    measured = held.get("measured")
    head = lab.question(t("tw_rt_setup", lang, n=len(sentences))) + lab.lines(sentences, "lines sentences")
    tw = api.tower()  # the same model: its layers
    if measured is None:
        return head + tower_fields(lang, tw["layers"], {}, False)
    given, other = measured["answers"], tower_of(asked)
    key = tower_lesson.answer_key(other)
    said = {k: t(v, lang) if k == "rises" else t("tw_layer", lang, l=v) for k, v in given.items()}
    marks = [t("tw_mark", lang, q=t("tw_k_" + k, lang), a=said[k], ok=lab.mark(given[k] in key[k]["accepted"], lang))
             for k in tower_lesson.AGAIN_QUESTIONS]
    figures = [t("tw_rt_layer", lang, l=p["layer"] + 1, d=f"{p['distance']:.2f}", a=f"{p['adjacent']:.0%}",
                 s=f"{p['special']:.0%}") for p in other["per_layer"]]
    return head + tower_fields(lang, tw["layers"], given, True) + lab.verdict(" · ".join(marks)) + lab.lines(figures)


def check_tower(level: Level, lang: str, progress: dict, attempt: Attempt, asked: dict, data: dict):
    """Right when all four answers are accepted on the new sentences (a layer within the margin of the best counts)."""
    layers = [str(i + 1) for i in range(api.tower()["layers"])]
    given = {k: data.get(f"s_{k}") for k in tower_lesson.AGAIN_QUESTIONS}
    if given["rises"] not in ("yes", "no") or any(given[k] not in layers for k in given if k != "rises"):
        return t("lab_bad", lang)
    key = tower_lesson.answer_key(tower_of(asked))
    return all(given[k] in key[k]["accepted"] for k in given), {"answers": given}


TOWER = lab.Rethink(draw_tower, tower_panel, check_tower)


# --- 3-2: the speed-up at a length the race did not run ----------------------------------------------------------

AGAIN_LENGTHS = (24, 32, 48, 96, 128, 192, 384, 512, 768)  # between and around the race's lengths, none of them


def draw_race(level: Level, lang: str, attempt: Attempt, rng) -> dict:
    """3-2's second prediction: the speed-up at a length the race did not time (read between its points)."""
    return {"T": rng.choice([n for n in AGAIN_LENGTHS if n not in level.lengths])}


def race_panel(level: Level, lang: str, attempt: Attempt, asked: dict, held: dict) -> str:
    measured = held.get("measured")
    guess = held.get("guess", measured["answers"]["guess"] if measured else None)
    locked = guess is not None
    field = lab.number_field("s_guess", t("r_guess", lang, t=asked["T"]), "" if guess is None else format(guess, "g"),
                             *race_room.GUESS_RANGE, unit="×", cls="guess", locked=locked)
    head = lab.question(t("r_rt_setup", lang, t=asked["T"], n=REFERENCE_RUNS))
    if measured is None:
        return head + field + waits.box_of(held, lang, "rethink")
    ref = measured["reference"]
    line = t("r_rt_result", lang, t=asked["T"], n=ref["runs"], lo=f"{ref['lo']:.2f}", hi=f"{ref['hi']:.2f}",
             g=f"{guess:g}", f=f"{measured['factor']:.2f}", within=f"{game.GUESS_FACTORS[0]:g}")
    return head + field + lab.verdict(line, measured=f"{ref['lo']:.4f}-{ref['hi']:.4f}")


def check_race(level: Level, lang: str, progress: dict, attempt: Attempt, asked: dict, data: dict):
    """The guess, then REFERENCE_RUNS races at the new length in the server's lane (the wait box meanwhile): right
    when the guess is within the ★★★ factor of their range (game.GUESS_FACTORS[0])."""
    held = attempt["rethink"]
    guess = held.get("guess") if "waiting" in held else race_room.parse_guess(data.get("s_guess"))
    if guess is None:
        lo, hi = race_room.GUESS_RANGE
        return t("r_bad", lang, lo=f"{lo:g}", hi=f"{hi:g}")
    run, refused = waits.follow(held, lambda: api.race_reference_run(asked["T"]), lang)
    if run is None:
        return progress, {**attempt, "rethink": {k: v for k, v in held.items() if k != "waiting"}}, refused
    if not waits.settled(run):
        return progress, {**attempt, "rethink": {**held, "guess": guess, "waiting": run.id}}, ""
    ref = run.result
    factor, stars = game.guess_stars(guess, ref["lo"], ref["hi"])
    return stars == 3, {"answers": {"guess": guess}, "factor": factor, "reference": ref}


RACE = lab.Rethink(draw_race, race_panel, check_race)


# --- 3-4: the ranking for a seed nobody has trained here ------------------------------------------------------------


def draw_heads(level: Level, lang: str, attempt: Attempt, rng) -> dict:
    """3-4's second prediction: the five models trained afresh with another seed (never the attempt's own)."""
    seed = attempt.get("seed", 0)
    return {"seed": next(s for s in iter(lambda: rng.randrange(1, 2**31), None) if s != seed)}


def heads_panel(level: Level, lang: str, attempt: Attempt, asked: dict, held: dict) -> str:
    measured = held.get("measured")
    ranking = held.get("ranking") or (measured["answers"]["ranking"] if measured else [None] * len(RUNS.sizes.experiment.heads))
    choices = [(str(h), f"h = {h}") for h in RUNS.sizes.experiment.heads]
    locked = held.get("ranking") is not None or measured is not None
    places = [lab.select(f"s_r{i}", t("h_place", lang, i=i + 1), choices, None if r is None else str(r), lang, locked)
              for i, r in enumerate(ranking)]
    head = lab.question(t("h_rt_setup", lang, seed=asked["seed"])) + lab.in_order("places", places)
    if measured is None:
        return head + waits.box_of(held, lang, "rethink")
    accuracy = dict(zip(measured["heads"], measured["accuracy"], strict=True))
    right, total = game.rank_pairs(ranking, accuracy)
    shown = ", ".join(f"h = {h}: {a:.1%}" for h, a in accuracy.items())
    return head + lab.verdict(t("h_result", lang, right=right, total=total, tie=game.TIE)) + lab.note(shown)


def check_heads(level: Level, lang: str, progress: dict, attempt: Attempt, asked: dict, data: dict):
    """The ranking, then the five models trained with the new seed in the server's lane (the wait box meanwhile):
    right when every pair is ordered as measured (accuracies within game.TIE are a tie, either order counts)."""
    held = attempt["rethink"]
    heads = list(RUNS.sizes.experiment.heads)
    given = {f"r{i}": data.get(f"s_r{i}") for i in range(len(heads))}
    ranking = held.get("ranking") if "waiting" in held else heads_room.parse_ranking(given, heads)
    if ranking is None:
        return t("h_bad", lang)
    run, refused = waits.follow(held, lambda: api.heads_run(asked["seed"]), lang)
    if run is None:
        return progress, {**attempt, "rethink": {k: v for k, v in held.items() if k != "waiting"}}, refused
    if not waits.settled(run):
        return progress, {**attempt, "rethink": {**held, "ranking": ranking, "waiting": run.id}}, ""
    r = run.result
    right, total = game.rank_pairs(ranking, dict(zip(r["heads"], r["final_accuracy"], strict=True)))
    return right == total, {"answers": {"ranking": ranking}, "heads": r["heads"], "accuracy": r["final_accuracy"]}


HEADS = lab.Rethink(draw_heads, heads_panel, check_heads)
