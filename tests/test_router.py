"""4-6 Heads on demand: the routed models trained for real (seed 0: seeds 0, 1, 2 for k = 1, 2, 4, 8, made once per test
session through the server's lane), the router checked against the plain model it gates, every sentence the page may
say of the runs held against them, the answer key by the test's own arithmetic, the endpoint's refusals."""

import statistics

import pytest
import torch

from dragon import api, findings
from dragon.lessons import router
from dragon.margins import SHARE_MARGIN
from ui.strings import t

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def routed() -> dict:
    return api.router(0)


def test_every_k_is_trained_on_three_seeds_and_keeps_exactly_k_heads_a_word(routed: dict) -> None:
    assert routed["ks"] == [1, 2, 4, 8] and routed["seeds"] == [0, 1, 2]
    assert all(len(routed["accuracy"][str(k)]) == 3 for k in routed["ks"])
    for k in routed["ks"]:
        assert routed["compute_share"][str(k)] == pytest.approx(k / 8)
        assert routed["mean_accuracy"][str(k)] == pytest.approx(statistics.fmean(routed["accuracy"][str(k)]), abs=1e-4)
    gates = routed["example"]["gates"]
    assert len(gates) == len(routed["example"]["tokens"]) and all(sum(g > 0 for g in row) == 2 for row in gates)
    assert all(sum(row) == pytest.approx(2, abs=1e-3) for row in gates)  # softmax over the kept, times k


def test_with_every_head_kept_and_equal_scores_the_router_is_the_plain_model() -> None:
    """k = 8 with a router that scores every head alike gates each by 1: the output is heads_experiment's Reader's."""
    ex = router.Routing().experiment(0)
    torch.manual_seed(0)
    model = router.RoutedReader(ex, 8)
    torch.nn.init.zeros_(model.router.weight)
    torch.nn.init.zeros_(model.router.bias)
    ids = torch.randint(ex.vocab, (4, ex.length), generator=torch.Generator().manual_seed(1))
    plain = super(router.RoutedReader, model).forward(ids)
    assert torch.allclose(model(ids), plain, atol=1e-5)


def test_a_bad_k_is_refused() -> None:
    for k in (0, 9):
        with pytest.raises(ValueError):
            router.RoutedReader(router.Routing().experiment(0), k)


def test_no_sentence_the_page_may_say_of_the_runs_is_false(routed: dict) -> None:
    m = router.measured(routed)
    assert findings.untrue(router.FINDINGS, m) == [], m
    shares = [routed["kept_share"][str(k)] for k in routed["ks"]]
    assert shares == sorted(shares) and shares[-1] == 1.0  # the test's own reading: accuracy rises with k
    assert routed["kept_share"]["4"] >= 0.5 and routed["kept_share"]["4"] < router.KEEP  # the why: most, not 95 %
    need = findings.pick(router.FINDINGS, "need", m)
    smallest = min(k for k, s in zip(routed["ks"], shares, strict=True) if s >= router.KEEP)
    assert need == ("ro_needs_all" if smallest >= len(routed["relations"]) else "ro_fewer")


def test_the_smallest_k_is_decided_by_the_share_margin(routed: dict) -> None:
    q, read = router.questions(routed)
    share = routed["kept_share"][str(router.READ_K)]
    assert router.read_bucket(share) in read["accepted"] and read["margin"] == pytest.approx(
        min(abs(share - e) for e in router.READ_EDGES), abs=1e-4)
    shares = {k: routed["kept_share"][str(k)] for k in routed["ks"]}
    strict = min(k for k, s in shares.items() if s >= router.KEEP)
    assert q["accepted"][-1] == str(strict)
    if q["accepted"] == [str(strict)]:  # only the measured answer: every k below it is a clear margin short
        assert all(router.KEEP - s >= SHARE_MARGIN for k, s in shares.items() if k < strict)
    assert q["margin"] == pytest.approx(min(abs(s - router.KEEP) for k, s in shares.items() if k != 8), abs=1e-4)


def test_every_finding_sentence_fills_in_both_languages(routed: dict) -> None:
    m = router.measured(routed)
    for f in router.FINDINGS:
        if "." in f.key:
            continue  # the level's why: its text is the level file's
        for lang in ("zh", "en"):
            text = t(f.key, lang, k=m["smallest"], n=m["relations"], ks=", ".join(map(str, routed["ks"])),
                     accs=", ".join(f"{v:.2f}" for v in routed["mean_accuracy"].values()))
            assert "{" not in text and text.strip()


@pytest.mark.parametrize("seed", [-1, 2**31, 1.5, "0", True, None])
def test_the_endpoint_refuses_a_bad_seed_before_any_training(seed) -> None:
    import app

    with pytest.raises(ValueError):
        app.router(seed)


def test_seed_0_in_the_box_is_the_recorded_runs_replayed_with_where_they_came_from(routed: dict) -> None:
    from dragon import game
    from tests.lane import answered
    from ui.rooms import waits

    for lang in ("zh", "en"):
        out = answered("route", {"level": "4-6", "lang": lang}, game.save(game.new_progress()), {"k": "8", "seed": "0"})
        lab = out["session"]["lab"]
        assert lab["result"] == routed and lab["seed"] == 0 and lab["replayed"] is True
        assert waits.record_line(routed, lang, True) in out["lab"]["body"] and "run-record" in out["lab"]["body"]
