"""The house by role: every import of every project file points down, and no file
imports itself back (DESIGN.md, "Packaging and layers").

Every ``import`` and ``from ... import`` is read with :mod:`ast`, at module level
and inside functions alike (relative imports resolved). The allowed arrows:
``spec`` -> nothing of the project; ``smt`` -> ``spec``; ``ref`` -> ``spec``,
``smt``; ``proofs`` -> ``spec``, ``smt``, ``ref``; the user-facing package (every
other ``tcspec`` module, ``tcspec/__init__.py`` included) -> all. Importing
``tcspec.a.b`` also runs the ``__init__`` of its parents; that is Python's doing,
not an arrow of the importing file, and is not counted. The tests are read too,
for circles: they may import any layer.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP = "tcspec"
TESTS = "tests"

ALLOWED = {
    "spec": {"spec"},
    "smt": {"spec", "smt"},
    "ref": {"spec", "smt", "ref"},
    "proofs": {"spec", "smt", "ref", "proofs"},
    "user": {"spec", "smt", "ref", "proofs", "user"},
    "tests": {"spec", "smt", "ref", "proofs", "user", "tests"},
}
"""Layer -> the layers its files may import."""


def package_dirs(pyproject: str) -> dict[str, str]:
    """``[tool.setuptools.package-dir]`` of pyproject.toml: package -> directory."""
    section = re.search(r"^\[tool\.setuptools\.package-dir\]\n(.*?)(?=^\[|\Z)", pyproject,
                        re.M | re.S)
    assert section, "pyproject.toml has no [tool.setuptools.package-dir]"
    pairs = re.findall(r'^"?([\w.]+)"?\s*=\s*"([^"]+)"', section.group(1), re.M)
    return dict(pairs)


def project_modules(root: Path, dirs: Mapping[str, str]) -> dict[str, Path]:
    """Module name -> file, for every .py file of every mapped package directory."""
    modules: dict[str, Path] = {}
    for package, directory in dirs.items():
        base = root / directory
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


def layer_of(module: str) -> str:
    """``spec``, ``smt``, ``ref``, ``proofs``, ``user`` for the rest of ``tcspec``, or ``tests``."""
    parts = module.split(".")
    if parts[0] == TESTS:
        return "tests"
    if len(parts) > 1 and parts[0] == TOP and parts[1] in ("spec", "smt", "ref", "proofs"):
        return parts[1]
    return "user"


def imports_of(module: str, path: Path, source: str, known: Iterable[str]) -> list[tuple[int, str]]:
    """``(line, imported project module)`` for every import in ``source``, any depth."""
    known = set(known)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []

    def project(name: str) -> str | None:
        """The project module ``name`` runs: itself, or the nearest known parent."""
        if name.split(".")[0] not in (TOP, TESTS):
            return None
        while name not in known and "." in name:
            name = name.rpartition(".")[0]
        return name if name in known else None

    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = project(alias.name)
                if target:
                    found.append((node.lineno, target))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for alias in node.names:
                # ``from a import b``: the submodule a.b if it is one, else module a
                target = project(f"{origin}.{alias.name}")
                if target != f"{origin}.{alias.name}":
                    target = project(origin)
                if target:
                    found.append((node.lineno, target))
    return found


def import_graph(root: Path, sources: Mapping[str, tuple[Path, str]] | None = None
                 ) -> tuple[dict[str, set[str]], list[str]]:
    """Module -> the project modules it imports, and every disallowed arrow."""
    if sources is None:
        dirs = package_dirs((root / "pyproject.toml").read_text(encoding="utf-8"))
        dirs[TESTS] = TESTS
        sources = {name: (path, path.read_text(encoding="utf-8"))
                   for name, path in project_modules(root, dirs).items()}
    graph: dict[str, set[str]] = {name: set() for name in sources}
    bad: dict[str, None] = {}
    for name, (path, source) in sorted(sources.items()):
        for line, target in imports_of(name, path, source, sources):
            if target == name:
                continue
            graph[name].add(target)
            if layer_of(target) not in ALLOWED[layer_of(name)]:
                where = path.relative_to(root) if path.is_absolute() else path
                bad[f"{where}:{line}: {name} ({layer_of(name)}) imports {target} "
                    f"({layer_of(target)})"] = None
    return graph, list(bad)


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@functools.cache
def house() -> tuple[dict[str, set[str]], list[str]]:
    """:func:`import_graph` of this repository, read once per session."""
    return import_graph(ROOT)


def test_every_project_file_is_read():
    graph, _ = house()
    for name in ("tcspec", "tcspec.spec.catalog", "tcspec.smt.trace", "tcspec.ref.kernels",
                 "tcspec.proofs.runner", "tcspec.proofs.probes.probe", "tcspec.cli",
                 "tests.lowerings", "tests.ref.test_kernels"):
        assert name in graph
    assert len(graph) > 60


def test_imports_only_point_down():
    _, bad = house()
    assert not bad, "imports outside the allowed arrows:\n" + "\n".join(bad)


def test_no_import_circles():
    graph, _ = house()
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_checker_sees_function_level_relative_and_from_imports():
    def source(text: str) -> str:
        return "from __future__ import annotations\n" + text

    sources = {
        "tcspec.spec": (Path("spec/__init__.py"), ""),
        "tcspec.spec.a": (Path("spec/a.py"), source("def f():\n    from . import b\n")),
        "tcspec.spec.b": (Path("spec/b.py"), source("import tcspec.spec.a\n")),
        "tcspec.ref": (Path("ref/__init__.py"), source("from tcspec import api\n")),
        "tcspec.proofs.p": (Path("proofs/p.py"), source("from tcspec.ref import x\n")),
        "tcspec.api": (Path("tcspec/api.py"), source("def g():\n    import numpy, tcspec.smt\n")),
        "tcspec.smt": (Path("smt/__init__.py"), ""),
        "tcspec": (Path("tcspec/__init__.py"), source("from tcspec.api import z\n")),
    }
    graph, bad = import_graph(ROOT, sources)
    assert graph["tcspec.spec.a"] == {"tcspec.spec.b"}
    assert graph["tcspec.proofs.p"] == {"tcspec.ref"}
    assert graph["tcspec.api"] == {"tcspec.smt"}
    assert bad == ["ref/__init__.py:2: tcspec.ref (ref) imports tcspec.api (user)"]
    assert circles(graph) == [["tcspec.spec.a", "tcspec.spec.b"]]


SECOND_SPEC = "tcspec.proofs.rulebook"
SECOND_SPEC_MAY_IMPORT = {"tcspec.spec.bitvec"}
"""The ops protocol: all the second specification shares with the first (issue 30)."""


def test_the_second_specification_imports_only_the_ops_protocol():
    """``proofs/rulebook`` (the rule book's text, DESIGN.md "equals-reference") imports
    nothing of the project but ``spec.bitvec`` and itself, so a spec bug cannot move it."""
    graph, _ = import_graph(ROOT)
    modules = [name for name in graph if name == SECOND_SPEC or
               name.startswith(SECOND_SPEC + ".")]
    assert len(modules) >= 10
    outside = {f"{name} imports {target}" for name in modules for target in graph[name]
               if not (target == SECOND_SPEC or target.startswith(SECOND_SPEC + ".")
                       or target in SECOND_SPEC_MAY_IMPORT)}
    assert not outside, sorted(outside)


def test_the_second_specification_check_sees_a_forbidden_import():
    source = "from tcspec.spec.formats import FORMATS\n"
    sources = {"tcspec.proofs.rulebook.x": (Path("x.py"), source),
               "tcspec.spec.formats": (Path("f.py"), "")}
    graph, _ = import_graph(ROOT, sources)
    assert graph["tcspec.proofs.rulebook.x"] == {"tcspec.spec.formats"}
