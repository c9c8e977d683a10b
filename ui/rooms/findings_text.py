"""Chapters 4–5's findings in words: the sentences a lesson's FINDINGS let the page say, each filled with the numbers
it is about (the lesson's `measured` values, formatted for the player)."""

from collections.abc import Sequence

from dragon import findings
from dragon.findings import Finding, Measured
from dragon.margins import SHARE_MARGIN
from ui.strings import t


def said(rules: Sequence[Finding], values: Measured, lang: str, /, skip: Sequence[str] = (), **fill: object) -> list[str]:
    """Every page sentence of `rules` that is true of the measured `values`, in order, filled in, but those in `skip`
    (which the page shows elsewhere); a level's story or why, keyed "<level>.<field>", is shown by the level itself."""
    return [t(key, lang, **fill) for key in findings.shown(rules, values) if "." not in key and key not in skip]


def pct(v: float) -> str:
    return f"{v:.0%}"


def listed(items: list[str], lang: str) -> str:
    return ("；" if lang == "zh" else "; ").join(items)


def tower_fill(m: Measured, lang: str) -> dict:
    """4-2's numbers: distances, the layers near the most next/previous share, the neighbour heads, the sink."""
    start, lo, hi = m["sink"] or (0, 0.0, 0.0)
    vlo, vhi = m["cls_value"] or (0.0, 0.0)
    return {
        "seq": " → ".join(f"{d:.2f}" for d in m["distance"]), "near": m["nearest"] + 1, "far": m["farthest"] + 1,
        "u": f"{m['uniform']:.2f}", "l": m["most_adjacent"] + 1, "p": pct(m["adjacent_share"]),
        "k": m["neighbour_heads"], "kl": m["neighbour_layer"] + 1, "start": start + 1, "lo": pct(lo), "hi": pct(hi),
        "vlo": pct(vlo), "vhi": pct(vhi), "m": round(100 * SHARE_MARGIN),
        "layers": " / ".join(t("tw_layer", lang, l=i + 1) for i in m["adjacent_layers"]),
    }


def grow_fill(m: Measured, lang: str) -> dict:
    """4-3's numbers: the heads that changed their favourite offset, and those that split between two."""
    switched = [t("g_switch_item", lang, h=h + 1, path=" → ".join(map(str, path[:5])) + (" → …" if len(path) > 5 else ""))
                for h, path in m["switches"].items()]
    split = [t("g_split_item", lang, h=h + 1, a=a, pa=pct(pa), b=b, pb=pct(pb))
             for h, ((a, pa), (b, pb)) in enumerate(zip(m["top"], m["second"], strict=True)) if pb >= m["split"]]
    return {"f": f"{m['from_share']:.2f}", "s": pct(m["split"]), "switched": listed(switched, lang), "split": listed(split, lang)}


def back(positions: Sequence[tuple[int, float]]) -> str:
    """A head's main offsets back, favourite first: '7' or '7 / 1'."""
    return " / ".join(str(d) for d, _ in positions)


def prune_fill(m: Measured, lang: str) -> dict:
    """4-4's numbers: the most alike pair and what each of it costs alone, the lone carriers, the twins."""
    a, b = m["pair"]
    cheap = [i for i in m["pair"] if m["cost"][i] < m["small"]]
    alone = [t("p_alone_item", lang, h=h + 1, r=r, acc=pct(v)) for h, r, v in m["lone"]]
    twins = [(i, j) for pattern in m["twins"] for i, j in pattern]
    pairs = [t("p_twin_item", lang, a=i + 1, b=j + 1, d=m["favourite"][i]) for i, j in twins if j is not None]
    lonely = [t("p_lonely_item", lang, a=i + 1, d=m["favourite"][i]) for i, j in twins if j is None]
    return {
        "a": a + 1, "b": b + 1, "c": f"{m['cosine']:.2f}", "da": back(m["positions"][a]), "db": back(m["positions"][b]),
        "ca": f"{m['cost'][a]:.1f}", "cb": f"{m['cost'][b]:.1f}", "cheap": cheap[0] + 1 if cheap else "",
        "small": f"{m['small']:.0f}", "near": pct(m["near_chance"]), "chance": pct(m["chance"]),
        "alone": listed(alone, lang), "pairs": listed(pairs, lang), "lonely": listed(lonely, lang),
    }


def positions_fill(m: Measured, lang: str) -> dict:
    """5-1's numbers: the largest absolute differences, and the input features that carry position as built."""
    return {
        "d_free": f"{m['max_diff_unpermuted_no_positions']:.1e}", "inplace": f"{m['max_diff_in_place_no_positions']:.3f}",
        "d_with": f"{m['diff_with_positions']:.3f}", "da_with": f"{m['diff_with_positions_attention']:.3f}",
        "d_own": f"{m['diff_dragon_as_built']:.3f}", "dx": f"{m['inputs_diff_as_built']:.3f}",
        "da_own": f"{m['diff_dragon_as_built_attention']:.1e}",
        "features": "、".join(t(f"pos_f_{g}", lang) for g in m["feature_groups"]) if lang == "zh"
        else ", ".join(t(f"pos_f_{g}", lang) for g in m["feature_groups"]),
    }
