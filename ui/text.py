"""Every UI string in Chinese and English; gr.I18n gets the same table."""

from dragon.config import HEADS

# key -> (中文, English)
STRINGS: dict[str, tuple[str, str]] = {
    "app_title": ("多头龙的秘密", "The Multi-Head Dragon"),
    "tagline": ("调好八个头的音量，让真正的多头注意力读懂每一段话。", "Tune the eight heads so a real multi-head attention reads each text the right way."),
    "language": ("语言", "Language"),
    "projector": ("投影模式", "Projector mode"),
    "level": ("关卡", "Level"),
    "locked": ("（未解锁）", "(locked)"),
    "shown_mark": ("女神示范过", "shown by the goddess"),
    "hint": ("小T的提示", "Little T's hint"),
    "demo": ("女神示范", "Goddess demo"),
    "reveal": ("揭晓答案（老师）", "Reveal (teacher)"),
    "reset": ("重来", "Start over"),
    "check": ("检查", "Check"),
    "next": ("下一关 ▶", "Next level ▶"),
    "score": ("得分", "Score"),
    "stars_label": ("星星", "Stars"),
    "best": ("最好成绩", "Best"),
    "xp": ("经验", "XP"),
    "cap_now": ("这一关最多还能得 {stars}", "Best reachable on this level: {stars}"),
    "cap_after": ("用后最多 {stars}", "then at most {stars}"),
    "won": ("过关！", "Level won!"),
    "won_more": ("再调准一点，还能多拿星星。", "Tune it closer for more stars."),
    "your_mix": ("你的融合", "Your fusion"),
    "target_mix": ("目标", "Target"),
    "share_tip": ("{name}：份量 {mine}（目标 {target}）", "{name}: share {mine} (target {target})"),
    "share_tip_mine": ("{name}：份量 {mine}", "{name}: share {mine}"),
    "profile_note": (
        "柱子 = 每个头在融合输出里的份量（W^O 之后的真实范数），灰色虚框 = 目标。把柱子调成虚框的形状。",
        "Bars = each head's share of the fused output (its real norm after W^O); grey dashed boxes = the target. Make the bars match the boxes.",
    ),
    "picture_note": (
        "底色越深，这个词收到的注意力越多（八个头按权重混合）。把左边调得和右边一样。",
        "The darker a word, the more attention it receives (the eight heads mixed by their weights). Make the left look like the right.",
    ),
    "maps_title": ("八个头的真实注意力（行 = 查询词，列 = 被看的词；指向或聚焦格子可看数值）", "The eight heads' real attention (rows = query words, columns = words looked at; point at or focus a cell for its value)"),
    "map_keys": ("用方向键在格子间移动", "use the arrow keys to move between cells"),
    "silent": ("无话可说", "nothing to say"),
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
    "demo_says": ("女神：看，沿着梯度一步一步爬上去。（示范不计分）", "The goddess: look, climb the gradient one step at a time. (The demo is not scored.)"),
    "demo_done": (
        "女神示范完毕，滑杆回到了你原来的位置：现在轮到你自己调了。这一关已标记为“女神示范过”。",
        "The goddess is done and the sliders are back where you left them: now set them yourself. This level is marked “shown by the goddess”.",
    ),
    "demo_frame": ("女神示范中 · 不计分", "Goddess demo · not scored"),
    "reveal_says": ("目标权重：", "Target weights: "),
    "reveal_marks": ("滑杆下的 ▲ 标出了目标位置。", "The ▲ under each slider marks the target."),
    "reset_says": ("滑杆回到了 0.5。", "The sliders are back at 0.5."),
    "bad_box": ("请输入 0 到 1 之间的数（例如 0.35）；什么都没有改变。", "Type a number from 0 to 1 (for example 0.35); nothing was changed."),
    "progress": ("进度码", "Progress code"),
    "progress_help": ("在别的电脑上继续：导出进度码，复制，到那台电脑上粘贴并导入。", "To go on elsewhere: export the code, copy it, paste it there and import it."),
    "export": ("导出进度码", "Export progress code"),
    "import": ("导入进度码", "Import progress code"),
    "code": ("进度码", "Progress code"),
    "exported": ("这是你的进度码：全部复制下来。", "Here is your progress code: copy all of it."),
    "imported": ("进度已导入。", "Progress imported."),
    "bad_code": ("这不是有效的进度码，什么都没有改变。", "That is not a valid progress code; nothing was changed."),
    "damaged": ("保存的进度已损坏或被改动，已重新开始。", "The saved progress was damaged or edited, so it has been reset."),
    "unknown_level": ("没有这个关卡：{id}。已打开第一关。", "There is no level {id}; the first level is open instead."),
    "locked_level": ("这一章还没解锁：先在上一章每关拿到至少一颗星。", "This chapter is still locked: earn at least one star on every level of the chapter before."),
    "compare_one": ("一头龙：读到“{w}”时看了几个词？", "One-headed dragon: how many words does it look at from “{w}”?"),
    "compare_eight": ("八头龙：八个头一共看了几个不同的词？", "Eight-headed dragon: how many different words do its eight heads look at together?"),
    "one_dragon": ("一头龙看了几个词", "One head: how many words"),
    "eight_dragon": ("八头龙看了几个词", "Eight heads: how many words"),
    "bad_guess": ("请在两个框里都填 0 到 99 之间的整数；什么都没有改变。", "Fill both boxes with whole numbers from 0 to 99; nothing was changed."),
    "bad_picks": ("请给每一条发现选一个头；什么都没有改变。", "Choose a head for every finding; nothing was changed."),
    "pick_head": ("选一个头", "Choose a head"),
    "answer_cap": ("答错会揭晓答案：之后这一关最多 {stars}。", "A wrong answer shows the answer: after that this level earns at most {stars}."),
    "answer_shown": ("答案已揭晓：这一关最多还能得 {stars}。", "The answer has been shown: this level can earn at most {stars} now."),
    "rows_title": ("答案头投给每个词的真实注意力", "Real attention the answer heads give each word"),
    "one_head_map": ("一个头（d_head = d_model）", "One head (d_head = d_model)"),
    "eight_head_rows": ("八个头读“{w}”时各看哪里", "Where each of the eight heads looks from “{w}”"),
    "compare_result": ("一头龙看了 {a} 个词：{wa}。八头龙看了 {b} 个词：{wb}。", "The one-headed dragon looks at {a}: {wa}. The eight heads look at {b}: {wb}."),
    "looks_rule": ("（“看”= 至少 10% 的注意力）", "(“looks at” = at least 10 % of the attention)"),
    "match_pick": ("是哪个头发现的？", "Which head found it?"),
    "match_result": ("答对 {n}/{m}。", "{n} of {m} right."),
    "right": ("对", "right"),
    "wrong": ("不对，是{head}", "no — it was the {head} head"),
    "wrong_hidden": ("不对", "not right"),
    "api_note": ("API：levels() · play(level_id, gates) · hint(level_id, gates) · explain(level_id) · analyze(text, lang)", "API: levels() · play(level_id, gates) · hint(level_id, gates) · explain(level_id) · analyze(text, lang)"),
    "truncated": ("文字太长，只读了前 {n} 个词。", "The text is long; only the first {n} tokens were read."),
    "source": ("出处", "Source"),
    "chapter": ("第 {n} 章", "Chapter {n}"),
    "less": ("少", "less"),
    "more": ("多", "more"),
    "panel_label": ("女神的控制面板", "The goddess's control panel"),
    "value_of": ("{name} 的数值", "{name} value"),
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
    """The string `key` in `lang` ('zh' or 'en'), with {placeholders} filled."""
    text = STRINGS[key][LANG_INDEX.get(lang, 0)]
    return text.format(**values) if values else text


def head_name(head: str, lang: str) -> str:
    """'情感头' / 'Emotion'."""
    return HEAD_NAMES[head][LANG_INDEX.get(lang, 0)]


def head_label(i: int, lang: str) -> str:
    """'① 语法头' / '① Grammar': number and name — colour is never the only cue."""
    return f"{NUMERALS[i]} {head_name(HEADS[i], lang)}"


I18N_PREFIX = "mhd_"  # Gradio's own translation tables use keys like "code" and "common": never clash with them


def i18n_key(key: str) -> str:
    """The gr.I18n key for one of our strings."""
    return I18N_PREFIX + key


def i18n_tables() -> dict[str, dict[str, str]]:
    """The same strings for gr.I18n: {'zh-CN': {...}, 'en': {...}}, every key prefixed."""
    tables: dict[str, dict[str, str]] = {"zh-CN": {}, "zh": {}, "en": {}}
    for key, (zh, en) in STRINGS.items():
        tables["zh-CN"][i18n_key(key)] = tables["zh"][i18n_key(key)] = zh
        tables["en"][i18n_key(key)] = en
    return tables
