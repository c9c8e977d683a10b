"""Every UI string in Chinese and English; gr.I18n gets the same table."""

from dragon.config import HEADS

# key -> (中文, English)
STRINGS: dict[str, tuple[str, str]] = {
    "app_title": ("多头龙的秘密", "The Multi-Head Dragon"),
    "tagline": ("调好八个头的音量，让真正的多头注意力读懂每一段话。", "Tune the eight heads so a real multi-head attention reads each text the right way."),
    "language": ("语言", "Language"),
    "projector": ("投影模式", "Projector mode"),
    "level": ("关卡", "Level"),
    "locked": ("未解锁", "locked"),
    "hint": ("小T的提示", "Little T's hint"),
    "demo": ("女神示范", "Goddess demo"),
    "reveal": ("揭晓答案（老师）", "Reveal (teacher)"),
    "reset": ("重来", "Start over"),
    "check": ("检查", "Check"),
    "next": ("下一关", "Next level"),
    "score": ("得分", "Score"),
    "best": ("最好成绩", "Best"),
    "xp": ("经验", "XP"),
    "stars_cap": ("用过提示：这一关最多 {n} 颗星", "Hints used: at most {n} stars on this level"),
    "your_mix": ("你的融合", "Your fusion"),
    "target_mix": ("目标", "Target"),
    "profile_note": (
        "每根柱子是一个头在融合输出里的份量（W^O 之后的真实范数）。八个头的输出互相正交，所以得分只看这两组柱子的形状。",
        "Each bar is one head's share of the fused output (its real norm after W^O). The heads' outputs are orthogonal, so the score compares exactly the shapes of these two profiles.",
    ),
    "picture_note": (
        "目标的注意力图：每个头的注意力按目标权重混合。把你的图调得和它一样。",
        "The target's attention picture: each head's attention mixed by the target weights. Make yours look the same.",
    ),
    "maps_title": ("八个头的真实注意力（行 = 查询词，列 = 被看的词）", "The eight heads' real attention (rows = query words, columns = words looked at)"),
    "silent": ("对这段话无话可说", "has nothing to say here"),
    "silent_note": ("{heads}对这段话无话可说：它们的滑杆几乎不影响得分。", "{heads}: nothing to say about this text, so their sliders barely change the score."),
    "why_title": ("为什么？", "Why?"),
    "claims_title": (
        "引擎实测：每个头投给这些词的注意力份量（占该头看向词语的注意力）",
        "Measured by the engine: each word's share of that head's attention to words",
    ),
    "claim_silent": ("无话可说（输出份量 {n}）", "nothing to say (output share {n})"),
    "hint_says": ("小T：把{head}{way}一点！", "Little T: {way} the {head} head a little!"),
    "hint_up": ("调高", "raise"),
    "hint_down": ("调低", "lower"),
    "hint_done": ("小T：已经很完美了，没有可以再调的地方。", "Little T: it's already perfect, there is nothing left to tune."),
    "demo_says": ("女神：看，沿着梯度一步一步爬上去。", "The goddess: look, climb the gradient one step at a time."),
    "reveal_says": ("目标权重：", "Target weights: "),
    "progress": ("进度", "Progress"),
    "export": ("导出进度码", "Export progress code"),
    "import": ("导入进度码", "Import progress code"),
    "code": ("进度码", "Progress code"),
    "imported": ("进度已导入。", "Progress imported."),
    "bad_code": ("这不是有效的进度码，什么都没有改变。", "That is not a valid progress code; nothing was changed."),
    "damaged": ("保存的进度已损坏或被改动，已重新开始。", "The saved progress was damaged or edited, so it has been reset."),
    "unknown_level": ("没有这个关卡：{id}。已打开第一关。", "There is no level {id}; the first level is open instead."),
    "locked_level": ("这一章还没解锁：先在上一章每关拿到至少一颗星。", "This chapter is still locked: earn at least one star on every level of the chapter before."),
    "compare_one": ("一头龙：读到“{w}”时看了几个词？", "One-headed dragon: how many words does it look at from “{w}”?"),
    "compare_eight": ("八头龙：八个头一共看了几个不同的词？", "Eight-headed dragon: how many different words do its eight heads look at together?"),
    "one_dragon": ("一头龙看了几个词", "One head: how many words"),
    "eight_dragon": ("八头龙看了几个词", "Eight heads: how many words"),
    "rows_title": ("答案头投给每个词的真实注意力", "Real attention the answer heads give each word"),
    "one_head_map": ("一个头（d_head = d_model）", "One head (d_head = d_model)"),
    "eight_head_rows": ("八个头读“{w}”时各看哪里", "Where each of the eight heads looks from “{w}”"),
    "compare_result": ("一头龙看了 {a} 个词：{wa}。八头龙看了 {b} 个词：{wb}。", "The one-headed dragon looks at {a}: {wa}. The eight heads look at {b}: {wb}."),
    "looks_rule": ("（“看”= 至少 10% 的注意力）", "(“looks at” = at least 10 % of the attention)"),
    "match_pick": ("是哪个头发现的？", "Which head found it?"),
    "match_result": ("答对 {n}/{m}。", "{n} of {m} right."),
    "right": ("对", "right"),
    "wrong": ("不对，是{head}", "no — it was the {head} head"),
    "api_note": ("API：levels() · play(level_id, gates) · hint(level_id, gates) · analyze(text, lang)", "API: levels() · play(level_id, gates) · hint(level_id, gates) · analyze(text, lang)"),
    "truncated": ("文字太长，只读了前 {n} 个词。", "The text is long; only the first {n} tokens were read."),
    "source": ("出处", "Source"),
    "chapter": ("第 {n} 章", "Chapter {n}"),
}  # fmt: skip

HEAD_NAMES: dict[str, tuple[str, str]] = {
    "grammar": ("语法头", "Grammar"),
    "semantics": ("语义头", "Semantics"),
    "emotion": ("情感头", "Emotion"),
    "logic": ("逻辑头", "Logic"),
    "time": ("时序头", "Time"),
    "space": ("空间头", "Space"),
    "tone": ("语调头", "Tone"),
    "context": ("语境头", "Context"),
}
HEAD_COLORS: dict[str, str] = {
    "grammar": "#1f4e9c",
    "semantics": "#d4a017",
    "emotion": "#e8609e",
    "logic": "#8e9aa6",
    "time": "#7b3fbf",
    "space": "#2e9e4f",
    "tone": "#f28c28",
    "context": "#17a2b8",
}
NUMERALS = "①②③④⑤⑥⑦⑧"
LANG_INDEX = {"zh": 0, "en": 1}


def t(key: str, lang: str, **values) -> str:
    text = STRINGS[key][LANG_INDEX.get(lang, 0)]
    return text.format(**values) if values else text


def head_name(head: str, lang: str) -> str:
    return HEAD_NAMES[head][LANG_INDEX.get(lang, 0)]


def head_label(i: int, lang: str) -> str:
    """'① 语法头 Grammar': number, name and (in Chinese) the English name too — colour is never the only cue."""
    zh, en = HEAD_NAMES[HEADS[i]]
    return f"{NUMERALS[i]} {zh} · {en}" if lang == "zh" else f"{NUMERALS[i]} {en}"


def i18n_tables() -> dict[str, dict[str, str]]:
    """The same strings for gr.I18n: {'zh-CN': {...}, 'en': {...}}."""
    tables: dict[str, dict[str, str]] = {"zh-CN": {}, "zh": {}, "en": {}}
    for key, (zh, en) in STRINGS.items():
        tables["zh-CN"][key] = tables["zh"][key] = zh
        tables["en"][key] = en
    for i, head in enumerate(HEADS):
        tables["zh-CN"][f"head_{head}"] = tables["zh"][f"head_{head}"] = head_label(i, "zh")
        tables["en"][f"head_{head}"] = head_label(i, "en")
    return tables
