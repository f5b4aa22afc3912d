"""No import circles where one was found (issue 22, item 6): each import counts, at module level or inside a function
(a function-level import only hides a circle until the function runs), and so does importlib.import_module."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules():
    return {module_name(p): p for p in (ROOT / "reasoning").rglob("*.py") if "migrations" not in p.parts}


def imported(name, path, known):
    """The reasoning modules a module imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module" and node.args:
            if isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return {m for m in found if m in known and m != name}


def graph():
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def reaches(graph, start, goal):
    seen, todo = set(), [start]
    while todo:
        here = todo.pop()
        if here == goal:
            return True
        if here not in seen:
            seen.add(here)
            todo += graph.get(here, ())
    return False


@pytest.mark.parametrize(
    "first, second",
    [
        ("reasoning.recovery", "reasoning.tasks"),
        ("reasoning.runner", "reasoning.tasks"),
        ("reasoning.llm.offline.answers", "reasoning.llm.offline.puzzle_replies"),
        ("reasoning.llm.offline.answers", "reasoning.llm.offline.reflexion"),
    ],
)
def test_no_circle_runs_through_these_two_modules(first, second):
    imports = graph()
    assert not (reaches(imports, first, second) and reaches(imports, second, first)), (first, second)


def test_the_graph_sees_imports_inside_functions():
    assert "reasoning.engine" in graph()["reasoning.tasks"]  # imported by run_session_task, not at module level


def test_the_ledger_reaches_neither_the_usage_report_nor_the_strategies_through_it():
    """The gateway settles through the ledger; the ledger once took its month from the usage report, which reads the
    strategies' registry for its labels: a money path that loaded the page's concerns."""
    imports = graph()
    assert not reaches(imports, "reasoning.ledger", "reasoning.usage")
    assert "reasoning.strategies" not in imports["reasoning.ledger"] | imports["reasoning.llm.gateway"]


@pytest.mark.parametrize("far", ["reasoning.strategies", "reasoning.llm.offline"])
def test_the_gateway_reaches_neither_the_strategies_nor_the_offline_model(far):
    """The gateway calls models through litellm: it may not load the strategies (their registry, contracts and
    prompts sit above it) nor the offline model, a provider plugged into litellm that the app registers at start
    (reasoning/apps.py) and the gateway knows only as in-process (reasoning/llm/providers.py)."""
    imports = graph()
    for start in ("reasoning.llm.gateway", "reasoning.llm.prices", "reasoning.ledger", "reasoning.models"):
        reached = [m for m in imports if (m == far or m.startswith(far + ".")) and reaches(imports, start, m)]
        assert not reached, (start, reached)
