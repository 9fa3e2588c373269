"""The house's walls (ARCHITECTURE.md): which layer may import which, and no circles.

Every import in the library and the app is read from the source (module-level and lazy ones
inside functions alike, since a lazy import is still a dependency), resolved to the module it
names, and checked against the layer order below. A test fails when a lower layer imports a
higher one: the library importing the app, a kernel importing pandas or scikit-learn, a
likelihood family importing a model.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the library's layers, lowest first; a package may import its own modules and those of any
#: layer strictly below it (two packages on one rank do not import each other)
RANK = {
    "families": 0,
    "kernels": 1, "core": 1,
    "engine": 2, "data": 2,
    "selection": 3,
    "models": 4,
    "evaluation": 5,
    "": 6,  # mapdp_core/__init__.py (the public names) and _precompile.py (the install step)
}
#: outside packages each layer may use (beyond the standard library)
THIRD_PARTY = {
    "families": {"numpy", "numba", "scipy"},
    "kernels": {"numpy", "numba"},
}
#: third-party packages the library never imports (they belong to the app)
APP_ONLY = {"streamlit", "plotly"}
#: the app's own packages, never imported by the library
APP_PACKAGES = {"explorer", "ui", "pages", "app"}


def _modules(folder: str):
    for path in sorted((ROOT / folder).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        yield (".".join(parts[:-1]) if parts[-1] == "__init__" else ".".join(parts)), path


def _imports(name: str, path: Path) -> set[str]:
    """Absolute names of every module or package ``path`` imports (relative ones resolved)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            out.add(target)
            # ``from pkg import module``: the module itself is the dependency
            out.update(f"{target}.{alias.name}" for alias in node.names)
    return out


def _library_modules() -> dict[str, Path]:
    return dict(_modules("mapdp_core"))


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in RANK) else ""


def _internal(target: str, known: dict) -> str | None:
    """The library module ``target`` names (a module, a package, or an attribute of one)."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def test_every_library_folder_is_a_known_layer():
    folders = {p.name for p in (ROOT / "mapdp_core").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(RANK) - {""}, "a new folder in mapdp_core needs its place in RANK and ARCHITECTURE.md"


def test_library_layers_import_only_downwards():
    known = _library_modules()
    wrong = []
    for name, path in known.items():
        mine = _layer(name)
        for target in _imports(name, path):
            top = target.split(".")[0]
            if top in APP_PACKAGES or top in APP_ONLY:
                wrong.append(f"{name} imports the app's {target}")
            if top != "mapdp_core":
                if mine in THIRD_PARTY and top in _third_party_names() and top not in THIRD_PARTY[mine]:
                    wrong.append(f"{name} ({mine}) imports {target}")
                continue
            module = _internal(target, known)
            if module is None or module == "mapdp_core":
                if mine != "" and target != "mapdp_core":
                    wrong.append(f"{name} imports {target}, which is not a library module")
                elif mine != "":
                    wrong.append(f"{name} imports the package root (its public names): import from the layer")
                continue
            theirs = _layer(module)
            if theirs != mine and not RANK[theirs] < RANK[mine]:
                wrong.append(f"{name} ({mine}, rank {RANK[mine]}) imports {module} ({theirs}, rank {RANK[theirs]})")
    assert not wrong, "\n".join(sorted(wrong))


def _third_party_names() -> set[str]:
    return {"numpy", "numba", "scipy", "pandas", "sklearn", "joblib", "openpyxl", "dask", "distributed"}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


@pytest.mark.parametrize("folders", [("mapdp_core",), ("explorer", "ui", "pages")])
def test_no_import_circles(folders):
    """No two modules import each other, however indirectly (lazy imports included). A
    package's ``__init__`` that re-exports its modules is left out: it is the package's door,
    not a room."""
    known = {}
    for folder in folders:
        known.update(_modules(folder))
    graph = {}
    for name, path in known.items():
        if path.name == "__init__.py" and name in ("mapdp_core",):
            continue
        targets = {_internal(t, known) for t in _imports(name, path)}
        graph[name] = {t for t in targets if t and t != name and not (known[t].name == "__init__.py"
                                                                         and t in name)}
    assert not _cycles(graph)


def test_the_app_services_do_not_draw_with_streamlit():
    """explorer/ computes and draws figures for the pages, and a notebook can import it:
    no Streamlit there, and no numba kernels reached past the library's public layers."""
    wrong = []
    for name, path in _modules("explorer"):
        for target in _imports(name, path):
            if target.split(".")[0] in {"streamlit", "ui", "pages", "numba"} or target.startswith("mapdp_core.kernels"):
                wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_pages_do_no_numerics():
    """Pages read the session, call the services and draw: no kernels, no engine, no numba."""
    wrong = []
    for name, path in list(_modules("pages")) + [("app", ROOT / "app.py")]:
        for target in _imports(name, path):
            if target.split(".")[0] in {"numba", "scipy", "sklearn"} or target.startswith(
                    ("mapdp_core.kernels", "mapdp_core.engine")):
                wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_no_file_is_over_about_800_lines():
    long = []
    for folder in ("mapdp_core", "explorer", "ui", "pages"):
        for path in (ROOT / folder).rglob("*.py"):
            n = len(path.read_text().splitlines())
            if n > 850:
                long.append(f"{path.relative_to(ROOT)}: {n} lines")
    assert not long, "\n".join(long)


def test_the_checks_can_fail():
    """The rules above catch what they are for (a made-up upward import and a made-up circle)."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert not _cycles({"a": {"b"}, "b": {"c"}, "c": set()})
    assert _layer("mapdp_core.kernels.dp_mixture") == "kernels" and _layer("mapdp_core._precompile") == ""
    assert _layer("mapdp_core.models") == "models"
    assert not RANK["models"] < RANK["families"]
