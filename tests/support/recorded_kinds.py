"""Which ``GameEvent`` kinds the code records and which ``ScheduledEvent`` kinds it plans or handles, read from the
source (``ast``, not run): for the tests that every recorded kind is declared (``kernel.events``) and that each
declaration is where the code that records it is (the engine's, or the ruleset's own)."""
from __future__ import annotations

import ast
from collections import defaultdict
from functools import lru_cache
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


@lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _dotted(path: Path) -> str:
    """The module's dotted name (``rulesets.lepra.clock.services``; a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _aliases(path: Path) -> dict[str, str]:
    """Each name the module imports -> the dotted name it stands for (a module, or ``module.function``), relative
    imports resolved."""
    package = _dotted(path) if path.name == "__init__.py" else _dotted(path).rpartition(".")[0]
    names: dict[str, str] = {}
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[:len(base) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                names[alias.asname or alias.name] = f"{module}.{alias.name}"
    return names


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


#: The functions that record a kind passed to them: their ``kind`` argument is the second.
RECORDERS = ("record_event", "event_statement")


def _kind_argument(call: ast.Call, parameter: str, position: int | None) -> ast.expr | None:
    """The argument of ``call`` bound to ``parameter`` (passed by keyword, or at ``position``)."""
    keyword = next((k.value for k in call.keywords if k.arg == parameter), None)
    if keyword is not None:
        return keyword
    if position is not None and len(call.args) > position and not any(
            isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        return call.args[position]
    return None


def _callee(call: ast.Call, path: Path, local: set[str], aliases: dict[str, str]) -> str:
    """The dotted name of the function ``call`` calls when it can be told from the source: a function of the same
    module, an imported function, or a function of an imported module; "" otherwise (a method, a call through a
    variable)."""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in local:
            return f"{_dotted(path)}.{func.id}"
        return aliases.get(func.id, "")
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in aliases:
        return f"{aliases[func.value.id]}.{func.attr}"
    return ""


@lru_cache(maxsize=1)
def recording_helpers() -> dict[str, tuple[str, int | None]]:
    """The site's functions that record a kind their caller names: dotted name -> (the parameter that is the kind,
    its position or None when keyword-only), for each function that passes one of its parameters on as the kind
    of ``record_event`` / ``event_statement`` or of another such function (``_apply_plan_change(kind=...)``)."""
    helpers: dict[str, tuple[str, int | None]] = {}
    modules = [(path, _aliases(path)) for path in _modules(None)]
    changed = True
    while changed:
        changed = False
        for path, aliases in modules:
            tree = _tree(path)
            local = {f.name for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
            for function in (f for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))):
                name = f"{_dotted(path)}.{function.name}"
                if name in helpers:
                    continue
                positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
                parameters = {*positional, *(a.arg for a in function.args.kwonlyargs)}
                for call in (c for c in ast.walk(function) if isinstance(c, ast.Call)):
                    if _name(call.func) in RECORDERS:
                        kind = _kind_argument(call, "kind", 1)
                    else:
                        known = helpers.get(_callee(call, path, local, aliases))
                        kind = _kind_argument(call, *known) if known else None
                    if isinstance(kind, ast.Name) and kind.id in parameters:
                        helpers[name] = (kind.id, positional.index(kind.id) if kind.id in positional else None)
                        changed = True
                        break
    return helpers


def recorded_event_kinds(tops: tuple[str, ...] | None = None) -> dict[str, set[str]]:
    """Kind -> the modules (paths from the repository's root) that record it with a literal kind: the kind of a
    ``record_event(game, "kind", ...)`` or ``event_statement(...)`` (each literal of a conditional one), of each
    ``("kind", {...})`` row of a ``record_events`` call, or of the rows the function calling it builds, and the
    literal kind passed to a function that records the kind it is given (``recording_helpers``, called by a name
    that resolves to it: its own module's, or imported). Under the directories ``tops`` (every directory of the
    site's code when None). A kind built at run time (``f"scheduler.{kind}"``) is not seen."""
    found: dict[str, set[str]] = defaultdict(set)
    helpers = recording_helpers()
    for path in _modules(tops):
        tree = _tree(path)
        where = path.relative_to(ROOT).as_posix()
        local = {f.name for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        aliases = _aliases(path)
        for call, scope in _functions(tree):
            name = _name(call.func)
            if name in RECORDERS:
                kind = _kind_argument(call, "kind", 1)
                kinds = _strings(kind) if kind is not None else set()
            elif name == "record_events" and len(call.args) > 1:
                rows = call.args[1]
                kinds = _rows(rows) if isinstance(rows, (ast.List, ast.ListComp, ast.Tuple)) else _rows(scope)
            elif (helper := helpers.get(_callee(call, path, local, aliases))) is not None:
                kind = _kind_argument(call, *helper)
                kinds = _strings(kind) if kind is not None else set()
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
        tree = _tree(path)
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
