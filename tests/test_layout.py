"""The layout stays layered, read from the imports themselves: core → UI → app, no chapter module importing another,
no private name imported across modules, no import circle (lazy and type-checking imports count too)."""

import ast
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


def test_no_chapter_module_imports_another() -> None:
    chapters = {m for m in FILES if m.startswith("ui.chapter")}
    assert len(chapters) >= 3
    bad = [f"{m} imports {t}" for m in chapters for t in graph()[m] if t in chapters]
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


def test_chapter_modules_are_small() -> None:
    sizes = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in FILES.items() if m.startswith("ui.chapter")}
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


def test_readme_lists_each_module_after_what_it_imports() -> None:
    """Read top to bottom, the table is the layering: no module is listed before a module it imports."""
    listed = readme_modules()
    place = {m: i for i, m in enumerate(listed)}
    edges = graph()
    late = [f"{m} imports {t}, listed below it" for m in listed for t in edges[m] if place[t] > place[m]]
    assert late == []
