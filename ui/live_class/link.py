"""A game session a live class's page frames (its "class" token): what its events tell the class, and what the class's
server round decides for it (the exam switch, an exam's fresh seed)."""

import logging
from dataclasses import dataclass

from dragon import game
from dragon.classroom.records import ClassroomError
from dragon.classroom.room import Classroom
from ui.live_class import routes as class_routes

log = logging.getLogger("dragon.refused")


@dataclass(frozen=True)
class ClassListener:
    """Tells the class of each result the server scores, each hint it gives and each event on the round's level."""

    room: Classroom
    token: str

    def _tell(self, what: str, call) -> None:
        try:
            call()
        except (ClassroomError, ValueError) as err:  # removed, ended, too fast: the game goes on as ever
            log.warning("class %s not counted: %s", what, err)

    def result(self, level_id: str, score: float, stars: int) -> None:
        own = game.own_hints()  # answers shown on this very attempt cap the next one, not this one
        self._tell("result", lambda: self.room.report(self.token, level_id, score, stars, own_hints=own))

    def hint(self, level_id: str) -> None:
        self._tell("hint", lambda: self.room.hint_used(self.token, level_id))

    def activity(self, level_id: str) -> None:
        self._tell("move", lambda: self.room.activity(self.token, level_id))


def token_of(state) -> str:
    token = state.get("class") if isinstance(state, dict) else None
    return token if isinstance(token, str) and token else ""


def listener(state) -> ClassListener | None:
    """For a game event of a framed session, its class's listener (dragon/game.py RESULTS_TO); None for any other."""
    token = token_of(state)
    if not token or not class_routes.ROOM:
        return None
    return ClassListener(class_routes.ROOM[0], token)


def round_rules(token: str) -> dict:
    """What the class's open round decides for a framed game, never the link: {"exam": bool, "seed": int | None}
    (dragon/classroom/room.py Classroom.framed_rules)."""
    if not token or not class_routes.ROOM:
        return {"exam": False, "seed": None}
    return class_routes.ROOM[0].framed_rules(token)
