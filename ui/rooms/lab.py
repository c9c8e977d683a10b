"""The lab toolkit: what every lab level (chapters 3–5) is built from — the player's attempt, the question /
check / result / retry blocks, star rules and caps, and the Room that serves a level kind.

A lab level is a *room*: a panel function that draws the level for this player, and actions, one per button,
each checking the player's answer against the real computation:

    panel(level, lang, progress, attempt, note) -> HTML
    action(level, lang, progress, attempt, data[, bar]) -> (progress, attempt, note)

`attempt` is what this player did on the level on screen (kept in the session, on the server); `note` is a
refusal to show beside the button (bad input changes nothing). The chapters' modules build their rooms from the
blocks below and ui/rooms/registry.py lists them; no chapter writes these blocks' HTML itself, so every lab level asks,
checks, answers and offers a retry the same way (and the page's script finds the answer in the same place)."""

from collections.abc import Callable
from dataclasses import dataclass, field

from dragon import game
from dragon.levels.loader import Level
from dragon.scoring import stars as stars_for
from ui.session import State, level_after, session_of
from ui.strings import t
from ui.widgets.draw import esc, notice_html, star_text, why_html

Attempt = dict  # {"level": id, …}: what the player did on this level (the rounds answered, the run, the answers)
Panel = Callable[[Level, str, dict, Attempt, str], str]
Outcome = tuple[dict, Attempt, str]  # (progress, attempt, note): what an action leaves
HIDDEN = {"body": "", "kind": ""}  # the lab component when the level on screen is not a lab


@dataclass(frozen=True)
class Action:
    """What one button of a room does. `scored`: it can change the player's progress (an unscored one, a quiz or a
    try-your-own, leaves it alone). An action that times or trains hands its run to the server's lane
    (dragon/runtime/lane.py) and answers at once: the page shows the wait (ui/rooms/waits.py) and asks again."""

    fn: Callable[..., Outcome | None]
    scored: bool = True


Report = Callable[[float, str], None]  # (fraction done, what is happening)


@dataclass(frozen=True)
class Needs:
    """What a room loads once per server before its panel can be drawn (the real model, a trained model): whether it
    is loaded, how to load it (reporting progress; returns None, or why it cannot be loaded), and the text key of the
    line shown meanwhile. The panel asks for it itself ('warm') the first time it is shown."""

    ready: Callable[[], bool]
    load: Callable[[Report], str | None]
    message: str


@dataclass(frozen=True)
class Rethink:
    """A predict-then-read room's second prediction (ui/rooms/rethink.py), on a measurement its page has not shown:
    draw(level, lang, attempt, rng) → the question's parameters (kept in the attempt); panel(level, lang, attempt,
    asked, held) → its fields, or, once checked (held["measured"]), what was measured; check(level, lang, progress,
    attempt, asked, data) → (right by the level's margin, what was measured), a refusal (str), or an Outcome
    while a run it handed to the lane is on its way."""

    draw: Callable[..., dict]
    panel: Callable[..., str]
    check: Callable[..., "tuple[bool, dict] | str | Outcome"]


@dataclass(frozen=True)
class Room:
    """A lab level kind: its panel, its buttons' actions (event name → Action), what it must load first, and its
    second prediction. Every room can start over ('again'), and a room with needs answers 'warm'."""

    panel: Panel
    actions: dict[str, Action] = field(default_factory=dict)
    needs: Needs | None = None
    rethink: Rethink | None = None


def attempt_of(state: State, level: Level) -> Attempt:
    """This player's attempt at the lab on screen (a fresh one when the session holds another level's), with the
    seed a class exam fixed for it."""
    lab = state.get("lab") if isinstance(state, dict) else None
    attempt = lab if isinstance(lab, dict) and lab.get("level") == level.id else {"level": level.id}
    return fixed_seed(attempt, session_of(state)["seed"])


def fixed_seed(attempt: Attempt, seed: int | None) -> Attempt:
    """An attempt whose seed a class exam drew (the box shows it, locked; a trained lab trains that seed), or as is."""
    return attempt if seed is None else {**attempt, "seed": seed, "fixed_seed": True}


def again(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    """Start the level over (the stars already earned stay; the answers were shown, so at most ★ more)."""
    return progress, {"level": level.id}, ""


# --- words and numbers --------------------------------------------------------------------------------------------


def device_label(device: str, lang: str, threads: int | None = None) -> str:
    """'CPU (2 threads)', 'GPU (CUDA)', 'Apple GPU (MPS)': which device ran a number."""
    kind = str(device).split(":")[0]
    if kind == "cuda":
        return t("dev_cuda", lang)
    if kind == "mps":
        return t("dev_mps", lang)
    if threads is None:
        from dragon.runtime.device import SERVER_THREADS  # the race's threads (no training runs beside it, in the lane)

        threads = SERVER_THREADS
    return t("dev_cpu1", lang) if threads == 1 else t("dev_cpu", lang, n=threads)


def training_device(lang: str) -> str:
    """Where the lessons' trainings run (4-3's task: one CPU thread each run on a CPU, as their records say)."""
    from dragon.lessons.heads_experiment import Experiment
    from dragon.runtime.device import best_device

    dev = best_device()
    return device_label(str(dev), lang, Experiment().cpu_threads if dev.type == "cpu" else None)


def mark(ok: bool, lang: str) -> str:
    """✓ or ✗ with its word, for one answer."""
    return t("ok" if ok else "not_ok", lang)


def thousands(n: float) -> str:
    """9 216, 2 362 368: thin spaces between thousands (both languages)."""
    return f"{n:,.0f}".replace(",", "\u2009") if float(n).is_integer() else f"{n:g}"


def bucket_text(prefix: str, i: int, edges: tuple[float, ...], lang: str) -> str:
    """An answer bucket's label, its edges filled in from the constants dragon/game.py scores with."""
    values = {f"e{j}": f"{e:g}" for j, e in enumerate(edges)} | {f"e{j}m": f"{e - 1:g}" for j, e in enumerate(edges)}
    return t(f"{prefix}{i}", lang, **values)


def bucket_choices(prefix: str, edges: tuple[float, ...], lang: str) -> list[tuple[str, str]]:
    return [(str(i), bucket_text(prefix, i, edges, lang)) for i in range(len(edges) + 1)]


def least_for(stars_of: Callable[[int], int], out_of: int) -> list[int]:
    """The fewest points that earn ★★★, ★★ and ★ under a star rule (read off the rule itself, not retyped)."""
    return [next((p for p in range(out_of + 1) if stars_of(p) >= n), out_of) for n in (3, 2, 1)]


# --- stars ----------------------------------------------------------------------------------------------------------


def answer_cap(progress: dict, level_id: str) -> int:
    """The most stars an answer can still earn on this level (fewer once an answer was shown)."""
    return stars_for(100.0, game.hints_used(progress, level_id))


def answers_shown(progress: dict, level_id: str) -> tuple[dict, int]:
    """A predict-then-read level puts its answers on screen: this try keeps the cap it had (returned, to be kept in
    the attempt), and any later try earns at most ★."""
    cap = answer_cap(progress, level_id)  # before the answers count as shown
    return game.use_hints_up_to(progress, level_id, 2), cap


def try_cap(progress: dict, level_id: str, attempt: dict) -> int:
    """The cap this try kept when its answers were shown (else the level's cap now)."""
    return int(attempt.get("cap", answer_cap(progress, level_id)))


def read_off(progress: dict, level: Level, attempt: dict, read: object, ok: bool, predictions: int) -> tuple:
    """The reading decides the pass; the attempt's prediction points (of `predictions`) add the rest of the stars,
    and a wrong reading earns none (game.read_stars). The score: the reading, then each prediction, a share each."""
    earned = min(game.read_stars(game.points_stars(attempt["points"], predictions), ok), try_cap(progress, level.id, attempt))
    progress = record(progress, level, 100.0 * ok * (1 + attempt["points"]) / (1 + predictions), earned)
    return progress, {**attempt, "read": read, "stars": earned}, ""


def read_question(level: Level, lang: str, progress: dict, attempt: dict, data: dict, count: int,
                  answer: Callable[[], int | list[int]], predictions: int) -> tuple | None:
    """A predict-then-read room's reading, asked once its predictions are checked: bucket 0…count − 1 chosen off the
    measurement, right when it is `answer()` or one of the answers it lists (where the measurement accepts several;
    computed only then); a bad choice is refused and changes nothing."""
    if "points" not in attempt or "stars" in attempt:
        return None
    read = chosen(data, "read", range(count))
    if read is None:
        return progress, attempt, refusal(t("lab_bad", lang))
    right = answer()
    return read_off(progress, level, attempt, read, read in right if isinstance(right, list) else read == right,
                    predictions)


def record(progress: dict, level: Level, score: float, earned: int) -> dict:
    """Keep the result; a check that was not perfect has shown the answer, so later tries earn at most ★."""
    progress = game.record(progress, level.id, score, earned)
    return game.use_hints_up_to(progress, level.id, 2) if earned < 3 else progress


def rule(text: str) -> str:
    """The star rule a level is scored with, one line under its question, shown before the player answers."""
    return f'<p class="rule">{esc(text)}</p>'


def star_rule(lang: str, key: str, **values: object) -> str:
    """A star rule from its text key, introduced as one ("How stars are earned: …")."""
    return rule(t("rule_head", lang) + t(key, lang, **values))


def read_rule(lang: str, predictions: int) -> str:
    """A predict-then-read level's star rule: with three or more predictions all but one right adds ★
    (game.points_stars); with one or two only all right adds anything."""
    return star_rule(lang, "rule_read" if predictions >= 3 else "rule_read_few", n=predictions)


def points_rule(lang: str, out_of: int) -> str:
    """The rule of a level scored by right answers: every count of points with its stars."""
    parts = " · ".join(f"{p}/{out_of} {star_text(game.points_stars(p, out_of))}" for p in range(out_of, -1, -1))
    return star_rule(lang, "rule_points", parts=parts)


def cap_note(level: Level, lang: str, progress: dict, attempt: Attempt) -> str:
    """What stars are still reachable: before a check, after it (another try), or while rounds are under way."""
    if "stars" in attempt:
        return ""  # the end of the attempt says what was earned
    if "cap" in attempt:  # rounds under way: this try keeps what it could earn when it began
        now = int(attempt["cap"])
        if isinstance(attempt.get("points"), int) and isinstance(attempt.get("out_of"), int):  # predictions checked:
            now = min(now, game.read_stars(game.points_stars(attempt["points"], attempt["out_of"]), True))  # a right
            # reading adds nothing to what they earned
        text = (t("lab_try_capped", lang, now=star_text(now)) if now <= 1 and game.hints_used(progress, level.id)
                else t("lab_try", lang, now=star_text(now), later=star_text(1)))
    elif game.hints_used(progress, level.id):
        text = t("lab_shown", lang, stars=star_text(answer_cap(progress, level.id)))
    else:
        text = t("lab_cap", lang, stars=star_text(1))
    return f'<p class="cap-note">{esc(text)}</p>'


# --- the blocks a lab level is made of ------------------------------------------------------------------------------


def room(name: str, *parts: str) -> str:
    """A level's whole panel (`lab-{name}`): its parts in order."""
    return f'<div class="lab-{name}">{"".join(parts)}</div>'


def two_columns(name: str, main: str, side: str, side_cls: str = "", open_view: str = "", key: str = "") -> str:
    """A level's panel in two columns on a wide screen (one on a phone): the work, and the question beside it.
    `open_view`: the tensor the page's script opens first; `key`: the question on screen (3-1's round): when it
    changes, the page's script clears the choices the browser kept and brings the new question into view."""
    opened = f' data-open="{esc(open_view)}"' if open_view else ""
    opened += f' data-key="{esc(key)}"' if key else ""
    return (
        f'<div class="lab-{name} lab-cols"{opened}><div class="lab-main">{main}</div>'
        f'<div class="lab-side{" " + side_cls if side_cls else ""}">{side}</div></div>'
    )


def data_attrs(data: dict[str, object]) -> str:
    """data-… attributes (what a test or the page's script reads back), escaped."""
    return "".join(f' data-{k}="{esc(v)}"' for k, v in data.items())


def note(text: str, cls: str = "", **data: object) -> str:
    """A line of context (the set-up, what was computed on which device); text, escaped."""
    return f'<p class="note{" " + cls if cls else ""}"{data_attrs(data)}>{esc(text)}</p>'


def question(text: str, cls: str = "") -> str:
    """What the player is asked."""
    return f'<p class="question{" " + cls if cls else ""}">{esc(text)}</p>'


def heading(text: str, cls: str = "") -> str:
    """A part's title inside the panel (a round, a snapshot, a section)."""
    attr = f' class="{cls}"' if cls else ""
    return f"<h3{attr}>{esc(text)}</h3>"


def options(choices: list[tuple[str, str]], chosen: str | None, lang: str) -> str:
    first = f'<option value="">{esc(t("pick", lang))}</option>'
    return first + "".join(
        f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>{esc(label)}</option>' for v, label in choices
    )


def select(name: str, label: str, choices: list[tuple[str, str]], chosen: str | None, lang: str,
           locked: bool = False) -> str:
    """A labelled choice; its value goes to the server as answer `name` with every button press (`locked`: an
    answer already checked, shown but no longer changeable)."""
    return (
        f'<label class="ask"><span>{esc(label)}</span>'
        f'<select data-answer="{name}"{" disabled" if locked else ""}>{options(choices, chosen, lang)}</select></label>'
    )


def text_field(name: str, label: str, value: str, max_length: int, wide: bool = True, numeric: bool = False) -> str:
    """A labelled text box (a sentence, a name, a number); its value goes with every button press as `name`."""
    mode = ' inputmode="decimal"' if numeric else ""
    return (
        f'<label class="ask{" wide" if wide else ""}"><span>{esc(label)}</span><input type="text"{mode} '
        f'data-answer="{esc(name)}" value="{esc(value)}" maxlength="{max_length}"></label>'
    )


def number_field(name: str, label: str, value: str, lo: float, hi: float, unit: str = "", cls: str = "",
                 step: float = 0.1, locked: bool = False) -> str:
    """A labelled number box with its unit after it (3-2's "… ×"); `locked`: shown, no longer changeable."""
    mode = "decimal" if step != int(step) else "numeric"
    return (
        f'<label class="ask{" " + cls if cls else ""}"><span>{esc(label)}</span><span class="times">'
        f'<input type="number" min="{lo:g}" max="{hi:g}" step="{step:g}" inputmode="{mode}" data-answer="{esc(name)}" '
        f'value="{esc(value)}"{" disabled" if locked else ""}>{" " + esc(unit) if unit else ""}</span></label>'
    )


def switch(name: str, label: str, on: bool) -> str:
    """A labelled on/off box sent as answer `name` ("1" / "0")."""
    checked = " checked" if on else ""
    return f'<label class="switch"><input type="checkbox" data-answer="{esc(name)}"{checked}> <span>{esc(label)}</span></label>'


def in_order(cls: str, fields: list[str]) -> str:
    """Answer fields that are places in an order (the steps of fusion, a ranking)."""
    attr = f' class="{cls}"' if cls else ""
    return f'<ol{attr}>{"".join(f"<li>{f}</li>" for f in fields)}</ol>'


def asks(*fields: str) -> str:
    """The question's answer fields, side by side where they fit."""
    return f'<div class="asks">{"".join(fields)}</div>'


def button(act: str, label: str, primary: bool = True) -> str:
    """A button that sends the answers on the panel to the room's action `act`."""
    return f'<button type="button" class="btn{" primary" if primary else ""}" data-act="{act}" id="mhd-lab-{act}">{esc(label)}</button>'


def buttons(*items: str) -> str:
    """A row of buttons inside a result (next round, try again, next level)."""
    return f'<div class="lab-buttons">{"".join(items)}</div>'


def check_row(*items: str) -> str:
    """The row under the question: the fields that sit beside the button, and the check button itself."""
    return f'<div class="answer-row">{"".join(items)}</div>'


def result_box(content: str, cls: str = "result-box") -> str:
    """Where the answer appears (a live region, brought into view under the button that asked)."""
    return f'<div class="{cls}" role="status">{content}</div>'


def checking(
    level: Level, lang: str, progress: dict, attempt: Attempt, *, check: str, result: str, rule_line: str = "",
    capped: bool = True,
) -> str:
    """The check and result part every lab level has: its star rule, the check button (empty once answered),
    what stars are still reachable (`capped`: a level whose stars do not come from the answer has no cap), and the
    result box its answer appears in."""
    row = check_row(check) if check else ""
    cap = cap_note(level, lang, progress, attempt) if capped else ""
    return f"{rule_line}{row}{cap}{result_box(result)}{RETHINK_SLOT}"


def chosen(data: dict, key: str, allowed) -> int | None:
    """The whole number a reading question's answer names (data[key]), if it is one of `allowed`; else None (the room
    refuses it and changes nothing)."""
    try:
        value = int(str(data.get(key)))
    except ValueError:
        return None
    return value if value in allowed else None


def verdict(text: str, cls: str = "", **data: object) -> str:
    """The answer's first line: what was measured against what the player said (data-… attributes for tests)."""
    return f'<div class="result-head{" " + cls if cls else ""}"{data_attrs(data)}>{esc(text)}</div>'


def caption(text: str) -> str:
    """A small title over a figure or a list of bars in the result."""
    return f'<div class="sub">{esc(text)}</div>'


def lines(items: list[str], cls: str = "lines") -> str:
    """Findings or results, one sentence a line."""
    return f'<ul class="{cls}">{"".join(f"<li>{esc(x)}</li>" for x in items)}</ul>'


# Where ui/rooms/registry.py puts the second prediction (ui/rooms/rethink.py): a link beside the stars that points to it, and the
# question itself after the result box (the answer, its stars and its why stay one screen, as a teacher shows them).
RETHINK_LINK = "<!--rethink-link-->"
RETHINK_SLOT = "<!--rethink-->"


def end(level: Level, lang: str, progress: dict, earned: int) -> str:
    """After the last check: the stars, won or lost, the why, and the way on (try again, and the next level)."""
    head = t("lab_won", lang, stars=star_text(earned)) if earned else t("lab_lost", lang)
    after = level_after(level, progress) if progress["stars"].get(level.id, 0) else None
    way_on = button("again", t("again", lang), primary=not earned) + (button("next", t("next", lang)) if after else "")
    return (
        f'<div class="lab-end {"won" if earned else "lost"}" data-stars="{earned}">'
        f'<span class="result-stars">{star_text(earned)}</span> '
        f"<b>{esc(head)}</b>{buttons(way_on)}{RETHINK_LINK}</div>{why_html(level, lang)}"
    )


def waiting(run_id: str, then: str, lang: str, poll_ms: int, body: str) -> str:
    """The block that stands for a run on its way in the server's lane (ui/rooms/waits.py draws `body`): the page asks
    about run_id every poll_ms and, once it is done, sends the event `then` again."""
    return (
        f'<div class="wait-box" role="status" aria-live="polite" data-wait="{esc(run_id)}" data-then="{esc(then)}" '
        f'data-lang="{esc(lang)}" data-poll="{poll_ms}">{body}</div>'
    )


def loading(message: str) -> str:
    """While a room's model loads: the line that says so; the page's script asks for the load once ('warm')."""
    return f'<div class="lab-loading" data-autoload="warm">{verdict(message)}</div>'


def refusal(message: str) -> str:
    """A bad answer's message: it goes beside the button, and nothing was changed."""
    return notice_html(message)
