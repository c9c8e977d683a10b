"""The real model is fed what its own tokenizer gives: every assigned code point below U+30000, in a word and after one,
read into the same ids as the reference (transformers' tokenizer over the tokenizer.json the weights ship), special
tokens typed as text read as the one special token, and our encoder's attention and hidden states equal to
transformers' BertModel on the same weights (1e-5)."""

import os
import unicodedata

import pytest
import torch

from dragon.lessons import crystal_ball

pytestmark = pytest.mark.slow  # loads the real model and transformers' reference: left out of the fast tier

CHUNK = 400  # code points per text: one tokenizer call reads many, each in its own "a…b" and "word…"


@pytest.fixture(scope="module")
def reference():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer, BertModel

    where = str(crystal_ball.model_dir())
    tok = AutoTokenizer.from_pretrained(where, local_files_only=True)
    model = BertModel.from_pretrained(where, local_files_only=True, attn_implementation="eager").eval()
    return tok, model


def assigned() -> list[str]:
    """Every assigned code point below U+30000 (surrogates cannot be text)."""
    return [chr(c) for c in range(0x30000) if unicodedata.category(chr(c)) not in ("Cn", "Cs")]


def test_every_code_point_in_and_after_a_word_gives_the_references_ids(reference) -> None:
    tok, _ = reference
    _, vocab = crystal_ball.load()
    chars = assigned()
    assert len(chars) > 140_000
    texts = [" ".join(f"a{ch}b word{ch}" for ch in chars[i:i + CHUNK]) for i in range(0, len(chars), CHUNK)]
    theirs = tok(texts, truncation=False)["input_ids"]
    differ = [i for i, text in enumerate(texts) if vocab.encode(vocab.words(text)) != theirs[i]]
    assert not differ, [chars[i * CHUNK:(i + 1) * CHUNK][:5] for i in differ[:3]]


@pytest.mark.parametrize("text, word, piece", [("[CLS] is typed here", "[CLS]", "[CLS]"),
                                               ("he took the [MASK] home", "[MASK]", "[MASK]"),
                                               ("x[SEP]y", "[SEP]", "[SEP]")])
def test_a_special_token_typed_as_text_is_the_one_special_token(reference, text: str, word: str, piece: str) -> None:
    tok, _ = reference
    _, vocab = crystal_ball.load()
    words = vocab.words(text)
    assert any(w.text == word and w.pieces == (piece,) for w in words)
    assert vocab.encode(words) == tok(text)["input_ids"]


def test_words_keep_the_spelling_the_player_typed(reference) -> None:
    _, vocab = crystal_ball.load()
    assert [w.text for w in vocab.words("Café TOKENISATION, 今天 x\ue000y a😀b")] == [
        "Café", "TOKENISATION", ",", "今", "天", "x\ue000y", "a😀b"]
    assert [w.pieces for w in vocab.words("Tokenisation")] == [("token", "##isation")]


@pytest.mark.parametrize("text", ["The teacher told the students that they should study hard.",
                                  "今天我们学习 attention 机制。", "Unbelievable! [MASK] said Zoë… 42 × 7 ≠ 300"])
def test_our_encoder_equals_the_reference_model(reference, text: str) -> None:
    tok, model = reference
    bert, vocab = crystal_ball.load()
    ids = vocab.encode(vocab.words(text))
    assert ids == tok(text)["input_ids"]
    with torch.inference_mode():
        hidden, maps = bert(torch.tensor([ids]))
        out = model(torch.tensor([ids]), output_attentions=True)
    assert (hidden[0] - out.last_hidden_state[0]).abs().max() <= 1e-5
    assert (maps[0] - torch.stack(out.attentions, dim=1)[0]).abs().max() <= 1e-5
