"""Chapters 4–5's findings held to the live computation: every sentence the page may say about a measurement is a
Finding with its condition (dragon/findings.py); here each computation runs for real — the tower (one run: a fixed
model, deterministic), 4-3's training with three seeds and 4-4's pruning of those very models, 5-1's positions on the
level's texts in both languages, the crystal ball on its level's sentence and on the known-referent sentences — and
no sentence shown is false, no group lacks its one true sentence. Each key fact is also checked here by the test's
own arithmetic, not by the Finding's condition, and a coverage test keeps every sentence key that states a finding
in some FINDINGS tuple.

Training: the app trains 600 steps with seed 0 (dragon/runs.py FULL.grow_steps), shared once per server and with the
other tests of the session (dragon/runtime/shared.py); seeds 1 and 2 are the same full 600-step run the API gives for
those seeds, not a shorter one, because the sentences are about the trained state (which heads split or switched, what
pruning costs); each takes about 6 s on one CPU thread, and their pruning about 4 s. 4-4's heal (the heads left on after
the best pruning, fine-tuned with the others held at zero) is measured on the same three models here, in the module that
trains them, so that no other test process trains them again."""

import itertools
import re
from pathlib import Path

import pytest
import torch
from torch.nn import functional as F

from dragon import api, findings, game
from dragon.analyze import analyze
from dragon.engine import default_dragon
from dragon.features import embed
from dragon.lessons import crystal_ball, growing, healing, own_sentence, positions, pruning, router, stability, tower
from dragon.lessons.pruning import best_pruning, trained
from dragon.levels.loader import get_level, load_levels
from dragon.margins import SHARE_MARGIN
from dragon.runs import FULL
from tests.test_own_sentence import KNOWN
from ui.rooms import crystal as crystal_room
from ui.rooms import findings_text
from ui.rooms import grow as grow_room
from ui.rooms import positions as positions_room
from ui.rooms import prune as prune_room
from ui.rooms import registry as rooms
from ui.rooms import tower as tower_room
from ui.rooms.loading import SEED
from ui.strings import STRINGS, t

SEEDS = (0, 1, 2)
ROOT = Path(__file__).resolve().parent.parent
ALL = {
    "tower": tower.FINDINGS, "growing": growing.FINDINGS, "pruning": pruning.FINDINGS,
    "pruning_try": pruning.TRY_FINDINGS, "positions": positions.FINDINGS, "crystal_ball": crystal_ball.FINDINGS,
    "own_sentence": own_sentence.FINDINGS, "healing": healing.FINDINGS, "stability": stability.FINDINGS,
    "router": router.FINDINGS,
}
PREFIXES = ("c_", "tw_", "g_", "stage_", "p_", "pos_", "b_", "hl_", "fl_", "ro_")
# chapter 4–5 keys that state no finding: labels, questions, buttons, errors, list items of a finding's sentence, and
# lines that only insert a number the computation returns (or the player's own stars), each tested where it is built
NOT_FINDINGS = {
    "labels and questions": {
        "c_grid", "c_head", "c_key", "c_try_title", "c_try_text", "c_try_word", "c_try_means", "c_try_go",
        "c_try_real", "c_try_dragon", "c_specials", "c_licence", "tw_q_rises", "tw_q_adjacent", "tw_q_quiet",
        "tw_layer", "tw_k_rises", "tw_k_adjacent", "tw_k_quiet", "tw_k_nearest", "tw_read_q", "tw_chart", "tw_x",
        "tw_y", "tw_model", "tw_uniform", "tw_adj_title", "tw_special_title", "g_go", "g_snapshot", "g_which",
        "g_head", "g_loss", "g_loss_y", "g_loss_name", "g_spec", "g_spec_y", "g_spec_name", "g_chance", "g_x",
        "stage_random", "stage_faint", "stage_clear", "stage_settled", "p_measure", "p_submit",
        "p_by_off", "p_off_k", "pos_q_free", "pos_q_pos", "pos_same", "pos_differ", "pos_k_free", "pos_k_pos",
        "pos_read_q", "pos_read_label", "pos_read0", "pos_read1", "pos_read2", "pos_t_free", "pos_t_with",
        "pos_next", "b_name", "b_go", "b_svg", "b_png", "tw_mark", "c_tag_picked", "c_tag_best", "c_exam",
        "c_detail_help", "c_detail_title", "c_rank_title", "pos_rt_setup", "pos_rt_back", "pos_rt_place",
        "pos_rt_heads", "pos_rt_k_back", "pos_rt_k_place", "pos_rt_k_heads", "tw_rt_setup", "tw_rt_nearest",
        "b_why_title", "b_why_head", "b_why_light", "b_why_levels",
        "hl_q", "hl_label", "hl_back_little", "hl_back_some", "hl_back_most", "hl_go", "hl_chart", "hl_x", "hl_y",
        "hl_pruned", "hl_full",
        "fl_setup", "fl_q_who", "fl_who_one", "fl_who_eight", "fl_who_same", "fl_q_rate", "fl_rate_at", "fl_rate_none",
        "fl_go", "fl_k_who", "fl_k_rate", "fl_read_q", "fl_read_label", "fl_read_smaller", "fl_read_more_heads",
        "fl_read_fewer_heads", "fl_grid_title", "fl_rate", "fl_row", "fl_cell", "fl_chart", "fl_good", "fl_failed",
        "fl_x", "fl_y", "fl_tip", "fl_chance",
        "ro_setup", "ro_q_k", "ro_k_opt", "ro_go", "ro_read_q", "ro_read_label", "ro_read0", "ro_read1", "ro_read2",
        "ro_read3", "ro_chart", "ro_x", "ro_y", "ro_kept", "ro_compute_name", "ro_tip", "ro_gates_title", "ro_word",
        "ro_head",
    },
    "list items and feature names inside a finding's sentence": {
        "g_switch_item", "g_split_item", "p_alone_item", "p_twin_item", "p_lonely_item", "pos_f_early", "pos_f_pron",
        "pos_f_ante", "pos_f_clause",
    },
    "errors, loading and progress": {
        "p_none_off", "c_loading", "p_loading", "c_err_empty", "c_err_long", "c_err_many", "c_err_pieces", "c_err_none",
        "c_err_lang", "c_err_word", "c_err_referent", "c_err_means", "c_err_other", "c_try_error", "c_try_bad",
        "c_try_bad_word",
    },
    "the rules of a verdict or a stage (definitions, not measurements)": {"c_v_rule", "g_rule", "b_why_labs"},
    "a number the computation returns, inserted as it is (tested where it is built), or the player's own score": {
        "c_intro", "c_result", "c_model", "tw_setup", "tw_read_result", "tw_result", "g_setup", "g_done",
        "g_measured", "g_result", "g_from_step", "p_goal", "p_measured", "pos_result", "pos_read_result", "b_made",
        "b_share", "pos_rt_mark", "tw_rt_layer", "hl_result", "fl_result", "fl_measured", "fl_read_result",
        "ro_result", "ro_read_result", "fl_grid_note",
        "c_prev", "c_next",  # a head's label, chosen by heads_grid.neighbour_of on the real row (test_heads_instrument)
    },
}


def truthful(rules: tuple, m: dict) -> None:
    assert findings.untrue(rules, m) == []


def text_of(html: str) -> str:
    import html as html_lib

    return html_lib.unescape(re.sub(r"<[^>]+>", " ", html))


# --- 4-2 the tower: one run of a fixed model -------------------------------------------------------------------


@pytest.fixture(scope="module")
def tw() -> dict:
    return api.tower()


@pytest.mark.slow  # the real model's run
def test_tower_findings_hold(tw: dict) -> None:
    m = tower.measured(tw)
    truthful(tower.FINDINGS, m)
    d = [p["distance"] for p in tw["per_layer"]]
    rises = all(b > a for a, b in itertools.pairwise(d))  # the test's own reading of the per-layer distances
    assert findings.pick(tower.FINDINGS, "rises", m) == ("tw_rises" if rises else "tw_not_steady")
    assert not rises and min(b - a for a, b in itertools.pairwise(d)) < -0.5  # today: layer 1 → 2 falls 0.63 words
    adjacent = [p["adjacent"] for p in tw["per_layer"]]
    near = [i for i, v in enumerate(adjacent) if v >= max(adjacent) - 0.05]  # the layers the game accepts
    shallow = near == list(range(len(near))) and len(near) <= 3
    assert findings.pick(tower.FINDINGS, "verdict", m) == ("tw_verdict_yes" if shallow else "tw_verdict_no")
    lines = tower_room.tower_lines(tw, "en")  # the page says exactly the sentences that hold, filled in
    fill = findings_text.tower_fill(m, "en")
    assert lines == [t(k, "en", **fill) for k in findings.shown(tower.FINDINGS, m) if "." not in k]
    assert t("tw_rises", "en") not in lines  # the lesson's story is not told where the numbers deny it


@pytest.mark.slow  # the real model's run
def test_tower_sink_sentence_is_measured(tw: dict) -> None:
    """[CLS]/[SEP] park like our dragon's sink from a layer on — but [CLS]'s values, measured here from the weights
    (the V rows of each layer's packed projection), are short and not zero, as the sentence says."""
    rows = tw["per_layer"]
    start = next(i for i in range(len(rows)) if all(p["special"] >= 0.4 for p in rows[i:]))
    assert tower.measured(tw)["sink"][0] == start and all(p["cls"] > p["sep"] for p in rows[start:])
    bert, vocab = crystal_ball.load()
    ratio = torch.zeros(len(rows), 2)  # (L, [CLS] / [SEP]) value length over a word's, mean over heads and sentences
    sentences = tower.load_sentences()
    for s in sentences:
        ids = torch.tensor([vocab.encode(vocab.words(s))])
        with torch.inference_mode():
            T = ids.shape[1]
            x = bert.norm(bert.word(ids) + bert.position(torch.arange(T)) + bert.segment(torch.zeros_like(ids)))
            for li, layer in enumerate(bert.layers):
                d, h = layer.attention.d_model, layer.attention.n_heads
                w, b = layer.attention.in_proj.weight[2 * d :], layer.attention.in_proj.bias[2 * d :]
                v = F.linear(x[0], w, b).view(ids.shape[1], h, d // h).norm(dim=-1)  # (T, h)
                words = v[1:-1].mean(0)
                ratio[li] += torch.stack([(v[0] / words).mean(), (v[-1] / words).mean()]) / len(sentences)
                x, _ = layer(x)
    cls = ratio[start:, 0]
    assert 0.01 < float(cls.min()) and float(cls.max()) < 0.25  # short, not zero: "nearly, not quite, silence"
    parking = sum(v >= 0.5 for row in tw["per_head"]["special"] for v in row)
    assert parking >= 72 // 4  # "many heads park half or more on [CLS]/[SEP]": 33 of the 72 today
    assert [round(float(r), 3) for r in ratio[:, 0]] == [round(p["cls_value"], 3) for p in rows]
    said = " ".join(tower_room.tower_lines(tw, "en"))
    assert "not zero" in said and f"{float(cls.min()):.0%}–{float(cls.max()):.0%}" in said
    why = get_level("4-2").why["en"]
    assert "not zero" in why and "just like" not in why


# --- 4-3 growing up and 4-4 pruning: three seeds, the app's full run ------------------------------------------


@pytest.fixture(scope="module", params=SEEDS)
def grown(request: pytest.FixtureRequest) -> tuple[int, growing.GatedReader, dict]:
    model, run = growing.shared(FULL.grow_steps, request.param)
    return request.param, model, run


@pytest.mark.slow
def test_growing_findings_hold(grown: tuple) -> None:
    seed, _, run = grown
    m = growing.measured(run)
    truthful(growing.FINDINGS, m)
    switched = set()  # the test's own reading: a head whose favourite changed after it first held 0.35
    for h in range(run["heads"]):
        seen = [run["offsets_by_head"][i][h] for i in range(len(run["steps"]))
                if any(run["specialisation_by_head"][j][h] >= growing.FAINT_BELOW for j in range(i + 1))]
        if len(set(seen)) > 1:
            switched.add(h)
    assert set(m["switches"]) == switched
    body = text_of(grow_room.grow_charts(run, "en"))
    assert (t("g_kept", "en", f="0.35") in body) == (not switched)
    assert all(f"head {h + 1}: " in body for h in switched)  # every head that switched is named
    if seed == 0:
        assert switched == {0, 4}  # measured: head 1 went 11 → 2 back, head 5 flickers between 11 and 1 back
    profile = torch.tensor(run["final"]["profile"])
    second = profile.sort(dim=1, descending=True).values[:, 1]
    assert ("split their attention" in body) == bool((second >= 0.25).any())
    loss, spec = run["loss"], run["specialisation"]
    assert loss[-1] < loss[0] / 10 and spec[-1] > 5 * spec[0] and (profile.max(dim=1).values >= 0.5).sum() > 4
    cards = growing.stage_snapshots(run)
    attempt = {"level": "4-3", "run": run, "order": list(range(len(cards)))}
    ask = grow_room.grow_panel(get_level("4-3"), "en", game.new_progress(), attempt, "")
    assert f"The {len(cards)} snapshots below" in text_of(ask) and "average map" not in text_of(ask)
    assert all(len(c["maps"]) == run["heads"] for c in cards) and len({c["step"] for c in cards}) == len(cards)


def one_off_by_forward(model: growing.GatedReader, seed: int) -> torch.Tensor:
    """(h, R) held-out accuracy per relation with one head gated off, from the model's own forward pass."""
    ids, answers = pruning.held_out(seed)
    h = model.mha.n_heads
    out = []
    with torch.no_grad():
        for i in range(h):
            logits, _ = model(ids, 1 - torch.eye(h)[i])
            out.append((logits.argmax(-1) == answers).float().mean(dim=(0, 1)))
    return torch.stack(out)


@pytest.mark.slow
def test_pruning_findings_hold(grown: tuple) -> None:
    seed, model, _ = grown
    best = api.prune_best(seed)
    m = pruning.measured(best)
    truthful(pruning.FINDINGS, m)
    acc = one_off_by_forward(model, seed)  # (h, R)
    cost = 100 * (best["full_accuracy"] - acc.mean(dim=1))
    assert cost.tolist() == pytest.approx(m["cost"], abs=0.2)
    a, b = m["pair"]
    maps = F.normalize(pruning.mean_maps(model, seed).flatten(1), dim=1)
    sim = maps @ maps.T
    sim.fill_diagonal_(-2)
    assert divmod(int(sim.argmax()), sim.shape[0]) in ((a, b), (b, a))  # the most alike pair, recomputed
    cheap = [i for i in (a, b) if cost[i] < 5]
    said = text_of(prune_room.prune_answer(best, "en", {"measured": api.prune(best["patterns"][0], seed)}))
    if len(cheap) == 1:
        assert f"only head {cheap[0] + 1} costs under 5 points" in said
    assert ("either goes" in said) == (len(cheap) == 2) and ("neither goes" in said) == (not cheap)
    if seed == 0:  # measured once by hand: removing head 6 cost 2.9 points, head 8 cost 9.9
        assert (a, b) == (5, 7) and round(float(cost[5]), 1) == 2.9 and round(float(cost[7]), 1) == 9.9
    lone = {(i, r) for i in range(acc.shape[0]) for r in range(acc.shape[1]) if acc[i, r] < 3 / 16}
    assert {(i, best["relations"].index(r)) for i, r, _ in m["lone"]} == lone and lone
    fav = best["offsets"]
    for pattern in best["patterns"]:
        off = [i for i, on in enumerate(pattern) if not on]
        assert all(any(pattern[j] and fav[j] == fav[i] for j in range(len(fav))) for i in off)  # each has a twin on
        assert not {i for i, _ in lone} & set(off)  # no lone carrier is switched off
        assert api.prune(pattern, seed)["reached"] and api.prune(pattern, seed)["accuracy"] < best["full_accuracy"]
    tried = api.prune(best["patterns"][0], seed)
    assert findings.pick(pruning.TRY_FINDINGS, "goal", tried) == "p_reached"
    assert findings.pick(pruning.TRY_FINDINGS, "goal", api.prune([0] * 8, seed)) == "p_missed"


# --- 5-1 positions, both languages ----------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_positions_findings_hold(lang: str) -> None:
    text = get_level("5-1").text[lang]
    p = api.positions(text, lang)
    m = positions.measured(p)
    truthful(positions.FINDINGS, m)
    a, _ = positions.read_tokens(text, lang)
    perm = p["permutation"]
    cfg = default_dragon().config
    x_a, x_b = embed(a.tokens, cfg.d_model, cfg.seed), embed(tuple(a.tokens[i] for i in perm), cfg.d_model, cfg.seed)
    with torch.no_grad():
        r_a, r_b = default_dragon().forward(x_a), default_dragon().forward(x_b)
    out = float((r_b.out[1:] - r_a.out[1:][perm]).abs().max())
    heads = float((r_b.fused[1:] - r_a.fused[1:][perm]).abs().max())
    given = float((x_b[1:] - x_a[1:][perm]).abs().max())
    assert heads < 1e-5 < given and out == pytest.approx(given, abs=1e-5)  # as built: the residual's input, not heads
    free_a, free_b = positions.position_free(a.tokens), positions.position_free(tuple(a.tokens[i] for i in perm))
    assert torch.equal(free_b[1:], free_a[1:][perm])  # "we take away everything about position": a's rows, reordered
    said = text_of(positions_room.positions_numbers(p, lang))
    if lang == "en":
        assert "largest absolute difference between matching output numbers" in said and "by the residual" in said
        assert "“early in the text”" in said


# --- 4-1 the crystal ball: the level's sentence and the known-referent ones -----------------------------------


@pytest.mark.slow  # the real model's run
def test_crystal_ball_findings_hold_on_the_level() -> None:
    level = get_level("4-1")
    word, target = level.ask
    r = api.crystal_ball(level.text["en"], word, target)
    truthful(crystal_ball.FINDINGS, crystal_ball.measured(r))
    reading = crystal_ball.read(level.text["en"])
    b = r["best"]
    row = reading.maps[b["layer"], b["head"], r["position"] + 1, 1:-1].clone()
    row[r["position"]] = -1
    assert reading.tokens[int(row.argmax())] == target  # the head found sends the word most to the target
    assert torch.allclose(reading.maps.sum(-1), torch.ones(()), atol=1e-4)  # words + [CLS] + [SEP] = the whole row
    attempt = {"level": "4-1", "pick": [b["layer"], b["head"]], "stars": 3}
    body = text_of(crystal_room.crystal_panel(level, "en", game.new_progress(), attempt, ""))
    assert "[CLS]/[SEP] are left out of the bars" in body and "whole row for" not in body


@pytest.mark.parametrize("sentence,word,means", KNOWN)
def test_own_sentence_findings_hold(sentence: str, word: str, means: str | None) -> None:
    mine = own_sentence.own_sentence(sentence, word, api.lesson_head())
    mine["judged"] = own_sentence.judge(mine, means or "is")
    m = own_sentence.measured(mine)
    truthful(own_sentence.FINDINGS, m)
    j = mine["judged"]
    verdict = findings.pick(own_sentence.FINDINGS, "verdict", m)
    assert verdict == {"right": "c_v_right", "wrong": "c_v_wrong"}.get(j["verdict"], f"c_v_{j['reason']}")
    tags = default_dragon().read(sentence, "en").analysis.tokens
    q = max(i for i, tok in enumerate(tags) if tok.text.lower() == word.lower())
    nouns = [tok.text.lower() for tok in tags[:q] if tok.pos == "noun"]
    remarks = [k for k in findings.shown(own_sentence.FINDINGS, m) if k in
               ("c_try_nearest", "c_try_past", "c_try_later", "c_try_other")]
    assert len(remarks) <= 1 and (remarks == []) == (not j["sure"] or not nouns)
    if remarks == ["c_try_nearest"]:
        assert j["top"].lower() == nouns[-1]
    d = analyze(sentence, "en")
    ctx = d["heads"].index("context")
    sink = d["sink"][ctx][q]
    ranked = sorted(((v, i) for i, v in enumerate(d["attention"][ctx][q]) if i != q), reverse=True)
    (top, at), second = ranked[0], (ranked[1][0] if len(ranked) > 1 else 0.0)
    heard = top >= own_sentence.MARGIN and sink <= top  # the real head's rule: a share, above the sink ([CLS]/[SEP])
    if not heard:
        want = "c_try_context_none" if sink >= 0.5 else "c_try_context_quiet"
    elif top - second < own_sentence.MARGIN:
        want = "c_try_context_flat"  # the top word does not lead the next by the margin: unsure, as for the real head
    else:
        want = "c_try_context_right" if d["tokens"][at].lower() == str(means).lower() else "c_try_context_wrong"
    assert findings.pick(own_sentence.FINDINGS, "context", m) == want
    html = crystal_room.try_result("en", mine, api.lesson_head())
    assert "here too" not in html and "also gives" not in html  # the rule-built head is judged on its own


def test_the_lesson_sentence_gives_the_nearest_noun_and_the_referent_alike() -> None:
    """c_try_nearest says that on the lesson's sentence "nearest noun before" and "what it means" agree: measured."""
    case = own_sentence.lesson_case()
    assert case == {"target": "students", "nearest_noun": "students", "top": "students"}


def test_verdict_groups_have_exactly_one_sentence_on_every_case() -> None:
    """The verdict and context alternatives partition the measurements, including made-up ones the known sentences
    never reach (each alternative reached at least once)."""
    seen = set()
    for specials, top_w, margin, agree, ctx_w, sink, lead in itertools.product(
        (0.1, 0.5), (0.3, 0.6), (0.01, 0.2), (True, False), (0.01, 0.6), (0.2, 0.9), (0.01, 0.2)
    ):
        m = {"specials": specials, "top_w": top_w, "margin": margin, "agree": agree, "context_w": ctx_w,
             "context_sink": sink, "context_agrees": agree, "times": 1, "noun": None, "context_lead": lead}
        seen.add(findings.pick(own_sentence.FINDINGS, "verdict", m))
        seen.add(findings.pick(own_sentence.FINDINGS, "context", m))
    assert seen == {f.key for f in own_sentence.FINDINGS if f.group in ("verdict", "context")}


# --- coverage: every sentence key that states a finding is a Finding ------------------------------------------


def test_every_finding_key_is_a_sentence_or_a_level_narration() -> None:
    levels = {lv.id: lv for c in load_levels() for lv in c.levels}
    for name, rules in ALL.items():
        for f in rules:
            if "." in f.key:
                level, field = f.key.split(".")
                assert level in levels and getattr(levels[level], field)["en"], (name, f.key)
            else:
                assert f.key in STRINGS, (name, f.key)


def test_every_chapter_four_and_five_sentence_is_a_finding_or_says_why_not() -> None:
    keys = {k for k in STRINGS if k.startswith(PREFIXES)}
    listed = {f.key for rules in ALL.values() for f in rules}
    exempt = set().union(*NOT_FINDINGS.values())
    assert keys - listed - exempt == set(), "a new chapter 4–5 sentence: make it a Finding or say why it is none"
    assert not listed & exempt and exempt <= keys


def test_chapter_four_and_five_narration_that_states_a_measurement_is_a_finding() -> None:
    """Each story and why of chapters 4–5 is an always-shown Finding (held above) or states no measurement: 5-2's
    speak of the player's own stars, 4-5's quotes the lesson's two claims that its grid then measures."""
    always = {f.key for rules in ALL.values() for f in rules if f.always}
    # 4-5's and 4-6's stories quote the lesson's claims that their runs then measure
    no_measurement = {"5-2.story", "5-2.why", "4-5.story", "4-6.story"}
    fields = {f"{lv.id}.{k}" for c in load_levels() if c.number >= 4 for lv in c.levels for k in ("story", "why")}
    assert sorted(fields - always - no_measurement) == [], "narration that may state a measurement, no Finding"


def test_the_page_picks_grouped_sentences_only_through_findings() -> None:
    """No UI module names a grouped sentence's key itself (it would be choosing it by hand): they come from pick or
    shown. The check can fail: the old `t("tw_rises" if … else "tw_not_steady")` named both."""
    grouped = {f.key for rules in ALL.values() for f in rules if f.group}
    rooms_4_5 = ("loading", "crystal", "tower", "grow", "prune", "positions", "badge", "findings_text")
    for name in rooms_4_5:
        src = (ROOT / "ui" / "rooms" / f"{name}.py").read_text(encoding="utf-8")
        assert {k for k in grouped if f'"{k}"' in src} == set(), name
    old = 't("tw_rises" if f["distance_rises_every_layer"] else "tw_not_steady", lang)'
    assert {k for k in grouped if f'"{k}"' in old} == {"tw_rises", "tw_not_steady"}


def test_our_context_head_is_judged_by_the_real_heads_rule() -> None:
    """One verdict rule for every head judged: our Context head's top word is its answer only when it leads the next
    word by MARGIN (and takes more than its sink), as the real head's must; 0.51 against 0.49 is unsure for both."""
    base = {"context_w": 0.51, "context_sink": 0.1, "context_agrees": True, "context_lead": 0.02}
    assert findings.pick(own_sentence.FINDINGS, "context", base) == "c_try_context_flat"
    assert findings.pick(own_sentence.FINDINGS, "context", {**base, "context_lead": 0.3}) == "c_try_context_right"
    assert findings.pick(own_sentence.FINDINGS, "context", {**base, "context_sink": 0.6}) == "c_try_context_none"
    real = own_sentence.judge({"tokens": ["dog", "bone", "it"], "row": [0.51, 0.49, 0.0], "position": 2,
                               "specials": 0.0}, "dog")
    assert real["verdict"] == "unsure" and real["reason"] == "flat"


# --- 4-4's heal: heads that cover for each other, on the three seeds' models --------------------------------------


@pytest.fixture(scope="module")
def heals() -> list[dict]:
    """The heal of 4-4's answer (its best pruning) on each seed, as the level measures it (the server's run: the page's
    heal below finds it done)."""
    return [api.heal(None, seed) for seed in SEEDS]


@pytest.mark.slow
def test_a_switched_off_head_stays_off_while_the_rest_are_tuned(heals: list[dict]) -> None:
    model, _ = trained(0)
    pattern = best_pruning(0)["patterns"][0]
    before = {k: v.clone() for k, v in model.state_dict().items()}
    healing.heal(pattern, 0, steps=20, device=torch.device("cpu"))
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())  # 4-3's shared model is untouched
    r = heals[0]
    assert r["active"] == pattern and r["curves"]["pruned"][0] == r["pruned_accuracy"]
    assert r["pruned_accuracy"] < r["full_accuracy"]  # the pruning cost something before the heal


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.slow
def test_the_heal_is_measured_against_the_full_model_given_the_same_steps(heals: list[dict], seed: int) -> None:
    r = heals[seed]
    assert r["steps"] == healing.HEAL_STEPS and len(r["curves"]["pruned"]) == len(r["curve_steps"])
    lost = r["full_after_accuracy"] - r["pruned_accuracy"]
    assert r["lost"] == pytest.approx(lost, abs=1e-4)
    assert r["back_share"] == pytest.approx((r["healed_accuracy"] - r["pruned_accuracy"]) / lost, abs=1e-3)
    assert findings.untrue(healing.FINDINGS, healing.measured(r)) == [], r


@pytest.mark.slow
def test_the_heals_question_is_decided_by_its_margin(heals: list[dict]) -> None:
    (q,) = healing.questions(heals)
    shares = [r["back_share"] for r in heals]
    assert q["measured"] == shares and q["accepted"]
    for share in shares:  # every seed's own bucket is accepted, and any bucket within the margin of it
        assert healing.back_bucket(share) in q["accepted"]
        for nudge in (-SHARE_MARGIN, SHARE_MARGIN):
            assert healing.back_bucket(min(max(share + nudge, 0), 1)) in q["accepted"]
    assert len(q["accepted"]) < len(healing.BACK)  # some answer is wrong: the question can be failed


@pytest.mark.parametrize("active, message",
                         [([1] * 7, "list of 8 switches"), ([1] * 7 + [2], r"1 \(on\) or 0 \(off\)")])
@pytest.mark.slow
def test_bad_switches_are_clear_errors(active: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        healing.heal(active, 0, steps=10)


@pytest.mark.slow
def test_bad_steps_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="steps must be in 10…2000"):
        healing.heal([1] * 8, 0, steps=5)


@pytest.mark.slow
def test_the_page_heals_the_answers_pruning_after_the_level_and_scores_nothing(heals: list[dict]) -> None:
    """4-4 played: the answer submitted, then the heal asked (a bad guess refused), measured in the lane and checked
    against the measured share by its margin; the level's stars and the progress stay the pruning's."""
    assert SEED in SEEDS
    r = heals[SEEDS.index(SEED)]
    state, saved = {"level": "4-4", "lang": "en"}, game.save(game.new_progress())
    best = api.prune_best(SEED)
    switches = {f"h{i}": str(a) for i, a in enumerate(best["patterns"][0])}
    done = rooms.answer("submit", state, saved, switches)
    assert done["session"]["lab"]["stars"] == 3 and 'data-act="heal"' in done["lab"]["body"]
    assert rooms.answer("heal", state, saved, {"back": "most"}) == {}  # before the answer: no heal
    refused = rooms.answer("heal", done["session"], done["saved"], {"back": "all of it"})
    assert "heal" not in str(refused.get("session", {}).get("lab", {})) and "lab" in refused
    (q,) = healing.questions([r])
    for guess in healing.BACK:
        out = rooms.answer("heal", done["session"], done["saved"], {"back": guess})
        lab = out["session"]["lab"]
        assert lab["heal"] == r and lab["heal_guess"] == guess and lab["stars"] == 3 and "saved" not in out
        marked = re.search(r"Your guess: [^<]*? ([✓✗])\.", out["lab"]["body"]).group(1)
        assert (marked == "✓") == (guess in q["accepted"]), guess
        assert f"{r['healed_accuracy']:.1%}" in out["lab"]["body"]
    assert rooms.answer("heal", out["session"], done["saved"], {"back": "most"}) == {}  # one heal an attempt
