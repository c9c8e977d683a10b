"""The teachers' box as HTML: the links of what is on screen (plain, exam, a teacher level's share link), the print
and export buttons, and the loader for a teacher's level or pack (its events are answered by ui/teacher_box.py)."""

import urllib.parse

from dragon import teacher_levels
from dragon.levels import Level

from .draw import esc
from .text import t

SAMPLE = """title: {zh: 静夜思, en: Quiet Night Thoughts}
lang: zh
text: 床前明月光，疑是地上霜。举头望明月，低头思故乡。
target: {emotion: 0.9, tone: 0.8, space: 0.3}
"""
FILES = ("worksheet", "key", "png", "report")


def link_params(level: Level | None, session: dict) -> dict:
    """The parameters of a link that opens what is on screen (the page adds its address and the language)."""
    if level is None:
        return {"sandbox": "1", **({"text": session["text"]} if session.get("text") else {})}
    if level.kind == "custom":
        return {"custom": session["custom"], "level": level.id}
    return {"level": level.id}


def body_html(level: Level | None, lang: str, session: dict) -> str:
    """The box's contents: links with copy buttons, the print and export buttons, the level loader."""

    def link(kind: str, label: str) -> str:
        return (
            f'<div class="tb-row"><label>{esc(label)}<input type="text" readonly class="tb-link" data-link="{kind}">'
            f'</label><button type="button" class="btn" data-copy="{kind}">{esc(t("tb_copy", lang))}</button></div>'
        )

    links = link("plain", t("tb_share" if level is not None and level.kind == "custom" else "tb_link", lang))
    if level is not None and level.sliders:
        links += link("exam", t("tb_exam", lang))
    files = [("png", "tb_png")]
    if level is not None:
        files = [("worksheet", "tb_worksheet"), ("key", "tb_key"), *files]
        if level.sliders:
            files.append(("report", "tb_report"))
    buttons = "".join(
        f'<button type="button" class="btn" data-file="{what}">{esc(t(key, lang))}</button>' for what, key in files
    )
    sample = "data:text/yaml;charset=utf-8," + urllib.parse.quote(SAMPLE)
    return (
        f'<div class="tb-links">{links}</div>'
        f'<div class="tb-files"><b>{esc(t("tb_files", lang))}</b> {buttons}</div>'
        f'<div class="tb-load"><b>{esc(t("tb_load_title", lang))}</b><p class="note">{esc(t("tb_load_help", lang))}</p>'
        f"<pre class=\"tb-sample\">{esc(SAMPLE)}</pre>"
        f'<label for="mhd-tb-source">{esc(t("tb_source", lang))}</label>'
        f'<textarea id="mhd-tb-source" data-field="source" rows="5" spellcheck="false" '
        f'maxlength="{teacher_levels.MAX_SOURCE_CHARS}"></textarea>'
        f'<div class="tb-row"><label class="btn file-btn">{esc(t("tb_file", lang))}'
        f'<input type="file" accept=".yaml,.yml,.json,.txt" class="tb-upload"></label>'
        f'<button type="button" class="btn primary" data-act="load">{esc(t("tb_open", lang))}</button>'
        f'<a class="btn" download="level.yaml" href="{esc(sample)}">{esc(t("tb_sample", lang))}</a></div></div>'
    )


def teacher_props(level: Level | None, lang: str, session: dict, message: str = "", opened: bool = False) -> dict:
    """The box for what is on screen; hidden in an exam (its answer key and reveal are not for the class)."""
    if session.get("exam"):
        return {"body": "", "title": "", "params": {}, "message": "", "open": False}
    return {"body": body_html(level, lang, session), "title": esc(t("tb_title", lang)),
            "params": link_params(level, session), "message": message, "open": opened}  # fmt: skip


def errors_html(title: str, errors: list[str]) -> str:
    items = "".join(f"<li>{esc(e)}</li>" for e in errors[:20])
    more = f"<li>… (+{len(errors) - 20})</li>" if len(errors) > 20 else ""
    return f'<div class="refusal" role="alert"><b>{esc(title)}</b><ul>{items}{more}</ul></div>'


