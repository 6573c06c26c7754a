"""The dependency direction app → ui → engine ← plugins, enforced on every module's imports (parsed with ast)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN = {
    "engine": ("PySide6", "shiboken6", "ui", "app", "plugins"),
    "plugins": ("PySide6", "shiboken6", "ui", "app"),
}


def imported_modules(path: Path) -> Iterator[str]:
    """Every module name imported by ``path`` (absolute imports; relative imports are banned anyway)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                yield "." * node.level + (node.module or "")
            elif node.module:
                yield node.module


def python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package, banned", FORBIDDEN.items())
def test_package_does_not_import(package: str, banned: tuple[str, ...]) -> None:
    files = python_files(package)
    assert files, f"{package}/ has no modules"
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path) if m.split(".")[0] in banned)
        for path in files
    }
    assert not {p: m for p, m in offenders.items() if m}


def test_plugins_use_only_the_plugin_api_of_the_engine() -> None:
    offenders = {}
    for path in python_files("plugins"):
        bad = [m for m in imported_modules(path) if m.startswith("engine") and m != "engine.plugin_api"]
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert not offenders


def test_no_relative_imports_anywhere() -> None:
    offenders = []
    for package in ("engine", "plugins", "app", "ui"):
        for path in python_files(package):
            if any(m.startswith(".") for m in imported_modules(path)):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders


def test_the_checker_catches_a_forbidden_import(tmp_path: Path) -> None:
    sample = tmp_path / "bad.py"
    sample.write_text("from PySide6.QtCore import QObject\nimport ui.main_window\nfrom . import x\n")
    assert list(imported_modules(sample)) == ["PySide6.QtCore", "ui.main_window", "."]


# -- inside the engine: floors and circles -----------------------------------------------------------------------
#: Each room of ``engine/`` (a top-level module or package) and its floor.  A room imports only rooms on its own floor
#: or below; the package's lazy face (``engine/__init__.py``) is the one exception.  A new room gets a line here.
FLOORS: dict[str, int] = {
    # 1, the ground: no engine imports of their own
    **dict.fromkeys(
        ("changes", "commands", "dto", "errors", "lifeline", "paths", "permissions", "plugin_api", "prompts"), 1
    ),
    **dict.fromkeys(("token", "version"), 1),
    **dict.fromkeys(("config", "lockfile", "store", "temporal"), 2),
    **dict.fromkeys(
        ("activity", "ai", "backups", "jobs", "privacy", "watching"), 3
    ),  # the privacy firewall: below every input
    **dict.fromkeys(("episodes", "events", "vectors"), 4),
    **dict.fromkeys(("conversations", "documents", "subjects", "wiring"), 5),
    **dict.fromkeys(("facts", "workspace"), 6),
    **dict.fromkeys(("enrich", "forget", "recall"), 7),
    **dict.fromkeys(("archive", "ingest", "upkeep"), 8),
    "vault": 9,
    **dict.fromkeys(("api", "doctor", "restore"), 10),
}


def engine_modules() -> dict[str, Path]:
    """Dotted name → file of every engine module (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in python_files("engine"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the engine modules it imports anywhere (top level, inside functions, under ``TYPE_CHECKING``).

    ``from engine.vectors import postings`` names the submodule ``engine.vectors.postings``, not the package face.
    """

    def resolve(name: str) -> str | None:
        while name not in modules:
            if "." not in name:
                return None
            name = name.rsplit(".", 1)[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(t for a in node.names if a.name.startswith("engine") and (t := resolve(a.name)))
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("engine"):
                targets.update(t for a in node.names if (t := resolve(f"{node.module}.{a.name}")))
        targets.discard(name)
        graph[name] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_no_import_circle_inside_the_engine() -> None:
    """Deferred and type-only imports count: a circle is two modules that cannot be understood one without the
    other, however Python gets round loading them."""
    assert circles(import_graph(engine_modules())) == []


def test_every_engine_room_has_a_floor_and_no_import_climbs() -> None:
    graph = import_graph(engine_modules())
    rooms = {room_of(m) for m in graph} - {"__init__"}
    assert rooms - FLOORS.keys() == set(), "a new room of engine/: give it a floor in FLOORS"
    climbing = sorted(
        f"{module} → {target}"
        for module, targets in graph.items()
        if room_of(module) != "__init__"
        for target in targets
        if room_of(target) != room_of(module) and FLOORS.get(room_of(target), 99) > FLOORS[room_of(module)]
    )
    assert climbing == []


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"x": {"y"}, "y": {"x"}, "z": {"x"}}) == [["x", "y"]]


#: The one module that may write SQL against each table (the schema's migrations aside).
TABLE_OWNERS = {"jobs": "engine/jobs.py", "conflicts": "engine/facts/conflicts.py"}
_SQL_ON = r"\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\s+{table}\b"


def sql_strings(path: Path) -> Iterator[str]:
    """Every string constant of ``path`` (f-strings by their literal parts)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def test_each_owned_table_is_touched_by_its_owner_alone() -> None:
    import re

    offenders: dict[str, list[str]] = {}
    for table, owner in TABLE_OWNERS.items():
        pattern = re.compile(_SQL_ON.format(table=table), re.IGNORECASE)
        for path in python_files("engine"):
            where = str(path.relative_to(ROOT))
            if where in (owner, "engine/store/migrations.py", "engine/archive.py"):  # whole tables, schema-level
                continue
            if any(pattern.search(text) for text in sql_strings(path)):
                offenders.setdefault(table, []).append(where)
    assert offenders == {}


def test_the_table_check_sees_sql_in_a_module(tmp_path: Path) -> None:
    import re

    sample = tmp_path / "m.py"
    sample.write_text('q = "SELECT id FROM conflicts WHERE status = ?"\nname = "the jobs view"\n')
    texts = list(sql_strings(sample))
    assert any(re.search(_SQL_ON.format(table="conflicts"), t, re.IGNORECASE) for t in texts)
    assert not any(re.search(_SQL_ON.format(table="jobs"), t, re.IGNORECASE) for t in texts)


#: The modules that may name a vector backend's class: the backends themselves, the wiring that chooses one, and the
#: places that need the in-memory mirror's copies (recall's helper processes, and the vault starting them).  The
#: rest of the engine types against :class:`engine.vectors.VectorIndex`, so a backend can change behind it.
BACKEND_CLASSES = frozenset({"SqliteVecIndex", "ChromaIndex", "MigratingIndex"})
BACKEND_NAMERS = frozenset({"engine/wiring.py", "engine/vault.py", "engine/recall/processes.py"})


def names_used(path: Path) -> set[str]:
    """Every bare name and imported name in ``path``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.ImportFrom):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            found.add(node.value)  # a quoted annotation
    return found


def test_the_engine_types_against_the_vector_index_protocol() -> None:
    offenders = sorted(
        f"{path.relative_to(ROOT)}: {sorted(names_used(path) & BACKEND_CLASSES)}"
        for package in ("engine", "plugins")
        for path in python_files(package)
        if not str(path.relative_to(ROOT)).startswith("engine/vectors/")
        and str(path.relative_to(ROOT)) not in BACKEND_NAMERS
        and names_used(path) & BACKEND_CLASSES
    )
    assert offenders == []


def test_the_backend_check_sees_a_backend_named(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("from engine.vectors import SqliteVecIndex\n\ndef f(v: 'ChromaIndex') -> None: ...\n")
    assert names_used(sample) & BACKEND_CLASSES == {"SqliteVecIndex", "ChromaIndex"}
