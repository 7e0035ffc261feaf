"""Which ``GameEvent`` kinds the code records and which ``ScheduledEvent`` kinds it plans or handles, read from the
source (``ast``, not run): for the tests that every recorded kind is declared (``kernel.events``) and that each
declaration is where the code that records it is (the engine's, or the ruleset's own)."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Directories that hold no code of the site's own (or only tests of it).
SKIPPED = {"tests", ".venv", "docs", "scripts", "migrations", "var", "node_modules", "staticfiles"}


def _modules(tops: tuple[str, ...] | None):
    if tops is None:
        tops = tuple(d.name for d in ROOT.iterdir()
                     if d.is_dir() and not d.name.startswith(".") and d.name not in SKIPPED)
    for path in (p for top in tops for p in (ROOT / top).rglob("*.py")):
        if not SKIPPED & set(path.relative_to(ROOT).parts):
            yield path


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _strings(node: ast.AST) -> set[str]:
    """The literal kinds an argument may be: a string, or either branch of a conditional (never an f-string's
    parts: a kind built at run time)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _strings(node.body) | _strings(node.orelse)
    return set()


def _rows(node: ast.AST) -> set[str]:
    """The kinds of the ``(kind, payload)`` rows written under ``node``: a 2-tuple of a string and a dict."""
    return {t.elts[0].value for t in ast.walk(node) if isinstance(t, ast.Tuple) and len(t.elts) == 2
            and isinstance(t.elts[0], ast.Constant) and isinstance(t.elts[0].value, str)
            and isinstance(t.elts[1], ast.Dict)}


def _functions(tree: ast.AST):
    """Each call with the innermost function (or the module) it is made in."""
    def visit(node, scope):
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else scope
            if isinstance(child, ast.Call):
                yield child, scope
            yield from visit(child, inner)
    yield from visit(tree, tree)


def recorded_event_kinds(tops: tuple[str, ...] | None = None) -> dict[str, set[str]]:
    """Kind -> the modules (paths from the repository's root) that record it with a literal kind: the kind of a
    ``record_event(game, "kind", ...)`` or ``event_statement(...)`` (each literal of a conditional one), of each
    ``("kind", {...})`` row of a ``record_events`` call, or of the rows the function calling it builds. Under the
    directories ``tops`` (every directory of the site's code when None). A kind built at run time
    (``f"scheduler.{kind}"``) is not seen."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in _modules(tops):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT).as_posix()
        for call, scope in _functions(tree):
            name = _name(call.func)
            if name in ("record_event", "event_statement"):
                kind = call.args[1] if len(call.args) > 1 else next(
                    (k.value for k in call.keywords if k.arg == "kind"), None)
                kinds = _strings(kind) if kind is not None else set()
            elif name == "record_events" and len(call.args) > 1:
                rows = call.args[1]
                kinds = _rows(rows) if isinstance(rows, (ast.List, ast.ListComp, ast.Tuple)) else _rows(scope)
            else:
                continue
            for kind in kinds:
                found[kind].add(where)
    return dict(found)


def planned_scheduled_kinds(tops: tuple[str, ...] | None = None) -> dict[str, set[str]]:
    """Kind -> the modules that plan (``ScheduledEvent.objects.create(kind="kind", ...)``) or handle
    (``handler("kind")``, ``batch_handler("kind")``) scheduled events of it with a literal kind, under ``tops`` (as
    ``recorded_event_kinds``)."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in _modules(tops):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT).as_posix()
        for call, _scope in _functions(tree):
            name = _name(call.func)
            if name in ("handler", "batch_handler") and call.args and isinstance(call.args[0], ast.Constant):
                found[call.args[0].value].add(where)
            elif name == "create" and ast.unparse(call.func).endswith("ScheduledEvent.objects.create"):
                for keyword in call.keywords:
                    if keyword.arg == "kind" and isinstance(keyword.value, ast.Constant):
                        found[keyword.value.value].add(where)
    return dict(found)
