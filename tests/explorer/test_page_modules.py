"""The page's ES modules import one way: the model and the helpers are leaves, views talk through model.js's events.

Read from the files themselves (no browser): an import added back from model.js to a view, or a new circle among the
views, fails here before it fails as a page that draws nothing because a module read a binding still being set up.
"""

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "static" / "explorer"
IMPORT = re.compile(r'^import\s+(?:[^"\']*?\s+from\s+)?["\']\./([\w-]+\.js)["\']', re.MULTILINE)
LEAVES = {
    "model.js", "util.js", "status.js", "http.js", "localtime.js", "checks.js", "figures.js", "factvalues.js",
    "viewport.js",
}  # fmt: skip


def imports():
    return {path.name: set(IMPORT.findall(path.read_text())) for path in sorted(PAGE.glob("*.js"))}


def circles(graph):
    """Every strongly connected set of two or more modules (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(group)

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_the_graph_is_read_from_the_files():
    graph = imports()
    assert {"model.js", "socket.js", "tree.js"} <= graph["main.js"], "the reader no longer sees imports"


@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_a_leaf_imports_no_view(leaf):
    graph = imports()
    if leaf not in graph:
        pytest.skip(f"{leaf} is not a module of the page")
    views = graph[leaf] - LEAVES - {"d3-from-npm.js"}
    assert not views, f"{leaf} imports {sorted(views)}: it should emit an event through model.js instead"


def test_no_modules_import_each_other_in_a_circle():
    # The drawing's painters (farview.js, minimap.js) read its zoom and size from viewport.js and ask it to move
    # with an event, so the last circle (tree.js and its two painters) is gone too.
    found = circles(imports())
    assert not found, f"modules import each other in a circle: {found}"


def test_the_circle_finder_finds_a_circle():
    assert circles({"a.js": {"b.js"}, "b.js": {"c.js"}, "c.js": {"a.js"}, "d.js": {"a.js"}}) == [{"a.js", "b.js", "c.js"}]


def test_main_reaches_every_module_of_the_session_page():
    """A view is no longer called by the model, it listens: one that main.js does not reach would draw nothing."""
    graph, seen, todo = imports(), set(), ["main.js"]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(graph.get(name, ()))
    other_pages = {"session_list.js", "session_new.js", "report.js", "localtime.js"}
    assert set(graph) - other_pages - seen == set()
