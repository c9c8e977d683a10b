"""What 4-1, 4-2 and 4-4 must load first (the real model, the tower's figures, 4-3's model and its best pruning),
once per server, in the lane; the panel asks for it ('warm') and shows the wait (ui/rooms/waits.py)."""

from dragon import api
from dragon.lessons import crystal_ball as crystal_lesson
from dragon.lessons import pruning as pruning_lesson
from dragon.lessons import tower as tower_lesson
from ui.rooms import lab

SEED = 0  # 4-3 trains with this seed in the app, and 4-4 prunes that same model


def load_model(report: lab.Report) -> str | None:
    """4-1 and 4-2: the real model, read from its package (None, or why it cannot be loaded)."""
    try:
        crystal_lesson.load(report)
    except crystal_lesson.ModelMissingError as err:
        return str(err)
    return None


def load_tower(report: lab.Report) -> str | None:
    """4-2: the real model, then the tower's figures over the shipped sentences."""
    missing = load_model(report)
    if missing is None:
        api.tower()
    return missing


def load_pruning(report: lab.Report) -> str | None:
    """4-4: 4-3's model trained with the app's seed, and the best pruning over all subsets."""
    api.prune_best(SEED)
    return None


CRYSTAL_NEEDS = lab.Needs(crystal_lesson.is_loaded, load_model, "c_loading")


TOWER_NEEDS = lab.Needs(lambda: tower_lesson.tower.cache_info().currsize > 0, load_tower, "c_loading")


PRUNE_NEEDS = lab.Needs(lambda: pruning_lesson.best_pruning.cache_info().currsize > 0, load_pruning, "p_loading")
