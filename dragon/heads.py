"""The eight specialist heads, compiled into real W_Q/W_K/W_V/W^O weights (the Tracr recipe).

Each head is a list of relations "a query token with feature A looks at key tokens with feature B,
this strongly". A relation becomes one column of the head's W_Q and W_K, so q·k/√d_head equals
coldness × (sum of the relations that hold). Every head also looks at the sink with strength SINK,
so where no relation holds the head attends to the sink, whose value is zero: the head says nothing.
"""

import math
from dataclasses import dataclass

import torch

from dragon.attention import MultiHeadAttention
from dragon.config import HEADS, DragonConfig
from dragon.features import FEATURES, INDEX
from dragon.text.analyser import RHYME_GROUPS_MAX
from dragon.text.lexicon import FIELDS

SINK = 1.0  # score of the sink: a relation must beat this to be attended to


@dataclass(frozen=True)
class Relation:
    query: str  # feature the query token must have
    key: str  # feature the key token must have
    weight: float  # score added when both hold


R = Relation
RELATIONS: dict[str, tuple[Relation, ...]] = {
    # subject ↔ predicate ↔ object: arguments look at the verb, the verb at its arguments
    "grammar": (
        R("pos_noun", "pos_verb", 2.0),
        R("pos_pron", "pos_verb", 2.0),
        R("pos_verb", "pos_noun", 1.8),
        R("pos_verb", "pos_pron", 1.8),
        R("pos_adj", "pos_noun", 1.6),
        R("pos_adv", "pos_verb", 1.6),
    ),
    # words of one semantic field look at each other
    "semantics": tuple(R(f"field_{f}", f"field_{f}", 2.0) for f in FIELDS),
    # everyone looks at sentiment words; a sentiment word looks hardest at its opposite (悲伤 ↔ 快乐)
    "emotion": (R("any", "emotion", 2.0), R("polarity", "polarity", -0.6)),
    # everyone looks at connectives; a connective looks at its partner (因为 → 所以)
    "logic": (
        R("any", "connective", 2.0),
        R("conn_cause", "conn_effect", 1.5),
        R("conn_effect", "conn_cause", 1.5),
        R("conn_concession", "conn_contrast", 1.5),
        R("conn_contrast", "conn_concession", 1.5),
        R("conn_condition", "conn_consequence", 1.5),
        R("conn_consequence", "conn_condition", 1.5),
        R("conn_sequence", "conn_sequence", 0.5),
    ),
    # time words and aspect markers (昨天, 正在, 了)
    "time": (R("any", "time", 2.0), R("any", "aspect", 1.7)),
    # places and directions (公园, 里, 上)
    "space": (R("any", "place", 2.0), R("any", "direction", 1.7)),
    # particles and punctuation of tone (吗, 呢, 吧, ！, ？); in verse, the sound of the line ends
    # (dragon/text/sound.py):
    # a rhyming line end hears the others of its rhyme (光 ↔ 霜 ↔ 乡, glows ↔ shows), and a line end that rhymes
    # with none hears the rhymes of the opposite tone class (月 仄 → 光 霜 乡 平: the tonal pattern 平仄)
    "tone": (
        R("any", "tone_question", 2.2),
        R("any", "tone_exclaim", 2.0),
        R("any", "tone_soft", 1.8),
        R("any", "tone_pause", 1.5),
        *(R(f"rhyme_{k}", f"rhyme_{k}", 2.5) for k in range(RHYME_GROUPS_MAX)),
        R("end_ping", "rhyme_ze", 2.4),
        R("end_ze", "rhyme_ping", 2.4),
    ),
    # a pronoun finds its antecedent: number and kind agree (他 → a person, 它 → a thing, they → either), a noun
    # a few tokens back beats one after it; a subject pronoun (she, 他) then prefers the first-mentioned noun, an
    # object one (him, 带它) and they the nearest. Every other word looks one clause back.
    "context": (
        R("pron_sg", "person_sg", 3.0),
        R("pron_pl", "person_pl", 3.0),
        R("pron_thing_sg", "thing_sg", 3.0),
        R("pron_thing_pl", "thing_pl", 3.0),
        R("pron_at_cos", "ante_at_cos", 1.0),
        R("pron_at_sin", "ante_at_sin", 1.0),
        R("pron_first", "early", 0.8),
        R("pron_nearest", "early", -0.4),
        R("clause_q_cos", "clause_k_cos", 1.6),
        R("clause_q_sin", "clause_k_sin", 1.6),
    ),
}


def query_key_weights(relations: tuple[Relation, ...], config: DragonConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """One head's W_Q, W_K as (d_head, d_model): one column per distinct query feature."""
    by_query: dict[str, list[Relation]] = {"any": []}  # column 0: the sink relation lives here
    for r in relations:
        by_query.setdefault(r.query, []).append(r)
    if len(by_query) > config.d_head:
        raise ValueError(f"{len(by_query)} query features do not fit in d_head = {config.d_head}")
    scale = math.sqrt(config.coldness * math.sqrt(config.d_head))  # q·k/√d_head = coldness × weight
    w_q = torch.zeros(config.d_head, config.d_model)
    w_k = torch.zeros(config.d_head, config.d_model)
    for col, (query, rels) in enumerate(by_query.items()):
        w_q[col, INDEX[query]] = scale
        for r in rels:
            w_k[col, INDEX[r.key]] += scale * r.weight
    w_k[0, INDEX["sink"]] += scale * SINK
    return w_q, w_k


def value_weights(config: DragonConfig, generator: torch.Generator) -> torch.Tensor:
    """A head's W_V (d_head, d_model): a random orthonormal read of the word code, scaled so a
    single attended word gives an output of norm ≈ 1. Sink and feature dims are not read."""
    code = config.d_model - len(FEATURES)
    k = min(code, config.d_head)  # a single wide head reads the whole code
    basis, _ = torch.linalg.qr(torch.randn(code, k, generator=generator))  # (code, k)
    w_v = torch.zeros(config.d_head, config.d_model)
    w_v[:k, len(FEATURES) :] = basis.T * math.sqrt(code / k)
    return w_v


def build_dragon_attention(config: DragonConfig = DragonConfig()) -> MultiHeadAttention:
    """The dragon's attention block, every weight set by construction (no training, no bias)."""
    if config.n_heads != len(HEADS):
        raise ValueError(f"the dragon has {len(HEADS)} specialist heads, not {config.n_heads}")
    g = torch.Generator().manual_seed(config.seed)
    w_q, w_k, w_v = [], [], []
    for head in HEADS:
        q, k = query_key_weights(RELATIONS[head], config)
        w_q.append(q)
        w_k.append(k)
        w_v.append(value_weights(config, g))
    mha = MultiHeadAttention(config.d_model, config.n_heads, bias=False, layer_norm=config.layer_norm)
    w_o, _ = torch.linalg.qr(torch.randn(config.d_model, config.d_model, generator=g))  # orthogonal W^O
    with torch.no_grad():
        mha.in_proj.weight.copy_(torch.cat(w_q + w_k + w_v, dim=0))  # (3d, d): [W_Q; W_K; W_V]
        mha.out_proj.weight.copy_(w_o)
    return mha.eval().requires_grad_(False)
