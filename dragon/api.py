"""The public API behind the app's endpoints: levels(), play(), hint(), explain() as plain JSON (no Gradio)."""

import functools
from collections.abc import Callable

from dragon import answer_keys
from dragon.checks import brief, check_lang
from dragon.config import HEADS
from dragon.engine import Reading, default_dragon
from dragon.lessons import badge as badge_lesson
from dragon.lessons import crystal_ball as crystal_ball_lesson
from dragon.lessons import facts as facts_table
from dragon.lessons import fusion as fusion_lesson
from dragon.lessons import growing as growing_lesson
from dragon.lessons import head_math as head_math_lesson
from dragon.lessons import long_scroll as long_scroll_lesson
from dragon.lessons import own_sentence as own_sentence_lesson
from dragon.lessons import positions as positions_lesson
from dragon.lessons import tower as tower_lesson
from dragon.levels import repair
from dragon.levels import teacher as teacher_levels
from dragon.levels.claims import measure, silent_heads
from dragon.levels.loader import Level, get_level, load_levels
from dragon.runs import RUNS
from dragon.runtime.lane import Run
from dragon.scoring import as_gates, score, stars
from dragon.scoring import hint as gradient_hint


def slider_level(level_id: str) -> Level:
    level = get_level(level_id)
    if not level.sliders:
        raise ValueError(f"level {level_id} is a {level.kind} level, not a slider level")
    return level


def level_reading(level: Level, lang: str) -> Reading:
    return default_dragon().read(level.text[check_lang(lang)], level.reads_as(lang))


def levels() -> list[dict]:
    """Every level, in play order."""
    return [
        {
            "id": lv.id,
            "chapter": lv.chapter,
            "chapter_title": chapter.title,
            "kind": lv.kind,
            "title": lv.title,
            "sliders": lv.sliders,
            "show": lv.show if lv.sliders else None,
        }
        for chapter in load_levels()
        for lv in chapter.levels
    ]


def play(level_id: str, gates: list[float], lang: str = "zh", hints_used: int = 0) -> dict:
    """Score the gates on a slider level: score 0–100, stars 0–3, and which heads are silent there."""
    level = slider_level(level_id)
    g = as_gates(gates)
    reading = level_reading(level, lang)
    s = score(reading, g, level.target_for(lang))
    return {
        "level": level.id,
        "lang": lang,
        "score": round(s, 2),
        "stars": stars(s, hints_used),
        "gates": [round(float(v), 4) for v in g],
        "silent_heads": silent_heads(reading),
    }


def hint(level_id: str, gates: list[float], lang: str = "zh") -> dict:
    """The autograd gradient's advice: which head to move, which way, and a better gate vector."""
    return hint_level(slider_level(level_id), gates, lang)


def hint_level(level: Level, gates: list[float], lang: str = "zh") -> dict:
    """`hint` for a Level itself (a teacher's level is in no registry)."""
    h = gradient_hint(level_reading(level, lang), gates, level.target_for(lang))
    return {
        "level": level.id,
        "head": h.head,
        "direction": h.direction,
        "gates": h.gates,
        "score": round(h.score, 2),
        "score_after": round(h.score_after, 2),
        "done": h.done,
    }


def explain(level_id: str, lang: str = "zh") -> dict:
    """A level's answer in one language. A slider level: its text, target gates, why, and each claim of the
    narration with the real attention every claimed word receives (its share of that head's attention between
    different words: a word looking at itself is no link; for a claim `from` a word, its share of that word's row to
    the other words; `alone`: words the head hears that look only at themselves). Any other level: its scored
    questions, each with the accepted answers, the measured value and the margin that decides it."""
    return explain_level(get_level(level_id), lang)


def explain_level(level: Level, lang: str = "zh") -> dict:
    """`explain` for a Level itself (a teacher's level is in no registry)."""
    lang = check_lang(lang)
    if not level.sliders:
        return {"level": level.id, "lang": lang, "kind": level.kind, "why": level.why[lang],
                "questions": answer_keys.questions(level, lang)}
    reading = level_reading(level, lang)
    return {
        "level": level.id,
        "lang": lang,
        "kind": level.kind,
        "text": level.text[lang],
        "heads": list(HEADS),
        "target": list(level.target_for(lang)),
        "why": level.why[lang],
        "claims": [
            {
                "head": c["head"],
                "from": c["from"],
                "words": [w["word"] for w in c["words"]],
                "silent": c["silent"],
                "attention": {w["word"]: w["attention"] for w in c["words"]},
                "alone": {w["word"]: w["self"] for w in c["alone"]},
                "loudness": c["loudness"],
            }
            for c in measure(reading, level.claims_for(lang))
        ],
        "silent_heads": silent_heads(reading),
    }


# Teacher levels: one format, checked as shipped levels are (dragon/levels/teacher.py)


def check_level(level) -> dict:
    """A teacher's level (a dict, or its YAML / JSON text) checked: {ok, errors, quality, id, code} — `errors` one
    message per bad field, puzzle condition (with its measured figure) or claim the engine does not bear out;
    `quality` DESIGN.md's figures (all_equal, random_median, near_median, ascent_steps; None when the format is wrong);
    `code` the share code when ok. A level refused for what the engine measured also gets `suggestion` when one is
    found: {level (its data, the text unchanged), changes, id, quality, code} — the nearest level that passes (heads
    silent in the text at 0, claims not borne out dropped, a target too even sharpened in the teacher's order), checked
    as any level is (dragon/levels/repair.py). A pack ({levels: [...]}) gives {ok, errors, levels: [one such result
    each]}, and `suggestion` {code, ids} for the whole pack when each refused level has one."""
    try:
        checked = teacher_levels.check_source(level)
    except teacher_levels.TeacherLevelError as err:
        return {"ok": False, "errors": err.errors, "quality": None}
    repairs = {where: repaired(c) for where, c in checked}

    def result(where: str, c: teacher_levels.Checked) -> dict:
        out = {"ok": c.ok, "errors": list(c.errors), "quality": c.quality,
               "id": c.level.id if c.level is not None else None}
        if c.ok:
            out["code"] = teacher_levels.share_code([c.level])
        elif repairs[where] is not None:
            out["suggestion"] = suggestion_of(repairs[where])
        return out

    if len(checked) == 1 and checked[0][0] == "":
        return result(*checked[0])
    levels = [result(where, c) for where, c in checked]
    errors = [f"{where}: {e}" for where, c in checked for e in c.errors]
    ids = [c.level.id for _, c in checked if c.level is not None]
    if len(set(ids)) != len(ids):
        errors.append("pack: holds the same level twice")
    out = {"ok": not errors, "errors": errors, "levels": levels}
    if not errors:
        try:
            out["code"] = teacher_levels.share_code([c.level for _, c in checked])
        except teacher_levels.TeacherLevelError as err:
            out.update(ok=False, errors=err.errors)
    elif len(set(ids)) == len(ids) and all(c.ok or repairs[where] is not None for where, c in checked):
        pack = [c.level if c.ok else repairs[where].checked.level for where, c in checked]
        try:
            out["suggestion"] = {"code": teacher_levels.share_code(pack), "ids": [lv.id for lv in pack]}
        except teacher_levels.TeacherLevelError:
            pass  # the repaired pack would not fit a link: each level's own suggestion still stands
    return out


def repaired(checked: teacher_levels.Checked) -> repair.Suggestion | None:
    """The nearest passing level to one refused for what the engine measured (None: it passes, its fields are wrong,
    or no repair keeps its text)."""
    if checked.ok or checked.level is None:
        return None
    return repair.suggest(teacher_levels.data_of(checked.level))


def suggestion_of(s: repair.Suggestion) -> dict:
    level = s.checked.level
    return {"level": s.data, "changes": s.changes, "id": level.id, "quality": s.checked.quality,
            "code": teacher_levels.share_code([level])}


# Chapter 3, 并行与融合: inside the formula, the race, fusion, how many heads (each lesson in dragon/lessons/).

def text_reading(text: str, lang: str) -> Reading:
    """The dragon's reading of a player's text; empty text or an unknown lang is a ValueError that says so."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("The text is empty: type a sentence in Chinese or English.")
    return default_dragon().read(text, lang)


def head_index(head: str) -> int:
    name = head.strip().lower() if isinstance(head, str) else head
    if name not in HEADS:
        raise ValueError(f"unknown head {brief(head)}; the heads are {', '.join(HEADS)}")
    return HEADS.index(name)


def token_position(reading: Reading, word: str) -> int:
    """The first token equal to `word` (exactly, else ignoring case); a ValueError lists the tokens otherwise."""
    if isinstance(word, str):
        w = word.strip()
        for match in (lambda t: t == w, lambda t: t.lower() == w.lower()):
            hits = [i for i, t in enumerate(reading.tokens) if match(t)]
            if hits and w:
                return hits[0]
    raise ValueError(f"word {brief(word)} is not a token of the text; its tokens are: {' / '.join(reading.tokens)}")


def head_math(text: str, lang: str, word: str, head: str) -> dict:
    """One head's formula for one word of the text: q, the scores q·k/√d_head for every key (the sink first),
    the softmax row (the map the game shows), the weighted V, the head's W^O slice and its output, with shapes."""
    h = head_index(head)
    reading = text_reading(text, lang)
    out = head_math_lesson.head_math(default_dragon().attention, reading, token_position(reading, word), h)
    return {"lang": reading.analysis.lang, "truncated": reading.analysis.truncated, "device": "cpu", **out}


def fusion(text: str, lang: str = "auto") -> dict:
    """concat → W^O → residual on the text, with W^O and the residual switched on and off: the per-token mean
    cosine of output to input (keep_with_residual, keep_without_residual), and which heads reach each dim."""
    reading = text_reading(text, lang)
    out = fusion_lesson.fusion(default_dragon().attention, reading)
    return {"lang": reading.analysis.lang, "truncated": reading.analysis.truncated, "device": "cpu", **out}


def race(lengths: list[int] | None = None) -> dict:
    """The per-head loop against all heads batched, timed now on the best device at each length (≤ 8 lengths,
    each ≤ 2048): medians in ms, the speed-up, and the matmul FLOPs of each path (equal). It runs in the server's
    lane (dragon/runtime/lane.py), so no other race or training shares its clock."""
    return RUNS.race(lengths)


def long_scroll(lengths: list[int] | None = None, window: int = 8) -> dict:
    """3-5 the long scroll: full attention (softmax(QKᵀ/√d_head)V, its h × T × T scores) against a sliding window of
    `window` words on each side plus one global position, computed in O(T·w), timed now on the best device at each
    length (≤ 8 lengths, each 2…16,384; default 64 … 4,096) in the server's lane: medians and ranges of 5 interleaved
    runs in ms, the score matrices' bytes, the largest difference from the full output, where the curves cross, and
    the dragon's eight heads through a window of 4 words on the lesson's texts (the share of their links kept)."""
    result = RUNS.long_scroll(lengths, window)
    heads = {lang: RUNS.scroll_heads(lang) for lang in ("zh", "en")}
    return {**result, "crossing": long_scroll_lesson.crossing(result), "heads": heads}


def long_scroll_run(lengths: list[int], window: int = 8) -> Run:
    """3-5's measurement for one press of its button, in the lane: full against windowed attention, timed now."""
    return RUNS.long_scroll_run(lengths, window)


def scroll_heads(lang: str) -> dict:
    """The dragon's eight heads through 3-5's window of 4 words on the lesson's texts in one language (made once)."""
    return RUNS.scroll_heads(check_lang(lang))


def race_reference(length: int) -> dict:
    """The speed-up at one length over repeated races on the serving device (run once per server, in the lane, then
    shared): speedups, lo and hi, the range a guess of 3-2 is scored against."""
    return RUNS.race_reference(length)


def race_reference_run(length: int) -> Run:
    """The reference races for one length in the lane (the run already known, if any)."""
    return RUNS.race_reference_run(length)


def race_run(lengths: list[int], guess_at: int) -> Run:
    """3-2's race for one press of its button, in the lane: the race timed now, and the reference range."""
    return RUNS.race_run(lengths, guess_at)


def heads_run(seed: int = 0) -> Run:
    """3-4's five models for this seed in the lane: the run already known for it (queued, training or done), else a
    new one. Only a new seed trains again: seed 0 is trained once per server and shared."""
    return RUNS.heads_run(seed)


def heads_experiment(seed: int = 0) -> dict:
    """Train small models with h = 1, 2, 4, 8, 16 at one d_model on a task of six relations at once: their equal
    parameter counts, loss curves, final loss and accuracy, the device and the seconds it took. A seed gives one
    result, so it is trained once per server, in the lane, and shared (a later caller waits for that run, not for a
    run of its own; only the first one asks for a GPU)."""
    return RUNS.heads_experiment(seed)


def facts() -> dict:
    """The corrected facts table (real models' layers × heads, totals computed), Vaswani et al. Table 3 (A), quiz."""
    return facts_table.load_facts()


def facts_quiz(question_id: str, answer: float | str) -> dict:
    """Check a quiz answer (e.g. GPT-3's total heads) against the facts table: correct, the answer, the lesson's."""
    return facts_table.check_answer(question_id, answer)


# Chapters 4–5, 水晶球与成长 and 徽章: a real pretrained model, the tower of layers, heads growing up, pruning,
# positions, the badge (each lesson in dragon/lessons/).


def crystal_ball(
    text: str, word: str, target: str | None = None, progress: Callable[[float, str], object] | None = None,
    referent: str | None = None,
) -> dict:
    """The real all-MiniLM-L6-v2 (6 layers × 12 heads, read offline from its PyPI package, loaded on the first call):
    `word`'s attention row in every head over the text's words (layer and head counted from 0), what goes to
    [CLS] and [SEP], and best = the head sending `word` most to `target` (or to any other word). With the word the
    player says `word` means (`referent`): `judged`, 4-1's head on this text — its top word, how sure its numbers
    are, and the verdict (right / wrong / unsure)."""
    crystal_ball_lesson.load(progress)
    out = crystal_ball_lesson.crystal_ball(text, word, target)
    if referent is not None:
        head = lesson_head()
        mine = own_sentence_lesson.own_sentence(text, word, head)
        out["judged"] = {"head": head["name"], "layer": head["layer"], "head_index": head["head"],
                         **own_sentence_lesson.judge(mine, referent)}
    return out


@functools.cache
def lesson_head() -> dict:
    """4-1's head: the one sending the crystal level's word to its target on the lesson's own sentence."""
    level = next(lv for c in load_levels() for lv in c.levels if lv.kind == "crystal")
    word, target = level.ask
    return crystal_ball_lesson.crystal_ball(level.text["en"], word, target)["best"]


def tower() -> dict:
    """Per layer of the real model, over the shipped sentences: mean attention distance in words, the share to the
    previous / next word and to [CLS] / [SEP], per head too, and what the numbers show."""
    return tower_lesson.tower()


def public_seed(seed: object) -> int:
    """A seed a public caller may ask for: 0 … 2³¹ − 1 (a class exam trains seeds above them, which no caller can)."""
    return growing_lesson.check_public_seed(seed)


def grow_run(steps: int | None = None, seed: int = 0) -> Run:
    """4-3's eight heads trained for (steps, seed) in the lane: the run already known for them, else a new one
    (seed 0 at the app's steps is trained once per server; 4-4 prunes that very model)."""
    return RUNS.grow_run(steps, seed)


def grow(steps: int = 600, seed: int = 0, progress: Callable[[float, str], object] | None = None) -> dict:
    """Eight heads trained live from random weights on six relations (steps 30…3000): loss and specialisation
    curves, snapshots of every head's map labelled random → faint → clear → settled by measured specialisation.
    Trained once per server for (steps, seed), in the lane."""
    return RUNS.grow(steps, seed, progress)


def prune(active: list[int], seed: int = 0) -> dict:
    """4-3's trained model (that seed) with heads switched on (1) and off (0): its accuracy and the full accuracy."""
    return RUNS.prune(active, seed)


def prune_best(seed: int = 0) -> dict:
    """The pruning answer: the most heads off at ≥ 90 % of full accuracy over all 2⁸ subsets, and the most alike
    pair of heads."""
    return RUNS.prune_best(seed)


def heal(active: list[int] | None = None, seed: int = 0) -> dict:
    """4-4's heal: 4-3's model (that seed) pruned to these switches (None: the best pruning) and fine-tuned for 300
    steps with the switched-off heads held at zero, beside the full model given the same steps: pruned, healed, full
    and full-after accuracy, back_share (how much of what the pruning lost came back) and both accuracy curves."""
    return RUNS.heal(active, seed)


def stability(seed: int = 0) -> dict:
    """4-5's grid: 4-3's task trained with 1 head and with 8 heads (d_model 64) at four learning rates on three seeds
    (seed, seed + 1, seed + 2): every run's final loss, accuracy, share of its model's best loss fall and whether it
    failed; the fail counts, the rate where failures begin, the accuracy grid and a failed and a good run's curves."""
    return RUNS.stability(seed)


def stability_run(seed: int = 0) -> Run:
    """4-5's grid from this first seed as a run of the lane that a page follows (seed 0: made once per server)."""
    return RUNS.stability_run(seed)


def router(seed: int = 0) -> dict:
    """4-6's heads on demand: 4-3's task read by eight heads that a learned router keeps k of, word by word, trained
    for k = 1, 2, 4, 8 on seeds seed … seed + 2: accuracy per k and seed, the mean, its share of the all-heads
    accuracy, the heads' compute per k and which heads each word of a held-out sequence called (k = 2, first seed)."""
    return RUNS.routing(seed)


def router_run(seed: int = 0) -> Run:
    """4-6's routed models as a run of the lane that a page follows (seed 0: made once per server)."""
    return RUNS.routing_run(seed)


def positions(text: str, lang: str = "auto", other: str | None = None) -> dict:
    """The text and its subject/object swap (or `other`, the same tokens reordered) through the dragon without
    positions (outputs equal after un-permuting, ~1e-7) and with sinusoidal positions added (they differ)."""
    if lang != "auto":
        check_lang(lang)
    if not isinstance(text, str) or not text.strip():
        raise ValueError("The text is empty: type a sentence in Chinese or English.")
    if other is not None and (not isinstance(other, str) or not other.strip()):
        raise ValueError("The second text is empty: leave it out, or type the same words in another order.")
    return positions_lesson.positions(text, lang, other)


def badge(progress: dict, name: str | None = None, lang: str = "zh") -> dict:
    """The 多头注意力徽章 as SVG: each head glows by the player's mastery (mean stars over the levels whose `lang`
    text exercises it); the name is escaped and cut at 24 characters."""
    return {
        "svg": badge_lesson.badge_svg(progress, name, lang),
        "mastery": badge_lesson.mastery(progress, lang),
        "levels": {h: list(ids) for h, ids in badge_lesson.head_levels(lang).items()},
        "name": badge_lesson.clean_name(name),
        "lang": lang,
    }
