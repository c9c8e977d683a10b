"""The layout stays layered, read from the imports themselves: core → UI → app, no chapter module importing another,
no private name imported across modules, no import circle (lazy and type-checking imports count too)."""

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dragon", "ui")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_files() -> dict[str, Path]:
    files = {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}
    files["app"] = ROOT / "app.py"
    for folder in ("tests", "benchmarks"):
        files.update({f"{folder}.{p.stem}": p for p in sorted((ROOT / folder).glob("*.py"))})
    return files


FILES = project_files()


@functools.cache  # read once per run: every rule below walks the same imports
def imports_of(name: str, path: Path) -> list[tuple[str, str | None, int]]:
    """(module imported, name taken from it or None, line) for every import statement anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.append((sub, None, node.lineno) if sub in FILES else (base, alias.name, node.lineno))
    return out


@functools.cache
def graph() -> dict[str, set[str]]:
    """Project module → the project modules it imports."""
    edges: dict[str, set[str]] = {}
    for name, path in FILES.items():
        targets = set()
        for module, _, _ in imports_of(name, path):
            if module in FILES and module != name:
                targets.add(module)
        edges[name] = targets
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), each as a sorted list."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_checker_sees_a_circle_and_a_private_import(tmp_path: Path) -> None:
    """The checks below can fail: a made-up pair of modules that import each other is found."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    src = tmp_path / "x.py"
    src.write_text("def f():\n    from ui.rooms.lab import _secret\n", encoding="utf-8")
    assert imports_of("ui.x", src) == [("ui.rooms.lab", "_secret", 2)]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle(package: str) -> None:
    edges = graph()
    inside = {m: {t for t in ts if t.split(".")[0] == package} for m, ts in edges.items() if m.split(".")[0] == package}
    assert cycles(inside) == [], "modules that import each other (directly or round a circle)"


def test_no_private_name_imported_from_another_module() -> None:
    bad = [
        f"{name}:{line} imports {taken} from {module}"
        for name, path in FILES.items()
        for module, taken, line in imports_of(name, path)
        if taken and taken.startswith("_") and not taken.startswith("__")
    ]
    assert bad == []


# ui/rooms/: one module per level kind (ROOMS' kinds, chapter 1's match, the slider levels) on a toolkit they share
ROOM_TOOLKIT = {
    "ui.rooms", "ui.rooms.registry", "ui.rooms.lab", "ui.rooms.rethink", "ui.rooms.rethinks", "ui.rooms.loading",
    "ui.rooms.slider_views", "ui.rooms.findings_text", "ui.rooms.formula_drawing", "ui.rooms.waits",
}


def room_modules() -> set[str]:
    return {m for m in FILES if m.startswith("ui.rooms.") and m not in ROOM_TOOLKIT}


def test_every_lab_kind_has_its_own_room_module() -> None:
    """registry.ROOMS maps each lab level kind to the module of its own name: adding a kind is adding its module."""
    from ui.rooms.registry import ROOMS

    for kind, room in ROOMS.items():
        assert room.panel.__module__ == f"ui.rooms.{kind}", (kind, room.panel.__module__)
        assert {a.fn.__module__ for a in room.actions.values()} == {f"ui.rooms.{kind}"}, kind
    assert {f"ui.rooms.{k}" for k in ROOMS} | {"ui.rooms.match", "ui.rooms.sliders"} == room_modules()


def test_no_room_imports_another() -> None:
    rooms = room_modules()
    assert len(rooms) >= 10
    bad = [f"{m} imports {t}" for m in rooms for t in graph()[m] if t in rooms]
    assert bad == []


def test_core_imports_no_ui_and_no_gradio() -> None:
    """dragon/ is the core: it never imports the UI, the app or Gradio."""
    bad = [
        f"{name}:{line} imports {module}"
        for name, path in FILES.items()
        if name.split(".")[0] == "dragon"
        for module, _, line in imports_of(name, path)
        if module.split(".")[0] in ("ui", "app", "gradio")
    ]
    assert bad == []


def test_room_modules_are_small() -> None:
    sizes = {m: len(FILES[m].read_text(encoding="utf-8").splitlines()) for m in room_modules() | ROOM_TOOLKIT}
    assert all(n < 450 for n in sizes.values()), sizes


# --- README's module table shows the layout ---------------------------------------------------------------------


def readme_modules() -> list[str]:
    """The modules of README's module table, in its order (`dragon/lessons/race.py` → dragon.lessons.race)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    paths = re.findall(r"^\| `([\w/]+\.py)` \|", text, re.M)
    return [module_name(ROOT / p) for p in paths]


def test_readme_lists_every_module_once_core_then_ui_then_app() -> None:
    listed = readme_modules()
    code = [m for m in FILES if m.split(".")[0] in ("dragon", "ui", "app")]
    assert sorted(listed) == sorted(code), "README's module table and the code differ"
    layers = [m.split(".")[0] for m in listed]
    assert layers == sorted(layers, key=("dragon", "ui", "app").index), "core, then UI, then app"


def readme_folders() -> list[str]:
    """The folder rows of README's module table, in its order (`| **`dragon/text/`** | … |`; app.py is the last)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^\| \*\*`([\w/.]+)`\*\* \|", text, re.M)


def folder_of(module: str) -> str:
    path = FILES[module].relative_to(ROOT)
    return "app.py" if module == "app" else f"{path.parent.as_posix()}/"


def test_readme_lists_the_modules_by_folder_and_every_folder_has_its_role() -> None:
    """Each module sits under its folder's row, the folders in layer order; each folder is a package whose
    docstring says its role."""
    folders, listed = readme_folders(), readme_modules()
    code_folders = {folder_of(m) for m in FILES if m.split(".")[0] in ("dragon", "ui", "app")}
    assert sorted(folders) == sorted(code_folders), "a folder with no row in README's table, or a row for none"
    runs = [folder_of(m) for m in listed]
    grouped = [f for i, f in enumerate(runs) if i == 0 or f != runs[i - 1]]
    assert grouped == folders, "README lists each folder's modules together, under the folder's row, in its order"
    for f in folders[:-1]:
        init = ROOT / f / "__init__.py"
        assert init.exists() and init.read_text(encoding="utf-8").startswith('"""'), f


# imports up the table, each with its reason (a test below fails when one is no longer made)
UPWARD = {
    ("dragon.lessons.badge", "dragon.levels.loader"): "5-2's badge is about the course: the levels that train a head",
    ("dragon.lessons.own_sentence", "dragon.levels.loader"): "4-1's own-sentence verdict is read beside the level's",
}
LAYER_TOPS = ("dragon/", "ui/")  # a layer's top level (the engine and the API; the page shell) names its folders


def upward_imports() -> set[tuple[str, str]]:
    place = {f: i for i, f in enumerate(readme_folders())}
    edges = graph()
    code = [m for m in edges if m.split(".")[0] in ("dragon", "ui", "app") and folder_of(m) not in LAYER_TOPS]
    return {(m, t) for m in code for t in edges[m]
            if t.split(".")[0] in ("dragon", "ui") and place[folder_of(t)] > place[folder_of(m)]}


def test_the_layers_hold_between_folders() -> None:
    """A folder imports only folders listed above it in README, or itself: the table read top to bottom is the
    layering (the engine's top level is read as one with the packages it names)."""
    assert upward_imports() == set(UPWARD), "an import up README's table (or a reason for one no longer made)"
