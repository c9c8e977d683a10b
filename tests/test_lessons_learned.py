"""Chapters 4–5 through the API: the real model's heads, the tower, heads growing up, pruning, positions, the badge."""

import io
import math
import socket
import xml.etree.ElementTree as ET

import pytest
import torch

from dragon import api
from dragon.config import HEADS
from dragon.game import new_progress
from dragon.lessons import badge, crystal_ball, growing, pruning
from dragon.lessons.minilm.bert import read_safetensors
from dragon.lessons.minilm.wordpiece import WordPiece

EN = "The teacher told the students that they should study hard."
# sentence-transformers 6.2.0 on the same package (HF_HUB_OFFLINE=1): model.encode([EN])[0][:8], normalised
REFERENCE_EMBEDDING = [-0.015537, 0.020497, -0.022729, 0.08614, -0.072985, -0.029108, 0.062417, 0.04367]
REFERENCE_THEY_STUDENTS = 0.968507  # transformers 5.24 BertModel, eager attention: layer 4, head 2, they → students


# 4-1 Crystal ball


@pytest.fixture(scope="module")
def loaded():
    """The first load of the module, with the network unreachable: any connection attempt fails the test."""
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("TRANSFORMERS_OFFLINE", "1")

    def refuse(*args, **kwargs):
        raise AssertionError(f"network use while loading the model: {args}")

    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket, "create_connection", refuse)
    crystal_ball._bert.cache_clear()
    crystal_ball._vocab.cache_clear()
    crystal_ball.read.cache_clear()
    seen: list[float] = []
    bert, vocab = crystal_ball.load(lambda f, _: seen.append(f))
    yield bert, vocab, seen
    mp.undo()


@pytest.mark.slow  # loads the real model
def test_model_loads_offline_with_six_layers_of_twelve_heads(loaded) -> None:
    bert, vocab, seen = loaded
    assert (bert.cfg.n_layers, bert.cfg.n_heads, bert.cfg.d_model) == (6, 12, 384)
    assert len(vocab.ids) == 30522 and seen[0] == 0 and seen[-1] == 1
    assert 0 < crystal_ball.load_seconds() <= 10  # goal ≤ 5 s; benchmarks/lessons.py measures it


@pytest.mark.slow  # loads the real model
def test_our_encoder_matches_sentence_transformers(loaded) -> None:
    """Our BERT on the package's weights gives the reference sentence embedding (mean pooling, unit length)."""
    e = crystal_ball.read(EN).embedding()
    assert e[:8].tolist() == pytest.approx(REFERENCE_EMBEDDING, abs=2e-6)
    assert float(e.norm()) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.slow  # loads the real model
def test_every_piece_row_sums_to_one_and_merged_rows_too(loaded) -> None:
    bert, vocab, _ = loaded
    text = "Tokenisation splits unbelievable words into pieces."
    words = vocab.words(text)
    assert any(len(w.pieces) > 1 for w in words)  # the merge has something to do
    with torch.inference_mode():
        _, maps = bert(torch.tensor([vocab.encode(words)]))  # (1, L, h, T, T)
    assert torch.allclose(maps.sum(-1), torch.ones(()), atol=1e-5)
    merged = crystal_ball.read(text).maps  # (L, h, G, G): [CLS], words…, [SEP]
    assert merged.shape == (6, 12, len(words) + 2, len(words) + 2)
    assert torch.allclose(merged.sum(-1), torch.ones(()), atol=1e-5)
    r = api.crystal_ball(text, "unbelievable")
    rows = torch.tensor(r["attention"]).sum(-1) + torch.tensor(r["cls"]) + torch.tensor(r["sep"])  # (L, h)
    assert torch.allclose(rows, torch.ones(()), atol=5e-3)  # rounded to 4 decimals, 8 words + 2 specials
    assert r["tokens"] == [w.text for w in words] and ["token", "##isation"] in r["pieces"]


def test_merge_sums_columns_and_averages_rows() -> None:
    maps = torch.softmax(torch.randn(2, 5, 5), dim=-1)  # pieces: [CLS] a b ##c [SEP]
    m = crystal_ball.merge(maps, [1, 2])  # words: a, bc
    assert m.shape == (2, 5 - 1, 5 - 1)
    assert torch.allclose(m[:, 2, 2], (maps[:, 2, 2] + maps[:, 2, 3] + maps[:, 3, 2] + maps[:, 3, 3]) / 2)
    assert torch.allclose(m[:, 0, 2], maps[:, 0, 2] + maps[:, 0, 3])
    assert torch.allclose(m.sum(-1), torch.ones(()), atol=1e-6)


@pytest.mark.slow  # loads the real model
def test_they_to_students_head_is_found(loaded) -> None:
    r = api.crystal_ball(EN, "they", "students")
    assert (r["model"], r["layers"], r["heads"]) == ("all-MiniLM-L6-v2", 6, 12)
    assert r["tokens"] == ["The", "teacher", "told", "the", "students", "that", "they", "should", "study", "hard", "."]
    best = r["best"]
    assert (best["layer"], best["head"], best["name"], best["token"]) == (3, 1, "L4H2", "students")
    assert best["weight"] == pytest.approx(REFERENCE_THEY_STUDENTS, abs=1e-3) and best["weight"] > 0.9
    flat = [w[4] for layer in r["attention"] for w in layer]  # they → students in all 72 heads
    assert best["weight"] == max(flat) and sorted(flat)[-2] < 0.5  # one head stands out
    assert [t["weight"] for t in r["top"]] == sorted((t["weight"] for t in r["top"]), reverse=True)
    assert r["target"] == {"token": "students", "position": 4} and r["word"] == "they"


@pytest.mark.slow  # loads the real model
def test_crystal_ball_without_target_names_the_strongest_link(loaded) -> None:
    r = api.crystal_ball(EN, "THEY")  # case does not matter
    assert r["best"]["token"] != "they" and r["best"]["weight"] > 0.5 and r["target"] is None


@pytest.mark.parametrize(
    "text, word, message",
    [
        ("", "they", "text is empty"),
        ("   ", "they", "text is empty"),
        (EN, "cat", r"'cat' is not a word of the text; its words are: The / teacher / told"),
        (EN, "", "is not a word of the text"),
        ("word " * 129, "word", "129 words"),
        ("a" * 1001, "a", "at most 1000"),
        (["not", "text"], "x", "must be a string"),
    ],
)
@pytest.mark.slow  # loads the real model
def test_crystal_ball_errors_are_clear(loaded, text, word: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        api.crystal_ball(text, word)


@pytest.mark.slow  # loads the real model
def test_crystal_ball_target_errors(loaded) -> None:
    with pytest.raises(ValueError, match="target 'dog' is not a word"):
        api.crystal_ball(EN, "they", "dog")
    with pytest.raises(ValueError, match="another word"):
        api.crystal_ball(EN, "they", "they")


def test_safetensors_reader_and_wordpiece_on_small_files(tmp_path) -> None:
    import json

    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    header = json.dumps({"x": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}).encode()
    path = tmp_path / "t.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + t.numpy().tobytes())
    assert torch.equal(read_safetensors(path)["x"], t)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n##aff\n##able\n,\ncafe\n", encoding="utf-8")
    wp = WordPiece.from_vocab(vocab)
    pieces = [w.pieces for w in wp.words("Unaffable, CAFÉ xyz")]
    assert pieces == [("un", "##aff", "##able"), (",",), ("cafe",), ("[UNK]",)]
    assert wp.encode(wp.words("cafe")) == [2, 8, 3]


# 4-2 The tower


@pytest.mark.slow  # loads the real model
def test_tower_figures_are_finite_shares(loaded) -> None:
    r = api.tower()
    assert (r["layers"], r["heads"], r["sentences"]) == (6, 12, 20) and r["words"] > 150
    for row in r["per_layer"]:
        assert math.isfinite(row["distance"]) and 0 < row["distance"] < r["uniform_distance"] * 2
        for k in ("prev", "next", "adjacent", "self", "cls", "sep", "special", "punct"):
            assert 0 <= row[k] <= 1, (row["layer"], k)
        assert row["adjacent"] == pytest.approx(row["prev"] + row["next"], abs=2e-4)
        assert row["adjacent"] + row["self"] + row["special"] <= 1 + 1e-3
    assert len(r["per_head"]["distance"]) == 6 and len(r["per_head"]["distance"][0]) == 12
    f = r["findings"]
    assert f["most_adjacent_layer"] == 0 and f["most_neighbour_heads_layer"] == 0  # what the model shows today
    assert all(row["special"] > 0.25 for row in r["per_layer"])  # [CLS] soaks up much of the attention
    assert r["papers"][0]["source"].startswith("Clark et al. 2019") and set(r["papers"][0]["finding"]) == {"zh", "en"}


# 4-3 Growing up


@pytest.fixture(scope="module")
def short_growth() -> tuple[dict, list[float]]:
    seen: list[float] = []
    threads = torch.get_num_threads()
    result = api.grow(300, 0, progress=lambda f, *_: seen.append(f))
    assert torch.get_num_threads() == threads
    return result, seen


@pytest.mark.slow
def test_growing_up_loss_falls_and_specialisation_rises(short_growth) -> None:
    r, seen = short_growth
    snaps = r["snapshots"]
    assert snaps[0]["step"] == 0 and snaps[-1]["step"] == 300
    assert snaps[-1]["specialisation"] > snaps[0]["specialisation"] + 0.2
    assert r["loss"][-1] < r["loss"][0] / 2 and r["accuracy"][-1] > 0.5
    assert snaps[0]["stage"] == "random" and snaps[0]["specialisation"] < 2 * r["chance"]
    assert [s["step"] for s in snaps] == sorted(s["step"] for s in snaps)
    order = [growing.STAGES.index(s["stage"]) for s in snaps]
    assert order == sorted(order)  # random → faint → clear → settled, never back
    assert len(snaps[0]["maps"]) == r["heads"] == 8 and len(snaps[0]["maps"][0]) == 16
    assert all(abs(sum(row) - 1) < 0.02 for row in snaps[-1]["maps"][0])
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    assert r["device"] == "cpu" and r["seconds"] > 0


def test_stages_are_labelled_by_measured_specialisation() -> None:
    assert [growing.stage(s, 0.7) for s in (0.07, 0.2, 0.5, 0.69)] == ["random", "faint", "clear", "settled"]
    assert growing.stage(0.2, 0.2) == "faint"  # a run that ends early never reads as settled
    maps = torch.zeros(1, 4, 4)
    maps[0, torch.arange(4), (torch.arange(4) - 1) % 4] = 1  # every token looks one back
    assert growing.offset_profile(maps)[0].tolist() == [0, 1, 0, 0]


@pytest.mark.parametrize("steps, message", [(5, "30…3000"), (5000, "30…3000"), (10.5, "whole number"), ("9", "whole")])
def test_grow_errors(steps, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        api.grow(steps, 0)


# 4-4 Pruning


@pytest.mark.slow  # 4-4's model trains on first use
def test_pruning_all_on_is_full_accuracy() -> None:
    r = api.prune([1] * 8)
    assert r["accuracy"] == r["full_accuracy"] > 0.95 and r["kept"] == 1.0 and r["reached"]
    off = api.prune([0] * 8)
    assert off["accuracy"] < 0.2 and not off["reached"] and off["off"] == 8  # near chance (1/16)


def test_best_count_search_on_a_tiny_case() -> None:
    """Three heads, accuracy = the sum of what the heads on bring: 0.5, 0.45, 0.05; 90 % keeps heads 0 and 1."""
    value = (0.5, 0.45, 0.05)

    def score(patterns: list[tuple[bool, ...]]) -> list[float]:
        return [sum(v for v, on in zip(value, a, strict=True) if on) for a in patterns]

    best = pruning.best_subsets(score, 3)
    assert best["most_off"] == 1 and best["patterns"] == [(True, True, False)]
    assert best["best_by_off"] == pytest.approx([1.0, 0.95, 0.5, 0.0])
    assert pruning.best_subsets(lambda ps: [float(all(a)) for a in ps], 2)["most_off"] == 0


@pytest.mark.slow  # 4-4's model trains on first use
def test_pruning_shortcut_equals_the_models_own_forward() -> None:
    """Accuracy from logits linear in the gates equals running the gated model itself."""
    model = pruning.trained(0)[0]
    ids, answers = pruning.held_out(0)
    for active in [(True,) * 8, (True, False) * 4, (False,) * 7 + (True,)]:
        with torch.no_grad():
            logits, _ = model(ids, torch.tensor(active, dtype=torch.float32))
        direct = float((logits.argmax(-1) == answers).float().mean())
        assert pruning.accuracy(active) == pytest.approx(direct, abs=1e-3)


@pytest.mark.slow  # 4-4's model trains on first use
def test_prune_best_and_redundancy() -> None:
    b = api.prune_best()
    assert b["subsets_tried"] == 256 and 1 <= b["most_off"] <= 7
    for pattern, acc in zip(b["patterns"], b["accuracy"], strict=True):
        assert pattern.count(0) == b["most_off"] and acc >= 0.9 * b["full_accuracy"]
        assert api.prune(pattern)["reached"]
    assert b["best_accuracy_by_off"][b["most_off"] + 1] < 0.9 * b["full_accuracy"]
    i, j = b["redundancy"]["pair"]
    sim = b["redundancy"]["similarity"]
    assert i < j and sim[i][j] == b["redundancy"]["cosine"] == max(sim[a][c] for a in range(8) for c in range(a + 1, 8))
    assert [p["source"].split(",")[0] for p in b["papers"]] == ["Voita et al. 2019", "Michel et al. 2019"]


@pytest.mark.parametrize("active", [[1] * 7, [1] * 9, [2] + [1] * 7, "11111111", [0.5] + [1] * 7])
def test_prune_errors(active) -> None:
    with pytest.raises(ValueError, match="switch"):
        api.prune(active)


# 5-1 Positions


@pytest.mark.parametrize(
    "text, lang, b", [("我爱你", "zh", "你爱我"), ("The dog bites the man.", "en", "The man bites the dog .")]
)
def test_positions_same_vectors_permuted_until_positions_are_added(text: str, lang: str, b: str) -> None:
    r = api.positions(text, lang)
    assert r["text_b"] == b and sorted(r["tokens_a"]) == sorted(r["tokens_b"])
    assert r["inputs_max_diff_unpermuted"] == 0
    assert r["max_diff_unpermuted_no_positions"] < 1e-6
    assert r["max_diff_in_place_no_positions"] > 1e-2  # the rows moved …
    assert r["diff_with_positions"] > 1e-2 and r["diff_with_positions_attention"] > 1e-2  # … positions tell them apart
    assert r["diff_dragon_as_built"] > 1e-2  # the dragon's own features carry some order (`early`, …)
    assert [r["preview_a"][p] for p in r["permutation"]] == r["preview_b"]


def test_positions_with_a_second_text_and_errors() -> None:
    r = api.positions("我爱你", "zh", "你爱我")
    assert r["tokens_b"] == ["你", "爱", "我"] and r["split"] == "characters"
    with pytest.raises(ValueError, match="same tokens in another order"):
        api.positions("我爱你", "zh", "他爱我")
    with pytest.raises(ValueError, match="two different nouns or pronouns"):
        api.positions("Run!", "en")
    with pytest.raises(ValueError, match="lang must be"):
        api.positions("我爱你", "fr")
    with pytest.raises(ValueError, match="text is empty"):
        api.positions(" ", "zh")


# 5-2 The badge


def progress_with(stars: dict[str, int]) -> dict:
    p = new_progress()
    p["stars"] = stars
    return p


def test_badge_escapes_the_name_and_is_valid_svg() -> None:
    name = "<script>${x}`{{z}}\\"
    r = api.badge(progress_with({"2-1": 3}), name, "en")
    svg = r["svg"]
    assert "<script>" not in svg and "${" not in svg and "`" not in svg and "{{" not in svg and "\\" not in svg
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = "".join(root.itertext())
    assert name in texts and r["name"] == name  # shown as the text it is
    assert all(line in texts for line in badge.TITLE_LINES["en"]) and "Grammar" in texts  # the title, on two lines
    assert root.get("aria-label").startswith("Multi-Head Attention Badge")  # read out whole
    assert len(api.badge(new_progress(), "x" * 100)["name"]) == 24
    assert "语法头" in api.badge(new_progress(), None, "zh")["svg"]
    for evil in ("\x00\x1b]0;x\x07", "a\u202eb"):
        ET.fromstring(api.badge(new_progress(), evil, "zh")["svg"])  # control characters dropped


def test_badge_heads_glow_by_progress() -> None:
    none = api.badge(new_progress())["mastery"]
    assert set(none) == set(HEADS) and all(v == 0 for v in none.values())
    emotion_levels = badge.head_levels()["emotion"]
    r = api.badge(progress_with({lv: 3 for lv in emotion_levels}))
    assert r["mastery"]["emotion"] == 1.0 and r["mastery"]["context"] < 1.0
    heads = {g.get("data-head"): g for g in ET.fromstring(r["svg"]).iter("{http://www.w3.org/2000/svg}g")}
    glow = {h: float(g.findall("{http://www.w3.org/2000/svg}circle")[0].get("opacity")) for h, g in heads.items()}
    assert glow["emotion"] == 1.0 and glow["logic"] < glow["emotion"]
    everything = {lv: 3 for ids in badge.head_levels().values() for lv in ids}
    assert all(v == 1.0 for v in api.badge(progress_with(everything))["mastery"].values())


def test_badge_png_is_a_png() -> None:
    from PIL import Image

    data = badge.badge_png(progress_with({"2-1": 2}), "小白", "zh")
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert Image.open(io.BytesIO(data)).size == (800, 800)


@pytest.mark.parametrize(
    "progress, name, lang, message",
    [
        ({}, None, "zh", "progress must be a dict"),
        ({"stars": {"2-1": 4}}, None, "zh", "0, 1, 2 or 3"),
        ({"stars": {"2-1": True}}, None, "zh", "0, 1, 2 or 3"),
        ({"stars": {}}, 42, "zh", "name must be text"),
        ({"stars": {}}, None, "fr", "lang must be"),
    ],
)
def test_badge_errors(progress, name, lang: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        api.badge(progress, name, lang)
