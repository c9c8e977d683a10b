"""The whole page for one level and player: what every component shows when a level opens."""

from dragon import api, game
from dragon.levels import Level

from . import play, quiz, views
from .draw import esc
from .session import START_GATES
from .text import t
from .top import top_props


def codes_props(lang: str, message: str = "", code: str = "", opened: bool = False) -> dict:
    """The progress-code box in `lang`, with a message beside its buttons."""
    out = {
        "title": esc(t("progress", lang)),
        "help": esc(t("progress_help", lang)),
        "code_label": esc(t("code", lang)),
        "export_label": esc(t("export", lang)),
        "import_label": esc(t("import", lang)),
        "message": esc(message),
        "open": opened,
    }
    if code:
        out["code"] = code
    return out


def page(level: Level, lang: str, progress: dict, notice: str = "", gates: list[float] | None = None) -> dict:
    """Everything shown for a level: the top, then the slider panel and its maps, or chapter 1's panel."""
    out = {
        "session": {"level": level.id, "lang": lang},
        "saved": game.save(progress),
        "top": top_props(level, lang, progress, notice),
    }
    if level.sliders:
        out["panel"] = play.panel_props(level, lang, gates or START_GATES, progress)
        out["maps"] = views.maps_html(api.level_reading(level, lang), lang)
        out["quiz"] = {"body": ""}
    else:
        out["panel"] = dict(play.HIDDEN)
        out["maps"] = ""
        out["quiz"] = quiz.quiz_props(level, lang, progress)
    return out
